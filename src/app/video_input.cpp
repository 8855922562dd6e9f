#include "video_input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include <fmt/format.h>

#include "interrupt.hpp"
#include "io/y4m.hpp"
#include "mjpeg/error.hpp"
#include "paths.hpp"

#if MJPEG_HAVE_LIBAV
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/error.h>
#include <libavutil/pixdesc.h>
#include <libavutil/rational.h>
#include <libswscale/swscale.h>
}
#include <new>
#endif

#if MJPEG_HAVE_OPENCV
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>
#endif

namespace mjpeg::app {

struct VideoInput::Owned {
  struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::unique_ptr<std::FILE, FileCloser> file;  ///< a FIFO opened here (outlives the reader)
  std::unique_ptr<io::Y4mReader> y4m;
};

VideoInput::VideoInput() = default;
VideoInput::~VideoInput() = default;
VideoInput::VideoInput(VideoInput&&) noexcept = default;
VideoInput& VideoInput::operator=(VideoInput&&) noexcept = default;

InputKind input_kind(const std::string& path) {
  if (path == "-") return InputKind::y4m;
  const std::string ext = lower_extension(path);
  if (ext == ".y4m") return InputKind::y4m;
  if (path.find('%') != std::string::npos) return InputKind::image_sequence;
  for (const char* still : {".ppm", ".pgm", ".pnm", ".png", ".jpg", ".jpeg", ".bmp", ".tif",
                            ".tiff", ".webp"})
    if (ext == still) return InputKind::image;
  return InputKind::video;
}

bool is_video_name(const std::string& path) {
  const std::string ext = lower_extension(path);
  for (const char* video : {".mp4", ".m4v", ".mkv", ".webm", ".avi", ".mov", ".mpg", ".mpeg",
                            ".ts", ".m2ts", ".flv", ".wmv", ".ogv", ".3gp"})
    if (ext == video) return true;
  return false;
}

namespace {

#if MJPEG_HAVE_OPENCV || MJPEG_HAVE_LIBAV
/// Throws when frame `index` (0-based) is not the stream's size: resolution changes mid-stream
/// are not supported (every buffer is sized once for the stream's geometry). Used by the
/// OpenCV and FFmpeg readers only.
void check_frame_size(const std::string& name, std::int64_t index, int width, int height,
                      const pipeline::SourceFormat& format) {
  if (width != format.width || height != format.height)
    throw Error(fmt::format("{}: frame {} is {}x{}, but the stream started at {}x{} "
                            "(resolution changes are not supported)",
                            name, index + 1, width, height, format.width, format.height));
}
#endif

/// Throws the error that a stop asked for while waiting for input turns into.
[[noreturn]] void throw_interrupted(const std::string& name) {
  throw Error(fmt::format("{}: interrupted while waiting for input", name));
}

/// A named FIFO, opened without waiting for its writer (a plain open would block until one
/// comes, deaf to Ctrl-C); then the first data (or the writer's end) is awaited in a poll that a
/// signal wakes. The descriptor is blocking again afterwards.
std::FILE* open_fifo(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw Error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  std::FILE* f = ::fdopen(fd, "rb");
  if (f == nullptr) {
    ::close(fd);
    throw std::bad_alloc();
  }
  try {
    if (!wait_readable_or_interrupt(fd)) throw_interrupted(path);
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0)
      throw Error(fmt::format("{}: {}", path, std::strerror(errno)));
  } catch (...) {
    std::fclose(f);
    throw;
  }
  return f;
}

bool is_fifo(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

VideoInput open_y4m(const std::string& path, std::int64_t max_frames) {
  VideoInput in;
  in.owned = std::make_unique<VideoInput::Owned>();
  if (path == "-") {
    // A pipe that has not delivered yet: wait where a signal is heard.
    struct stat st;
    if (::fstat(STDIN_FILENO, &st) == 0 && !S_ISREG(st.st_mode) &&
        !wait_readable_or_interrupt(STDIN_FILENO))
      throw_interrupted("standard input");
    in.owned->y4m = std::make_unique<io::Y4mReader>(stdin, "standard input");
  } else if (is_fifo(path)) {
    in.owned->file.reset(open_fifo(path));
    in.owned->y4m = std::make_unique<io::Y4mReader>(in.owned->file.get(), path);
  } else {
    in.owned->y4m = std::make_unique<io::Y4mReader>(path);
  }
  const io::Y4mInfo& info = in.owned->y4m->info();
  in.fps_num = info.fps_num;
  in.fps_den = info.fps_den;
  in.notices = info.notices;
  in.description = fmt::format("{} (Y4M)", info.describe());
  in.source = std::make_unique<pipeline::Y4mFrameSource>(*in.owned->y4m, max_frames);
  return in;
}

#if MJPEG_HAVE_OPENCV
/// The frame rate as a rational: common NTSC rates exactly, others to 1/1000.
void rational_fps(double fps, int& num, int& den) {
  if (!(fps > 0 && fps < 1000)) {
    num = 25;
    den = 1;
    return;
  }
  for (int base : {24, 30, 60, 120}) {
    if (std::fabs(fps - base * 1000.0 / 1001.0) < 1e-3) {
      num = base * 1000;
      den = 1001;
      return;
    }
  }
  if (std::fabs(fps - std::round(fps)) < 1e-3) {
    num = static_cast<int>(std::lround(fps));
    den = 1;
    return;
  }
  num = static_cast<int>(std::lround(fps * 1000));
  den = 1000;
}

/// Frames decoded by OpenCV's FFmpeg backend (or its image-sequence reader). Decoding is
/// sequential (under a lock, into the producer's own BGR buffer); the BGR -> RGB conversion
/// writes straight into the slot outside the lock.
class OpenCvSource final : public pipeline::FrameSource {
 public:
  OpenCvSource(cv::VideoCapture capture, std::string name, int width, int height,
               std::int64_t max_frames)
      : capture_(std::move(capture)), name_(std::move(name)), max_frames_(max_frames) {
    format_ = {width, height, PixelFormat::rgb24};
  }
  pipeline::SourceFormat format() const override { return format_; }
  void prepare(int producers) override { scratch_.resize(static_cast<std::size_t>(producers)); }
  bool read_into(int producer, std::uint8_t* dst, std::size_t stride,
                 std::int64_t& index) override {
    cv::Mat& bgr = scratch_[static_cast<std::size_t>(producer)];
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (ended_ || (max_frames_ >= 0 && next_ >= max_frames_)) return false;
      if (!capture_.read(bgr) || bgr.empty()) {
        ended_ = true;
        return false;
      }
      index = next_++;
      // Checked under the lock, ending the stream first: the first changed frame is the one
      // reported, whichever producer would have converted a later one.
      if (bgr.cols != format_.width || bgr.rows != format_.height) ended_ = true;
      check_frame_size(name_, index, bgr.cols, bgr.rows, format_);
    }
    if (bgr.depth() != CV_8U || bgr.channels() != 3)
      throw Error(fmt::format("{}: frame {} is not 8-bit BGR after decoding", name_, index + 1));
    cv::Mat rgb(format_.height, format_.width, CV_8UC3, dst, stride);
    cv::cvtColor(bgr, rgb, cv::COLOR_BGR2RGB);
    return true;
  }

 private:
  cv::VideoCapture capture_;
  std::string name_;
  std::int64_t max_frames_;
  pipeline::SourceFormat format_;
  std::mutex mutex_;
  std::int64_t next_ = 0;
  bool ended_ = false;
  std::vector<cv::Mat> scratch_;
};

VideoInput open_opencv(const std::string& path, InputKind kind, std::int64_t max_frames) {
  if (kind == InputKind::video) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) throw Error(fmt::format("cannot open '{}': no such file", path));
    if (S_ISDIR(st.st_mode)) throw Error(fmt::format("'{}' is a directory, not a video", path));
    if (st.st_size == 0) throw Error(fmt::format("'{}' is empty", path));
  }
  // OpenCV logs a warning when an image sequence ends (it probes the next file): errors only.
  cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_ERROR);
  cv::VideoCapture capture(path, kind == InputKind::image_sequence ? cv::CAP_IMAGES : cv::CAP_FFMPEG);
  if (!capture.isOpened())
    throw Error(fmt::format("cannot read '{}' as {}", path,
                            kind == InputKind::video ? "a video" : "an image sequence"));
  const int width = static_cast<int>(capture.get(cv::CAP_PROP_FRAME_WIDTH));
  const int height = static_cast<int>(capture.get(cv::CAP_PROP_FRAME_HEIGHT));
  if (width <= 0 || height <= 0)
    throw Error(fmt::format("'{}' has no video stream", path));
  VideoInput in;
  if (kind == InputKind::image_sequence) {
    in.fps_num = 25;  // an image sequence has no rate: 25/1, like ffmpeg's image2 demuxer
    in.fps_den = 1;
  } else {
    rational_fps(capture.get(cv::CAP_PROP_FPS), in.fps_num, in.fps_den);
  }
  const double count = capture.get(cv::CAP_PROP_FRAME_COUNT);
  if (count > 0) in.frame_count = static_cast<std::int64_t>(count);
  if (max_frames >= 0 && (in.frame_count < 0 || max_frames < in.frame_count))
    in.frame_count = max_frames;
  in.description = fmt::format("{}x{} {}/{} fps, {} frames, decoded by OpenCV ({}) to RGB",
                               width, height, in.fps_num, in.fps_den,
                               in.frame_count >= 0 ? std::to_string(in.frame_count) : "?",
                               kind == InputKind::video ? "FFmpeg backend" : "image sequence");
  if (kind == InputKind::video)
    in.notices.push_back(
        "audio, if any, is ignored; colour is converted by OpenCV as BT.601 (for BT.709 "
        "sources pipe Y4M from ffmpeg instead)");
  in.source = std::make_unique<OpenCvSource>(std::move(capture), path, width, height, max_frames);
  return in;
}
#endif

