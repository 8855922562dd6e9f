// Unit tests of the quality metrics (src/quality/metrics.hpp) on synthetic pictures with known
// answers, plus an independent, direct SSIM implementation to compare the fast one against.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "mjpeg/error.hpp"
#include "quality/metrics.hpp"

namespace mjpeg::quality {
namespace {

struct Picture {
  int width, height;
  PixelFormat format;
  std::vector<std::uint8_t> pixels;
  ImageView view() const {
    return ImageView{pixels.data(), width, height, format,
                     static_cast<std::size_t>(width) * channels(format)};
  }
};

Picture filled(int w, int h, PixelFormat f, std::uint8_t value) {
  return Picture{w, h, f, std::vector<std::uint8_t>(static_cast<std::size_t>(w) * h * channels(f), value)};
}

Picture noise(int w, int h, PixelFormat f, unsigned seed) {
  Picture p = filled(w, h, f, 0);
  std::mt19937 rng(seed);
  for (auto& v : p.pixels) v = static_cast<std::uint8_t>(rng() & 255);
  return p;
}

/// `p` with every sample moved by a random amount in [-spread, spread], clamped.
Picture disturbed(const Picture& p, int spread, unsigned seed) {
  Picture q = p;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(-spread, spread);
  for (auto& v : q.pixels) v = static_cast<std::uint8_t>(std::clamp(v + d(rng), 0, 255));
  return q;
}

/// SSIM straight from its definition over 8x8 windows at every 4th pixel, with ffmpeg's
/// constants (in the sum domain) but double arithmetic and no block-sum reuse.
double direct_ssim(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b, int w,
                   int h) {
  const double c1 = std::floor(.01 * .01 * 255 * 255 * 64 + .5);
  const double c2 = std::floor(.03 * .03 * 255 * 255 * 64 * 63 + .5);
  double total = 0;
  int windows = 0;
  for (int y = 0; y + 8 <= (h / 4) * 4; y += 4)
    for (int x = 0; x + 8 <= (w / 4) * 4; x += 4) {
      double s1 = 0, s2 = 0, ss = 0, s12 = 0;
      for (int j = 0; j < 8; ++j)
        for (int i = 0; i < 8; ++i) {
          const double va = a[(y + j) * w + x + i], vb = b[(y + j) * w + x + i];
          s1 += va;
          s2 += vb;
          ss += va * va + vb * vb;
          s12 += va * vb;
        }
      const double vars = ss * 64 - s1 * s1 - s2 * s2, covar = s12 * 64 - s1 * s2;
      total += (2 * s1 * s2 + c1) * (2 * covar + c2) / ((s1 * s1 + s2 * s2 + c1) * (vars + c2));
      ++windows;
    }
  return total / windows;
}

TEST(QualityMetrics, IdenticalPicturesHaveInfinitePsnrAndSsimOne) {
  const Picture p = noise(64, 48, PixelFormat::rgb24, 1);
  const FrameMetrics m = compare(p.view(), p.view());
  EXPECT_TRUE(std::isinf(m.psnr_rgb()));
  EXPECT_TRUE(std::isinf(m.psnr_y()));
  EXPECT_TRUE(std::isinf(m.psnr_cb()));
  EXPECT_TRUE(std::isinf(m.psnr_cr()));
  EXPECT_DOUBLE_EQ(m.ssim_y, 1.0);
  EXPECT_EQ(format_db(m.psnr_rgb()), "inf");
}

TEST(QualityMetrics, KnownMseGivesKnownPsnr) {
  // Red off by 4 everywhere: MSE(R) = 16, MSE(G) = MSE(B) = 0, RGB MSE = 16 / 3.
  Picture a = filled(40, 24, PixelFormat::rgb24, 100);
  Picture b = a;
  for (std::size_t i = 0; i < b.pixels.size(); i += 3) b.pixels[i] = 104;
  const FrameMetrics m = compare(a.view(), b.view());
  EXPECT_DOUBLE_EQ(m.mse_r, 16.0);
  EXPECT_DOUBLE_EQ(m.mse_g, 0.0);
  EXPECT_DOUBLE_EQ(m.mse_rgb(), 16.0 / 3);
  EXPECT_NEAR(psnr_from_mse(m.mse_r), 36.0896, 1e-4);  // 10 log10(255^2 / 16)
  EXPECT_NEAR(m.psnr_rgb(), 10 * std::log10(65025.0 / (16.0 / 3)), 1e-12);
  // Y = (19595*104 + 38470*100 + 7471*100 + 32768) >> 16 = 101 against 100: MSE 1, 48.13 dB.
  EXPECT_DOUBLE_EQ(m.mse_y, 1.0);
  EXPECT_NEAR(m.psnr_y(), 48.1308, 1e-4);
}

TEST(QualityMetrics, GrayPicturesCompareAsEqualChannels) {
  const Picture a = filled(32, 32, PixelFormat::gray8, 100);
  const Picture b = filled(32, 32, PixelFormat::gray8, 110);
  const FrameMetrics m = compare(a.view(), b.view());
  EXPECT_DOUBLE_EQ(m.mse_y, 100.0);
  EXPECT_DOUBLE_EQ(m.mse_rgb(), 100.0);
  EXPECT_DOUBLE_EQ(m.mse_cb, 0.0);  // gray has Cb = Cr = 128
  EXPECT_NEAR(m.psnr_y(), 28.1308, 1e-4);
}

TEST(QualityMetrics, SsimOfFlatPicturesFollowsTheLuminanceTerm) {
  // No variance: each window's SSIM is (2 s1 s2 + C1) / (s1^2 + s2^2 + C1) with s = 64 * value.
  const Picture a = filled(64, 64, PixelFormat::gray8, 100);
  const Picture b = filled(64, 64, PixelFormat::gray8, 140);
  const double s1 = 6400, s2 = 8960, c1 = 416;
  EXPECT_NEAR(compare(a.view(), b.view()).ssim_y, (2 * s1 * s2 + c1) / (s1 * s1 + s2 * s2 + c1), 1e-6);
}

TEST(QualityMetrics, SsimMatchesTheDirectDefinition) {
  for (const auto& [w, h] : {std::pair{64, 48}, {67, 45}, {8, 8}, {333, 101}}) {
    const Picture a = noise(w, h, PixelFormat::gray8, 7);
    const Picture b = disturbed(a, 20, 8);
    const double fast = ssim_plane(a.pixels.data(), w, b.pixels.data(), w, w, h);
    EXPECT_NEAR(fast, direct_ssim(a.pixels, b.pixels, w, h), 1e-6) << w << "x" << h;
    EXPECT_LT(fast, 1.0);
  }
}

TEST(QualityMetrics, SsimIsUndefinedBelowOneWindow) {
  const Picture a = noise(7, 20, PixelFormat::gray8, 3);
  EXPECT_TRUE(std::isnan(compare(a.view(), a.view()).ssim_y));
}

TEST(QualityMetrics, ResultsDoNotDependOnThreads) {
  const Picture a = noise(301, 177, PixelFormat::rgb24, 11);
  const Picture b = disturbed(a, 9, 12);
  const FrameMetrics one = compare(a.view(), b.view(), 1);
  for (int threads : {2, 3, 8}) {
    const FrameMetrics m = compare(a.view(), b.view(), threads);
    EXPECT_EQ(m.mse_r, one.mse_r);
    EXPECT_EQ(m.mse_cb, one.mse_cb);
    EXPECT_EQ(m.mse_y, one.mse_y);
    EXPECT_EQ(m.ssim_y, one.ssim_y);
  }
}

TEST(QualityMetrics, MismatchedPicturesAreRefused) {
  const Picture a = filled(16, 16, PixelFormat::rgb24, 0);
  const Picture b = filled(16, 17, PixelFormat::rgb24, 0);
  const Picture g = filled(16, 16, PixelFormat::gray8, 0);
  EXPECT_THROW(compare(a.view(), b.view()), UsageError);
  EXPECT_THROW(compare(a.view(), g.view()), UsageError);
}

TEST(QualityMetrics, SummaryMeanIsPsnrOfMeanMseAndWorstFirst) {
  std::vector<FrameMetrics> frames(3);
  frames[0].mse_r = frames[0].mse_g = frames[0].mse_b = 1;  // 48.13 dB
  frames[1].mse_r = frames[1].mse_g = frames[1].mse_b = 4;  // 42.11 dB, the worst
  frames[2] = FrameMetrics{};                               // identical: inf
  frames[0].ssim_y = 0.9;
  frames[1].ssim_y = 0.8;
  const Summary s = summarize(frames, 2);
  EXPECT_EQ(s.frames, 3);
  EXPECT_NEAR(s.psnr_rgb.mean, psnr_from_mse(5.0 / 3), 1e-12);
  EXPECT_NEAR(s.psnr_rgb.min, psnr_from_mse(4), 1e-12);
  EXPECT_TRUE(std::isinf(s.psnr_rgb.max));
  EXPECT_NEAR(s.ssim_y.mean, (0.9 + 0.8 + 1.0) / 3, 1e-12);
  ASSERT_EQ(s.worst.size(), 2u);
  EXPECT_EQ(s.worst[0], 1);
  EXPECT_EQ(s.worst[1], 0);
}

TEST(QualityMetrics, SummaryOfPicturesUnder8x8HasNoSsim) {
  // Every frame undefined (no 8x8 window): the summary is undefined too, not +-infinity.
  const Picture a = noise(7, 20, PixelFormat::gray8, 3);
  const Picture b = disturbed(a, 9, 4);
  const std::vector<FrameMetrics> frames = {compare(a.view(), b.view()), compare(a.view(), a.view())};
  const Summary s = summarize(frames);
  EXPECT_TRUE(std::isnan(s.ssim_y.min));
  EXPECT_TRUE(std::isnan(s.ssim_y.mean));
  EXPECT_TRUE(std::isnan(s.ssim_y.max));
  EXPECT_EQ(format_db(s.ssim_y.min, 4), "n/a");
  EXPECT_FALSE(std::isnan(s.psnr_rgb.mean));
}

}  // namespace
}  // namespace mjpeg::quality
