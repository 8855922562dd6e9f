#include "image_input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "io/pnm.hpp"
#include "mjpeg/error.hpp"

#if MJPEG_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace mjpeg::app {
namespace {

/// Checks that `path` is a readable, non-empty regular file and returns its first bytes
/// (enough to recognise a PPM/PGM signature).
std::string probe_input(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw Error(fmt::format("cannot open input '{}': {}", path, std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) throw Error(fmt::format("input '{}' is a directory", path));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(fmt::format("cannot open input '{}': {}", path, std::strerror(errno)));
  char head[2] = {};
  ssize_t n;
  do {
    n = ::read(fd, head, sizeof head);
  } while (n < 0 && errno == EINTR);
  const int err = errno;
  ::close(fd);
  if (n < 0) throw Error(fmt::format("cannot read input '{}': {}", path, std::strerror(err)));
  if (n == 0) throw Error(fmt::format("input '{}' is empty", path));
  return std::string(head, static_cast<std::size_t>(n));
}

bool has_pnm_extension(const std::string& path) {
  for (const char* ext : {".ppm", ".pgm", ".pnm", ".PPM", ".PGM", ".PNM"}) {
    const std::size_t n = std::strlen(ext);
    if (path.size() >= n && path.compare(path.size() - n, n, ext) == 0) return true;
  }
  return false;
}

#if MJPEG_HAVE_OPENCV

/// 16-bit to 8-bit with cjpeg's rounding for a 16-bit PPM (maxval 65535).
cv::Mat to_8bit(const cv::Mat& m16) {
  cv::Mat out(m16.rows, m16.cols, CV_MAKETYPE(CV_8U, m16.channels()));
  const int n = m16.cols * m16.channels();
  for (int y = 0; y < m16.rows; ++y) {
    const auto* src = m16.ptr<std::uint16_t>(y);
    auto* dst = out.ptr<std::uint8_t>(y);
    for (int i = 0; i < n; ++i) dst[i] = io::rescale_sample(src[i], 65535);
  }
  return out;
}

io::Image read_with_opencv(const std::string& path, const NoticeSink& notice) {
  cv::Mat m;
  try {
    m = cv::imread(path, cv::IMREAD_UNCHANGED);
  } catch (const cv::Exception& e) {
    throw Error(fmt::format("cannot decode input '{}': {}", path, e.what()));
  }
  if (m.empty())
    throw Error(fmt::format("cannot decode input '{}': not an image format this build reads ({})",
                            path, supported_input_formats()));
  if (m.dims != 2 || m.cols <= 0 || m.rows <= 0)
    throw Error(fmt::format("input '{}' has no 2-D image", path));

  if (m.depth() == CV_16U) {
    notice(fmt::format("'{}' has 16-bit samples; converted to 8 bits", path));
    m = to_8bit(m);
  } else if (m.depth() != CV_8U) {
    throw Error(fmt::format("input '{}' has unsupported sample type (only 8- and 16-bit integer "
                            "images are read)", path));
  }

  const int ch = m.channels();
  if (ch == 2 || ch == 4) notice(fmt::format("'{}' has an alpha channel; it is dropped", path));
  cv::Mat conv;
  io::Image img;
  switch (ch) {
    case 1: conv = m; break;
    case 2: cv::extractChannel(m, conv, 0); break;  // gray + alpha
    case 3: cv::cvtColor(m, conv, cv::COLOR_BGR2RGB); break;
    case 4: cv::cvtColor(m, conv, cv::COLOR_BGRA2RGB); break;
    default:
      throw Error(fmt::format("input '{}' has {} channels (1 to 4 are supported)", path, ch));
  }
  img = io::Image(conv.cols, conv.rows, ch <= 2 ? PixelFormat::gray8 : PixelFormat::rgb24);
  const std::size_t row_bytes = img.stride();
  for (int y = 0; y < conv.rows; ++y)
    std::memcpy(img.pixels.data() + y * row_bytes, conv.ptr<std::uint8_t>(y), row_bytes);
  return img;
}

#endif  // MJPEG_HAVE_OPENCV

}  // namespace

std::string supported_input_formats() {
#if MJPEG_HAVE_OPENCV
  return "PPM/PGM, and PNG, JPEG, BMP, TIFF, WebP and other formats through OpenCV";
#else
  return "PPM/PGM only: this build has no OpenCV";
#endif
}

io::Image read_input_image(const std::string& path, const NoticeSink& notice) {
  const std::string head = probe_input(path);
  const bool pnm = io::looks_like_pnm(reinterpret_cast<const std::uint8_t*>(head.data()),
                                      head.size());
  // A .ppm/.pgm name always goes to our reader, so that a mislabelled file gets its errors.
  if (pnm || has_pnm_extension(path)) return io::read_pnm(path);
#if MJPEG_HAVE_OPENCV
  return read_with_opencv(path, notice);
#else
  static_cast<void>(notice);
  throw Error(fmt::format("cannot read input '{}': not a PPM/PGM file, and this build "
                          "reads PPM/PGM only (built without OpenCV)", path));
#endif
}

}  // namespace mjpeg::app
