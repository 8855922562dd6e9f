#include "video_input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "image_sequence.hpp"
#include "input_relay.hpp"
#include "app/common/interrupt.hpp"
#include "app/common/wording.hpp"
#include "decode_turns.hpp"
#include "mjpeg/files.hpp"
#include "mjpeg/y4m.hpp"
#if MJPEG_HAVE_LIBAV
#include "libav_source.hpp"
#include "nvdec_input.hpp"
#endif
#include "mjpeg/error.hpp"
#include "app/common/paths.hpp"


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
  // Destroyed in reverse order: the reader, the relay (its thread stopped), then the file.
  std::unique_ptr<std::FILE, FileCloser> file;  ///< a FIFO opened here
  std::unique_ptr<InputRelay> relay;            ///< for inputs that may wait (pipes, FIFOs)
};

VideoInput::VideoInput() = default;
// The source first: it may hold page locks on the reader's file mapping, which go before
// the mapping does.
VideoInput::~VideoInput() { source.reset(); }
VideoInput::VideoInput(VideoInput&&) noexcept = default;
VideoInput& VideoInput::operator=(VideoInput&&) noexcept = default;

InputKind input_kind(const std::string& path) {
  if (path == "-") return InputKind::y4m;
  const std::string ext = lower_extension(path);
  if (ext == ".y4m") return InputKind::y4m;
  if (path.find('%') != std::string::npos && is_sequence_pattern(path))
    return InputKind::image_sequence;
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

#if MJPEG_HAVE_OPENCV
/// Throws when frame `index` (0-based) is not the stream's size: resolution changes mid-stream
/// are not supported (every buffer is sized once for the stream's geometry). Used by the
/// OpenCV and FFmpeg readers only.
void check_frame_size(const std::string& name, std::int64_t index, int width, int height,
                      const VideoOptions& format) {
  if (width != format.width || height != format.height)
    throw Error(fmt::format("{}: frame {} is {}x{}, but the stream started at {}x{} "
                            "(resolution changes are not supported)",
                            name, index + 1, width, height, format.width, format.height));
}
#endif

/// A named FIFO, opened without waiting for its writer (a plain open would block until one
/// comes, deaf to Ctrl-C); the relay then waits for its data where a signal is heard.
std::FILE* open_fifo(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw Error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  std::FILE* f = ::fdopen(fd, "rb");
  if (f == nullptr) {
    ::close(fd);
    throw std::bad_alloc();
  }
  return f;
}

bool is_fifo(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

/// Y4M carries no colour matrix (ffmpeg writes only XCOLORRANGE): --colorspace and --range
/// state the source's (`read`), and a notice says what is assumed when neither the header nor
/// an option does.
void y4m_colour(const InputOptions& options, Y4mReadOptions& read) {
  if (!options.colorspace.empty())
    read.matrix = options.colorspace == "bt709"    ? YuvMatrix::bt709
                  : options.colorspace == "bt2020" ? YuvMatrix::bt2020
                                                   : YuvMatrix::bt601;
  if (!options.range.empty())
    read.range = options.range == "full" ? YuvRange::full : YuvRange::limited;
}

void y4m_colour_notices(const Y4mStream& info, const std::string& name,
                        const InputOptions& options, std::vector<std::string>& notices) {
  const auto matrix_text = [](YuvMatrix m) {
    return m == YuvMatrix::bt709 ? "BT.709" : m == YuvMatrix::bt2020 ? "BT.2020" : "BT.601";
  };
  if (!options.colorspace.empty() && info.header_matrix && *info.header_matrix != info.matrix)
    notices.push_back(fmt::format("--colorspace {}: {} says {}, decoded as {} as stated",
                                  options.colorspace, name, matrix_text(*info.header_matrix),
                                  matrix_text(info.matrix)));
  if (!options.range.empty() && info.header_range && *info.header_range != info.range)
    notices.push_back(fmt::format("--range {}: {} says XCOLORRANGE={}, decoded as {} range as "
                                  "stated",
                                  options.range, name,
                                  *info.header_range == YuvRange::full ? "FULL" : "LIMITED",
                                  options.range));
  // One notice for what is assumed (mono has no chroma: its matrix changes nothing).
  const bool matrix_assumed = !info.header_matrix && options.colorspace.empty() &&
                              info.format != FrameFormat::yuv400p;
  const bool range_assumed = !info.header_range && options.range.empty();
  if (matrix_assumed || range_assumed) {
    const bool hd = info.width >= 1280 || info.height >= 720;
    notices.push_back(fmt::format(
        "{}: the Y4M header does not say which {} its YCbCr uses; {} assumed{} ({} state{} the "
        "source's)",
        name,
        matrix_assumed && range_assumed ? "colour matrix and range"
        : matrix_assumed                ? "colour matrix"
                                        : "range",
        matrix_assumed && range_assumed ? "BT.601 and limited range (16..235) are"
        : matrix_assumed                ? "BT.601 is"
                                        : "limited range (16..235) is",
        matrix_assumed && hd && info.matrix == YuvMatrix::bt601
            ? fmt::format(", but {}x{} is HD, which is usually BT.709", info.width, info.height)
            : std::string(),
        matrix_assumed && range_assumed ? "--colorspace bt601|bt709|bt2020 and --range limited|full"
        : matrix_assumed                ? "--colorspace bt601|bt709|bt2020"
                                        : "--range limited|full",
        matrix_assumed && range_assumed ? "" : "s"));
  }
}

VideoInput open_y4m(const std::string& path, const InputOptions& options) {
  VideoInput in;
  in.owned = std::make_unique<VideoInput::Owned>();
  // A pipe, a terminal or a FIFO may wait for data indefinitely: relayed (input_relay.hpp),
  // so that Ctrl-C ends such a wait at once.
  const std::string name = path == "-" ? "standard input" : path;
  if (path == "-" && InputRelay::needed(STDIN_FILENO)) {
    in.owned->relay = std::make_unique<InputRelay>(STDIN_FILENO, name);
  } else if (path != "-" && is_fifo(path)) {
    in.owned->file.reset(open_fifo(path));
    in.owned->relay = std::make_unique<InputRelay>(::fileno(in.owned->file.get()), name);
  }
  Y4mReadOptions read;
  read.first_frame = options.start;
  read.max_frames = options.max_frames;
  y4m_colour(options, read);
  // A regular file is mapped when options.map_y4m says so (MJPEG_Y4M_MAP=1 / =0 overrides).
  const char* map_env = std::getenv("MJPEG_Y4M_MAP");
  read.map = !in.owned->relay &&
             (map_env && *map_env ? std::string(map_env) != "0" : options.map_y4m);
  std::unique_ptr<Y4mSource> y4m;
  if (in.owned->relay) {
    try {
      y4m = std::make_unique<Y4mSource>(in.owned->relay->stream(), name, read);
    } catch (const Error&) {
      if (in.owned->relay->cut()) throw Error(name + ": interrupted while waiting for input");
      if (in.owned->relay->error() != 0)
        throw Error(fmt::format("{}: read error: {}", name,
                                std::strerror(in.owned->relay->error())));
      throw;
    }
  } else {
    y4m = path == "-" ? std::make_unique<Y4mSource>(stdin, name, read)
                      : std::make_unique<Y4mSource>(path, read);
  }
  const Y4mStream& info = y4m->stream();
  in.notices = info.notices;
  y4m_colour_notices(info, name, options, in.notices);
  in.fps_num = info.fps_num;
  in.fps_den = info.fps_den;
  in.frame_count = info.frames;
  in.description = info.description;  // "... fps Y4M 420jpeg, ..."
  in.format = y4m->video_options();
  in.gray = in.format.format == FrameFormat::yuv400p;
  in.source = std::move(y4m);
  if (in.owned->relay)
    in.source = std::make_unique<RelaySource>(std::move(in.source), *in.owned->relay);
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
class OpenCvSource final : public mjpeg::FrameSource {
 public:
  /// `announced`: the frames the container announces (< 0: unknown), checked at the end.
  OpenCvSource(cv::VideoCapture capture, std::string name, int width, int height,
               std::int64_t max_frames, std::int64_t announced, bool keep_going)
      : capture_(std::move(capture)), name_(std::move(name)), max_frames_(max_frames),
        announced_(announced), keep_going_(keep_going) {
    format_.width = width;
    format_.height = height;
  }
  /// --keep-going: what the end of the stream lacked ("" when nothing).
  std::vector<std::string> final_notices() const {
    if (lost_.empty()) return {};
    return {lost_};
  }
  const VideoOptions& format() const { return format_; }
  bool concurrent_reads() const override { return true; }
  bool read(std::int64_t index, std::uint8_t* dst) override {
    const auto scratch = scratch_.take();
    cv::Mat& bgr = *scratch;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!turns_.wait(lock, index)) return false;
      DecodeTurns::Section section(turns_);
      if (ended_ || (max_frames_ >= 0 && next_ >= max_frames_)) return false;
      if (!capture_.read(bgr) || bgr.empty()) {
        ended_ = true;
        // OpenCV's count is exact for MP4 and an estimate from the duration for others: a
        // shortfall of more than a frame or two (or 1%) means the file ends early.
        if (announced_ > 0 &&
            next_ < announced_ - std::max<std::int64_t>(2, announced_ / 100)) {
          if (!keep_going_)
            throw Error(fmt::format("'{}' ends early: its container announces {} frames, {} "
                                    "decoded; nothing written (--keep-going encodes the frames "
                                    "that decode)",
                                    name_, announced_, next_));
          lost_ = fmt::format("--keep-going: '{}' ends early: {} of the {} frames its container "
                              "announces encoded",
                              name_, next_, announced_);
        }
        return false;
      }
      ++next_;
      // Checked under the lock, ending the stream first: the first changed frame is the one
      // reported, whichever producer would have converted a later one.
      if (bgr.cols != format_.width || bgr.rows != format_.height) ended_ = true;
      check_frame_size(name_, index, bgr.cols, bgr.rows, format_);
      section.taken();
    }
    if (bgr.depth() != CV_8U || bgr.channels() != 3)
      throw Error(fmt::format("{}: frame {} is not 8-bit BGR after decoding", name_, index + 1));
    cv::Mat rgb(format_.height, format_.width, CV_8UC3, dst);
    cv::cvtColor(bgr, rgb, cv::COLOR_BGR2RGB);
    return true;
  }

 private:
  cv::VideoCapture capture_;
  std::string name_;
  std::int64_t max_frames_;
  std::int64_t announced_;
  bool keep_going_;
  std::string lost_;
  VideoOptions format_;
  std::mutex mutex_;
  std::int64_t next_ = 0;
  bool ended_ = false;
  ScratchPool<cv::Mat> scratch_{[] { return std::make_unique<cv::Mat>(); }};
  DecodeTurns turns_;
};

VideoInput open_opencv(const std::string& path, InputKind kind, const InputOptions& options) {
  const std::int64_t max_frames = options.max_frames;
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
  in.description = fmt::format("{}x{} {}/{} fps, {}, decoded by OpenCV ({}) to RGB",
                               width, height, in.fps_num, in.fps_den,
                               in.frame_count >= 0 ? count_of(in.frame_count, "frame", "frames")
                                                   : "? frames",
                               kind == InputKind::video ? "FFmpeg backend" : "image sequence");
  if (kind == InputKind::video)
    in.notices.push_back(
        "audio, if any, is ignored; colour is converted by OpenCV as BT.601 (for BT.709 "
        "sources pipe Y4M from ffmpeg instead)");
  auto src = std::make_unique<OpenCvSource>(
      std::move(capture), path, width, height, max_frames,
      kind == InputKind::video && count > 0 ? static_cast<std::int64_t>(count) : -1,
      options.keep_going);
  const OpenCvSource* raw = src.get();
  in.final_notices = [raw] { return raw->final_notices(); };
  in.format = src->format();
  in.source = std::move(src);
  return in;
}
#endif


/// The frames of `inner` from frame `skip` on, renumbered from 0 (--start): the first read
/// reads (decodes) the frames before the range and drops them; the other readers wait for
/// that, then frames pass through.
class SkipSource final : public mjpeg::FrameSource {
 public:
  SkipSource(std::unique_ptr<mjpeg::FrameSource> inner, std::int64_t skip, std::size_t frame_bytes)
      : inner_(std::move(inner)), skip_(skip), frame_bytes_(frame_bytes) {}
  bool read(std::int64_t index, std::uint8_t* dst) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!skipped_) {
        skipped_ = true;
        ended_ = true;  // until the frames before the range were read (a read may throw)
        std::vector<std::uint8_t> scratch(frame_bytes_);
        bool more = true;
        for (std::int64_t i = 0; i < skip_ && more; ++i) more = inner_->read(i, scratch.data());
        ended_ = !more;
      }
      if (ended_) return false;
    }
    return inner_->read(index + skip_, dst);
  }
  bool concurrent_reads() const override { return inner_->concurrent_reads(); }
  int max_concurrent_reads() const override { return inner_->max_concurrent_reads(); }

 private:
  std::unique_ptr<mjpeg::FrameSource> inner_;
  const std::int64_t skip_;
  const std::size_t frame_bytes_;
  std::mutex mutex_;
  bool skipped_ = false, ended_ = false;
};

