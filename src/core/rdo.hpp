// Rate-distortion optimized quantization (Rdo::trellis), compiled by g++ (the CPU transform)
// and nvcc (the GPU kernels) from this one header, in integer arithmetic only, so that every
// mode and device chooses the same levels.
//
// Per block, each AC coefficient (zigzag positions 1..63) may take its nearest level L
// (math::quantize), L - 1 when L >= 2, or 0; the search picks the combination with the least
//     sum of (c - 8 q v)^2  +  lambda x (Huffman bits of the block's AC symbols)
// where c is the FDCT output (8 times the orthonormal DCT, so the first sum is 64 times the
// block's squared error in samples) and 8q the step; the bits are the code lengths of the
// standard AC table of the component (luma or chroma), the value bits, the ZRL codes of runs
// of 16 zeros and the EOB code. (With `--tune ssim` lambda also grows with the block's own
// contrast: block_lambda.) The search is exact over those choices: a dynamic program over
// the positions that may be non-zero, whose state is the position of the last non-zero level
// (the next symbol's bits depend only on the run since it and on its own size). Lambda is the
// model's, per component (make_trellis_model: it follows the tables, so -q keeps its meaning,
// and weighs each component by its share of the RGB error).
//
// The DC levels are chosen afterwards (trellis_dc_row): a DC is coded as the difference from
// the previous block's, so its bits depend on the neighbour's choice, and a dynamic program
// along the blocks of a component in scan order picks each DC between the two levels around
// its FDCT output, a segment of kDcSegment blocks of an MCU row at a time.
//
// Sums of 63 squared errors below 2^15 stay below 2^36, so everything is exact in int64.
#pragma once

#include <cstdint>

#include "core/jpeg_math.hpp"

