// Transform kernels, part 5 of 6: quantize and store. Pass 2 ends with math::quantize (the
// natural-order divisor of the block's component) and an int16 store at the zigzag position
// into `outq` (the tile's output in shared memory); then libjpeg's dummy-block DCs, and a
// coalesced 16-byte copy of the tile's block runs to the coefficient planes in global memory.
#pragma once

#include <cstdint>

#include "transform_fdct.cuh"
#include "transform_tile.cuh"

namespace mjpeg::gpu::detail {

// Pass 2: column FDCT of column j of block tb, quantization, zigzag store into outq (dummy
// blocks: zeros; their DC is set by fix_dummies).
template <int L, int C>
__device__ __forceinline__ void pass2(const KernelParams& p, const Tile& tl, int tid,
                                      const std::int32_t* work, std::int16_t* outq,
                                      const DeviceTables& tab) {
  const int tb = tile_block_of(tid);
  const int j = lane_of(tid);
  const BlockPos<L, C> pos(tb);
  const BlockInfo<L, C> bi(p, tl, pos);
  std::int32_t d[kDctSize];
  column_fdct(work, tb, j, d);
  const math::QuantDivisor* div = tab.divisor[pos.comp];
  std::int16_t* out = outq + tb * kBlockCoeffs;
#pragma unroll
  for (int r = 0; r < kDctSize; ++r) {
    const int n = r * kDctSize + j;
    const std::int16_t q = bi.dummy ? std::int16_t{0} : math::quantize(d[r], div[n]);
    out[tab.zigzag_of_natural[n]] = q;
  }
}

// Dummy DCs (3-component frames, tiles at the right or bottom edge only): right-edge dummy =
// DC of the block to its left; bottom dummy row = DC of the last block of the row above in the
// same MCU (clamped to the last real column). Both references lie in the same tile.
template <int L, int C>
__device__ __forceinline__ void fix_dummies(const KernelParams& p, const Tile& tl, int tid,
                                            std::int16_t* outq) {
  using K = TileConfig<L, C>;
  if (tid >= K::kBlocks) return;
  const BlockPos<L, C> pos(tid);
  const BlockInfo<L, C> bi(p, tl, pos);
  if (!bi.inside || !bi.dummy) return;
  const CompParams cp = comp_params(p, pos.comp);
  const int h = pos.comp == 0 ? K::kMaxH : 1;
  const int run = K::kMcusPerTile * h;
  int ref;
  if (bi.by < cp.height_in_blocks) {
    ref = tid - 1;
  } else {
    const int mcu_col = bi.bx / h;
    const int ref_bx = min(mcu_col * h + h - 1, cp.width_in_blocks - 1);
    ref = pos.base + (pos.bl - 1) * run + (ref_bx - tl.tx * run);
  }
  outq[tid * kBlockCoeffs] = outq[ref * kBlockCoeffs];
}

// Coalesced copy of the tile's block runs (one per component block row) to the planes.
template <int L, int C>
__device__ __forceinline__ void write_tile(const KernelParams& p, const Tile& tl, int tid,
                                           int nthreads, const std::int16_t* outq) {
  using K = TileConfig<L, C>;
  const int mcus = min(K::kMcusPerTile, p.mcus_x - tl.tx * K::kMcusPerTile);
#pragma unroll
  for (int comp = 0; comp < K::kComps; ++comp) {
    const int h = comp == 0 ? K::kMaxH : 1;
    const int v = comp == 0 ? K::kMaxV : 1;
    const int base = comp == 0 ? 0 : K::kYBlocks + (comp - 1) * K::kCBlocks;
    const int run = K::kMcusPerTile * h;
    const int n16 = mcus * h * kVectorsPerBlock;  // 16-byte vectors per run
    const CompParams cp = comp_params(p, comp);
#pragma unroll
    for (int bl = 0; bl < v; ++bl) {
      const int by = tl.band * v + bl;
      const uint4* src = reinterpret_cast<const uint4*>(outq + (base + bl * run) * kBlockCoeffs);
      uint4* dst = reinterpret_cast<uint4*>(
          p.coeffs + (cp.block_offset + static_cast<long long>(by) * cp.blocks_w +
                      static_cast<long long>(tl.tx) * run) *
                         kBlockCoeffs);
      for (int i = tid; i < n16; i += nthreads) dst[i] = src[i];
    }
  }
}

// Everything after pass 1 (pass 1's results are in `work` and a barrier has been passed).
template <int L, int C, bool kPartial>
__device__ __forceinline__ void finish_tile(const KernelParams& p, const Tile& tl, int tid,
                                            const std::int32_t* work, std::int16_t* outq,
                                            const DeviceTables& tab) {
  using K = TileConfig<L, C>;
  pass2<L, C>(p, tl, tid, work, outq, tab);
  consumer_sync<kPartial>(K::kThreads);
  if (tile_has_dummies<L, C>(p, tl)) {
    fix_dummies<L, C>(p, tl, tid, outq);
    consumer_sync<kPartial>(K::kThreads);
  }
  write_tile<L, C>(p, tl, tid, K::kThreads, outq);
}

// The same for the 4:2:0 fast path: chroma warps first run the row FDCT of their downsampled
// rows in place (__syncwarp), then every warp runs pass 2 on its own 4 blocks and copies them
// (4 x 128 bytes, contiguous in the plane) to global memory: no barrier after pass 2.
template <int L, int C>
__device__ __forceinline__ void finish_fast420(const KernelParams& p, const Tile& tl, int tid,
                                               std::int32_t* work, std::int16_t* outq,
                                               const DeviceTables& tab) {
  using K = TileConfig<L, C>;
  constexpr int kWarpBlocks = kWarpSize / kDctSize;  // 4 blocks per warp
  static_assert(kWarpBlocks * kVectorsPerBlock == kWarpSize, "one vector per lane");
  const int tb = tile_block_of(tid);
  if (tb >= K::kYBlocks) {  // whole chroma warps: row FDCT of the downsampled rows in place
    row_fdct_in_place(tb, lane_of(tid), work);
    __syncwarp();
  }
  pass2<L, C>(p, tl, tid, work, outq, tab);
  __syncwarp();
  const int tb0 = warp_of(tid) * kWarpBlocks;  // the warp's blocks: one run in the plane
  const BlockPos<L, C> pos(tb0);
  const int h = pos.comp == 0 ? K::kMaxH : 1;
  const int v = pos.comp == 0 ? K::kMaxV : 1;
  const CompParams cp = comp_params(p, pos.comp);
  const long long blk = cp.block_offset +
                        static_cast<long long>(tl.band * v + pos.bl) * cp.blocks_w +
                        static_cast<long long>(tl.tx) * K::kMcusPerTile * h + pos.k;
  const int lane = warp_lane_of(tid);
  reinterpret_cast<uint4*>(p.coeffs + blk * kBlockCoeffs)[lane] =
      reinterpret_cast<const uint4*>(outq + tb0 * kBlockCoeffs)[lane];
}

}  // namespace mjpeg::gpu::detail