VideoInput open_video_input_cpu(const std::string& path, InputKind kind,
                                const InputOptions& options);

VideoInput open_frames(const std::string& path, InputKind kind, const InputOptions& options) {
  if (kind == InputKind::image_sequence) return open_image_sequence(path, options);
#if MJPEG_HAVE_LIBAV
  if (kind == InputKind::video) return open_libav(path, options);
#endif
#if MJPEG_HAVE_OPENCV
  return open_opencv(path, kind, options);
#else
  throw Error(fmt::format("cannot read '{}': this build has neither FFmpeg's libraries nor "
                          "OpenCV, so video input must be Y4M (e.g. ffmpeg -i {} -f "
                          "yuv4mpegpipe - | mjpeg encode - ...)",
                          path, path));
#endif
}

}  // namespace

VideoInput open_video_input(const std::string& path, InputKind kind, const InputOptions& options) {
  if (kind == InputKind::y4m) return open_y4m(path, options);  // reads the range itself
#if MJPEG_HAVE_LIBAV
  // Compressed video on the GPU's decoders where they can (it applies --start itself).
  std::string cpu_notice;
  if (kind == InputKind::video)
    if (std::optional<VideoInput> gpu = open_nvdec(path, options, cpu_notice))
      return std::move(*gpu);
  if (!cpu_notice.empty()) {
    VideoInput in = open_video_input_cpu(path, kind, options);
    in.notices.insert(in.notices.begin(), cpu_notice);
    return in;
  }
#endif
  return open_video_input_cpu(path, kind, options);
}

namespace {

VideoInput open_video_input_cpu(const std::string& path, InputKind kind,
                                const InputOptions& options) {
  if (options.start <= 0) return open_frames(path, kind, options);
  InputOptions whole = options;  // frames up to the end of the range
  whole.start = 0;
  if (options.max_frames >= 0) whole.max_frames = options.start + options.max_frames;
  VideoInput in = open_frames(path, kind, whole);
  in.source = std::make_unique<SkipSource>(std::move(in.source), options.start, frame_bytes(in.format));
  if (in.frame_count >= 0) in.frame_count = std::max<std::int64_t>(0, in.frame_count - options.start);
  return in;
}

}  // namespace

}  // namespace mjpeg::app
