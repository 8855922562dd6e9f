// The CPU transform's instruction-set variants (transform_simd.cpp) against the scalar
// reference (transform_cpu.cpp, plain math:: code), coefficient for coefficient, over the
// exactness matrix: sizes 1x1 .. 4001x9 and more, every sampling, rgb24 and gray8 input,
// qualities 1..100, extreme and random content, strided and unaligned views, rows from a
// callback source; the vector quantizer against math::quantize for every int16 coefficient and
// every table value 1..32767; and whole encodes with restarts through each variant against
// libjpeg-turbo. Each variant compiled into the build is a test parameter: one this CPU cannot
// run (AVX-512 on an AVX2 machine) shows as a skipped test with its name.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "common/oracle.hpp"
#include "common/test_media.hpp"
#include "common/variants.hpp"
#include "jpeg/entropy.hpp"
#include "core/geometry.hpp"
#include "core/quant.hpp"
#include "jpeg/transform_cpu.hpp"
#include "jpeg/transform_simd.hpp"
#include "core/jpeg_math.hpp"
#include "mjpeg/encoder.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg {
namespace {

using test::Image;

constexpr Subsampling kTransformSamplings[] = {Subsampling::s444, Subsampling::s422,
                                               Subsampling::s420, Subsampling::gray};

/// The vector variants compiled into this build (everything but the reference), whether or
/// not this CPU runs them: each is a test parameter.
std::vector<std::string> vector_variants() {
  return test::without(built_transform_variants(), "scalar");
}

#define MJPEG_NEED_TRANSFORM(variant) MJPEG_NEED_VARIANT("CPU transform", variant, transform_variants())

std::vector<std::int16_t> transform(const std::string& variant, const ImageView& view,
                                    Subsampling s, int quality, Rdo rdo = Rdo::off) {
  const Subsampling sampling = view.format == PixelFormat::gray8 ? Subsampling::gray : s;
  const FrameGeometry g = make_geometry(view.width, view.height, sampling);
  EncodeOptions o;
  o.quality = quality;
  o.subsampling = sampling;
  o.rdo = rdo;
  const QuantTables t = make_quant_tables(o, g.num_components);
  // Filled with a value no transform writes at every position, so a skipped block shows.
  std::vector<std::int16_t> out(g.coefficient_count(), 0x5A5A);
  transform_cpu(variant, view, g, t, out.data());
  return out;
}

/// Where two coefficient buffers first differ, as text ("" when equal).
std::string first_difference(const std::vector<std::int16_t>& got,
                             const std::vector<std::int16_t>& want, const FrameGeometry& g) {
  if (got.size() != want.size()) return "sizes differ";
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] == want[i]) continue;
    const std::size_t block = i / kBlockSize;
    int c = 0;
    while (c + 1 < g.num_components && block >= g.comp[c + 1].block_offset) ++c;
    const std::size_t in_plane = block - g.comp[c].block_offset;
    return "component " + std::to_string(c) + " block (" +
           std::to_string(in_plane / g.comp[c].blocks_w) + ", " +
           std::to_string(in_plane % g.comp[c].blocks_w) + ") zigzag " +
           std::to_string(i % kBlockSize) + ": got " + std::to_string(got[i]) + ", want " +
           std::to_string(want[i]);
  }
  return "";
}

std::string name_of(const ImageView& v, Subsampling s, int q) {
  return std::to_string(v.width) + "x" + std::to_string(v.height) +
         (v.format == PixelFormat::gray8 ? " gray8 " : " rgb24 ") + to_string(s) + " q" +
         std::to_string(q);
}

/// Variant `v` equals the scalar reference on `view` at every quality in `qualities`.
void expect_variant_matches(const std::string& v, const ImageView& view, Subsampling s,
                            const std::vector<int>& qualities, Rdo rdo = Rdo::off) {
  for (int q : qualities) {
    const std::vector<std::int16_t> want = transform("scalar", view, s, q, rdo);
    const FrameGeometry g = make_geometry(
        view.width, view.height, view.format == PixelFormat::gray8 ? Subsampling::gray : s);
    const std::vector<std::int16_t> got = transform(v, view, s, q, rdo);
    const std::string diff = first_difference(got, want, g);
    ASSERT_TRUE(diff.empty()) << v << " on " << name_of(view, s, q) << " --rdo " << to_string(rdo)
                              << ": " << diff;
  }
}

std::vector<int> every_quality() {
  std::vector<int> q(100);
  for (int i = 0; i < 100; ++i) q[i] = i + 1;
  return q;
}