#if MJPEG_HAVE_LIBAV
/// The FFmpeg error text for an AVERROR code.
std::string av_error_text(int err) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(err, buf, sizeof buf);
  return buf;
}

/// The swscale coefficient table for a stream's colour matrix, as ffmpeg's own scale filter
/// picks it (its in_color_matrix=auto): BT.709, FCC, SMPTE 240M and BT.2020 by their tags;
/// everything else, untagged sources of any size included, BT.601.
int sws_colorspace(AVColorSpace spc) {
  switch (spc) {
    case AVCOL_SPC_BT709: return SWS_CS_ITU709;
    case AVCOL_SPC_FCC: return SWS_CS_FCC;
    case AVCOL_SPC_SMPTE240M: return SWS_CS_SMPTE240M;
    case AVCOL_SPC_BT2020_NCL:
    case AVCOL_SPC_BT2020_CL: return SWS_CS_BT2020;
    default: return SWS_CS_ITU601;
  }
}

const char* matrix_name(AVColorSpace spc) {
  switch (spc) {
    case AVCOL_SPC_BT709: return "BT.709";
    case AVCOL_SPC_BT470BG:
    case AVCOL_SPC_SMPTE170M: return "BT.601";
    case AVCOL_SPC_FCC: return "FCC";
    case AVCOL_SPC_SMPTE240M: return "SMPTE 240M";
    case AVCOL_SPC_BT2020_NCL:
    case AVCOL_SPC_BT2020_CL: return "BT.2020";
    case AVCOL_SPC_RGB: return "RGB";
    case AVCOL_SPC_UNSPECIFIED: return "untagged, as BT.601";
    default: return "other, as BT.601";
  }
}

