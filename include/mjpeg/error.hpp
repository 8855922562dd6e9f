// Errors thrown by mjpeg. The CLI maps UsageError to exit code 2 and every other Error to 1.
#pragma once

#include <stdexcept>
#include <string>

namespace mjpeg {

/// A runtime failure: unreadable input, I/O error, device failure.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The caller asked for something invalid (bad option value, unsupported size).
class UsageError : public Error {
 public:
  using Error::Error;
};

/// The reason a library built without CUDA gives wherever a GPU was asked for (gpu_devices'
/// reason in devices.hpp, the GPU modes' and NVDEC's errors, the nvJPEG peer).
inline constexpr const char* kBuiltWithoutCuda = "this mjpeg was built without CUDA";

}  // namespace mjpeg
