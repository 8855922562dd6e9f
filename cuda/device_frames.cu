// Device frames into the planar slot layout (device_frames.hpp).
#include "device_frames.hpp"

#include <cuda_runtime.h>

#include "cuda_check.hpp"
#include "cuda_raii.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg::gpu {
namespace {

// libswscale's ordered dither for its planar copy to 8 bits (swscale_unscaled.c, `dithers`),
// the tables of the shifts a decoder's output needs: 2 (10-bit samples) and 4 (12-bit). Row
// y of the plane uses row y & 7; every table repeats after 8 columns.
__host__ __device__ inline unsigned dither_of(int shift, int x, int y) {
  if (shift == 2) {
    // rows alternate {1, 2, 1, 2, ...} and {3, 0, 3, 0, ...}
    return (y & 1) ? ((x & 1) ? 0u : 3u) : ((x & 1) ? 2u : 1u);
  }
  // shift 4: four rows, each of period 4
  constexpr unsigned char t[4][4] = {{4, 8, 7, 11}, {12, 0, 15, 3}, {6, 10, 5, 9}, {14, 2, 13, 1}};
  return t[y & 3][x & 3];
}

__host__ __device__ inline unsigned char reduce(unsigned v, int depth, int x, int y,
                                                bool shift_only) {
  const int shift = depth - 8;
  const unsigned d = dither_of(shift, x, y);
  if (shift_only) {
    const unsigned t = (v + d) >> shift;
    return static_cast<unsigned char>(t - (t >> 8));
  }
  return static_cast<unsigned char>((v - (v >> 8) + d) >> shift);
}

/// One thread per output sample of the Y plane of a p016 frame.
__global__ void p016_luma(const unsigned char* src, std::size_t src_pitch, unsigned char* dst,
                          std::size_t dst_pitch, int width, int height, int depth,
                          bool shift_only) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  const auto* row = reinterpret_cast<const unsigned short*>(src + y * src_pitch);
  const unsigned v = row[x] >> (16 - depth);
  dst[y * dst_pitch + x] = reduce(v, depth, x, y, shift_only);
}

/// One thread per chroma pair of an interleaved CbCr plane: Cb and Cr to their own planes;
/// 16-bit samples (p016) reduced to 8 bits, 8-bit ones (nv12) copied.
template <bool Wide>
__global__ void split_chroma(const unsigned char* src, std::size_t src_pitch, unsigned char* cb,
                             unsigned char* cr, std::size_t dst_pitch, int width, int height,
                             int depth) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  if (Wide) {
    const auto* row = reinterpret_cast<const unsigned short*>(src + y * src_pitch);
    const unsigned u = row[2 * x] >> (16 - depth), v = row[2 * x + 1] >> (16 - depth);
    cb[y * dst_pitch + x] = reduce(u, depth, x, y, true);
    cr[y * dst_pitch + x] = reduce(v, depth, x, y, true);
  } else {
    const unsigned char* row = src + y * src_pitch;
    cb[y * dst_pitch + x] = row[2 * x];
    cr[y * dst_pitch + x] = row[2 * x + 1];
  }
}

dim3 grid_for(int w, int h, dim3 block) {
  return dim3((w + block.x - 1) / block.x, (h + block.y - 1) / block.y);
}

}  // namespace

void write_planar_ordered(const DeviceFrameIn& in, std::uint8_t* dst, StreamHandle up,
                          StreamHandle theirs) {
  // Events that own nothing once recorded and waited on: destroyed at once (CUDA frees them
  // when the work they mark is done).
  const Event written(cudaEventDisableTiming), copied(cudaEventDisableTiming);
  written.record(theirs);
  MJPEG_CUDA_CHECK(cudaStreamWaitEvent(up, written.get(), 0));
  write_planar(in, dst, up);
  copied.record(up);
  MJPEG_CUDA_CHECK(cudaStreamWaitEvent(theirs, copied.get(), 0));
}

void download_planar(const DeviceFrameIn& in, std::uint8_t* dst, StreamHandle theirs) {
  const PlanarLayout l = planar_layout(in.width, in.height, in.chroma);
  const DeviceBuffer staging(l.bytes);
  write_planar(in, staging.as<std::uint8_t>(), theirs);
  MJPEG_CUDA_CHECK(cudaMemcpyAsync(dst, staging.get(), l.bytes, cudaMemcpyDeviceToHost, theirs));
  MJPEG_CUDA_CHECK(cudaStreamSynchronize(theirs));
}

std::uint8_t reduce_sample(unsigned v, int depth, int x, int y, bool shift_only) {
  return reduce(v, depth, x, y, shift_only);
}

void copy_device(void* dst, const void* src, std::size_t bytes, StreamHandle stream) {
  MJPEG_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
}

void write_planar(const DeviceFrameIn& in, std::uint8_t* dst, StreamHandle stream) {
  const PlanarLayout l = planar_layout(in.width, in.height, in.chroma);
  if (in.layout == DeviceLayout::planar) {
    const int planes = in.chroma == PlanarChroma::mono ? 1 : 3;
    for (int p = 0; p < planes; ++p) {
      const int w = p == 0 ? in.width : l.chroma_width;
      const int h = p == 0 ? in.height : l.chroma_height;
      MJPEG_CUDA_CHECK(cudaMemcpy2DAsync(dst + l.offset[p], l.pitch[p], in.plane[p], in.pitch[p],
                                         static_cast<std::size_t>(w), static_cast<std::size_t>(h),
                                         cudaMemcpyDeviceToDevice, stream));
    }
    return;
  }
  if (in.chroma != PlanarChroma::c420)
    throw UsageError("nv12 and p016 device frames are 4:2:0");
  const dim3 block(32, 8);
  if (in.layout == DeviceLayout::nv12) {
    MJPEG_CUDA_CHECK(cudaMemcpy2DAsync(dst, l.pitch[0], in.plane[0], in.pitch[0],
                                       static_cast<std::size_t>(in.width),
                                       static_cast<std::size_t>(in.height),
                                       cudaMemcpyDeviceToDevice, stream));
    split_chroma<false><<<grid_for(l.chroma_width, l.chroma_height, block), block, 0, stream>>>(
        static_cast<const unsigned char*>(in.plane[1]), in.pitch[1], dst + l.offset[1],
        dst + l.offset[2], l.pitch[1], l.chroma_width, l.chroma_height, 8);
    MJPEG_CUDA_CHECK_LAUNCH();
    return;
  }
  if (in.bit_depth != 10 && in.bit_depth != 12)
    throw UsageError("p016 device frames: 10 or 12 significant bits");
  p016_luma<<<grid_for(in.width, in.height, block), block, 0, stream>>>(
      static_cast<const unsigned char*>(in.plane[0]), in.pitch[0], dst, l.pitch[0], in.width,
      in.height, in.bit_depth, !in.full_range);
  MJPEG_CUDA_CHECK_LAUNCH();
  split_chroma<true><<<grid_for(l.chroma_width, l.chroma_height, block), block, 0, stream>>>(
      static_cast<const unsigned char*>(in.plane[1]), in.pitch[1], dst + l.offset[1],
      dst + l.offset[2], l.pitch[1], l.chroma_width, l.chroma_height, in.bit_depth);
  MJPEG_CUDA_CHECK_LAUNCH();
}

}  // namespace mjpeg::gpu
