// Quantization tables: the Annex K tables scaled as libjpeg's jpeg_set_quality(q, TRUE) does.
#pragma once

#include <cstdint>

#include "jpeg_math.hpp"

namespace mjpeg {

struct QuantTables {
  int count = 0;                                ///< 1 (gray) or 2 (luma, chroma)
  std::uint16_t natural[2][64] = {};            ///< 1..255, row-major (natural) order
  math::QuantDivisor divisor[2][64] = {};       ///< for math::quantize, natural order
};

/// libjpeg's quality scaling: q < 50 -> 5000/q, else 200 - 2q (percent).
int quality_scale(int quality);

/// Tables for `quality` (1..100); `count` is 1 for grayscale and 2 otherwise.
QuantTables make_quant_tables(int quality, int count);

}  // namespace mjpeg
