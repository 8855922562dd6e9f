// The public API's frames (include/mjpeg/video.hpp): formats and their sizes, the pipeline's
// view of a format, the YCbCr -> RGB coefficients, and the checks and copies of the frames
// users hand over (FrameView, DeviceFrame, to_pixels).
#include "mjpeg/video.hpp"
#include "mjpeg/vocabulary.hpp"

#include "mjpeg/encoder.hpp"

#include <cstring>
#include <string>
#include <utility>

#include "io/y4m.hpp"
#include "core/planar_format.hpp"
#include "jpeg/planar.hpp"
#include "internal.hpp"
#include "pipeline/frame_source.hpp"

namespace mjpeg {

using namespace api;

namespace api {

void check_range(int v, int lo, int hi, const char* name) {
  if (v < lo || v > hi)
    throw UsageError(std::string("VideoOptions: ") + name + " " + std::to_string(v) +
                     " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
}

PlanarChroma planar_chroma(FrameFormat f) {
  switch (f) {
    case FrameFormat::yuv420p: return PlanarChroma::c420;
    case FrameFormat::yuv422p: return PlanarChroma::c422;
    case FrameFormat::yuv444p: return PlanarChroma::c444;
    case FrameFormat::yuv400p: return PlanarChroma::mono;
    default: return PlanarChroma::none;
  }
}

}  // namespace api

io::Y4mInfo api::y4m_info(const VideoOptions& o) {
  io::Y4mInfo info;
  info.width = o.width;
  info.height = o.height;
  info.chroma = api::planar_chroma(o.format);
  info.matrix = o.matrix;
  info.range = o.range;
  return info;
}

pipeline::SourceFormat api::source_format(const VideoOptions& o) {
  pipeline::SourceFormat s;
  s.width = o.width;
  s.height = o.height;
  s.format = o.format == FrameFormat::gray8 ? PixelFormat::gray8 : PixelFormat::rgb24;
  if (is_planar(o.format)) {
    // The coefficients of the Y4M reader's conversion, so that a frame given here and the same
    // frame read from a Y4M file encode to the same bytes.
    s.planar = io::planar_format(api::y4m_info(o));
    if (o.coefficients) {
      const YuvCoefficients& k = *o.coefficients;
      s.planar.ycc = math::YccToRgb{k.truncated ? 1 : 0, k.y0, k.cy, k.cr_r, k.cb_g, k.cr_g, k.cb_b};
    }
  }
  return s;
}

namespace {

YuvCoefficients public_form(const math::YccToRgb& k) {
  return YuvCoefficients{k.truncated != 0, k.y0, k.cy, k.cr_r, k.cb_g, k.cr_g, k.cb_b};
}

}  // namespace

YuvCoefficients rounded_coefficients(double kr, double kb, YuvRange range) {
  if (!(kr > 0 && kb > 0 && kr + kb < 1))
    throw UsageError("rounded_coefficients: the luma weights Kr, Kb must be positive and add up "
                     "to less than 1");
  return public_form(math::make_rounded_ycc(kr, kb, range == YuvRange::limited));
}

YuvCoefficients swscale_coefficients(const int table[4], YuvRange range) {
  if (table == nullptr) throw UsageError("swscale_coefficients: no coefficient table");
  return public_form(math::make_truncated_ycc(table, range == YuvRange::limited));
}

namespace api {

std::size_t pixel_bytes(FrameFormat f) { return f == FrameFormat::gray8 ? 1 : 3; }

/// Swaps the first and third byte of each pixel of a packed row (BGR <-> RGB).
void swap_red_blue(std::uint8_t* row, int width) {
  for (int x = 0; x < width; ++x) std::swap(row[3 * x], row[3 * x + 2]);
}

void copy_bgr_row(const std::uint8_t* src, std::uint8_t* dst, int width) {
  for (int x = 0; x < width; ++x) {
    dst[3 * x] = src[3 * x + 2];
    dst[3 * x + 1] = src[3 * x + 1];
    dst[3 * x + 2] = src[3 * x];
  }
}

/// Copies `rows` rows of `row` bytes from `src` (rows `src_stride` apart) to `dst` (rows
/// `dst_stride` apart); with `bgr` the 3-byte pixels are reordered to RGB on the way.
void copy_rows(const std::uint8_t* src, std::size_t src_stride, std::uint8_t* dst,
               std::size_t dst_stride, std::size_t row, int rows, bool bgr = false) {
  if (!bgr && src_stride == row && dst_stride == row) {
    std::memcpy(dst, src, row * std::size_t(rows));
    return;
  }
  for (int y = 0; y < rows; ++y) {
    const std::uint8_t* in = src + std::size_t(y) * src_stride;
    std::uint8_t* out = dst + std::size_t(y) * dst_stride;
    if (bgr)
      copy_bgr_row(in, out, static_cast<int>(row / 3));
    else
      std::memcpy(out, in, row);
  }
}

/// Throws UsageError when `f` does not fit `o` (see VideoEncoder::encode).
void check_frame(const FrameView& f, const VideoOptions& o) {
  if (f.width != o.width || f.height != o.height)
    throw UsageError("VideoEncoder::encode: frame is " + std::to_string(f.width) + "x" +
                     std::to_string(f.height) + ", the encoder was opened for " +
                     std::to_string(o.width) + "x" + std::to_string(o.height));
  const int planes = o.format == FrameFormat::yuv400p ? 1 : is_planar(o.format) ? 3 : 1;
  const PlanarLayout l = is_planar(o.format)
                             ? planar_layout(o.width, o.height, planar_chroma(o.format))
                             : PlanarLayout{};
  for (int c = 0; c < planes; ++c) {
    if (f.plane[c] == nullptr)
      throw UsageError(std::string("VideoEncoder::encode: plane ") + std::to_string(c) +
                       " of a " + to_string(o.format) + " frame is null");
    const std::size_t row = !is_planar(o.format) ? std::size_t(o.width) * pixel_bytes(o.format)
                            : c == 0             ? std::size_t(o.width)
                                                 : std::size_t(l.chroma_width);
    if (f.stride[c] != 0 && f.stride[c] < row)
      throw UsageError("VideoEncoder::encode: stride " + std::to_string(f.stride[c]) +
                       " of plane " + std::to_string(c) + " is smaller than a row (" +
                       std::to_string(row) + " bytes)");
  }
}

/// Throws UsageError unless `f` is a device frame an encoder of `o` takes.
void check_device_frame(const DeviceFrame& f, const VideoOptions& o) {
  const std::string what = "VideoEncoder::encode(DeviceFrame): ";
  if (!o.device_frames)
    throw UsageError(what + "the encoder was made without VideoOptions::device_frames");
  if (f.width != o.width || f.height != o.height)
    throw UsageError(what + "the frame is " + std::to_string(f.width) + "x" +
                     std::to_string(f.height) + ", the encoder's frames " +
                     std::to_string(o.width) + "x" + std::to_string(o.height));
  const bool nv12 = f.layout == DeviceFrame::Layout::nv12;
  if (nv12 && o.format != FrameFormat::yuv420p)
    throw UsageError(what + "an nv12 frame needs the yuv420p format, not " + to_string(o.format));
  if (f.layout != DeviceFrame::Layout::planar && !nv12)
    throw UsageError(what + "unknown layout");
  const PlanarLayout l = planar_layout(o.width, o.height, planar_chroma(o.format));
  const int planes = nv12 ? 2 : o.format == FrameFormat::yuv400p ? 1 : 3;
  for (int c = 0; c < planes; ++c) {
    if (f.plane[c] == nullptr)
      throw UsageError(what + "plane " + std::to_string(c) + " is null");
    const std::size_t row = c == 0 ? std::size_t(o.width)
                            : nv12 ? 2 * std::size_t(l.chroma_width)
                                   : std::size_t(l.chroma_width);
    if (f.pitch[c] < row)
      throw UsageError(what + "pitch " + std::to_string(f.pitch[c]) + " of plane " +
                       std::to_string(c) + " is smaller than a row (" + std::to_string(row) +
                       " bytes)");
  }
}

/// Copies frame `f` of `o` into `dst` in the contiguous layout (bgr24 reordered to RGB).
void copy_frame(const FrameView& f, const VideoOptions& o, std::uint8_t* dst) {
  if (is_planar(o.format)) {
    const PlanarLayout l = planar_layout(o.width, o.height, planar_chroma(o.format));
    for (int c = 0; c < (o.format == FrameFormat::yuv400p ? 1 : 3); ++c) {
      const int rows = c == 0 ? o.height : l.chroma_height;
      const std::size_t row = l.pitch[c];
      copy_rows(f.plane[c], f.stride[c] ? f.stride[c] : row, dst + l.offset[c], row, row, rows);
    }
    return;
  }
  const std::size_t row = std::size_t(o.width) * pixel_bytes(o.format);
  copy_rows(f.plane[0], f.stride[0] ? f.stride[0] : row, dst, row, row, o.height,
            o.format == FrameFormat::bgr24);
}

}  // namespace api

std::size_t frame_bytes(const VideoOptions& o) {
  check_range(o.width, 1, kMaxDimension, "width");
  check_range(o.height, 1, kMaxDimension, "height");
  if (!vocab::is_known(o.format)) throw UsageError("VideoOptions: unknown frame format");
  if (is_planar(o.format)) return planar_layout(o.width, o.height, planar_chroma(o.format)).bytes;
  return std::size_t(o.width) * std::size_t(o.height) * pixel_bytes(o.format);
}

FrameView FrameView::packed(const std::uint8_t* data, int width, int height, std::size_t stride) {
  FrameView v;
  v.width = width;
  v.height = height;
  v.plane[0] = data;
  v.stride[0] = stride;
  return v;
}

FrameView FrameView::planar(const std::uint8_t* y, const std::uint8_t* cb, const std::uint8_t* cr,
                            int width, int height, std::size_t y_stride, std::size_t c_stride) {
  FrameView v;
  v.width = width;
  v.height = height;
  v.plane[0] = y;
  v.plane[1] = cb;
  v.plane[2] = cr;
  v.stride[0] = y_stride;
  v.stride[1] = v.stride[2] = c_stride;
  return v;
}

FrameView FrameView::contiguous(const std::uint8_t* data, const VideoOptions& o) {
  (void)frame_bytes(o);  // validates the size and format
  if (!is_planar(o.format)) return packed(data, o.width, o.height);
  const PlanarLayout l = planar_layout(o.width, o.height, planar_chroma(o.format));
  if (data == nullptr) return planar(nullptr, nullptr, nullptr, o.width, o.height);
  return planar(data + l.offset[0], data + l.offset[1], data + l.offset[2], o.width, o.height,
                l.pitch[0], l.pitch[1]);
}

void to_pixels(const FrameView& frame, const VideoOptions& o, std::uint8_t* dst,
               std::size_t stride) {
  (void)frame_bytes(o);  // validates the size and format
  check_frame(frame, o);
  const std::size_t row = std::size_t(o.width) * pixel_bytes(o.format == FrameFormat::gray8
                                                                  ? FrameFormat::gray8
                                                                  : FrameFormat::rgb24);
  if (dst == nullptr || stride < row)
    throw UsageError("to_pixels: null destination or stride " + std::to_string(stride) +
                     " smaller than a row (" + std::to_string(row) + " bytes)");
  if (!is_planar(o.format)) {
    const std::size_t in_row = std::size_t(o.width) * pixel_bytes(o.format);
    copy_rows(frame.plane[0], frame.stride[0] ? frame.stride[0] : in_row, dst, stride, in_row,
              o.height, o.format == FrameFormat::bgr24);
    return;
  }
  const pipeline::SourceFormat f = source_format(o);
  const PlanarLayout l = planar_layout(o.width, o.height, f.planar.chroma);
  PlanarView v;
  v.width = o.width;
  v.height = o.height;
  v.format = f.planar;
  const int planes = o.format == FrameFormat::yuv400p ? 1 : 3;
  for (int c = 0; c < planes; ++c) {
    v.plane[c] = frame.plane[c];
    v.pitch[c] = frame.stride[c] ? frame.stride[c] : l.pitch[c];
  }
  planar_to_rgb(v, dst, stride);
}

}  // namespace mjpeg