const std::vector<int> kSomeQualities = {1, 10, 23, 24, 50, 75, 90, 95, 100};

TEST(TransformVariants, ListEndsWithTheReferenceAndStartsWithTheDefault) {
  const std::vector<std::string> all = transform_variants();
  ASSERT_FALSE(all.empty());
  std::string names;
  for (const std::string& v : all) names += " " + v;
  std::printf("CPU transform variants:%s (default %s)\n", names.c_str(), transform_variant());
  EXPECT_EQ(all.back(), "scalar");
  // The variants this CPU runs are those of the build that it can run, in the same order.
  std::vector<std::string> built = built_transform_variants(), runnable;
  for (const std::string& v : built)
    if (std::find(all.begin(), all.end(), v) != all.end()) runnable.push_back(v);
  EXPECT_EQ(runnable, all);
  if (const char* forced = std::getenv("MJPEG_CPU_TRANSFORM"); forced && *forced)
    EXPECT_EQ(std::string(transform_variant()), forced);
  else
    EXPECT_EQ(all.front(), transform_variant());
#if defined(__x86_64__)
  EXPECT_NE(std::find(all.begin(), all.end(), "sse2"), all.end()) << "SSE2 is x86-64's baseline";
#endif
  const Image img = test::synthetic(8, 8, 3);
  const FrameGeometry g = make_geometry(8, 8, Subsampling::s444);
  const QuantTables t = make_quant_tables(90, 2);
  std::vector<std::int16_t> out(g.coefficient_count());
  EXPECT_THROW(transform_cpu("no-such-variant", img.view(), g, t, out.data()), Error);
}

// ---------------------------------------------------------------------------------------------
// The vector quantizer: every int16 coefficient, every table value, in four parts (ctest runs
// them in parallel).
// ---------------------------------------------------------------------------------------------
class QuantizerExhaustive : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(QuantizerExhaustive, EqualsMathQuantizeForEveryCoefficient) {
  const std::string v = std::get<0>(GetParam());
  MJPEG_NEED_TRANSFORM(v);
  const int part = std::get<1>(GetParam());
  const int q_first = 1 + part * 8192, q_last = std::min(32767, (part + 1) * 8192);
  std::vector<std::int16_t> in(65536), want(65536), got(65536);
  for (int i = 0; i < 65536; ++i) in[i] = static_cast<std::int16_t>(i - 32768);
  for (int q = q_first; q <= q_last; ++q) {
    quantize_values("scalar", in.data(), want.data(), in.size(), q);
    quantize_values(v, in.data(), got.data(), in.size(), q);
    if (got != want) {
      for (int i = 0; i < 65536; ++i)
        ASSERT_EQ(got[i], want[i]) << v << ": coefficient " << in[i] << ", q " << q;
    }
  }
  // The reference itself is the rounding libjpeg uses (spot checks; Quant.* checks it more).
  const math::QuantDivisor d = math::make_divisor(q_first);
  EXPECT_EQ(math::quantize(4 * q_first, d), 1);
  EXPECT_EQ(math::quantize(4 * q_first - 1, d), 0);
  EXPECT_EQ(math::quantize(-4 * q_first, d), -1);
}

INSTANTIATE_TEST_SUITE_P(QuarterOfTheTableValues, QuantizerExhaustive,
                         ::testing::Combine(::testing::ValuesIn(vector_variants()),
                                            ::testing::Range(0, 4)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" +
                                  std::to_string(std::get<1>(info.param));
                         });

// ---------------------------------------------------------------------------------------------
// Whole transforms against the reference.
// ---------------------------------------------------------------------------------------------
struct Size {
  int w, h;
};

// Edges of every kind: 1..3 pixel strips, one MCU +/- 1, MCU-aligned in one direction only,
// chunk boundaries of every vector width (8, 16, 32 pixels) +/- 1 and +/- 2 (the loads read a
// little beyond a chunk), long thin frames, odd large ones.
constexpr Size kSizes[] = {
    {1, 1},    {2, 2},     {3, 3},    {4, 1},     {1, 4},    {7, 5},    {8, 8},    {9, 9},
    {15, 17},  {16, 16},   {17, 9},   {16, 8},    {8, 16},   {17, 17},  {18, 18},  {30, 31},
    {31, 33},  {32, 32},   {33, 17},  {34, 35},   {47, 15},  {48, 49},  {50, 50},  {63, 65},
    {64, 64},  {65, 63},   {66, 66},  {97, 31},   {100, 75}, {127, 129}, {1000, 1}, {1, 1000},
    {4001, 9}, {9, 4001},  {1921, 1081}};

