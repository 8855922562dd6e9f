// Helpers shared by the GPU tests and the kernel benchmark: deterministic synthetic frames and
// an uploaded frame with a chosen pitch / base misalignment.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuda_check.hpp"
#include "cuda_raii.hpp"
#include "jpeg/planar.hpp"
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

/// A planar YCbCr frame in planar_layout's layout (Y, Cb, Cr back to back, rows packed).
struct PlanarFrame {
  int width = 0, height = 0;
  PlanarFormat format;
  std::vector<std::uint8_t> bytes;
  PlanarView view() const { return planar_view(bytes.data(), width, height, format); }
  PlanarLayout layout() const { return planar_layout(width, height, format.chroma); }
};

/// Deterministic planar content: gradients, hard edges and noise in every plane, with runs of
/// extreme samples (0, 255, and beyond the limited range) so that the RGB clamps are exercised.
inline PlanarFrame synthetic_planar(int w, int h, const PlanarFormat& format, std::uint32_t seed) {
  PlanarFrame f;
  f.width = w;
  f.height = h;
  f.format = format;
  const PlanarLayout l = f.layout();
  f.bytes.assign(l.bytes, 0);
  std::uint32_t s = seed * 2246822519u + 99u;
  auto next = [&s] {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return s;
  };
  const int planes = format.has_chroma() ? 3 : 1;
  for (int c = 0; c < planes; ++c) {
    const int pw = c == 0 ? w : l.chroma_width, ph = c == 0 ? h : l.chroma_height;
    for (int y = 0; y < ph; ++y)
      for (int x = 0; x < pw; ++x) {
        int v = (x * (2 + c) + y * (3 + 2 * c)) % 256;
        if (((x / 19) + (y / 11) + c) % 4 == 0) v = 255 - v;
        v += static_cast<int>(next() % 61) - 30;
        if (((x / 7) + (y / 5) + c) % 23 == 0) v = (next() & 1) ? 0 : 255;  // extremes
        v = v < 0 ? 0 : (v > 255 ? 255 : v);
        f.bytes[l.offset[c] + static_cast<std::size_t>(y) * l.pitch[c] + x] =
            static_cast<std::uint8_t>(v);
      }
  }
  return f;
}

/// A planar frame in device memory: each plane in its own buffer at `offset[c]` bytes into it,
/// rows `pitch[c]` bytes apart (pitch[1] == pitch[2]).
struct DevicePlanar {
  gpu::DeviceBuffer buffer[3];
  const std::uint8_t* plane[3] = {};
  std::size_t pitch[3] = {};

  DevicePlanar(const PlanarFrame& f, const std::size_t pitch_[3], const std::size_t offset[3]) {
    const PlanarLayout l = f.layout();
    const int planes = f.format.has_chroma() ? 3 : 1;
    for (int c = 0; c < planes; ++c) {
      const int pw = c == 0 ? f.width : l.chroma_width, ph = c == 0 ? f.height : l.chroma_height;
      pitch[c] = pitch_[c];
      buffer[c] = gpu::DeviceBuffer(pitch[c] * ph + offset[c] + 16);
      auto* base = buffer[c].as<std::uint8_t>() + offset[c];
      MJPEG_CUDA_CHECK(cudaMemset(buffer[c].get(), 0x3C + c, buffer[c].size()));
      MJPEG_CUDA_CHECK(cudaMemcpy2D(base, pitch[c], f.bytes.data() + l.offset[c], l.pitch[c],
                                    static_cast<std::size_t>(pw), ph, cudaMemcpyHostToDevice));
      plane[c] = base;
    }
  }
};

}  // namespace mjpeg::gputest
