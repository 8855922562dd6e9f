// One CUDA error check for the whole GPU layer. MJPEG_CUDA_CHECK(call) evaluates `call` once and
// throws mjpeg::Error("<file>:<line>: <call text>: <cudaGetErrorName>") when it is not
// cudaSuccess; MJPEG_CUDA_CHECK_LAUNCH() checks cudaGetLastError() after a kernel launch.
// MJPEG_CUDA_WARN(call) is the non-throwing form for destructors (prints to stderr). Both
// clear the runtime's last error first (cudaGetLastError), so that a failure reported here is
// not reported again by the next unrelated check; a sticky error (the context is lost) stays.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>

#include "mjpeg/error.hpp"

namespace mjpeg::gpu::detail {

[[noreturn]] inline void throw_cuda_error(cudaError_t e, const char* call, const char* file,
                                          int line) {
  (void)cudaGetLastError();
  throw mjpeg::Error(std::string(file) + ":" + std::to_string(line) + ": " + call + ": " +
                     cudaGetErrorName(e));
}

inline void warn_cuda_error(cudaError_t e, const char* call, const char* file, int line) noexcept {
  (void)cudaGetLastError();
  std::fprintf(stderr, "%s:%d: %s: %s\n", file, line, call, cudaGetErrorName(e));
}

}  // namespace mjpeg::gpu::detail

#define MJPEG_CUDA_CHECK(call)                                                        \
  do {                                                                                \
    const cudaError_t mjpeg_cuda_err_ = (call);                                       \
    if (mjpeg_cuda_err_ != cudaSuccess)                                               \
      ::mjpeg::gpu::detail::throw_cuda_error(mjpeg_cuda_err_, #call, __FILE__, __LINE__); \
  } while (0)

#define MJPEG_CUDA_WARN(call)                                                         \
  do {                                                                                \
    const cudaError_t mjpeg_cuda_err_ = (call);                                       \
    if (mjpeg_cuda_err_ != cudaSuccess)                                               \
      ::mjpeg::gpu::detail::warn_cuda_error(mjpeg_cuda_err_, #call, __FILE__, __LINE__); \
  } while (0)

#define MJPEG_CUDA_CHECK_LAUNCH() MJPEG_CUDA_CHECK(cudaGetLastError())
