// The vector variants of the CPU transform, with exactly the arithmetic of jpeg_math.hpp.
//
// How it is organised (the facts from libjpeg-turbo's SIMD colour conversion, downsampling and
// islow FDCT; the code and the formulations are our own):
//  * One band (MCU row: 8 or 16 pixel rows) at a time: its rows are colour-converted and
//    downsampled into small int16 planes of centred samples (sample - 128), then every block of
//    the band is transformed and quantized straight into the coefficient buffer, so the band's
//    samples stay in L1/L2. The rows come from a RowSource, so planar input plugs in.
//  * Colour conversion, 8 pixels per 128-bit lane: each pixel is shuffled into 4 bytes
//    (R, G, B, G); one u8 x s8 multiply-add then gives the 16-bit differences (R-G, B-G) (or
//    twice one of them) as adjacent pairs, and one 16x16->32-bit multiply-add per output gives
//        Y  = G + (19595 (R-G) + 7471 (B-G) + 32768) >> 16
//        Cb = 128 + (32768 (B-G) - 11059 (R-G) + 32767) >> 16
//        Cr = 128 + (32768 (R-G) -  5329 (B-G) + 32767) >> 16,
//    which are libjpeg's formulas rewritten with its coefficients' sums (19595 + 38470 + 7471 =
//    65536, 11059 + 21709 = 32768, 27439 + 5329 = 32768): the same integers, exactly. Pixels
//    of the two pixel groups of a lane are packed back into natural order.
//  * Downsampling on the centred samples: pairs summed by a multiply-add with ones, libjpeg's
//    alternating bias added, shifted (the 128 offsets cancel exactly).
//  * Forward DCT: one block per 128-bit lane (2 per AVX2 register, 4 per AVX-512 register),
//    rows in 8 registers; transpose, the row pass, transpose, the column pass, all in 16-bit
//    lanes with the rotations as 16x16->32-bit multiply-adds of interleaved pairs (LL&M with
//    the constants pre-combined, as libjpeg-turbo's SIMD code does: the same integer sums).
//    16 bits are enough: row-pass outputs lie in [-4096, 4064] (8 samples of [-128, 127],
//    scaled by 4; the AC outputs are smaller), so a column-pass sum of 8 of them fits, the
//    DC's rounding constant being added to half of it first (-16384 + 2 - 16384 at the
//    extreme). Products and sums of products are exact in 32 bits, as in the reference; tests
//    compare with it on blocks that drive every coefficient to its extremes.
//  * Zigzag: byte shuffles of the column pass's outputs, ORed; those are packed into registers
//    in pairs of half rows chosen to need few shuffles (SSE2: natural rows, through memory).
//  * Quantization: round half away from zero of c / (8q) as
//        |c| -> m = (|c| + 4q) >> 1 (an unsigned average with 4q - 1, so no overflow),
//        t = (m * R) >> 16,  r = (t * 2^(16-s)) >> 16
//    with 2^s < 4q <= 2^(s+1) and R = ceil(2^(16+s) / 4q) < 2^16: the error of R is below
//    1 / (4q) for every m < 2^15, so r = floor(m / 4q) = floor((|c| + 4q) / 8q) exactly, for
//    every int16 c and q <= 8191; q = 8192 and above are special constants (the result is 0,
//    or 1 only for c = -32768 at q = 8192). Tested for every int16 and every q in 1..32767.
#include "jpeg/transform_simd.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <vector>

#include "core/jpeg_math.hpp"
#include "core/rdo.hpp"

// GCC: per-function target pragmas (as huffman.cpp). clang (the fuzz build): the same code
// under `#pragma clang attribute`, so the fuzzers cover the vector variants too.
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define MJPEG_TX_X86 1
#else
#define MJPEG_TX_X86 0
#endif

#define MJPEG_TX_INLINE inline __attribute__((always_inline))
#define MJPEG_TX_NOINLINE __attribute__((noinline))

