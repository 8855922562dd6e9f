// Unit tests of the core's building blocks: geometry, quantization, FDCT, Huffman tables,
// dummy blocks. The byte-exactness matrix against libjpeg-turbo is in test_exactness.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "jpeg/geometry.hpp"
#include "jpeg/huffman.hpp"
#include "jpeg/quant.hpp"
#include "jpeg/transform_cpu.hpp"
#include "jpeg_math.hpp"
#include "mjpeg/encoder.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg {
namespace {

TEST(Geometry, Subsampled420OddSizeHasDummyBlocks) {
  const FrameGeometry g = make_geometry(17, 9, Subsampling::s420);
  EXPECT_EQ(g.num_components, 3);
  EXPECT_EQ(g.mcus_x, 2);
  EXPECT_EQ(g.mcus_y, 1);
  EXPECT_EQ(g.blocks_per_mcu, 6);
  EXPECT_EQ(g.comp[0].width_in_blocks, 3);   // ceil(17 / 8)
  EXPECT_EQ(g.comp[0].height_in_blocks, 2);  // ceil(9 / 8)
  EXPECT_EQ(g.comp[0].blocks_w, 4);          // 2 MCUs x 2
  EXPECT_EQ(g.comp[0].blocks_h, 2);
  EXPECT_EQ(g.comp[1].width, 9);             // ceil(17 / 2)
  EXPECT_EQ(g.comp[1].height, 5);
  EXPECT_EQ(g.comp[1].width_in_blocks, 2);
  EXPECT_EQ(g.comp[1].blocks_w, 2);
  EXPECT_EQ(g.total_blocks, 8u + 2u + 2u);
  EXPECT_EQ(g.comp[2].block_offset, 10u);
}

TEST(Geometry, GrayIsNotInterleaved) {
  const FrameGeometry g = make_geometry(17, 9, Subsampling::gray);
  EXPECT_EQ(g.num_components, 1);
  EXPECT_EQ(g.mcus_x, 3);
  EXPECT_EQ(g.mcus_y, 2);
  EXPECT_EQ(g.comp[0].blocks_w, 3);
  EXPECT_EQ(g.total_blocks, 6u);
}

TEST(Geometry, RejectsSizesOutsideRange) {
  EXPECT_THROW(make_geometry(0, 5, Subsampling::s420), UsageError);
  EXPECT_THROW(make_geometry(5, 0, Subsampling::s420), UsageError);
  EXPECT_THROW(make_geometry(kMaxDimension + 1, 5, Subsampling::s444), UsageError);
  EXPECT_NO_THROW(make_geometry(kMaxDimension, 1, Subsampling::s444));
}

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

// The integer DCT approximates 8 x the orthonormal-scaled 2-D DCT-II.
TEST(Fdct, MatchesFloatingPointDctWithinRounding) {
  std::srand(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::int32_t block[64];
    double in[64];
    for (int i = 0; i < 64; ++i) {
      block[i] = std::rand() % 256 - 128;
      in[i] = block[i];
    }
    math::fdct_islow(block);
    for (int v = 0; v < 8; ++v) {
      for (int u = 0; u < 8; ++u) {
        double sum = 0;
        for (int y = 0; y < 8; ++y)
          for (int x = 0; x < 8; ++x)
            sum += in[y * 8 + x] * std::cos((2 * x + 1) * u * M_PI / 16) *
                   std::cos((2 * y + 1) * v * M_PI / 16);
        const double cu = u ? 1.0 : 1.0 / std::sqrt(2.0), cv = v ? 1.0 : 1.0 / std::sqrt(2.0);
        const double expected = 8 * 0.25 * cu * cv * sum;
        EXPECT_NEAR(block[v * 8 + u], expected, 8.0) << "u " << u << " v " << v;
      }
    }
  }
}

TEST(Fdct, FlatBlockHasOnlyDc) {
  std::int32_t block[64];
  for (auto& s : block) s = 100 - 128;
  math::fdct_islow(block);
  EXPECT_EQ(block[0], 8 * 8 * (100 - 128));  // 8 x (sum / 8)
  for (int i = 1; i < 64; ++i) EXPECT_EQ(block[i], 0) << i;
}

TEST(Color, ConversionOfPrimaries) {
  EXPECT_EQ(math::rgb_to_y(255, 255, 255), 255);
  EXPECT_EQ(math::rgb_to_cb(255, 255, 255), 128);
  EXPECT_EQ(math::rgb_to_cr(0, 0, 0), 128);
  EXPECT_EQ(math::rgb_to_y(255, 0, 0), 76);
  EXPECT_EQ(math::rgb_to_cr(255, 0, 0), 255);
  EXPECT_EQ(math::rgb_to_cb(0, 0, 255), 255);
  EXPECT_EQ(math::downsample_h2v1(1, 2, 0), 1);  // bias 0 on even columns
  EXPECT_EQ(math::downsample_h2v1(1, 2, 1), 2);  // bias 1 on odd columns
  EXPECT_EQ(math::downsample_h2v2(1, 1, 1, 2, 0), 1);  // (5 + 1) >> 2
  EXPECT_EQ(math::downsample_h2v2(1, 1, 1, 2, 1), 1);  // (5 + 2) >> 2
  EXPECT_EQ(math::downsample_h2v2(1, 2, 2, 2, 1), 2);  // (7 + 2) >> 2
}

// Annex K tables have 12 DC and 162 AC symbols; derived codes must form a prefix code.
TEST(Huffman, StandardTablesAreComplete) {
  for (int t = 0; t < 2; ++t) {
    EXPECT_EQ(standard_dc_spec(t).count(), 12);
    EXPECT_EQ(standard_ac_spec(t).count(), 162);
  }
}

double kraft_sum(const HuffmanSpec& s) {
  double sum = 0;
  for (int len = 1; len <= 16; ++len) sum += s.bits[len] * std::ldexp(1.0, -len);
  return sum;
}

TEST(Huffman, OptimalTableIsLengthLimitedAndOrdered) {
  std::uint32_t freq[257] = {};
  // A skewed distribution that would need codes longer than 16 bits without limiting.
  std::uint32_t f = 1;
  for (int s = 0; s < 40; ++s) {
    freq[s] = f;
    if (f < (1u << 20)) f *= 2;  // libjpeg's merge loop ignores counts above 1e9
  }
  const HuffmanSpec spec = optimal_spec(freq);
  EXPECT_EQ(spec.count(), 40);
  EXPECT_LT(kraft_sum(spec), 1.0);  // the all-ones code stays unused
  // Most frequent symbols (20..39, all 2^20) get the shortest codes; the list is sorted by
  // length, then by value; the rarest symbol (0) comes last.
  EXPECT_EQ(spec.values[0], 20);
  EXPECT_EQ(spec.values[39], 0);
  int used = 0;
  for (int len = 1; len <= 16; ++len) used += spec.bits[len];
  EXPECT_EQ(used, 40);
}

TEST(Huffman, OptimalTableForTwoSymbols) {
  std::uint32_t freq[257] = {};
  freq[0] = 10;
  freq[5] = 3;
  const HuffmanSpec spec = optimal_spec(freq);
  // With the reserved symbol 256 (count 1): 0 gets 1 bit, 5 and 256 two bits; 256 removed.
  EXPECT_EQ(spec.bits[1], 1);
  EXPECT_EQ(spec.bits[2], 1);
  EXPECT_EQ(spec.values[0], 0);
  EXPECT_EQ(spec.values[1], 5);
}

TEST(DummyBlocks, CopyDcFromLeftAndFromRowAbove) {
  const FrameGeometry g = make_geometry(17, 9, Subsampling::s420);  // luma 3x2 real of 4x2
  std::vector<std::int16_t> coeffs(g.coefficient_count(), 7);
  // Give each real luma block a distinct DC.
  for (int by = 0; by < 2; ++by)
    for (int bx = 0; bx < 3; ++bx) coeffs[g.block_index(0, by, bx) * 64] = 100 + by * 10 + bx;
  fill_dummy_blocks(g, coeffs.data());
  for (int by = 0; by < 2; ++by) {
    const std::int16_t* dummy = &coeffs[g.block_index(0, by, 3) * 64];
    EXPECT_EQ(dummy[0], 100 + by * 10 + 2);
    for (int k = 1; k < 64; ++k) EXPECT_EQ(dummy[k], 0);
  }
  // 16x17 in 4:2:0: 17 luma rows -> 3 real block rows of the 4 that two MCU rows hold.
  const FrameGeometry g2 = make_geometry(16, 17, Subsampling::s420);
  ASSERT_EQ(g2.comp[0].height_in_blocks, 3);
  ASSERT_EQ(g2.comp[0].blocks_h, 4);
  std::vector<std::int16_t> c2(g2.coefficient_count(), 5);
  c2[g2.block_index(0, 2, 0) * 64] = 40;
  c2[g2.block_index(0, 2, 1) * 64] = 41;
  fill_dummy_blocks(g2, c2.data());
  EXPECT_EQ(c2[g2.block_index(0, 3, 0) * 64], 41);  // last block of the row above in the MCU
  EXPECT_EQ(c2[g2.block_index(0, 3, 1) * 64], 41);
  EXPECT_EQ(c2[g2.block_index(0, 3, 1) * 64 + 1], 0);
}

TEST(Encoder, RejectsInvalidOptions) {
  std::vector<std::uint8_t> px(3 * 4 * 4, 128);
  const ImageView view{px.data(), 4, 4, PixelFormat::rgb24, 12};
  EncodeOptions o;
  o.quality = 0;
  EXPECT_THROW(encode_jpeg(view, o), UsageError);
  o.quality = 101;
  EXPECT_THROW(encode_jpeg(view, o), UsageError);
  o.quality = 90;
  o.restart_interval = -1;
  EXPECT_THROW(encode_jpeg(view, o), UsageError);
  o.restart_interval = 65536;
  EXPECT_THROW(encode_jpeg(view, o), UsageError);
  EXPECT_THROW(parse_subsampling("411"), UsageError);
  EXPECT_EQ(parse_subsampling("gray"), Subsampling::gray);
}

TEST(Encoder, WritesMarkersInLibjpegOrder) {
  std::vector<std::uint8_t> px(3 * 16 * 16, 90);
  const ImageView view{px.data(), 16, 16, PixelFormat::rgb24, 48};
  EncodeOptions o;
  o.restart_interval = 1;
  const auto jpeg = encode_jpeg(view, o);
  std::vector<int> markers;
  for (std::size_t i = 2; i + 3 < jpeg.size();) {  // walk the segments up to SOS
    ASSERT_EQ(jpeg[i], 0xFF);
    markers.push_back(jpeg[i + 1]);
    if (jpeg[i + 1] == 0xDA) break;
    i += 2 + (jpeg[i + 2] << 8 | jpeg[i + 3]);
  }
  const std::vector<int> expected = {0xE0, 0xDB, 0xDB, 0xC0, 0xC4, 0xC4, 0xC4, 0xC4, 0xDD, 0xDA};
  EXPECT_EQ(markers, expected);
  EXPECT_EQ(jpeg[0], 0xFF);
  EXPECT_EQ(jpeg[1], 0xD8);
  EXPECT_EQ(jpeg[jpeg.size() - 2], 0xFF);
  EXPECT_EQ(jpeg[jpeg.size() - 1], 0xD9);
}

}  // namespace
}  // namespace mjpeg
