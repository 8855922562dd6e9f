// Plain C++ API of the GPU forward transform (no CUDA headers needed to include it).
//
//   TransformPlan plan(geometry, tables, PixelFormat::rgb24);   // once per geometry
//   launch_transform(plan, d_pixels, pitch, d_coeffs, Variant::pipeline, 2, stream);
//
//   TransformPlan plan(geometry, tables, planar_format);        // planar YCbCr input
//   launch_transform_planar(plan, d_planes, pitches, d_coeffs, Variant::pipeline, 2, stream);
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

namespace mjpeg::gpu {

/// How pixel tiles reach shared memory; all variants give identical output.
enum class Variant {
  direct,       ///< no staging: every thread reads its pixels from global memory
  pipeline,     ///< unified block-scoped cuda::pipeline, S stages, all threads copy and compute
  partitioned,  ///< block-scoped cuda::pipeline, one producer warp + consumer warps (pipeline_role)
  primitives,   ///< __pipeline_memcpy_async / __pipeline_commit / __pipeline_wait_prior, S stages
};
inline constexpr Variant kAllVariants[] = {Variant::direct, Variant::pipeline,
                                           Variant::partitioned, Variant::primitives};
inline constexpr int kMaxStages = 4;

const char* to_string(Variant v);
/// "direct", "pipeline", "partitioned", "primitives"; throws UsageError otherwise.
Variant parse_variant(const std::string& text);

/// Number of CUDA devices (0 when none or when the driver is unusable; `reason` says why).
int device_count(std::string* reason = nullptr);
/// True when device 0 can run the kernels (usable_device(0, reason)).
bool usable_device(std::string* reason = nullptr);
/// True when `device` can run the kernels: present, compute capability >= 8.0 (cp.async), not
/// in the prohibited compute mode, and a context can be made on it (a device held by another
/// process in exclusive mode cannot); otherwise false and `reason` holds a sentence for the
/// user that names the device. Makes CUDA calls (the first one on a device creates its
/// context); leaves the calling thread's current device as it was.
bool usable_device(int device, std::string* reason);

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
  KernelInfo kernel_info(Variant v, int stages) const;

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  TransformPlan(const FrameGeometry& geometry, const QuantTables& tables, PixelFormat packed,
                const PlanarFormat& planar);
  std::unique_ptr<Impl> impl_;
};

/// Enqueues the transform of one frame on `stream` (a cudaStream_t; nullptr = default stream).
/// stages: 1..4 (ignored by Variant::direct). Throws UsageError for bad arguments and
/// mjpeg::Error for CUDA failures (launch errors are checked right after the launch).
void launch_transform(const TransformPlan& plan, const std::uint8_t* d_pixels, std::size_t pitch,
                      std::int16_t* d_coeffs, Variant variant, int stages, void* stream);
/// The same for a planar plan: d_planes[0..2] Y, Cb, Cr (Cb, Cr may be null for mono).
void launch_transform_planar(const TransformPlan& plan, const std::uint8_t* const d_planes[3],
                             const std::size_t pitches[3], std::int16_t* d_coeffs,
                             Variant variant, int stages, void* stream);

/// Page-locks an existing host range (cudaHostRegister, portable: pinned for every device's
/// context, so that several stream buffers upload from it) so that copies from it run at full
/// PCIe speed and asynchronously, until destroyed (cudaHostUnregister). Move-only. Throws
/// mjpeg::Error when the range cannot be registered.
class HostPin {
 public:
  HostPin() = default;
  HostPin(const void* data, std::size_t bytes);
  ~HostPin();
  HostPin(HostPin&& other) noexcept;
  HostPin& operator=(HostPin&& other) noexcept;
  HostPin(const HostPin&) = delete;
  HostPin& operator=(const HostPin&) = delete;

 private:
  void* data_ = nullptr;
};

}  // namespace mjpeg::gpu