namespace mjpeg::math {

/// A bit count for a symbol the table has no code for (never chosen while another is).
inline constexpr int kNoCodeBits = 64;

/// What the search needs besides the block and its divisors: the code length of every AC
/// symbol (run << 4 | size) of the two standard AC tables, lambda per component, and zigzag ->
/// natural order (a copy here, so that the kernels find it in device memory).
struct TrellisModel {
  std::uint8_t ac_bits[2][256];  ///< [0] luma, [1] chroma; kNoCodeBits where a symbol has no code
  std::uint8_t natural_of_zigzag[64];
  std::int64_t lambda[3];  ///< per component, in squared FDCT units per bit
  /// [0] luma, [1] chroma: the most bits an AC symbol of one size may take after a shorter run
  /// than after a longer one (runs 0..62, ZRLs included; 3 for both standard tables).
  std::int32_t shorter_run_bits[2];
  /// [0] luma, [1] chroma: the bits of a level of size 1..10 after a run of 0..62 zeros (its
  /// ZRLs, its symbol's code and its value bits).
  std::uint8_t run_bits[2][11][64];
  /// [0] luma, [1] chroma: the bits of a DC difference of size 0..11 (the standard DC table's
  /// code length and the value bits).
  std::uint8_t dc_bits[2][12];
  /// 0: every block's error counts the same (PSNR). Otherwise A > 0, and a block's lambda is
  /// scaled by (E + A) / 2A, E the sum of its squared AC FDCT outputs (4096 times its pixels'
  /// variance): as SSIM, an error counts less against a block's own contrast (`--tune ssim`).
  std::int64_t activity;
};

/// The change in squared error, in squared FDCT units, from coding magnitude `a` (|FDCT
/// output|) as level v instead of 0: (a - v step)^2 - a^2 = v step (v step - 2a), one product.
MJPEG_HD std::int64_t distortion_change(std::int32_t a, std::int32_t v, std::int32_t step) {
  const std::int32_t vs = v * step;
  return std::int64_t{vs} * (vs - 2 * a);
}

/// Bits of magnitude v >= 1 (its JPEG size category).
MJPEG_HD int size_of_level(std::int32_t v) {
#if defined(__CUDA_ARCH__)
  return 32 - __clz(v);
#else
  return 32 - __builtin_clz(static_cast<unsigned>(v));
#endif
}

/// out[0..64) = 0. On x86-64 hosts as eight 16-byte stores: g++ turns a loop (or memset) of
/// 128 bytes at an unknown alignment into `rep stos`, whose start-up cost was a twentieth of
/// the search's time on video frames.
MJPEG_HD void clear_block(std::int16_t* out) {
#if defined(__SSE2__) && !defined(__CUDA_ARCH__)  // (jpeg_math.hpp includes emmintrin.h)
  __m128i* o = reinterpret_cast<__m128i*>(out);
  const __m128i z = _mm_setzero_si128();
  _mm_storeu_si128(o + 0, z), _mm_storeu_si128(o + 1, z), _mm_storeu_si128(o + 2, z);
  _mm_storeu_si128(o + 3, z), _mm_storeu_si128(o + 4, z), _mm_storeu_si128(o + 5, z);
  _mm_storeu_si128(o + 6, z), _mm_storeu_si128(o + 7, z);
#else
  for (int k = 0; k < 64; ++k) out[k] = 0;
#endif
}

/// The lambda of a block whose squared AC FDCT outputs add up to `energy`: the component's,
/// scaled by the block's activity where the model asks for it, floor(lambda x (E + A) / 2A).
/// Computed as q x (E + A) + floor(r x (E + A) / 2A) with lambda = q x 2A + r, so that no
/// product passes 2^58 (E < 2^36, A < 2^21, lambda < 2^28 even for 16-bit tables).
MJPEG_HD std::int64_t lambda_for_energy(const TrellisModel& m, int comp, std::int64_t energy) {
  const std::int64_t lambda = m.lambda[comp];
  if (m.activity == 0) return lambda;
  const std::int64_t d = 2 * m.activity, x = energy + m.activity;
  return lambda / d * x + lambda % d * x / d;
}

/// The lambda of one block, raw(k) being its FDCT output at zigzag index k.
template <class Raw>
MJPEG_HD std::int64_t block_lambda(const Raw& raw, const TrellisModel& m, int comp) {
  if (m.activity == 0) return m.lambda[comp];
  std::int64_t e = 0;
  for (int k = 1; k < 64; ++k) {
    const std::int64_t r = raw(k);
    e += r * r;
  }
  return lambda_for_energy(m, comp, e);
}

/// block_lambda of a block stored in zigzag order (the CPU transform's rows): on x86-64 hosts the
/// squares are added by pmaddwd in pairs, each pair's sum below 2^32 (unsigned: two squares of
/// -32768 make 2^31) and widened before the pairs are added.
MJPEG_HD std::int64_t zigzag_block_lambda(const std::int16_t* zigzag, const TrellisModel& m,
                                          int comp) {
  if (m.activity == 0) return m.lambda[comp];
#if defined(__SSE2__) && !defined(__CUDA_ARCH__)
  const __m128i zero = _mm_setzero_si128();
  __m128i sum = zero;
  for (int i = 0; i < 8; ++i) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(zigzag) + i);
    const __m128i pairs = _mm_madd_epi16(v, v);
    sum = _mm_add_epi64(sum, _mm_unpacklo_epi32(pairs, zero));
    sum = _mm_add_epi64(sum, _mm_unpackhi_epi32(pairs, zero));
  }
  const std::int64_t all = _mm_cvtsi128_si64(sum) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(sum, sum));
  const std::int64_t dc = zigzag[0];
  return lambda_for_energy(m, comp, all - dc * dc);
#else
  return block_lambda([zigzag](int k) { return zigzag[k]; }, m, comp);
#endif
}

