// The CPU transform: pixels -> quantized coefficients in the layout of core/geometry.hpp (colour
// conversion, edge replication, downsampling, FDCT, quantization, dummy blocks). The GPU
// kernels must produce exactly the same buffer.
//
// It comes in instruction-set variants, picked once at run time like the Huffman coder's:
//   avx512  AVX-512 F/BW/VBMI (transform_simd.cpp)
//   avx2    AVX2, the fast path of most x86-64 machines
//   sse2    the x86-64 baseline
//   scalar  the reference (transform_cpu.cpp): plain C++ on math::, what every other variant is
//           tested against
// All of them compute exactly the integer arithmetic of jpeg_math.hpp, so they write the same
// bytes. The environment variable MJPEG_CPU_TRANSFORM=<name> forces a variant (for tests and
// measurements); an unknown or unsupported name is an error at the first transform.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/quant.hpp"
#include "core/geometry.hpp"
#include "mjpeg/options.hpp"

namespace mjpeg {

/// The most pixel rows a band (one MCU row) has: 8 * max_v.
inline constexpr int kMaxBandRows = 16;

/// Where the transform reads a frame's pixel rows: one band (MCU row) at a time, top to bottom,
/// each band once. An ImageView is the usual source (ImageRows); a source that makes rows on
/// demand (planar YCbCr converted to RGB into its own scratch, say) implements this and plugs
/// into every variant without touching the kernels.
class RowSource {
 public:
  virtual ~RowSource() = default;
  virtual int width() const = 0;
  virtual int height() const = 0;
  virtual PixelFormat format() const = 0;  ///< rgb24 or gray8
  /// Sets rows[i] to the first pixel of row y0 + i, for i < count (count <= kMaxBandRows,
  /// y0 + count <= height()): width() pixels of format(). The rows stay valid until the next
  /// call.
  virtual void band(int y0, int count, const std::uint8_t** rows) = 0;
};

/// The rows of an ImageView (no copy).
class ImageRows final : public RowSource {
 public:
  explicit ImageRows(const ImageView& view) : view_(view) {}
  int width() const override { return view_.width; }
  int height() const override { return view_.height; }
  PixelFormat format() const override { return view_.format; }
  void band(int y0, int count, const std::uint8_t** rows) override {
    for (int i = 0; i < count; ++i)
      rows[i] = view_.data + static_cast<std::size_t>(y0 + i) * view_.stride;
  }

 private:
  ImageView view_;
};

/// Writes geometry.coefficient_count() int16 values to `coeffs`, with the default variant.
/// rgb24 input with a 1-component geometry is converted to luma; gray8 input needs a
/// 1-component geometry.
void transform_cpu(const ImageView& image, const FrameGeometry& geometry,
                   const QuantTables& tables, std::int16_t* coeffs);
void transform_cpu(RowSource& rows, const FrameGeometry& geometry, const QuantTables& tables,
                   std::int16_t* coeffs);

/// The same with a named variant (tests check they all agree). Throws mjpeg::Error if this CPU
/// cannot run it.
void transform_cpu(const std::string& variant, const ImageView& image,
                   const FrameGeometry& geometry, const QuantTables& tables, std::int16_t* coeffs);
void transform_cpu(const std::string& variant, RowSource& rows, const FrameGeometry& geometry,
                   const QuantTables& tables, std::int16_t* coeffs);

/// transform_cpu on up to `threads` threads (the caller is one of them), each transforming a
/// range of MCU rows: the same coefficients. `variant` "" = the default one.
void transform_cpu_parallel(const ImageView& image, const FrameGeometry& geometry,
                            const QuantTables& tables, std::int16_t* coeffs, int threads,
                            const std::string& variant = "");

/// The variants this CPU can run, best first ("scalar" last), and the one the plain
/// transform_cpu uses (the best, or MJPEG_CPU_TRANSFORM's).
std::vector<std::string> transform_variants();
const char* transform_variant();
/// Every variant compiled into this build, best first, whether or not this CPU can run it (so
/// that a test can report the ones it could not run by name).
std::vector<std::string> built_transform_variants();

/// Fills the dummy (MCU padding) blocks from the real ones, as libjpeg does: AC = 0, DC of a
/// right-edge dummy = DC of the block to its left; DC of a bottom dummy row = DC of the last
/// block of the row above in the same MCU. Called by transform_cpu; exposed for the GPU path.
void fill_dummy_blocks(const FrameGeometry& geometry, std::int16_t* coeffs);

/// Tests: quantizes in[0..n) with table value q (every coefficient), as the named variant's
/// vector quantizer does inside its transform (n a multiple of 64). "scalar" is math::quantize.
void quantize_values(const std::string& variant, const std::int16_t* in, std::int16_t* out,
                     std::size_t n, int q);

}  // namespace mjpeg
