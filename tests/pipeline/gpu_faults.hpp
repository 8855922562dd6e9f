// Test-only GPU faults, installed through PipelineOptions::test_hooks (pipeline/test_hooks.hpp):
// the pipeline holds none of this. GPU test binaries only (CUDA runtime calls).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "mjpeg/error.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/test_hooks.hpp"

namespace mjpeg::pipetest {

/// The `at`-th transform (0-based, counted per stream buffer) of stream buffer `buffer` makes a
/// real, non-sticky CUDA error instead of its work: a copy larger than its buffers, which the
/// runtime refuses with cudaErrorInvalidValue before touching memory, on the stream the
/// transform goes to.
class GpuFaults final : public pipeline::OffloadTestHooks {
 public:
  explicit GpuFaults(std::int64_t at = -1, int buffer = 0) : at_(at), buffer_(buffer) {}

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
  std::atomic<std::int64_t> transforms_[kMaxStreamBuffers] = {};
};

/// Stream buffer 1 as a device `ratio` times slower than buffer 0, counted in frames instead of
/// time (a sleep would make the test depend on the machine's load): buffer 1's dispatcher takes
/// on its n-th frame only once buffer 0's has taken on ratio * n frames in all. So that buffer
/// 0 never starves while buffer 1 holds a frame back (the writer waits for that frame, and the
/// producers for the frame records it holds), the frame is also let go once buffer 0 has taken
/// on every frame after it that it is sure to get meanwhile: of the 2K - 1 frames that the
/// 2K frame records let in behind it (K = both buffers' slots), all but the `slots` - 1 that
/// fit in buffer 1's other slots. That needs frames read in order: one producer.
/// A frame held for longer than `give_up_s` (buffer 0 not getting those frames: frames handed
/// out in turn rather than to the first free slot) fails the encode with a message saying so.
class PacedSecondBuffer final : public pipeline::OffloadTestHooks {
 public:
  PacedSecondBuffer(int ratio, std::int64_t frames, int slots_per_buffer, double give_up_s = 30)
      : ratio_(ratio), frames_(frames), slots_(slots_per_buffer), give_up_s_(give_up_s),
        first_(static_cast<std::size_t>(frames), false) {}

  void before_dispatch(int buffer, std::int64_t frame) override {
    std::unique_lock<std::mutex> lock(mutex_);
    if (buffer == 0) {
      first_.at(static_cast<std::size_t>(frame)) = true;
      ++first_count_;
      changed_.notify_all();
      return;
    }
    const std::int64_t behind = std::min<std::int64_t>(4 * slots_ - 1, frames_ - 1 - frame);
    const std::int64_t sure = std::max<std::int64_t>(0, behind - (slots_ - 1));
    auto may_go = [&] {
      if (first_count_ >= ratio_ * (second_count_ + 1)) return true;
      std::int64_t after = 0;
      for (std::int64_t f = frame + 1; f < frames_; ++f) after += first_[static_cast<std::size_t>(f)];
      return after >= sure;
    };
    if (!changed_.wait_for(lock, std::chrono::duration<double>(give_up_s_), may_go))
      throw Error("buffer 1 held frame " + std::to_string(frame) + " for " +
                  std::to_string(give_up_s_) + " s: buffer 0 got only " +
                  std::to_string(first_count_) + " frames meanwhile");
    ++second_count_;
  }

 private:
  const std::int64_t ratio_, frames_, slots_;
  const double give_up_s_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<bool> first_;  // frames buffer 0 took on
  std::int64_t first_count_ = 0, second_count_ = 0;
};

}  // namespace mjpeg::pipetest
