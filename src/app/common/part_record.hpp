// What a part of a split encode (--part I/K) is: kept inside the part's file where players
// ignore it (FileSink::Options::note), printed in `encode --json`, and checked by `mjpeg join`
// before it joins parts: one source, one set of settings, ranges that cover it once.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "app/common/part_range.hpp"
#include "mjpeg/options.hpp"
#include "mjpeg/video.hpp"

namespace mjpeg::app {

/// The record, as lines "key: value" after the first line kPartRecordHeader:
///   part      "I/K"
///   frames    "F..L": the part's frames of the source (0-based, inclusive)
///   of        "F..L": the frames the K parts share (--start / --frames; all by default)
///   source    the input's name (told, not checked: another host may name it otherwise)
///   source id its bytes, its frames and a hash of its first MiB (an image sequence: of its
///             first file, with the files counted)
///   size, rate, jpeg (the JPEG settings), input (how pixels were read): must be equal
///   encoder   mjpeg's version (told only)
struct PartRecord {
  PartSpec part;
  FrameRange range;
  FrameRange whole;
  std::vector<std::pair<std::string, std::string>> fields;  ///< every line, in order

  /// The value of `key` ("" when absent).
  const std::string& get(const std::string& key) const;
  std::string text() const;
  /// Parses a record's text; throws Error (the reason, without a file name) when it is none.
  static PartRecord parse(const std::string& text);
};

inline constexpr char kPartRecordHeader[] = "mjpeg part record 1";

/// The keys whose values all parts of one split share, in the order join checks them.
const std::vector<std::string>& shared_part_keys();

/// The record of part `plan` of the input `input` (`plan.identity_file` hashed), whose frames
/// are `format` at fps_num/fps_den, encoded with `jpeg`; `reading` says how the pixels were
/// read beyond `format` (stream, turn).
PartRecord make_part_record(const PartPlan& plan, const std::string& input,
                            const VideoOptions& format, int fps_num, int fps_den,
                            const EncodeOptions& jpeg, const std::string& reading);

/// "F..L" of a range.
std::string range_text(const FrameRange& range);

}  // namespace mjpeg::app
