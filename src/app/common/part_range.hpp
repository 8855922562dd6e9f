// --part I/K: part I of K equal frame ranges of a stream, worked out from its frame count, so
// that a batch system only supplies I (and K) to each of its tasks.
#pragma once

#include <cstdint>
#include <string>

namespace mjpeg::app {

/// "I/K" of --part; count 0 when no part was asked for.
struct PartSpec {
  int index = 0;  ///< 1..count
  int count = 0;
  bool given() const { return count > 0; }
};

/// Parses "I/K" (decimal, 1 <= I <= K <= kMaxParts). Throws UsageError naming the text.
PartSpec parse_part(const std::string& text);
inline constexpr int kMaxParts = 100000;

/// Frames [first, first + count) of a stream, numbered from 0 as a one-pass decode numbers them.
struct FrameRange {
  std::int64_t first = 0;
  std::int64_t count = 0;
  std::int64_t end() const { return first + count; }
};

/// How a split input was planned: the frames it has, those the K parts share, this part's.
struct PartPlan {
  PartSpec part;
  std::int64_t total = 0;  ///< the input's frames, as counted
  FrameRange whole;        ///< --start / --frames of the input (default: all of it)
  FrameRange range;        ///< this part's frames
  std::string counted;     ///< how `total` was found, for a notice ("from its file size", ...)
  /// The file whose bytes identify the input in a part record (a sequence's first file; ""
  /// for the input itself).
  std::string identity_file;
};

/// The plan for part `part` of the frames [start, start + frames) of an input of `total`
/// frames (frames < 0: to its end; clipped at its end). Part i's range is
/// [first + floor((i - 1) n / K), first + floor(i n / K)) of the n frames from `first`: the K
/// ranges cover them once, in order, with sizes that differ by at most one. Throws Error when
/// `start` lies past the input's end or the part has no frame (K > n).
PartPlan plan_part(const PartSpec& part, std::int64_t total, std::int64_t start,
                   std::int64_t frames, const std::string& input);

}  // namespace mjpeg::app
