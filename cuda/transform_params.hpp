// Kernel parameters of the transform kernels: plain data shared by the launcher (.cu host code)
// and the kernels.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/jpeg_math.hpp"

namespace mjpeg::gpu::detail {

/// Device-resident constant tables, copied into shared memory by every block.
struct DeviceTables {
  math::QuantDivisor divisor[3][64];  ///< natural order, per component: [0] Y/gray, [1] Cb, [2] Cr
  std::uint8_t zigzag_of_natural[64];  ///< inverse of kZigzagToNatural
};

struct CompParams {
  int height;            ///< component rows (ceil(H*v/max_v))
  int width_in_blocks;   ///< real block columns
  int height_in_blocks;  ///< real block rows
  int blocks_w;          ///< block columns incl. dummies
  long long block_offset;
};

/// Planar YCbCr input (kernels with C == kPlanarInput): the Y plane is KernelParams::pixels /
/// pitch; each pixel's Y, Cb, Cr (nearest chroma sample) become RGB with math::ycc_to_rgb
/// before the usual rgb_to_y/cb/cr.
struct PlanarParams {
  const std::uint8_t* cb;
  const std::uint8_t* cr;
  std::size_t chroma_pitch;
  int shift_x, shift_y;              ///< log2 of the pixels per chroma sample
  int chroma_width, chroma_height;   ///< chroma plane size: ceil(W / 2^shift_x) x ...
  int has_chroma;                    ///< 0: mono (Cb = Cr = 128); cb, cr unused
  int chroma_aligned;                ///< cb, cr and chroma_pitch are multiples of 16
  math::YccToRgb ycc;
};

/// The input template parameter C of the kernels: bytes per pixel of packed input (3 rgb24,
/// 1 gray8), or kPlanarInput for planar YCbCr.
constexpr int kPlanarInput = 0;

struct KernelParams {
  const std::uint8_t* pixels;  ///< packed pixels, or the Y plane of planar input
  std::size_t pitch;
  std::int16_t* coeffs;
  const DeviceTables* tables;
  int width, height;
  int mcus_x;      ///< MCU columns (gray: block columns)
  int tiles_x;     ///< tiles per band
  int num_tiles;   ///< tiles_x * bands
  int aligned;     ///< pixels and pitch are both multiples of 16
  int stages;      ///< staged variants: pipeline stages 1..kMaxKernelStages of this launch
  CompParams comp[3];
  PlanarParams planar;  ///< planar input only
};

enum Layout : int { kL444 = 0, kL422 = 1, kL420 = 2, kLGray = 3 };
enum VariantId : int { kDirect = 0, kPipeline = 1, kPartitioned = 2, kPrimitives = 3 };
constexpr int kVariantCount = 4;
constexpr int kMaxKernelStages = 4;  ///< pipeline stages 1..4 (gpu::kMaxStages)

/// One kernel instance: entry point and launch shape.
struct KernelEntry {
  const void* fn = nullptr;
  int threads = 0;
  std::size_t smem = 0;  ///< dynamic shared memory bytes
  int tile_w = 0, tile_h = 0;
};
/// [variant][stages - 1]: a variant has one kernel for every stage count (KernelParams::stages);
/// the entries differ in shared memory, which follows the stage count.
struct KernelTable {
  KernelEntry entry[kVariantCount][kMaxKernelStages];
};

// Every configuration the kernels are compiled for, X(layout L, input C, translation unit):
// sampling layout, bytes per packed input pixel or kPlanarInput, and which transform_tu<N>.cu
// instantiates its kernels. One unit: every translation unit pays about 2.5 s of CPU for the
// CUDA headers and host stubs before its first kernel, which is more than a second unit saves
// in wall time on a build machine with few cores (a planar configuration costs about twice a
// packed one, a packed one about 1 s; for more units, balance them by that measure).
#define MJPEG_TRANSFORM_CONFIGS(X) \
  X(kL444, 3, 0)                   \
  X(kL422, 3, 0)                   \
  X(kL420, 3, 0)                   \
  X(kLGray, 3, 0)                  \
  X(kLGray, 1, 0)                  \
  X(kL444, kPlanarInput, 0)        \
  X(kL422, kPlanarInput, 0)        \
  X(kL420, kPlanarInput, 0)        \
  X(kLGray, kPlanarInput, 0)
constexpr int kTransformUnits = 1;  ///< transform_tu0.cu

/// Fills `t` with the kernels of (layout, input) when translation unit Tu instantiates that
/// configuration; false otherwise (transform_kernels.cuh).
template <int Tu>
bool kernel_table_in_unit(int layout, int input, KernelTable& t);

}  // namespace mjpeg::gpu::detail
