// Atomic creation of an output file: bytes go to a temporary file in the target directory,
// which is renamed over the final name only once everything was written. On any failure (or
// if commit() is never reached) the temporary file is removed and the final name untouched.
#pragma once

#include <cstddef>
#include <string>

namespace mjpeg::app {

/// Throws mjpeg::Error when `path` exists and `overwrite` is false, or when it is a directory.
/// Called before any work is done; commit() checks again without a race.
void check_output_allowed(const std::string& path, bool overwrite);

class AtomicOutputFile {
 public:
  /// Creates the temporary file (mkstemp) beside `final_path`; throws mjpeg::Error naming the
  /// directory when that fails (e.g. it does not exist or is not writable).
  AtomicOutputFile(std::string final_path, bool overwrite);
  ~AtomicOutputFile();  ///< removes the temporary file unless committed; never throws
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;

  /// Appends bytes; throws mjpeg::Error on a write failure (disk full, I/O error).
  void write(const void* data, std::size_t size);

  /// Flushes, closes and moves the file to its final name (atomically; without `overwrite`
  /// an output that appeared meanwhile is not replaced). Throws mjpeg::Error on failure.
  void commit();

  const std::string& final_path() const { return final_path_; }

 private:
  void discard() noexcept;

  std::string final_path_;
  std::string temp_path_;
  bool overwrite_ = false;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace mjpeg::app