/// The levels of one block chosen by the search, written in zigzag order to out[0..64), the DC
/// left as its FDCT output raw(0) for trellis_dc_row, which chooses it. raw(k) is the FDCT output at zigzag index k and nearest(k)
/// its nearest level (math::quantize; out may be where raw or nearest read: each is read
/// before out is written); `candidates` has bit k set where nearest(k) != 0 (k = 1..63, as
/// math::nonzero_levels makes it); div the component's divisors (natural order, rounding half a
/// step); `comp` (0 luma, 1 Cb, 2 Cr) picks the code lengths; `lambda` is the block's
/// (block_lambda).
///
/// The loop has no branch that depends on the data but its trip counts (choices are made by
/// selects): on a CPU mispredicted branches cost more than the arithmetic, and on a GPU the
/// threads of a warp stay together.
template <class Raw, class Nearest>
MJPEG_HD void trellis_search(const Raw& raw, const Nearest& nearest, std::uint64_t candidates,
                             const QuantDivisor* div, const TrellisModel& m, int comp,
                             std::int64_t lambda, std::int16_t* out) {
  const std::uint8_t* ac_bits = m.ac_bits[comp == 0 ? 0 : 1];
  constexpr std::int64_t kNone = INT64_MAX;
  // The cost of a choice is counted from the block with every AC level 0 (whose distortion,
  // the sum of the squared FDCT outputs, is the same for every choice and left out): a non-zero
  // level at k changes the distortion by distortion_change(a, v) and adds its symbol's
  // bits. A state is a position: 0 = the start, then each position whose nearest level is not
  // 0, in order; its cost is the least cost of a choice for positions 1..p with a non-zero
  // level at p; from[p] is the state before it, chosen[p] its level (with its sign).
  std::uint8_t from[64];
  std::int16_t chosen[64];
  // The states a later level may follow, in order: live[0..nlive) with their costs beside
  // them (a scan reads each directly: the load it saves lies on the search's critical path).
  // Two exact bounds leave out states that cannot be the least, so the search finds what a
  // search over every state finds (the same state on ties too: the first least).
  // - A level whose zeroing would add more distortion than lambda x (32 + its size) bits is
  //   never zeroed in a least-cost choice: zeroing it saves at most its symbol (a code of at
  //   most 16 bits and its value bits) and the difference between the next symbol's codes (at
  //   most 16 bits; merged runs need no fewer ZRLs), so keeping it is strictly cheaper. No
  //   state before such a "kept" one is the state before a later one: it empties the list.
  // - A state whose cost exceeds a later state's by more than lambda x shorter_run_bits is
  //   never the least: from the later state every next symbol has a shorter run, so it takes
  //   at most that many bits more (the model's maximum over sizes and runs), and both end
  //   with the same EOB (or none at position 63).
  std::int64_t live_cost[64];
  std::uint8_t live[64];
  int nlive = 1;
  live[0] = 0;
  live_cost[0] = 0;
  const std::int64_t slack = lambda * m.shorter_run_bits[comp == 0 ? 0 : 1];
  const std::uint8_t(*run_bits)[64] = m.run_bits[comp == 0 ? 0 : 1];
  const std::int16_t dc = static_cast<std::int16_t>(raw(0));  // for trellis_dc_row
  // The least cost of a whole choice so far and its last state: the choice ends there with an
  // EOB, unless at position 63 (every state counts here: ending before a kept level saves the
  // ZRLs before it too, which the first bound leaves out). States are made in order, so on a
  // tie the first stays.
  const std::int64_t eob = lambda * ac_bits[0x00];
  std::int64_t best = eob;  // the start alone: no AC level
  int last = 0;
  while (candidates != 0) {
    const int k = lowest_bit(candidates);
    candidates &= candidates - 1;
    const std::int32_t l = nearest(k);
    const std::int32_t c = raw(k);
    const std::int32_t a = c < 0 ? -c : c;
    const std::int32_t v = l < 0 ? -l : l;
    // The nearest level v and the one below it, w (v itself when v is 1: then never chosen).
    const std::int32_t w = v > 1 ? v - 1 : v;
    const std::int32_t step = div[m.natural_of_zigzag[k]].step;
    const int size = size_of_level(v), size_w = size_of_level(w);
    // What each level changes in the distortion against zeroing it: (a - v step)^2 - a^2.
    const std::int64_t own = distortion_change(a, v, step);
    const std::int64_t own_w = distortion_change(a, w, step);
    // The least cost + lambda x bits over the live states for each (the first of the least, in
    // order). Where w has v's size, both find the same state and only their own distortions
    // differ. The bits after a run from position p: bits_v[-p] (the run being k - p - 1).
    const std::uint8_t* bits_v = run_bits[size] + (k - 1);
    const std::uint8_t* bits_w = run_bits[size_w] + (k - 1);
    std::int64_t best_v = kNone, best_w = kNone;
    int at_v = 0, at_w = 0;
    int i = 0;
    do {  // (nlive >= 1)
      const int p = live[i];
      const std::int64_t cv = live_cost[i] + lambda * bits_v[-p];
      const std::int64_t cw = live_cost[i] + lambda * bits_w[-p];
      at_v = cv < best_v ? i : at_v;
      best_v = cv < best_v ? cv : best_v;
      at_w = cw < best_w ? i : at_w;
      best_w = cw < best_w ? cw : best_w;
    } while (++i < nlive);
    // w only when strictly better.
    const bool below = best_w + own_w < best_v + own;
    const std::int64_t here = below ? best_w + own_w : best_v + own;
    from[k] = live[below ? at_w : at_v];
    const std::int64_t least_own = own_w < own ? own_w : own;
    // The bounds: a kept level leaves no state before it; otherwise the states whose cost is
    // more than the slack above this one's go.
    const bool kept = -least_own > lambda * (32 + size);
    const std::int64_t bar = kept ? -kNone : here + slack;
    int n = 0;
    i = 0;
    do {
      const std::int64_t cost = live_cost[i];
      live[n] = live[i];
      live_cost[n] = cost;
      n += cost <= bar ? 1 : 0;
    } while (++i < nlive);
    live[n] = static_cast<std::uint8_t>(k);
    live_cost[n] = here;
    nlive = n + 1;
    const std::int32_t level = below ? w : v;
    chosen[k] = static_cast<std::int16_t>(c < 0 ? -level : level);
    const std::int64_t end = here + (k < 63 ? eob : 0);
    last = end < best ? k : last;
    best = end < best ? end : best;
  }
  clear_block(out);
  out[0] = dc;
  for (int p = last; p != 0; p = from[p]) out[p] = chosen[p];
}