bool is_full_range(const AVFrame& f) {
  if (f.color_range == AVCOL_RANGE_JPEG) return true;
  // The deprecated yuvj* formats mean full range even when the tag is missing.
  const auto fmt = static_cast<AVPixelFormat>(f.format);
  return fmt == AV_PIX_FMT_YUVJ420P || fmt == AV_PIX_FMT_YUVJ422P ||
         fmt == AV_PIX_FMT_YUVJ444P || fmt == AV_PIX_FMT_YUVJ440P ||
         fmt == AV_PIX_FMT_YUVJ411P;
}

struct FormatCloser {
  void operator()(AVFormatContext* c) const { avformat_close_input(&c); }
};
struct CodecFreer {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
struct FrameFreer {
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
struct PacketFreer {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct SwsFreer {
  void operator()(SwsContext* c) const { sws_freeContext(c); }
};
using FramePtr = std::unique_ptr<AVFrame, FrameFreer>;

FramePtr new_frame() {
  FramePtr f(av_frame_alloc());
  if (!f) throw std::bad_alloc();
  return f;
}

/// Frames decoded by FFmpeg's own libraries (libavformat + libavcodec) and turned into RGB by
/// libswscale with the source's colour matrix and range, as `ffmpeg -i X -pix_fmt rgb24` does.
/// Demuxing and decoding are sequential (under a lock, into the producer's own AVFrame); the
/// conversion writes straight into the slot outside the lock, with one SwsContext per producer.
class LibavSource final : public pipeline::FrameSource {
 public:
  /// Opens `path`, decodes its first frame (so that size, pixel format and colour tags are the
  /// decoder's, not the container's guess). Throws Error naming the file.
  LibavSource(const std::string& path, std::int64_t max_frames)
      : name_(path), max_frames_(max_frames) {
    av_log_set_level(AV_LOG_FATAL);
    AVFormatContext* raw = nullptr;
    int err = avformat_open_input(&raw, path.c_str(), nullptr, nullptr);
    if (err < 0)
      throw Error(fmt::format("cannot read '{}' as a video: {}", path, av_error_text(err)));
    fmtctx_.reset(raw);
    err = avformat_find_stream_info(raw, nullptr);
    if (err < 0)
      throw Error(fmt::format("cannot read '{}' as a video: {}", path, av_error_text(err)));
    const AVCodec* codec = nullptr;
    stream_ = av_find_best_stream(raw, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
    if (stream_ == AVERROR_STREAM_NOT_FOUND)
      throw Error(fmt::format("'{}' has no video stream", path));
    const AVStream* st = raw->streams[stream_ < 0 ? 0 : stream_];
    if (stream_ < 0 || !codec)
      throw Error(fmt::format("'{}': this FFmpeg has no decoder for its {} video", path,
                              stream_ < 0 ? "" : avcodec_get_name(st->codecpar->codec_id)));
    for (unsigned i = 0; i < raw->nb_streams; ++i) {
      raw->streams[i]->discard = static_cast<int>(i) == stream_ ? AVDISCARD_DEFAULT : AVDISCARD_ALL;
      if (raw->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_AUDIO) has_audio_ = true;
    }
    codec_name_ = codec->name;
    dec_.reset(avcodec_alloc_context3(codec));
    if (!dec_) throw std::bad_alloc();
    err = avcodec_parameters_to_context(dec_.get(), st->codecpar);
    if (err >= 0) {
      dec_->thread_count = 0;  // as many as there are cores: decoding is the serial part
      dec_->thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE;
      dec_->pkt_timebase = st->time_base;
      err = avcodec_open2(dec_.get(), codec, nullptr);
    }
    if (err < 0)
      throw Error(fmt::format("'{}': cannot open the {} decoder: {}", path, codec_name_,
                              av_error_text(err)));
    packet_.reset(av_packet_alloc());
    if (!packet_) throw std::bad_alloc();

    AVRational rate = st->avg_frame_rate;
    if (rate.num <= 0 || rate.den <= 0) rate = st->r_frame_rate;
    if (rate.num > 0 && rate.den > 0) {
      av_reduce(&fps_num_, &fps_den_, rate.num, rate.den, 1 << 30);
    }
    if (st->nb_frames > 0) frame_count_ = st->nb_frames;

    first_ = new_frame();
    if (!decode(*first_))
      throw Error(fmt::format("'{}' has no decodable video frames", path));
    if (first_->width <= 0 || first_->height <= 0)
      throw Error(fmt::format("'{}': the decoder gave a {}x{} frame", path, first_->width,
                              first_->height));
    format_ = {first_->width, first_->height, PixelFormat::rgb24};
    const char* pix = av_get_pix_fmt_name(static_cast<AVPixelFormat>(first_->format));
    pix_name_ = pix ? pix : "?";
    pix_format_ = first_->format;
    const bool rgb_source = first_->colorspace == AVCOL_SPC_RGB ||
                            (av_pix_fmt_desc_get(static_cast<AVPixelFormat>(first_->format)) &&
                             (av_pix_fmt_desc_get(static_cast<AVPixelFormat>(first_->format))
                                  ->flags & AV_PIX_FMT_FLAG_RGB));
    colour_ = rgb_source ? std::string("RGB")
                         : fmt::format("{} {} range", matrix_name(first_->colorspace),
                                       is_full_range(*first_) ? "full" : "limited");
  }

  pipeline::SourceFormat format() const override { return format_; }
  int fps_num() const { return fps_num_; }
  int fps_den() const { return fps_den_; }
  std::int64_t frame_count() const { return frame_count_; }
  bool has_audio() const { return has_audio_; }
  const std::string& codec_name() const { return codec_name_; }
  const std::string& pix_name() const { return pix_name_; }
  const std::string& colour() const { return colour_; }

  /// What the conversion to 8-bit RGB drops, one line each: samples of more than 8 bits
  /// (rounded to 8 by libswscale, as `ffmpeg -pix_fmt rgb24` does) and an alpha channel.
  std::vector<std::string> conversion_notices() const {
    std::vector<std::string> notices;
    const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(static_cast<AVPixelFormat>(pix_format_));
    if (!d) return notices;
    if (d->comp[0].depth > 8)
      notices.push_back(fmt::format("the source has {}-bit samples ({}); they are converted "
                                    "to 8-bit RGB",
                                    d->comp[0].depth, pix_name_));
    if (d->flags & AV_PIX_FMT_FLAG_ALPHA)
      notices.push_back(fmt::format("the source's alpha channel ({}) is ignored", pix_name_));
    return notices;
  }

  void prepare(int producers) override {
    producers_.clear();
    for (int i = 0; i < producers; ++i) {
      producers_.push_back(Producer{new_frame(), {}, -1, -1, -1, {}});
      producers_.back().rgb.resize(rgb_stride() * (static_cast<std::size_t>(format_.height) + 2) +
                                   kRgbAlign);
    }
  }

  bool read_into(int producer, std::uint8_t* dst, std::size_t stride,
                 std::int64_t& index) override {
    Producer& p = producers_.at(static_cast<std::size_t>(producer));
    AVFrame& frame = *p.frame;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (ended_ || (max_frames_ >= 0 && next_ >= max_frames_)) return false;
      av_frame_unref(&frame);
      if (first_) {
        av_frame_move_ref(&frame, first_.get());
        first_.reset();
      } else if (!decode(frame)) {
        ended_ = true;
        return false;
      }
      index = next_++;
      // Under the lock, ending the stream first (see OpenCvSource::read_into).
      if (frame.width != format_.width || frame.height != format_.height) ended_ = true;
      check_frame_size(name_, index, frame.width, frame.height, format_);
    }
    convert(p, frame, dst, stride);
    av_frame_unref(&frame);
    return true;
  }

