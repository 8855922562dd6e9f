#include "jpeg/quant.hpp"

#include "mjpeg/error.hpp"

namespace mjpeg {
namespace {

// ITU-T T.81 Annex K, tables K.1 (luminance) and K.2 (chrominance), natural order.
constexpr std::uint16_t kBaseTables[2][64] = {
    {16, 11, 10, 16, 24,  40,  51,  61,  12, 12, 14, 19, 26,  58,  60,  55,
     14, 13, 16, 24, 40,  57,  69,  56,  14, 17, 22, 29, 51,  87,  80,  62,
     18, 22, 37, 56, 68,  109, 103, 77,  24, 35, 55, 64, 81,  104, 113, 92,
     49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99},
    {17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99,
     24, 26, 56, 99, 99, 99, 99, 99, 47, 66, 99, 99, 99, 99, 99, 99,
     99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
     99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99}};

}  // namespace

int quality_scale(int quality) {
  if (quality < 1 || quality > 100) throw UsageError("quality must be in 1..100");
  return quality < 50 ? 5000 / quality : 200 - quality * 2;
}

bool QuantTables::needs_16bit(int index) const {
  for (int i = 0; i < 64; ++i)
    if (natural[index][i] > 255) return true;
  return false;
}

QuantTables make_quant_tables(int quality, int count) {
  const long scale = quality_scale(quality);
  QuantTables t;
  t.count = count;
  for (int n = 0; n < count; ++n) {
    for (int i = 0; i < 64; ++i) {
      long value = (kBaseTables[n][i] * scale + 50) / 100;
      if (value < 1) value = 1;
      if (value > 32767) value = 32767;  // like cjpeg: no forced baseline, 16-bit tables allowed
      t.natural[n][i] = static_cast<std::uint16_t>(value);
      t.divisor[n][i] = math::make_divisor(static_cast<int>(value));
    }
  }
  return t;
}

}  // namespace mjpeg
