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
#include "raw_source.hpp"
#include "ycbcr.hpp"
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


#if MJPEG_HAVE_OPENCV && !MJPEG_HAVE_LIBAV
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>
#endif

namespace mjpeg::app {

struct VideoInput::Owned {
  std::unique_ptr<InputFile> file;  ///< the input (and its relay), which the source reads
};

VideoInput::VideoInput() = default;
// The source first: it may hold page locks on the reader's file mapping, which go before
// the mapping does.
VideoInput::~VideoInput() { source.reset(); }
VideoInput::VideoInput(VideoInput&&) noexcept = default;

void VideoInput::own(std::unique_ptr<InputFile> file) {
  if (!owned) owned = std::make_unique<Owned>();
  owned->file = std::move(file);
}
VideoInput& VideoInput::operator=(VideoInput&&) noexcept = default;

namespace {

#if MJPEG_HAVE_OPENCV && !MJPEG_HAVE_LIBAV
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

VideoInput open_y4m(Input input, const InputOptions& options) {
  InputFile& file = *input.file;
  Y4mReadOptions read;
  read.first_frame = options.start;
  read.max_frames = options.max_frames;
  // Y4M carries no colour matrix (ffmpeg writes only XCOLORRANGE): --colorspace and --range
  // state the source's.
  read.matrix = stated_matrix(options);
  read.range = stated_range(options);
  read.keep_going = options.keep_going;
  std::optional<PartPlan> plan;
  if (options.part.given()) {
    // The frames of a Y4M file of plain frame headers are counted from its size.
    if (!file.regular() || input.path == "-")
      throw UsageError(fmt::format("--part splits a file whose frames can be counted, not {} "
                                   "(write it to a file first)",
                                   input.path == "-" ? "standard input" : "a pipe"));
    const std::int64_t total = Y4mSource(input.path).frame_count();
    if (total < 0 && options.max_frames < 0)
      throw Error(fmt::format("--part: the frames of '{}' cannot be counted from its size (frame "
                              "headers with parameters, or a last frame cut short): give "
                              "--frames N",
                              input.path));
    plan = plan_part(options.part, total < 0 ? options.start + options.max_frames : total,
                     options.start, options.max_frames, input.path);
    plan->counted = total < 0 ? "as --start and --frames say" : "from its file size";
    read.first_frame = plan->range.first;
    read.max_frames = plan->range.count;
  }
  // A regular file is mapped when options.map_y4m says so (MJPEG_Y4M_MAP=1 / =0 overrides).
  const char* map_env = std::getenv("MJPEG_Y4M_MAP");
  read.map = file.regular() &&
             (map_env && *map_env ? std::string(map_env) != "0" : options.map_y4m);
  std::unique_ptr<Y4mSource> y4m;
  try {
    y4m = std::make_unique<Y4mSource>(file.stdio(), file.name(), read);
  } catch (const Error&) {
    // A stream that ended early because of a signal or a read error: that is what to say.
    const std::string problem = file.stream_problem();
    if (!problem.empty()) throw Error(problem);
    throw;
  }
  VideoInput in;
  const Y4mStream& info = y4m->stream();
  in.notices = info.notices;
  if (info.format != FrameFormat::yuv400p)  // gray: its RGB is its luma, whatever they are
    colour_notices(file.name(), "the Y4M header does not say", info.width, info.height,
                   info.header_matrix, info.header_range, info.matrix, info.range, options,
                   in.notices);
  in.fps_num = info.fps_num;
  in.fps_den = info.fps_den;
  in.frame_count = info.frames;
  // The RGB of these planes is ffmpeg's, as from a video file holding them.
  const PlanarInput planes =
      planar_input(info.format, info.width, info.height, info.matrix, info.range);
  if (planes.planes.coefficients) y4m->set_coefficients(*planes.planes.coefficients);
  in.description = info.description + ", " + planes.how();  // "... fps Y4M 420jpeg, ..."
  const Y4mSource* reader = y4m.get();
  const std::string name = file.name();
  in.final_notices = [reader, name]() -> std::vector<std::string> {
    const std::string lost = reader->lost();
    if (lost.empty()) return {};
    return {fmt::format("--keep-going: {}: {}", name, lost)};
  };
  in.aspect_num = info.aspect_num;
  in.aspect_den = info.aspect_den;
  in.format = planes.format;
  in.gray = info.format == FrameFormat::yuv400p;
  in.plan = plan;
  in.source = planar_source(std::move(y4m), planes);
  if (file.relay() != nullptr)
    in.source = std::make_unique<RelaySource>(std::move(in.source), *file.relay());
  in.own(std::move(input.file));
  return in;
}

#if MJPEG_HAVE_OPENCV && !MJPEG_HAVE_LIBAV
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

/// A video file (OpenCV opens it by its name: a regular file only) or an image sequence.
VideoInput open_opencv(const std::string& path, InputKind kind, const InputOptions& options) {
  const std::int64_t max_frames = options.max_frames;
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

VideoInput open_frames(Input input, const InputOptions& options) {
  if (input.kind == InputKind::image_sequence) return open_image_sequence(input.path, options);
#if MJPEG_HAVE_LIBAV
  VideoInput in = open_libav(*input.file, options);
  if (input.file->relay() != nullptr)
    in.source = std::make_unique<RelaySource>(std::move(in.source), *input.file->relay());
  // The source reads the input: it goes first (~VideoInput), then the input.
  in.own(std::move(input.file));
  return in;
#elif MJPEG_HAVE_OPENCV
  if (!input.file->regular())
    throw Error(fmt::format("cannot read a video from {}: this build reads videos through "
                            "OpenCV, from files only (pipe Y4M instead: ffmpeg -i IN -f "
                            "yuv4mpegpipe - | mjpeg encode - ...)",
                            input.file->name()));
  return open_opencv(input.path == "-" ? "/dev/stdin" : input.path, InputKind::video, options);
#else
  throw Error(fmt::format("cannot read '{}': this build has neither FFmpeg's libraries nor "
                          "OpenCV, so video input must be Y4M (e.g. ffmpeg -i {} -f "
                          "yuv4mpegpipe - | mjpeg encode - ...)",
                          input.name(), input.path));
#endif
}

/// A video or an image sequence, decoded on the CPU (--start read and dropped where the reader
/// cannot find the range's first frame itself).
VideoInput open_video_input_cpu(Input input, const InputOptions& options) {
  // Image sequences and FFmpeg's libraries find a range's first frame themselves.
  const bool finds_range = input.kind == InputKind::image_sequence ||
                           (MJPEG_HAVE_LIBAV && input.kind == InputKind::video);
  if (finds_range || (options.start <= 0 && !options.part.given()))
    return open_frames(std::move(input), options);
  if (options.part.given())
    throw Error(fmt::format("--part needs the exact frame count of '{}', which this build cannot "
                            "read (it has no FFmpeg libraries; OpenCV only estimates a video's "
                            "frames): convert it to Y4M or an image sequence, or use --start "
                            "and --frames",
                            input.name()));
  InputOptions whole = options;  // frames up to the end of the range
  whole.start = 0;
  if (options.max_frames >= 0) whole.max_frames = options.start + options.max_frames;
  VideoInput in = open_frames(std::move(input), whole);
  in.source = std::make_unique<SkipSource>(std::move(in.source), options.start, frame_bytes(in.format));
  if (in.frame_count >= 0) in.frame_count = std::max<std::int64_t>(0, in.frame_count - options.start);
  return in;
}

}  // namespace

VideoInput open_video_input(Input input, const InputOptions& options) {
  switch (input.kind) {
    case InputKind::image:
      throw UsageError(fmt::format("'{}' is a still picture, not a stream", input.name()));
    case InputKind::y4m: return open_y4m(std::move(input), options);  // reads the range itself
    case InputKind::raw: return open_raw(std::move(input.file), options);
    case InputKind::image_sequence:
    case InputKind::video: break;
  }
#if MJPEG_HAVE_LIBAV
  // Compressed video on the GPU's decoders where they can (it applies --start itself). They
  // read a file, parts of it at once: a pipe is decoded on the CPU.
  std::string cpu_notice;
  if (input.kind == InputKind::video) {
    if (input.file->regular() && input.path != "-") {
      if (std::optional<VideoInput> gpu = open_nvdec(input.path, options, cpu_notice))
        return std::move(*gpu);
    } else if (options.decoder == "gpu") {
      throw Error(fmt::format("--decoder gpu: NVDEC's decoders read a file (parts of it at "
                              "once), and {} is a pipe",
                              input.name()));
    } else if (options.decoder == "auto" && options.gpu_device >= 0) {
      cpu_notice = fmt::format("{} is decoded on the CPU: NVDEC's decoders read a file (parts "
                               "of it at once), not a pipe",
                               input.name());
    }
  }
  if (!cpu_notice.empty()) {
    VideoInput in = open_video_input_cpu(std::move(input), options);
    in.notices.insert(in.notices.begin(), cpu_notice);
    return in;
  }
#endif
  return open_video_input_cpu(std::move(input), options);
}

std::optional<double> video_header_pixels(const std::string& path, const InputOptions& options) {
#if MJPEG_HAVE_LIBAV
  try {
    return libav_header_pixels(path, options);
  } catch (const std::exception&) {  // (a library that cannot load: the full open says so)
    return std::nullopt;
  }
#else
  (void)path;
  (void)options;
  return std::nullopt;
#endif
}

VideoInput open_video_input(const std::string& path, const InputOptions& options) {
  return open_video_input(open_input(path, options.raw.given()), options);
}

}  // namespace mjpeg::app
