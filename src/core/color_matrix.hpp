// The standard YCbCr matrices: one row each of its title and luma weights (Y = Kr R + Kg G +
// Kb B, Kg = 1 - Kr - Kb), from which every conversion of the project derives its integer
// coefficients (math::make_rounded_ycc). A new matrix is a new YuvMatrix value, its row in
// mjpeg/vocabulary.hpp (its name) and its row here.
#pragma once

#include "mjpeg/video.hpp"

namespace mjpeg::core {

struct MatrixSpec {
  YuvMatrix matrix;
  const char* title;  ///< as a description names it: "BT.709"
  double kr, kb;
};

inline constexpr MatrixSpec kMatrixSpecs[] = {
    {YuvMatrix::bt601, "BT.601", 0.299, 0.114},
    {YuvMatrix::bt709, "BT.709", 0.2126, 0.0722},
    {YuvMatrix::bt2020, "BT.2020", 0.2627, 0.0593},  // non-constant luminance
};

/// The row of `m` (BT.601's for a value without one).
constexpr const MatrixSpec& matrix_spec(YuvMatrix m) {
  for (const MatrixSpec& s : kMatrixSpecs)
    if (s.matrix == m) return s;
  return kMatrixSpecs[0];
}

}  // namespace mjpeg::core
