// The Huffman tables and the Huffman coder (src/jpeg/huffman.hpp): the Annex K tables,
// optimal_spec against libjpeg's jpeg_gen_optimal_table, and every instruction-set variant of
// the coefficient coder against the plain reference coder of common/reference_coder.hpp
// (serial and on several threads; its symbol statistics too). The same coders against libjpeg's
// own bytes: test_token_coder.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/oracle.hpp"
#include "common/reference_coder.hpp"
#include "common/variants.hpp"
#include "core/geometry.hpp"
#include "jpeg/huffman.hpp"
#include "mjpeg/error.hpp"
#include "mjpeg/options.hpp"

namespace mjpeg {
namespace {

using test::edge_case_coefficients;
using test::reference_scan;

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
// The Huffman coder's instruction-set variants against the plain bit-at-a-time reference coder
// (common/reference_coder.hpp) on its edge-case coefficients.
// ---------------------------------------------------------------------------------------------
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

}  // namespace
}  // namespace mjpeg