/// (variant, sampling): the variant against the scalar reference in that sampling.
class TransformMatrix : public ::testing::TestWithParam<std::tuple<std::string, Subsampling>> {
 protected:
  void SetUp() override { MJPEG_NEED_TRANSFORM(variant()); }
  std::string variant() const { return std::get<0>(GetParam()); }
  Subsampling sampling() const { return std::get<1>(GetParam()); }
  void expect_matches(const ImageView& view, Subsampling s, const std::vector<int>& qualities) {
    expect_variant_matches(variant(), view, s, qualities);
  }
};

TEST_P(TransformMatrix, EqualsTheReferenceOnEverySize) {
  const Subsampling s = sampling();
  std::uint32_t seed = 1;
  for (const Size& z : kSizes) {
    const bool large = z.w * z.h > 100000;
    const Image rgb = test::synthetic(z.w, z.h, 3, seed++, 60);
    expect_matches(rgb.view(), s, large ? std::vector<int>{90} : kSomeQualities);
    if (s == Subsampling::gray) {
      const Image gray = test::synthetic(z.w, z.h, 1, seed++, 60);
      expect_matches(gray.view(), s, large ? std::vector<int>{75} : kSomeQualities);
    }
  }
}

TEST_P(TransformMatrix, EqualsTheReferenceAtEveryQuality) {
  const Subsampling s = sampling();
  for (const Size& z : {Size{33, 17}, Size{100, 75}}) {
    const Image rgb = test::synthetic(z.w, z.h, 3, 7, 90);
    expect_matches(rgb.view(), s, every_quality());
  }
  if (s == Subsampling::gray) {
    const Image gray = test::synthetic(57, 41, 1, 8, 90);
    expect_matches(gray.view(), s, every_quality());
  }
}

TEST_P(TransformMatrix, EqualsTheReferenceOnKodakCrops) {
  MJPEG_REQUIRE_MEDIA();
  const Subsampling s = sampling();
  const Image mosaic = test::kodak_mosaic(1920, 1080);
  expect_matches(mosaic.view(), s, {50, 90});
  for (const Size& z : {Size{641, 479}, Size{17, 1033}, Size{1279, 3}}) {
    const Image crop = test::crop(mosaic, 37, 23, z.w, z.h);
    expect_matches(crop.view(), s, {75});
  }
}

/// Blocks that drive each coefficient to its extremes: for every frequency (u, v), pixels 255
/// where the basis function is positive and 0 elsewhere, and the inverse; plus flat black and
/// white, single-pixel checkers and saturated colours, in every channel arrangement.
Image extreme_image(int channels) {
  const int blocks_x = 16, blocks_y = 9;  // 144 blocks: 128 basis patterns + 16 others
  Image img;
  img.width = 8 * blocks_x;
  img.height = 8 * blocks_y;
  img.channels = channels;
  img.pixels.assign(img.stride() * img.height, 0);
  for (int by = 0; by < blocks_y; ++by) {
    for (int bx = 0; bx < blocks_x; ++bx) {
      const int index = by * blocks_x + bx;
      for (int y = 0; y < 8; ++y) {
        for (int x = 0; x < 8; ++x) {
          int value[3];
          if (index < 128) {
            const int f = index % 64, u = f % 8, v = f / 8;
            const double basis = std::cos((2 * x + 1) * u * M_PI / 16) *
                                 std::cos((2 * y + 1) * v * M_PI / 16);
            const bool on = (basis > 0) != (index >= 64);
            value[0] = value[1] = value[2] = on ? 255 : 0;
          } else {
            const int k = index - 128;
            const bool checker = ((x + y) & 1) != 0;
            const int colours[8][3] = {{0, 0, 0},     {255, 255, 255}, {255, 0, 0},
                                       {0, 255, 0},   {0, 0, 255},     {255, 255, 0},
                                       {0, 255, 255}, {255, 0, 255}};
            const int* c = colours[k % 8];
            for (int i = 0; i < 3; ++i)
              value[i] = k < 8 ? c[i] : (checker ? c[i] : 255 - c[i]);
          }
          for (int c = 0; c < channels; ++c)
            img.pixels[static_cast<std::size_t>(8 * by + y) * img.stride() +
                       static_cast<std::size_t>(8 * bx + x) * channels + c] =
                static_cast<std::uint8_t>(value[c]);
        }
      }
    }
  }
  return img;
}

