// An output file written through a large buffer and published atomically.
//
// Regular files are written to a temporary file in the target's directory
// (".<name>.tmp-XXXXXX") and renamed over the final name by commit(); if the writer is
// abandoned (destroyed without commit, or an error was thrown) the temporary file is removed,
// so a failed or interrupted run never leaves a file under the final name.
// "-" writes to standard output, and an existing non-regular target (/dev/null, a FIFO, a
// character device) is written in place: neither can be renamed over.
// With replace_existing = false, commit() refuses to replace a file that exists by then
// (renameat2(RENAME_NOREPLACE), or link + unlink), so a refusal needs no racy pre-check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "mjpeg/files.hpp"

namespace mjpeg::io {

// check_output_allowed() and write_file(), which write through an AtomicFile, are public:
// mjpeg/files.hpp.

/// The hidden temporary name ".<base>.tmp-<tag>" beside `path`, with <base> shortened when
/// needed so that the name fits the directory's name length limit (NAME_MAX).
std::string temp_name_beside(const std::string& path, const std::string& tag);

/// How rename_no_replace claims the target name.
enum class NoReplaceMethod {
  automatic,    ///< the first of the ones below that the file system supports
  renameat2,    ///< renameat2(RENAME_NOREPLACE)
  link,         ///< link(from, to) + unlink(from): fails with EEXIST like the rename
  placeholder,  ///< create `to` with O_EXCL (the claim), then rename over that empty file
};

/// rename(from, to) that never replaces an existing `to`: 0, or -1 with errno (EEXIST when
/// `to` exists). `automatic` tries renameat2(RENAME_NOREPLACE), then (where the file system
/// refuses it: EINVAL, ENOSYS) a hard link, then (no hard links there: EPERM, EOPNOTSUPP,
/// EMLINK) the placeholder; the others are one method alone, for tests.
int rename_no_replace(const char* from, const char* to,
                      NoReplaceMethod method = NoReplaceMethod::automatic);

/// Error "output 'PATH' already exists (use -y to overwrite)".
[[noreturn]] void fail_exists(const std::string& path);

class AtomicFile {
 public:
  static constexpr std::size_t kDefaultBuffer = std::size_t(4) << 20;
  /// Writes of at least this many bytes skip the buffer.
  static constexpr std::size_t kDirectWrite = std::size_t(64) << 10;

  /// Opens the output (creates the temporary file). Throws Error when that fails.
  explicit AtomicFile(const std::string& path, bool replace_existing = true,
                      std::size_t buffer_size = kDefaultBuffer);
  ~AtomicFile();  ///< abandons (removes the temporary file) unless committed; never throws
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  /// Appends bytes. Throws Error (with strerror) when the system refuses them.
  void write(const void* data, std::size_t size);
  /// Appends `count` zero bytes (padding).
  void write_zeros(std::size_t count);
  /// Overwrites bytes already written at absolute `offset` (header fields patched at the end).
  /// Needs a seekable output unless the bytes are still in the buffer.
  void patch(std::uint64_t offset, const void* data, std::size_t size);
  /// Bytes written so far (the offset the next write lands at).
  std::uint64_t position() const { return position_; }

  /// Flushes, closes and renames the temporary file to the final name.
  void commit();
  /// Closes and removes the temporary file (no-op after commit). Never throws.
  void abandon() noexcept;

  const std::string& path() const { return path_; }
  bool is_open() const { return fd_ >= 0; }

 private:
  void flush();
  void write_all(const void* data, std::size_t size);
  /// Writes a then b (either may be empty) with writev, to the end.
  void write_two(const void* a, std::size_t na, const void* b, std::size_t nb);

  std::string path_;       // final name
  bool replace_existing_ = true;
  std::string temp_path_;  // empty when writing in place
  int temp_slot_ = -1;     // its slot in the signal handler's registry (temp_registry.hpp)
  int fd_ = -1;
  bool owns_fd_ = true;
  std::unique_ptr<std::uint8_t[]> buffer_;  // not zero-filled: only written bytes are read
  std::size_t buffer_size_ = 0;
  std::size_t buffered_ = 0;
  std::uint64_t position_ = 0;  // logical size of the output
  std::uint64_t flushed_ = 0;   // bytes already handed to the OS
};

}  // namespace mjpeg::io
