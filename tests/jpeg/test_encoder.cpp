// encode_jpeg (include/mjpeg/encoder.hpp, src/jpeg/encoder.cpp): the options it refuses and
// the markers it writes, in libjpeg's order. Its bytes against libjpeg-turbo: test_exactness.cpp.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "mjpeg/encoder.hpp"
#include "mjpeg/error.hpp"
#include "mjpeg/options.hpp"

namespace mjpeg {
namespace {

TEST(Encoder, RejectsInvalidOptions) {
  std::vector<std::uint8_t> px(3 * 4 * 4, 128);
  const ImageView view{px.data(), 4, 4, PixelFormat::rgb24, 12};
  EncodeOptions o;
  o.quality = 0;
  EXPECT_THROW(encode_jpeg(view, o), UsageError);
  o.quality = 101;
  EXPECT_THROW(encode_jpeg(view, o), UsageError);
  o.quality = 90;
  o.restart_interval = -1;
  EXPECT_THROW(encode_jpeg(view, o), UsageError);
  o.restart_interval = 65536;
  EXPECT_THROW(encode_jpeg(view, o), UsageError);
  EXPECT_THROW(parse_subsampling("411"), UsageError);
  EXPECT_EQ(parse_subsampling("gray"), Subsampling::gray);
}

TEST(Encoder, WritesMarkersInLibjpegOrder) {
  std::vector<std::uint8_t> px(3 * 16 * 16, 90);
  const ImageView view{px.data(), 16, 16, PixelFormat::rgb24, 48};
  EncodeOptions o;
  o.restart_interval = 1;
  const auto jpeg = encode_jpeg(view, o);
  std::vector<int> markers;
  for (std::size_t i = 2; i + 3 < jpeg.size();) {  // walk the segments up to SOS
    ASSERT_EQ(jpeg[i], 0xFF);
    markers.push_back(jpeg[i + 1]);
    if (jpeg[i + 1] == 0xDA) break;
    i += 2 + (jpeg[i + 2] << 8 | jpeg[i + 3]);
  }
  const std::vector<int> expected = {0xE0, 0xDB, 0xDB, 0xC0, 0xC4, 0xC4, 0xC4, 0xC4, 0xDD, 0xDA};
  EXPECT_EQ(markers, expected);
  EXPECT_EQ(jpeg[0], 0xFF);
  EXPECT_EQ(jpeg[1], 0xD8);
  EXPECT_EQ(jpeg[jpeg.size() - 2], 0xFF);
  EXPECT_EQ(jpeg[jpeg.size() - 1], 0xD9);
}

}  // namespace
}  // namespace mjpeg
