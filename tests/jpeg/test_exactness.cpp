// Byte-exactness of encode_jpeg against libjpeg-turbo, the project's oracle
// (docs/ARCHITECTURE.md, "The exactness oracle"):
//   * in process, against the libjpeg API set up as cjpeg sets it up (common/oracle.hpp), over
//     all 24 Kodak images x {444,422,420,gray} x q{1,10,50,75,90,95,100} x restart
//     {0,1,7,5000} x optimize {off,on} (the full product: 5376 encodes each way, about a minute
//     of CPU here), awkward crop sizes, gray8 input, extreme synthetic content and strided views;
//   * against the cjpeg program itself on PPM/PGM files (smaller matrix), which also checks that
//     the in-process oracle is set up the way cjpeg is.
// A comparison checks the size first, then memcmp; a mismatch names the first differing offset,
// the bytes around it and the JPEG segment it falls in.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "common/oracle.hpp"
#include "common/same_bytes.hpp"
#include "common/test_media.hpp"
#include "mjpeg/encoder.hpp"
#include "mjpeg/error.hpp"
#include "mjpeg/options.hpp"

namespace mjpeg {

// Readable parameter values in gtest output (found by argument-dependent lookup).
static void PrintTo(Subsampling s, std::ostream* os) { *os << to_string(s); }

namespace {

using test::Image;

constexpr Subsampling kSamplings[] = {Subsampling::s444, Subsampling::s422, Subsampling::s420,
                                      Subsampling::gray};
constexpr int kQualities[] = {1, 10, 50, 75, 90, 95, 100};

std::string options_text(const EncodeOptions& o) {
  return "q" + std::to_string(o.quality) + " " + to_string(o.subsampling) + " restart " +
         std::to_string(o.restart_interval) + (o.optimize ? " optimize" : "");
}

std::string size_text(const Image& img) {
  return std::to_string(img.width) + "x" + std::to_string(img.height) +
         (img.channels == 1 ? " gray8" : " rgb24");
}

using test::same_bytes;

// Encodes `img` with every restart interval x optimize setting and compares with libjpeg.
void expect_matches_libjpeg(const Image& img, Subsampling s, int quality,
                            std::initializer_list<int> restarts) {
  for (int restart : restarts) {
    for (bool optimize : {false, true}) {
      const EncodeOptions o{quality, s, restart, optimize};
      std::vector<std::uint8_t> ours, reference;
      ASSERT_NO_THROW(ours = encode_jpeg(img.view(), o)) << size_text(img) << " " << options_text(o);
      ASSERT_NO_THROW(reference = test::libjpeg_encode(img.view(), o));
      EXPECT_TRUE(same_bytes(ours, reference))
          << size_text(img) << ", " << options_text(o) << ": differs from libjpeg-turbo";
    }
  }
}

void expect_matches_libjpeg_all_qualities(const Image& img, Subsampling s,
                                          std::initializer_list<int> restarts) {
  for (int q : kQualities) expect_matches_libjpeg(img, s, q, restarts);
}

const char* sampling_name(Subsampling s) {
  switch (s) {
    case Subsampling::s444: return "444";
    case Subsampling::s422: return "422";
    case Subsampling::s420: return "420";
    case Subsampling::gray: return "gray";
  }
  return "unknown";
}

// ---------------------------------------------------------------------------------------------
// One large picture on several threads (encode_jpeg's `threads`: MCU-row ranges transformed and
// coded at once, joined bit-exactly) against libjpeg on one: pictures of 1.5 to 4 MP (3 to 7
// parts of half a megapixel), odd sizes, every sampling, restarts that do and do not fall on
// MCU rows, optimized tables, progressive.
// ---------------------------------------------------------------------------------------------
TEST(ThreadedExactness, LargePicturesMatchLibjpegOnAnyThreadCount) {
  MJPEG_REQUIRE_MEDIA();
  const Image mosaic = test::kodak_mosaic(2304, 1536);
  const Image pictures[] = {mosaic, test::crop(mosaic, 3, 5, 1531, 1021),
                            test::first_channel(test::crop(mosaic, 0, 0, 1601, 999))};
  for (const Image& img : pictures) {
    for (Subsampling s : kSamplings) {
      for (const auto& [restart, optimize, progressive] :
           {std::tuple{0, false, false}, std::tuple{0, true, false}, std::tuple{7, false, false},
            std::tuple{96, true, false}, std::tuple{0, false, true}}) {
        EncodeOptions o{90, s, restart, optimize};
        o.progressive = progressive;
        const std::vector<std::uint8_t> reference = test::libjpeg_encode(img.view(), o);
        for (int threads : {0, 2, 3, 7, 64}) {
          std::vector<std::uint8_t> ours;
          ASSERT_NO_THROW(ours = encode_jpeg(img.view(), o, threads));
          EXPECT_TRUE(same_bytes(ours, reference))
              << size_text(img) << " " << options_text(o) << (progressive ? " progressive" : "")
              << ", " << threads << " threads";
        }
      }
    }
  }
  EXPECT_THROW(encode_jpeg(mosaic.view(), EncodeOptions{}, -1), UsageError);
}

// ---------------------------------------------------------------------------------------------
// All 24 Kodak images, full product.
// ---------------------------------------------------------------------------------------------
// One test per image and sampling (fewer processes under ctest: each loads its image once);
// it loops over the 7 qualities x 4 restart intervals x 2 Huffman modes.
using KodakParam = std::tuple<int, Subsampling>;  // image, sampling

class KodakExactness : public ::testing::TestWithParam<KodakParam> {};

TEST_P(KodakExactness, MatchesLibjpeg) {
  MJPEG_REQUIRE_MEDIA();
  const auto [index, s] = GetParam();
  const Image& img = test::kodak(index);
  expect_matches_libjpeg_all_qualities(img, s, {0, 1, 7, 5000});
}

INSTANTIATE_TEST_SUITE_P(
    AllKodak, KodakExactness,
    ::testing::Combine(::testing::Range(1, 25), ::testing::ValuesIn(kSamplings)),
    [](const ::testing::TestParamInfo<KodakParam>& info) {
      char name[64];
      std::snprintf(name, sizeof name, "kodim%02d_%s", std::get<0>(info.param),
                    sampling_name(std::get<1>(info.param)));
      return std::string(name);
    });

// ---------------------------------------------------------------------------------------------
// Awkward sizes: crops of a Kodak mosaic at an odd offset (so no crop starts on a block
// boundary of the photo), every sampling and quality.
// ---------------------------------------------------------------------------------------------
struct CropSize {
  int w, h;
};

void PrintTo(const CropSize& c, std::ostream* os) { *os << c.w << "x" << c.h; }

constexpr CropSize kCropSizes[] = {
    {1, 1},    {7, 5},   {8, 8},     {9, 9},     {15, 17},   {16, 16},  {17, 9},
    {33, 17},  {4001, 9}, {9, 4001}, {1921, 1081}, {31, 1},  {1, 31},
    // more of our own: 2- and 3-pixel edges, one MCU +/- 1, MCU-aligned in one direction only,
    // a long single row and column, an odd medium size.
    {2, 2},    {3, 3},   {16, 8},    {8, 16},    {15, 15},   {17, 17},  {31, 33},
    {32, 32},  {63, 65}, {100, 75},  {127, 129}, {1000, 1},  {1, 1000}, {4, 1},
};

constexpr int kCropX = 37, kCropY = 23;

Image awkward_crop(const CropSize& c) {
  return test::crop(test::kodak_mosaic(kCropX + c.w, kCropY + c.h), kCropX, kCropY, c.w, c.h);
}

using CropParam = std::tuple<CropSize, Subsampling>;  // loops over the 7 qualities

class CropExactness : public ::testing::TestWithParam<CropParam> {};

TEST_P(CropExactness, MatchesLibjpeg) {
  MJPEG_REQUIRE_MEDIA();
  const auto [size, s] = GetParam();
  static CropSize cached_size{0, 0};
  static Image cached;
  if (cached_size.w != size.w || cached_size.h != size.h) {
    cached = awkward_crop(size);
    cached_size = size;
  }
  expect_matches_libjpeg_all_qualities(cached, s, {0, 1, 7, 65535});
}

INSTANTIATE_TEST_SUITE_P(
    AwkwardSizes, CropExactness,
    ::testing::Combine(::testing::ValuesIn(kCropSizes), ::testing::ValuesIn(kSamplings)),
    [](const ::testing::TestParamInfo<CropParam>& info) {
      const CropSize c = std::get<0>(info.param);
      return std::to_string(c.w) + "x" + std::to_string(c.h) + "_" +
             sampling_name(std::get<1>(info.param));
    });

// ---------------------------------------------------------------------------------------------
// gray8 input: a real grayscale photo (spider_web.png is 8-bit gray) and Kodak's first channel.
// The requested sampling must not matter for gray8 input (always a 1-component JPEG).
// ---------------------------------------------------------------------------------------------
class Gray8Exactness : public ::testing::TestWithParam<CropSize> {};

TEST_P(Gray8Exactness, SpiderWebMatchesLibjpegWhateverTheSampling) {
  MJPEG_REQUIRE_MEDIA();
  const CropSize size = GetParam();
  const Image photo =
      test::load_png(test::media_dir() + "/images/imagecompression.info/spider_web.png");
  ASSERT_EQ(photo.channels, 1) << "spider_web.png is expected to be 8-bit grayscale";
  const Image img = test::crop(photo, 1001, 777, size.w, size.h);
  for (Subsampling s : kSamplings) expect_matches_libjpeg_all_qualities(img, s, {0, 7});
}

TEST_P(Gray8Exactness, KodakLumaChannelMatchesLibjpeg) {
  MJPEG_REQUIRE_MEDIA();
  const Image img = test::first_channel(awkward_crop(GetParam()));
  expect_matches_libjpeg_all_qualities(img, Subsampling::gray, {0, 1, 7, 65535});
}

constexpr CropSize kGraySizes[] = {{1, 1}, {7, 5}, {9, 9}, {17, 9}, {33, 17}, {31, 1},
                                   {1, 31}, {768, 512}, {1921, 1081}};

INSTANTIATE_TEST_SUITE_P(
    Sizes, Gray8Exactness,
    ::testing::ValuesIn(kGraySizes), [](const ::testing::TestParamInfo<CropSize>& info) {
      return std::to_string(info.param.w) + "x" + std::to_string(info.param.h);
    });

// ---------------------------------------------------------------------------------------------
// Extreme content: the largest coefficient magnitudes and DC differences (0/255 checkers at
// q100), flat frames (all-zero AC, long EOB runs), full-amplitude noise (every AC nonzero,
// ZRL-free), stripes (long zero runs then a value: ZRL codes).
// ---------------------------------------------------------------------------------------------
enum class Pattern { black, white, pixel_checker, block_checker, stripes, noise, gradient_noise };

Image pattern_image(Pattern p, int w, int h, int channels) {
  if (p == Pattern::noise) return test::synthetic(w, h, channels, 7, 255);
  if (p == Pattern::gradient_noise) return test::synthetic(w, h, channels, 3, 24);
  Image img;
  img.width = w;
  img.height = h;
  img.channels = channels;
  img.pixels.resize(img.stride() * h);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      for (int c = 0; c < channels; ++c) {
        std::uint8_t v = 0;
        switch (p) {
          case Pattern::black: v = 0; break;
          case Pattern::white: v = 255; break;
          case Pattern::pixel_checker: v = ((x + y + c) & 1) ? 255 : 0; break;
          case Pattern::block_checker: v = (((x >> 3) + (y >> 3) + c) & 1) ? 255 : 0; break;
          case Pattern::stripes: v = (x % 23 == 0 || y % 29 == 0) ? 255 : static_cast<std::uint8_t>(40 * c); break;
          default: break;
        }
        img.pixels[img.stride() * y + static_cast<std::size_t>(x) * channels + c] = v;
      }
    }
  }
  return img;
}

