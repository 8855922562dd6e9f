#include "libav_rgb.hpp"

#include <cstring>

#include "mjpeg/error.hpp"

extern "C" {
#include <libavutil/frame.h>
#include <libswscale/swscale.h>
}

namespace mjpeg::app {
namespace {

constexpr std::size_t kAlign = 64;

std::size_t padded_stride_of(int width) {
  const std::size_t row = static_cast<std::size_t>(width) * 3;
  return (row + 2 * kAlign - 1) / kAlign * kAlign;  // at least 64 bytes (21 pixels) to spare
}

}  // namespace

std::size_t padded_rgb_bytes(int width, int height) {
  return padded_stride_of(width) * (static_cast<std::size_t>(height) + 2) + kAlign;
}

const std::uint8_t* sws_to_rgb24(SwsContext* sws, const AVFrame& frame, int width, int height,
                                 std::vector<std::uint8_t>& scratch, std::uint8_t* dst,
                                 std::size_t stride, std::size_t* padded_stride) {
  const std::size_t pstride = padded_stride_of(width);
  if (scratch.size() < padded_rgb_bytes(width, height))
    throw Error("internal error: RGB conversion buffer too small");
  std::uint8_t* rgb = scratch.data();
  rgb += (kAlign - reinterpret_cast<std::uintptr_t>(rgb) % kAlign) % kAlign;
  std::uint8_t* planes[4] = {rgb, nullptr, nullptr, nullptr};
  int strides[4] = {static_cast<int>(pstride), 0, 0, 0};
  sws_scale(sws, frame.data, frame.linesize, 0, frame.height, planes, strides);
  if (dst != nullptr) {
    const std::size_t row = static_cast<std::size_t>(width) * 3;
    for (int y = 0; y < height; ++y)
      std::memcpy(dst + static_cast<std::size_t>(y) * stride,
                  rgb + static_cast<std::size_t>(y) * pstride, row);
  }
  if (padded_stride != nullptr) *padded_stride = pstride;
  return rgb;
}

}  // namespace mjpeg::app
