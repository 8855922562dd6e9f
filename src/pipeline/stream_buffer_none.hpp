// A build without CUDA (MJPEG_WITH_CUDA=OFF): StreamBuffer's interface as Run uses it
// (stream_buffer.hpp), with nothing behind it. No object of it is ever made: Run::setup
// refuses sok and aok first (gpu::built_with_cuda() is false), and the constructor throws
// should that check ever be bypassed. Keep it in step with stream_buffer.hpp; the CPU-only
// build of CI compiles it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "core/geometry.hpp"
#include "core/quant.hpp"
#include "gpu_tokenize.hpp"
#include "gpu_transform.hpp"
#include "jpeg/tokens.hpp"
#include "mjpeg/error.hpp"
#include "pipeline/frame_source.hpp"

namespace mjpeg::pipeline {

struct GpuTimes {
  double upload_start = 0, upload_end = 0;
  double kernel_start = 0, kernel_end = 0;
  double download_start = 0, download_end = 0;
  double header_end = -1, body_start = -1;
};

using gpu::GpuOutput;

struct GpuResult {
  bool is_tokens = false;
  TokenView tokens;
  const std::int16_t* coeffs = nullptr;
};

class StreamBuffer {
 public:
  enum class Kind { aok, sok_pageable, sok_pinned };

  StreamBuffer(const FrameGeometry&, const QuantTables&, const SourceFormat&, int, Kind, int,
               gpu::Variant, int, bool = false, GpuOutput = GpuOutput::coefficients, int = 0,
               bool = false, bool = true) {
    throw Error("the stream buffer needs CUDA: this mjpeg was built without it");
  }
  StreamBuffer(const StreamBuffer&) = delete;
  StreamBuffer& operator=(const StreamBuffer&) = delete;

  std::uint8_t* host_pixels(int) const { return nullptr; }
  void bind_thread() const {}
  void upload_async(int, const std::uint8_t*) {}
  void split_copies_at(const std::uint8_t*, std::size_t) {}
  void transform_async(int) {}
  void wait_header(int) {}
  void download_async(int) {}
  void wait_result(int) {}
  GpuResult result(int) const { return {}; }
  void offload_sync(int, const std::uint8_t*) {}
  void drain() noexcept {}
  void start_clock(std::chrono::steady_clock::time_point) {}
  GpuTimes gpu_times(int) const { return {}; }
  std::size_t upload_bytes() const { return 0; }
  std::size_t download_bytes(int) const { return 0; }
  void inject_error_at(std::int64_t) {}
};

}  // namespace mjpeg::pipeline
