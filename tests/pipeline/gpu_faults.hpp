// Test-only GPU faults, installed through PipelineOptions::test_hooks (pipeline/test_hooks.hpp):
// the pipeline holds none of this. GPU test binaries only (CUDA runtime calls).
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "cuda_check.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/test_hooks.hpp"

namespace mjpeg::pipetest {

/// The `at`-th transform (0-based, counted per stream buffer) of stream buffer `buffer` makes a
/// real, non-sticky CUDA error instead of its work: a copy larger than its buffers, which the
/// runtime refuses with cudaErrorInvalidValue before touching memory, on the stream the
/// transform goes to. `delays` (seconds, per stream buffer; missing entries: none): the
/// buffer's dispatcher sleeps that long before each frame (a slower device).
class GpuFaults final : public pipeline::OffloadTestHooks {
 public:
  explicit GpuFaults(std::int64_t at = -1, int buffer = 0, std::vector<double> delays = {})
      : at_(at), buffer_(buffer), delays_(std::move(delays)) {}

  void before_dispatch(int buffer) override {
    const auto b = static_cast<std::size_t>(buffer);
    if (b < delays_.size() && delays_[b] > 0)
      std::this_thread::sleep_for(std::chrono::duration<double>(delays_[b]));
  }

  void before_transform(const pipeline::TransformHookPoint& p) override {
    // One dispatcher per buffer: the count of each is only touched by its own thread.
    if (transforms_[static_cast<std::size_t>(p.buffer)]++ != at_ || p.buffer != buffer_) return;
    MJPEG_CUDA_CHECK(cudaMemcpyAsync(p.device_coeffs, p.device_pixels, std::size_t(1) << 62,
                                     cudaMemcpyDeviceToDevice,
                                     static_cast<cudaStream_t>(p.stream)));
  }

 private:
  std::int64_t at_;
  int buffer_;
  std::vector<double> delays_;
  std::atomic<std::int64_t> transforms_[pipeline::kMaxStreamBuffers] = {};
};

}  // namespace mjpeg::pipetest
