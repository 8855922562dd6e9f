// --progressive (SOF2, spectral selection, per-scan optimal tables) against libjpeg-turbo:
//   * in process, the libjpeg API given the same scan script (jpeg_scan_info, common/oracle.hpp),
//     over Kodak images, awkward crop sizes, every sampling, qualities 1..100 (16-bit tables
//     below 24), restart intervals, gray8 input, the --tune presets and custom tables/slots;
//   * the cjpeg program with -scans on PPM/PGM files;
//   * the token path (what the GPU hands back): tokens -> coefficients -> progressive gives the
//     same bytes as the coefficients themselves, hence as cjpeg.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/oracle.hpp"
#include "common/same_bytes.hpp"
#include "common/test_media.hpp"
#include "core/geometry.hpp"
#include "core/quant.hpp"
#include "jpeg/entropy.hpp"
#include "jpeg/progressive.hpp"
#include "jpeg/tokens.hpp"
#include "jpeg/transform_cpu.hpp"
#include "mjpeg/encoder.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg {
namespace {

using test::Image;

constexpr Subsampling kProgressiveSamplings[] = {Subsampling::s444, Subsampling::s422,
                                                 Subsampling::s420, Subsampling::gray};

std::string prog_options_text(const EncodeOptions& o) {
  return "q" + std::to_string(o.quality) + " " + to_string(o.subsampling) + " restart " +
         std::to_string(o.restart_interval) + " tune " + to_string(o.tune) +
         (o.qtables.empty() ? "" : " qtables") + (o.optimize ? " optimize" : "");
}

using test::same_bytes;

EncodeOptions progressive(int q, Subsampling s, int restart) {
  EncodeOptions o;
  o.quality = q;
  o.subsampling = s;
  o.restart_interval = restart;
  o.progressive = true;
  return o;
}

// The oracle is given the preset's tables as cjpeg -qtables would be.
std::vector<std::uint8_t> reference(const ImageView& view, const EncodeOptions& o) {
  return test::libjpeg_encode(view, o.tune == Tune::none ? o : test::preset_as_qtables(o));
}

void expect_matches(const Image& img, const EncodeOptions& o, const std::string& what) {
  std::vector<std::uint8_t> ours, ref;
  ASSERT_NO_THROW(ours = encode_jpeg(img.view(), o)) << what << " " << prog_options_text(o);
  ASSERT_NO_THROW(ref = reference(img.view(), o)) << what << " " << prog_options_text(o);
  EXPECT_TRUE(same_bytes(ours, ref))
      << what << ", " << prog_options_text(o) << ": differs from libjpeg-turbo";
}

Image crop_of(int w, int h) {
  const Image& k = test::kodak(7);
  if (w <= k.width && h <= k.height) return test::crop(k, (k.width - w) / 3, (k.height - h) / 2, w, h);
  return test::kodak_mosaic(w, h);
}

TEST(ProgressiveScript, IsTheDocumentedScript) {
  EXPECT_EQ(progressive_script_text(3), test::progressive_scan_script(false));
  EXPECT_EQ(progressive_script_text(1), test::progressive_scan_script(true));
}

TEST(ProgressiveExactness, KodakEverySamplingQualityAndRestart) {
  MJPEG_REQUIRE_MEDIA();
  for (int index : {3, 13, 23}) {
    const Image& img = test::kodak(index);
    for (Subsampling s : kProgressiveSamplings)
      for (int q : {1, 10, 50, 75, 90, 100})
        for (int restart : {0, 1, 7})
          expect_matches(img, progressive(q, s, restart), "kodim" + std::to_string(index));
  }
}

TEST(ProgressiveExactness, AwkwardSizes) {
  MJPEG_REQUIRE_MEDIA();
  const int sizes[][2] = {{1, 1},  {7, 5},  {8, 8},   {9, 9},    {15, 17},  {16, 16},
                          {17, 9}, {33, 17}, {31, 1}, {1, 31},   {4001, 9}, {9, 4001},
                          {1921, 1081}};
  for (const auto& size : sizes) {
    const Image img = crop_of(size[0], size[1]);
    const std::string what = std::to_string(size[0]) + "x" + std::to_string(size[1]);
    for (Subsampling s : kProgressiveSamplings)
      for (int restart : {0, 3}) {
        expect_matches(img, progressive(90, s, restart), what);
        expect_matches(test::first_channel(img), progressive(75, s, restart), what + " gray8");
      }
  }
}

TEST(ProgressiveExactness, ExtremeContentLongEobRunsAndZeroRuns) {
  // Flat frames: every AC band empty, so one EOBRUN spans the scan (and is split at 0x7FFF);
  // noise: large values and long zero runs at low quality.
  Image flat = test::synthetic(2048, 1040, 3, 1, 0);
  std::fill(flat.pixels.begin(), flat.pixels.end(), 128);
  for (Subsampling s : {Subsampling::s444, Subsampling::gray})
    for (int restart : {0, 40000}) expect_matches(flat, progressive(50, s, restart), "flat");
  const Image noise = test::synthetic(333, 211, 3, 9, 255);
  for (Subsampling s : kProgressiveSamplings)
    for (int q : {1, 5, 30, 100}) expect_matches(noise, progressive(q, s, 2), "noise");
}

TEST(ProgressiveExactness, PresetsAndCustomTables) {
  MJPEG_REQUIRE_MEDIA();
  const Image img = test::kodak(19);
  for (Tune tune : {Tune::psnr, Tune::ssim})
    for (Subsampling s : kProgressiveSamplings)
      for (int q : {20, 50, 90}) {
        EncodeOptions o = progressive(q, s, 0);
        o.tune = tune;
        expect_matches(img, o, "kodim19");
      }
  EncodeOptions o = progressive(40, Subsampling::s420, 5);
  o.qtables.assign(3, QuantTableValues{});
  for (int t = 0; t < 3; ++t)
    for (int i = 0; i < 64; ++i) o.qtables[t][i] = static_cast<std::uint32_t>(3 + t * 5 + i % 9);
  o.qslots = {2, 0, 1};
  expect_matches(img, o, "kodim19 three tables");
  o.optimize = true;  // implied: the same bytes
  expect_matches(img, o, "kodim19 three tables");
}

TEST(ProgressiveExactness, MatchesCjpegProgram) {
  MJPEG_REQUIRE_MEDIA();
  const auto cjpeg = test::find_cjpeg();
  if (!cjpeg) GTEST_SKIP() << "cjpeg is not on PATH (install libjpeg-turbo-progs)";
  const Image inputs[] = {test::kodak(23), crop_of(33, 17), test::first_channel(crop_of(45, 29))};
  for (const Image& img : inputs)
    for (Subsampling s : kProgressiveSamplings)
      for (int restart : {0, 7}) {
        EncodeOptions o = progressive(restart ? 30 : 85, s, restart);
        o.optimize = true;
        for (Tune tune : {Tune::none, Tune::psnr}) {
          o.tune = tune;
          const EncodeOptions given = tune == Tune::none ? o : test::preset_as_qtables(o);
          std::vector<std::uint8_t> ref;
          ASSERT_NO_THROW(ref = test::cjpeg_encode(*cjpeg, img, given));
          EXPECT_TRUE(same_bytes(encode_jpeg(img.view(), o), ref))
              << img.width << "x" << img.height << " " << prog_options_text(o)
              << ": differs from cjpeg";
        }
      }
}

// Tokens (the GPU's result) -> coefficients -> progressive: the same bytes.
TEST(ProgressiveTokens, TokensExpandToTheCoefficientsAndCodeTheSameBytes) {
  MJPEG_REQUIRE_MEDIA();
  const Image inputs[] = {test::kodak(5), crop_of(37, 21), test::synthetic(301, 77, 3, 4, 255)};
  for (const Image& img : inputs)
    for (Subsampling s : kProgressiveSamplings)
      for (int restart : {0, 1, 6})
        for (int q : {3, 75, 100}) {
          EncodeOptions o = progressive(q, s, restart);
          const FrameGeometry g = make_geometry(img.width, img.height, s);
          const QuantTables tables = make_quant_tables(o, g.num_components);
          std::vector<std::int16_t> coeffs(g.coefficient_count());
          transform_cpu(img.view(), g, tables, coeffs.data());
          TokenBuffer tokens;
          tokenize(g, coeffs.data(), restart, true, tokens);
          std::vector<std::int16_t> back(g.coefficient_count(), 7);
          tokens_to_coefficients(g, tokens.view(), back.data());
          ASSERT_EQ(back, coeffs) << prog_options_text(o);
          std::vector<std::uint8_t> from_coeffs, from_tokens;
          std::vector<std::int16_t> scratch;
          encode_coefficients(g, tables, coeffs.data(), o, from_coeffs);
          encode_tokens_progressive(g, tables, tokens.view(), o, scratch, from_tokens);
          EXPECT_TRUE(same_bytes(from_tokens, from_coeffs)) << prog_options_text(o);
          EXPECT_TRUE(same_bytes(from_coeffs, reference(img.view(), o))) << prog_options_text(o);
        }
}

TEST(ProgressiveTokens, MalformedStreamsThrow) {
  const Image img = test::synthetic(40, 24, 3, 2, 60);
  const FrameGeometry g = make_geometry(img.width, img.height, Subsampling::s420);
  const EncodeOptions o = progressive(90, Subsampling::s420, 0);
  const QuantTables tables = make_quant_tables(o, 3);
  std::vector<std::int16_t> coeffs(g.coefficient_count());
  transform_cpu(img.view(), g, tables, coeffs.data());
  TokenBuffer tokens;
  tokenize(g, coeffs.data(), 0, false, tokens);
  std::vector<std::int16_t> back(g.coefficient_count());
  TokenView cut = tokens.view();
  cut.count -= 1;
  EXPECT_THROW(tokens_to_coefficients(g, cut, back.data()), Error);
  tokens.slots.push_back(tokens.slots.back());
  EXPECT_THROW(tokens_to_coefficients(g, tokens.view(), back.data()), Error);
  tokens.slots.pop_back();
  tokens.slots[0] = tokens::slot(0x3F, 0, 0);  // an AC symbol where the first DC belongs
  EXPECT_THROW(tokens_to_coefficients(g, tokens.view(), back.data()), Error);
}

}  // namespace
}  // namespace mjpeg
