// Rate-distortion quantization (src/core/rdo.hpp, --rdo): the trellis search against an
// exhaustive search over the same choices, priced by a bit count written here from the JPEG
// rules (runs, ZRL, EOB) and the code lengths of the Annex K tables as the entropy coder
// derives them; the dead zone's rounding; the model that make_quant_tables builds.
#include <gtest/gtest.h>

#include <cstdint>
#include <algorithm>
#include <cmath>
#include <utility>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/geometry.hpp"
#include "core/jpeg_math.hpp"
#include "core/quant.hpp"
#include "core/rdo.hpp"
#include "jpeg/huffman.hpp"

namespace mjpeg {
namespace {

/// Bits of the AC symbols of a block (zigzag levels; out[0] ignored) with the code lengths of
/// `spec`: each non-zero level after `run` zeros is ZRLs for every 16 zeros, the code of
/// (run % 16, size) and size value bits; zeros after the last non-zero level are one EOB.
std::int64_t ac_bits(const std::int16_t* levels, const HuffmanSpec& spec) {
  const SymbolCodes codes = derive_codes(spec);
  std::int64_t bits = 0;
  int run = 0;
  for (int k = 1; k < 64; ++k) {
    if (levels[k] == 0) {
      ++run;
      continue;
    }
    for (; run >= 16; run -= 16) bits += codes.size[0xF0];
    int size = 0;
    for (int v = std::abs(levels[k]); v; v >>= 1) ++size;
    EXPECT_NE(codes.size[(run << 4) | size], 0) << "a symbol without a code";
    bits += codes.size[(run << 4) | size] + size;
    run = 0;
  }
  if (run > 0) bits += codes.size[0x00];
  return bits;
}

/// The search's objective for a choice of levels: squared error of the AC FDCT outputs against
/// level x step, plus lambda x bits.
std::int64_t cost(const std::int32_t* raw_zz, const std::int16_t* levels,
                  const math::QuantDivisor* div, std::int64_t lambda, const HuffmanSpec& spec) {
  std::int64_t d = 0;
  for (int k = 1; k < 64; ++k) {
    const std::int64_t e =
        raw_zz[k] - std::int64_t{levels[k]} * div[math::kZigzagToNatural[k]].step;
    d += e * e;
  }
  return d + lambda * ac_bits(levels, spec);
}

struct Block {
  std::int32_t raw[64];  // zigzag order
};

/// The least cost over every choice the search may make (each position: its nearest level,
/// the one below when that is at least 1, or 0), by enumeration.
std::int64_t least_cost(const Block& b, const math::QuantDivisor* div, std::int64_t lambda,
                        const HuffmanSpec& spec) {
  std::vector<int> where;
  std::vector<std::vector<std::int16_t>> options;
  std::int16_t levels[64] = {};
  for (int k = 1; k < 64; ++k) {
    const std::int16_t l = math::quantize(b.raw[k], div[math::kZigzagToNatural[k]]);
    if (l == 0) continue;
    const std::int16_t sign = l < 0 ? -1 : 1;
    std::vector<std::int16_t> o = {l, 0};
    if (std::abs(l) >= 2) o.push_back(static_cast<std::int16_t>(l - sign));
    where.push_back(k);
    options.push_back(o);
  }
  std::int64_t best = -1;
  std::vector<std::size_t> pick(where.size(), 0);
  for (;;) {
    for (std::size_t i = 0; i < where.size(); ++i) levels[where[i]] = options[i][pick[i]];
    const std::int64_t c = cost(b.raw, levels, div, lambda, spec);
    if (best < 0 || c < best) best = c;
    std::size_t i = 0;
    while (i < pick.size() && ++pick[i] == options[i].size()) pick[i++] = 0;
    if (i == pick.size()) break;
  }
  return best;
}

/// A block with `candidates` AC positions whose nearest level is 1..max_level (random signs)
/// and small values elsewhere (below half a step: level 0), a DC of either sign.
Block random_block(std::mt19937& rng, const math::QuantDivisor* div, int candidates,
                   int max_level) {
  Block b{};
  std::uniform_int_distribution<int> any_k(1, 63), level(1, max_level), coin(0, 1);
  std::vector<bool> chosen(64, false);
  for (int i = 0; i < candidates; ++i) chosen[any_k(rng)] = true;
  b.raw[0] = (coin(rng) ? 1 : -1) * std::uniform_int_distribution<int>(0, 8000)(rng);
  for (int k = 1; k < 64; ++k) {
    const int step = div[math::kZigzagToNatural[k]].step;
    const int sign = coin(rng) ? 1 : -1;
    if (chosen[k]) {
      // Anywhere within the level's rounding interval, its edges included.
      const int v = level(rng);
      b.raw[k] = sign * (v * step + std::uniform_int_distribution<int>(-step / 2, step / 2 - 1)(rng));
    } else {
      b.raw[k] = sign * std::uniform_int_distribution<int>(0, step / 2 - 1)(rng);
    }
  }
  return b;
}

std::vector<std::int16_t> search(const Block& b, const math::QuantDivisor* div,
                                 const math::TrellisModel& m, int comp) {
  std::vector<std::int16_t> out(64, 0x5A5A);
  math::trellis_quantize([&b](int k) { return b.raw[k]; }, div, m, comp, out.data());
  return out;
}

TEST(Trellis, FindsTheLeastCostOfEveryChoice) {
  std::mt19937 rng(12345);
  for (int quality : {10, 50, 75, 90, 100}) {
    for (Subsampling s : {Subsampling::s420, Subsampling::s444}) {
      EncodeOptions o;
      o.quality = quality;
      o.subsampling = s;
      o.rdo = Rdo::trellis;
      const QuantTables t = make_quant_tables(o, 3);
      for (int comp = 0; comp < 3; ++comp) {
        const math::QuantDivisor* div = t.component_divisor(comp);
        const HuffmanSpec& spec = standard_ac_spec(comp == 0 ? 0 : 1);
        for (int trial = 0; trial < 200; ++trial) {
          const Block b = random_block(rng, div, 1 + trial % 8, trial % 3 == 0 ? 40 : 3);
          const std::vector<std::int16_t> got = search(b, div, t.trellis, comp);
          EXPECT_EQ(got[0], b.raw[0]) << "the DC is left for trellis_dc_row";
          const std::int64_t want = least_cost(b, div, t.trellis.lambda[comp], spec);
          ASSERT_EQ(cost(b.raw, got.data(), div, t.trellis.lambda[comp], spec), want)
              << "q" << quality << " " << to_string(s) << " component " << comp << " trial "
              << trial;
        }
      }
    }
  }
}

/// The least cost over every choice by a dynamic program without any bound (each position
/// whose nearest level is not 0 may be the last non-zero one before the next, with either of
/// its non-zero options), priced by this file's bit count: for blocks with more candidates
/// than enumeration can take.
std::int64_t least_cost_by_dp(const Block& b, const math::QuantDivisor* div, std::int64_t lambda,
                              const HuffmanSpec& spec) {
  const SymbolCodes codes = derive_codes(spec);
  std::int64_t all_zero = 0;
  for (int k = 1; k < 64; ++k) all_zero += std::int64_t{b.raw[k]} * b.raw[k];
  std::vector<int> at = {0};
  std::vector<std::int64_t> best = {0};  // least cost with the last non-zero level at at[i]
  for (int k = 1; k < 64; ++k) {
    const math::QuantDivisor& d = div[math::kZigzagToNatural[k]];
    const int l = std::abs(math::quantize(b.raw[k], d));
    if (l == 0) continue;
    const std::int64_t a = std::abs(b.raw[k]);
    std::int64_t here = 0;
    bool found = false;
    for (int v = l; v >= std::max(1, l - 1); --v) {
      int size = 0;
      for (int x = v; x; x >>= 1) ++size;
      const std::int64_t e = a - std::int64_t{v} * d.step;
      for (std::size_t i = 0; i < at.size(); ++i) {
        const int run = k - at[i] - 1;
        const std::int64_t bits =
            (run / 16) * codes.size[0xF0] + codes.size[(run % 16) << 4 | size] + size;
        const std::int64_t c = best[i] + lambda * bits + e * e - a * a;
        if (!found || c < here) here = c;
        found = true;
      }
    }
    at.push_back(k);
    best.push_back(here);
  }
  std::int64_t end = 0;
  for (std::size_t i = 0; i < at.size(); ++i) {
    const std::int64_t c = best[i] + (at[i] < 63 ? lambda * codes.size[0x00] : 0);
    if (i == 0 || c < end) end = c;
  }
  return all_zero + end;
}

// Busy blocks (up to every AC position a candidate, long stretches of levels 1 and 2, where
// the search's bounds leave out the most states) against the plain dynamic program.
TEST(Trellis, BusyBlocksCostWhatThePlainDynamicProgramFinds) {
  std::mt19937 rng(2026);
  for (int quality : {20, 60, 85, 95}) {
    EncodeOptions o;
    o.quality = quality;
    o.rdo = Rdo::trellis;
    const QuantTables t = make_quant_tables(o, 3);
    for (int comp = 0; comp < 3; ++comp) {
      const math::QuantDivisor* div = t.component_divisor(comp);
      const HuffmanSpec& spec = standard_ac_spec(comp == 0 ? 0 : 1);
      for (int trial = 0; trial < 300; ++trial) {
        const Block b = random_block(rng, div, 8 + trial % 120, trial % 4 == 0 ? 30 : 2);
        const std::vector<std::int16_t> got = search(b, div, t.trellis, comp);
        ASSERT_EQ(cost(b.raw, got.data(), div, t.trellis.lambda[comp], spec),
                  least_cost_by_dp(b, div, t.trellis.lambda[comp], spec))
            << "q" << quality << " component " << comp << " trial " << trial;
      }
    }
  }
}

// Runs of 16 and more zeros (ZRL), a last level at position 63 (no EOB), the largest levels
// (q 1: up to 10 value bits), and a run of 15 then 16.
TEST(Trellis, LongRunsTheLastPositionAndTheLargestLevels) {
  EncodeOptions o;
  o.rdo = Rdo::trellis;
  for (int quality : {100, 60}) {
    o.quality = quality;
    const QuantTables t = make_quant_tables(o, 3);
    const math::QuantDivisor* div = t.component_divisor(0);
    const HuffmanSpec& spec = standard_ac_spec(0);
    const std::vector<std::vector<int>> layouts = {
        {1, 18, 40, 63}, {17, 34, 51}, {63}, {16, 32, 48, 63}, {1, 2, 3, 62, 63}};
    for (const std::vector<int>& at : layouts) {
      for (int magnitude : {1, 2, 3, 600, 1023}) {
        Block b{};
        b.raw[0] = -8000;
        for (int k : at) {
          const int step = div[math::kZigzagToNatural[k]].step;
          b.raw[k] = (k % 2 ? 1 : -1) * std::min(magnitude * step, 16000 - step);
        }
        const std::vector<std::int16_t> got = search(b, div, t.trellis, 0);
        EXPECT_EQ(cost(b.raw, got.data(), div, t.trellis.lambda[0], spec),
                  least_cost(b, div, t.trellis.lambda[0], spec))
            << "q" << quality << " magnitude " << magnitude << " last at " << at.back();
      }
    }
  }
}

TEST(Trellis, WithoutAPriceForBitsItKeepsTheNearestLevels) {
  EncodeOptions o;
  o.rdo = Rdo::trellis;
  QuantTables t = make_quant_tables(o, 3);
  t.trellis.lambda[0] = 0;
  std::mt19937 rng(7);
  const math::QuantDivisor* div = t.component_divisor(0);
  for (int trial = 0; trial < 200; ++trial) {
    const Block b = random_block(rng, div, 20, 50);
    const std::vector<std::int16_t> got = search(b, div, t.trellis, 0);
    EXPECT_EQ(got[0], b.raw[0]) << "the DC is left for trellis_dc_row";
    for (int k = 1; k < 64; ++k)
      ASSERT_EQ(got[k], math::quantize(b.raw[k], div[math::kZigzagToNatural[k]])) << k;
  }
  // At a price no level pays for, only the DC is left.
  t.trellis.lambda[0] = std::int64_t{1} << 40;
  const Block b = random_block(rng, div, 20, 50);
  const std::vector<std::int16_t> got = search(b, div, t.trellis, 0);
  EXPECT_EQ(got[0], b.raw[0]);
  for (int k = 1; k < 64; ++k) EXPECT_EQ(got[k], 0) << k;
}

TEST(Trellis, TheModelFollowsTheTablesAndTheSampling) {
  EncodeOptions o;
  o.rdo = Rdo::trellis;
  o.quality = 50;
  const QuantTables q50 = make_quant_tables(o, 3);
  o.quality = 90;
  const QuantTables q90 = make_quant_tables(o, 3);
  EXPECT_GT(q50.trellis.lambda[0], 10 * q90.trellis.lambda[0]) << "coarser steps, dearer bits";
  // Chroma errors weigh more in RGB (each 4:2:0 sample covers 4 pixels): a lower price.
  EXPECT_LT(q50.trellis.lambda[1], q50.trellis.lambda[0] / 3);
  EXPECT_LT(q50.trellis.lambda[2], q50.trellis.lambda[0] / 3);
  o.quality = 50;
  o.subsampling = Subsampling::s444;
  EXPECT_EQ(make_quant_tables(o, 3).trellis.lambda[0], q50.trellis.lambda[0]);
  EXPECT_GT(make_quant_tables(o, 3).trellis.lambda[1], q50.trellis.lambda[1]);
  // The code lengths are the Annex K tables' (EOB: 4 bits luma, 2 chroma; ZRL 11 and 10).
  EXPECT_EQ(q50.trellis.ac_bits[0][0x00], 4);
  EXPECT_EQ(q50.trellis.ac_bits[1][0x00], 2);
  EXPECT_EQ(q50.trellis.ac_bits[0][0xF0], 11);
  EXPECT_EQ(q50.trellis.ac_bits[1][0xF0], 10);
  EXPECT_EQ(q50.trellis.ac_bits[0][0x0B], math::kNoCodeBits) << "size 11 has no AC code";
  // The bits of a level after a run, and the second bound's allowance, from the codes as the
  // entropy coder derives them.
  for (int t = 0; t < 2; ++t) {
    const SymbolCodes codes = derive_codes(standard_ac_spec(t));
    const auto bits = [&codes](int run, int size) {
      return (run / 16) * codes.size[0xF0] + codes.size[(run % 16) << 4 | size] + size;
    };
    int most = 0;
    for (int size = 1; size <= 10; ++size) {
      for (int run = 0; run < 63; ++run) {
        ASSERT_EQ(q50.trellis.run_bits[t][size][run], bits(run, size)) << size << " " << run;
        for (int longer = run + 1; longer < 63; ++longer)
          most = std::max(most, bits(run, size) - bits(longer, size));
      }
    }
    EXPECT_EQ(q50.trellis.shorter_run_bits[t], most);
    EXPECT_EQ(most, 3) << "the standard tables";
  }
  // Without --rdo trellis the tables carry no model and round as libjpeg does.
  o.rdo = Rdo::off;
  const QuantTables off = make_quant_tables(o, 3);
  EXPECT_EQ(off.rdo, Rdo::off);
  EXPECT_EQ(off.divisor[0][5].half, 4 * off.natural[0][5]);
}

// --tune ssim with the trellis: the PSNR preset's tables (those fitted for nearest rounding,
// not the ones --tune psnr takes under the rdo modes), and each block's lambda scaled by its
// own contrast, floor(lambda x (E + A) / 2A), E the sum of its squared AC FDCT outputs.
std::int64_t expected_block_lambda(const Block& b, std::int64_t lambda, std::int64_t a) {
  __int128 e = 0;
  for (int k = 1; k < 64; ++k) e += static_cast<__int128>(b.raw[k]) * b.raw[k];
  return static_cast<std::int64_t>(lambda * (e + a) / (2 * a));
}

TEST(Trellis, TheSsimPresetPricesBitsByEachBlocksContrast) {
  EncodeOptions o;
  o.rdo = Rdo::trellis;
  o.quality = 80;
  o.tune = Tune::ssim;
  const QuantTables ssim = make_quant_tables(o, 3);
  o.tune = Tune::psnr;
  const QuantTables psnr = make_quant_tables(o, 3);
  o.rdo = Rdo::off;
  const QuantTables nearest = make_quant_tables(o, 3);
  o.rdo = Rdo::trellis;
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < 64; ++i)
      ASSERT_EQ(ssim.component_divisor(c)[i].step, nearest.component_divisor(c)[i].step)
          << "the PSNR preset's tables";
  EXPECT_EQ(psnr.trellis.activity, 0) << "PSNR: every block's error counts the same";
  ASSERT_EQ(ssim.trellis.activity, kTrellisActivity);
  const math::TrellisModel plain = make_trellis_model(nearest, o.subsampling);
  for (int c = 0; c < 3; ++c) EXPECT_EQ(ssim.trellis.lambda[c], plain.lambda[c]);
  // Without the trellis --tune ssim keeps its own tables.
  o.rdo = Rdo::off;
  o.tune = Tune::ssim;
  EXPECT_NE(make_quant_tables(o, 3).natural[0][10], nearest.natural[0][10]);