constexpr const char* kPatternNames[] = {"black",   "white", "pixelchecker", "blockchecker",
                                         "stripes", "noise", "gradientnoise"};

void PrintTo(Pattern p, std::ostream* os) { *os << kPatternNames[static_cast<int>(p)]; }

using ExtremeParam = std::tuple<Pattern, Subsampling>;  // at q 1, 50, 100

class ExtremeExactness : public ::testing::TestWithParam<ExtremeParam> {};

TEST_P(ExtremeExactness, MatchesLibjpeg) {
  const auto [p, s] = GetParam();
  for (int q : {1, 50, 100}) {
    expect_matches_libjpeg(pattern_image(p, 67, 45, 3), s, q, {0, 3});
    expect_matches_libjpeg(pattern_image(p, 64, 48, 1), s, q, {0, 3});
  }
}

INSTANTIATE_TEST_SUITE_P(
    Patterns, ExtremeExactness,
    ::testing::Combine(::testing::Values(Pattern::black, Pattern::white, Pattern::pixel_checker,
                                         Pattern::block_checker, Pattern::stripes, Pattern::noise,
                                         Pattern::gradient_noise),
                       ::testing::ValuesIn(kSamplings)),
    [](const ::testing::TestParamInfo<ExtremeParam>& info) {
      return std::string(kPatternNames[static_cast<int>(std::get<0>(info.param))]) + "_" +
             sampling_name(std::get<1>(info.param));
    });

