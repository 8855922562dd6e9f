#include "core/planar_format.hpp"

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

}  // namespace mjpeg
