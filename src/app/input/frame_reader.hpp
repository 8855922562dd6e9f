// Reading the frames of any input one by one as rgb24, for `mjpeg quality`: a still image (one
// frame), a Y4M file, an image sequence or a video (through open_video_input, i.e. FFmpeg's
// libraries with the source's colour matrix when the build has them). Gray frames are expanded
// to R = G = B, so every frame compares like with like.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mjpeg/options.hpp"
#include "video_input.hpp"

namespace mjpeg::app {

class FrameReader {
 public:
  /// Opens `path`; `max_frames` < 0 reads everything; the frames before `start` are read and
  /// dropped (UsageError for a still image). Throws Error naming the file when it is missing,
  /// unreadable or has no frames (one line).
  FrameReader(const std::string& path, std::int64_t max_frames, std::int64_t start = 0);
  ~FrameReader();
  FrameReader(const FrameReader&) = delete;
  FrameReader& operator=(const FrameReader&) = delete;

  /// The next frame into `out` (resized to rgb24 width x height when needed); false at the end.
  bool next(Image& out);

  int width() const { return width_; }
  int height() const { return height_; }
  const std::string& path() const { return path_; }
  /// Frames the input says it has (-1 unknown); `max_frames` applied.
  std::int64_t frame_count() const { return frame_count_; }
  /// Frames handed out so far.
  std::int64_t frames_read() const { return read_; }
  /// One line: size, rate, reader.
  const std::string& description() const { return description_; }

 private:
  std::string path_;
  std::int64_t max_frames_;
  int width_ = 0, height_ = 0;
  std::int64_t frame_count_ = -1;
  std::int64_t read_ = 0;
  std::string description_;
  Image still_;          // a still image, handed out once
  bool is_still_ = false;
  VideoInput video_;
  std::vector<std::uint8_t> planar_scratch_;  // planar or gray8 frames before conversion to RGB
};

/// An rgb24 copy of `image` (gray8 expanded to R = G = B; rgb24 copied as is).
Image to_rgb(const ImageView& image);

}  // namespace mjpeg::app
