// What a video file holds beside its frames that an output can carry: its metadata (title,
// artist, ...) and its audio, copied packet by packet without decoding. Read from the file
// a second time, with a demuxer of its own that skips the video, so that the frames' reader
// (libav_source.cpp) stays as it is and the audio is read where the output needs it
// (builds with FFmpeg's libraries; regular files only: a pipe cannot be read twice).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mjpeg/video.hpp"

struct AVCodecParameters;
struct AVPacket;

namespace mjpeg::app {

/// One audio stream of the input, from the output's time 0 (the first encoded frame) on. Its
/// packets are those that end after time 0 and start before the end (end_at; the end of the
/// stream otherwise), in order, with big-endian PCM turned little-endian (the bytes swapped,
/// the samples unchanged).
class SourceAudio final : public mjpeg::AudioSource {
 public:
  ~SourceAudio() override;
  const AudioFormat& format() const override;
  bool read(AudioPacket& packet) override;
  /// The same packet for a muxer of FFmpeg's (encode/libav_sink.cpp): pts, dts and duration
  /// in time_base() units, counted from the output's time 0.
  bool read(AVPacket* packet);
  /// FFmpeg's description of the stream as it is delivered, and its time base.
  const AVCodecParameters* parameters() const;
  int time_base_num() const;
  int time_base_den() const;

  /// No packet that starts at or after `seconds` (output time) is delivered.
  void end_at(double seconds);
  /// Packets delivered so far, and the seconds from time 0 to the end of the last one.
  std::int64_t packets() const;
  double seconds() const;
  /// What went wrong reading it, if anything (the audio then ends there): one line, or "".
  const std::string& problem() const;
  /// E.g. "aac 48000 Hz stereo".
  std::string describe() const;

  struct Impl;
  explicit SourceAudio(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

struct SourceExtras {
  /// The file's tags, keyed as FFmpeg keys them ("title", "artist", "comment", "date", ...),
  /// without those that describe the file rather than its content (its encoder, the MP4
  /// brands).
  std::vector<std::pair<std::string, std::string>> metadata;
  std::unique_ptr<SourceAudio> audio;  ///< null when the file has no audio stream
  std::vector<std::string> notices;    ///< e.g. audio streams left out
};

/// Opens the regular file `path` again. `video_stream` is the stream being encoded (the audio
/// stream that goes with it is chosen), `start_seconds` the input's time of the output's
/// first frame. `want_audio` false: metadata only. Throws Error when the file cannot be read.
SourceExtras read_source_extras(const std::string& path, int video_stream, double start_seconds,
                                bool want_audio);

}  // namespace mjpeg::app
