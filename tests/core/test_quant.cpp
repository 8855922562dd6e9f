// Quantization (src/core/quant.hpp, and the reciprocal quantizer of src/core/jpeg_math.hpp):
// libjpeg's quality scaling and Annex K tables, and the reciprocal's results equal to libjpeg's
// division. Custom tables and the tuned presets: test_quant_tables.cpp.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "core/jpeg_math.hpp"
#include "core/quant.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg {
namespace {

TEST(Quant, QualityScalingFollowsLibjpeg) {
  EXPECT_EQ(quality_scale(50), 100);
  EXPECT_EQ(quality_scale(75), 50);
  EXPECT_EQ(quality_scale(100), 0);
  EXPECT_EQ(quality_scale(10), 500);
  EXPECT_THROW(quality_scale(0), UsageError);
  EXPECT_THROW(quality_scale(101), UsageError);
  const QuantTables q50 = make_quant_tables(50, 2);
  EXPECT_EQ(q50.natural[0][0], 16);  // Annex K as is
  EXPECT_EQ(q50.natural[1][63], 99);
  const QuantTables q100 = make_quant_tables(100, 2);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(q100.natural[0][i], 1);
  const QuantTables q75 = make_quant_tables(75, 1);
  EXPECT_EQ(q75.natural[0][0], 8);  // (16 * 50 + 50) / 100
  EXPECT_FALSE(q75.needs_16bit(0));
  EXPECT_TRUE(make_quant_tables(1, 2).needs_16bit(0));    // 16 * 5000 / 100 = 800
  EXPECT_FALSE(make_quant_tables(24, 2).needs_16bit(0));  // the lowest all-8-bit quality
  EXPECT_FALSE(make_quant_tables(24, 2).needs_16bit(1));
  EXPECT_TRUE(make_quant_tables(23, 2).needs_16bit(0));   // (121 * 217 + 50) / 100 = 263
  EXPECT_FALSE(make_quant_tables(23, 2).needs_16bit(1));  // (99 * 217 + 50) / 100 = 215
}

// The reciprocal quantizer must equal libjpeg's division (round half away from zero) for every
// coefficient an 8-bit islow DCT can produce and every table value.
TEST(Quant, ReciprocalEqualsDivisionExhaustively) {
  std::vector<int> qs;
  for (int q = 1; q <= 255; ++q) qs.push_back(q);
  for (int q : {256, 300, 800, 1000, 4095, 9900, 32767}) qs.push_back(q);
  for (int q : qs) {
    const math::QuantDivisor d = math::make_divisor(q);
    const int divisor = 8 * q;
    for (int coef = -16384; coef <= 16384; ++coef) {
      const int mag = (std::abs(coef) + divisor / 2) / divisor;
      const int expected = coef < 0 ? -mag : mag;
      ASSERT_EQ(math::quantize(coef, d), expected) << "coef " << coef << " q " << q;
    }
  }
}

}  // namespace
}  // namespace mjpeg
