#include "jpeg/planar.hpp"

#include "mjpeg/error.hpp"

namespace mjpeg {

PlanarLayout planar_layout(int width, int height, PlanarChroma chroma) {
  if (chroma == PlanarChroma::none) throw UsageError("planar_layout: not a planar format");
  PlanarFormat f;
  f.chroma = chroma;
  PlanarLayout l;
  const std::size_t luma = static_cast<std::size_t>(width) * static_cast<std::size_t>(height);
  l.offset[0] = 0;
  l.pitch[0] = static_cast<std::size_t>(width);
  l.bytes = luma;
  if (f.has_chroma()) {
    l.chroma_width = (width + f.shift_x()) >> f.shift_x();
    l.chroma_height = (height + f.shift_y()) >> f.shift_y();
    const std::size_t plane =
        static_cast<std::size_t>(l.chroma_width) * static_cast<std::size_t>(l.chroma_height);
    l.offset[1] = luma;
    l.offset[2] = luma + plane;
    l.pitch[1] = l.pitch[2] = static_cast<std::size_t>(l.chroma_width);
    l.bytes = luma + 2 * plane;
  }
  return l;
}

PlanarView planar_view(const std::uint8_t* data, int width, int height,
                       const PlanarFormat& format) {
  const PlanarLayout l = planar_layout(width, height, format.chroma);
  PlanarView v;
  v.width = width;
  v.height = height;
  v.format = format;
  const int planes = format.has_chroma() ? 3 : 1;
  for (int c = 0; c < planes; ++c) {
    v.plane[c] = data + l.offset[c];
    v.pitch[c] = l.pitch[c];
  }
  return v;
}

namespace {

/// One row of `width` pixels whose chroma samples each cover 1 << SX pixels (the last one fewer
/// at an odd width). kTruncated: the form, fixed per loop so that the compiler drops the other.
template <int SX, bool kTruncated>
void convert_row(const math::YccToRgb& k, const std::uint8_t* py, const std::uint8_t* pb,
                 const std::uint8_t* pr, int width, std::uint8_t* rgb) {
  math::YccToRgb kk = k;
  kk.truncated = kTruncated;
  for (int x = 0; x < width; x += 1 << SX) {
    const math::ChromaTerms c = math::ycc_chroma_terms(kk, pb[x >> SX], pr[x >> SX]);
    for (int i = 0; i < (1 << SX) && x + i < width; ++i) {
      const int l = math::ycc_luma_term(kk, py[x + i]);
      std::uint8_t* o = rgb + 3 * (x + i);
      o[0] = static_cast<std::uint8_t>(math::ycc_channel(kk, l, c.r));
      o[1] = static_cast<std::uint8_t>(math::ycc_channel(kk, l, c.g));
      o[2] = static_cast<std::uint8_t>(math::ycc_channel(kk, l, c.b));
    }
  }
}

}  // namespace

void planar_row_to_rgb(const PlanarView& f, int y, std::uint8_t* rgb) {
  static const std::uint8_t kGrey[1] = {128};  // mono: Cb = Cr = 128 for every pixel
  const math::YccToRgb& k = f.format.ycc;
  const std::uint8_t* py = f.plane[0] + static_cast<std::size_t>(y) * f.pitch[0];
  if (!f.format.has_chroma()) {
    // One chroma "sample" of 128 covering the whole row.
    for (int x = 0; x < f.width; ++x) {
      int r, g, b;
      math::ycc_to_rgb(k, py[x], kGrey[0], kGrey[0], r, g, b);
      rgb[3 * x] = static_cast<std::uint8_t>(r);
      rgb[3 * x + 1] = static_cast<std::uint8_t>(g);
      rgb[3 * x + 2] = static_cast<std::uint8_t>(b);
    }
    return;
  }
  const std::size_t crow = static_cast<std::size_t>(y >> f.format.shift_y());
  const std::uint8_t* pb = f.plane[1] + crow * f.pitch[1];
  const std::uint8_t* pr = f.plane[2] + crow * f.pitch[2];
  const bool t = k.truncated != 0;
  if (f.format.shift_x())
    t ? convert_row<1, true>(k, py, pb, pr, f.width, rgb)
      : convert_row<1, false>(k, py, pb, pr, f.width, rgb);
  else
    t ? convert_row<0, true>(k, py, pb, pr, f.width, rgb)
      : convert_row<0, false>(k, py, pb, pr, f.width, rgb);
}

void planar_to_rgb(const PlanarView& f, std::uint8_t* rgb, std::size_t stride) {
  if (rgb == nullptr || f.plane[0] == nullptr || stride < static_cast<std::size_t>(f.width) * 3)
    throw UsageError("planar_to_rgb: null buffer or stride smaller than width*3");
  if (f.format.has_chroma() && (f.plane[1] == nullptr || f.plane[2] == nullptr))
    throw UsageError("planar_to_rgb: missing chroma planes");
  for (int y = 0; y < f.height; ++y)
    planar_row_to_rgb(f, y, rgb + static_cast<std::size_t>(y) * stride);
}

void PlanarRows::set_frame(const PlanarView& frame) {
  if (!frame.format.planar() || frame.plane[0] == nullptr ||
      (frame.format.has_chroma() && (frame.plane[1] == nullptr || frame.plane[2] == nullptr)))
    throw UsageError("PlanarRows: incomplete planar frame");
  frame_ = frame;
  scratch_.resize(static_cast<std::size_t>(kMaxBandRows) * frame.width * 3);
}

void PlanarRows::band(int y0, int count, const std::uint8_t** rows) {
  const std::size_t row = static_cast<std::size_t>(frame_.width) * 3;
  for (int i = 0; i < count; ++i) {
    std::uint8_t* out = scratch_.data() + static_cast<std::size_t>(i) * row;
    planar_row_to_rgb(frame_, y0 + i, out);
    rows[i] = out;
  }
}

void transform_cpu(const PlanarView& frame, const FrameGeometry& geometry,
                   const QuantTables& tables, std::int16_t* coeffs) {
  PlanarRows rows(frame);
  transform_cpu(rows, geometry, tables, coeffs);
}

}  // namespace mjpeg