// ---------------------------------------------------------------------------------------------
// Views: a stride larger than the row, and a view into the middle of a larger image, must
// encode exactly like the packed copy.
// ---------------------------------------------------------------------------------------------
TEST(ViewExactness, PaddedStrideEncodesLikePackedPixels) {
  const Image packed = test::synthetic(45, 31, 3, 11, 40);
  const std::size_t stride = packed.stride() + 13;
  std::vector<std::uint8_t> padded(stride * packed.height, 0xA5);
  for (int y = 0; y < packed.height; ++y)
    std::memcpy(padded.data() + stride * y, packed.pixels.data() + packed.stride() * y, packed.stride());
  ImageView v = packed.view();
  v.data = padded.data();
  v.stride = stride;
  for (Subsampling s : kSamplings) {
    const EncodeOptions o{85, s, 2, false};
    const auto reference = test::libjpeg_encode(packed.view(), o);
    EXPECT_TRUE(same_bytes(encode_jpeg(v, o), reference)) << options_text(o);
  }
}

TEST(ViewExactness, Gray8PaddedStrideEncodesLikePackedPixels) {
  const Image packed = test::synthetic(29, 19, 1, 5, 40);
  const std::size_t stride = packed.stride() + 3;
  std::vector<std::uint8_t> padded(stride * packed.height, 0x5A);
  for (int y = 0; y < packed.height; ++y)
    std::memcpy(padded.data() + stride * y, packed.pixels.data() + packed.stride() * y, packed.stride());
  ImageView v = packed.view();
  v.data = padded.data();
  v.stride = stride;
  const EncodeOptions o{70, Subsampling::gray, 0, true};
  EXPECT_TRUE(same_bytes(encode_jpeg(v, o), test::libjpeg_encode(packed.view(), o)));
}

