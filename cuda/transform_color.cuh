// Transform kernels, part 3 of 6: pixels to samples. Fetching a run of pixels (from a stage or
// from global memory), colour conversion (math::rgb_to_y/cb/cr), chroma downsampling
// (math::downsample_*) with libjpeg's edge replication, and the planar YCbCr input path (the
// tile made RGB first, math::ycc_to_rgb). The arithmetic itself is all in jpeg_math.hpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "transform_tile.cuh"

namespace mjpeg::gpu::detail {

// NPIX consecutive pixels (C bytes each) starting at local column lx of a row, packed
// little-endian into 32-bit words. `fast`: all NPIX columns are inside the frame; otherwise
// columns clamp to the last one (full-resolution right-edge replication).
// kSmem: `row` points into a stage (word loads + funnel shift); else into global memory.
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

// Planar input: the tile's in-frame pixels made RGB into `rgb` (kTileH rows of kRgbRowStride
// bytes, row r at r * kRgbRowStride, no shift): each pixel's Y byte and the Cb, Cr bytes of its
// chroma sample (mono: Cb = Cr = 128) through math::ycc_to_rgb. The tile's x0 and y0 are even,
// so local column c uses local chroma column c >> shift_x. A thread converts groups of 4 pixels
// (three 32-bit stores); in the last group of an edge tile, columns past the frame repeat its
// last column (pass 1 clamps to it anyway).
// kSmem: from the stage's planes; else straight from global memory (variant direct).
template <int L, int C, bool kSmem>
__device__ __forceinline__ void convert_tile(const KernelParams& p, const Tile& tl,
                                             const std::uint8_t* stage, std::uint8_t* rgb,
                                             int tid, int nthreads) {
  using K = TileConfig<L, C>;
  constexpr int kGroupPixels = 4;  // pixels per thread step: 12 RGB bytes, three words
  const PlanarParams& q = p.planar;
  const int rows = min(K::kTileH, p.height - tl.y0);
  const int cols = min(K::kTileW, p.width - tl.x0);
  const int groups = (cols + kGroupPixels - 1) >> 2;
  constexpr int kGroups = K::kTileW / kGroupPixels;  // per full row
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
    for (int i = 0; i < kGroupPixels; ++i) {
      const int col = min(kGroupPixels * grp + i, cols - 1);
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
    std::uint32_t* dst = reinterpret_cast<std::uint32_t*>(rgb + r * K::kRgbRowStride +
                                                          3 * kGroupPixels * grp);
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
                                          std::uint32_t (&w)[NPIX * TileConfig<L, C>::kPix / 4]) {
  using K = TileConfig<L, C>;
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

// The 8 level-shifted samples (minus 128) of row r of tile block `pos`: luma/gray straight from
// the pixels (rows clamp at H-1, columns at W-1); chroma converted and downsampled, its rows
// clamped in component space and then mapped to full-resolution rows.
template <int L, int C, bool kSmem>
__device__ __forceinline__ void row_samples(const KernelParams& p, const Tile& tl,
                                            const std::uint8_t* stage, const BlockPos<L, C>& pos,
                                            int r, std::int32_t (&d)[kDctSize]) {
  using K = TileConfig<L, C>;
  constexpr int PB = K::kPix;
  const int comp = pos.comp;
  if (comp == 0) {
    const int lr = pos.bl * kDctSize + r;
    const int lx = pos.k * kDctSize;
    std::uint32_t w[kDctSize * PB / 4];
    fetch_run<kDctSize, L, C, kSmem>(p, tl, stage, lr, lx, tl.x0 + lx + kDctSize <= p.width, w);
#pragma unroll
    for (int i = 0; i < kDctSize; ++i) d[i] = pixel_value<PB>(w, i, 0) - 128;
  } else if constexpr (K::kComps == 3) {
    constexpr int FH = K::kMaxH, FV = K::kMaxV;
    const int sy = min(tl.band * kDctSize + r, comp_params(p, comp).height - 1);
    const int ra = sy * FV - tl.y0;
    const int sx0 = tl.tx * K::kMcusPerTile * kDctSize + pos.k * kDctSize;  // first column
    const int lx = pos.k * kDctSize * FH;
    const bool fast = tl.x0 + lx + kDctSize * FH <= p.width;
    std::uint32_t wa[kDctSize * FH * PB / 4];
    fetch_run<kDctSize * FH, L, C, kSmem>(p, tl, stage, ra, lx, fast, wa);
    if constexpr (FH == 1) {
#pragma unroll
      for (int i = 0; i < kDctSize; ++i) d[i] = pixel_value<PB>(wa, i, comp) - 128;
    } else if constexpr (FV == 1) {
#pragma unroll
      for (int i = 0; i < kDctSize; ++i)
        d[i] = math::downsample_h2v1(pixel_value<PB>(wa, 2 * i, comp),
                                     pixel_value<PB>(wa, 2 * i + 1, comp), sx0 + i) -
               128;
    } else {
      std::uint32_t wb[kDctSize * FH * PB / 4];
      fetch_run<kDctSize * FH, L, C, kSmem>(p, tl, stage, ra + 1, lx, fast, wb);
#pragma unroll
      for (int i = 0; i < kDctSize; ++i)
        d[i] = math::downsample_h2v2(
                   pixel_value<PB>(wa, 2 * i, comp), pixel_value<PB>(wa, 2 * i + 1, comp),
                   pixel_value<PB>(wb, 2 * i, comp), pixel_value<PB>(wb, 2 * i + 1, comp),
                   sx0 + i) -
               128;
    }
  }
}

// 4:2:0 fast path (interior tiles): thread (luma block tb, row r) converts its 8 pixels to Y,
// Cb and Cr once; y gets the 8 level-shifted luma samples. The 2x2 chroma sums: horizontal
// pairs in registers, the vertical partner (row r ^ 1 of the same block) by one shuffle; even
// rows write 4 Cb samples, odd rows 4 Cr samples (math::downsample_h2v2 of the sum, minus 128)
// straight into the chroma blocks' rows in `work`.
template <int L, int C, bool kSmem>
__device__ __forceinline__ void fast420_samples(const KernelParams& p, const Tile& tl,
                                                const std::uint8_t* stage, int tb, int r,
                                                std::int32_t* work, std::int32_t (&y)[kDctSize]) {
  using K = TileConfig<L, C>;
  static_assert(K::kFast420, "4:2:0 RGB or planar only");
  const int bl = tb / K::kYRun;
  const int k = tb - bl * K::kYRun;
  const int lr = bl * kDctSize + r;
  std::uint32_t w[kDctSize * 3 / 4];
  fetch_run<kDctSize, L, C, kSmem>(p, tl, stage, lr, k * kDctSize, true, w);  // no clamping
  int cb[kDctSize / 2], cr[kDctSize / 2];
#pragma unroll
  for (int i = 0; i < kDctSize; i += 2) {
    const int r0 = byte_at(w, 3 * i), g0 = byte_at(w, 3 * i + 1), b0 = byte_at(w, 3 * i + 2);
    const int r1 = byte_at(w, 3 * i + 3), g1 = byte_at(w, 3 * i + 4), b1 = byte_at(w, 3 * i + 5);
    y[i] = math::rgb_to_y(r0, g0, b0) - 128;
    y[i + 1] = math::rgb_to_y(r1, g1, b1) - 128;
    cb[i / 2] = math::rgb_to_cb(r0, g0, b0) + math::rgb_to_cb(r1, g1, b1);
    cr[i / 2] = math::rgb_to_cr(r0, g0, b0) + math::rgb_to_cr(r1, g1, b1);
  }
  // Even rows keep Cb and receive the partner's Cb; odd rows keep Cr.
  const bool odd = r & 1;
  int s[kDctSize / 2];
#pragma unroll
  for (int j = 0; j < kDctSize / 2; ++j) {
    const int give = odd ? cb[j] : cr[j];
    const int got = __shfl_xor_sync(0xFFFFFFFFu, give, 1);
    s[j] = (odd ? cr[j] : cb[j]) + got;
  }
  // Chroma block k / 2 of the tile, row bl * 4 + r / 2, columns (k & 1) * 4 ..
  const int ctb = K::kYBlocks + (odd ? K::kCBlocks : 0) + (k >> 1);
  const int crow = bl * (kDctSize / 2) + (r >> 1);
  std::int32_t* cdst = work + ctb * kWorkBlockInts + crow * kWorkRowStride + (k & 1) * 4;
#pragma unroll
  for (int j = 0; j < kDctSize / 2; ++j) cdst[j] = math::downsample_h2v2(s[j], 0, 0, 0, j) - 128;
}

}  // namespace mjpeg::gpu::detail
