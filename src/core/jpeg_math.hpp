// The per-pixel and per-block arithmetic of baseline JPEG, compiled by both g++ (the CPU
// reference path) and nvcc (the GPU kernels), so the two cannot drift apart.
//
// Every function reproduces libjpeg-turbo's integer arithmetic exactly (facts taken from its
// documentation and sources; the code is our own):
//  - RGB -> YCbCr: 16 fractional bits, ONE_HALF rounding for Y, ONE_HALF-1 plus the 128 offset
//    for Cb/Cr (jccolor.c);
//  - downsampling: h2v1 averages pairs with a bias alternating 0,1 along the row; h2v2 averages
//    2x2 quads with a bias alternating 1,2 (jcsample.c);
//  - forward DCT: the LL&M "islow" integer DCT, 13 constant bits, 2 pass-1 bits, output scaled
//    up by 8 (jfdctint.c);
//  - quantization: round half away from zero of coef / (8 * q) (jcdctmgr.c), computed here with
//    an exact 32-bit reciprocal (or with a smaller rounding offset: the dead zone of --rdo).
#pragma once

#include <cstdint>

#if defined(__SSE2__) && !defined(__CUDA_ARCH__)
#include <emmintrin.h>
#endif

#if defined(__CUDACC__)
#define MJPEG_HD __host__ __device__ __forceinline__
#else
#define MJPEG_HD inline
#endif