 private:
  struct Producer {
    FramePtr frame;
    std::unique_ptr<SwsContext, SwsFreer> sws;
    int pix = -1, matrix = -1, full = -1;
    std::vector<std::uint8_t> rgb;  ///< swscale's output, rows rgb_stride() apart (see convert)
  };

  /// libswscale's output goes to a buffer laid out like an FFmpeg frame's: rows aligned to 64
  /// bytes with room to spare, two spare rows. Its SIMD converters work in groups of 8 or 16
  /// pixels and, given rows exactly width*3 bytes long, either leave the last pixels of a row
  /// unconverted (it was 6 black columns at 854x480) or write past the row (and past the last
  /// one); with ffmpeg's own buffers neither happens. The rows are then copied into the slot.
  static constexpr std::size_t kRgbAlign = 64;
  std::size_t rgb_stride() const {
    const std::size_t row = static_cast<std::size_t>(format_.width) * 3;
    return (row + 2 * kRgbAlign - 1) / kRgbAlign * kRgbAlign;
  }

  /// The next decoded frame into `out` (caller holds the lock, or the constructor runs).
  /// False at the end of the stream.
  bool decode(AVFrame& out) {
    for (;;) {
      int err = avcodec_receive_frame(dec_.get(), &out);
      if (err == 0) {
        if (out.decode_error_flags != 0 || (out.flags & AV_FRAME_FLAG_CORRUPT) != 0)
          throw Error(fmt::format("{}: damaged video data in frame {} (the decoder could only "
                                  "conceal it)",
                                  name_, next_ + 1));
        return true;
      }
      if (err == AVERROR_EOF) return false;
      if (err != AVERROR(EAGAIN))
        throw Error(fmt::format("{}: {} after frame {}: {}", name_,
                                err == AVERROR_INVALIDDATA ? "damaged video data"
                                                           : "decoding failed",
                                next_, av_error_text(err)));
      if (draining_) return false;
      err = av_read_frame(fmtctx_.get(), packet_.get());
      if (err == AVERROR_EOF) {
        draining_ = true;
        avcodec_send_packet(dec_.get(), nullptr);
        continue;
      }
      if (err < 0) throw Error(fmt::format("{}: reading failed: {}", name_, av_error_text(err)));
      if (packet_->stream_index == stream_) {
        err = avcodec_send_packet(dec_.get(), packet_.get());
        // Damaged data is an error, not a silently dropped or concealed frame: the output
        // would lack frames (or show decoder guesses) without the user knowing.
        if (err < 0 && err != AVERROR(EAGAIN)) {
          av_packet_unref(packet_.get());
          throw Error(fmt::format("{}: {} after frame {}: {}", name_,
                                  err == AVERROR_INVALIDDATA ? "damaged video data"
                                                             : "decoding failed",
                                  next_, av_error_text(err)));
        }
      }
      av_packet_unref(packet_.get());
    }
  }

