// The GPU forward transform: packed RGB24 / gray8 pixels, or planar YCbCr (Y4M, decoded video),
// -> quantized zigzag coefficients in the layout of jpeg_geometry.hpp, bit-identical to
// transform_cpu. All arithmetic comes from jpeg_math.hpp (ycc_to_rgb, rgb_to_*, downsample_*,
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
// Shared memory layout (dynamic, 16-byte aligned):
//   stage[S]  : S pixel tiles, kTileH rows of kRowStride bytes. A row holds the tile's bytes of
//               one image row starting at byte offset (row address mod 16), so global and shared
//               addresses agree mod 16 and the 16-byte copies line up for any pitch. kRowStride
//               is 20 mod 32 words: the 8 rows read at once by a warp fall in distinct banks.
//               Planar input: three such planes per stage (kPlaneBytes each): the tile's Y rows
//               (kTileW bytes), then its Cb rows and its Cr rows (kTileH >> shift_y rows of
//               kTileW >> shift_x bytes: the chroma samples the tile's pixels use).
//   rgb       : planar input only: the tile as RGB (kTileH rows of kRgbRowStride bytes, row r
//               at r * kRgbRowStride, no shift), written by convert_tile, read by pass 1.
//   work      : kBlocks x 72 int32, row r of block tb at tb*72 + r*9 (stride 9, odd): pass-1
//               stores and pass-2 column loads are both bank-conflict free.
//   outq      : kBlocks x 64 int16, zigzag order (the tile's output before the global copy).
//   tables    : DeviceTables (divisors [3][64], one per component; natural->zigzag), copied
//               once per block.
// ---------------------------------------------------------------------------------------------
#pragma once

#include <cooperative_groups.h>
#include <cuda/pipeline>
#include <cuda_pipeline_primitives.h>

#include <cstdint>

#include "core/jpeg_math.hpp"
#include "transform_params.hpp"