/// One component's blocks in the order the scan codes them: in each MCU row, MCU by MCU, and in
/// an MCU its h x v blocks row by row (a non-interleaved scan: h = v = 1, one block row).
struct DcChain {
  long long offset = 0;  ///< the component's first block (FrameGeometry's block_offset)
  int blocks_w = 0;      ///< blocks per block row, the MCU padding's dummies included
  int width_in_blocks = 0, height_in_blocks = 0;  ///< the real blocks
  int h = 1, v = 1;      ///< blocks per MCU across and down
  int comp = 0;          ///< 0 luma, 1 Cb, 2 Cr
};

/// The number of real blocks in MCU row `row` of `chain`: its real block rows times the
/// real blocks across.
MJPEG_HD int dc_chain_length(const DcChain& chain, int row) {
  const int rows = chain.height_in_blocks - row * chain.v;
  return (rows < chain.v ? rows : chain.v) * chain.width_in_blocks;
}

/// The block (index into the frame's blocks) at position i of MCU row `row` of `chain`, in
/// scan order: every MCU but the row's last holds `down` x h real blocks, the last `down` x the
/// real columns left; inside an MCU they go row by row.
MJPEG_HD long long dc_chain_block(const DcChain& chain, int row, int i) {
  const int rows = chain.height_in_blocks - row * chain.v;
  const int down = rows < chain.v ? rows : chain.v;
  const int mcu = i / (down * chain.h);
  const int j = i - mcu * down * chain.h;
  const int left = chain.width_in_blocks - mcu * chain.h;
  const int across = left < chain.h ? left : chain.h;
  const int by = row * chain.v + j / across, bx = mcu * chain.h + j % across;
  return chain.offset + static_cast<long long>(by) * chain.blocks_w + bx;
}

/// floor(c / step) of a DC's FDCT output c: the lower of the two levels around it. By the
/// divisor's reciprocal, no division: recip = ceil(2^40 / step) adds less than a / 2^40 to
/// a / step, whose fraction is at most 1 - 1 / step, so it is exact while a x step < 2^40 (here
/// a < 2^19 and step <= 2^18).
MJPEG_HD std::int32_t dc_lower_level(std::int32_t c, const QuantDivisor& div) {
  const auto floor_div = [&div](std::uint32_t a) {
    return static_cast<std::int32_t>((std::uint64_t{a} * div.recip) >> kRecipShift);
  };
  return c >= 0 ? floor_div(static_cast<std::uint32_t>(c))
                : -floor_div(static_cast<std::uint32_t>(div.step - 1 - c));
}

/// lambda x the bits of a DC difference d (its size's code length and its value bits).
MJPEG_HD std::int64_t dc_difference_cost(std::int32_t d, const std::uint8_t* bits,
                                         std::int64_t lambda) {
  return lambda * bits[d == 0 ? 0 : size_of_level(d < 0 ? -d : d)];
}

/// A DC search's cost for a choice that cannot be made (block 0's upper level; what the warp's
/// products are held at): no sum of two passes 2^62.
inline constexpr std::int64_t kDcFar = std::int64_t{1} << 60;