  // A flat block gets half the component's lambda; one with E = 3A twice it.
  Block flat{};
  EXPECT_EQ(math::block_lambda([&flat](int k) { return flat.raw[k]; }, ssim.trellis, 0),
            ssim.trellis.lambda[0] / 2);
  Block busy{};
  busy.raw[1] = 1000, busy.raw[2] = 1000, busy.raw[3] = 1000;  // E = 3 x 10^6 = 3A
  EXPECT_EQ(math::block_lambda([&busy](int k) { return busy.raw[k]; }, ssim.trellis, 0),
            2 * ssim.trellis.lambda[0]);

  // The search finds the least cost at the block's own lambda (the exhaustive search as the
  // oracle), which differs from the component's on most blocks.
  std::mt19937 rng(99);
  int differs = 0;
  for (int comp = 0; comp < 3; ++comp) {
    const math::QuantDivisor* div = ssim.component_divisor(comp);
    const HuffmanSpec& spec = standard_ac_spec(comp == 0 ? 0 : 1);
    for (int trial = 0; trial < 200; ++trial) {
      const Block b = random_block(rng, div, 1 + trial % 8, trial % 3 == 0 ? 40 : 3);
      const std::int64_t lambda =
          expected_block_lambda(b, ssim.trellis.lambda[comp], kTrellisActivity);
      ASSERT_EQ(math::block_lambda([&b](int k) { return b.raw[k]; }, ssim.trellis, comp), lambda);
      differs += lambda != ssim.trellis.lambda[comp];
      const std::vector<std::int16_t> got = search(b, div, ssim.trellis, comp);
      ASSERT_EQ(cost(b.raw, got.data(), div, lambda, spec), least_cost(b, div, lambda, spec))
          << "component " << comp << " trial " << trial;
    }
  }
  EXPECT_GT(differs, 500);

