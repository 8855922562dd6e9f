// Frames held in memory for `mjpeg compare` and `mjpeg bench`: decoded once, then encoded by
// every mode from the same bytes, so that the runs differ only in how they encode.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "image_input.hpp"
#include "io/image.hpp"

namespace mjpeg::app {

/// A frame size given on the command line.
struct FrameSize {
  int width = 0, height = 0;
};

/// Parses "WIDTHxHEIGHT" (each 1..kMaxDimension); throws UsageError naming `option`.
FrameSize parse_frame_size(const std::string& text, const std::string& option);

struct FrameStore {
  std::vector<io::Image> frames;
  int fps_num = 25, fps_den = 1;
  std::string description;  ///< one line: where the frames came from

  std::vector<ImageView> views() const;
  std::uint64_t bytes() const;
};

/// `count` frames of width x height cut from `picture`: a window that pans across it (the
/// picture is tiled, so any size works, also one larger than the picture); every frame differs.
FrameStore panning_frames(const io::Image& picture, int width, int height, int count);

/// Loads up to `max_frames` frames of any input `mjpeg encode` reads. A still image becomes
/// `max_frames` panning frames of `width` x `height` (0: the image's own size); for a stream the
/// size must be 0 (frames keep theirs). Throws Error / UsageError.
FrameStore load_frames(const std::string& input, std::int64_t max_frames, int width, int height,
                       const NoticeSink& notice);

}  // namespace mjpeg::app
