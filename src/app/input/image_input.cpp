#include "image_input.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "pnm.hpp"
#include "mjpeg/encoder.hpp"
#include "mjpeg/error.hpp"

#if MJPEG_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace mjpeg::app {
namespace {

/// Reads a TIFF structure (header at `t`, `n` bytes) for IFD0's Orientation tag (0x0112) and,
/// when asked, its ImageWidth and ImageLength.
int tiff_orientation(const std::uint8_t* t, std::size_t n, int* width = nullptr,
                     int* height = nullptr) {
  if (n < 8) return 1;
  const bool le = t[0] == 'I' && t[1] == 'I';
  if (!le && !(t[0] == 'M' && t[1] == 'M')) return 1;
  const auto u16 = [&](std::size_t at) -> unsigned {
    return le ? t[at] | (t[at + 1] << 8) : (t[at] << 8) | t[at + 1];
  };
  const auto u32 = [&](std::size_t at) -> std::uint32_t {
    return le ? t[at] | (t[at + 1] << 8) | (t[at + 2] << 16) | (std::uint32_t(t[at + 3]) << 24)
              : (std::uint32_t(t[at]) << 24) | (t[at + 1] << 16) | (t[at + 2] << 8) | t[at + 3];
  };
  if (u16(2) != 42) return 1;
  const std::uint32_t ifd = u32(4);
  if (ifd < 8 || ifd + 2 > n) return 1;
  const unsigned entries = u16(ifd);
  int orientation = 1;
  for (unsigned i = 0; i < entries; ++i) {
    const std::size_t e = ifd + 2 + 12 * std::size_t(i);
    if (e + 12 > n) break;
    const unsigned tag = u16(e), type = u16(e + 2);
    if (u32(e + 4) != 1) continue;
    const std::uint32_t v = type == 3 ? u16(e + 8) : type == 4 ? u32(e + 8) : 0;
    if (tag == 0x0112 && type == 3 && v >= 1 && v <= 8) orientation = int(v);
    if (tag == 0x0100 && width != nullptr) *width = int(v);
    if (tag == 0x0101 && height != nullptr) *height = int(v);
  }
  return orientation;
}

}  // namespace

void check_jpeg_size(const std::string& name, long long width, long long height) {
  if (width > kMaxDimension || height > kMaxDimension)
    throw Error(fmt::format("'{}' is {}x{} pixels, above {} per side, libjpeg's limit (cjpeg, "
                            "djpeg and most JPEG readers refuse larger pictures)",
                            name, width, height, kMaxDimension));
}

void check_optimize_size(int width, int height, Subsampling sampling, bool optimize) {
  if (!optimize || optimize_fits(width, height, sampling)) return;
  throw UsageError(fmt::format("--optimize: a {}x{} frame at {} can hold more of one Huffman "
                               "symbol than its 32-bit counts allow; encode it without "
                               "--optimize, or at 4:2:0",
                               width, height, to_string(sampling)));
}

Density bmp_density(const std::uint8_t* h, std::size_t size) {
  Density d;
  if (size < 46 || h[0] != 'B' || h[1] != 'M') return d;
  const auto le32 = [&](int at) {
    return static_cast<std::int32_t>(std::uint32_t(h[at]) | std::uint32_t(h[at + 1]) << 8 |
                                     std::uint32_t(h[at + 2]) << 16 |
                                     std::uint32_t(h[at + 3]) << 24);
  };
  if (le32(14) < 40) return d;  // OS/2 1.x headers (12 bytes) have no resolution
  const std::int32_t x = le32(38), y = le32(42);
  if (x <= 0 || y <= 0) return d;
  // cjpeg stores them as UINT16: the same truncation.
  d.x_dots_per_cm = static_cast<std::uint16_t>(x / 100);
  d.y_dots_per_cm = static_cast<std::uint16_t>(y / 100);
  return d;
}

