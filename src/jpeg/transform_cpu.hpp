// The CPU reference transform: pixels -> quantized coefficients in the layout of
// jpeg_geometry.hpp (colour conversion, edge replication, downsampling, FDCT, quantization,
// dummy blocks). The GPU kernels must produce exactly the same buffer.
#pragma once

#include <cstdint>

#include "jpeg/quant.hpp"
#include "jpeg_geometry.hpp"
#include "mjpeg/options.hpp"

namespace mjpeg {

/// Writes geometry.coefficient_count() int16 values to `coeffs`.
/// rgb24 input with a 1-component geometry is converted to luma; gray8 input needs a
/// 1-component geometry.
void transform_cpu(const ImageView& image, const FrameGeometry& geometry,
                   const QuantTables& tables, std::int16_t* coeffs);

/// Fills the dummy (MCU padding) blocks from the real ones, as libjpeg does: AC = 0, DC of a
/// right-edge dummy = DC of the block to its left; DC of a bottom dummy row = DC of the last
/// block of the row above in the same MCU. Called by transform_cpu; exposed for the GPU path.
void fill_dummy_blocks(const FrameGeometry& geometry, std::int16_t* coeffs);

}  // namespace mjpeg
