// Frames that already lie in CUDA device memory (a hardware decoder's surfaces, a caller's own
// CUDA pipeline) written into a slot's device pixels in the planar layout the transform kernels
// read (core/planar_format.hpp: Y, Cb, Cr back to back, rows packed), with no host copy:
//   planar   8-bit Y, Cb, Cr planes at any pitch: three 2-D device-to-device copies;
//   nv12     8-bit Y plane + interleaved CbCr plane (4:2:0): a copy and one deinterleaving kernel;
//   p016     16-bit Y plane + interleaved CbCr plane (4:2:0), samples in the high bits (NVDEC's
//            10-bit and 12-bit output): one kernel per plane reducing to 8 bits as libswscale
//            reduces yuv420p10 to yuv420p (its unscaled planar copy with the ordered 8x8 dither;
//            luma of full-range sources with the other rounding libswscale uses there), so
//            that the CPU path (which has libswscale do it) and this one give the same planes.
// Plain C++ entry points (no CUDA types), so that callers without the CUDA headers (the NVDEC
// module, which loads the driver API itself) can use them; `stream` is a cudaStream_t.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/planar_format.hpp"
#include "stream_handle.hpp"

namespace mjpeg::gpu {

enum class DeviceLayout { planar, nv12, p016 };

/// A frame in device memory. planar: plane[0..2] (Y, Cb, Cr; mono: Y only) with the chroma
/// of `chroma`; nv12 / p016: plane[0] Y, plane[1] the interleaved CbCr pairs (4:2:0).
struct DeviceFrameIn {
  DeviceLayout layout = DeviceLayout::planar;
  PlanarChroma chroma = PlanarChroma::c420;
  int width = 0, height = 0;
  const void* plane[3] = {};
  std::size_t pitch[3] = {};
  int bit_depth = 10;       ///< p016: the significant bits (high-aligned in 16)
  bool full_range = false;  ///< p016: luma of a full-range source is rounded as libswscale does
};

/// Writes `in` into `dst` (device memory of the current device, planar_layout(width, height,
/// chroma).bytes) as work on `stream`. Throws mjpeg::Error on a CUDA error.
void write_planar(const DeviceFrameIn& in, std::uint8_t* dst, StreamHandle stream);

/// write_planar behind the work issued on `caller` (null: the legacy default stream) before the
/// call, with `caller` waiting for it: the caller may reuse the frame's
/// memory with work on `caller` at once.
void write_planar_ordered(const DeviceFrameIn& in, std::uint8_t* dst, StreamHandle stream,
                          StreamHandle caller);
/// The frame's planes into host memory at `dst` (planar_layout's layout), after the work on
/// `caller`; returns when they are there.
void download_planar(const DeviceFrameIn& in, std::uint8_t* dst, StreamHandle caller);

/// Copies `bytes` from device memory `src` to device memory `dst` as work on `stream`.
void copy_device(void* dst, const void* src, std::size_t bytes, StreamHandle stream);

/// The reduction of one 16-bit sample `v` (`depth` significant bits, low-aligned) at row `y`,
/// column `x` of its plane to 8 bits, as write_planar's p016 kernels and libswscale do it
/// (`shift_only`: chroma, and luma of limited-range sources). For tests and the CPU side.
std::uint8_t reduce_sample(unsigned v, int depth, int x, int y, bool shift_only);

}  // namespace mjpeg::gpu
