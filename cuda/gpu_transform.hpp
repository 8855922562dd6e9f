// Plain C++ API of the GPU forward transform (no CUDA headers needed to include it).
//
//   TransformPlan plan(geometry, tables, PixelFormat::rgb24);   // once per geometry
//   launch_transform(plan, d_pixels, pitch, d_coeffs, KernelVariant::pipeline, 2, stream);
//
//   TransformPlan plan(geometry, tables, planar_format);        // planar YCbCr input
//   launch_transform_planar(plan, d_planes, pitches, d_coeffs, KernelVariant::pipeline, 2, stream);
//
// d_pixels: one frame of packed rgb24 (or gray8) in device memory, `pitch` bytes per row.
// d_planes: the Y, Cb, Cr planes of one planar frame in device memory (Cb, Cr unused for
// mono), rows pitches[c] bytes apart; chroma planes of the format's size (ceil(W/2) x ... ).
// d_coeffs: geometry.coefficient_count() int16 in device memory; on completion it holds exactly
// what transform_cpu writes (real blocks, dummy blocks, zigzag order) for the same frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/planar_format.hpp"
#include "core/quant.hpp"
#include "core/geometry.hpp"
#include "mjpeg/options.hpp"
#include "mjpeg/video.hpp"
#include "stream_handle.hpp"

namespace mjpeg::gpu {

/// The kernel variants (mjpeg::KernelVariant, video.hpp), all of identical output, in the
/// order of the kernel table's columns (transform_params.hpp's VariantId, checked there).
inline constexpr KernelVariant kAllVariants[] = {KernelVariant::direct, KernelVariant::pipeline,
                                                 KernelVariant::partitioned,
                                                 KernelVariant::primitives};
inline constexpr int kMaxStages = 4;

/// Whether this build holds code the current device can run: "" when it does, else the CUDA
/// error (cudaErrorNoKernelImageForDevice where the build has neither the device's code nor PTX
/// it can compile). Makes CUDA calls on the current device.
std::string kernel_image_problem();
/// The CUDA architectures this build was compiled for (CMAKE_CUDA_ARCHITECTURES, e.g.
/// "80-real 86-real 89-real 90-real 90-virtual").
const char* built_architectures();

/// Resource use of one kernel instance (cudaFuncGetAttributes + launch shape).
struct KernelInfo {
  int registers = 0;
  std::size_t static_smem = 0;
  std::size_t dynamic_smem = 0;
  int threads = 0;
  int grid = 0;
  int blocks_per_sm = 0;
};

/// Everything fixed for one geometry: the quantization divisors on the device, kernel
/// attributes, launch shapes. Create once (it allocates), launch many times (nothing allocated).
class TransformPlan {
 public:
  TransformPlan(const FrameGeometry& geometry, const QuantTables& tables, PixelFormat input);
  /// Planar YCbCr input of `input`'s chroma layout and colour conversion (any output sampling).
  TransformPlan(const FrameGeometry& geometry, const QuantTables& tables,
                const PlanarFormat& input);
  ~TransformPlan();
  TransformPlan(TransformPlan&&) noexcept;
  TransformPlan& operator=(TransformPlan&&) noexcept;
  TransformPlan(const TransformPlan&) = delete;
  TransformPlan& operator=(const TransformPlan&) = delete;

  const FrameGeometry& geometry() const;
  PixelFormat input_format() const;  ///< packed input (rgb24 for planar plans)
  bool planar() const;
  KernelInfo kernel_info(KernelVariant v, int stages) const;

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  TransformPlan(const FrameGeometry& geometry, const QuantTables& tables, PixelFormat packed,
                const PlanarFormat& planar);
  std::unique_ptr<Impl> impl_;
};

/// Enqueues the transform of one frame on `stream` (a cudaStream_t; nullptr = default stream).
/// stages: 1..4 (ignored by KernelVariant::direct). Throws UsageError for bad arguments and
/// mjpeg::Error for CUDA failures (launch errors are checked right after the launch).
void launch_transform(const TransformPlan& plan, const std::uint8_t* d_pixels, std::size_t pitch,
                      std::int16_t* d_coeffs, KernelVariant variant, int stages, StreamHandle stream);
/// The same for a planar plan: d_planes[0..2] Y, Cb, Cr (Cb, Cr may be null for mono).
void launch_transform_planar(const TransformPlan& plan, const std::uint8_t* const d_planes[3],
                             const std::size_t pitches[3], std::int16_t* d_coeffs,
                             KernelVariant variant, int stages, StreamHandle stream);

}  // namespace mjpeg::gpu
