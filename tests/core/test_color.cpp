// The colour conversion and downsampling arithmetic of src/core/jpeg_math.hpp (libjpeg's
// RGB -> YCbCr and its h2v1 / h2v2 downsampling). The Y4M reader's YCbCr -> RGB:
// tests/io/test_yuv_to_rgb.cpp.
#include <gtest/gtest.h>

#include "core/jpeg_math.hpp"

namespace mjpeg {
namespace {

TEST(Color, ConversionOfPrimaries) {
  EXPECT_EQ(math::rgb_to_y(255, 255, 255), 255);
  EXPECT_EQ(math::rgb_to_cb(255, 255, 255), 128);
  EXPECT_EQ(math::rgb_to_cr(0, 0, 0), 128);
  EXPECT_EQ(math::rgb_to_y(255, 0, 0), 76);
  EXPECT_EQ(math::rgb_to_cr(255, 0, 0), 255);
  EXPECT_EQ(math::rgb_to_cb(0, 0, 255), 255);
  EXPECT_EQ(math::downsample_h2v1(1, 2, 0), 1);  // bias 0 on even columns
  EXPECT_EQ(math::downsample_h2v1(1, 2, 1), 2);  // bias 1 on odd columns
  EXPECT_EQ(math::downsample_h2v2(1, 1, 1, 2, 0), 1);  // (5 + 1) >> 2
  EXPECT_EQ(math::downsample_h2v2(1, 1, 1, 2, 1), 1);  // (5 + 2) >> 2
  EXPECT_EQ(math::downsample_h2v2(1, 2, 2, 2, 1), 2);  // (7 + 2) >> 2
}

}  // namespace
}  // namespace mjpeg
