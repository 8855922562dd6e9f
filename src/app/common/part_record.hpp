// What a part of a split encode (--part I/K) is: kept inside the part's file where players
// ignore it (FileSinkOptions::note), printed in `encode --json`, and checked by `mjpeg join`
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
///   aspect, tags, audio, audio timing: what one pass over the whole carries beside the frames
///             (the pixel aspect ratio, the metadata as tags_text writes it, the audio and
///             where it starts and ends): must be equal; join writes them as one pass does
///   source path  where the encode read the source (told; join reads the audio from there)
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
/// The record's "audio" of a part whose output holds no audio (.mjpeg, numbered JPEGs) while
/// its source has audio that one pass into an AVI would carry.
inline constexpr char kAudioNotHeld[] = "the source's, which this output does not hold";

/// Why the output `path` (FileSink's kinds) holds no audio at all, or "" when it holds some:
/// what FileSink::audio_problem says of plain PCM.
std::string why_no_audio(const std::string& path);

/// The keys whose values all parts of one split share, in the order join checks them.
const std::vector<std::string>& shared_part_keys();

/// The record of part `plan` of the input `input` (`plan.identity_file` hashed), whose frames
/// are `format` at fps_num/fps_den, encoded with `jpeg`; `reading` says how the pixels were
/// read beyond `format` (stream, turn); `carried` are the lines of what the output carries
/// beside the frames (aspect, tags, audio, ...).
PartRecord make_part_record(const PartPlan& plan, const std::string& input,
                            const VideoOptions& format, int fps_num, int fps_den,
                            const EncodeOptions& jpeg, const std::string& reading,
                            const std::vector<std::pair<std::string, std::string>>& carried = {});

/// "<bytes> bytes, <frames> frames, first MiB <hash>" of `file`: the record's "source id".
/// Throws Error when the file cannot be read.
std::string source_id(const std::string& file, std::int64_t frames);
/// Whether `file` is the source a record's "source id" names (its size and first MiB).
/// Throws Error when the file cannot be read.
bool is_source(const std::string& file, const std::string& id);
/// `input` as an absolute path without symbolic links (as it is when that fails).
std::string source_path(const std::string& input);

/// Metadata (key, text) as one record line, "key=text, key=text" with '%', ',', '=' and bytes
/// outside printable ASCII written %XX, so that any text comes back exactly; parse_tags reads
/// it back (throws Error when it is damaged).
std::string tags_text(const std::vector<std::pair<std::string, std::string>>& tags);
std::vector<std::pair<std::string, std::string>> parse_tags(const std::string& text);

/// "F..L" of a range.
std::string range_text(const FrameRange& range);

}  // namespace mjpeg::app
