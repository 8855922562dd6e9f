// An owned 8-bit image (interleaved RGB or gray, rows packed) that readers return and the
// encoder reads through view().
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "mjpeg/options.hpp"

namespace mjpeg::io {

struct Image {
  int width = 0;
  int height = 0;
  PixelFormat format = PixelFormat::rgb24;
  std::vector<std::uint8_t> pixels;  ///< height * stride() bytes

  Image() = default;
  /// Allocates a zero-filled width x height image of `format`.
  Image(int w, int h, PixelFormat f)
      : width(w), height(h), format(f), pixels(static_cast<std::size_t>(w) * h * channels(f)) {}

  /// Bytes per row (rows are packed: no padding).
  std::size_t stride() const { return static_cast<std::size_t>(width) * channels(format); }

  /// A read-only view; valid while this image is alive and not resized.
  ImageView view() const { return ImageView{pixels.data(), width, height, format, stride()}; }
};

}  // namespace mjpeg::io
