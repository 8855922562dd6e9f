// Transform kernels, part 2 of 6: tile staging, the copy of a tile's input bytes from global
// into shared memory (the staged variants; `direct` reads global memory instead).
//
// A stage holds kTileH rows of kRowStride bytes per plane. Each row keeps the tile's bytes of
// one image row at byte offset (row address mod 16), so global and shared addresses agree mod
// 16 and the 16-byte copies line up for any pitch. Planar input: three planes per stage (Y, then
// the tile's Cb rows and its Cr rows: kTileH >> shift_y rows of kTileW >> shift_x bytes).
//
// How one 16-byte chunk or one byte is copied is the Copy policy of the variant (a class with
// chunk(dst, src) and byte(dst, src): cuda::memcpy_async on a block-scoped pipeline, or
// __pipeline_memcpy_async plus plain byte copies; see transform_variants.cuh).
#pragma once

#include <cstddef>
#include <cstdint>

#include "transform_tile.cuh"

namespace mjpeg::gpu::detail {

// Copies `rows` rows of `len` bytes of one plane (row r at src0 + r * pitch) to stage rows
// kRowStride apart, each at its (row address mod 16) offset. Threads pi, pi + np, ... share the
// work. Bulk: 16-byte chunks (global and shared addresses both 16-aligned); tail path: single
// bytes for the unaligned head/tail of a row (unaligned pitch) and the partial last chunk (edge
// tile). kChunks: the chunks of a full row (len == 16 * kChunks on an aligned plane takes the
// bulk path only).
template <int kChunks, int kRowStride, class Copy>
__device__ __forceinline__ void stage_rows(const std::uint8_t* src0, std::size_t pitch, int rows,
                                           int len, bool aligned, std::uint8_t* stage, int pi,
                                           int np, Copy& copy) {
  if (aligned && len == kChunks * kCopyBytes) {  // every row: whole aligned chunks
    for (int it = pi; it < rows * kChunks; it += np) {
      const int r = it / kChunks;
      const int j = it - r * kChunks;
      copy.chunk(stage + r * kRowStride + j * kCopyBytes, src0 + r * pitch + j * kCopyBytes);
    }
    return;
  }
  constexpr int kItems = kChunks + 2 * kCopyBytes;  // chunks, then up to 15 head + 15 tail bytes
  for (int it = pi; it < rows * kItems; it += np) {
    const int r = it / kItems;
    const int j = it - r * kItems;
    const std::uint8_t* src = src0 + r * pitch;
    const int sh = static_cast<int>(reinterpret_cast<std::uintptr_t>(src) & (kCopyBytes - 1));
    const int head = min((kCopyBytes - sh) & (kCopyBytes - 1), len);
    const int mid = (len - head) >> kCopyShift;
    const int tail = len - head - mid * kCopyBytes;
    std::uint8_t* dst = stage + r * kRowStride + sh;
    if (j < mid) {
      copy.chunk(dst + head + j * kCopyBytes, src + head + j * kCopyBytes);
    } else {
      const int b = j - mid;
      if (b < head) {
        copy.byte(dst + b, src + b);
      } else if (b - head < tail) {
        const int o = head + mid * kCopyBytes + (b - head);
        copy.byte(dst + o, src + o);
      }
    }
  }
}

// Copies tile `tl`'s in-frame bytes (rows y0.. < H, columns x0.. < W) into `stage`; planar
// input: the Y rows, then the chroma samples the tile's pixels use.
template <int L, int C, class Copy>
__device__ __forceinline__ void stage_tile(const KernelParams& p, const Tile& tl,
                                           std::uint8_t* stage, int pi, int np, Copy& copy) {
  using K = TileConfig<L, C>;
  const int rows = min(K::kTileH, p.height - tl.y0);
  const int cols = min(K::kTileW, p.width - tl.x0);
  constexpr int kBpp = K::kPlanar ? 1 : C;  // bytes per pixel in the (Y) plane
  const std::uint8_t* src0 = p.pixels + static_cast<std::size_t>(tl.y0) * p.pitch +
                             static_cast<std::size_t>(tl.x0) * kBpp;
  stage_rows<K::kChunks, K::kRowStride>(src0, p.pitch, rows, cols * kBpp, p.aligned != 0, stage,
                                        pi, np, copy);
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
                                                stage + K::kPlaneBytes, pi, np, copy);
      stage_rows<K::kChunks / 2, K::kRowStride>(q.cr + off, q.chroma_pitch, crows, ccols, al,
                                                stage + 2 * K::kPlaneBytes, pi, np, copy);
    } else {
      stage_rows<K::kChunks, K::kRowStride>(q.cb + off, q.chroma_pitch, crows, ccols, al,
                                            stage + K::kPlaneBytes, pi, np, copy);
      stage_rows<K::kChunks, K::kRowStride>(q.cr + off, q.chroma_pitch, crows, ccols, al,
                                            stage + 2 * K::kPlaneBytes, pi, np, copy);
    }
  }
}

}  // namespace mjpeg::gpu::detail
