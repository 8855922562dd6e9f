// Unit tests of the core's building blocks: geometry, quantization, FDCT, Huffman tables,
// dummy blocks. The byte-exactness matrix against libjpeg-turbo is in test_exactness.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/geometry.hpp"
#include "jpeg/huffman.hpp"
#include "core/quant.hpp"
#include "jpeg/tokens.hpp"
#include "jpeg/transform_cpu.hpp"
#include "core/jpeg_math.hpp"
#include "common/oracle.hpp"
#include "common/variants.hpp"
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

// The integer DCT is libjpeg's jpeg_fdct_islow, bit for bit (the library's own function, in
// process): random blocks, and blocks that drive each coefficient to its extremes (0/255 on the
// basis function's sign, and the inverse), flat black and white, checkers.
TEST(Fdct, EqualsLibjpegsIslowBitForBit) {
  std::vector<std::array<int, 64>> blocks;
  std::uint32_t state = 7;
  for (int trial = 0; trial < 20000; ++trial) {
    std::array<int, 64> b{};
    const int range = trial % 3 == 0 ? 256 : trial % 3 == 1 ? 16 : 2;  // noise, small, binary
    for (int& v : b) {
      state ^= state << 13;
      state ^= state >> 17;
      state ^= state << 5;
      v = range == 2 ? ((state & 1) ? 127 : -128) : static_cast<int>(state % range) - range / 2;
    }
    blocks.push_back(b);
  }
  for (int f = 0; f < 64; ++f)
    for (bool inverse : {false, true}) {
      std::array<int, 64> b{};
      for (int y = 0; y < 8; ++y)
        for (int x = 0; x < 8; ++x) {
          const double basis = std::cos((2 * x + 1) * (f % 8) * M_PI / 16) *
                               std::cos((2 * y + 1) * (f / 8) * M_PI / 16);
          b[y * 8 + x] = (basis > 0) != inverse ? 127 : -128;
        }
      blocks.push_back(b);
    }
  for (int v : {-128, 127}) {
    std::array<int, 64> b;
    b.fill(v);
    blocks.push_back(b);
    for (int i = 0; i < 64; ++i) b[i] = ((i / 8 + i % 8) & 1) ? v : -1 - v;
    blocks.push_back(b);
  }
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    int want[64];
    test::libjpeg_fdct_islow(blocks[k].data(), want);
    std::int32_t got[64];
    std::copy(blocks[k].begin(), blocks[k].end(), got);
    math::fdct_islow(got);
    for (int i = 0; i < 64; ++i) ASSERT_EQ(got[i], want[i]) << "block " << k << ", coefficient " << i;
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

// optimal_spec is libjpeg's jpeg_gen_optimal_table (the library's own function, in process)
// for any counts: ties (which decide the code lengths), deep trees and counts above 1e9 (which
// libjpeg never merges) included.
TEST(Huffman, OptimalTableEqualsLibjpegsOnTiesAndHugeCounts) {
  std::uint32_t state = 2463534242u;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
  };
  for (int trial = 0; trial < 400; ++trial) {
    std::uint32_t freq[257] = {};
    const int kind = trial % 4;
    const int used = 1 + static_cast<int>(next() % 256);
    for (int k = 0; k < used; ++k) {
      const int sym = static_cast<int>(next() % 256);
      switch (kind) {
        case 0: freq[sym] = 1 + next() % 3; break;               // many ties
        case 1: freq[sym] = 1u << (next() % 24); break;           // powers of two: deep trees
        case 2: freq[sym] = next() % 4 ? 1 + next() % 5 : 900000000u + next() % 300000000u; break;
        default: freq[sym] = next() % 100000; break;              // zeros too
      }
    }
    HuffmanSpec want;
    test::libjpeg_optimal_table(freq, want.bits, want.values);
    std::uint32_t b[257];
    std::copy(freq, freq + 257, b);
    const HuffmanSpec got = optimal_spec(b);
    ASSERT_TRUE(std::equal(want.bits + 1, want.bits + 17, got.bits + 1)) << "trial " << trial;
    ASSERT_TRUE(std::equal(want.values, want.values + want.count(), got.values)) << "trial " << trial;
  }
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

// ---------------------------------------------------------------------------------------------
// The Huffman coder's instruction-set variants against a plain bit-at-a-time reference coder
// (T.81 F.1.2, written for clarity), on synthetic coefficients that reach the edge cases:
// zero runs of 16..62 (ZRL codes), a nonzero coefficient 63 (no EOB), full blocks, empty
// blocks, extreme values (categories 10 for AC, 11 for DC), 0xFF bytes (stuffing), restarts.
// ---------------------------------------------------------------------------------------------
class ReferenceBits {
 public:
  void put(std::uint32_t value, int n) {
    for (int i = n - 1; i >= 0; --i) bit((value >> i) & 1);
  }
  void pad() {
    while (used_) bit(1);
  }
  void marker(int code) {
    out.push_back(0xFF);
    out.push_back(static_cast<std::uint8_t>(code));
  }
  std::vector<std::uint8_t> out;

 private:
  void bit(std::uint32_t b) {
    byte_ = (byte_ << 1) | b;
    if (++used_ == 8) {
      out.push_back(static_cast<std::uint8_t>(byte_));
      if (byte_ == 0xFF) out.push_back(0x00);
      byte_ = 0;
      used_ = 0;
    }
  }
  std::uint32_t byte_ = 0;
  int used_ = 0;
};

struct ReferenceCodes {
  std::uint32_t code[256] = {};
  int size[256] = {};
  explicit ReferenceCodes(const HuffmanSpec& spec) {
    std::uint32_t c = 0;
    int k = 0;
    for (int len = 1; len <= 16; ++len, c <<= 1)
      for (int i = 0; i < spec.bits[len]; ++i, ++k, ++c) {
        code[spec.values[k]] = c;
        size[spec.values[k]] = len;
      }
  }
  void put(ReferenceBits& w, int symbol) const {
    ASSERT_GT(size[symbol], 0) << "symbol " << symbol << " missing from the table";
    w.put(code[symbol], size[symbol]);
  }
};

int magnitude_bits(int v) {
  int n = 0;
  for (int a = std::abs(v); a; a >>= 1) ++n;
  return n;
}

void reference_value(ReferenceBits& w, int v, int n) {
  w.put(static_cast<std::uint32_t>(v < 0 ? v - 1 : v) & ((1u << n) - 1), n);
}

std::vector<std::uint8_t> reference_scan(const FrameGeometry& g, const std::int16_t* coeffs,
                                         int restart_interval, const HuffmanTables& tables) {
  ReferenceBits w;
  const ReferenceCodes dc[2] = {ReferenceCodes(tables.dc[0]), ReferenceCodes(tables.dc[1])};
  const ReferenceCodes ac[2] = {ReferenceCodes(tables.ac[0]), ReferenceCodes(tables.ac[1])};
  int last_dc[kMaxComponents] = {};
  int mcu = 0;
  for (int my = 0; my < g.mcus_y; ++my)
    for (int mx = 0; mx < g.mcus_x; ++mx, ++mcu) {
      if (restart_interval && mcu && mcu % restart_interval == 0) {
        w.pad();
        w.marker(0xD0 + (mcu / restart_interval - 1) % 8);
        std::fill(last_dc, last_dc + kMaxComponents, 0);
      }
      for (int c = 0; c < g.num_components; ++c)
        for (int yy = 0; yy < g.comp[c].v; ++yy)
          for (int xx = 0; xx < g.comp[c].h; ++xx) {
            const std::int16_t* b =
                coeffs + g.block_index(c, my * g.comp[c].v + yy, mx * g.comp[c].h + xx) * kBlockSize;
            const int t = c == 0 ? 0 : 1;
            const int diff = b[0] - last_dc[c];
            last_dc[c] = b[0];
            dc[t].put(w, magnitude_bits(diff));
            reference_value(w, diff, magnitude_bits(diff));
            int run = 0;
            for (int k = 1; k < 64; ++k) {
              if (b[k] == 0) {
                ++run;
                continue;
              }
              for (; run >= 16; run -= 16) ac[t].put(w, 0xF0);
              ac[t].put(w, (run << 4) | magnitude_bits(b[k]));
              reference_value(w, b[k], magnitude_bits(b[k]));
              run = 0;
            }
            if (run) ac[t].put(w, 0x00);
          }
    }
  w.pad();
  return w.out;
}

/// Coefficients of every kind of block, deterministic (xorshift).
std::vector<std::int16_t> edge_case_coefficients(const FrameGeometry& g) {
  std::vector<std::int16_t> c(g.coefficient_count());
  std::uint32_t state = 12345;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
  };
  for (std::size_t b = 0; b < g.total_blocks; ++b) {
    std::int16_t* blk = c.data() + b * kBlockSize;
    blk[0] = static_cast<std::int16_t>(static_cast<int>(next() % 2048) - 1024);  // DC diffs to cat 11
    const int kind = static_cast<int>(next() % 8);
    auto value = [&] {  // mostly small, sometimes up to +-1023 (category 10)
      const int mag = next() % 8 == 0 ? 1 + next() % 1023 : 1 + next() % 7;
      return static_cast<std::int16_t>(next() & 1 ? mag : -mag);
    };
    switch (kind) {
      case 0:  // empty
        break;
      case 1:  // full
        for (int k = 1; k < 64; ++k) blk[k] = value();
        break;
      case 2:  // long runs, ZRL codes (runs 16..62)
        blk[1 + next() % 3] = value();
        blk[20 + next() % 10] = value();
        blk[63] = next() & 1 ? value() : 0;
        break;
      case 3:  // only coefficient 63 (run 62: three ZRLs, no EOB)
        blk[63] = value();
        break;
      case 4:  // run of exactly 16 and 32
        blk[17] = value();
        blk[50] = value();
        break;
      default:  // random density
        for (int k = 1; k < 64; ++k)
          if (next() % 64 < static_cast<std::uint32_t>(8 * kind)) blk[k] = value();
        break;
    }
  }
  return c;
}