int exif_orientation(const std::uint8_t* b, std::size_t size, bool* tiff, int* width,
                     int* height) {
  if (tiff != nullptr) *tiff = false;
  const std::size_t n = std::min<std::size_t>(size, 65536);
  if (n >= 4 && ((b[0] == 'I' && b[1] == 'I' && b[2] == 42 && b[3] == 0) ||
                 (b[0] == 'M' && b[1] == 'M' && b[2] == 0 && b[3] == 42))) {
    if (tiff != nullptr) *tiff = true;
    return tiff_orientation(b, n, width, height);
  }
  if (n < 4 || b[0] != 0xFF || b[1] != 0xD8) return 1;
  // JPEG: the marker segments before the first scan, looking for APP1 "Exif\0\0".
  std::size_t at = 2;
  while (at + 4 <= n && b[at] == 0xFF) {
    const unsigned marker = b[at + 1];
    if (marker == 0xD8 || (marker >= 0xD0 && marker <= 0xD7) || marker == 0x01 || marker == 0xFF) {
      at += marker == 0xFF ? 1 : 2;
      continue;
    }
    if (marker == 0xDA || marker == 0xD9) break;  // start of scan / end of image
    const std::size_t len = (std::size_t(b[at + 2]) << 8) | b[at + 3];
    if (len < 2) break;
    if (marker == 0xE1 && len >= 8 && at + 4 + 6 <= n &&
        std::memcmp(&b[at + 4], "Exif\0\0", 6) == 0)
      return tiff_orientation(&b[at + 10], std::min(n, at + 2 + len) - (at + 10));
    at += 2 + len;
  }
  return 1;
}