  // No overflow at the extremes: the largest lambda (16-bit tables) and FDCT outputs, through
  // the generic sum (the kernels') and the one over an int16 block (the CPU transform's).
  math::TrellisModel m = ssim.trellis;
  m.lambda[0] = (std::int64_t{1} << 28) - 1;
  Block loud{};
  for (int k = 0; k < 64; ++k) loud.raw[k] = k % 3 ? -32768 : 32767;
  std::int16_t loud16[64];
  for (int k = 0; k < 64; ++k) loud16[k] = static_cast<std::int16_t>(loud.raw[k]);
  const std::int64_t want = expected_block_lambda(loud, m.lambda[0], kTrellisActivity);
  EXPECT_EQ(math::block_lambda([&loud](int k) { return loud.raw[k]; }, m, 0), want);
  EXPECT_EQ(math::zigzag_block_lambda(loud16, m, 0), want);
  std::uniform_int_distribution<int> any(-32768, 32767);
  for (int trial = 0; trial < 1000; ++trial) {
    Block b{};
    std::int16_t b16[64];
    for (int k = 0; k < 64; ++k) {
      b.raw[k] = any(rng) >> (trial % 16);
      b16[k] = static_cast<std::int16_t>(b.raw[k]);
    }
    ASSERT_EQ(math::zigzag_block_lambda(b16, ssim.trellis, 1),
              expected_block_lambda(b, ssim.trellis.lambda[1], kTrellisActivity));
  }
}

// The dead zone: AC coefficients round up from 5/8 of a step, the DC from half of one.
/// The real blocks of MCU row `row` of component c in the order a JPEG scan codes them
/// (T.81 A.2: a non-interleaved scan, one component, goes block by block along the rows; an
/// interleaved one MCU by MCU, each MCU holding h x v blocks of the component row by row), as
/// (block row, block column).
std::vector<std::pair<int, int>> scan_order(const FrameGeometry& g, int c, int row) {
  const ComponentGeometry& cg = g.comp[c];
  std::vector<std::pair<int, int>> order;
  if (g.num_components == 1) {
    for (int bx = 0; bx < cg.width_in_blocks; ++bx) order.emplace_back(row, bx);
    return order;
  }
  for (int mcu = 0; mcu < g.mcus_x; ++mcu)
    for (int y = 0; y < cg.v; ++y)
      for (int x = 0; x < cg.h; ++x) {
        const int by = row * cg.v + y, bx = mcu * cg.h + x;
        if (by < cg.height_in_blocks && bx < cg.width_in_blocks) order.emplace_back(by, bx);
      }
  return order;
}

TEST(TrellisDc, FindsTheLeastCostOfEveryChoiceAlongASegment) {
  // The DC levels of each segment (kDcSegment blocks of an MCU row in scan order, the first at
  // its nearest level), priced here: squared error + lambda x (the DC table's code length of
  // each difference's size + its value bits), the difference from the previous block in the
  // scan. The search's choice must cost what every combination of each DC's two levels around
  // its FDCT output costs at least (counted one by one in short segments, by a plain dynamic
  // program in long ones), stay among those levels, and leave the AC coefficients and the
  // dummy blocks alone.
  std::mt19937 rng(2026);
  struct Case {
    int w, h;
    Subsampling s;
  };
  // Rows of up to 14 blocks, and rows of several segments (the last one short).
  const Case cases[] = {{40, 24, Subsampling::s420},  {33, 17, Subsampling::s420},
                        {50, 8, Subsampling::s422},   {56, 9, Subsampling::s444},
                        {90, 16, Subsampling::gray},  {8, 8, Subsampling::s420},
                        {272, 40, Subsampling::s420}, {600, 9, Subsampling::s444},
                        {530, 16, Subsampling::gray}};
  int rows_checked = 0, moved = 0, long_segments = 0;
  for (const Case& cs : cases) {
    const FrameGeometry g = make_geometry(cs.w, cs.h, cs.s);
    for (int quality : {10, 50, 90, 100}) {
      EncodeOptions o;
      o.quality = quality;
      o.subsampling = cs.s;
      o.rdo = Rdo::trellis;
      const QuantTables t = make_quant_tables(o, g.num_components);
      for (std::int64_t scale : {1, 8}) {
        math::TrellisModel m = t.trellis;
        for (std::int64_t& l : m.lambda) l *= scale;
        constexpr std::int16_t kMark = 0x5A5A;
        std::vector<std::int16_t> coeffs(g.coefficient_count(), kMark);
        std::vector<std::int16_t> raw(g.total_blocks, 0);
        for (int c = 0; c < g.num_components; ++c) {
          const ComponentGeometry& cg = g.comp[c];
          int walk = std::uniform_int_distribution<int>(-6000, 6000)(rng);
          const int step = t.component_divisor(c)[0].step;
          for (int by = 0; by < cg.height_in_blocks; ++by)
            for (int bx = 0; bx < cg.width_in_blocks; ++bx) {
              // A random walk (neighbours alike, as in pictures), a third on a level or
              // half-way between two.
              walk += std::uniform_int_distribution<int>(-3 * step, 3 * step)(rng);
              walk = std::clamp(walk, -8192, 8128);
              int value = walk;
              if (rng() % 3 == 0) value = walk / step * step + (rng() % 2 ? step / 2 : 0);
              value = std::clamp(value, -8192, 8128);
              const std::size_t b = g.block_index(c, by, bx);
              coeffs[b * 64] = raw[b] = static_cast<std::int16_t>(value);
            }
        }
        const std::vector<std::int16_t> before = coeffs;
        for (int c = 0; c < g.num_components; ++c) {
          const math::QuantDivisor& div = t.component_divisor(c)[0];
          const SymbolCodes codes = derive_codes(standard_dc_spec(c == 0 ? 0 : 1));
          const std::int64_t lambda = m.lambda[c];
          for (int row = 0; row < g.mcus_y; ++row) {
            math::trellis_dc_row(coeffs.data(), dc_chain(g, c), row, div, m);
            const std::vector<std::pair<int, int>> order = scan_order(g, c, row);
            for (std::size_t first = 0; first < order.size(); first += math::kDcSegment) {
              const int n = static_cast<int>(
                  std::min<std::size_t>(math::kDcSegment, order.size() - first));
              std::vector<std::int32_t> c_raw(n), lo(n), got(n);
              for (int i = 0; i < n; ++i) {
                const auto [by, bx] = order[first + i];
                const std::size_t b = g.block_index(c, by, bx);
                c_raw[i] = raw[b];
                got[i] = coeffs[b * 64];
                lo[i] = static_cast<std::int32_t>(
                    std::floor(static_cast<double>(raw[b]) / div.step));
              }
              const auto bits = [&codes](std::int32_t difference) {
                const int d = std::abs(difference);
                int size = 0;
                while ((1 << size) <= d) ++size;
                return codes.size[size] + size;
              };
              const auto squared = [&](int i, std::int32_t level) {
                const std::int64_t e = c_raw[i] - std::int64_t{level} * div.step;
                return e * e;
              };
              const auto cost = [&](const std::vector<std::int32_t>& level) {
                std::int64_t total = squared(0, level[0]);
                for (int i = 1; i < n; ++i)
                  total += squared(i, level[i]) + lambda * bits(level[i] - level[i - 1]);
                return total;
              };
              ASSERT_EQ(got[0], math::quantize(c_raw[0], div)) << "a segment's first block";
              for (int i = 1; i < n; ++i) ASSERT_TRUE(got[i] == lo[i] || got[i] == lo[i] + 1);
              std::int64_t least = INT64_MAX;
              if (n <= 14) {  // every combination
                std::vector<std::int32_t> level(n, got[0]);
                for (std::uint32_t pick = 0; pick < (1u << (n - 1)); ++pick) {
                  for (int i = 1; i < n; ++i)
                    level[i] = lo[i] + static_cast<int>(pick >> (i - 1) & 1);
                  least = std::min(least, cost(level));
                }
              } else {  // a plain dynamic program over the same choices
                std::int64_t best[2] = {squared(0, got[0]), INT64_MAX};
                std::int32_t prev[2] = {got[0], got[0]};
                for (int i = 1; i < n; ++i) {
                  std::int64_t next[2];
                  for (int j = 0; j < 2; ++j) {
                    next[j] = INT64_MAX;
                    for (int from = 0; from < 2; ++from)
                      if (best[from] != INT64_MAX)
                        next[j] = std::min(next[j], best[from] + squared(i, lo[i] + j) +
                                                        lambda * bits(lo[i] + j - prev[from]));
                  }
                  best[0] = next[0], best[1] = next[1];
                  prev[0] = lo[i], prev[1] = lo[i] + 1;
                }
                least = std::min(best[0], best[1]);
                ++long_segments;
              }
              ASSERT_EQ(cost(got), least) << g.width << "x" << g.height << " component " << c
                                          << " row " << row << " from " << first << " q"
                                          << quality;
              for (int i = 0; i < n; ++i) moved += got[i] != math::quantize(c_raw[i], div);
            }
            ++rows_checked;
          }
        }
        // Nothing but the real blocks' DCs changed.
        for (std::size_t i = 0; i < coeffs.size(); ++i) {
          if (i % 64 != 0 || coeffs[i] == before[i]) continue;
          const std::size_t b = i / 64;
          bool real = false;
          for (int c = 0; c < g.num_components; ++c) {
            const ComponentGeometry& cg = g.comp[c];
            if (b < cg.block_offset || b >= cg.block_offset + std::size_t(cg.blocks_w) * cg.blocks_h)
              continue;
            const std::size_t k = b - cg.block_offset;
            real = static_cast<int>(k / cg.blocks_w) < cg.height_in_blocks &&
                   static_cast<int>(k % cg.blocks_w) < cg.width_in_blocks;
          }
          ASSERT_TRUE(real) << "block " << b << " is a dummy";
        }
      }
    }
  }
  EXPECT_GT(rows_checked, 100);
  EXPECT_GT(long_segments, 100);
  EXPECT_GT(moved, 50) << "the search moves some DC levels off the nearest";
}

// The GPU's form of the DC search (math::DcStep: a warp scans the min-plus products of the
// blocks' steps, then walks the back pointers) chooses trellis_dc_values' levels: emulated here
// lane by lane in the kernel's order (trellis_dc_segments: five scan steps of doubling
// distance, each lane combining what the lane `delta` below held before the step), on random
// segments of every length up to a warp, from 16-bit tables to q 100, with values on levels
// and half-way between them (the ties).
TEST(TrellisDc, TheWarpsScanChoosesTheDynamicProgramsLevels) {
  std::mt19937 rng(7);
  int segments = 0, differ_from_nearest = 0;
  for (int quality : {3, 10, 50, 90, 100}) {
    for (int comp : {0, 1}) {
      EncodeOptions o;
      o.quality = quality;
      o.rdo = Rdo::trellis;
      const QuantTables t = make_quant_tables(o, 3);
      const math::QuantDivisor& div = t.component_divisor(comp)[0];
      for (std::int64_t scale : {1, 4, 64}) {
        math::TrellisModel m = t.trellis;
        for (std::int64_t& l : m.lambda) l *= scale;
        for (int trial = 0; trial < 60; ++trial) {
          const int n = 1 + static_cast<int>(rng() % 32);
          std::vector<std::int16_t> dc(n);
          int walk = std::uniform_int_distribution<int>(-8192, 8128)(rng);
          for (int i = 0; i < n; ++i) {
            walk = std::clamp(walk + std::uniform_int_distribution<int>(-3, 3)(rng) * div.step,
                              -8192, 8128);
            int value = walk;
            if (rng() % 3 == 0) value = walk / div.step * div.step + (rng() % 2 ? div.step / 2 : 0);
            dc[i] = static_cast<std::int16_t>(std::clamp(value, -8192, 8128));
          }
          std::vector<std::int16_t> want = dc;
          math::trellis_dc_values(
              n, [&want](int i) -> std::int16_t& { return want[i]; }, div, m, comp);
          // The warp, lane by lane.
          std::vector<std::int32_t> lo(n);
          std::vector<math::DcStep> step(32, math::dc_identity_step());
          for (int i = 0; i < n; ++i) {
            lo[i] = i == 0 ? math::quantize(dc[i], div) : math::dc_lower_level(dc[i], div);
            if (i > 0) step[i] = math::dc_step(dc[i], lo[i], lo[i - 1], div, m, comp);
          }
          std::vector<math::DcStep> prefix = step;
          for (int delta = 1; delta < 32; delta *= 2) {
            const std::vector<math::DcStep> before = prefix;
            for (int lane = delta; lane < 32; ++lane)
              prefix[lane] = math::dc_then(before[lane - delta], before[lane]);
          }
          std::uint32_t back[2] = {0, 0};
          for (int i = 1; i < n; ++i) {
            const int b = math::dc_back_pointers(prefix[i - 1], step[i]);
            back[0] |= static_cast<std::uint32_t>(b & 1) << i;
            back[1] |= static_cast<std::uint32_t>(b >> 1 & 1) << i;
          }
          for (int i = 0; i < n; ++i) {
            const int got = lo[i] + math::dc_choice(i, n, prefix[n - 1], back);
            ASSERT_EQ(got, want[i]) << "q" << quality << " comp " << comp << " x" << scale
                                    << " block " << i << " of " << n;
            differ_from_nearest += got != math::quantize(dc[i], div);
          }
          ++segments;
        }
      }
    }
  }
  EXPECT_EQ(segments, 5 * 2 * 3 * 60);
  EXPECT_GT(differ_from_nearest, 100) << "the segments move levels off the nearest";
}

TEST(TrellisDc, TheModelHasTheDcTablesCodeLengths) {
  EncodeOptions o;
  o.rdo = Rdo::trellis;
  const QuantTables t = make_quant_tables(o, 3);
  for (int table = 0; table < 2; ++table) {
    const SymbolCodes codes = derive_codes(standard_dc_spec(table));
    for (int size = 0; size <= 11; ++size)
      EXPECT_EQ(t.trellis.dc_bits[table][size], codes.size[size] + size) << table << " " << size;
  }
  EXPECT_EQ(t.trellis.dc_bits[0][0], 2) << "luma size 0: the code 00";
  EXPECT_EQ(t.trellis.dc_bits[1][11], 11 + 11) << "chroma size 11: an 11-bit code";
}

TEST(DeadZone, AcRoundsUpFromFiveEighthsOfAStep) {
  EncodeOptions o;
  o.rdo = Rdo::deadzone;
  for (int quality : {1, 30, 75, 100}) {
    o.quality = quality;
    const QuantTables t = make_quant_tables(o, 3);
    for (int slot = 0; slot < 2; ++slot) {
      for (int n = 0; n < 64; ++n) {
        const int q = t.natural[slot][n];
        const math::QuantDivisor d = t.divisor[slot][n];
        const int up = n == 0 ? 4 * q : 5 * q;  // in FDCT units (the step is 8q)
        for (int c : {up - 1, up, 3 * 8 * q + up - 1, 3 * 8 * q + up}) {
          if (c > 32767) continue;
          const int want = c / (8 * q) + (c % (8 * q) >= up ? 1 : 0);
          ASSERT_EQ(math::quantize(c, d), want) << "q" << q << " n " << n << " c " << c;
          ASSERT_EQ(math::quantize(-c, d), -want) << "q" << q << " n " << n << " c " << -c;
        }
      }
    }
  }
}

}  // namespace
}  // namespace mjpeg
