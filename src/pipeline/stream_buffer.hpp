// The stream buffer of ../shared/seeds/003 (DESIGN.md section 1): K slots between the host
// producers, the GPU transform and the host entropy workers.
//
// Per slot (allocated once per geometry, never per frame):
//   host pixels (pinned; pageable in SOK unless pinned_sok), device pixels,
//   device coefficients, host coefficients (pinned in AOK and pinned SOK),
//   events data_ready (upload stream), transform_done (kernel stream),
//   coeffs_ready (download stream; blocking-sync so that waiting workers sleep, not spin).
// Streams: one upload, one kernel, one download stream (non-blocking), shared by all slots
// (AOK); SOK uses the legacy default stream (see offload_sync).
//
// AOK follows the PICC protocol (producer initiates, consumer completes):
//   producer:   upload_async(slot): cudaMemcpyAsync H2D on the upload stream, then record
//               data_ready; then it bumps the slot's host-side count and hands the slot on.
//   dispatcher: transform_async(slot): checks the count (the event exists), makes the kernel
//               stream wait on data_ready (a GPU-side wait, the host does not block), launches,
//               records transform_done; the download stream waits on it, copies D2H and records
//               coeffs_ready; bumps the count for coeffs_ready.
//   worker:     wait_coeffs(slot): checks the count, then cudaEventSynchronize(coeffs_ready).
// CUDA leaves waiting on a never-recorded event undefined (it returns at once), hence the
// host-side counts: a stage only waits on an event whose record the count proves. In the
// pipeline, a slot id only enters the next stage's queue after the count was bumped, so the
// check never blocks; it guards the protocol (a violation throws instead of racing).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>
#include <vector>

#include "cuda_raii.hpp"
#include "gpu_transform.hpp"
#include "jpeg/quant.hpp"
#include "jpeg_geometry.hpp"
#include "mjpeg/options.hpp"

namespace mjpeg::pipeline {

/// When the GPU worked on one frame: seconds on the host's steady clock, relative to the
/// origin given to StreamBuffer::start_clock (from CUDA events; timing builds only).
struct GpuTimes {
  double upload_start = 0, upload_end = 0;
  double kernel_start = 0, kernel_end = 0;
  double download_start = 0, download_end = 0;
};

class StreamBuffer {
 public:
  enum class Kind { aok, sok_pageable, sok_pinned };

  /// Selects `device` for the calling thread and allocates everything. Throws mjpeg::Error.
  /// `timing`: every slot also gets start events and all events take timestamps, so that
  /// gpu_times() can say when each copy and kernel ran (a little dearer per record).
  StreamBuffer(const FrameGeometry& geometry, const QuantTables& tables, PixelFormat input,
               int slots, Kind kind, int device, gpu::Variant variant, int stages,
               bool timing = false);
  /// Waits for outstanding GPU work (never throws), then frees.
  ~StreamBuffer();
  StreamBuffer(const StreamBuffer&) = delete;
  StreamBuffer& operator=(const StreamBuffer&) = delete;

  int slots() const { return slot_count_; }
  std::size_t pixel_bytes() const { return pixel_bytes_; }
  std::size_t row_bytes() const { return row_bytes_; }
  std::uint8_t* host_pixels(int slot) const { return slots_[slot]->host_pixels; }
  const std::int16_t* host_coeffs(int slot) const { return slots_[slot]->host_coeffs; }

  /// Every thread that calls into CUDA must select the device first.
  void bind_thread() const;

  // --- AOK (asynchronous offload) ---------------------------------------------------------
  /// Producer side of PICC: H2D copy + data_ready record on the upload stream, count bumped.
  void upload_async(int slot);
  /// Dispatcher: kernel after data_ready, download after transform_done, coeffs_ready.
  void transform_async(int slot);
  /// Worker: returns once the slot's coefficients are in host memory.
  void wait_coeffs(int slot);

  // --- SOK (synchronous offload) ----------------------------------------------------------
  /// Blocking cudaMemcpy in, launch, synchronize, blocking cudaMemcpy out, all on the legacy
  /// default stream (not the three streams above), as a plain synchronous program does.
  void offload_sync(int slot);

  /// Blocks until all three streams are idle (used on shutdown). Never throws.
  void drain() noexcept;

  // --- Timing (constructed with timing = true) ----------------------------------------------
  bool timing() const { return timing_; }
  /// Ties GPU event time to the host clock: records an event, waits for it and takes the host
  /// time (the midpoint of the record and the wake-up; error a few microseconds). Call once,
  /// before the first frame, with the origin the times should be relative to.
  void start_clock(std::chrono::steady_clock::time_point origin);
  /// The GPU times of the slot's last frame. Valid once that frame's coefficients are in host
  /// memory (after wait_coeffs / offload_sync).
  GpuTimes gpu_times(int slot) const;
  std::size_t upload_bytes() const { return pixel_bytes_; }     ///< per frame, host to device

  /// Tests: the `n`-th transform (0-based count of transform_async / offload_sync calls) makes
  /// a real, non-sticky CUDA error (a copy larger than its buffer, refused by the runtime with
  /// cudaErrorInvalidValue) instead of its work, so that error paths can be exercised.
  void inject_error_at(std::int64_t n) { inject_at_ = n; }
  std::size_t download_bytes() const { return coeff_bytes_; }  ///< per frame, device to host

 private:
  struct Slot {
    gpu::PinnedBuffer pinned_pixels, pinned_coeffs;
    std::unique_ptr<std::uint8_t[]> pageable_pixels;
    std::unique_ptr<std::int16_t[]> pageable_coeffs;
    std::uint8_t* host_pixels = nullptr;
    std::int16_t* host_coeffs = nullptr;
    gpu::DeviceBuffer device_pixels, device_coeffs;
    gpu::Event data_ready, transform_done, coeffs_ready;
    // Timing only: recorded just before the copy in, the kernel and the copy out.
    gpu::Event upload_start, kernel_start, download_start;
    // Host-side counts of the records above (PICC): how many times each event was recorded,
    // and how many of those records a consumer has already used.
    std::atomic<std::uint64_t> data_ready_recorded{0}, data_ready_used{0};
    std::atomic<std::uint64_t> coeffs_ready_recorded{0}, coeffs_ready_used{0};
    explicit Slot(bool timing);
  };

  // Declared first: selects the device before the streams below are created.
  struct DeviceSelect {
    explicit DeviceSelect(int device);
  };
  DeviceSelect select_;
  int device_;
  Kind kind_;
  gpu::Variant variant_;
  int stages_;
  bool timing_ = false;
  std::int64_t transforms_ = 0, inject_at_ = -1;  // transform calls so far; test error hook
  void maybe_inject_error(cudaStream_t stream);
  gpu::Event origin_;        // timing: the event start_clock() recorded
  double origin_host_s_ = 0;  // ... and the host time it maps to (relative to the origin)
  std::size_t row_bytes_ = 0, pixel_bytes_ = 0, coeff_bytes_ = 0;
  std::unique_ptr<gpu::TransformPlan> plan_;
  gpu::Stream upload_, kernel_, download_;
  std::mutex upload_mutex_;  // producers enqueue on the upload stream one at a time
  int slot_count_ = 0;
  std::vector<std::unique_ptr<Slot>> slots_;  // Slot holds atomics: not movable
};

}  // namespace mjpeg::pipeline
