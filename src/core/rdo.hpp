// Rate-distortion optimized quantization (Rdo::trellis), compiled by g++ (the CPU transform)
// and nvcc (the GPU kernels) from this one header, in integer arithmetic only, so that every
// mode and device chooses the same levels.
//
// Per block, the DC coefficient is rounded to the nearest level as libjpeg does. Each AC
// coefficient (zigzag positions 1..63) may take its nearest level L (math::quantize), L - 1
// when L >= 2, or 0; the search picks the combination with the least
//     sum of (c - 8 q v)^2  +  lambda x (Huffman bits of the block's AC symbols)
// where c is the FDCT output (8 times the orthonormal DCT, so the first sum is 64 times the
// block's squared error in samples) and 8q the step; the bits are the code lengths of the
// standard AC table of the component (luma or chroma), the value bits, the ZRL codes of runs
// of 16 zeros and the EOB code. The search is exact over those choices: a dynamic program over
// the positions that may be non-zero, whose state is the position of the last non-zero level
// (the next symbol's bits depend only on the run since it and on its own size). Lambda is the
// model's, per component (make_trellis_model: it follows the tables, so -q keeps its meaning,
// and weighs each component by its share of the RGB error).
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
};

/// Squared error, in squared FDCT units, of coding magnitude `a` (|FDCT output|) as level v.
MJPEG_HD std::int64_t level_distortion(std::int32_t a, std::int32_t v, std::int32_t step) {
  const std::int64_t e = a - v * step;
  return e * e;
}

/// Bits of magnitude v >= 1 (its JPEG size category).
MJPEG_HD int size_of_level(std::int32_t v) {
#if defined(__CUDA_ARCH__)
  return 32 - __clz(v);
#else
  return 32 - __builtin_clz(static_cast<unsigned>(v));
#endif
}

/// The levels of one block chosen by the search, written in zigzag order to out[0..64), the DC
/// rounded as math::quantize does. raw(k) is the FDCT output at zigzag index k and nearest(k)
/// its nearest level (math::quantize; out may be where raw or nearest read: each is read
/// before out is written); div the component's divisors (natural order, rounding half a
/// step); `comp` (0 luma, 1 Cb, 2 Cr) picks the code lengths and lambda.
template <class Raw, class Nearest>
MJPEG_HD void trellis_search(const Raw& raw, const Nearest& nearest, const QuantDivisor* div,
                             const TrellisModel& m, int comp, std::int16_t* out) {
  const std::uint8_t* ac_bits = m.ac_bits[comp == 0 ? 0 : 1];
  const std::int64_t lambda = m.lambda[comp];
  // The cost of a choice is counted from the block with every AC level 0 (whose distortion,
  // the sum of the squared FDCT outputs, is the same for every choice and left out): a non-zero
  // level at k changes the distortion by level_distortion(a, v) - a^2 and adds its symbol's
  // bits. States: 0 = the start (position 0), then each position whose nearest level is not 0,
  // in order; cost[s] is the least cost of a choice for positions 1..pos[s] with a non-zero
  // level at pos[s]; from[s] is the state before it, chosen[s] its level (with its sign).
  std::int64_t cost[64];
  std::uint8_t pos[64], from[64];
  std::int16_t chosen[64];
  cost[0] = 0;
  pos[0] = 0;
  int states = 1;
  // A level whose zeroing would add more distortion than lambda x (32 + its size) bits is
  // never zeroed in a least-cost choice: zeroing it saves at most its symbol (a code of at
  // most 16 bits and its value bits) and the difference between the next symbol's codes (at
  // most 16 bits; merged runs need no fewer ZRLs), so keeping it is strictly cheaper. States
  // before such a "kept" state are never the state before a later one, so the search starts
  // at the last of them, `first`: it leaves out only choices that cannot be least, and so
  // finds what the full search finds (the same state on ties, too: the first least).
  int first = 0;
  const int zrl_bits = ac_bits[0xF0];
  // The least cost + lambda x bits over the states, for a level of `size` bits at position k
  // (the first state of the least, in order), and that state.
  auto best_state = [&](int k, int size, int& state) {
    std::int64_t best = 0;
    for (int s = first; s < states; ++s) {
      const int run = k - pos[s] - 1;
      const int bits = (run >> 4) * zrl_bits + ac_bits[((run & 15) << 4) | size] + size;
      const std::int64_t c = cost[s] + lambda * bits;
      if (s == first || c < best) {
        best = c;
        state = s;
      }
    }
    return best;
  };
  const std::int16_t dc = nearest(0);
  for (int k = 1; k < 64; ++k) {
    const std::int32_t l = nearest(k);
    if (l == 0) continue;
    const std::int32_t c = raw(k);
    const std::int32_t a = c < 0 ? -c : c;
    const std::int32_t v = l < 0 ? -l : l;
    const std::int64_t zero = std::int64_t{a} * a;
    const std::int32_t step = div[m.natural_of_zigzag[k]].step;
    // The nearest level, then the one below it (chosen only when strictly better): with the
    // same size it has the same bits, so the same best state, and only its distortion differs.
    const int size = size_of_level(v);
    const std::int64_t own = level_distortion(a, v, step);
    int state = 0;
    std::int64_t best = best_state(k, size, state) + own;
    std::int32_t level = v;
    std::int64_t least_own = own;
    if (v >= 2) {
      const int size_below = size_of_level(v - 1);
      const std::int64_t own_below = level_distortion(a, v - 1, step);
      if (own_below < least_own) least_own = own_below;
      if (size_below == size) {
        if (own_below < own) {
          best += own_below - own;
          level = v - 1;
        }
      } else {
        int state_below = 0;
        const std::int64_t below = best_state(k, size_below, state_below) + own_below;
        if (below < best) {
          best = below;
          state = state_below;
          level = v - 1;
        }
      }
    }
    // Kept: the least distortion of a non-zero level is below zeroing's by more than any
    // bits the zeroing could save (16 + size + 16; every AC symbol of 8-bit samples has a
    // code in the standard tables, none longer than 16 bits).
    if (zero - least_own > lambda * (32 + size)) first = states;
    cost[states] = best - zero;
    pos[states] = static_cast<std::uint8_t>(k);
    from[states] = static_cast<std::uint8_t>(state);
    chosen[states] = static_cast<std::int16_t>(c < 0 ? -level : level);
    ++states;
  }
  // The end: an EOB unless the last non-zero level is at position 63.
  std::int64_t best = 0;
  int last = 0;
  // (Every state: ending before a kept level saves the ZRLs before it too, which the bound
  // above leaves out.)
  for (int s = 0; s < states; ++s) {
    const std::int64_t c = cost[s] + (pos[s] < 63 ? lambda * ac_bits[0x00] : 0);
    if (s == 0 || c < best) {
      best = c;
      last = s;
    }
  }
  out[0] = dc;
  for (int k = 1; k < 64; ++k) out[k] = 0;
  for (int s = last; s != 0; s = from[s]) out[pos[s]] = chosen[s];
}

/// trellis_search with the nearest levels computed here (math::quantize of each raw value).
template <class Raw>
MJPEG_HD void trellis_quantize(const Raw& raw, const QuantDivisor* div, const TrellisModel& m,
                               int comp, std::int16_t* out) {
  trellis_search(
      raw, [&raw, div, &m](int k) { return quantize(raw(k), div[m.natural_of_zigzag[k]]); }, div,
      m, comp, out);
}

}  // namespace mjpeg::math