// ---------------------------------------------------------------------------------------------
// Against the cjpeg program on PPM/PGM files (libjpeg-turbo-progs): each sampling,
// q 75/90/100, restart 0/7, optimize off/on, a Kodak image and the awkward crops.
// ---------------------------------------------------------------------------------------------
struct CjpegInput {
  const char* name;
  int kodak;  ///< 1..24: the whole Kodak image; 0: awkward crop of size w x h
  int w, h;
  bool gray;  ///< gray8 input (PGM)
};

constexpr CjpegInput kCjpegInputs[] = {
    {"kodim23", 23, 0, 0, false}, {"kodim04_portrait", 4, 0, 0, false},
    {"1x1", 0, 1, 1, false},       {"7x5", 0, 7, 5, false},         {"8x8", 0, 8, 8, false},
    {"9x9", 0, 9, 9, false},       {"15x17", 0, 15, 17, false},     {"16x16", 0, 16, 16, false},
    {"17x9", 0, 17, 9, false},     {"33x17", 0, 33, 17, false},     {"4001x9", 0, 4001, 9, false},
    {"9x4001", 0, 9, 4001, false}, {"1921x1081", 0, 1921, 1081, false},
    {"31x1", 0, 31, 1, false},     {"1x31", 0, 1, 31, false},
    {"pgm_33x17", 0, 33, 17, true}, {"pgm_768x512", 0, 768, 512, true},
};

