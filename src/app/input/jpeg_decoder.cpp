#include "jpeg_decoder.hpp"

#include <cstring>

#include <fmt/format.h>

#include "mjpeg/error.hpp"

#if MJPEG_HAVE_LIBAV
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/error.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
}
#include <new>

#include "libav_rgb.hpp"
#elif MJPEG_HAVE_TURBOJPEG
#include <turbojpeg.h>
#endif

namespace mjpeg::app {

#if MJPEG_HAVE_LIBAV

struct JpegDecoder::Impl {
  AVCodecContext* codec = nullptr;
  AVPacket* packet = nullptr;
  AVFrame* frame = nullptr;
  SwsContext* sws = nullptr;
  int sws_w = 0, sws_h = 0, sws_fmt = -1;
  std::vector<std::uint8_t> padded;  // input bytes + AV_INPUT_BUFFER_PADDING_SIZE zeros
  std::vector<std::uint8_t> rgb;     // swscale's padded output (libav_rgb.hpp)

  Impl() {
    av_log_set_level(AV_LOG_FATAL);
    const AVCodec* mjpeg = avcodec_find_decoder(AV_CODEC_ID_MJPEG);
    if (!mjpeg) throw Error("this FFmpeg has no mjpeg decoder");
    codec = avcodec_alloc_context3(mjpeg);
    packet = av_packet_alloc();
    frame = av_frame_alloc();
    if (!codec || !packet || !frame) throw std::bad_alloc();
    codec->thread_count = 1;  // callers decode on several threads, one decoder each
    if (avcodec_open2(codec, mjpeg, nullptr) < 0) throw Error("cannot open the mjpeg decoder");
  }
  ~Impl() {
    sws_freeContext(sws);
    av_frame_free(&frame);
    av_packet_free(&packet);
    avcodec_free_context(&codec);
  }

  /// The scaler for this frame's size and format: bicubic (ffmpeg's default), BT.601 full range
  /// in (JFIF), as video_input.cpp's LibavSource sets it up for an M-JPEG AVI.
  SwsContext* scaler(const AVFrame& f) {
    if (sws && sws_w == f.width && sws_h == f.height && sws_fmt == f.format) return sws;
    sws_freeContext(sws);
    sws = sws_getContext(f.width, f.height, static_cast<AVPixelFormat>(f.format), f.width,
                         f.height, AV_PIX_FMT_RGB24, SWS_BICUBIC, nullptr, nullptr, nullptr);
    if (!sws) throw Error("cannot convert the decoded JPEG to RGB");
    int *inv = nullptr, *tab = nullptr;
    int src_range = 0, dst_range = 0, brightness = 0, contrast = 0, saturation = 0;
    sws_getColorspaceDetails(sws, &inv, &src_range, &tab, &dst_range, &brightness, &contrast,
                             &saturation);
    sws_setColorspaceDetails(sws, sws_getCoefficients(SWS_CS_ITU601), /*full range*/ 1, tab,
                             dst_range, brightness, contrast, saturation);
    sws_w = f.width;
    sws_h = f.height;
    sws_fmt = f.format;
    return sws;
  }

  void decode(const std::vector<std::uint8_t>& jpeg, Image& out) {
    padded.assign(jpeg.size() + AV_INPUT_BUFFER_PADDING_SIZE, 0);
    std::memcpy(padded.data(), jpeg.data(), jpeg.size());
    packet->data = padded.data();
    packet->size = static_cast<int>(jpeg.size());
    int err = avcodec_send_packet(codec, packet);
    if (err >= 0) err = avcodec_receive_frame(codec, frame);
    packet->data = nullptr;
    packet->size = 0;
    if (err < 0) {
      char text[AV_ERROR_MAX_STRING_SIZE] = {};
      av_strerror(err, text, sizeof text);
      throw Error(fmt::format("cannot decode a JPEG frame: {}", text));
    }
    if (out.width != frame->width || out.height != frame->height ||
        out.format != PixelFormat::rgb24)
      out = Image(frame->width, frame->height, PixelFormat::rgb24);
    const std::size_t need = padded_rgb_bytes(frame->width, frame->height);
    if (rgb.size() < need) rgb.resize(need);
    sws_to_rgb24(scaler(*frame), *frame, frame->width, frame->height, rgb, out.pixels.data(),
                 out.stride());
    av_frame_unref(frame);
  }
};

std::string JpegDecoder::backend() { return "FFmpeg's mjpeg decoder"; }
bool JpegDecoder::available() { return true; }

#elif MJPEG_HAVE_TURBOJPEG

struct JpegDecoder::Impl {
  tjhandle handle = nullptr;
  Impl() {
    handle = tjInitDecompress();
    if (!handle) throw Error("cannot start libjpeg-turbo's decoder");
  }
  ~Impl() { tjDestroy(handle); }
  void decode(const std::vector<std::uint8_t>& jpeg, Image& out) {
    int w = 0, h = 0, sub = 0, cs = 0;
    if (tjDecompressHeader3(handle, jpeg.data(), static_cast<unsigned long>(jpeg.size()), &w,
                            &h, &sub, &cs) != 0)
      throw Error(fmt::format("cannot decode a JPEG frame: {}", tjGetErrorStr2(handle)));
    if (out.width != w || out.height != h || out.format != PixelFormat::rgb24)
      out = Image(w, h, PixelFormat::rgb24);
    if (tjDecompress2(handle, jpeg.data(), static_cast<unsigned long>(jpeg.size()),
                      out.pixels.data(), w, static_cast<int>(out.stride()), h, TJPF_RGB,
                      TJFLAG_ACCURATEDCT) != 0)
      throw Error(fmt::format("cannot decode a JPEG frame: {}", tjGetErrorStr2(handle)));
  }
};

std::string JpegDecoder::backend() { return "libjpeg-turbo"; }
bool JpegDecoder::available() { return true; }

#else

struct JpegDecoder::Impl {
  Impl() {
    throw Error("this build has no JPEG decoder (neither FFmpeg's libraries nor libjpeg-turbo)");
  }
  void decode(const std::vector<std::uint8_t>&, Image&) {}
};

std::string JpegDecoder::backend() { return "none"; }
bool JpegDecoder::available() { return false; }

#endif

JpegDecoder::JpegDecoder() : impl_(std::make_unique<Impl>()) {}
JpegDecoder::~JpegDecoder() = default;
void JpegDecoder::decode(const std::vector<std::uint8_t>& jpeg, Image& out) {
  impl_->decode(jpeg, out);
}

}  // namespace mjpeg::app
