#include "jpeg/planar.hpp"

#include <cstring>

#include "mjpeg/error.hpp"
#include "mjpeg/options.hpp"

// The x86 vector path (AVX2, picked at run time): the same arithmetic in 32-bit lanes, 8 pixels
// at a time; GCC per-function target pragmas, clang the same code under `#pragma clang
// attribute` (as transform_simd.cpp).
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define MJPEG_PLANAR_X86 1
#else
#define MJPEG_PLANAR_X86 0
#endif

namespace mjpeg {
namespace {

/// One row of `width` pixels whose chroma samples each cover 1 << SX pixels (the last one fewer
/// at an odd width), from pixel x0 on. kTruncated: the form, fixed per loop so that the
/// compiler drops the other.
template <int SX, bool kTruncated>
void convert_row(const math::YccToRgb& k, const std::uint8_t* py, const std::uint8_t* pb,
                 const std::uint8_t* pr, int x0, int width, std::uint8_t* rgb) {
  math::YccToRgb kk = k;
  kk.truncated = kTruncated;
  for (int x = x0; x < width; x += 1 << SX) {
    const math::ChromaTerms c = math::ycc_chroma_terms(kk, pb[x >> SX], pr[x >> SX]);
    for (int i = 0; i < (1 << SX) && x + i < width; ++i) {
      const int l = math::ycc_luma_term(kk, py[x + i]);
      std::uint8_t* o = rgb + 3 * (x + i);
      o[0] = static_cast<std::uint8_t>(math::ycc_channel(kk, l, c.r));
      o[1] = static_cast<std::uint8_t>(math::ycc_channel(kk, l, c.g));
      o[2] = static_cast<std::uint8_t>(math::ycc_channel(kk, l, c.b));
    }
  }
}

}  // namespace
}  // namespace mjpeg

