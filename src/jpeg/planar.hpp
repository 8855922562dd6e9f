// Planar 8-bit YCbCr frames (Y4M files, decoded video): how they lie in memory, and their rows
// as the RGB that is encoded (the integer conversion of jpeg_math.hpp, which the GPU kernels
// apply per pixel too). Such frames travel to the transforms as they are: 1.5 bytes per pixel
// at 4:2:0 instead of 3.
#pragma once

#include <cstddef>
#include <cstdint>

#include <vector>

#include "jpeg/quant.hpp"
#include "jpeg/transform_cpu.hpp"
#include "jpeg_geometry.hpp"
#include "jpeg_math.hpp"

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