namespace mjpeg::simd {

#if MJPEG_TX_X86
namespace {

// ---------------------------------------------------------------------------------------------
// Tables shared by the variants.
// ---------------------------------------------------------------------------------------------

/// Where the column pass leaves the coefficients for the zigzag (AVX2, AVX-512): 8 registers
/// of 8 words per block, kZigzagSources[s][w] the natural index in word w of register s. Rows
/// 0, 4 and 7 are whole; the other rows' halves (columns 0-3, 4-7) are packed in pairs chosen
/// so that the zigzag chunks draw on as few registers as possible (27 shuffles, 36 with whole
/// rows).
constexpr std::uint8_t kZigzagSources[8][8] = {
    {0, 1, 2, 3, 4, 5, 6, 7},         {32, 33, 34, 35, 36, 37, 38, 39},
    {8, 9, 10, 11, 16, 17, 18, 19},   {12, 13, 14, 15, 24, 25, 26, 27},
    {20, 21, 22, 23, 28, 29, 30, 31}, {40, 41, 42, 43, 48, 49, 50, 51},
    {44, 45, 46, 47, 52, 53, 54, 55}, {56, 57, 58, 59, 60, 61, 62, 63}};

/// Zigzag as byte shuffles: chunk j (coefficients 8j .. 8j+7 in zigzag order) is the OR of
/// shuffle(source s, mask[j][s]) over the sources s set in sources[j]. Each 16-byte mask is
/// repeated for 4 lanes.
struct ZigzagPlan {
  std::uint8_t sources[8] = {};
  alignas(64) std::uint8_t mask[8][8][64] = {};
};

constexpr ZigzagPlan make_zigzag_plan() {
  ZigzagPlan p;
  for (int j = 0; j < 8; ++j)
    for (int s = 0; s < 8; ++s)
      for (int b = 0; b < 64; ++b) p.mask[j][s][b] = 0x80;  // shuffle in a zero
  for (int k = 0; k < 64; ++k) {
    const int n = math::kZigzagToNatural[k];
    int src = 0, word = 0;
    for (int s = 0; s < 8; ++s)
      for (int w = 0; w < 8; ++w)
        if (kZigzagSources[s][w] == n) src = s, word = w;
    const int j = k / 8, i = k % 8;
    p.sources[j] = static_cast<std::uint8_t>(p.sources[j] | (1 << src));
    for (int lane = 0; lane < 4; ++lane) {
      p.mask[j][src][16 * lane + 2 * i] = static_cast<std::uint8_t>(2 * word);
      p.mask[j][src][16 * lane + 2 * i + 1] = static_cast<std::uint8_t>(2 * word + 1);
    }
  }
  return p;
}

constexpr ZigzagPlan kZigzag = make_zigzag_plan();

/// The vector quantizer's constants for one table value q (see the header comment), rounding
/// up from `half` / 8q (4q: libjpeg's half a step; less: the dead zone of Rdo::deadzone).
struct QuantLane {
  std::uint16_t add, recip, scale;
};

constexpr QuantLane quant_lane(int q, int half) {
  if (q <= 8191) {
    const std::uint32_t d = 4u * static_cast<std::uint32_t>(q);
    int s = 0;
    while ((std::uint32_t{1} << (s + 1)) < d) ++s;  // 2^s < d <= 2^(s+1), 1 <= s <= 14
    const std::uint32_t recip = ((std::uint32_t{1} << (16 + s)) + d - 1) / d;
    // m = avg(|c|, half - 1) = (|c| + half) >> 1, computed without overflow; then
    // floor(m / 4q) = floor((|c| + half) / 8q).
    return {static_cast<std::uint16_t>(half - 1), static_cast<std::uint16_t>(recip),
            static_cast<std::uint16_t>(1u << (16 - s))};
  }
  // 4q >= 32768 >= |c|: (|c| + 4q) / 8q is 1 only for |c| = 32768 at q = 8192. There
  // m = avg(|c|, 1) is 16385 only for |c| = 32768 (16384 and below otherwise), and
  // t = m * 65535 >> 16 = 16384 (16383 and below), r = t * 4 >> 16 = 1 (0 below).
  if (q == 8192) return {1, 65535, 4};
  return {0, 0, 0};
}

/// One quantization table for the kernels: zigzag order in chunks of 8 repeated for 4 lanes
/// (AVX2, AVX-512), and natural order (SSE2, which quantizes before its zigzag).
struct QuantConstants {
  alignas(64) std::uint16_t zz_add[8][32];
  alignas(64) std::uint16_t zz_recip[8][32];
  alignas(64) std::uint16_t zz_scale[8][32];
  alignas(64) std::uint16_t nat_add[64];
  alignas(64) std::uint16_t nat_recip[64];
  alignas(64) std::uint16_t nat_scale[64];
  /// Rdo::trellis: the blocks are stored unquantized, then searched (core/rdo.hpp) with these.
  const math::TrellisModel* trellis = nullptr;
  const math::QuantDivisor* divisor = nullptr;
  int comp = 0;
};

void build_quant_constants(const QuantTables& tables, int comp, QuantConstants& c) {
  const std::uint16_t* natural = tables.natural[tables.slot[comp]];
  const math::QuantDivisor* divisor = tables.component_divisor(comp);
  c.trellis = tables.rdo == Rdo::trellis ? &tables.trellis : nullptr;
  c.divisor = divisor;
  c.comp = comp;
  for (int n = 0; n < 64; ++n) {
    const QuantLane l = quant_lane(natural[n], divisor[n].half);
    c.nat_add[n] = l.add;
    c.nat_recip[n] = l.recip;
    c.nat_scale[n] = l.scale;
  }
  for (int k = 0; k < 64; ++k) {
    const int n = math::kZigzagToNatural[k];
    for (int lane = 0; lane < 4; ++lane) {
      c.zz_add[k / 8][8 * lane + k % 8] = c.nat_add[n];
      c.zz_recip[k / 8][8 * lane + k % 8] = c.nat_recip[n];
      c.zz_scale[k / 8][8 * lane + k % 8] = c.nat_scale[n];
    }
  }
}

/// The trellis search of n blocks (zigzag order) whose FDCT outputs are at raw and nearest
/// levels at out: out gets the levels the search chooses (the DC its FDCT output, for
/// math::trellis_dc_row).
void search_blocks(const QuantConstants& q, const std::int16_t* raw, std::int16_t* out, int n) {
  for (int b = 0; b < n; ++b) {
    const std::int16_t* r = raw + 64 * b;
    std::int16_t* block = out + 64 * b;
    const std::uint64_t candidates = math::nonzero_levels(block);
    if (candidates == 0) {  // the DC alone: what the search would leave
      block[0] = r[0];
      continue;
    }
    math::trellis_search([r](int k) { return r[k]; }, [block](int k) { return block[k]; },
                         candidates, q.divisor, *q.trellis, q.comp,
                         math::zigzag_block_lambda(r, *q.trellis, q.comp), block);
  }
}

/// Per-thread buffers, grown to the largest geometry seen (nothing is allocated per frame).
struct Workspace {
  std::vector<std::int16_t> samples;  // the band's component planes (+ rows for junk output)
  std::vector<std::int16_t> raw;      // Rdo::trellis: a block row's unquantized blocks
  std::vector<std::uint8_t> tail;     // the end of one or two pixel rows, edge replicated
  QuantConstants quant[3];  // per component
};

/// The band's component planes: plane[c] rows of stride[c] samples; junk_* are scratch rows
/// for output that is not needed (4:2:0 bottom edge).
struct BandPlanes {
  std::int16_t* plane[kMaxComponents] = {};
  std::ptrdiff_t stride[kMaxComponents] = {};
  std::int16_t* junk_y = nullptr;  // 2 rows of stride[0]
  std::int16_t* junk_c = nullptr;  // 2 rows of stride[1] (Cb, Cr)
  std::uint8_t* tail = nullptr;
};

Workspace& workspace() {
  thread_local Workspace ws;
  return ws;
}

/// Room for n unquantized blocks (this thread's, reused from row to row).
std::int16_t* trellis_row(int n) {
  std::vector<std::int16_t>& raw = workspace().raw;
  if (raw.size() < static_cast<std::size_t>(n) * 64) raw.resize(static_cast<std::size_t>(n) * 64);
  return raw.data();
}

/// Sizes the workspace for a band of `g` whose luma rows are `luma_stride` samples wide
/// (chroma rows half that when `subsampled`) and carves it into planes.
BandPlanes prepare_workspace(Workspace& ws, const FrameGeometry& g, std::ptrdiff_t luma_stride,
                             bool subsampled, std::size_t tail_bytes) {
  BandPlanes p;
  const std::ptrdiff_t chroma_stride = subsampled ? luma_stride / 2 : luma_stride;
  const std::ptrdiff_t luma_rows = 8 * g.max_v;
  const std::ptrdiff_t chroma_rows = g.num_components == 1 ? 0 : 8;
  const std::size_t need = static_cast<std::size_t>(
      (luma_rows + 2) * luma_stride + (2 * chroma_rows + 2) * chroma_stride);
  if (ws.samples.size() < need) ws.samples.resize(need);  // zero-filled: no junk is undefined
  if (ws.tail.size() < tail_bytes) ws.tail.resize(tail_bytes);
  std::int16_t* at = ws.samples.data();
  p.plane[0] = at;
  p.stride[0] = luma_stride;
  at += luma_rows * luma_stride;
  for (int c = 1; c < g.num_components; ++c) {
    p.plane[c] = at;
    p.stride[c] = chroma_stride;
    at += chroma_rows * chroma_stride;
  }
  p.junk_y = at;
  at += 2 * luma_stride;
  p.junk_c = at;
  p.tail = ws.tail.data();
  return p;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The variants: transform_simd_variant.inc compiled once per instruction set.
// ---------------------------------------------------------------------------------------------
namespace sse2 {
#define MJPEG_TX_BITS 128
#include "jpeg/transform_simd_variant.inc"
#undef MJPEG_TX_BITS
}  // namespace sse2

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif
namespace avx2 {
#define MJPEG_TX_BITS 256
#include "jpeg/transform_simd_variant.inc"
#undef MJPEG_TX_BITS
}  // namespace avx2
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,avx512f,avx512bw,avx512vbmi"))), \
                             apply_to = function)
#else
#pragma GCC push_options
// GCC 12 warns (falsely) about the _mm512_undefined_* inside its own intrinsic headers.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC target("avx2,avx512f,avx512bw,avx512vbmi")
#endif
namespace avx512 {
#define MJPEG_TX_BITS 512
#include "jpeg/transform_simd_variant.inc"
#undef MJPEG_TX_BITS
}  // namespace avx512
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC diagnostic pop
#pragma GCC pop_options
#endif

namespace {

bool cpu_has_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2");
}
bool cpu_has_avx512() {
  return cpu_has_avx2() && __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi");
}
bool always() { return true; }

// Best first.
const TransformVariant kVariants[] = {
    {"avx512", cpu_has_avx512, avx512::transform, avx512::quantize_values},
    {"avx2", cpu_has_avx2, avx2::transform, avx2::quantize_values},
    {"sse2", always, sse2::transform, sse2::quantize_values},
};

}  // namespace

const TransformVariant* variants(std::size_t& count) {
  count = std::size(kVariants);
  return kVariants;
}

#else  // no x86-64: the scalar reference only

const TransformVariant* variants(std::size_t& count) {
  count = 0;
  return nullptr;
}

#endif

}  // namespace mjpeg::simd