TEST(Huffman, VariantListsAgree) {
  const std::vector<std::string> variants = huffman_variants();
  ASSERT_FALSE(variants.empty());
  EXPECT_EQ(variants.back(), "generic");
  EXPECT_EQ(variants.front(), huffman_variant());
  // The variants this CPU runs are those of the build that it can run, in the same order.
  std::vector<std::string> runnable;
  for (const std::string& v : built_huffman_variants())
    if (std::find(variants.begin(), variants.end(), v) != variants.end()) runnable.push_back(v);
  EXPECT_EQ(runnable, variants);
  std::vector<std::uint8_t> unused;
  EXPECT_THROW(encode_scan("no-such-variant", make_geometry(8, 8, Subsampling::gray), nullptr, 0,
                           HuffmanTables{}, unused),
               Error);
}

/// Every Huffman coder variant compiled into the build (one this CPU cannot run is reported
/// as skipped, by name) against the reference coder; its symbol statistics against the
/// generic variant's.
class EachHuffmanVariant : public ::testing::TestWithParam<std::string> {};

TEST_P(EachHuffmanVariant, MatchesTheReferenceCoder) {
  const std::string& v = GetParam();
  MJPEG_NEED_VARIANT("Huffman coder", v, huffman_variants());
  for (Subsampling s : {Subsampling::s420, Subsampling::s422, Subsampling::s444, Subsampling::gray}) {
    const FrameGeometry g = make_geometry(200, 72, s);
    const std::vector<std::int16_t> coeffs = edge_case_coefficients(g);
    for (int restart : {0, 1, 7}) {
      // Symbol statistics (--optimize's first pass) agree with the plain C++ variant's.
      HuffmanStats reference_stats, stats;
      gather_stats("generic", g, coeffs.data(), restart, reference_stats);
      gather_stats(v, g, coeffs.data(), restart, stats);
      EXPECT_GT(stats.ac[0][0xF0], 0u);  // the data has ZRL codes
      for (int t = 0; t < 2; ++t) {
        EXPECT_TRUE(std::equal(stats.dc[t], stats.dc[t] + 257, reference_stats.dc[t]));
        EXPECT_TRUE(std::equal(stats.ac[t], stats.ac[t] + 257, reference_stats.ac[t]));
      }
      for (bool optimize : {false, true}) {
        SCOPED_TRACE(to_string(s) + (optimize ? " optimize" : " standard") + " restart " +
                     std::to_string(restart));
        HuffmanTables tables;
        const int table_count = g.num_components == 1 ? 1 : 2;
        for (int t = 0; t < table_count; ++t) {
          HuffmanStats counts = reference_stats;  // optimal_spec consumes its input
          tables.dc[t] = optimize ? optimal_spec(counts.dc[t]) : standard_dc_spec(t);
          tables.ac[t] = optimize ? optimal_spec(counts.ac[t]) : standard_ac_spec(t);
        }
        if (table_count == 1) tables.dc[1] = tables.dc[0], tables.ac[1] = tables.ac[0];
        const std::vector<std::uint8_t> expected = reference_scan(g, coeffs.data(), restart, tables);
        const std::uint8_t stuffed[2] = {0xFF, 0x00};
        EXPECT_NE(std::search(expected.begin(), expected.end(), stuffed, stuffed + 2), expected.end());
        std::vector<std::uint8_t> out = {0x12, 0x34};  // encode_scan appends
        encode_scan(v, g, coeffs.data(), restart, tables, out);
        ASSERT_EQ(out.size(), expected.size() + 2);
        EXPECT_TRUE(std::equal(expected.begin(), expected.end(), out.begin() + 2));
        // Cut into MCU-row ranges on several threads (up to one per row) and joined: the
        // same bytes; the statistics counted in parts add up to the same counts.
        for (int threads : {2, 3, 5, 9, 100}) {
          std::vector<std::uint8_t> par = {0x56};
          encode_scan_parallel(g, coeffs.data(), restart, tables, threads, par, v);
          ASSERT_EQ(par.size(), expected.size() + 1) << v << " threads " << threads;
          EXPECT_TRUE(std::equal(expected.begin(), expected.end(), par.begin() + 1))
              << v << " threads " << threads;
          HuffmanStats counted;
          gather_stats_parallel(g, coeffs.data(), restart, threads, counted, v);
          for (int t = 0; t < 2; ++t) {
            EXPECT_TRUE(std::equal(counted.dc[t], counted.dc[t] + 257, reference_stats.dc[t]));
            EXPECT_TRUE(std::equal(counted.ac[t], counted.ac[t] + 257, reference_stats.ac[t]));
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Built, EachHuffmanVariant, ::testing::ValuesIn(built_huffman_variants()),
                         [](const auto& info) { return info.param; });

// ---------------------------------------------------------------------------------------------
// The token stream (src/core/token_format.hpp) and the token coder: the CPU tokenizer's histogram
// equals gather_stats, and every token-coder variant writes exactly the reference coder's bytes
// on the same edge-case coefficients (escapes: DC categories 9..11 and AC 9..10; ZRLs;
// coefficient 63 without EOB; 0xFF stuffing; restarts; optimal tables).
// ---------------------------------------------------------------------------------------------
TEST(Tokens, EveryCoderVariantMatchesTheReferenceCoder) {
  const std::vector<std::string> variants = token_coder_variants();
  ASSERT_FALSE(variants.empty());
  EXPECT_EQ(variants.back(), "generic");
  EXPECT_EQ(variants.front(), token_coder_variant());
  for (Subsampling s : {Subsampling::s420, Subsampling::s422, Subsampling::s444, Subsampling::gray}) {
    for (const auto& [w, h] : {std::pair{200, 72}, std::pair{17, 9}, std::pair{8, 8}, std::pair{1, 1},
                               std::pair{64, 300}}) {
      const FrameGeometry g = make_geometry(w, h, s);
      const std::vector<std::int16_t> coeffs = edge_case_coefficients(g);
      for (int restart : {0, 1, 7, 8, 65535}) {
        TokenBuffer tokens;
        tokenize(g, coeffs.data(), restart, true, tokens);
        HuffmanStats expected_stats;
        gather_stats(g, coeffs.data(), restart, expected_stats);
        const HuffmanStats got_stats = stats_from_histogram(tokens.histogram.data());
        for (int t = 0; t < 2; ++t) {
          EXPECT_TRUE(std::equal(got_stats.dc[t], got_stats.dc[t] + 257, expected_stats.dc[t]));
          EXPECT_TRUE(std::equal(got_stats.ac[t], got_stats.ac[t] + 257, expected_stats.ac[t]));
        }
        ASSERT_EQ(tokens.row_start.size(), static_cast<std::size_t>(g.mcus_y) + 1);
        EXPECT_EQ(tokens.row_start.front(), 0u);
        EXPECT_EQ(tokens.row_start.back(), tokens.slots.size());
        EXPECT_TRUE(std::is_sorted(tokens.row_start.begin(), tokens.row_start.end()));
        for (bool optimize : {false, true}) {
          SCOPED_TRACE(to_string(s) + " " + std::to_string(w) + "x" + std::to_string(h) +
                       (optimize ? " optimize" : " standard") + " restart " + std::to_string(restart));
          HuffmanTables tables;
          const int table_count = g.num_components == 1 ? 1 : 2;
          for (int t = 0; t < table_count; ++t) {
            HuffmanStats counts = expected_stats;
            tables.dc[t] = optimize ? optimal_spec(counts.dc[t]) : standard_dc_spec(t);
            tables.ac[t] = optimize ? optimal_spec(counts.ac[t]) : standard_ac_spec(t);
          }
          if (table_count == 1) tables.dc[1] = tables.dc[0], tables.ac[1] = tables.ac[0];
          const std::vector<std::uint8_t> expected = reference_scan(g, coeffs.data(), restart, tables);
          for (const std::string& v : variants) {
            std::vector<std::uint8_t> out = {0x12, 0x34};  // encode_token_scan appends
            encode_token_scan(g, restart, tokens.view(), tables, out, v);
            ASSERT_EQ(out.size(), expected.size() + 2) << v;
            EXPECT_TRUE(std::equal(expected.begin(), expected.end(), out.begin() + 2)) << v;
            // Cut into MCU-row ranges coded on several threads and joined: the same bytes.
            for (int threads : {2, 3, 8}) {
              std::vector<std::uint8_t> par = {0x56};
              encode_token_scan_parallel(g, restart, tokens.view(), tables, threads, par, v);
              ASSERT_EQ(par.size(), expected.size() + 1) << v << " threads " << threads;
              EXPECT_TRUE(std::equal(expected.begin(), expected.end(), par.begin() + 1))
                  << v << " threads " << threads;
            }
          }
        }
      }
    }
  }
}

// A second, bit-by-bit reading of the token format (core/token_format.hpp) on the reference bit
// writer: what the coder must write for any well-formed slot sequence, also ones no image gives.
std::vector<std::uint8_t> reference_token_scan(const std::vector<std::uint16_t>& slots,
                                               const HuffmanTables& tables) {
  ReferenceBits w;
  const ReferenceCodes dc[2] = {ReferenceCodes(tables.dc[0]), ReferenceCodes(tables.dc[1])};
  const ReferenceCodes ac[2] = {ReferenceCodes(tables.ac[0]), ReferenceCodes(tables.ac[1])};
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const int sym = slots[i] & 0xFF;
    const int cls = slots[i] >> 8 & 1;
    if (sym == 0x0D) {  // restart marker
      w.pad();
      w.marker(0xD0 + (slots[i] >> 9 & 7));
      continue;
    }
    const bool is_dc = (sym & 15) == 0x0B;
    const int size = is_dc ? sym >> 4 : sym & 15;
    (is_dc ? dc : ac)[cls].put(w, is_dc ? size : sym);
    const std::uint32_t bits = size > 7 ? slots[++i] : static_cast<std::uint32_t>(slots[i] >> 9);
    w.put(bits & ((1u << size) - 1u), size);
  }
  w.pad();
  return w.out;
}

// Slot sequences made to produce 0xFF bytes: symbols with long codes of mostly 1-bits (the
// Annex K tables' long AC codes are 0xFF80 and up; DC size 11 is 111111110) with all-ones value
// bits, mixed with short symbols so that the 0xFF bytes fall at every byte of the 8-byte stores,
// in runs, right before restart markers (whose padding is 1-bits) and at the scan's end. Every
// variant, and the scan cut into ranges joined on threads, must write the reference's bytes;
// the coverage checks at the end make sure the data did exercise those cases.
TEST(Tokens, StuffingHeavyStreamsMatchTheReferenceCoder) {
  HuffmanTables tables;
  for (int t = 0; t < 2; ++t) tables.dc[t] = standard_dc_spec(t), tables.ac[t] = standard_ac_spec(t);
  std::uint32_t state = 987654321;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
  };
  using namespace tokens;
  auto value_slot = [&](std::vector<std::uint16_t>& s, std::uint32_t symbol, int cls, int size) {
    const std::uint32_t bits = next() % 8 ? (1u << size) - 1u : next() & ((1u << size) - 1u);
    if (size > kInlineValueBits) {
      s.push_back(slot(symbol, cls, 0));
      s.push_back(static_cast<std::uint16_t>(bits));
    } else {
      s.push_back(slot(symbol, cls, bits));
    }
  };
  bool ff_at[8] = {};  // a 0xFF byte at each offset modulo 8 of the scan
  bool ff_run = false, ff_before_marker = false, ff_at_end = false;
  std::size_t ff_bytes = 0, all_bytes = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int rows = 1 + trial % 5;
    const int per_row = 1 + static_cast<int>(next() % 300);
    const bool markers = trial % 3 == 1;
    std::vector<std::uint16_t> slots;
    std::vector<std::uint32_t> row_start;
    int restart_index = 0;
    for (int r = 0; r < rows; ++r) {
      if (markers && r > 0) slots.push_back(slot(kRestart, 0, restart_index++ & 7));
      row_start.push_back(static_cast<std::uint32_t>(slots.size()) - (markers && r > 0 ? 1 : 0));
      for (int k = 0; k < per_row; ++k) {
        const int cls = static_cast<int>(next() % 2);
        switch (next() % 6) {
          case 0: {  // DC of size 0..8, or 9..11 (escape), mostly all-ones bits
            const int size = static_cast<int>(next() % 12);
            value_slot(slots, dc_symbol(size), cls, size);
            break;
          }
          case 1:
          case 2: {  // long AC codes: run 8..15, size 1..10 (escapes for 8..10)
            const int run = 8 + static_cast<int>(next() % 8);
            const int size = 1 + static_cast<int>(next() % 10);
            value_slot(slots, static_cast<std::uint32_t>(run << 4 | size), cls, size);
            break;
          }
          case 3: {  // run 0, size 5..7: 11010 .. 1111000 then all-ones bits
            const int size = 5 + static_cast<int>(next() % 3);
            value_slot(slots, static_cast<std::uint32_t>(size), cls, size);
            break;
          }
          case 4:  // short codes that shift the alignment
            if (next() % 2)
              slots.push_back(slot(kEob, cls, 0));
            else
              slots.push_back(slot(0x01, cls, next() & 1));
            break;
          default:
            slots.push_back(slot(kZrl, cls, 0));
            break;
        }
      }
    }
    row_start.push_back(static_cast<std::uint32_t>(slots.size()));
    const std::vector<std::uint8_t> expected = reference_token_scan(slots, tables);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      if (expected[i] != 0xFF || i + 1 >= expected.size() || expected[i + 1] != 0x00) continue;
      ++ff_bytes;
      ff_at[i % 8] = true;
      if (i + 3 < expected.size() && expected[i + 2] == 0xFF && expected[i + 3] == 0x00) ff_run = true;
      if (i + 3 < expected.size() && expected[i + 2] == 0xFF && (expected[i + 3] & 0xF8) == 0xD0)
        ff_before_marker = true;
      if (i + 2 == expected.size()) ff_at_end = true;
    }
    all_bytes += expected.size();
    TokenView view;
    view.slots = slots.data();
    view.count = slots.size();
    view.row_start = row_start.data();
    view.rows = rows;
    // One MCU per row (the slots name their classes and carry their markers themselves).
    const FrameGeometry column = make_geometry(8, 8 * rows, Subsampling::gray);
    for (const std::string& v : token_coder_variants()) {
      SCOPED_TRACE("trial " + std::to_string(trial) + " variant " + v);
      std::vector<std::uint8_t> out = {0x12};  // appended after what is there
      encode_token_scan(column, 0, view, tables, out, v);
      ASSERT_EQ(out.size(), expected.size() + 1);
      EXPECT_TRUE(std::equal(expected.begin(), expected.end(), out.begin() + 1));
      // Ranges start at the rows (each after a marker, when there are markers: restart
      // interval 1 with one MCU per row).
      for (int threads : {2, 3, 5}) {
        std::vector<std::uint8_t> par(7, 0x34);
        encode_token_scan_parallel(column, markers ? 1 : 0, view, tables, threads, par, v);
        ASSERT_EQ(par.size(), expected.size() + 7) << threads << " threads";
        EXPECT_TRUE(std::equal(expected.begin(), expected.end(), par.begin() + 7)) << threads;
      }
    }
  }
  for (int k = 0; k < 8; ++k) EXPECT_TRUE(ff_at[k]) << "no stuffed 0xFF at offset " << k << " mod 8";
  EXPECT_TRUE(ff_run);
  EXPECT_TRUE(ff_before_marker);
  EXPECT_TRUE(ff_at_end);
  EXPECT_GT(ff_bytes * 20, all_bytes);  // over 5% of the bytes are stuffed 0xFFs
}

// The hot loop stores up to 8 whole bytes at once (a pending 7 bits and a group of four slots
// of 57 bits); a 0xFF as the 8th byte of such a word must be stuffed too. Made by hand: four
// slots that leave 7 bits pending, then four of 57 bits whose last 8 bits are ones.
TEST(Tokens, AFullWordEndingInFFIsStuffed) {
  HuffmanTables tables;
  for (int t = 0; t < 2; ++t) tables.dc[t] = standard_dc_spec(t), tables.ac[t] = standard_ac_spec(t);
  const ReferenceCodes ac(tables.ac[0]);
  using namespace tokens;
  struct Sym {
    std::uint32_t symbol;
    int length;  // code + value bits
    bool ones_tail;  // with all-ones value bits, the last 8 bits are ones
  };
  std::vector<Sym> syms;
  for (int run = 0; run < 16; ++run)
    for (int size = 1; size <= kInlineValueBits; ++size) {
      const int s = run << 4 | size;
      if (!ac.size[s]) continue;
      const std::uint32_t tail_mask = (1u << (8 - size)) - 1u;
      syms.push_back({static_cast<std::uint32_t>(s), ac.size[s] + size,
                      ac.size[s] + size >= 8 && (ac.code[s] & tail_mask) == tail_mask});
    }
  // A symbol's bits with all-ones value bits.
  auto bits = [&](const Sym& s) {
    const int size = static_cast<int>(s.symbol & 15);
    return std::uint64_t{ac.code[s.symbol]} << size | ((1u << size) - 1u);
  };
  auto join = [&](const Sym& a, const Sym& b, const Sym& c, const Sym& d) {
    return ((bits(a) << b.length | bits(b)) << c.length | bits(c)) << d.length | bits(d);
  };
  std::vector<Sym> first, second;
  for (const Sym& a : syms)  // 4 slots, at most 57 bits, 7 of them left pending
    for (const Sym& b : syms)
      for (const Sym& c : syms)
        for (const Sym& d : syms)
          if (first.empty() && a.length + b.length + c.length + d.length <= 57 &&
              (a.length + b.length + c.length + d.length) % 8 == 7)
            first = {a, b, c, d};
  ASSERT_EQ(first.size(), 4u);
  const std::uint64_t pending = join(first[0], first[1], first[2], first[3]) & 0x7F;
  // Then 57 bits whose word (the 7 pending bits first) has its only 0xFF in the last byte.
  for (const Sym& d : syms) {
    if (!d.ones_tail || !second.empty()) continue;
    for (const Sym& c : syms)
      for (const Sym& b : syms)
        for (const Sym& a : syms) {
          if (!second.empty() || a.length + b.length + c.length + d.length != 57 ||
              a.length + b.length > 46 || c.length + d.length > 46)
            continue;
          const std::uint64_t word = pending << 57 | join(a, b, c, d);
          bool other_ff = false;
          for (int k = 1; k < 8; ++k) other_ff = other_ff || (word >> (8 * k) & 0xFF) == 0xFF;
          if ((word & 0xFF) == 0xFF && !other_ff) second = {a, b, c, d};
        }
  }
  ASSERT_EQ(second.size(), 4u);
  std::vector<std::uint16_t> slots;
  for (const std::vector<Sym>* group : {&first, &second})
    for (const Sym& s : *group)
      slots.push_back(slot(s.symbol, 0, (1u << (s.symbol & 15)) - 1u));
  slots.push_back(slot(kEob, 0, 0));
  const std::vector<std::uint8_t> expected = reference_token_scan(slots, tables);
  const int total = [&] {
    int n = 4;  // EOB
    for (const std::vector<Sym>* group : {&first, &second})
      for (const Sym& s : *group) n += s.length;
    return n;
  }();
  ASSERT_EQ((first[0].length + first[1].length + first[2].length + first[3].length + 57) % 8, 0);
  const std::size_t word_end = static_cast<std::size_t>(total - 4) / 8 - 1;  // the 8th byte
  ASSERT_LT(word_end + 1, expected.size());
  // Where the 8th byte lies in the stuffed output: after the stuffed zeros before it.
  std::size_t pos = 0;
  for (std::size_t b = 0; b < word_end; ++b) pos += expected[pos] == 0xFF ? 2 : 1;
  EXPECT_EQ(expected[pos], 0xFF);
  EXPECT_EQ(expected[pos + 1], 0x00);
  for (const std::string& v : token_coder_variants()) {
    TokenView view;
    view.slots = slots.data();
    view.count = slots.size();
    std::vector<std::uint8_t> out;
    encode_token_scan(make_geometry(8, 8, Subsampling::gray), 0, view, tables, out, v);
    EXPECT_EQ(out, expected) << v;
  }
}

TEST(Tokens, EscapesZrlAndMarkersAreWhereTheFormatSays) {
  // One 4:4:4 MCU row of 3 blocks... coded by hand: DC 300 (size 9: escape slot), AC +1 at
  // zigzag 1, -700 at zigzag 40 (run 38: two ZRLs, size 10: escape), then EOB.
  const FrameGeometry g = make_geometry(8, 8, Subsampling::s444);
  std::vector<std::int16_t> c(g.coefficient_count(), 0);
  c[0] = 300;
  c[1] = 1;
  c[40] = -700;
  TokenBuffer t;
  tokenize(g, c.data(), 0, false, t);
  using namespace tokens;
  const std::vector<std::uint16_t> luma = {
      slot(dc_symbol(9), 0, 0), 300,                  // DC diff 300, size 9, escape
      slot(0x01, 0, 1),                               // run 0 size 1, value 1
      slot(kZrl, 0, 0), slot(kZrl, 0, 0),             // 32 of the 38 zeros
      slot(0x6A, 0, 0), static_cast<std::uint16_t>(value_bits(-700, 10)),  // run 6 size 10, escape
      slot(kEob, 0, 0)};
  ASSERT_EQ(t.slots.size(), luma.size() + 4);
  EXPECT_TRUE(std::equal(luma.begin(), luma.end(), t.slots.begin()));
  // The chroma blocks: DC 0 (size 0) and EOB each, in class 1.
  EXPECT_EQ(t.slots[luma.size()], slot(dc_symbol(0), 1, 0));
  EXPECT_EQ(t.slots[luma.size() + 1], slot(kEob, 1, 0));
  EXPECT_EQ(t.slots[luma.size() + 3], slot(kEob, 1, 0));
  EXPECT_TRUE(t.histogram.empty());
  // Restart interval 1 on a 2-MCU gray frame: a marker slot before the second MCU's DC.
  const FrameGeometry g2 = make_geometry(16, 8, Subsampling::gray);
  std::vector<std::int16_t> c2(g2.coefficient_count(), 0);
  c2[64] = 5;
  tokenize(g2, c2.data(), 1, false, t);
  const std::vector<std::uint16_t> gray = {slot(dc_symbol(0), 0, 0), slot(kEob, 0, 0),
                                           slot(kRestart, 0, 0), slot(dc_symbol(3), 0, 5),
                                           slot(kEob, 0, 0)};
  EXPECT_EQ(t.slots, gray);
}

TEST(Tokens, MalformedStreamsAreErrors) {
  HuffmanTables tables;
  for (int t = 0; t < 2; ++t) tables.dc[t] = standard_dc_spec(t), tables.ac[t] = standard_ac_spec(t);
  std::vector<std::uint8_t> out;
  const FrameGeometry one = make_geometry(8, 8, Subsampling::gray);
  auto code = [&](std::vector<std::uint16_t> slots) {
    TokenView v;
    v.slots = slots.data();
    v.count = slots.size();
    out.clear();
    encode_token_scan(one, 0, v, tables, out);
  };
  using namespace tokens;
  EXPECT_NO_THROW(code({slot(dc_symbol(0), 0, 0), slot(kEob, 0, 0)}));
  EXPECT_THROW(code({slot(dc_symbol(0), 0, 0), slot(0x1E, 0, 0)}), Error);  // size 14: no such symbol
  EXPECT_THROW(code({slot(dc_symbol(0), 0, 0), slot(0x10, 0, 0)}), Error);  // run 1 size 0: none
  EXPECT_THROW(code({slot(dc_symbol(12), 0, 0)}), Error);                   // DC size 12: none
  EXPECT_THROW(code({slot(dc_symbol(10), 1, 0)}), Error);                   // escape slot missing
  EXPECT_THROW(code({slot(kRestart, 1, 0)}), Error);                        // markers are class 0
  for (const std::string& v : token_coder_variants()) {
    std::vector<std::uint16_t> slots = {slot(dc_symbol(0), 0, 0), slot(0x1E, 0, 0)};
    TokenView view;
    view.slots = slots.data();
    view.count = slots.size();
    out = {1, 2, 3};
    EXPECT_THROW(encode_token_scan(one, 0, view, tables, out, v), Error) << v;
    EXPECT_EQ(out, (std::vector<std::uint8_t>{1, 2, 3})) << v << ": what was there is kept";
    // The error after many slots (the output has grown by then), in the hot loop's chunks.
    slots.assign(20000, slot(kEob, 0, 0));
    slots.push_back(slot(0x1E, 0, 0));
    view.slots = slots.data();
    view.count = slots.size();
    EXPECT_THROW(encode_token_scan(one, 0, view, tables, out, v), Error) << v;
    EXPECT_EQ(out, (std::vector<std::uint8_t>{1, 2, 3})) << v;
    // A marker in a scan cut into ranges as if it had no restarts: an error, not wrong bytes.
    std::vector<std::uint16_t> marked = {slot(dc_symbol(0), 0, 0), slot(kEob, 0, 0),
                                         slot(kRestart, 0, 0), slot(dc_symbol(0), 0, 0),
                                         slot(kEob, 0, 0)};
    const std::uint32_t rows[3] = {0, 2, 5};
    view.slots = marked.data();
    view.count = marked.size();
    view.row_start = rows;
    view.rows = 2;
    const FrameGeometry two = make_geometry(8, 16, Subsampling::gray);
    EXPECT_THROW(encode_token_scan_parallel(two, 0, view, tables, 2, out, v), Error) << v;
    std::vector<std::uint8_t> with_restarts;
    EXPECT_NO_THROW(encode_token_scan_parallel(two, 1, view, tables, 2, with_restarts, v)) << v;
    EXPECT_EQ(with_restarts, reference_token_scan(marked, tables)) << v;
  }
  EXPECT_THROW(encode_token_scan(one, 0, TokenView{}, tables, out, "no-such-variant"), Error);
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