namespace {

#if MJPEG_HAVE_OPENCV

/// 16-bit to 8-bit with cjpeg's rounding for a 16-bit PPM (maxval 65535).
cv::Mat to_8bit(const cv::Mat& m16) {
  cv::Mat out(m16.rows, m16.cols, CV_MAKETYPE(CV_8U, m16.channels()));
  const int n = m16.cols * m16.channels();
  for (int y = 0; y < m16.rows; ++y) {
    const auto* src = m16.ptr<std::uint16_t>(y);
    auto* dst = out.ptr<std::uint8_t>(y);
    for (int i = 0; i < n; ++i) dst[i] = rescale_sample(src[i], 65535);
  }
  return out;
}

/// EXIF orientation `o` (2..8) applied to `m`: the picture as viewers show it.
cv::Mat orient(const cv::Mat& m, int o) {
  cv::Mat out;
  switch (o) {
    case 2: cv::flip(m, out, 1); break;                             // mirrored left to right
    case 3: cv::rotate(m, out, cv::ROTATE_180); break;
    case 4: cv::flip(m, out, 0); break;                             // upside down
    case 5: cv::transpose(m, out); break;                           // mirrored about the diagonal
    case 6: cv::rotate(m, out, cv::ROTATE_90_CLOCKWISE); break;
    case 7: cv::transpose(m, out); cv::rotate(out, out, cv::ROTATE_180); break;
    case 8: cv::rotate(m, out, cv::ROTATE_90_COUNTERCLOCKWISE); break;
    default: out = m;
  }
  return out;
}

const char* orientation_words(int o) {
  switch (o) {
    case 2: return "mirrored left to right";
    case 3: return "rotated by 180 degrees";
    case 4: return "flipped upside down";
    case 5: return "mirrored about its main diagonal";
    case 6: return "rotated by 90 degrees clockwise";
    case 7: return "mirrored about its other diagonal";
    case 8: return "rotated by 90 degrees counterclockwise";
    default: return "as stored";
  }
}

Image decode_with_opencv(const std::vector<std::uint8_t>& bytes, const std::string& path,
                         const NoticeSink& notice, bool autorotate) {
  // OpenCV refuses pictures above 2^30 pixels unless told otherwise; we take 65500x65500
  // (memory permitting). Read by OpenCV once, at its first decode.
  static const bool limit_set = [] {
    ::setenv("OPENCV_IO_MAX_IMAGE_PIXELS", "4294836225", /*overwrite=*/0);
    return true;
  }();
  static_cast<void>(limit_set);
  cv::Mat m;
  try {
    m = cv::imdecode(cv::_InputArray(bytes.data(), static_cast<int>(std::min<std::size_t>(
                                                      bytes.size(), INT32_MAX))),
                     cv::IMREAD_UNCHANGED);
  } catch (const std::exception& e) {
    // (cv::Exception, caught as what it derives from: its typeinfo would tie the executable to
    // OpenCV's libraries from the start, CMakeLists.txt's lazy loading)
    throw Error(fmt::format("cannot decode input '{}': {}", path, e.what()));
  }
  if (m.empty())
    throw Error(fmt::format("cannot decode input '{}': not an image format this build reads ({})",
                            path, supported_input_formats()));
  if (m.dims != 2 || m.cols <= 0 || m.rows <= 0)
    throw Error(fmt::format("input '{}' has no 2-D image", path));
  check_jpeg_size(path, m.cols, m.rows);

  // IMREAD_UNCHANGED keeps 16 bits and alpha, and with them a JPEG's orientation as stored:
  // its EXIF Orientation is applied here. A TIFF comes out of OpenCV's reader (libtiff)
  // already turned by its Orientation tag: --no-autorotate turns it back.
  bool tiff = false;
  int stored_w = 0, stored_h = 0;
  const int o = exif_orientation(bytes.data(), bytes.size(), &tiff, &stored_w, &stored_h);
  if (o != 1) {
    const bool swaps = o >= 5;
    // (Unless its size shows otherwise: a turn that swaps the axes visibly did not happen.)
    const bool turned_already =
        tiff && !(swaps && m.cols == stored_w && m.rows == stored_h && stored_w != stored_h);
    const int w = turned_already && swaps ? m.rows : m.cols;
    const int h = turned_already && swaps ? m.cols : m.rows;
    if (autorotate) {
      if (!turned_already) m = orient(m, o);
      notice(fmt::format("'{}' is shown {} (EXIF orientation {}): its {}x{} pixels are turned{} "
                         "as viewers show them (--no-autorotate keeps them as stored)",
                         path, orientation_words(o), o, w, h,
                         m.cols != w ? fmt::format(" to {}x{}", m.cols, m.rows) : ""));
    } else {
      if (turned_already) m = orient(m, o == 6 ? 8 : o == 8 ? 6 : o);  // the inverse turn
      notice(fmt::format("'{}' is shown {} (EXIF orientation {}); --no-autorotate keeps its "
                         "{}x{} pixels as stored",
                         path, orientation_words(o), o, w, h));
    }
  }

  if (m.depth() == CV_16U) {
    notice(fmt::format("'{}' has 16-bit samples; converted to 8 bits", path));
    m = to_8bit(m);
  } else if (m.depth() != CV_8U) {
    throw Error(fmt::format("input '{}' has unsupported sample type (only 8- and 16-bit integer "
                            "images are read)", path));
  }

  const int ch = m.channels();
  if (ch == 2 || ch == 4) notice(fmt::format("'{}' has an alpha channel; it is dropped", path));
  // OpenCV's PNG reader expands a grey+alpha picture (and a grey one with transparency) to
  // BGRA: the grey, B = G = R, is kept as grey.
  const bool grey_png = (ch == 3 || ch == 4) && picture_is_grey(bytes.data(), bytes.size()) == 1;
  cv::Mat conv;
  Image img;
  switch (grey_png ? 2 : ch) {
    case 1: conv = m; break;
    case 2: cv::extractChannel(m, conv, 0); break;  // gray + alpha
    case 3: cv::cvtColor(m, conv, cv::COLOR_BGR2RGB); break;
    case 4: cv::cvtColor(m, conv, cv::COLOR_BGRA2RGB); break;
    default:
      throw Error(fmt::format("input '{}' has {} channels (1 to 4 are supported)", path, ch));
  }
  img = Image(conv.cols, conv.rows,
              ch <= 2 || grey_png ? PixelFormat::gray8 : PixelFormat::rgb24);
  const std::size_t row_bytes = img.stride();
  for (int y = 0; y < conv.rows; ++y)
    std::memcpy(img.pixels.data() + y * row_bytes, conv.ptr<std::uint8_t>(y), row_bytes);
  return img;
}

#endif  // MJPEG_HAVE_OPENCV

}  // namespace