  /// The frame to rgb24 at `dst`, outside the lock (each producer has its own SwsContext).
  void convert(Producer& p, const AVFrame& frame, std::uint8_t* dst, std::size_t stride) {
    const int matrix = sws_colorspace(frame.colorspace);
    const int full = is_full_range(frame) ? 1 : 0;
    if (!p.sws || p.pix != frame.format || p.matrix != matrix || p.full != full) {
      // SWS_BICUBIC is what the ffmpeg command line uses for its automatic conversion; with it
      // (and no other flags) our RGB is ffmpeg's `-pix_fmt rgb24` byte for byte.
      p.sws.reset(sws_getContext(frame.width, frame.height,
                                 static_cast<AVPixelFormat>(frame.format), format_.width,
                                 format_.height, AV_PIX_FMT_RGB24, kSwsFlags, nullptr,
                                 nullptr, nullptr));
      if (!p.sws)
        throw Error(fmt::format("{}: cannot convert its {} frames to RGB", name_,
                                av_get_pix_fmt_name(static_cast<AVPixelFormat>(frame.format))));
      int* inv = nullptr;
      int* tab = nullptr;
      int src_range = 0, dst_range = 0, brightness = 0, contrast = 0, saturation = 0;
      sws_getColorspaceDetails(p.sws.get(), &inv, &src_range, &tab, &dst_range, &brightness,
                               &contrast, &saturation);
      sws_setColorspaceDetails(p.sws.get(), sws_getCoefficients(matrix), full, tab, dst_range,
                               brightness, contrast, saturation);
      p.pix = frame.format;
      p.matrix = matrix;
      p.full = full;
    }
    const std::size_t rgb_stride = this->rgb_stride();
    std::uint8_t* rgb = p.rgb.data();
    rgb += (kRgbAlign - reinterpret_cast<std::uintptr_t>(rgb) % kRgbAlign) % kRgbAlign;
    std::uint8_t* planes[4] = {rgb, nullptr, nullptr, nullptr};
    int strides[4] = {static_cast<int>(rgb_stride), 0, 0, 0};
    sws_scale(p.sws.get(), frame.data, frame.linesize, 0, frame.height, planes, strides);
    const std::size_t row = static_cast<std::size_t>(format_.width) * 3;
    for (int y = 0; y < format_.height; ++y)
      std::memcpy(dst + static_cast<std::size_t>(y) * stride,
                  rgb + static_cast<std::size_t>(y) * rgb_stride, row);
  }

