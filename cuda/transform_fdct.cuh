// Transform kernels, part 4 of 6: the forward DCT (math::fdct_8, libjpeg's islow), split in
// its two passes over the shared `work` buffer: a block is kDctSize rows of kWorkRowStride
// int32 (tb * kWorkBlockInts + r * kWorkRowStride); the odd stride keeps both the row stores of
// pass 1 and the column loads of pass 2 free of bank conflicts.
#pragma once

#include <cstdint>

#include "transform_color.cuh"
#include "transform_tile.cuh"

namespace mjpeg::gpu::detail {

/// Pass 1 of the FDCT on the samples of row r of tile block tb, stored into `work`.
__device__ __forceinline__ void row_fdct_store(std::int32_t (&d)[kDctSize], int tb, int r,
                                               std::int32_t* work) {
  math::fdct_8<true>(d, 1);
  std::int32_t* out = work + tb * kWorkBlockInts + r * kWorkRowStride;
#pragma unroll
  for (int i = 0; i < kDctSize; ++i) out[i] = d[i];
}

/// Pass 1 in place: a row already in `work` (the 4:2:0 fast path's downsampled chroma rows).
__device__ __forceinline__ void row_fdct_in_place(int tb, int r, std::int32_t* work) {
  std::int32_t* rw = work + tb * kWorkBlockInts + r * kWorkRowStride;
  std::int32_t d[kDctSize];
#pragma unroll
  for (int i = 0; i < kDctSize; ++i) d[i] = rw[i];
  math::fdct_8<true>(d, 1);
#pragma unroll
  for (int i = 0; i < kDctSize; ++i) rw[i] = d[i];
}

/// Pass 2 of the FDCT: column j of tile block tb from `work` into d (d[r] = row r).
__device__ __forceinline__ void column_fdct(const std::int32_t* work, int tb, int j,
                                            std::int32_t (&d)[kDctSize]) {
  const std::int32_t* in = work + tb * kWorkBlockInts + j;
#pragma unroll
  for (int r = 0; r < kDctSize; ++r) d[r] = in[r * kWorkRowStride];
  math::fdct_8<false>(d, 1);
}

// Pass 1 of one tile: consumer thread tid = 8 * tb + r builds the samples of row r of tile
// block tb (transform_color.cuh) and runs the row FDCT. kSmem: read the stage; else read
// global memory (direct variant).
template <int L, int C, bool kSmem>
__device__ __forceinline__ void pass1(const KernelParams& p, const Tile& tl,
                                      const std::uint8_t* stage, int tid, std::int32_t* work) {
  const int tb = tile_block_of(tid);
  const int r = lane_of(tid);
  const BlockPos<L, C> pos(tb);
  std::int32_t d[kDctSize];
  row_samples<L, C, kSmem>(p, tl, stage, pos, r, d);
  row_fdct_store(d, tb, r, work);
}

// Pass 1 of the 4:2:0 fast path: only the luma threads (tid < kYBlocks * 8) run it; they also
// write the chroma blocks' downsampled rows (fast420_samples), whose row FDCT follows after
// the barrier (row_fdct_in_place).
template <int L, int C, bool kSmem>
__device__ __forceinline__ void pass1_fast420(const KernelParams& p, const Tile& tl,
                                              const std::uint8_t* stage, int tid,
                                              std::int32_t* work) {
  const int tb = tile_block_of(tid);  // < kYBlocks
  const int r = lane_of(tid);
  std::int32_t y[kDctSize];
  fast420_samples<L, C, kSmem>(p, tl, stage, tb, r, work, y);
  row_fdct_store(y, tb, r, work);
}

}  // namespace mjpeg::gpu::detail
