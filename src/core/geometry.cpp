#include "core/geometry.hpp"

#include <string>

#include "mjpeg/error.hpp"

namespace mjpeg {
namespace {
int ceil_div(int a, int b) { return (a + b - 1) / b; }
}  // namespace

FrameGeometry make_geometry(int width, int height, Subsampling sampling) {
  if (width < 1 || height < 1 || width > kMaxDimension || height > kMaxDimension) {
    throw UsageError("image size " + std::to_string(width) + "x" + std::to_string(height) +
                     " is outside 1x1 .. " + std::to_string(kMaxDimension) + "x" +
                     std::to_string(kMaxDimension));
  }
  FrameGeometry g;
  g.width = width;
  g.height = height;
  g.num_components = sampling == Subsampling::gray ? 1 : 3;
  int luma_h = 1, luma_v = 1;
  if (sampling == Subsampling::s422) luma_h = 2;
  if (sampling == Subsampling::s420) luma_h = luma_v = 2;
  g.max_h = luma_h;
  g.max_v = luma_v;
  g.mcus_x = ceil_div(width, 8 * g.max_h);
  g.mcus_y = ceil_div(height, 8 * g.max_v);
  std::size_t offset = 0;
  g.blocks_per_mcu = 0;
  for (int c = 0; c < g.num_components; ++c) {
    ComponentGeometry& cg = g.comp[c];
    cg.h = c == 0 ? luma_h : 1;
    cg.v = c == 0 ? luma_v : 1;
    cg.width = ceil_div(width * cg.h, g.max_h);
    cg.height = ceil_div(height * cg.v, g.max_v);
    cg.width_in_blocks = ceil_div(cg.width, 8);
    cg.height_in_blocks = ceil_div(cg.height, 8);
    // A single-component scan is not interleaved: its MCU is one block, no padding.
    cg.blocks_w = g.num_components == 1 ? cg.width_in_blocks : g.mcus_x * cg.h;
    cg.blocks_h = g.num_components == 1 ? cg.height_in_blocks : g.mcus_y * cg.v;
    cg.block_offset = offset;
    offset += static_cast<std::size_t>(cg.blocks_w) * cg.blocks_h;
    g.blocks_per_mcu += cg.h * cg.v;
  }
  if (g.num_components == 1) {
    g.mcus_x = g.comp[0].blocks_w;
    g.mcus_y = g.comp[0].blocks_h;
  }
  g.total_blocks = offset;
  return g;
}

}  // namespace mjpeg
