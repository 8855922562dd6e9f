#include "ycbcr.hpp"

#include <fmt/format.h>

#include "mjpeg/vocabulary.hpp"
#include "video_input.hpp"
#if MJPEG_HAVE_LIBAV
#include "libav_rgb.hpp"
#endif

namespace mjpeg::app {
namespace {

// libswscale's table (yuv2rgb.c, ff_yuv2rgb_coeffs) for the three matrices of YuvMatrix.
constexpr int kSwsBt601[4] = {104597, 132201, 25675, 53279};
constexpr int kSwsBt709[4] = {117489, 138438, 13975, 34925};
constexpr int kSwsBt2020[4] = {110013, 140363, 12277, 42626};

const char* matrix_text(YuvMatrix m) {
  return m == YuvMatrix::bt709 ? "BT.709" : m == YuvMatrix::bt2020 ? "BT.2020" : "BT.601";
}

}  // namespace

const int* swscale_table(YuvMatrix matrix) {
  switch (matrix) {
    case YuvMatrix::bt709: return kSwsBt709;
    case YuvMatrix::bt2020: return kSwsBt2020;
    case YuvMatrix::bt601: break;
  }
  return kSwsBt601;
}

std::optional<VideoOptions> ffmpeg_planes(FrameFormat planes, int width, int height,
                                          const int table[4], YuvRange range) {
  VideoOptions o;
  o.width = width;
  o.height = height;
  o.format = planes;
  if (planes == FrameFormat::yuv400p) {
    // Full range with any weights: cy = 1, y0 = 0, and the chroma terms vanish at Cb = Cr = 128.
    o.coefficients = rounded_coefficients(0.299, 0.114, YuvRange::full);
    return o;
  }
  if ((planes == FrameFormat::yuv420p || planes == FrameFormat::yuv422p) && height % 2 == 0) {
    o.coefficients = swscale_coefficients(table, range);
    return o;
  }
  return std::nullopt;
}

std::string PlanarInput::how() const {
  if (!exact) return "as planes (not ffmpeg's RGB: this build has no libswscale)";
  return swscale ? "to RGB by libswscale (ffmpeg's RGB)" : "as planes (ffmpeg's RGB)";
}

PlanarInput planar_input(FrameFormat planes, int width, int height, YuvMatrix matrix,
                         YuvRange range) {
  PlanarInput in;
  in.matrix = matrix;
  in.range = range;
  in.planes.width = width;
  in.planes.height = height;
  in.planes.format = planes;
  in.planes.matrix = matrix;
  in.planes.range = range;
  if (std::optional<VideoOptions> exact =
          ffmpeg_planes(planes, width, height, swscale_table(matrix), range)) {
    in.planes.coefficients = exact->coefficients;
    in.format = in.planes;
    return in;
  }
#if MJPEG_HAVE_LIBAV
  in.swscale = true;
  in.format.width = width;
  in.format.height = height;
  in.format.format = FrameFormat::rgb24;
#else
  in.exact = false;
  in.format = in.planes;  // the matrix's and range's own rounded conversion
#endif
  return in;
}

std::unique_ptr<mjpeg::FrameSource> planar_source(std::unique_ptr<mjpeg::FrameSource> planes,
                                                  const PlanarInput& input) {
#if MJPEG_HAVE_LIBAV
  if (input.swscale) return swscale_source(std::move(planes), input.planes, swscale_table(input.matrix));
#else
  static_cast<void>(input);
#endif
  return planes;
}

std::optional<YuvMatrix> stated_matrix(const InputOptions& options) {
  if (options.colorspace.empty()) return std::nullopt;
  return vocab::parse_name<YuvMatrix>(options.colorspace);
}

std::optional<YuvRange> stated_range(const InputOptions& options) {
  if (options.range.empty()) return std::nullopt;
  return vocab::parse_name<YuvRange>(options.range);
}

void colour_notices(const std::string& name, const std::string& what, int width, int height,
                    std::optional<YuvMatrix> said_matrix, std::optional<YuvRange> said_range,
                    YuvMatrix used_matrix, YuvRange used_range, const InputOptions& options,
                    std::vector<std::string>& notices) {
  if (!options.colorspace.empty() && said_matrix && *said_matrix != used_matrix)
    notices.push_back(fmt::format("--colorspace {}: {} says {}, decoded as {} as stated",
                                  options.colorspace, name, matrix_text(*said_matrix),
                                  matrix_text(used_matrix)));
  if (!options.range.empty() && said_range && *said_range != used_range)
    notices.push_back(fmt::format("--range {}: {} says XCOLORRANGE={}, decoded as {} range as "
                                  "stated",
                                  options.range, name,
                                  *said_range == YuvRange::full ? "FULL" : "LIMITED",
                                  options.range));
  // One notice for what is assumed.
  const bool matrix_assumed = !said_matrix && options.colorspace.empty();
  const bool range_assumed = !said_range && options.range.empty();
  if (!matrix_assumed && !range_assumed) return;
  const bool hd = width >= 1280 || height >= 720;
  notices.push_back(fmt::format(
      "{}: {} which {} {} YCbCr uses; {} assumed{} ({} state{} the source's)", name, what,
      matrix_assumed && range_assumed ? "colour matrix and range"
      : matrix_assumed                ? "colour matrix"
                                      : "range",
      what.find("frames") != std::string::npos ? "their" : "its",
      matrix_assumed && range_assumed ? "BT.601 and limited range (16..235) are"
      : matrix_assumed                ? "BT.601 is"
                                      : "limited range (16..235) is",
      matrix_assumed && hd && used_matrix == YuvMatrix::bt601
          ? fmt::format(", but {}x{} is HD, which is usually BT.709", width, height)
          : std::string(),
      matrix_assumed && range_assumed ? "--colorspace bt601|bt709|bt2020 and --range limited|full"
      : matrix_assumed                ? "--colorspace bt601|bt709|bt2020"
                                      : "--range limited|full",
      matrix_assumed && range_assumed ? "" : "s"));
}

}  // namespace mjpeg::app
