// The GPU forward transform: packed RGB24 / gray8 pixels, or planar YCbCr (Y4M, decoded video),
// -> quantized zigzag coefficients in the layout of core/geometry.hpp, bit-identical to
// transform_cpu. All arithmetic comes from core/jpeg_math.hpp (ycc_to_rgb, rgb_to_*, downsample_*,
// fdct_8, quantize); this file only maps work to threads.
//
// ---------------------------------------------------------------------------------------------
// Work decomposition (all four variants)
// ---------------------------------------------------------------------------------------------
// A *tile* is kMcusPerTile MCUs of one MCU row ("band"): kTileH = 8*max_v pixel rows by
// kTileW = 8*max_h*kMcusPerTile pixel columns (4:2:0: 16 x 128, 48 blocks; 4:2:2: 8 x 128,
// 32 blocks; 4:4:4: 8 x 128, 48 blocks; gray: 8 x 256, 32 blocks). Tiles are numbered row-major
// (band, tile_x). The grid is persistent: block b handles tiles b, b + gridDim.x, ... so the
// staged variants can prefetch the next S-1 tiles while computing one.
//
// Thread-to-block mapping (consumer threads, kThreads = 8 * kBlocks):
//   tid = 8 * tb + lane8, tb = tile block index. Tile blocks are ordered component by
//   component; inside a component by block row in the band (bl < v), then block column k:
//   tb = base_c + bl * (kMcusPerTile * h_c) + k. That is exactly the order of the coefficient
//   planes, so one component block row of a tile is one contiguous run in global memory.
//   Pass 1 (rows):    thread (tb, r = lane8) builds the 8 samples of row r of block tb straight
//                     from the RGB bytes (colour conversion, downsampling, edge clamp), runs
//                     fdct_8<pass 1> in registers and stores the 8 results to `work`.
//                     Planar input: before pass 1 the tile's staged Y, Cb, Cr bytes are made
//                     RGB, pixel by pixel (convert_tile, a block barrier), and pass 1 reads
//                     that RGB tile: everything from there on is the RGB path.
//   Pass 2 (columns): thread (tb, j = lane8) loads column j, runs fdct_8<pass 2>, quantizes
//                     with the natural-order divisor and stores int16 at the zigzag position in
//                     `outq`.
//   Dummy DCs, then a coalesced 16-byte copy of the tile's block runs to global memory.
//   Warps never mix components (each component's thread count is a multiple of 32).
//
// Shared memory layout (dynamic, 16-byte aligned), the fixed part first:
//   rgb       : planar input only: the tile as RGB (kTileH rows of kRgbRowStride bytes, row r
//               at r * kRgbRowStride, no shift), written by convert_tile, read by pass 1.
//   work      : kBlocks x kWorkBlockInts (72) int32, row r of block tb at tb * kWorkBlockInts +
//               r * kWorkRowStride (stride 9, odd): pass-1 stores and pass-2 column loads are
//               both bank-conflict free.
//   outq      : kBlocks x kBlockCoeffs (64) int16, zigzag order (the tile's output before the
//               global copy).
//   tables    : DeviceTables (divisors [3][64], one per component; natural->zigzag), copied
//               once per block.
//   stage[S]  : the launch's S pixel tiles (S = KernelParams::stages, 1..4; direct: none),
//               kTileH rows of kRowStride bytes each. A row holds the tile's bytes of one image
//               row starting at byte offset (row address mod 16), so global and shared
//               addresses agree mod 16 and the 16-byte copies line up for any pitch. kRowStride
//               is 20 mod 32 words: the 8 rows read at once by a warp fall in distinct banks.
//               Planar input: three such planes per stage (kPlaneBytes each): the tile's Y rows
//               (kTileW bytes), then its Cb rows and its Cr rows (kTileH >> shift_y rows of
//               kTileW >> shift_x bytes: the chroma samples the tile's pixels use).
//   pipeline  : pipeline and partitioned: the cuda::pipeline_shared_state of S stages.
// ---------------------------------------------------------------------------------------------
//
// ---------------------------------------------------------------------------------------------
// Where each stage lives (read them in this order)
// ---------------------------------------------------------------------------------------------
//   transform_tile.cuh      named sizes, TileConfig<L, C> (tile shape, threads, shared memory),
//                           tiles, the thread -> block mapping, shared-memory carving
//   transform_stage.cuh     tile staging: global -> shared copies (16-byte chunks + tail bytes)
//   transform_color.cuh     pixels -> samples: pixel runs, colour conversion, downsampling and
//                           edge replication, planar YCbCr -> RGB tile, the 4:2:0 fast path
//   transform_fdct.cuh      pass 1 (row FDCT) and the column FDCT of pass 2 over `work`
//   transform_quantize.cuh  quantization + zigzag into outq, dummy DCs, stores to global
//   transform_variants.cuh  the tile loop (once) and the four variants as its staging policy;
//                           the kernels and the kernel table of one configuration
// This file: the instantiation of every configuration of MJPEG_TRANSFORM_CONFIGS
// (transform_params.hpp), one translation unit per `unit` there (transform_tu<N>.cu).
// ---------------------------------------------------------------------------------------------
#pragma once

#include "transform_params.hpp"
#include "transform_variants.cuh"

namespace mjpeg::gpu::detail {

template <int Tu>
bool kernel_table_in_unit(int layout, int input, KernelTable& t) {
  bool found = false;
#define MJPEG_FILL_IF_IN_UNIT(L, C, unit)          \
  if constexpr ((unit) == Tu) {                    \
    if (layout == (L) && input == (C)) {           \
      fill_kernel_table<L, C>(t);                  \
      found = true;                                \
    }                                              \
  }
  MJPEG_TRANSFORM_CONFIGS(MJPEG_FILL_IF_IN_UNIT)
#undef MJPEG_FILL_IF_IN_UNIT
  return found;
}

}  // namespace mjpeg::gpu::detail