TEST_P(TransformMatrix, EqualsTheReferenceOnExtremeBlocks) {
  const Subsampling s = sampling();
  for (int channels : {3, 1}) {
    if (channels == 1 && s != Subsampling::gray) continue;
    const Image img = extreme_image(channels);
    expect_matches(img.view(), s, every_quality());
  }
  // Pure noise (the largest high-frequency content), and saturated noise.
  for (int noise : {255, 127}) {
    const Image rgb = test::synthetic(83, 61, 3, 11, noise);
    expect_matches(rgb.view(), s, kSomeQualities);
  }
}

// --rdo deadzone (the vector quantizers' rounding constant) and trellis (the vector variants
// store the FDCT outputs beside the nearest levels for the search): the reference's levels.
TEST_P(TransformMatrix, RateDistortionRoundingEqualsTheReference) {
  const Subsampling s = sampling();
  for (Rdo rdo : {Rdo::deadzone, Rdo::trellis}) {
    for (int channels : {3, 1}) {
      if (channels == 1 && s != Subsampling::gray) continue;
      const Image img = extreme_image(channels);
      expect_variant_matches(variant(), img.view(), s, every_quality(), rdo);
    }
    std::uint32_t seed = 3;
    for (const Size& z : {Size{1, 1}, Size{17, 9}, Size{33, 17}, Size{97, 31}, Size{1921, 1081}}) {
      const Image rgb = test::synthetic(z.w, z.h, 3, seed++, 60);
      expect_variant_matches(variant(), rgb.view(), s,
                             z.w > 1000 ? std::vector<int>{50} : kSomeQualities, rdo);
    }
  }
}

// --rdo trellis's DC levels in the transform (each MCU row's, by segments, right after the
// row; parts of a frame on several threads) are what the header's row search makes of the
// variant's output with every DC left as its FDCT output: the same segments and order.
TEST_P(TransformMatrix, TrellisDcLevelsAreTheRowSearchs) {
  const Subsampling s = sampling();
  std::size_t count = 0;
  const simd::TransformVariant* vector = simd::variants(count);
  const simd::TransformVariant* v = nullptr;
  for (std::size_t i = 0; i < count; ++i)
    if (variant() == vector[i].name) v = &vector[i];
  if (v == nullptr) GTEST_SKIP() << variant() << " is not a vector variant of this build";
  std::uint32_t seed = 21;
  for (const Size& z : {Size{1, 1}, Size{97, 31}, Size{530, 40}, Size{1921, 1081}}) {
    const Image img = test::synthetic(z.w, z.h, s == Subsampling::gray ? 1 : 3, seed++, 60);
    const FrameGeometry g = make_geometry(z.w, z.h, s);
    EncodeOptions o;
    o.quality = 85;
    o.subsampling = s;
    o.rdo = Rdo::trellis;
    o.tune = Tune::ssim;
    const QuantTables t = make_quant_tables(o, g.num_components);
    std::vector<std::int16_t> want(g.coefficient_count(), 0);
    ImageRows rows(img.view());
    v->transform(rows, g, t, want.data(), 0, g.mcus_y);
    for (int c = 0; c < g.num_components; ++c)
      for (int row = 0; row < g.mcus_y; ++row)
        math::trellis_dc_row(want.data(), dc_chain(g, c), row, t.component_divisor(c)[0],
                             t.trellis);
    fill_dummy_blocks(g, want.data());
    std::vector<std::int16_t> got(g.coefficient_count(), 0x5A5A);
    transform_cpu(variant(), img.view(), g, t, got.data());
    EXPECT_EQ(got, want) << z.w << "x" << z.h;
    std::vector<std::int16_t> parts(g.coefficient_count(), 0x5A5A);
    transform_cpu_parallel(img.view(), g, t, parts.data(), 3, variant());
    EXPECT_EQ(parts, want) << z.w << "x" << z.h << " on 3 threads";
  }
}

TEST_P(TransformMatrix, StridedAndUnalignedViewsGiveTheSameCoefficients) {
  const Subsampling s = sampling();
  for (int channels : {3, 1}) {
    if (channels == 1 && s != Subsampling::gray) continue;
    const Image img = test::synthetic(53, 29, channels, 5, 40);
    const std::vector<std::int16_t> want = transform("scalar", img.view(), s, 85);
    // Rows 131 bytes further apart than needed, starting 1 byte past an aligned address.
    const std::size_t stride = img.stride() + 131;
    std::vector<std::uint8_t> padded(1 + stride * img.height, 0xEE);
    for (int y = 0; y < img.height; ++y)
      std::memcpy(&padded[1 + y * stride], &img.pixels[y * img.stride()], img.stride());
    ImageView view = img.view();
    view.data = padded.data() + 1;
    view.stride = stride;
    EXPECT_EQ(transform(variant(), view, s, 85), want) << channels << " channels";
  }
}

