// Small move-only owners of CUDA handles: stream, event, device buffer, pinned host buffer,
// executable graph.
// Constructors throw mjpeg::Error on failure; destructors never throw (failures go to stderr).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "cuda_check.hpp"

namespace mjpeg::gpu {

class Stream {
 public:
  Stream() { MJPEG_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() { reset(); }
  Stream(Stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  Stream& operator=(Stream&& o) noexcept {
    if (this != &o) { reset(); s_ = std::exchange(o.s_, nullptr); }
    return *this;
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const noexcept { return s_; }
  void synchronize() const { MJPEG_CUDA_CHECK(cudaStreamSynchronize(s_)); }

 private:
  void reset() noexcept {
    if (s_) MJPEG_CUDA_WARN(cudaStreamDestroy(s_));
    s_ = nullptr;
  }
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  explicit Event(unsigned flags = cudaEventDefault) {
    MJPEG_CUDA_CHECK(cudaEventCreateWithFlags(&e_, flags));
  }
  /// No event (nothing is created; get() is null). Lets optional events share one type.
  explicit Event(std::nullptr_t) noexcept {}
  ~Event() { reset(); }
  Event(Event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  Event& operator=(Event&& o) noexcept {
    if (this != &o) { reset(); e_ = std::exchange(o.e_, nullptr); }
    return *this;
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const noexcept { return e_; }
  void record(cudaStream_t s) const { MJPEG_CUDA_CHECK(cudaEventRecord(e_, s)); }
  void synchronize() const { MJPEG_CUDA_CHECK(cudaEventSynchronize(e_)); }
  /// Milliseconds from `start` to this event (both recorded and complete).
  float elapsed_since(const Event& start) const {
    float ms = 0;
    MJPEG_CUDA_CHECK(cudaEventElapsedTime(&ms, start.e_, e_));
    return ms;
  }

 private:
  void reset() noexcept {
    if (e_) MJPEG_CUDA_WARN(cudaEventDestroy(e_));
    e_ = nullptr;
  }
  cudaEvent_t e_ = nullptr;
};

/// cudaMalloc'd bytes.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : size_(bytes) {
    if (bytes) MJPEG_CUDA_CHECK(cudaMalloc(&p_, bytes));
  }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = std::exchange(o.p_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const noexcept { return p_; }
  template <class T> T* as() const noexcept { return static_cast<T*>(p_); }
  std::size_t size() const noexcept { return size_; }

 private:
  void reset() noexcept {
    if (p_) MJPEG_CUDA_WARN(cudaFree(p_));
    p_ = nullptr;
    size_ = 0;
  }
  void* p_ = nullptr;
  std::size_t size_ = 0;
};

/// cudaMallocHost'd (page-locked) bytes.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t bytes) : size_(bytes) {
    if (bytes) MJPEG_CUDA_CHECK(cudaMallocHost(&p_, bytes));
  }
  ~PinnedBuffer() { reset(); }
  PinnedBuffer(PinnedBuffer&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = std::exchange(o.p_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* get() const noexcept { return p_; }
  template <class T> T* as() const noexcept { return static_cast<T*>(p_); }
  std::size_t size() const noexcept { return size_; }

 private:
  void reset() noexcept {
    if (p_) MJPEG_CUDA_WARN(cudaFreeHost(p_));
    p_ = nullptr;
    size_ = 0;
  }
  void* p_ = nullptr;
  std::size_t size_ = 0;
};

/// An instantiated CUDA graph: work captured once from a stream (capture()) and launched
/// again and again with one call (launch()), instead of one call per copy, kernel and event.
class GraphExec {
 public:
  GraphExec() = default;
  ~GraphExec() { reset(); }
  GraphExec(GraphExec&& o) noexcept : g_(std::exchange(o.g_, nullptr)) {}
  GraphExec& operator=(GraphExec&& o) noexcept {
    if (this != &o) { reset(); g_ = std::exchange(o.g_, nullptr); }
    return *this;
  }
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  explicit operator bool() const noexcept { return g_ != nullptr; }

  /// Captures what `issue()` enqueues on `stream` (which must end where it began: work forked
  /// to other streams joins back) and instantiates it. The capture is the calling thread's
  /// only (other threads go on using CUDA meanwhile). Events recorded or waited on with the
  /// External flags become record and wait nodes that act on every launch. Throws
  /// mjpeg::Error, or what `issue` throws (the capture is ended first).
  template <class Issue>
  static GraphExec capture(cudaStream_t stream, Issue&& issue) {
    MJPEG_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    cudaGraph_t graph = nullptr;
    try {
      issue();
    } catch (...) {
      if (cudaStreamEndCapture(stream, &graph) == cudaSuccess && graph) cudaGraphDestroy(graph);
      (void)cudaGetLastError();
      throw;
    }
    MJPEG_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    GraphExec exec;
    const cudaError_t e = cudaGraphInstantiate(&exec.g_, graph, 0);
    MJPEG_CUDA_WARN(cudaGraphDestroy(graph));
    MJPEG_CUDA_CHECK(e);
    return exec;
  }
  void launch(cudaStream_t stream) const { MJPEG_CUDA_CHECK(cudaGraphLaunch(g_, stream)); }

 private:
  void reset() noexcept {
    if (g_) MJPEG_CUDA_WARN(cudaGraphExecDestroy(g_));
    g_ = nullptr;
  }
  cudaGraphExec_t g_ = nullptr;
};

/// Makes `device` the calling thread's current device for the scope and restores the one
/// before at its end (the current device is per thread). error(): how setting it went.
class DeviceScope {
 public:
  explicit DeviceScope(int device) noexcept {
    if (cudaGetDevice(&previous_) != cudaSuccess) {
      (void)cudaGetLastError();
      previous_ = 0;
    }
    error_ = cudaSetDevice(device);
    if (error_ != cudaSuccess) (void)cudaGetLastError();
  }
  ~DeviceScope() { (void)cudaSetDevice(previous_); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  cudaError_t error() const noexcept { return error_; }

 private:
  int previous_ = 0;
  cudaError_t error_ = cudaSuccess;
};

}  // namespace mjpeg::gpu