namespace mjpeg::math {

// ---------------------------------------------------------------------------------------------
// Colour conversion
// ---------------------------------------------------------------------------------------------
constexpr int kScaleBits = 16;
constexpr std::int32_t kOneHalf = std::int32_t{1} << (kScaleBits - 1);
constexpr std::int32_t kCbCrOffset = std::int32_t{128} << kScaleBits;
// FIX(x) = round(x * 2^16)
constexpr std::int32_t kFix0_29900 = 19595;
constexpr std::int32_t kFix0_58700 = 38470;
constexpr std::int32_t kFix0_11400 = 7471;
constexpr std::int32_t kFix0_16874 = 11059;
constexpr std::int32_t kFix0_33126 = 21709;
constexpr std::int32_t kFix0_50000 = 32768;
constexpr std::int32_t kFix0_41869 = 27439;
constexpr std::int32_t kFix0_08131 = 5329;

/// Luma of one RGB pixel (also libjpeg's RGB -> grayscale conversion).
MJPEG_HD int rgb_to_y(int r, int g, int b) {
  return (kFix0_29900 * r + kFix0_58700 * g + kFix0_11400 * b + kOneHalf) >> kScaleBits;
}
MJPEG_HD int rgb_to_cb(int r, int g, int b) {
  return (-kFix0_16874 * r - kFix0_33126 * g + kFix0_50000 * b + kCbCrOffset + kOneHalf - 1) >>
         kScaleBits;
}
MJPEG_HD int rgb_to_cr(int r, int g, int b) {
  return (kFix0_50000 * r - kFix0_41869 * g - kFix0_08131 * b + kCbCrOffset + kOneHalf - 1) >>
         kScaleBits;
}

// ---------------------------------------------------------------------------------------------
// YCbCr -> RGB of planar 8-bit sources (Y4M files, decoded video), before rgb_to_* above: the
// frame is encoded exactly as the RGB these functions give (so cjpeg on that RGB is the oracle).
// Chroma is upsampled by nearest neighbour (each Cb/Cr sample covers its 2x2 / 2x1 / 1x1
// pixels); mono frames use Cb = Cr = 128. Two integer forms, fixed per source:
//
//  rounded (Y4M, io::yuv_to_rgb24): 16 fractional bits, one rounding per channel:
//    R = clamp((cy*(Y - y0) + cr_r*(Cr - 128)                  + 2^15) >> 16)
//    G = clamp((cy*(Y - y0) + cb_g*(Cb - 128) + cr_g*(Cr - 128) + 2^15) >> 16)
//    B = clamp((cy*(Y - y0) + cb_b*(Cb - 128)                  + 2^15) >> 16)
//  (cb_g, cr_g are negative), with the coefficients of make_rounded_ycc.
//
//  truncated (FFmpeg-decoded 4:2:0 / 4:2:2 frames): the arithmetic of libswscale's unscaled
//  yuv420p/yuv422p -> RGB converter on x86 (what `ffmpeg -pix_fmt rgb24` gives for such
//  frames), so that the encoded pixels are ffmpeg's own RGB: samples are scaled by 8, each
//  product keeps only the high 16 bits of a 16 x 16-bit multiply (floor), nothing is rounded:
//    Yt = ((8*Y - y0) * cy) >> 16
//    R = clamp(Yt + (((8*Cr - 1024) * cr_r) >> 16))
//    G = clamp(Yt + (((8*Cb - 1024) * cb_g) >> 16) + (((8*Cr - 1024) * cr_g) >> 16))
//    B = clamp(Yt + (((8*Cb - 1024) * cb_b) >> 16))
//  with the coefficients of make_truncated_ycc (13 fractional bits).
// All intermediate values stay far inside 32 bits (and the truncated form's inside 16 bits,
// where libswscale's saturating adds therefore never saturate).
// ---------------------------------------------------------------------------------------------
struct YccToRgb {
  std::int32_t truncated = 0;  ///< 0: rounded form, 1: truncated form (see above)
  std::int32_t y0 = 0, cy = 0;
  std::int32_t cr_r = 0, cb_g = 0, cr_g = 0, cb_b = 0;
};

MJPEG_HD int clamp_255(int v) { return v < 0 ? 0 : (v > 255 ? 255 : v); }

/// A chroma sample's share of R, G and B (computed once per sample, then used for each of the
/// pixels it covers) and a pixel's luma share; ycc_to_rgb adds them up.
struct ChromaTerms {
  int r, g, b;
};
MJPEG_HD ChromaTerms ycc_chroma_terms(const YccToRgb& k, int cb, int cr) {
  if (k.truncated) {
    const int u = cb * 8 - 1024, v = cr * 8 - 1024;
    return {(v * k.cr_r) >> 16, ((u * k.cb_g) >> 16) + ((v * k.cr_g) >> 16), (u * k.cb_b) >> 16};
  }
  const int u = cb - 128, v = cr - 128;
  return {k.cr_r * v, k.cb_g * u + k.cr_g * v, k.cb_b * u};
}
MJPEG_HD int ycc_luma_term(const YccToRgb& k, int y) {
  return k.truncated ? ((y * 8 - k.y0) * k.cy) >> 16 : k.cy * (y - k.y0) + kOneHalf;
}
/// One channel from the luma term and that channel's chroma term.
MJPEG_HD int ycc_channel(const YccToRgb& k, int luma, int chroma) {
  return clamp_255(k.truncated ? luma + chroma : (luma + chroma) >> kScaleBits);
}

MJPEG_HD void ycc_to_rgb(const YccToRgb& k, int y, int cb, int cr, int& r, int& g, int& b) {
  const ChromaTerms c = ycc_chroma_terms(k, cb, cr);
  const int l = ycc_luma_term(k, y);
  r = ycc_channel(k, l, c.r);
  g = ycc_channel(k, l, c.g);
  b = ycc_channel(k, l, c.b);
}

/// Coefficients of the rounded form for a matrix given by its luma weights Kr, Kb
/// (Kg = 1 - Kr - Kb): cr_r = 2(1-Kr), cb_b = 2(1-Kb), cb_g = -2Kb(1-Kb)/Kg,
/// cr_g = -2Kr(1-Kr)/Kg, each times 2^16 and rounded; limited range ("TV": Y 16..235,
/// C 16..240) also subtracts 16 from Y and scales Y by 255/219 and chroma by 255/224.
/// (Host only: it rounds doubles.)
inline YccToRgb make_rounded_ycc(double kr, double kb, bool limited) {
  const double kg = 1.0 - kr - kb;
  const double ys = limited ? 255.0 / 219.0 : 1.0;
  const double cs = limited ? 255.0 / 224.0 : 1.0;
  auto fix = [](double v) {
    return static_cast<std::int32_t>(v < 0 ? -static_cast<long long>(-v * 65536.0 + 0.5)
                                           : static_cast<long long>(v * 65536.0 + 0.5));
  };
  YccToRgb k;
  k.truncated = 0;
  k.y0 = limited ? 16 : 0;
  k.cy = fix(ys);
  k.cr_r = fix(2.0 * (1.0 - kr) * cs);
  k.cb_g = -fix(2.0 * kb * (1.0 - kb) / kg * cs);
  k.cr_g = -fix(2.0 * kr * (1.0 - kr) / kg * cs);
  k.cb_b = fix(2.0 * (1.0 - kb) * cs);
  return k;
}

/// Coefficients of the truncated form from libswscale's table for a matrix
/// (sws_getCoefficients: {Cr->R, Cb->B, Cb->G, Cr->G} in 16 fractional bits, already scaled
/// for limited-range chroma), derived as libswscale derives them for its x86 converter:
/// limited range: cy = 2^16 * 255 / 219 (integer division), y0 = 16 * 8;
/// full range: cy = 2^16, y0 = 0, and the chroma entries times 224 / 255 (integer division);
/// then each coefficient = round(c * 2^13 / 2^16) (round half up), G's negated.
MJPEG_HD std::int32_t round_to_int16(long long v) {
  return static_cast<std::int32_t>((v + (1LL << 15)) >> 16);
}
inline YccToRgb make_truncated_ycc(const int table[4], bool limited) {
  long long crv = table[0], cbu = table[1], cgu = -static_cast<long long>(table[2]),
            cgv = -static_cast<long long>(table[3]);
  long long cy = 1LL << 16, oy = 0;
  if (limited) {
    cy = cy * 255 / 219;
    oy = 16LL << 16;
  } else {
    crv = crv * 224 / 255;
    cbu = cbu * 224 / 255;
    cgu = cgu * 224 / 255;
    cgv = cgv * 224 / 255;
  }
  YccToRgb k;
  k.truncated = 1;
  k.y0 = round_to_int16(oy * 8);
  k.cy = round_to_int16(cy * 8192);
  k.cr_r = round_to_int16(crv * 8192);
  k.cb_g = round_to_int16(cgu * 8192);
  k.cr_g = round_to_int16(cgv * 8192);
  k.cb_b = round_to_int16(cbu * 8192);
  return k;
}

// ---------------------------------------------------------------------------------------------
// Downsampling. `x` is the output column: the bias alternates along each output row.
// ---------------------------------------------------------------------------------------------
MJPEG_HD int downsample_h2v1(int a, int b, int x) { return (a + b + (x & 1)) >> 1; }
MJPEG_HD int downsample_h2v2(int a, int b, int c, int d, int x) {
  return (a + b + c + d + 1 + (x & 1)) >> 2;
}

// ---------------------------------------------------------------------------------------------
// Forward DCT ("islow"): in place on 64 centred samples (sample - 128), row-major.
// Output is the 2-D DCT scaled up by 8.
// ---------------------------------------------------------------------------------------------
constexpr int kConstBits = 13;
constexpr int kPass1Bits = 2;
constexpr std::int32_t kFix0_298631336 = 2446;
constexpr std::int32_t kFix0_390180644 = 3196;
constexpr std::int32_t kFix0_541196100 = 4433;
constexpr std::int32_t kFix0_765366865 = 6270;
constexpr std::int32_t kFix0_899976223 = 7373;
constexpr std::int32_t kFix1_175875602 = 9633;
constexpr std::int32_t kFix1_501321110 = 12299;
constexpr std::int32_t kFix1_847759065 = 15137;
constexpr std::int32_t kFix1_961570560 = 16069;
constexpr std::int32_t kFix2_053119869 = 16819;
constexpr std::int32_t kFix2_562915447 = 20995;
constexpr std::int32_t kFix3_072711026 = 25172;

MJPEG_HD std::int32_t descale(std::int32_t x, int n) { return (x + (std::int32_t{1} << (n - 1))) >> n; }

/// One 8-point pass over d[0], d[step], ..., d[7*step].
/// Pass 1 (rows) keeps kPass1Bits of extra precision; pass 2 (columns) removes it.
template <bool kPass1>
MJPEG_HD void fdct_8(std::int32_t* d, int step) {
  const std::int32_t tmp0 = d[0 * step] + d[7 * step];
  std::int32_t tmp7 = d[0 * step] - d[7 * step];
  const std::int32_t tmp1 = d[1 * step] + d[6 * step];
  std::int32_t tmp6 = d[1 * step] - d[6 * step];
  const std::int32_t tmp2 = d[2 * step] + d[5 * step];
  std::int32_t tmp5 = d[2 * step] - d[5 * step];
  const std::int32_t tmp3 = d[3 * step] + d[4 * step];
  std::int32_t tmp4 = d[3 * step] - d[4 * step];

  // Even part.
  const std::int32_t tmp10 = tmp0 + tmp3;
  const std::int32_t tmp13 = tmp0 - tmp3;
  const std::int32_t tmp11 = tmp1 + tmp2;
  const std::int32_t tmp12 = tmp1 - tmp2;
  constexpr int kEvenShift = kPass1 ? 0 : kPass1Bits;           // for outputs 0 and 4
  constexpr int kOddShift = kPass1 ? kConstBits - kPass1Bits : kConstBits + kPass1Bits;
  if (kPass1) {
    d[0 * step] = (tmp10 + tmp11) * (1 << kPass1Bits);
    d[4 * step] = (tmp10 - tmp11) * (1 << kPass1Bits);
  } else {
    d[0 * step] = descale(tmp10 + tmp11, kEvenShift);
    d[4 * step] = descale(tmp10 - tmp11, kEvenShift);
  }
  std::int32_t z1 = (tmp12 + tmp13) * kFix0_541196100;
  d[2 * step] = descale(z1 + tmp13 * kFix0_765366865, kOddShift);
  d[6 * step] = descale(z1 + tmp12 * -kFix1_847759065, kOddShift);

  // Odd part.
  z1 = tmp4 + tmp7;
  std::int32_t z2 = tmp5 + tmp6;
  std::int32_t z3 = tmp4 + tmp6;
  std::int32_t z4 = tmp5 + tmp7;
  const std::int32_t z5 = (z3 + z4) * kFix1_175875602;
  tmp4 *= kFix0_298631336;
  tmp5 *= kFix2_053119869;
  tmp6 *= kFix3_072711026;
  tmp7 *= kFix1_501321110;
  z1 *= -kFix0_899976223;
  z2 *= -kFix2_562915447;
  z3 = z3 * -kFix1_961570560 + z5;
  z4 = z4 * -kFix0_390180644 + z5;
  d[7 * step] = descale(tmp4 + z1 + z3, kOddShift);
  d[5 * step] = descale(tmp5 + z2 + z4, kOddShift);
  d[3 * step] = descale(tmp6 + z2 + z3, kOddShift);
  d[1 * step] = descale(tmp7 + z1 + z4, kOddShift);
}

/// Full 2-D islow FDCT in place on a row-major 8x8 block.
MJPEG_HD void fdct_islow(std::int32_t* block) {
  for (int row = 0; row < 8; ++row) fdct_8<true>(block + row * 8, 1);
  for (int col = 0; col < 8; ++col) fdct_8<false>(block + col, 8);
}

// ---------------------------------------------------------------------------------------------
// Quantization: round half away from zero of coef / divisor, divisor = 8 * q (the islow DCT's
// output scale), q in 1..32767 (values above 255 need 16-bit DQT tables, as libjpeg writes for
// qualities below 24 without force_baseline).
// recip = ceil(2^40 / divisor) makes ((n * recip) >> 40) == n / divisor exact for all
// n < 2^19 (DCT outputs stay below 2^14 in magnitude, divisor / 2 below 2^17): the error term
// n / 2^40 is under 2^-21, smaller than 1 / divisor >= 2^-18. So host and device agree with
// libjpeg's division without dividing.
// ---------------------------------------------------------------------------------------------
constexpr int kRecipShift = 40;

struct QuantDivisor {
  std::uint64_t recip;  ///< ceil(2^40 / divisor)
  std::int32_t half;    ///< the rounding offset: divisor / 2 (libjpeg), less for a dead zone
  std::int32_t step;    ///< the divisor, 8 * q
};

/// The divisor of table value q, rounding up from `round_eighths` / 8 of a step: 4 is
/// libjpeg's round half away from zero; 3 is the dead zone of Rdo::deadzone.
MJPEG_HD QuantDivisor make_divisor(int q, int round_eighths = 4) {
  const std::uint64_t divisor = static_cast<std::uint64_t>(q) * 8u;
  const std::uint64_t one = std::uint64_t{1} << kRecipShift;
  return QuantDivisor{(one + divisor - 1) / divisor, q * round_eighths,
                      static_cast<std::int32_t>(divisor)};
}

MJPEG_HD std::int16_t quantize(std::int32_t coef, QuantDivisor d) {
  const std::uint64_t mag = static_cast<std::uint64_t>((coef < 0 ? -coef : coef) + d.half);
  const auto q = static_cast<std::int32_t>((mag * d.recip) >> kRecipShift);
  return static_cast<std::int16_t>(coef < 0 ? -q : q);
}

// ---------------------------------------------------------------------------------------------
// Zigzag order: kZigzagToNatural[k] is the row-major index of the k-th coefficient in zigzag
// order. Coefficient buffers hold each block in zigzag order.
// ---------------------------------------------------------------------------------------------
inline constexpr std::uint8_t kZigzagToNatural[64] = {
    0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,
    12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6,  7,  14, 21, 28,
    35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
    58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63};

/// The index of the lowest set bit of x != 0.
MJPEG_HD int lowest_bit(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __ffsll(static_cast<long long>(x)) - 1;
#else
  return __builtin_ctzll(x);
#endif
}

/// One bit per zigzag position 1..63 of a block of levels (zz[0..64)) whose level is not 0.
MJPEG_HD std::uint64_t nonzero_levels(const std::int16_t* zz) {
#if defined(__SSE2__) && !defined(__CUDA_ARCH__)
  // 16 levels a step: compares to zero, packed to bytes, one bit each.
  const __m128i zero = _mm_setzero_si128();
  std::uint64_t zeros = 0;
  for (int i = 0; i < 4; ++i) {
    const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(zz + 16 * i));
    const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(zz + 16 * i + 8));
    const __m128i packed = _mm_packs_epi16(_mm_cmpeq_epi16(lo, zero), _mm_cmpeq_epi16(hi, zero));
    zeros |= static_cast<std::uint64_t>(_mm_movemask_epi8(packed) & 0xFFFF) << (16 * i);
  }
  return ~zeros & ~std::uint64_t{1};
#else
  std::uint64_t mask = 0;
  for (int k = 1; k < 64; ++k) mask |= static_cast<std::uint64_t>(zz[k] != 0) << k;
  return mask;
#endif
}

}  // namespace mjpeg::math
