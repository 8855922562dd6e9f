#include "libav_rgb.hpp"

#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "decode_turns.hpp"
#include "mjpeg/error.hpp"

extern "C" {
#include <libavutil/frame.h>
#include <libavutil/pixfmt.h>
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

SwsContext* rgb24_scaler(int width, int height, int pix_fmt, const int* table, bool full) {
  // SWS_BICUBIC is what the ffmpeg command line uses for its automatic conversion; with it (and
  // no other flags) the RGB is ffmpeg's `-pix_fmt rgb24` byte for byte.
  SwsContext* sws = sws_getContext(width, height, static_cast<AVPixelFormat>(pix_fmt), width,
                                   height, AV_PIX_FMT_RGB24, SWS_BICUBIC, nullptr, nullptr, nullptr);
  if (sws == nullptr) return nullptr;
  int* inv = nullptr;
  int* tab = nullptr;
  int src_range = 0, dst_range = 0, brightness = 0, contrast = 0, saturation = 0;
  sws_getColorspaceDetails(sws, &inv, &src_range, &tab, &dst_range, &brightness, &contrast,
                           &saturation);
  sws_setColorspaceDetails(sws, table, full ? 1 : 0, tab, dst_range, brightness, contrast,
                           saturation);
  return sws;
}

namespace {

struct ScalerFreer {
  void operator()(SwsContext* c) const { sws_freeContext(c); }
};

/// swscale_source's source: reads planar frames in turn, converts them outside the lock.
class SwscaleSource final : public mjpeg::FrameSource {
 public:
  SwscaleSource(std::unique_ptr<mjpeg::FrameSource> planes, const VideoOptions& format,
                const int* table)
      : planes_(std::move(planes)), format_(format), table_(table) {
    pix_fmt_ = format.format == FrameFormat::yuv420p   ? AV_PIX_FMT_YUV420P
               : format.format == FrameFormat::yuv422p ? AV_PIX_FMT_YUV422P
                                                       : AV_PIX_FMT_YUV444P;
    if (!is_planar(format.format) || format.format == FrameFormat::yuv400p)
      throw UsageError("swscale_source: not a planar YCbCr format");
  }
  bool concurrent_reads() const override { return true; }
  std::int64_t frame_count() const override { return planes_->frame_count(); }
  bool read(std::int64_t index, std::uint8_t* dst) override {
    const auto p = producers_.take();
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!turns_.wait(lock, index)) return false;
      DecodeTurns::Section section(turns_);
      if (!planes_->read(index, p->planes.data())) return false;
      section.taken();
    }
    if (!p->sws) {
      p->sws.reset(rgb24_scaler(format_.width, format_.height, pix_fmt_, table_,
                                format_.range == YuvRange::full));
      if (!p->sws) throw Error("libswscale cannot convert these frames to RGB");
    }
    const FrameView v = FrameView::contiguous(p->planes.data(), format_);
    AVFrame frame{};
    for (int i = 0; i < 3; ++i) {
      frame.data[i] = const_cast<std::uint8_t*>(v.plane[i]);
      frame.linesize[i] = static_cast<int>(v.stride[i]);
    }
    frame.width = format_.width;
    frame.height = format_.height;
    frame.format = pix_fmt_;
    sws_to_rgb24(p->sws.get(), frame, format_.width, format_.height, p->rgb, dst,
                 static_cast<std::size_t>(format_.width) * 3);
    return true;
  }

 private:
  struct Producer {
    std::vector<std::uint8_t> planes;
    std::unique_ptr<SwsContext, ScalerFreer> sws;
    std::vector<std::uint8_t> rgb;
  };
  std::unique_ptr<mjpeg::FrameSource> planes_;
  const VideoOptions format_;
  const int* table_;
  int pix_fmt_ = AV_PIX_FMT_NONE;
  std::mutex mutex_;
  DecodeTurns turns_;
  ScratchPool<Producer> producers_{[this] {
    auto p = std::make_unique<Producer>();
    p->planes.resize(frame_bytes(format_));
    p->rgb.resize(padded_rgb_bytes(format_.width, format_.height));
    return p;
  }};
};

}  // namespace

std::unique_ptr<mjpeg::FrameSource> swscale_source(std::unique_ptr<mjpeg::FrameSource> planes,
                                                   const VideoOptions& format,
                                                   const int* table) {
  return std::make_unique<SwscaleSource>(std::move(planes), format, table);
}

}  // namespace mjpeg::app
