// Transform kernels, part 1 of 6: the tile, its shape per configuration, and which thread
// works on which 8x8 block (the overview is in transform_kernels.cuh).
#pragma once

#include <cstdint>

#include "core/jpeg_math.hpp"
#include "transform_params.hpp"

namespace mjpeg::gpu::detail {

// Resident blocks per SM asked of ptxas (caps registers): -DMJPEG_GPU_MIN_BLOCKS=N overrides.
// Default 3: without a minimum ptxas gives most 4:2:0 kernels 99-137 registers (1 block/SM),
// which run slower; N=3 (48-56 registers, 3 blocks/SM) is faster than N=2 (72-80 registers) at
// 4K (docs/BENCHMARKS.md, Kernels).
#ifndef MJPEG_GPU_MIN_BLOCKS
#define MJPEG_GPU_MIN_BLOCKS 3
#endif
#define MJPEG_GPU_BOUNDS(...) __launch_bounds__((__VA_ARGS__), MJPEG_GPU_MIN_BLOCKS)

// ---------------------------------------------------------------------------------------------
// Named sizes
// ---------------------------------------------------------------------------------------------
/// Samples per block row and column. Eight threads work on one block: thread `lane` of the
/// eight handles row `lane` in pass 1 and column `lane` in pass 2.
constexpr int kDctSize = 8;
constexpr int kBlockCoeffs = kDctSize * kDctSize;  ///< 64 coefficients per block
/// Row stride of a block in the `work` buffer, in int32: one more than a row, and odd, so the
/// pass-1 row stores and the pass-2 column loads of a warp hit 32 distinct banks.
constexpr int kWorkRowStride = kDctSize + 1;
constexpr int kWorkBlockInts = kDctSize * kWorkRowStride;  ///< one block in `work` (72 int32)
/// One asynchronous copy (cp.async) and one vector store move 16 bytes.
constexpr int kCopyBytes = 16;
constexpr int kCopyShift = 4;  ///< log2(kCopyBytes)
constexpr int kVectorsPerBlock = kBlockCoeffs * 2 / kCopyBytes;  ///< uint4 per int16 block (8)
constexpr int kWarpSize = 32;
static_assert(kDctSize == 8 && kWarpSize == 32, "the thread mapping below uses shifts and masks");
static_assert(kWorkRowStride % 2 == 1, "an even stride would give bank conflicts");
static_assert(kCopyBytes == 1 << kCopyShift, "kCopyShift is log2(kCopyBytes)");

/// The tile block (8x8 block of the tile) thread `tid` works on, and its row/column in it.
__device__ __forceinline__ int tile_block_of(int tid) { return tid >> 3; }
__device__ __forceinline__ int lane_of(int tid) { return tid & 7; }
/// The warp of thread `tid` and its lane in it (tid / 32, tid % 32).
__device__ __forceinline__ int warp_of(int tid) { return tid >> 5; }
__device__ __forceinline__ int warp_lane_of(int tid) { return tid & 31; }

constexpr int round_up_c(int x, int m) { return (x + m - 1) / m * m; }

// Stage row stride in bytes for rows of `bytes` bytes: room for the (address mod 16) shift and
// one extra word read, then 20 mod 32 words, so the 8 rows a warp reads at once fall in
// distinct banks.
constexpr int stage_row_stride(int bytes) {
  const int words_min = bytes / 4 + 8;
  return 4 * (words_min + ((20 - words_min % 32) + 32) % 32);
}

// ---------------------------------------------------------------------------------------------
// TileConfig<L, C>: everything fixed by the sampling layout L (kL444 ...) and the input C
// (bytes per packed pixel, or kPlanarInput): tile shape, block counts, threads, shared memory.
// ---------------------------------------------------------------------------------------------
template <int L, int C>
struct TileConfig {
  static constexpr bool kPlanar = C == kPlanarInput;
  static constexpr int kPix = kPlanar ? 3 : C;  // bytes per pixel of a fetched run (planar: RGB)
  static constexpr int kComps = L == kLGray ? 1 : 3;
  static constexpr int kMaxH = (L == kL420 || L == kL422) ? 2 : 1;
  static constexpr int kMaxV = L == kL420 ? 2 : 1;
  static constexpr int kMcusPerTile = L == kL444 ? 16 : L == kLGray ? 32 : 8;
  static constexpr int kTileW = kDctSize * kMaxH * kMcusPerTile;  // pixels
  static constexpr int kTileH = kDctSize * kMaxV;                 // pixel rows
  static constexpr int kYRun = kMcusPerTile * kMaxH;              // luma blocks per block row
  static constexpr int kYBlocks = kYRun * kMaxV;
  static constexpr int kCBlocks = kComps == 3 ? kMcusPerTile : 0;
  static constexpr int kBlocks = kYBlocks + 2 * kCBlocks;
  static constexpr int kThreads = kDctSize * kBlocks;  // consumer threads: 8 per tile block
  static constexpr int kRowBytes = kTileW * (kPlanar ? 1 : C);  // of one plane; multiple of 16
  static constexpr int kChunks = kRowBytes / kCopyBytes;         // 16-byte chunks per full row
  static constexpr int kRowStride = stage_row_stride(kRowBytes);
  static constexpr int kPlaneBytes = kTileH * kRowStride;
  static constexpr int kStageBytes = (kPlanar ? 3 : 1) * kPlaneBytes;
  static constexpr int kRgbRowStride = stage_row_stride(kTileW * 3);
  static constexpr int kRgbBytes = kPlanar ? kTileH * kRgbRowStride : 0;
  // 4:2:0 RGB (or planar): two work buffers, alternating per tile (the balanced fast path lets
  // luma warps write the next tile's chroma rows while chroma warps may still read this tile's).
  static constexpr bool kFast420 = L == kL420 && (C == 3 || kPlanar);
  static constexpr int kWorkInts = kBlocks * kWorkBlockInts;
  static constexpr int kWorkBytes = (kFast420 ? 2 : 1) * kWorkInts * 4;
  static constexpr int kOutBytes = kBlocks * kBlockCoeffs * 2;
  static constexpr int kTableBytes = round_up_c(int(sizeof(DeviceTables)), 16);
  static constexpr int kProducerThreads = kWarpSize;  // partitioned variant: one producer warp
  // Shared memory: the part every launch has (rgb, work, outq, tables), then the stages, whose
  // count is the launch's (a run-time value: one kernel serves every stage count).
  static constexpr int kFixedBytes = kRgbBytes + kWorkBytes + kOutBytes + kTableBytes;
  static constexpr int smem_bytes(int stages, int state_bytes = 0) {
    return kFixedBytes + stages * kStageBytes + state_bytes;
  }
  static_assert(kFixedBytes % 16 == 0 && kStageBytes % 16 == 0,
                "the stages and the pipeline state after them start 16-byte aligned");
  static_assert(kRowBytes % (2 * kCopyBytes) == 0,
                "tile rows (and half rows) must be whole 16-byte chunks");
  static_assert(kThreads <= 1024 - kProducerThreads, "too many threads");
};

/// One tile: MCU row (band) and tile column, and its top-left pixel.
struct Tile {
  int band, tx, y0, x0;
};

template <int L, int C>
__device__ __forceinline__ Tile make_tile(const KernelParams& p, int t) {
  using K = TileConfig<L, C>;
  Tile tl;
  tl.band = t / p.tiles_x;
  tl.tx = t - tl.band * p.tiles_x;
  tl.y0 = tl.band * K::kTileH;
  tl.x0 = tl.tx * K::kTileW;
  return tl;
}

// p.comp[c] with a run-time c, without indexing the parameter array (which would copy the
// parameters to local memory).
__device__ __forceinline__ CompParams comp_params(const KernelParams& p, int c) {
  return c == 0 ? p.comp[0] : (c == 1 ? p.comp[1] : p.comp[2]);
}

// Which component / block row / block column a tile block index is.
template <int L, int C>
struct BlockPos {
  int comp, bl, k, base;
  __device__ __forceinline__ explicit BlockPos(int tb) {
    using K = TileConfig<L, C>;
    if (tb < K::kYBlocks) {
      comp = 0;
      base = 0;
      bl = tb / K::kYRun;
      k = tb - bl * K::kYRun;
    } else {
      comp = tb < K::kYBlocks + K::kCBlocks ? 1 : 2;
      base = K::kYBlocks + (comp - 1) * K::kCBlocks;
      bl = 0;
      k = tb - base;
    }
  }
};

// Block coordinates in its component plane and whether it is written / real.
template <int L, int C>
struct BlockInfo {
  int by, bx;
  bool inside;  // within blocks_w (not past the last MCU column)
  bool dummy;   // MCU padding block
  __device__ __forceinline__ BlockInfo(const KernelParams& p, const Tile& tl,
                                       const BlockPos<L, C>& pos) {
    using K = TileConfig<L, C>;
    const int h = pos.comp == 0 ? K::kMaxH : 1;
    const int v = pos.comp == 0 ? K::kMaxV : 1;
    by = tl.band * v + pos.bl;
    bx = tl.tx * K::kMcusPerTile * h + pos.k;
    const CompParams cp = comp_params(p, pos.comp);
    inside = bx < cp.blocks_w;
    dummy = bx >= cp.width_in_blocks || by >= cp.height_in_blocks;
  }
};

/// Whole tile inside the frame and no dummy blocks: nothing to clamp (the 4:2:0 fast path).
template <int L, int C>
__device__ __forceinline__ bool tile_is_interior(const KernelParams& p, const Tile& tl) {
  using K = TileConfig<L, C>;
  return (tl.tx + 1) * K::kMcusPerTile < p.mcus_x && tl.band + 1 < p.num_tiles / p.tiles_x &&
         tl.x0 + K::kTileW <= p.width && tl.y0 + K::kTileH <= p.height;
}

template <int L, int C>
__device__ __forceinline__ bool tile_has_dummies(const KernelParams& p, const Tile& tl) {
  using K = TileConfig<L, C>;
  if constexpr (K::kComps == 1) {
    return false;
  } else {
    return (tl.tx + 1) * K::kMcusPerTile >= p.mcus_x || tl.band + 1 >= p.num_tiles / p.tiles_x;
  }
}

// Barrier of the consumer threads: named barrier 1 in the partitioned variant (its producer
// warp does not take part); __syncthreads in the others.
template <bool kPartial>
__device__ __forceinline__ void consumer_sync(int nthreads) {
  if constexpr (kPartial) {
    asm volatile("bar.sync 1, %0;" ::"r"(nthreads) : "memory");
  } else {
    __syncthreads();
  }
}

// ---------------------------------------------------------------------------------------------
// Shared memory (dynamic, 16-byte aligned): rgb (planar only), work, outq, tables at fixed
// offsets, then the launch's stages, then (pipeline, partitioned) the cuda::pipeline state.
// ---------------------------------------------------------------------------------------------
struct SmemPtrs {
  std::uint8_t* stages;
  std::uint8_t* rgb;  // planar input only
  std::int32_t* work;
  std::int16_t* outq;
  DeviceTables* tab;
  void* pipe_state;  // after the last stage (pipeline, partitioned)
};

template <int L, int C>
__device__ __forceinline__ SmemPtrs carve_smem(std::uint8_t* smem, int stages) {
  using K = TileConfig<L, C>;
  SmemPtrs s;
  s.rgb = smem;
  s.work = reinterpret_cast<std::int32_t*>(smem + K::kRgbBytes);
  s.outq = reinterpret_cast<std::int16_t*>(smem + K::kRgbBytes + K::kWorkBytes);
  s.tab = reinterpret_cast<DeviceTables*>(smem + K::kRgbBytes + K::kWorkBytes + K::kOutBytes);
  s.stages = smem + K::kFixedBytes;
  s.pipe_state = smem + K::kFixedBytes + stages * K::kStageBytes;
  return s;
}

// The work buffer of tile iteration `iter` (4:2:0 fast path: two, alternating).
template <int L, int C>
__device__ __forceinline__ std::int32_t* work_of(std::int32_t* work, int iter) {
  using K = TileConfig<L, C>;
  return K::kFast420 ? work + (iter & 1) * K::kWorkInts : work;
}

__device__ __forceinline__ void load_tables(const DeviceTables* g, DeviceTables* s, int tid,
                                            int nthreads) {
  static_assert(sizeof(DeviceTables) % 4 == 0, "table copy uses words");
  const std::uint32_t* src = reinterpret_cast<const std::uint32_t*>(g);
  std::uint32_t* dst = reinterpret_cast<std::uint32_t*>(s);
  for (int i = tid; i < int(sizeof(DeviceTables) / 4); i += nthreads) dst[i] = src[i];
}

}  // namespace mjpeg::gpu::detail
