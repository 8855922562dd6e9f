#include "video_input.hpp"

#include <cmath>
#include <cstdio>
#include <mutex>
#include <sys/stat.h>
#include <vector>

#include <fmt/format.h>

#include "io/y4m.hpp"
#include "mjpeg/error.hpp"
#include "paths.hpp"

#if MJPEG_HAVE_OPENCV
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>
#endif

namespace mjpeg::app {

struct VideoInput::Owned {
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

VideoInput open_y4m(const std::string& path, std::int64_t max_frames) {
  VideoInput in;
  in.owned = std::make_unique<VideoInput::Owned>();
  in.owned->y4m = path == "-" ? std::make_unique<io::Y4mReader>(stdin, "standard input")
                              : std::make_unique<io::Y4mReader>(path);
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
    }
    if (bgr.cols != format_.width || bgr.rows != format_.height)
      throw Error(fmt::format("{}: frame {} is {}x{}, but the stream started at {}x{} "
                              "(resolution changes are not supported)",
                              name_, index + 1, bgr.cols, bgr.rows, format_.width,
                              format_.height));
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
  cv::VideoCapture capture(path, kind == InputKind::image_sequence ? cv::CAP_IMAGES : cv::CAP_FFMPEG);
  if (!capture.isOpened())
    throw Error(fmt::format("cannot read '{}' as {}", path,
                            kind == InputKind::video ? "a video" : "an image sequence"));
  const int width = static_cast<int>(capture.get(cv::CAP_PROP_FRAME_WIDTH));
  const int height = static_cast<int>(capture.get(cv::CAP_PROP_FRAME_HEIGHT));
  if (width <= 0 || height <= 0)
    throw Error(fmt::format("'{}' has no video stream", path));
  VideoInput in;
  rational_fps(capture.get(cv::CAP_PROP_FPS), in.fps_num, in.fps_den);
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

}  // namespace

VideoInput open_video_input(const std::string& path, InputKind kind, std::int64_t max_frames) {
  if (kind == InputKind::y4m) return open_y4m(path, max_frames);
#if MJPEG_HAVE_OPENCV
  return open_opencv(path, kind, max_frames);
#else
  throw Error(fmt::format("cannot read '{}': this build has no OpenCV, so video input must be "
                          "Y4M (e.g. ffmpeg -i {} -f yuv4mpegpipe - | mjpeg encode - ...)",
                          path, path));
#endif
}

}  // namespace mjpeg::app