INSTANTIATE_TEST_SUITE_P(VariantsAndSamplings, TransformMatrix,
                         ::testing::Combine(::testing::ValuesIn(vector_variants()),
                                            ::testing::ValuesIn(kTransformSamplings)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" +
                                  to_string(std::get<1>(info.param));
                         });

// ---------------------------------------------------------------------------------------------
// Rows from a callback (how planar input plugs in): bands requested once each, top to bottom,
// rows made in a scratch buffer that is overwritten for every band.
// ---------------------------------------------------------------------------------------------
class GeneratedRows final : public RowSource {
 public:
  explicit GeneratedRows(const Image& img) : img_(img) {}
  int width() const override { return img_.width; }
  int height() const override { return img_.height; }
  PixelFormat format() const override {
    return img_.channels == 1 ? PixelFormat::gray8 : PixelFormat::rgb24;
  }
  void band(int y0, int count, const std::uint8_t** rows) override {
    EXPECT_EQ(y0, next_);
    EXPECT_GE(count, 1);
    EXPECT_LE(count, kMaxBandRows);
    EXPECT_LE(y0 + count, img_.height);
    next_ = y0 + count;
    scratch_.assign(static_cast<std::size_t>(count) * img_.stride(), 0);
    for (int i = 0; i < count; ++i) {
      std::memcpy(&scratch_[i * img_.stride()], &img_.pixels[(y0 + i) * img_.stride()],
                  img_.stride());
      rows[i] = &scratch_[i * img_.stride()];
    }
    ++bands_;
  }
  int bands() const { return bands_; }
  int rows_given() const { return next_; }

 private:
  const Image& img_;
  std::vector<std::uint8_t> scratch_;
  int next_ = 0, bands_ = 0;
};

/// Every variant of the build, the reference included.
class EachTransformVariant : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { MJPEG_NEED_TRANSFORM(GetParam()); }
};

TEST_P(EachTransformVariant, CallbackRowsGiveTheSameCoefficients) {
  const std::string& v = GetParam();
  for (const Subsampling s : kTransformSamplings) {
    for (int channels : {3, 1}) {
      if (channels == 1 && s != Subsampling::gray) continue;
      const Image img = test::synthetic(75, 37, channels, 9, 50);
      const std::vector<std::int16_t> want = transform("scalar", img.view(), s, 80);
      const FrameGeometry g = make_geometry(img.width, img.height, s);
      const QuantTables t = make_quant_tables(80, g.num_components == 1 ? 1 : 2);
      GeneratedRows rows(img);
      std::vector<std::int16_t> got(g.coefficient_count());
      transform_cpu(v, rows, g, t, got.data());
      EXPECT_EQ(got, want) << to_string(s);
      EXPECT_EQ(rows.rows_given(), img.height);
      EXPECT_EQ(rows.bands(), (img.height + 8 * g.max_v - 1) / (8 * g.max_v));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Whole encodes through each variant (restart intervals, optimized tables) against
// libjpeg-turbo: the coefficients of every variant make libjpeg's bytes.
// ---------------------------------------------------------------------------------------------
TEST_P(EachTransformVariant, EncodesMatchLibjpeg) {
  const std::string& v = GetParam();
  for (const Subsampling s : kTransformSamplings) {
    const Image img = test::synthetic(97, 53, 3, 3, 70);
    for (int q : {5, 50, 90}) {
      for (int restart : {0, 1, 7}) {
        for (bool optimize : {false, true}) {
          const EncodeOptions o{q, s, restart, optimize};
          const std::vector<std::uint8_t> reference = test::libjpeg_encode(img.view(), o);
          const FrameGeometry g = make_geometry(img.width, img.height, s);
          const QuantTables t = make_quant_tables(q, g.num_components == 1 ? 1 : 2);
          std::vector<std::int16_t> coeffs(g.coefficient_count());
          transform_cpu(v, img.view(), g, t, coeffs.data());
          std::vector<std::uint8_t> jpeg;
          encode_coefficients(g, t, coeffs.data(), o, jpeg);
          EXPECT_TRUE(jpeg == reference)
              << v << " q" << q << " " << to_string(s) << " restart " << restart
              << (optimize ? " optimize" : "") << ": "
              << test::describe_difference(jpeg, reference);
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Built, EachTransformVariant, ::testing::ValuesIn(built_transform_variants()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace mjpeg
