// Test-only hooks into the GPU offload (PipelineOptions::test_hooks; null in production). A
// test derives from OffloadTestHooks and overrides what it needs: the GPU offloaders call it
// at fixed points, on the dispatcher thread of the stream buffer concerned (and the hand-over
// of a cpu start on the thread that made the GPU's run). What a hook does
// (a deliberately failing CUDA call, a sleep) lives in the tests, not in the pipeline.
// CUDA-free: the stream and device pointers are handed over as void*.
#pragma once

#include <cstddef>
#include <cstdint>

#include "stream_handle.hpp"

namespace mjpeg::pipeline {

/// Where a transform is about to be issued.
struct TransformHookPoint {
  int buffer = 0;                 ///< the stream buffer (index into the device list)
  int slot = 0;                   ///< its slot whose frame is transformed
  gpu::StreamHandle stream = nullptr;  ///< where it goes (null: the legacy default stream)
  void* device_pixels = nullptr;  ///< device memory of that slot: the pixels ...
  void* device_coeffs = nullptr;  ///< ... and the coefficients
};

class OffloadTestHooks {
 public:
  virtual ~OffloadTestHooks() = default;
  /// The dispatcher of stream buffer `buffer`, before it takes on frame `frame` (e.g. holding
  /// it back: a slower device).
  virtual void before_dispatch(int /*buffer*/, std::int64_t /*frame*/) {}
  /// Right before a transform is issued (aok: transform_async, sok: offload_sync). An
  /// exception thrown here fails that frame's transform as a CUDA error of it would (the
  /// device of the buffer is named in front of the message).
  virtual void before_transform(const TransformHookPoint&) {}
  /// Runs with a cpu start (PipelineOptions::cpu_start): on the thread that made the second
  /// run, after it was made and before the CPU is told to hand over (e.g. holding the
  /// hand-over back until some frames are written). An exception thrown here counts as a
  /// failed set-up of that run: the CPU encodes the whole stream.
  virtual void before_handover() {}
};

}  // namespace mjpeg::pipeline