Image cjpeg_input(const CjpegInput& in) {
  Image img = in.kodak > 0 ? test::kodak(in.kodak) : awkward_crop({in.w, in.h});
  return in.gray ? test::first_channel(img) : img;
}

void PrintTo(const CjpegInput& in, std::ostream* os) { *os << in.name; }

using CjpegParam = std::tuple<CjpegInput, Subsampling>;

class CjpegExactness : public ::testing::TestWithParam<CjpegParam> {
 protected:
  void SetUp() override {
    cjpeg_ = test::find_cjpeg();
    if (!cjpeg_) GTEST_SKIP() << "cjpeg is not on PATH (install libjpeg-turbo-progs)";
  }
  std::optional<std::string> cjpeg_;
};

TEST_P(CjpegExactness, MatchesCjpegProgram) {
  MJPEG_REQUIRE_MEDIA();
  const auto [input, s] = GetParam();
  const Image img = cjpeg_input(input);
  for (int q : {75, 90, 100}) {
    for (int restart : {0, 7}) {
      for (bool optimize : {false, true}) {
        const EncodeOptions o{q, s, restart, optimize};
        std::vector<std::uint8_t> reference;
        ASSERT_NO_THROW(reference = test::cjpeg_encode(*cjpeg_, img, o));
        EXPECT_TRUE(same_bytes(encode_jpeg(img.view(), o), reference))
            << input.name << ", " << options_text(o) << ": differs from cjpeg";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Files, CjpegExactness,
    ::testing::Combine(::testing::ValuesIn(kCjpegInputs), ::testing::ValuesIn(kSamplings)),
    [](const ::testing::TestParamInfo<CjpegParam>& info) {
      return std::string(std::get<0>(info.param).name) + "_" +
             sampling_name(std::get<1>(info.param));
    });

// The in-process oracle must be configured exactly as cjpeg, including the low qualities where
// cjpeg (no -baseline) writes 16-bit tables and SOF1; otherwise every test above proves less.
TEST(OracleSelfCheck, LibjpegApiSetupEqualsCjpeg) {
  MJPEG_REQUIRE_MEDIA();
  const auto cjpeg = test::find_cjpeg();
  if (!cjpeg) GTEST_SKIP() << "cjpeg is not on PATH (install libjpeg-turbo-progs)";
  const Image rgb = awkward_crop({63, 65});
  const Image gray = test::first_channel(rgb);
  for (int q : {1, 10, 23, 24, 50, 100}) {
    for (Subsampling s : kSamplings) {
      const EncodeOptions o{q, s, q % 2 ? 5 : 0, q >= 50};
      EXPECT_TRUE(same_bytes(test::libjpeg_encode(rgb.view(), o), test::cjpeg_encode(*cjpeg, rgb, o)))
          << "rgb " << options_text(o);
    }
    const EncodeOptions o{q, Subsampling::gray, 3, q < 50};
    EXPECT_TRUE(same_bytes(test::libjpeg_encode(gray.view(), o), test::cjpeg_encode(*cjpeg, gray, o)))
        << "gray8 " << options_text(o);
  }
}

// The comparison helper itself must catch a single flipped bit and a truncation, and say where.
TEST(OracleSelfCheck, DifferenceReportNamesOffsetAndSegment) {
  const Image img = test::synthetic(16, 16, 3);
  const auto a = test::libjpeg_encode(img.view(), EncodeOptions{90, Subsampling::s420, 0, false});
  auto b = a;
  b[b.size() - 4] ^= 0x01;  // inside the entropy-coded data
  EXPECT_FALSE(same_bytes(b, a));
  EXPECT_NE(test::describe_difference(b, a).find("offset " + std::to_string(a.size() - 4)), std::string::npos);
  EXPECT_NE(test::describe_difference(b, a).find("entropy-coded"), std::string::npos);
  b = a;
  b.pop_back();
  EXPECT_FALSE(same_bytes(b, a));
  EXPECT_TRUE(same_bytes(a, a));
}

}  // namespace
}  // namespace mjpeg