/// The DC levels of n blocks coded one after another: at(i) is block i's DC (a reference to an
/// int16), its FDCT output on entry and its level on return (working values in between).
/// `div` is the component's DC divisor, `comp` picks the code lengths and lambda. Each block
/// takes its nearest level (math::quantize) or the other level around its FDCT output,
/// whichever combination costs least in
///     sum of (c - 8 q v)^2  +  lambda x (bits of the DC differences)
/// the bits being the standard DC table's code length of each difference's size and its value
/// bits, the difference taken from the block before; block 0 keeps its nearest level (the
/// block before it is not priced).
///
/// A dynamic program whose state is the previous block's choice (the lower level or the upper
/// one): going forward, block i's value is 4 x its lower level + the two states' back
/// pointers (|lower level| <= 1024: it fits 16 bits); going back writes the levels.
/// (DcStep below is the same search in a form a warp computes in parallel.)
template <class At>
MJPEG_HD void trellis_dc_values(int n, const At& at, const QuantDivisor& div,
                                const TrellisModel& m, int comp) {
  if (n <= 0) return;
  const std::uint8_t* bits = m.dc_bits[comp == 0 ? 0 : 1];
  const std::int64_t lambda = m.lambda[comp];
  const std::int32_t step = div.step;
  std::int32_t prev = quantize(at(0), div);  // block 0: the lower level, the upper unreachable
  at(0) = static_cast<std::int16_t>(4 * prev);
  std::int64_t cost_lo = 0, cost_hi = kDcFar;
  for (int i = 1; i < n; ++i) {
    std::int16_t& dc = at(i);
    const std::int32_t c = dc;
    const std::int32_t lo = dc_lower_level(c, div);
    std::int64_t next[2];
    int back = 0;
    for (int j = 0; j < 2; ++j) {
      const std::int32_t level = lo + j;
      const std::int64_t e = c - level * step;
      const std::int64_t from_lo = cost_lo + dc_difference_cost(level - prev, bits, lambda);
      const std::int64_t from_hi = cost_hi + dc_difference_cost(level - prev - 1, bits, lambda);
      const bool hi = from_hi < from_lo;  // on a tie the lower level's state
      next[j] = (hi ? from_hi : from_lo) + e * e;
      back |= (hi ? 1 : 0) << j;
    }
    dc = static_cast<std::int16_t>(4 * lo + back);
    prev = lo;
    cost_lo = next[0];
    cost_hi = next[1];
  }
  int state = cost_hi < cost_lo ? 1 : 0;
  for (int i = n - 1; i >= 0; --i) {
    std::int16_t& dc = at(i);
    const int back = dc & 3;
    dc = static_cast<std::int16_t>((dc - back) / 4 + state);
    state = back >> state & 1;
  }
}

/// trellis_dc_values as a product, for the GPU, where the 32 threads of a warp take a segment's
/// blocks one each. Block i's step, cost[s][t], is what choosing level lo_i + t costs after
/// block i - 1 chose lo_(i-1) + s: lambda x the difference's bits + t's squared error. The
/// least cost of each choice at block i is then row 0 of the min-plus product of the steps of
/// blocks 0..i (block 0's step the identity: it keeps its nearest level, choice 0), and a
/// min-plus product associates, so a warp forms every block's prefix in five shuffles (a scan).
/// Each block's back pointers then compare the previous block's two costs exactly as the
/// dynamic program does, so the levels are trellis_dc_values' (the same integers, the same
/// ties). Entries are held at most kDcFar (no sum of two passes 2^62); the real costs stay far
/// below it (at most 32 x (2^38 + 2^33)).
struct DcStep {
  std::int64_t cost[2][2];
};

MJPEG_HD DcStep dc_identity_step() { return DcStep{{{0, kDcFar}, {kDcFar, 0}}}; }

/// Block i's step (i >= 1): `lo` its lower level (dc_lower_level), `prev_lo` the block before's
/// (block 0's: its nearest level), c its FDCT output.
MJPEG_HD DcStep dc_step(std::int32_t c, std::int32_t lo, std::int32_t prev_lo,
                        const QuantDivisor& div, const TrellisModel& m, int comp) {
  const std::uint8_t* bits = m.dc_bits[comp == 0 ? 0 : 1];
  const std::int64_t lambda = m.lambda[comp];
  DcStep r;
  for (int t = 0; t < 2; ++t) {
    const std::int64_t e = c - (lo + t) * div.step;
    for (int s = 0; s < 2; ++s)
      r.cost[s][t] = dc_difference_cost(lo + t - prev_lo - s, bits, lambda) + e * e;
  }
  return r;
}

