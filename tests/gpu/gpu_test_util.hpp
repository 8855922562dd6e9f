// Helpers shared by the GPU tests and the kernel benchmark: deterministic synthetic frames and
// an uploaded frame with a chosen pitch / base misalignment.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuda_check.hpp"
#include "cuda_raii.hpp"
#include "mjpeg/options.hpp"

namespace mjpeg::gputest {

/// A host frame, rows `stride` bytes apart (stride >= width * channels).
struct HostFrame {
  int width = 0, height = 0, channels = 3;
  std::size_t stride = 0;
  std::vector<std::uint8_t> bytes;
  ImageView view() const {
    return ImageView{bytes.data(), width, height,
                     channels == 3 ? PixelFormat::rgb24 : PixelFormat::gray8, stride};
  }
};

/// Deterministic noise + gradients + a few hard edges (same bytes everywhere).
inline HostFrame synthetic_frame(int w, int h, int channels, std::uint32_t seed,
                                 std::size_t extra_stride = 0) {
  HostFrame f;
  f.width = w;
  f.height = h;
  f.channels = channels;
  f.stride = static_cast<std::size_t>(w) * channels + extra_stride;
  f.bytes.assign(f.stride * h, 0xCD);
  std::uint32_t s = seed * 2654435761u + 12345u;
  auto next = [&s] {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return s;
  };
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      for (int c = 0; c < channels; ++c) {
        int v = (x * (3 + c) + y * (5 - c)) % 256;
        if (((x / 37) + (y / 23) + c) % 3 == 0) v = 255 - v;  // hard edges
        v += static_cast<int>(next() % 97) - 48;            // noise
        v = v < 0 ? 0 : (v > 255 ? 255 : v);
        f.bytes[static_cast<std::size_t>(y) * f.stride + static_cast<std::size_t>(x) * channels +
                c] = static_cast<std::uint8_t>(v);
      }
    }
  }
  return f;
}

/// A frame in device memory at `pitch` bytes per row, starting `offset` bytes into its buffer.
struct DeviceFrame {
  gpu::DeviceBuffer buffer;
  const std::uint8_t* data = nullptr;
  std::size_t pitch = 0;

  DeviceFrame(const HostFrame& f, std::size_t pitch_, std::size_t offset = 0)
      : buffer(pitch_ * f.height + offset + 16), pitch(pitch_) {
    auto* base = buffer.as<std::uint8_t>() + offset;
    MJPEG_CUDA_CHECK(cudaMemset(buffer.get(), 0x5A, buffer.size()));
    MJPEG_CUDA_CHECK(cudaMemcpy2D(base, pitch, f.bytes.data(), f.stride,
                                  static_cast<std::size_t>(f.width) * f.channels, f.height,
                                  cudaMemcpyHostToDevice));
    data = base;
  }
};

}  // namespace mjpeg::gputest
