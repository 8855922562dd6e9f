// Frame geometry shared by the CPU path, the GPU launchers and the Huffman coder: how a WxH
// frame splits into components, MCUs and 8x8 blocks, and where each block's coefficients live.
//
// Coefficient layout (what the transforms write and the Huffman coder reads):
//   one plane per component, planes back to back; a plane holds blocks_w x blocks_h blocks in
//   row-major block order; a block is 64 int16 quantized coefficients in zigzag order.
// blocks_w/blocks_h cover whole MCUs, so they include libjpeg's "dummy blocks" (right and
// bottom MCU padding: AC = 0, DC copied from the block to the left / the last block of the
// row above in the same MCU). Blocks inside width_in_blocks x height_in_blocks are "real":
// they are transformed from pixels, with the edges replicated as libjpeg does.
#pragma once

#include <cstddef>
#include <cstdint>

#include "mjpeg/options.hpp"

namespace mjpeg {

inline constexpr int kBlockSize = 64;
inline constexpr int kMaxComponents = 3;

struct ComponentGeometry {
  int h = 1, v = 1;              ///< sampling factors
  int width = 0, height = 0;     ///< component size in samples: ceil(W*h/max_h) x ceil(H*v/max_v)
  int width_in_blocks = 0;       ///< ceil(width / 8): real block columns
  int height_in_blocks = 0;      ///< ceil(height / 8): real block rows
  int blocks_w = 0, blocks_h = 0;  ///< block grid including MCU padding (dummy blocks)
  std::size_t block_offset = 0;  ///< index of this plane's first block in the whole frame
};

struct FrameGeometry {
  int width = 0, height = 0;
  int num_components = 0;        ///< 1 (gray) or 3 (Y, Cb, Cr)
  int max_h = 1, max_v = 1;
  int mcus_x = 0, mcus_y = 0;    ///< MCU grid
  int blocks_per_mcu = 0;
  ComponentGeometry comp[kMaxComponents];
  std::size_t total_blocks = 0;

  std::size_t coefficient_count() const { return total_blocks * kBlockSize; }
  /// Pointer offset (in coefficients) of block (by, bx) of component c.
  std::size_t block_index(int c, int by, int bx) const {
    return comp[c].block_offset + static_cast<std::size_t>(by) * comp[c].blocks_w + bx;
  }
};

/// Geometry of a width x height frame at the given sampling (gray: one component).
/// Throws UsageError for sizes outside 1..kMaxDimension.
FrameGeometry make_geometry(int width, int height, Subsampling sampling);

}  // namespace mjpeg
