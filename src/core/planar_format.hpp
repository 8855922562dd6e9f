// Planar 8-bit YCbCr frames (Y4M files, decoded video, the API's planar input): how they lie
// in memory and which matrix and range they use. Plain C++ shared by the CPU path, the I/O
// readers and the GPU launchers (the kernels take such frames as they are: 1.5 bytes per pixel
// at 4:2:0 instead of 3); their conversion to RGB rows on the CPU is src/jpeg/planar.hpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/jpeg_math.hpp"

namespace mjpeg {

/// Chroma of a planar frame: each Cb/Cr sample covers 2x2 (c420), 2x1 (c422) or 1x1 (c444)
/// pixels; mono frames have only Y (encoded as Cb = Cr = 128). `none`: not planar.
enum class PlanarChroma { none, c420, c422, c444, mono };

struct PlanarFormat {
  PlanarChroma chroma = PlanarChroma::none;
  math::YccToRgb ycc{};  ///< the source's matrix and range, as integer coefficients

  bool planar() const { return chroma != PlanarChroma::none; }
  bool has_chroma() const { return planar() && chroma != PlanarChroma::mono; }
  /// log2 of the pixels per chroma sample, horizontally / vertically.
  int shift_x() const {
    return chroma == PlanarChroma::c420 || chroma == PlanarChroma::c422 ? 1 : 0;
  }
  int shift_y() const { return chroma == PlanarChroma::c420 ? 1 : 0; }
};

/// Where the planes of a width x height frame lie when it is stored as a Y4M file stores it:
/// Y, then Cb, then Cr, back to back, rows packed; chroma planes are ceil(W/2) x ceil(H/2)
/// (4:2:0), ceil(W/2) x H (4:2:2) or W x H (4:4:4); mono has Y only.
struct PlanarLayout {
  int chroma_width = 0, chroma_height = 0;
  std::size_t offset[3] = {};  ///< Y, Cb, Cr
  std::size_t pitch[3] = {};   ///< bytes per row of each plane
  std::size_t bytes = 0;       ///< the whole frame
};
PlanarLayout planar_layout(int width, int height, PlanarChroma chroma);

/// A planar frame in memory, read-only. plane[1], plane[2] are null for mono.
struct PlanarView {
  const std::uint8_t* plane[3] = {};
  std::size_t pitch[3] = {};
  int width = 0, height = 0;
  PlanarFormat format;
};
/// The view of a frame stored at `data` in planar_layout's layout.
PlanarView planar_view(const std::uint8_t* data, int width, int height,
                       const PlanarFormat& format);

}  // namespace mjpeg