/// a then b: the least cost from a's choice before to b's choice after, held at most kDcFar.
MJPEG_HD DcStep dc_then(const DcStep& a, const DcStep& b) {
  DcStep r;
  for (int s = 0; s < 2; ++s)
    for (int t = 0; t < 2; ++t) {
      const std::int64_t x = a.cost[s][0] + b.cost[0][t], y = a.cost[s][1] + b.cost[1][t];
      const std::int64_t least = x < y ? x : y;
      r.cost[s][t] = least < kDcFar ? least : kDcFar;
    }
  return r;
}

/// Block i's back pointers (bit t: the previous block's choice when block i chooses t), from
/// the previous block's prefix and block i's own step: the dynamic program's comparison.
MJPEG_HD int dc_back_pointers(const DcStep& prev_prefix, const DcStep& step) {
  int back = 0;
  for (int t = 0; t < 2; ++t) {
    const std::int64_t from_lo = prev_prefix.cost[0][0] + step.cost[0][t];
    const std::int64_t from_hi = prev_prefix.cost[0][1] + step.cost[1][t];
    back |= (from_hi < from_lo ? 1 : 0) << t;  // on a tie the lower level's state
  }
  return back;
}

/// The choice (0 lower, 1 upper) of block i of a segment of n, from the last block's prefix and
/// every block's back pointers as two masks (bit j of back[t]: block j's pointer for choice t).
MJPEG_HD int dc_choice(int i, int n, const DcStep& last_prefix, const std::uint32_t back[2]) {
  int state = last_prefix.cost[0][1] < last_prefix.cost[0][0] ? 1 : 0;
  for (int j = n - 1; j > i; --j) state = static_cast<int>(back[state] >> j & 1);
  return state;
}

/// The DC search's unit: kDcSegment consecutive real blocks of one component in an MCU row, in
/// scan order (the row's last segment may be shorter). Each segment's first block keeps its
/// nearest level, so that no segment depends on another's choice (the difference from the
/// block before it is coded as usual, only not priced, and neither is a restart marker's reset
/// of the predictor): segments are searched in any order, by any thread, with the same
/// result. 32 leaves 1 block in 32 at its nearest level and is a warp's lanes, a block each
/// (the GPU's trellis_dc_segments).
inline constexpr int kDcSegment = 32;

/// The segments of MCU row `row` of `chain`.
MJPEG_HD int dc_segments(const DcChain& chain, int row) {
  return (dc_chain_length(chain, row) + kDcSegment - 1) / kDcSegment;
}

/// The DC levels of the n blocks of an MCU row of component `comp`, at(i) being block i's DC
/// in scan order (as trellis_dc_values takes them): trellis_dc_values on each segment.
template <class At>
MJPEG_HD void trellis_dc_segments_of(int n, const At& at, const QuantDivisor& div,
                                     const TrellisModel& m, int comp) {
  for (int first = 0; first < n; first += kDcSegment) {
    const int left = n - first;
    trellis_dc_values(
        left < kDcSegment ? left : kDcSegment,
        [&at, first](int i) -> std::int16_t& { return at(first + i); }, div, m, comp);
  }
}

/// The DC levels of MCU row `row` of one component (`chain`), whose DC coefficients (zigzag
/// index 0 of each block of `coeffs`, the frame's coefficient planes) hold their FDCT outputs
/// as trellis_search leaves them. The dummy blocks of the MCU padding are not touched (they
/// copy a real block's DC afterwards).
MJPEG_HD void trellis_dc_row(std::int16_t* coeffs, const DcChain& chain, int row,
                             const QuantDivisor& div, const TrellisModel& m) {
  trellis_dc_segments_of(
      dc_chain_length(chain, row),
      [&](int i) -> std::int16_t& { return coeffs[dc_chain_block(chain, row, i) * 64]; }, div, m,
      chain.comp);
}

/// trellis_search with the nearest levels computed here (math::quantize of each raw value).
template <class Raw>
MJPEG_HD void trellis_quantize(const Raw& raw, const QuantDivisor* div, const TrellisModel& m,
                               int comp, std::int16_t* out) {
  const auto nearest = [&raw, div, &m](int k) {
    return quantize(raw(k), div[m.natural_of_zigzag[k]]);
  };
  std::uint64_t candidates = 0;
  for (int k = 1; k < 64; ++k) candidates |= static_cast<std::uint64_t>(nearest(k) != 0) << k;
  trellis_search(raw, nearest, candidates, div, m, comp, block_lambda(raw, m, comp), out);
}

}  // namespace mjpeg::math