#if MJPEG_PLANAR_X86
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif
namespace mjpeg::planar_avx2 {
namespace {

/// Pixels 0 .. 8n-1 of the row (8n <= width); returns 8n. math::ycc_to_rgb lane by lane:
/// rounded: (cy*(Y-y0) + 2^15 + chroma term) >> 16; truncated: ((8Y-y0)*cy) >> 16 plus each
/// chroma product >> 16 (the products fit 32 bits, so the arithmetic shift is the floor of the
/// 16 x 16-bit high half); then clamped to 0..255.
template <int SX, bool kTruncated>
int convert_row(const math::YccToRgb& k, const std::uint8_t* py, const std::uint8_t* pb,
                const std::uint8_t* pr, int width, std::uint8_t* rgb) {
  const __m256i y0 = _mm256_set1_epi32(k.y0), cy = _mm256_set1_epi32(k.cy);
  const __m256i cr_r = _mm256_set1_epi32(k.cr_r), cb_g = _mm256_set1_epi32(k.cb_g);
  const __m256i cr_g = _mm256_set1_epi32(k.cr_g), cb_b = _mm256_set1_epi32(k.cb_b);
  const __m256i zero = _mm256_setzero_si256(), top = _mm256_set1_epi32(255);
  const __m256i pairs = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
  const __m256i interleave = _mm256_setr_epi8(0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11, -1, -1, -1, -1,
                                              0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11, -1, -1, -1, -1);
  const int n = width & ~7;
  for (int x = 0; x < n; x += 8) {
    const __m256i yv = _mm256_cvtepu8_epi32(
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(py + x)));
    __m256i u, v;
    if constexpr (SX == 1) {
      int b4, r4;
      std::memcpy(&b4, pb + (x >> 1), 4);
      std::memcpy(&r4, pr + (x >> 1), 4);
      u = _mm256_permutevar8x32_epi32(_mm256_cvtepu8_epi32(_mm_cvtsi32_si128(b4)), pairs);
      v = _mm256_permutevar8x32_epi32(_mm256_cvtepu8_epi32(_mm_cvtsi32_si128(r4)), pairs);
    } else {
      u = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(pb + x)));
      v = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(pr + x)));
    }
    __m256i r, g, b;
    if constexpr (kTruncated) {
      const __m256i c1024 = _mm256_set1_epi32(1024);
      const __m256i yt = _mm256_srai_epi32(
          _mm256_mullo_epi32(_mm256_sub_epi32(_mm256_slli_epi32(yv, 3), y0), cy), 16);
      u = _mm256_sub_epi32(_mm256_slli_epi32(u, 3), c1024);
      v = _mm256_sub_epi32(_mm256_slli_epi32(v, 3), c1024);
      r = _mm256_add_epi32(yt, _mm256_srai_epi32(_mm256_mullo_epi32(v, cr_r), 16));
      g = _mm256_add_epi32(_mm256_add_epi32(yt, _mm256_srai_epi32(_mm256_mullo_epi32(u, cb_g), 16)),
                           _mm256_srai_epi32(_mm256_mullo_epi32(v, cr_g), 16));
      b = _mm256_add_epi32(yt, _mm256_srai_epi32(_mm256_mullo_epi32(u, cb_b), 16));
    } else {
      const __m256i c128 = _mm256_set1_epi32(128);
      const __m256i yy = _mm256_add_epi32(
          _mm256_mullo_epi32(_mm256_sub_epi32(yv, y0), cy), _mm256_set1_epi32(math::kOneHalf));
      u = _mm256_sub_epi32(u, c128);
      v = _mm256_sub_epi32(v, c128);
      r = _mm256_srai_epi32(_mm256_add_epi32(yy, _mm256_mullo_epi32(cr_r, v)), 16);
      g = _mm256_srai_epi32(_mm256_add_epi32(_mm256_add_epi32(yy, _mm256_mullo_epi32(cb_g, u)),
                                             _mm256_mullo_epi32(cr_g, v)),
                            16);
      b = _mm256_srai_epi32(_mm256_add_epi32(yy, _mm256_mullo_epi32(cb_b, u)), 16);
    }
    // Clamp, then per 128-bit lane: R0-3 G0-3 B0-3 as bytes, interleaved to R G B R G B ...
    r = _mm256_min_epi32(_mm256_max_epi32(r, zero), top);
    g = _mm256_min_epi32(_mm256_max_epi32(g, zero), top);
    b = _mm256_min_epi32(_mm256_max_epi32(b, zero), top);
    const __m256i bytes = _mm256_shuffle_epi8(
        _mm256_packus_epi16(_mm256_packs_epi32(r, g), _mm256_packs_epi32(b, zero)), interleave);
    const __m128i lo = _mm256_castsi256_si128(bytes), hi = _mm256_extracti128_si256(bytes, 1);
    std::uint8_t* o = rgb + 3 * x;  // 12 bytes from each lane
    _mm_storel_epi64(reinterpret_cast<__m128i*>(o), lo);
    const int lo4 = _mm_extract_epi32(lo, 2), hi4 = _mm_extract_epi32(hi, 2);
    std::memcpy(o + 8, &lo4, 4);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(o + 12), hi);
    std::memcpy(o + 20, &hi4, 4);
  }
  return n;
}

}  // namespace

int convert(int sx, bool truncated, const math::YccToRgb& k, const std::uint8_t* py,
            const std::uint8_t* pb, const std::uint8_t* pr, int width, std::uint8_t* rgb) {
  if (sx) {
    return truncated ? convert_row<1, true>(k, py, pb, pr, width, rgb)
                     : convert_row<1, false>(k, py, pb, pr, width, rgb);
  }
  return truncated ? convert_row<0, true>(k, py, pb, pr, width, rgb)
                   : convert_row<0, false>(k, py, pb, pr, width, rgb);
}

}  // namespace mjpeg::planar_avx2
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif

