// Frames held in memory for `mjpeg compare` and `mjpeg bench`: decoded once, then encoded by
// every mode from the same bytes, so that the runs differ only in how they encode.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/common/cli_options.hpp"
#include "app/input/image_input.hpp"
#include "mjpeg/options.hpp"
#include "mjpeg/video.hpp"

namespace mjpeg::app {

/// Frames in the layout the encoder reads them in: packed (`frames`: still images, RGB
/// videos) or planar YCbCr (`planar`: Y4M, decoded yuv video), as `mjpeg encode` would read
/// the same input.
struct FrameStore {
  std::vector<Image> frames;                  ///< packed frames (empty when planar)
  std::vector<std::vector<std::uint8_t>> planar;  ///< planar frames, frame_bytes(format) each
  /// The frames' width, height, format (rgb24, gray8 or planar), matrix, range, coefficients.
  VideoOptions format;
  int fps_num = 25, fps_den = 1;
  std::string description;  ///< one line: where the frames came from

  std::size_t count() const { return is_planar() ? planar.size() : frames.size(); }
  bool is_planar() const { return mjpeg::is_planar(format.format); }
  int width() const { return format.width; }
  int height() const { return format.height; }
  /// Packed frames only (empty for planar ones).
  std::vector<ImageView> views() const;
  std::uint64_t bytes() const;
  /// Every frame as a MemorySource (the store's own, made once): encode_all encodes the frames
  /// where they lie (the cpu mode transforms them there and, once pin()ned, sok --pinned and
  /// aok upload them from there instead of copying them into slots).
  MemorySource& source() const;
  /// The first `count` frames, not page-locked (a warm-up run).
  std::unique_ptr<MemorySource> first(std::int64_t count) const;
  /// Page-locks every frame (MemorySource::pin), so that in-place uploads run at PCIe speed
  /// without a copy into a pinned slot. Needs a usable CUDA device. Throws mjpeg::Error.
  void pin() { source().pin(); }
  bool pinned() const { return all_ && all_->pinned(); }
  /// The RGB (or gray) pixels the encoder encodes, for peers that read pixels (libjpeg-turbo):
  /// packed frames as they are; planar frames converted into `scratch` (kept by the caller).
  std::vector<ImageView> pixel_views(std::vector<Image>& scratch) const;

 private:
  std::vector<const std::uint8_t*> pointers(std::size_t n) const;
  mutable std::shared_ptr<MemorySource> all_;  // shared: a FrameStore stays copyable
};

/// `count` frames of width x height cut from `picture`: a window that pans across it (the
/// picture is tiled, so any size works, also one larger than the picture); every frame differs.
FrameStore panning_frames(const Image& picture, int width, int height, int count);

/// Loads up to `max_frames` frames of any input `mjpeg encode` reads. A still image becomes
/// `max_frames` panning frames of `width` x `height` (0: the image's own size); for a stream the
/// size must be 0 (frames keep theirs). `input`: opened and recognised (open_input). Throws
/// Error / UsageError.
FrameStore load_frames(Input input, std::int64_t max_frames, int width, int height,
                       const NoticeSink& notice);

}  // namespace mjpeg::app
