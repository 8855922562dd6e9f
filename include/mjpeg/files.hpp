// Files as the library writes them, for programs that write files of their own beside its
// outputs (reports, pictures) and want the same promises:
//
//  - An output is published whole or not at all: it is written to a hidden temporary file in
//    its folder (".<name>.tmp-XXXXXX") and renamed over its name once complete; on an error, or
//    when the writer is abandoned, the temporary file is removed. "-" is standard output, and
//    an existing target that is not a regular file (/dev/null, a FIFO) is written in place.
//    An output that must not replace a file claims its name atomically when it is published,
//    so that a file that appeared under that name meanwhile (another program's, another
//    encode's) is never replaced: the later one fails instead.
//  - A program that ends itself on a signal can remove every temporary file of the outputs
//    being written at that moment (remove_partial_outputs), so that nothing half-written stays.
//  - Image sequences are named by a printf-style pattern ("frames/%05d.jpg"); SequencePattern
//    parses such names for readers of sequences as FileSink parses them for its outputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace mjpeg {

/// Throws Error when `path` cannot be written as an output: it is a directory, its folder is
/// missing (or is a file), or it exists and `overwrite` is false. Lets a program refuse before
/// doing any work; write_file() checks again when it publishes, without a race.
void check_output_allowed(const std::string& path, bool overwrite);

/// Writes `size` bytes at `data` as the whole content of `path`, published as described above.
/// With `replace_existing` false an existing file is never replaced, also one that appeared
/// while the data was written: the name is claimed atomically (renameat2(RENAME_NOREPLACE);
/// where the file system lacks it, link + unlink; where it has no hard links either, an empty
/// file created exclusively under the name and renamed over), and a refusal throws Error
/// "output '...' already exists (use -y to overwrite)". Throws Error with the system's message
/// (disk full, permission) and leaves nothing under `path` then.
void write_file(const std::string& path, const void* data, std::size_t size,
                bool replace_existing = true);
/// write_file() for a text.
inline void write_file(const std::string& path, const std::string& text,
                       bool replace_existing = true) {
  write_file(path, text.data(), text.size(), replace_existing);
}

/// An output written piece by piece (a container another library muxes, a report that grows)
/// and published as write_file() publishes: into a hidden temporary file beside `path`,
/// renamed to `path` by commit(), removed when the object is destroyed uncommitted or the
/// process ends on a signal (remove_partial_outputs). Not thread-safe.
class OutputFile {
 public:
  /// Creates the temporary file. `replace_existing` as write_file(). Throws Error (with the
  /// system's message) when it cannot be created.
  explicit OutputFile(const std::string& path, bool replace_existing = true);
  ~OutputFile();  ///< uncommitted: removes the temporary file; never throws
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  /// Appends `size` bytes. Throws Error (disk full: with the system's message).
  void write(const void* data, std::size_t size);
  /// Writes `size` bytes at `offset`, over bytes already written and past the end (a gap
  /// before them reads as zeros): what a muxer that goes back to fill in sizes needs.
  void write_at(std::uint64_t offset, const void* data, std::size_t size);
  /// Bytes in the file so far.
  std::uint64_t size() const;
  /// Publishes the file under `path`. Throws Error, and leaves nothing under `path` then (as
  /// write_file(); with replace_existing false: when a file of that name appeared meanwhile).
  void commit();
  const std::string& path() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Removes the temporary files (and an image sequence's temporary folder) of every output that
/// is being written now, by FileSink or write_file(). For a signal handler that ends the
/// process: async-signal-safe (no allocation, no lock; unlink, open, getdents64, unlinkat,
/// rmdir). The outputs' final names are left as they were before the writes began.
void remove_partial_outputs() noexcept;

/// A file-name pattern with exactly one integer conversion: %d, %Nd or %0Nd ("%%" is a
/// literal '%'), e.g. "frames/%05d.jpg".
struct SequencePattern {
  std::string prefix;  ///< everything before the conversion ("%%" already turned into '%')
  std::string suffix;  ///< everything after it
  int width = 0;       ///< minimum number of digits
  bool zero_pad = false;

  /// Parses `pattern`; false unless it has exactly one integer conversion and no other.
  static bool parse(const std::string& pattern, SequencePattern& out);

  /// The file name of number `n` (e.g. 7 -> "frames/00007.jpg").
  std::string name(std::int64_t n) const;
  /// True when the number is part of the file name itself (not of a folder in the path).
  bool number_in_file_name() const { return suffix.find('/') == std::string::npos; }
  /// The folder the files are in ("." for none): the prefix up to its last '/'.
  std::string directory() const;
  /// The number whose name is `directory()/entry`, or -1 when `entry` (a name in that folder)
  /// is no name of the pattern.
  std::int64_t number_of(const std::string& entry) const;
};

/// True when `path` is a pattern SequencePattern::parse accepts.
bool is_sequence_pattern(const std::string& path);

/// The extension of the file `path` names, lower-cased, without the dot ("" for none; a dot
/// in a folder's name does not count): "clip.AVI" -> "avi".
std::string file_extension(const std::string& path);

}  // namespace mjpeg