namespace mjpeg {
namespace {

bool vector_rows() {
#if MJPEG_PLANAR_X86
  static const bool avx2 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return avx2;
#else
  return false;
#endif
}

/// Cb = Cr = 128 for every pixel of a mono row (the widest row there is).
const std::uint8_t* grey_row() {
  static const std::vector<std::uint8_t> grey(kMaxDimension, 128);
  return grey.data();
}

void row_to_rgb(const PlanarView& f, int y, std::uint8_t* rgb, bool vector) {
  const math::YccToRgb& k = f.format.ycc;
  const std::uint8_t* py = f.plane[0] + static_cast<std::size_t>(y) * f.pitch[0];
  const std::uint8_t* pb = grey_row();
  const std::uint8_t* pr = pb;
  int sx = 0;
  if (f.format.has_chroma()) {
    const std::size_t crow = static_cast<std::size_t>(y >> f.format.shift_y());
    pb = f.plane[1] + crow * f.pitch[1];
    pr = f.plane[2] + crow * f.pitch[2];
    sx = f.format.shift_x();
  }
  const bool t = k.truncated != 0;
  int x0 = 0;
#if MJPEG_PLANAR_X86
  if (vector) x0 = planar_avx2::convert(sx, t, k, py, pb, pr, f.width, rgb);
#else
  (void)vector;
#endif
  if (sx)
    t ? convert_row<1, true>(k, py, pb, pr, x0, f.width, rgb)
      : convert_row<1, false>(k, py, pb, pr, x0, f.width, rgb);
  else
    t ? convert_row<0, true>(k, py, pb, pr, x0, f.width, rgb)
      : convert_row<0, false>(k, py, pb, pr, x0, f.width, rgb);
}

}  // namespace

void planar_row_to_rgb(const PlanarView& f, int y, std::uint8_t* rgb) {
  row_to_rgb(f, y, rgb, vector_rows());
}

void planar_row_to_rgb_scalar(const PlanarView& f, int y, std::uint8_t* rgb) {
  row_to_rgb(f, y, rgb, false);
}

const char* planar_row_variant() { return vector_rows() ? "avx2" : "scalar"; }

void planar_to_rgb(const PlanarView& f, std::uint8_t* rgb, std::size_t stride) {
  if (rgb == nullptr || f.plane[0] == nullptr || stride < static_cast<std::size_t>(f.width) * 3)
    throw UsageError("planar_to_rgb: null buffer or stride smaller than width*3");
  if (f.format.has_chroma() && (f.plane[1] == nullptr || f.plane[2] == nullptr))
    throw UsageError("planar_to_rgb: missing chroma planes");
  for (int y = 0; y < f.height; ++y)
    planar_row_to_rgb(f, y, rgb + static_cast<std::size_t>(y) * stride);
}

void PlanarRows::set_frame(const PlanarView& frame) {
  if (!frame.format.planar() || frame.plane[0] == nullptr ||
      (frame.format.has_chroma() && (frame.plane[1] == nullptr || frame.plane[2] == nullptr)))
    throw UsageError("PlanarRows: incomplete planar frame");
  frame_ = frame;
  scratch_.resize(static_cast<std::size_t>(kMaxBandRows) * frame.width * 3);
}

void PlanarRows::band(int y0, int count, const std::uint8_t** rows) {
  const std::size_t row = static_cast<std::size_t>(frame_.width) * 3;
  for (int i = 0; i < count; ++i) {
    std::uint8_t* out = scratch_.data() + static_cast<std::size_t>(i) * row;
    planar_row_to_rgb(frame_, y0 + i, out);
    rows[i] = out;
  }
}

void transform_cpu(const PlanarView& frame, const FrameGeometry& geometry,
                   const QuantTables& tables, std::int16_t* coeffs) {
  PlanarRows rows(frame);
  transform_cpu(rows, geometry, tables, coeffs);
}

}  // namespace mjpeg