  static constexpr int kSwsFlags = SWS_BICUBIC;

  std::string name_;
  std::int64_t max_frames_;
  std::unique_ptr<AVFormatContext, FormatCloser> fmtctx_;
  std::unique_ptr<AVCodecContext, CodecFreer> dec_;
  std::unique_ptr<AVPacket, PacketFreer> packet_;
  int stream_ = -1;
  bool has_audio_ = false;
  std::string codec_name_, pix_name_, colour_;
  int pix_format_ = -1;
  int fps_num_ = 25, fps_den_ = 1;
  std::int64_t frame_count_ = -1;
  pipeline::SourceFormat format_;
  FramePtr first_;  ///< decoded at open, handed out as frame 0
  std::mutex mutex_;
  std::int64_t next_ = 0;
  bool ended_ = false, draining_ = false;
  std::vector<Producer> producers_;
};

void check_video_file(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) throw Error(fmt::format("cannot open '{}': no such file", path));
  if (S_ISDIR(st.st_mode)) throw Error(fmt::format("'{}' is a directory, not a video", path));
  if (st.st_size == 0) throw Error(fmt::format("'{}' is empty", path));
}

VideoInput open_libav(const std::string& path, std::int64_t max_frames) {
  check_video_file(path);
  auto src = std::make_unique<LibavSource>(path, max_frames);
  VideoInput in;
  in.fps_num = src->fps_num();
  in.fps_den = src->fps_den();
  in.frame_count = src->frame_count();
  if (max_frames >= 0 && (in.frame_count < 0 || max_frames < in.frame_count))
    in.frame_count = max_frames;
  const pipeline::SourceFormat f = src->format();
  in.description = fmt::format(
      "{}x{} {}/{} fps, {} frames, {} {} ({}), decoded by FFmpeg's libraries to RGB", f.width,
      f.height, in.fps_num, in.fps_den,
      in.frame_count >= 0 ? std::to_string(in.frame_count) : "?", src->codec_name(),
      src->pix_name(), src->colour());
  if (src->has_audio()) in.notices.push_back("the input's audio is ignored");
  for (std::string& n : src->conversion_notices()) in.notices.push_back(std::move(n));
  in.source = std::move(src);
  return in;
}
#endif

}  // namespace

VideoInput open_video_input(const std::string& path, InputKind kind, std::int64_t max_frames) {
  if (kind == InputKind::y4m) return open_y4m(path, max_frames);
#if MJPEG_HAVE_LIBAV
  if (kind == InputKind::video) return open_libav(path, max_frames);
#endif
#if MJPEG_HAVE_OPENCV
  return open_opencv(path, kind, max_frames);
#else
  if (kind == InputKind::image_sequence)
    throw Error(fmt::format("cannot read '{}': this build has no OpenCV, so image sequences "
                            "are not supported (convert them to Y4M with ffmpeg)", path));
  throw Error(fmt::format("cannot read '{}': this build has neither FFmpeg's libraries nor "
                          "OpenCV, so video input must be Y4M (e.g. ffmpeg -i {} -f "
                          "yuv4mpegpipe - | mjpeg encode - ...)",
                          path, path));
#endif
}

}  // namespace mjpeg::app
