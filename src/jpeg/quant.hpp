// Quantization tables: the Annex K tables scaled as cjpeg -quality Q does
// (jpeg_set_quality(q, FALSE)): values clamp to 1..32767, so qualities below 24 give 16-bit
// tables and a non-baseline (SOF1) frame, exactly as cjpeg writes them.
#pragma once

#include <cstdint>

#include "jpeg_math.hpp"

namespace mjpeg {

struct QuantTables {
  int count = 0;                                ///< 1 (gray) or 2 (luma, chroma)
  std::uint16_t natural[2][64] = {};            ///< 1..32767, row-major (natural) order
  math::QuantDivisor divisor[2][64] = {};       ///< for math::quantize, natural order
  /// True when table `index` has a value above 255 (16-bit DQT precision).
  bool needs_16bit(int index) const;
};

/// libjpeg's quality scaling: q < 50 -> 5000/q, else 200 - 2q (percent).
int quality_scale(int quality);

/// Tables for `quality` (1..100); `count` is 1 for grayscale and 2 otherwise.
QuantTables make_quant_tables(int quality, int count);

}  // namespace mjpeg