namespace mjpeg::gpu::detail {

namespace cg = cooperative_groups;

// Resident blocks per SM asked of ptxas (caps registers): -DMJPEG_GPU_MIN_BLOCKS=N overrides.
// Default 3 (v2, balanced 4:2:0 pass 1): without a minimum ptxas used 99-137 registers for most
// 4:2:0 kernels (1 block/SM) and they ran slower than before; N=3 (48-56 registers, 3 blocks/SM)
// measured 3-7% faster than N=2 (72-80 registers) at 4K. History (v1 kernels): N=4 ran within 3%
// of no minimum; an explicit N=1 (119-154 registers) was ~25% slower.
#ifndef MJPEG_GPU_MIN_BLOCKS
#define MJPEG_GPU_MIN_BLOCKS 3
#endif
#define MJPEG_GPU_BOUNDS(...) __launch_bounds__((__VA_ARGS__), MJPEG_GPU_MIN_BLOCKS)

constexpr int round_up_c(int x, int m) { return (x + m - 1) / m * m; }

// Stage row stride in bytes for rows of `bytes` bytes: room for the (address mod 16) shift and
// one extra word read, then 20 mod 32 words, so the 8 rows a warp reads at once fall in
// distinct banks.
constexpr int stage_row_stride(int bytes) {
  const int words_min = bytes / 4 + 8;
  return 4 * (words_min + ((20 - words_min % 32) + 32) % 32);
}

template <int L, int C>
struct Cfg {
  static constexpr bool kPlanar = C == kPlanarInput;
  static constexpr int kPix = kPlanar ? 3 : C;  // bytes per pixel of a fetched run (planar: RGB)
  static constexpr int kComps = L == kLGray ? 1 : 3;
  static constexpr int kMaxH = (L == kL420 || L == kL422) ? 2 : 1;
  static constexpr int kMaxV = L == kL420 ? 2 : 1;
  static constexpr int kMcusPerTile = L == kL444 ? 16 : L == kLGray ? 32 : 8;
  static constexpr int kTileW = 8 * kMaxH * kMcusPerTile;  // pixels
  static constexpr int kTileH = 8 * kMaxV;                 // pixel rows
  static constexpr int kYRun = kMcusPerTile * kMaxH;       // luma blocks per block row
  static constexpr int kYBlocks = kYRun * kMaxV;
  static constexpr int kCBlocks = kComps == 3 ? kMcusPerTile : 0;
  static constexpr int kBlocks = kYBlocks + 2 * kCBlocks;
  static constexpr int kThreads = 8 * kBlocks;
  static constexpr int kRowBytes = kTileW * (kPlanar ? 1 : C);  // of one plane; multiple of 16
  static constexpr int kChunks = kRowBytes / 16;            // 16-byte chunks per full row
  static constexpr int kRowStride = stage_row_stride(kRowBytes);
  static constexpr int kPlaneBytes = kTileH * kRowStride;
  static constexpr int kStageBytes = (kPlanar ? 3 : 1) * kPlaneBytes;
  static constexpr int kRgbRowStride = stage_row_stride(kTileW * 3);
  static constexpr int kRgbBytes = kPlanar ? kTileH * kRgbRowStride : 0;
  // 4:2:0 RGB (or planar): two work buffers, alternating per tile (the balanced fast path lets
  // luma warps write the next tile's chroma rows while chroma warps may still read this tile's).
  static constexpr bool kFast420 = L == kL420 && (C == 3 || kPlanar);
  static constexpr int kWorkInts = kBlocks * 72;
  static constexpr int kWorkBytes = (kFast420 ? 2 : 1) * kWorkInts * 4;
  static constexpr int kOutBytes = kBlocks * 64 * 2;
  static constexpr int kTableBytes = round_up_c(int(sizeof(DeviceTables)), 16);
  static constexpr int kProducerThreads = 32;  // partitioned variant
  static constexpr int smem_bytes(int stages) {
    return stages * kStageBytes + kRgbBytes + kWorkBytes + kOutBytes + kTableBytes;
  }
  static_assert(kRowBytes % 32 == 0, "tile rows (and half rows) must be whole 16-byte chunks");
  static_assert(kThreads <= 1024 - kProducerThreads, "too many threads");
};

struct Tile {
  int band, tx, y0, x0;
};

// p.comp[c] with a run-time c, without indexing the parameter array (which would copy the
// parameters to local memory).
__device__ __forceinline__ CompParams comp_params(const KernelParams& p, int c) {
  return c == 0 ? p.comp[0] : (c == 1 ? p.comp[1] : p.comp[2]);
}

__device__ __forceinline__ Tile make_tile(const KernelParams& p, int t, int tile_w, int tile_h) {
  Tile tl;
  tl.band = t / p.tiles_x;
  tl.tx = t - tl.band * p.tiles_x;
  tl.y0 = tl.band * tile_h;
  tl.x0 = tl.tx * tile_w;
  return tl;
}

// Named barrier for the consumer warps of the partitioned variant (the producer warp does not
// take part); __syncthreads for the others.
template <bool kPartial>
__device__ __forceinline__ void consumer_sync(int nthreads) {
  if constexpr (kPartial) {
    asm volatile("bar.sync 1, %0;" ::"r"(nthreads) : "memory");
  } else {
    __syncthreads();
  }
}

// ---------------------------------------------------------------------------------------------
// Staging: copy the tile's in-frame bytes (rows y0.. < H, columns x0.. < W) into a stage.
// stage_rows copies `rows` rows of `len` bytes of one plane (row r at src0 + r * pitch) to
// stage rows kRowStride apart, each at its (row address mod 16) offset. Bulk: 16-byte chunks
// (global and shared addresses both 16-aligned); tail path: single bytes for the unaligned
// head/tail of a row (unaligned pitch) and the partial last chunk (edge tile). kChunks: the
// chunks of a full row (len == 16 * kChunks on an aligned plane takes the bulk path only).
// Copy16/Copy1 say how one chunk / one byte is copied (cuda::memcpy_async on a pipeline, or
// __pipeline_memcpy_async + plain byte copies).
// ---------------------------------------------------------------------------------------------
template <int kChunks, int kRowStride, class Copy16, class Copy1>
__device__ __forceinline__ void stage_rows(const std::uint8_t* src0, std::size_t pitch, int rows,
                                           int len, bool aligned, std::uint8_t* stage, int pi,
                                           int np, Copy16 copy16, Copy1 copy1) {
  if (aligned && len == kChunks * 16) {  // every row: whole aligned chunks
    for (int it = pi; it < rows * kChunks; it += np) {
      const int r = it / kChunks;
      const int j = it - r * kChunks;
      copy16(stage + r * kRowStride + j * 16, src0 + r * pitch + j * 16);
    }
    return;
  }
  constexpr int kItems = kChunks + 32;  // chunks, then up to 15 head + 15 tail bytes
  for (int it = pi; it < rows * kItems; it += np) {
    const int r = it / kItems;
    const int j = it - r * kItems;
    const std::uint8_t* src = src0 + r * pitch;
    const int sh = static_cast<int>(reinterpret_cast<std::uintptr_t>(src) & 15);
    const int head = min((16 - sh) & 15, len);
    const int mid = (len - head) >> 4;
    const int tail = len - head - mid * 16;
    std::uint8_t* dst = stage + r * kRowStride + sh;
    if (j < mid) {
      copy16(dst + head + j * 16, src + head + j * 16);
    } else {
      const int b = j - mid;
      if (b < head) {
        copy1(dst + b, src + b);
      } else if (b - head < tail) {
        const int o = head + mid * 16 + (b - head);
        copy1(dst + o, src + o);
      }
    }
  }
}

template <int L, int C, class Copy16, class Copy1>
__device__ __forceinline__ void stage_tile(const KernelParams& p, const Tile& tl,
                                           std::uint8_t* stage, int pi, int np, Copy16 copy16,
                                           Copy1 copy1) {
  using K = Cfg<L, C>;
  const int rows = min(K::kTileH, p.height - tl.y0);
  const int cols = min(K::kTileW, p.width - tl.x0);
  constexpr int kBpp = K::kPlanar ? 1 : C;  // bytes per pixel in the (Y) plane
  const std::uint8_t* src0 = p.pixels + static_cast<std::size_t>(tl.y0) * p.pitch +
                             static_cast<std::size_t>(tl.x0) * kBpp;
  stage_rows<K::kChunks, K::kRowStride>(src0, p.pitch, rows, cols * kBpp, p.aligned != 0, stage,
                                        pi, np, copy16, copy1);
  if constexpr (K::kPlanar) {
    const PlanarParams& q = p.planar;
    if (!q.has_chroma) return;
    // The chroma samples of the tile's pixels: rows y0 >> sy .., columns x0 >> sx .. (x0 and
    // y0 are even, so the tile's pixels use exactly kTileH >> sy rows of kTileW >> sx).
    const int cy0 = tl.y0 >> q.shift_y, cx0 = tl.x0 >> q.shift_x;
    const int crows = min(K::kTileH >> q.shift_y, q.chroma_height - cy0);
    const int ccols = min(K::kTileW >> q.shift_x, q.chroma_width - cx0);
    const std::size_t off = static_cast<std::size_t>(cy0) * q.chroma_pitch + cx0;
    const bool al = q.chroma_aligned != 0;
    if (q.shift_x) {
      stage_rows<K::kChunks / 2, K::kRowStride>(q.cb + off, q.chroma_pitch, crows, ccols, al,
                                                stage + K::kPlaneBytes, pi, np, copy16, copy1);
      stage_rows<K::kChunks / 2, K::kRowStride>(q.cr + off, q.chroma_pitch, crows, ccols, al,
                                                stage + 2 * K::kPlaneBytes, pi, np, copy16, copy1);
    } else {
      stage_rows<K::kChunks, K::kRowStride>(q.cb + off, q.chroma_pitch, crows, ccols, al,
                                            stage + K::kPlaneBytes, pi, np, copy16, copy1);
      stage_rows<K::kChunks, K::kRowStride>(q.cr + off, q.chroma_pitch, crows, ccols, al,
                                            stage + 2 * K::kPlaneBytes, pi, np, copy16, copy1);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Pixel fetch: NPIX consecutive pixels (C bytes each) starting at local column lx of a row,
// packed little-endian into 32-bit words. `fast`: all NPIX columns are inside the frame;
// otherwise columns clamp to the last one (full-resolution right-edge replication).
// kSmem: `row` points into a stage (word loads + funnel shift); else into global memory.
// ---------------------------------------------------------------------------------------------
template <int NPIX, int C, bool kSmem>
__device__ __forceinline__ void fetch_pixels(const std::uint8_t* row, int lx, int last_col,
                                             bool fast, std::uint32_t (&w)[NPIX * C / 4]) {
  constexpr int NW = NPIX * C / 4;
  if (kSmem && fast) {
    const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(row + lx * C);
    const std::uint32_t* q = reinterpret_cast<const std::uint32_t*>(a & ~std::uintptr_t{3});
    const unsigned sh = static_cast<unsigned>(a & 3) * 8;
    std::uint32_t prev = q[0];
#pragma unroll
    for (int i = 0; i < NW; ++i) {
      const std::uint32_t next = (i + 1 < NW || sh != 0) ? q[i + 1] : 0u;
      w[i] = __funnelshift_r(prev, next, sh);
      prev = next;
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < NW; ++i) w[i] = 0;
#pragma unroll
  for (int i = 0; i < NPIX; ++i) {
    const int col = fast ? lx + i : min(lx + i, last_col);
#pragma unroll
    for (int ch = 0; ch < C; ++ch) {
      const std::uint8_t* s = row + col * C + ch;
      const std::uint32_t v = kSmem ? *s : __ldg(s);
      const int j = i * C + ch;
      w[j >> 2] |= v << (8 * (j & 3));
    }
  }
}

template <int N>
__device__ __forceinline__ int byte_at(const std::uint32_t (&w)[N], int j) {
  return static_cast<int>((w[j >> 2] >> (8 * (j & 3))) & 0xFFu);
}

// Colour of pixel i of a fetched run: component 0 = Y (or the gray byte), 1 = Cb, 2 = Cr.
template <int C, int N>
__device__ __forceinline__ int pixel_value(const std::uint32_t (&w)[N], int i, int comp) {
  if constexpr (C == 1) {
    return byte_at(w, i);
  } else {
    const int r = byte_at(w, 3 * i), g = byte_at(w, 3 * i + 1), b = byte_at(w, 3 * i + 2);
    if (comp == 0) return math::rgb_to_y(r, g, b);
    if (comp == 1) return math::rgb_to_cb(r, g, b);
    return math::rgb_to_cr(r, g, b);
  }
}

// Planar input: the tile's in-frame pixels made RGB into `rgb` (see the layout above): each
// pixel's Y byte and the Cb, Cr bytes of its chroma sample (mono: Cb = Cr = 128) through
// math::ycc_to_rgb. The tile's x0 and y0 are even, so local column c uses local chroma column
// c >> shift_x. A thread converts groups of 4 pixels (three 32-bit stores); in the last group
// of an edge tile, columns past the frame repeat its last column (pass 1 clamps to it anyway).
// kSmem: from the stage's planes; else straight from global memory (variant direct).
template <int L, int C, bool kSmem>
__device__ __forceinline__ void convert_tile(const KernelParams& p, const Tile& tl,
                                             const std::uint8_t* stage, std::uint8_t* rgb,
                                             int tid, int nthreads) {
  using K = Cfg<L, C>;
  const PlanarParams& q = p.planar;
  const int rows = min(K::kTileH, p.height - tl.y0);
  const int cols = min(K::kTileW, p.width - tl.x0);
  const int groups = (cols + 3) >> 2;
  constexpr int kGroups = K::kTileW / 4;  // per full row
  for (int it = tid; it < rows * kGroups; it += nthreads) {
    const int r = it / kGroups;
    const int grp = it - r * kGroups;
    if (grp >= groups) continue;
    const int gy = tl.y0 + r;
    const std::size_t yoff = static_cast<std::size_t>(gy) * p.pitch;
    const int cy = gy >> q.shift_y;
    const std::size_t coff = static_cast<std::size_t>(cy) * q.chroma_pitch;
    const std::uint8_t* yrow;
    const std::uint8_t* brow;
    const std::uint8_t* rrow;
    if constexpr (kSmem) {
      const int lcy = cy - (tl.y0 >> q.shift_y);
      yrow = stage + r * K::kRowStride +
             static_cast<int>((reinterpret_cast<std::uintptr_t>(p.pixels) + yoff) & 15);
      brow = stage + K::kPlaneBytes + lcy * K::kRowStride +
             static_cast<int>((reinterpret_cast<std::uintptr_t>(q.cb) + coff) & 15);
      rrow = stage + 2 * K::kPlaneBytes + lcy * K::kRowStride +
             static_cast<int>((reinterpret_cast<std::uintptr_t>(q.cr) + coff) & 15);
    } else {
      yrow = p.pixels + yoff + tl.x0;
      brow = q.cb + coff + (tl.x0 >> q.shift_x);
      rrow = q.cr + coff + (tl.x0 >> q.shift_x);
    }
    std::uint32_t out[3] = {0u, 0u, 0u};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int col = min(4 * grp + i, cols - 1);
      const int yv = kSmem ? yrow[col] : __ldg(yrow + col);
      int cb = 128, cr = 128;
      if (q.has_chroma) {
        const int cc = col >> q.shift_x;
        cb = kSmem ? brow[cc] : __ldg(brow + cc);
        cr = kSmem ? rrow[cc] : __ldg(rrow + cc);
      }
      int v[3];
      math::ycc_to_rgb(q.ycc, yv, cb, cr, v[0], v[1], v[2]);
#pragma unroll
      for (int ch = 0; ch < 3; ++ch) {
        const int j = 3 * i + ch;
        out[j >> 2] |= static_cast<std::uint32_t>(v[ch]) << (8 * (j & 3));
      }
    }
    std::uint32_t* dst = reinterpret_cast<std::uint32_t*>(rgb + r * K::kRgbRowStride + 12 * grp);
    dst[0] = out[0];
    dst[1] = out[1];
    dst[2] = out[2];
  }
}

// The run of pixels pass 1 works on: NPIX pixels of local row lr (clamped to the last row)
// from local column lx, packed K::kPix bytes per pixel. kSmem: from the stage; else from
// global memory (direct variant). Planar input: always from the RGB tile (`stage` is it).
template <int NPIX, int L, int C, bool kSmem>
__device__ __forceinline__ void fetch_run(const KernelParams& p, const Tile& tl,
                                          const std::uint8_t* stage, int lr, int lx, bool fast,
                                          std::uint32_t (&w)[NPIX * Cfg<L, C>::kPix / 4]) {
  using K = Cfg<L, C>;
  lr = min(lr, p.height - 1 - tl.y0);       // last valid local row
  const int last_col = p.width - 1 - tl.x0;  // last valid local column
  if constexpr (K::kPlanar) {
    fetch_pixels<NPIX, 3, true>(stage + lr * K::kRgbRowStride, lx, last_col, fast, w);
  } else {
    const std::uint8_t* row;
    if constexpr (kSmem) {
      const std::uintptr_t g = reinterpret_cast<std::uintptr_t>(p.pixels) +
                               static_cast<std::size_t>(tl.y0 + lr) * p.pitch;
      row = stage + lr * K::kRowStride + static_cast<int>(g & 15);
    } else {
      row = p.pixels + static_cast<std::size_t>(tl.y0 + lr) * p.pitch +
            static_cast<std::size_t>(tl.x0) * C;
    }
    fetch_pixels<NPIX, C, kSmem>(row, lx, last_col, fast, w);
  }
}

// Which component / block row / block column a tile block index is.
template <int L, int C>
struct BlockPos {
  int comp, bl, k, base;
  __device__ __forceinline__ explicit BlockPos(int tb) {
    using K = Cfg<L, C>;
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

// Pass 1: samples of row r of tile block tb -> row FDCT -> work.
// kSmem: read the stage; else read global memory (direct variant).
template <int L, int C, bool kSmem>
__device__ __forceinline__ void pass1(const KernelParams& p, const Tile& tl,
                                      const std::uint8_t* stage, int tid, std::int32_t* work) {
  using K = Cfg<L, C>;
  constexpr int PB = K::kPix;
  const int tb = tid >> 3;
  const int r = tid & 7;
  const BlockPos<L, C> pos(tb);
  const int comp = pos.comp;
  std::int32_t d[8];
  if (comp == 0) {
    // Luma / gray: one full-resolution pixel per sample. Rows clamp at H-1.
    const int lr = pos.bl * 8 + r;
    const int lx = pos.k * 8;
    std::uint32_t w[8 * PB / 4];
    fetch_run<8, L, C, kSmem>(p, tl, stage, lr, lx, tl.x0 + lx + 8 <= p.width, w);
#pragma unroll
    for (int i = 0; i < 8; ++i) d[i] = pixel_value<PB>(w, i, 0) - 128;
  } else if constexpr (K::kComps == 3) {
    // Chroma: component rows clamp in component space, then map to full-resolution rows.
    constexpr int FH = K::kMaxH, FV = K::kMaxV;
    const int sy = min(tl.band * 8 + r, comp_params(p, comp).height - 1);
    const int ra = sy * FV - tl.y0;
    const int sx0 = tl.tx * K::kMcusPerTile * 8 + pos.k * 8;  // first component column
    const int lx = pos.k * 8 * FH;
    const bool fast = tl.x0 + lx + 8 * FH <= p.width;
    std::uint32_t wa[8 * FH * PB / 4];
    fetch_run<8 * FH, L, C, kSmem>(p, tl, stage, ra, lx, fast, wa);
    if constexpr (FH == 1) {
#pragma unroll
      for (int i = 0; i < 8; ++i) d[i] = pixel_value<PB>(wa, i, comp) - 128;
    } else if constexpr (FV == 1) {
#pragma unroll
      for (int i = 0; i < 8; ++i)
        d[i] = math::downsample_h2v1(pixel_value<PB>(wa, 2 * i, comp),
                                     pixel_value<PB>(wa, 2 * i + 1, comp), sx0 + i) -
               128;
    } else {
      std::uint32_t wb[8 * FH * PB / 4];
      fetch_run<8 * FH, L, C, kSmem>(p, tl, stage, ra + 1, lx, fast, wb);
#pragma unroll
      for (int i = 0; i < 8; ++i)
        d[i] = math::downsample_h2v2(
                   pixel_value<PB>(wa, 2 * i, comp), pixel_value<PB>(wa, 2 * i + 1, comp),
                   pixel_value<PB>(wb, 2 * i, comp), pixel_value<PB>(wb, 2 * i + 1, comp),
                   sx0 + i) -
               128;
    }
  }
  math::fdct_8<true>(d, 1);
  std::int32_t* out = work + tb * 72 + r * 9;
#pragma unroll
  for (int i = 0; i < 8; ++i) out[i] = d[i];
}

// Block coordinates in its component plane and whether it is written / real.
template <int L, int C>
struct BlockInfo {
  int by, bx;
  bool inside;  // within blocks_w (not past the last MCU column)
  bool dummy;   // MCU padding block
  __device__ __forceinline__ BlockInfo(const KernelParams& p, const Tile& tl,
                                       const BlockPos<L, C>& pos) {
    using K = Cfg<L, C>;
    const int h = pos.comp == 0 ? K::kMaxH : 1;
    const int v = pos.comp == 0 ? K::kMaxV : 1;
    by = tl.band * v + pos.bl;
    bx = tl.tx * K::kMcusPerTile * h + pos.k;
    const CompParams cp = comp_params(p, pos.comp);
    inside = bx < cp.blocks_w;
    dummy = bx >= cp.width_in_blocks || by >= cp.height_in_blocks;
  }
};

// Pass 2: column FDCT of column j of block tb, quantization, zigzag store into outq.
template <int L, int C>
__device__ __forceinline__ void pass2(const KernelParams& p, const Tile& tl, int tid,
                                      const std::int32_t* work, std::int16_t* outq,
                                      const DeviceTables& tab) {
  const int tb = tid >> 3;
  const int j = tid & 7;
  const BlockPos<L, C> pos(tb);
  const BlockInfo<L, C> bi(p, tl, pos);
  std::int32_t d[8];
  const std::int32_t* in = work + tb * 72 + j;
#pragma unroll
  for (int r = 0; r < 8; ++r) d[r] = in[r * 9];
  math::fdct_8<false>(d, 1);
  const math::QuantDivisor* div = tab.divisor[pos.comp];
  std::int16_t* out = outq + tb * 64;
#pragma unroll
  for (int r = 0; r < 8; ++r) {
    const int n = r * 8 + j;
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
  using K = Cfg<L, C>;
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
  outq[tid * 64] = outq[ref * 64];
}

// Coalesced copy of the tile's block runs (one per component block row) to the planes.
template <int L, int C>
__device__ __forceinline__ void write_tile(const KernelParams& p, const Tile& tl, int tid,
                                           int nthreads, const std::int16_t* outq) {
  using K = Cfg<L, C>;
  const int mcus = min(K::kMcusPerTile, p.mcus_x - tl.tx * K::kMcusPerTile);
#pragma unroll
  for (int comp = 0; comp < K::kComps; ++comp) {
    const int h = comp == 0 ? K::kMaxH : 1;
    const int v = comp == 0 ? K::kMaxV : 1;
    const int base = comp == 0 ? 0 : K::kYBlocks + (comp - 1) * K::kCBlocks;
    const int run = K::kMcusPerTile * h;
    const int n16 = mcus * h * 8;  // 16-byte vectors per run
    const CompParams cp = comp_params(p, comp);
#pragma unroll
    for (int bl = 0; bl < v; ++bl) {
      const int by = tl.band * v + bl;
      const uint4* src = reinterpret_cast<const uint4*>(outq + (base + bl * run) * 64);
      uint4* dst = reinterpret_cast<uint4*>(
          p.coeffs + (cp.block_offset + static_cast<long long>(by) * cp.blocks_w +
                      static_cast<long long>(tl.tx) * run) *
                         64);
      for (int i = tid; i < n16; i += nthreads) dst[i] = src[i];
    }
  }
}

template <int L, int C>
__device__ __forceinline__ bool tile_has_dummies(const KernelParams& p, const Tile& tl) {
  using K = Cfg<L, C>;
  if constexpr (K::kComps == 1) {
    return false;
  } else {
    return (tl.tx + 1) * K::kMcusPerTile >= p.mcus_x || tl.band + 1 >= p.num_tiles / p.tiles_x;
  }
}

// Everything after pass 1 (pass 1's results are in `work` and a barrier has been passed).
template <int L, int C, bool kPartial>
__device__ __forceinline__ void finish_tile(const KernelParams& p, const Tile& tl, int tid,
                                            const std::int32_t* work, std::int16_t* outq,
                                            const DeviceTables& tab) {
  using K = Cfg<L, C>;
  pass2<L, C>(p, tl, tid, work, outq, tab);
  consumer_sync<kPartial>(K::kThreads);
  if (tile_has_dummies<L, C>(p, tl)) {
    fix_dummies<L, C>(p, tl, tid, outq);
    consumer_sync<kPartial>(K::kThreads);
  }
  write_tile<L, C>(p, tl, tid, K::kThreads, outq);
}

// ---------------------------------------------------------------------------------------------
// 4:2:0 RGB fast path for interior tiles (whole tile inside the frame, no dummy blocks, so no
// clamping anywhere). Balanced pass 1: only the luma warps read pixels; thread (tb < 32, r)
// converts its 8 pixels of luma row r of block tb to Y, Cb and Cr once (8 + 8 + 8 conversions),
// runs the luma row FDCT, and forms the 2x2 chroma sums: horizontal pairs in registers, the
// vertical partner (row r^1 of the same block) by one shuffle. Even rows write 4 Cb samples,
// odd rows 4 Cr samples (math::downsample_h2v2 of the sum, minus 128) into the chroma blocks'
// rows in `work`. After the block barrier, chroma warps run their row FDCT in place
// (__syncwarp), then every warp runs pass 2 on its own 4 blocks and copies them (4 x 128 bytes,
// contiguous in the plane) to global memory: no barrier after pass 2. Planar 4:2:0 input takes
// it too, reading its tile's RGB (convert_tile).
// ---------------------------------------------------------------------------------------------
template <int L, int C>
__device__ __forceinline__ bool tile_is_interior(const KernelParams& p, const Tile& tl) {
  using K = Cfg<L, C>;
  return (tl.tx + 1) * K::kMcusPerTile < p.mcus_x && tl.band + 1 < p.num_tiles / p.tiles_x &&
         tl.x0 + K::kTileW <= p.width && tl.y0 + K::kTileH <= p.height;
}

template <int L, int C, bool kSmem>
__device__ __forceinline__ void pass1_fast420(const KernelParams& p, const Tile& tl,
                                              const std::uint8_t* stage, int tid,
                                              std::int32_t* work) {
  using K = Cfg<L, C>;
  static_assert(K::kFast420, "4:2:0 RGB or planar only");
  const int tb = tid >> 3;  // < kYBlocks
  const int r = tid & 7;
  const int bl = tb / K::kYRun;
  const int k = tb - bl * K::kYRun;
  const int lr = bl * 8 + r;
  std::uint32_t w[8 * 3 / 4];
  fetch_run<8, L, C, kSmem>(p, tl, stage, lr, k * 8, true, w);  // interior: no clamping
  std::int32_t y[8];
  int cb[4], cr[4];
#pragma unroll
  for (int i = 0; i < 8; i += 2) {
    const int r0 = byte_at(w, 3 * i), g0 = byte_at(w, 3 * i + 1), b0 = byte_at(w, 3 * i + 2);
    const int r1 = byte_at(w, 3 * i + 3), g1 = byte_at(w, 3 * i + 4), b1 = byte_at(w, 3 * i + 5);
    y[i] = math::rgb_to_y(r0, g0, b0) - 128;
    y[i + 1] = math::rgb_to_y(r1, g1, b1) - 128;
    cb[i / 2] = math::rgb_to_cb(r0, g0, b0) + math::rgb_to_cb(r1, g1, b1);
    cr[i / 2] = math::rgb_to_cr(r0, g0, b0) + math::rgb_to_cr(r1, g1, b1);
  }
  // Even rows keep Cb and receive the partner's Cb; odd rows keep Cr.
  const bool odd = r & 1;
  int s[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int give = odd ? cb[j] : cr[j];
    const int got = __shfl_xor_sync(0xFFFFFFFFu, give, 1);
    s[j] = (odd ? cr[j] : cb[j]) + got;
  }
  const int ctb = K::kYBlocks + (odd ? K::kCBlocks : 0) + (k >> 1);
  const int crow = bl * 4 + (r >> 1);
  std::int32_t* cdst = work + ctb * 72 + crow * 9 + (k & 1) * 4;
#pragma unroll
  for (int j = 0; j < 4; ++j) cdst[j] = math::downsample_h2v2(s[j], 0, 0, 0, j) - 128;
  math::fdct_8<true>(y, 1);
  std::int32_t* out = work + tb * 72 + r * 9;
#pragma unroll
  for (int i = 0; i < 8; ++i) out[i] = y[i];
}

template <int L, int C>
__device__ __forceinline__ void finish_fast420(const KernelParams& p, const Tile& tl, int tid,
                                               std::int32_t* work, std::int16_t* outq,
                                               const DeviceTables& tab) {
  using K = Cfg<L, C>;
  const int tb = tid >> 3;
  if (tb >= K::kYBlocks) {  // whole chroma warps: row FDCT of the downsampled rows in place
    std::int32_t* rw = work + tb * 72 + (tid & 7) * 9;
    std::int32_t d[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) d[i] = rw[i];
    math::fdct_8<true>(d, 1);
#pragma unroll
    for (int i = 0; i < 8; ++i) rw[i] = d[i];
    __syncwarp();
  }
  pass2<L, C>(p, tl, tid, work, outq, tab);
  __syncwarp();
  const int tb0 = (tid >> 5) * 4;  // the warp's 4 blocks: one contiguous run in the plane
  const BlockPos<L, C> pos(tb0);
  const int h = pos.comp == 0 ? K::kMaxH : 1;
  const int v = pos.comp == 0 ? K::kMaxV : 1;
  const CompParams cp = comp_params(p, pos.comp);
  const long long blk = cp.block_offset +
                        static_cast<long long>(tl.band * v + pos.bl) * cp.blocks_w +
                        static_cast<long long>(tl.tx) * K::kMcusPerTile * h + pos.k;
  reinterpret_cast<uint4*>(p.coeffs + blk * 64)[tid & 31] =
      reinterpret_cast<const uint4*>(outq + tb0 * 64)[tid & 31];
}

// One tile's pass 1 (kFast: the balanced 4:2:0 path; only luma warps work). Planar input:
// first the tile to RGB (convert_tile) and a barrier of the consumer threads; pass 1 then reads
// the RGB tile.
template <int L, int C, bool kSmem, bool kPartial = false>
__device__ __forceinline__ void pass1_any(const KernelParams& p, const Tile& tl,
                                          const std::uint8_t* stage, std::uint8_t* rgb, int tid,
                                          std::int32_t* work, bool fast) {
  using K = Cfg<L, C>;
  if constexpr (K::kPlanar) {
    convert_tile<L, C, kSmem>(p, tl, stage, rgb, tid, K::kThreads);
    consumer_sync<kPartial>(K::kThreads);
    if constexpr (K::kFast420) {
      if (fast) {
        if (tid < K::kYBlocks * 8) pass1_fast420<L, C, true>(p, tl, rgb, tid, work);
        return;
      }
    }
    pass1<L, C, true>(p, tl, rgb, tid, work);
    return;
  }
  if constexpr (K::kFast420) {
    if (fast) {
      if (tid < K::kYBlocks * 8) pass1_fast420<L, C, kSmem>(p, tl, stage, tid, work);
      return;
    }
  }
  pass1<L, C, kSmem>(p, tl, stage, tid, work);
}

template <int L, int C, bool kPartial>
__device__ __forceinline__ void finish_any(const KernelParams& p, const Tile& tl, int tid,
                                           std::int32_t* work, std::int16_t* outq,
                                           const DeviceTables& tab, bool fast) {
  using K = Cfg<L, C>;
  if constexpr (K::kFast420) {
    if (fast) {
      finish_fast420<L, C>(p, tl, tid, work, outq, tab);
      return;
    }
  }
  finish_tile<L, C, kPartial>(p, tl, tid, work, outq, tab);
}

template <int L, int C>
__device__ __forceinline__ std::int32_t* work_of(std::int32_t* work, int iter) {
  using K = Cfg<L, C>;
  return K::kFast420 ? work + (iter & 1) * K::kWorkInts : work;
}

struct SmemPtrs {
  std::uint8_t* stages;
  std::uint8_t* rgb;  // planar input only
  std::int32_t* work;
  std::int16_t* outq;
  DeviceTables* tab;
};

template <int L, int C>
__device__ __forceinline__ SmemPtrs carve_smem(std::uint8_t* smem, int stages) {
  using K = Cfg<L, C>;
  SmemPtrs s;
  const int base = stages * K::kStageBytes + K::kRgbBytes;
  s.stages = smem;
  s.rgb = smem + stages * K::kStageBytes;
  s.work = reinterpret_cast<std::int32_t*>(smem + base);
  s.outq = reinterpret_cast<std::int16_t*>(smem + base + K::kWorkBytes);
  s.tab = reinterpret_cast<DeviceTables*>(smem + base + K::kWorkBytes + K::kOutBytes);
  return s;
}

__device__ __forceinline__ void load_tables(const DeviceTables* g, DeviceTables* s, int tid,
                                            int nthreads) {
  static_assert(sizeof(DeviceTables) % 4 == 0, "table copy uses words");
  const std::uint32_t* src = reinterpret_cast<const std::uint32_t*>(g);
  std::uint32_t* dst = reinterpret_cast<std::uint32_t*>(s);
  for (int i = tid; i < int(sizeof(DeviceTables) / 4); i += nthreads) dst[i] = src[i];
}

extern __shared__ __align__(16) std::uint8_t g_smem[];

// ---------------------------------------------------------------------------------------------
// Variant `direct`: no staging. Pass 1 reads pixels from global memory (byte loads through the
// read-only cache). Threads: kThreads; shared: work + outq + tables (no stages).
// ---------------------------------------------------------------------------------------------
template <int L, int C>
__global__ void MJPEG_GPU_BOUNDS(Cfg<L, C>::kThreads)
    transform_direct(const KernelParams p) {
  using K = Cfg<L, C>;
  const SmemPtrs s = carve_smem<L, C>(g_smem, 0);
  const int tid = threadIdx.x;
  load_tables(p.tables, s.tab, tid, K::kThreads);
  __syncthreads();
  int iter = 0;
  for (int t = blockIdx.x; t < p.num_tiles; t += gridDim.x, ++iter) {
    const Tile tl = make_tile(p, t, K::kTileW, K::kTileH);
    const bool fast = tile_is_interior<L, C>(p, tl);
    std::int32_t* work = work_of<L, C>(s.work, iter);
    pass1_any<L, C, false>(p, tl, nullptr, s.rgb, tid, work, fast);
    __syncthreads();
    finish_any<L, C, false>(p, tl, tid, work, s.outq, *s.tab, fast);
  }
}

// ---------------------------------------------------------------------------------------------
// Variant `pipeline`: unified block-scoped cuda::pipeline with S stages; every thread copies
// (16-byte cuda::memcpy_async, aligned_size_t<16>) and computes. Prologue fills S stages;
// each iteration waits for the oldest stage, runs pass 1 from it, releases it after the
// barrier and immediately refills it with the tile S iterations ahead, then finishes the tile
// while that copy is in flight. Threads: kThreads; shared: S stages + work + outq + tables.
// At the end the pipeline is drained (the empty stages committed past the last tile are waited
// for), so every committed stage is consumed.
// ---------------------------------------------------------------------------------------------
template <int L, int C, int S>
__global__ void MJPEG_GPU_BOUNDS(Cfg<L, C>::kThreads)
    transform_pipeline(const KernelParams p) {
  using K = Cfg<L, C>;
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, S> state;
  const SmemPtrs s = carve_smem<L, C>(g_smem, S);
  const int tid = threadIdx.x;
  auto block = cg::this_thread_block();
  auto pipe = cuda::make_pipeline(block, &state);
  load_tables(p.tables, s.tab, tid, K::kThreads);

  auto copy16 = [&](std::uint8_t* d, const std::uint8_t* g) {
    cuda::memcpy_async(d, g, cuda::aligned_size_t<16>(16), pipe);
  };
  auto copy1 = [&](std::uint8_t* d, const std::uint8_t* g) {
    cuda::memcpy_async(d, g, std::size_t{1}, pipe);
  };
  int fetch = blockIdx.x;
  int committed = 0;  // stages committed and not yet consumed
#pragma unroll
  for (int st = 0; st < S; ++st) {
    pipe.producer_acquire();
    if (fetch < p.num_tiles)
      stage_tile<L, C>(p, make_tile(p, fetch, K::kTileW, K::kTileH), s.stages + st * K::kStageBytes,
                       tid, K::kThreads, copy16, copy1);
    pipe.producer_commit();
    ++committed;
    fetch += gridDim.x;
  }
  __syncthreads();  // tables visible
  int st = 0;
  int iter = 0;
  for (int t = blockIdx.x; t < p.num_tiles; t += gridDim.x, ++iter) {
    const Tile tl = make_tile(p, t, K::kTileW, K::kTileH);
    const bool fast = tile_is_interior<L, C>(p, tl);
    std::int32_t* work = work_of<L, C>(s.work, iter);
    pipe.consumer_wait();
    pass1_any<L, C, true>(p, tl, s.stages + st * K::kStageBytes, s.rgb, tid, work, fast);
    __syncthreads();
    pipe.consumer_release();
    --committed;
    pipe.producer_acquire();
    if (fetch < p.num_tiles)
      stage_tile<L, C>(p, make_tile(p, fetch, K::kTileW, K::kTileH), s.stages + st * K::kStageBytes,
                       tid, K::kThreads, copy16, copy1);
    pipe.producer_commit();
    ++committed;
    fetch += gridDim.x;
    finish_any<L, C, false>(p, tl, tid, work, s.outq, *s.tab, fast);
    st = st + 1 == S ? 0 : st + 1;
  }
  for (; committed > 0; --committed) {  // drain the (empty) stages still in the pipeline
    pipe.consumer_wait();
    pipe.consumer_release();
  }
}

// ---------------------------------------------------------------------------------------------
// Variant `partitioned`: block-scoped cuda::pipeline with roles. Warps 0..kThreads/32-1 are
// consumers (same mapping as above); the last warp (32 threads) is the producer: it acquires
// stage after stage, issues the 16-byte copies of tile after tile and commits, running up to S
// tiles ahead. Consumers synchronise among themselves with named barrier 1 (the producer warp
// never joins it). Threads: kThreads + 32; shared: as `pipeline`.
// ---------------------------------------------------------------------------------------------
template <int L, int C, int S>
__global__ void MJPEG_GPU_BOUNDS(Cfg<L, C>::kThreads + Cfg<L, C>::kProducerThreads)
    transform_partitioned(const KernelParams p) {
  using K = Cfg<L, C>;
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, S> state;
  const SmemPtrs s = carve_smem<L, C>(g_smem, S);
  const int tid = threadIdx.x;
  const bool producer = tid >= K::kThreads;
  auto block = cg::this_thread_block();
  load_tables(p.tables, s.tab, tid, K::kThreads + K::kProducerThreads);
  __syncthreads();
  const auto role = producer ? cuda::pipeline_role::producer : cuda::pipeline_role::consumer;
  auto pipe = cuda::make_pipeline(block, &state, role);
  if (producer) {
    const int pi = tid - K::kThreads;
    auto copy16 = [&](std::uint8_t* d, const std::uint8_t* g) {
      cuda::memcpy_async(d, g, cuda::aligned_size_t<16>(16), pipe);
    };
    auto copy1 = [&](std::uint8_t* d, const std::uint8_t* g) {
      cuda::memcpy_async(d, g, std::size_t{1}, pipe);
    };
    int st = 0;
    for (int t = blockIdx.x; t < p.num_tiles; t += gridDim.x) {
      pipe.producer_acquire();
      stage_tile<L, C>(p, make_tile(p, t, K::kTileW, K::kTileH), s.stages + st * K::kStageBytes,
                       pi, K::kProducerThreads, copy16, copy1);
      pipe.producer_commit();
      st = st + 1 == S ? 0 : st + 1;
    }
    return;
  }
  int st = 0;
  int iter = 0;
  for (int t = blockIdx.x; t < p.num_tiles; t += gridDim.x, ++iter) {
    const Tile tl = make_tile(p, t, K::kTileW, K::kTileH);
    const bool fast = tile_is_interior<L, C>(p, tl);
    std::int32_t* work = work_of<L, C>(s.work, iter);
    pipe.consumer_wait();
    pass1_any<L, C, true, true>(p, tl, s.stages + st * K::kStageBytes, s.rgb, tid, work, fast);
    consumer_sync<true>(K::kThreads);
    pipe.consumer_release();
    finish_any<L, C, true>(p, tl, tid, work, s.outq, *s.tab, fast);
    st = st + 1 == S ? 0 : st + 1;
  }
}

// ---------------------------------------------------------------------------------------------
// Variant `primitives`: thread-scope pipeline primitives. Every thread issues its 16-byte
// __pipeline_memcpy_async copies for a stage and commits one batch per stage (also when it has
// nothing to copy, so batch counts agree); tail bytes are plain loads/stores. Before pass 1 a
// thread waits with __pipeline_wait_prior(S-1) for its own oldest batch, and __syncthreads makes
// every thread's copies visible to all. Threads: kThreads; shared: as `pipeline`.
// ---------------------------------------------------------------------------------------------
template <int L, int C, int S>
__global__ void MJPEG_GPU_BOUNDS(Cfg<L, C>::kThreads)
    transform_primitives(const KernelParams p) {
  using K = Cfg<L, C>;
  const SmemPtrs s = carve_smem<L, C>(g_smem, S);
  const int tid = threadIdx.x;
  load_tables(p.tables, s.tab, tid, K::kThreads);
  auto copy16 = [](std::uint8_t* d, const std::uint8_t* g) { __pipeline_memcpy_async(d, g, 16); };
  auto copy1 = [](std::uint8_t* d, const std::uint8_t* g) { *d = *g; };
  int fetch = blockIdx.x;
#pragma unroll
  for (int st = 0; st < S; ++st) {
    if (fetch < p.num_tiles)
      stage_tile<L, C>(p, make_tile(p, fetch, K::kTileW, K::kTileH), s.stages + st * K::kStageBytes,
                       tid, K::kThreads, copy16, copy1);
    __pipeline_commit();
    fetch += gridDim.x;
  }
  int st = 0;
  int iter = 0;
  for (int t = blockIdx.x; t < p.num_tiles; t += gridDim.x, ++iter) {
    const Tile tl = make_tile(p, t, K::kTileW, K::kTileH);
    const bool fast = tile_is_interior<L, C>(p, tl);
    std::int32_t* work = work_of<L, C>(s.work, iter);
    __pipeline_wait_prior(S - 1);
    __syncthreads();
    pass1_any<L, C, true>(p, tl, s.stages + st * K::kStageBytes, s.rgb, tid, work, fast);
    __syncthreads();
    if (fetch < p.num_tiles)
      stage_tile<L, C>(p, make_tile(p, fetch, K::kTileW, K::kTileH), s.stages + st * K::kStageBytes,
                       tid, K::kThreads, copy16, copy1);
    __pipeline_commit();
    fetch += gridDim.x;
    finish_any<L, C, false>(p, tl, tid, work, s.outq, *s.tab, fast);
    st = st + 1 == S ? 0 : st + 1;
  }
  __pipeline_wait_prior(0);
}

template <int L, int C>
void fill_kernel_table(KernelTable& t) {
  using K = Cfg<L, C>;
  auto set = [&](int v, int s, const void* fn, int threads, int stages) {
    t.entry[v][s - 1] = KernelEntry{fn, threads, static_cast<std::size_t>(K::smem_bytes(stages)),
                                    K::kTileW, K::kTileH};
  };
  for (int s = 1; s <= 4; ++s)
    set(kDirect, s, reinterpret_cast<const void*>(&transform_direct<L, C>), K::kThreads, 0);
  set(kPipeline, 1, reinterpret_cast<const void*>(&transform_pipeline<L, C, 1>), K::kThreads, 1);
  set(kPipeline, 2, reinterpret_cast<const void*>(&transform_pipeline<L, C, 2>), K::kThreads, 2);
  set(kPipeline, 3, reinterpret_cast<const void*>(&transform_pipeline<L, C, 3>), K::kThreads, 3);
  set(kPipeline, 4, reinterpret_cast<const void*>(&transform_pipeline<L, C, 4>), K::kThreads, 4);
  constexpr int kPT = K::kThreads + K::kProducerThreads;
  set(kPartitioned, 1, reinterpret_cast<const void*>(&transform_partitioned<L, C, 1>), kPT, 1);
  set(kPartitioned, 2, reinterpret_cast<const void*>(&transform_partitioned<L, C, 2>), kPT, 2);
  set(kPartitioned, 3, reinterpret_cast<const void*>(&transform_partitioned<L, C, 3>), kPT, 3);
  set(kPartitioned, 4, reinterpret_cast<const void*>(&transform_partitioned<L, C, 4>), kPT, 4);
  set(kPrimitives, 1, reinterpret_cast<const void*>(&transform_primitives<L, C, 1>), K::kThreads, 1);
  set(kPrimitives, 2, reinterpret_cast<const void*>(&transform_primitives<L, C, 2>), K::kThreads, 2);
  set(kPrimitives, 3, reinterpret_cast<const void*>(&transform_primitives<L, C, 3>), K::kThreads, 3);
  set(kPrimitives, 4, reinterpret_cast<const void*>(&transform_primitives<L, C, 4>), K::kThreads, 4);
}

}  // namespace mjpeg::gpu::detail
