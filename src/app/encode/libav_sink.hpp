// Matroska (.mkv) and QuickTime (.mov) outputs, written by FFmpeg's muxers (builds with
// FFmpeg's libraries): each JPEG frame as it is (codec mjpeg), with the input's audio and
// metadata and the pixel aspect ratio, published like every output of mjpeg (a hidden
// temporary file renamed when complete; its name claimed without replacing unless -y).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mjpeg/video.hpp"

namespace mjpeg::app {

class SourceAudio;

/// True for the names of these outputs: "*.mkv" and "*.mov" (any case).
bool is_muxer_output(const std::string& path);
/// "Matroska" or "QuickTime" for such a name.
const char* muxer_output_name(const std::string& path);
/// Empty when this build writes `path` (is_muxer_output); otherwise why not, a sentence
/// naming the file: a build without FFmpeg's libraries, or whose FFmpeg lacks that muxer.
std::string muxer_output_problem(const std::string& path);
/// Empty when the muxer of `path` takes `audio`'s codec; otherwise why not (builds with
/// FFmpeg's libraries).
std::string muxer_audio_problem(const std::string& path, const SourceAudio& audio);

class LibavSink final : public mjpeg::FrameSink {
 public:
  struct Options {
    int fps_num = 25, fps_den = 1;
    bool overwrite = false;
    int aspect_num = 1, aspect_den = 1;
    std::vector<std::pair<std::string, std::string>> metadata;
    SourceAudio* audio = nullptr;  ///< interleaved with the frames; must outlive close()
  };
  /// Opens `path` (is_muxer_output). Throws Error when the muxer cannot be set up (naming the
  /// file and why), UsageError in a build without FFmpeg's libraries.
  LibavSink(const std::string& path, int width, int height, const Options& options);
  ~LibavSink() override;  ///< unclosed: removes what it wrote
  LibavSink(const LibavSink&) = delete;
  LibavSink& operator=(const LibavSink&) = delete;

  void write(const EncodedFrame& frame) override;
  /// Writes the rest of the audio and the muxer's trailer, and publishes the file.
  void close();
  std::uint64_t bytes_written() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace mjpeg::app
