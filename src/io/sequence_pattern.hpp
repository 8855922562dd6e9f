// printf-style file-name patterns of image sequences ("frames/%05d.png"), for the readers and
// the numbered-JPEG writer.
#pragma once

#include <cstdint>
#include <string>

namespace mjpeg::io {

/// A pattern with exactly one integer conversion: %d, %Nd or %0Nd ("%%" is a literal '%').
struct SequencePattern {
  std::string prefix;   ///< everything before the conversion ("%%" already turned into '%')
  std::string suffix;   ///< everything after it
  int width = 0;        ///< minimum number of digits
  bool zero_pad = false;

  /// Parses `pattern`; false unless it has exactly one integer conversion and no other.
  static bool parse(const std::string& pattern, SequencePattern& out);

  /// The file name of number `n` (e.g. 7 -> "frames/00007.png").
  std::string name(std::int64_t n) const;
  /// True when the number is part of the file name itself (not of a directory in the path).
  bool number_in_file_name() const { return suffix.find('/') == std::string::npos; }
  /// The directory the files are in ("." for none): the prefix up to its last '/'.
  std::string directory() const;
  /// The number whose name is `directory()/entry`, or -1 when `entry` (a name in that
  /// directory) is no name of the pattern.
  std::int64_t number_of(const std::string& entry) const;
};

}  // namespace mjpeg::io
