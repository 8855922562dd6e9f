// Frame formats and their conversion to pixels (include/mjpeg/video.hpp): a YCbCr conversion of
// one's own (YuvCoefficients, the rounded and the libswscale-style truncated form) in the encode
// and in to_pixels; to_pixels of packed formats; slot counts and the device-memory check.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "api/internal.hpp"
#include "api_test_util.hpp"
#include "jpeg/planar.hpp"
#include "pipeline/frame_source.hpp"

namespace mjpeg::apitest {
namespace {

// Planar frames are read as the Y4M reader reads them: the formats' chroma layouts, the
// matrix and the range as the options say (the reference of the planar tests).
TEST(VideoFormats, PlanarFormatsMapToTheirY4mLayouts) {
  VideoOptions o;
  o.width = 6;
  o.height = 4;
  o.matrix = YuvMatrix::bt709;
  o.range = YuvRange::full;
  const std::pair<FrameFormat, PlanarChroma> layouts[] = {
      {FrameFormat::yuv420p, PlanarChroma::c420},
      {FrameFormat::yuv422p, PlanarChroma::c422},
      {FrameFormat::yuv444p, PlanarChroma::c444},
      {FrameFormat::yuv400p, PlanarChroma::mono}};
  for (const auto& [format, chroma] : layouts) {
    o.format = format;
    const io::Y4mInfo info = api::y4m_info(o);
    EXPECT_EQ(info.chroma, chroma) << to_string(format);
    EXPECT_EQ(info.width, 6);
    EXPECT_EQ(info.height, 4);
    EXPECT_EQ(info.matrix, YuvMatrix::bt709);
    EXPECT_EQ(info.range, YuvRange::full);
  }
}

TEST(VideoFormats, OwnCoefficientsAndToPixels) {
  VideoOptions o;
  o.width = 37;
  o.height = 22;
  o.format = FrameFormat::yuv422p;
  // A truncated-form conversion (libswscale's kind) with arbitrary coefficients.
  o.coefficients = YuvCoefficients{true, 16 * 8, 76309, 104597, -25675, -53279, 132201};
  auto frames = make_frames(o, 3);
  const pipeline::SourceFormat sf = api::source_format(o);
  std::vector<std::uint8_t> rgb(std::size_t(o.width) * o.height * 3);
  for (TestFrame& t : frames) {
    planar_to_rgb(planar_view(t.bytes.data(), o.width, o.height, sf.planar), t.pixels.data(),
                  std::size_t(o.width) * 3);
    // to_pixels: the same conversion, into a padded buffer.
    std::vector<std::uint8_t> padded(std::size_t(o.width * 3 + 5) * o.height);
    to_pixels(FrameView::contiguous(t.bytes.data(), o), o, padded.data(), o.width * 3 + 5);
    for (int y = 0; y < o.height; ++y)
      ASSERT_EQ(0, std::memcmp(padded.data() + std::size_t(y) * (o.width * 3 + 5),
                               t.pixels.data() + std::size_t(y) * o.width * 3, o.width * 3));
  }
  EXPECT_NE(frames[0].pixels, make_frames([&] { VideoOptions p; p.width = o.width; p.height = o.height; p.format = o.format; return p; }(), 1)[0].pixels)
      << "the coefficients changed nothing";
  expect_same(reference(frames, o.jpeg), push_all(o, frames));
  // bgr24 and gray8 through to_pixels.
  VideoOptions b = o;
  b.format = FrameFormat::bgr24;
  b.coefficients.reset();
  const auto bgr = make_frames(b, 1);
  std::vector<std::uint8_t> out(std::size_t(b.width) * b.height * 3);
  to_pixels(FrameView::contiguous(bgr[0].bytes.data(), b), b, out.data(), b.width * 3);
  EXPECT_EQ(out, bgr[0].pixels);
  EXPECT_TRUE(contains(message_of<UsageError>([&] {
                         to_pixels(FrameView::contiguous(bgr[0].bytes.data(), b), b, out.data(), 10);
                       }),
                       "stride 10 smaller than a row"));
}

TEST(VideoFormats, SlotCountsAndDeviceMemory) {
  VideoOptions o;
  o.width = 64;
  o.height = 64;
  EXPECT_EQ(slot_count(o, false, 1), 1);  // a still picture: one slot
  EXPECT_GT(slot_count(o, false), 1);
  o.slots = 5;
  EXPECT_EQ(slot_count(o, false, 1), 5);  // asked for: kept
  // No GPU here (or a big one): a small frame always fits.
  EXPECT_EQ(gpu_memory_problem(o, 8), "");
  o.width = 0;
  EXPECT_TRUE(contains(message_of<UsageError>([&] { slot_count(o, true); }), "width 0"));
}

TEST(VideoFormats, RoundedCoefficientsOfAMatrixConvertAsTheMatrixDoes) {
  struct Weights {
    YuvMatrix matrix;
    double kr, kb;
  };
  for (const Weights w : {Weights{YuvMatrix::bt601, 0.299, 0.114},
                          Weights{YuvMatrix::bt709, 0.2126, 0.0722},
                          Weights{YuvMatrix::bt2020, 0.2627, 0.0593}})
    for (const YuvRange range : {YuvRange::limited, YuvRange::full}) {
      VideoOptions by_matrix;
      by_matrix.width = 29;
      by_matrix.height = 17;
      by_matrix.format = FrameFormat::yuv420p;
      by_matrix.matrix = w.matrix;
      by_matrix.range = range;
      VideoOptions by_coefficients = by_matrix;
      by_coefficients.matrix = YuvMatrix::bt601;  // the coefficients decide, not these
      by_coefficients.range = YuvRange::full;
      by_coefficients.coefficients = rounded_coefficients(w.kr, w.kb, range);
      EXPECT_FALSE(by_coefficients.coefficients->truncated);
      const auto frames = make_frames(by_matrix, 2);
      for (const TestFrame& t : frames) {
        std::vector<std::uint8_t> a(std::size_t(29) * 17 * 3), b(a.size());
        to_pixels(FrameView::contiguous(t.bytes.data(), by_matrix), by_matrix, a.data(), 29 * 3);
        to_pixels(FrameView::contiguous(t.bytes.data(), by_coefficients), by_coefficients,
                  b.data(), 29 * 3);
        ASSERT_EQ(a, b) << to_string(by_matrix.format) << " matrix " << int(w.matrix)
                        << (range == YuvRange::full ? " full" : " limited");
      }
    }
  EXPECT_THROW(rounded_coefficients(0.6, 0.5, YuvRange::full), UsageError);
  EXPECT_THROW(rounded_coefficients(0, 0.1, YuvRange::full), UsageError);
}

TEST(VideoFormats, SwscaleCoefficientsFollowLibswscalesDerivation) {
  // libswscale's table for BT.601 (Cr->R, Cb->B, Cb->G, Cr->G in 16 fractional bits).
  const int bt601[4] = {117489, 138438, 13975, 34925};
  const YuvCoefficients k = swscale_coefficients(bt601, YuvRange::limited);
  EXPECT_TRUE(k.truncated);
  // y0 = 16 * 8; cy = (65536 * 255 / 219) * 8192 / 65536 and each chroma entry * 8192 / 65536,
  // rounded half up, G's negated.
  EXPECT_EQ(k.y0, 128);
  EXPECT_EQ(k.cy, 9539);
  EXPECT_EQ(k.cr_r, 14686);
  EXPECT_EQ(k.cb_g, -1747);
  EXPECT_EQ(k.cr_g, -4366);
  EXPECT_EQ(k.cb_b, 17305);
  const YuvCoefficients f = swscale_coefficients(bt601, YuvRange::full);
  EXPECT_EQ(f.y0, 0);
  EXPECT_EQ(f.cy, 8192);
  EXPECT_EQ(f.cr_r, 12901);  // the chroma entries first scaled by 224 / 255
  EXPECT_EQ(f.cb_b, 15201);
  // Black, white and grey stay neutral through the truncated form.
  VideoOptions o;
  o.width = 2;
  o.height = 2;
  o.format = FrameFormat::yuv444p;
  o.coefficients = k;
  for (const int y : {16, 235}) {
    const std::vector<std::uint8_t> frame = {std::uint8_t(y), std::uint8_t(y), std::uint8_t(y),
                                             std::uint8_t(y), 128, 128, 128, 128,
                                             128, 128, 128, 128};
    std::vector<std::uint8_t> rgb(12);
    to_pixels(FrameView::contiguous(frame.data(), o), o, rgb.data(), 6);
    for (const std::uint8_t v : rgb) EXPECT_EQ(v, y == 16 ? 0 : 255) << "Y " << y;
  }
  EXPECT_THROW(swscale_coefficients(nullptr, YuvRange::full), UsageError);
}

}  // namespace
}  // namespace mjpeg::apitest
