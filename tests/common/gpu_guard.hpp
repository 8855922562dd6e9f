// The guard of every GPU test: without a usable CUDA device the test is skipped, and with
// MJPEG_REQUIRE_GPU=1 (as tests/gpu/check.sh runs them on the GPU machine) it fails instead,
// so that a broken device or driver never passes as a row of skips.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "device_info.hpp"
#include "gpu_transform.hpp"

namespace mjpeg::test {

/// True when MJPEG_REQUIRE_GPU=1: a missing device is a failure, not a skip.
inline bool gpu_required() {
  const char* v = std::getenv("MJPEG_REQUIRE_GPU");
  return v != nullptr && std::string(v) == "1";
}

}  // namespace mjpeg::test

/// Skips the current test (or fails it under MJPEG_REQUIRE_GPU=1) when no device can run the
/// kernels. Use it first in a test body or a fixture's SetUp().
#define MJPEG_NEED_GPU()                                                            \
  do {                                                                              \
    std::string mjpeg_reason_;                                                      \
    if (!::mjpeg::gpu::usable_device(&mjpeg_reason_)) {                             \
      if (::mjpeg::test::gpu_required())                                            \
        FAIL() << "MJPEG_REQUIRE_GPU=1 but no usable GPU: " << mjpeg_reason_;       \
      GTEST_SKIP() << "no usable CUDA device: " << mjpeg_reason_;                   \
    }                                                                               \
  } while (0)