namespace {

/// The colour type of a PNG's IHDR (0 grey, 2 RGB, 3 palette, 4 grey+alpha, 6 RGBA), -1 when
/// `b` (the file's first `n` bytes) is not a PNG.
int png_colour_type(const unsigned char* b, std::size_t n) {
  if (n < 26 || std::memcmp(b, "\x89PNG\r\n\x1a\n", 8) != 0 || std::memcmp(b + 12, "IHDR", 4) != 0)
    return -1;
  return b[25];
}

constexpr int kNeedMore = -2;

/// The number of components in a JPEG's frame header (SOF0..SOF15 but DHT, JPG and DAC);
/// kNeedMore when `b`'s `n` bytes end before it, -1 when the markers cannot be followed.
int jpeg_components(const unsigned char* b, std::size_t n) {
  if (n < 2 || b[0] != 0xFF || b[1] != 0xD8) return -1;
  std::size_t at = 2;
  for (int segments = 0; segments < 1000; ++segments) {
    if (at + 4 > n) return kNeedMore;
    if (b[at] != 0xFF) return -1;
    const int marker = b[at + 1];
    const std::size_t len = (static_cast<std::size_t>(b[at + 2]) << 8) | b[at + 3];
    if (len < 2) return -1;
    if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC)
      return at + 10 <= n ? b[at + 9] : kNeedMore;
    if (marker == 0xDA || marker == 0xD9) return -1;
    at += 2 + len;
  }
  return -1;
}

bool is_jpeg(const unsigned char* b, std::size_t n) {
  return n >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF;
}

/// picture_is_grey's answer for a JPEG of `components` (jpeg_components).
int grey_of_components(int components) { return components == 1 ? 1 : components > 1 ? 0 : -1; }

}  // namespace

int picture_is_grey(const unsigned char* b, std::size_t n) {
  if (n >= 2 && b[0] == 'P' && (b[1] == '2' || b[1] == '5')) return 1;
  if (n >= 2 && b[0] == 'P' && (b[1] == '3' || b[1] == '6')) return 0;
  if (const int type = png_colour_type(b, n); type >= 0) return type == 0 || type == 4 ? 1 : 0;
  if (is_jpeg(b, n)) return grey_of_components(jpeg_components(b, n));
  return -1;
}

int picture_is_grey(const std::string& path) {
  // Called for every file of an image sequence: the first 4 KiB say it for every format but
  // a JPEG whose frame header follows long APP segments (each at most 64 KiB); such a JPEG is
  // read further, up to its first MiB (past that: -1, cannot tell).
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return -1;
  std::vector<unsigned char> head;
  int grey = -1;
  for (std::size_t want = 4096; want <= (std::size_t(1) << 20); want *= 16) {
    const std::size_t have = head.size();
    head.resize(want);
    head.resize(have + std::fread(head.data() + have, 1, want - have, f));
    if (!is_jpeg(head.data(), head.size())) {
      grey = picture_is_grey(head.data(), head.size());
      break;
    }
    const int components = jpeg_components(head.data(), head.size());
    grey = grey_of_components(components);
    if (components != kNeedMore || head.size() < want) break;
  }
  std::fclose(f);
  return grey;
}

std::string supported_input_formats() {
#if MJPEG_HAVE_OPENCV
  return "PPM/PGM, and PNG, JPEG, BMP, TIFF, WebP and other formats through OpenCV";
#else
  return "PPM/PGM only: this build has no OpenCV";
#endif
}

Image decode_input_image(const std::vector<std::uint8_t>& bytes, const std::string& name,
                         const NoticeSink& notice, bool autorotate, Density* density) {
  if (bytes.empty()) throw Error(fmt::format("input '{}' is empty", name));
  if (density != nullptr) *density = bmp_density(bytes.data(), bytes.size());
  if (looks_like_pnm(bytes.data(), bytes.size())) return decode_pnm(bytes.data(), bytes.size(), name);
#if MJPEG_HAVE_OPENCV
  return decode_with_opencv(bytes, name, notice, autorotate);
#else
  static_cast<void>(notice);
  static_cast<void>(autorotate);
  throw Error(fmt::format("cannot read input '{}': not a PPM/PGM file, and this build "
                          "reads PPM/PGM only (built without OpenCV)", name));
#endif
}

Image read_input_image(InputFile& file, const NoticeSink& notice, bool autorotate,
                       Density* density) {
  return decode_input_image(file.read_all(), file.name(), notice, autorotate, density);
}

Image read_input_image(const std::string& path, const NoticeSink& notice, bool autorotate) {
  InputFile file(path);
  return read_input_image(file, notice, autorotate);
}

}  // namespace mjpeg::app
