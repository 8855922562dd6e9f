// Planar 8-bit YCbCr frames (core/planar_format.hpp) on the CPU: their rows as the RGB that is
// encoded (the integer conversion of core/jpeg_math.hpp, which the GPU kernels apply per pixel
// too), and the CPU transform of such a frame band by band.
#pragma once

#include <cstddef>
#include <cstdint>

#include <vector>

#include "core/geometry.hpp"
#include "core/planar_format.hpp"
#include "core/quant.hpp"
#include "jpeg/transform_cpu.hpp"

namespace mjpeg {

/// Row y (0 <= y < height) of the frame as width rgb24 pixels at `rgb`: AVX2 where this CPU
/// has it (planar_row_variant()), else plain C++ on math::; the same bytes either way.
void planar_row_to_rgb(const PlanarView& frame, int y, std::uint8_t* rgb);
/// The plain C++ reference of planar_row_to_rgb (tests compare the two).
void planar_row_to_rgb_scalar(const PlanarView& frame, int y, std::uint8_t* rgb);
/// "avx2" or "scalar": what planar_row_to_rgb uses on this CPU.
const char* planar_row_variant();
/// The whole frame as rgb24, rows `stride` bytes apart.
void planar_to_rgb(const PlanarView& frame, std::uint8_t* rgb, std::size_t stride);

/// A planar frame's rows for the CPU transform: each band converted to rgb24 (planar_row_to_rgb)
/// into this object's scratch rows, so that transform_cpu of a planar frame is transform_cpu of
/// its planar_to_rgb image without a whole-frame RGB copy. Reusable: point it at the next frame
/// with set_frame (the scratch is kept).
class PlanarRows final : public RowSource {
 public:
  PlanarRows() = default;
  explicit PlanarRows(const PlanarView& frame) { set_frame(frame); }
  void set_frame(const PlanarView& frame);
  int width() const override { return frame_.width; }
  int height() const override { return frame_.height; }
  PixelFormat format() const override { return PixelFormat::rgb24; }
  void band(int y0, int count, const std::uint8_t** rows) override;

 private:
  PlanarView frame_;
  std::vector<std::uint8_t> scratch_;  // kMaxBandRows rows of width * 3 bytes
};

/// transform_cpu (the default variant) of a planar frame through PlanarRows.
void transform_cpu(const PlanarView& frame, const FrameGeometry& geometry,
                   const QuantTables& tables, std::int16_t* coeffs);

}  // namespace mjpeg
