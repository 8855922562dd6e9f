// CUDA devices: whether they can run the kernels, and as the user sees them in `mjpeg info`
// (plain C++; no CUDA headers needed).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace mjpeg::gpu {

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::size_t memory_bytes = 0;
  int major = 0, minor = 0;   ///< compute capability
  int multiprocessors = 0;
  bool usable = false;        ///< usable_device(index): compute capability >= 8.0 (asynchronous
                              ///< copies), not prohibited, a context can be made on it
  std::string problem;        ///< why not, when !usable
};

/// False in a build without CUDA (MJPEG_WITH_CUDA=OFF, cuda/cpu_only.cpp): no device is ever
/// found there, and every query's `reason` says so.
bool built_with_cuda();

/// True when an NVIDIA kernel driver is loaded (Linux: /proc/driver/nvidia exists), whether or
/// not this CUDA runtime can use it: the machine has an NVIDIA GPU. Plain C++, every build
/// (driver_loaded.cpp).
bool driver_loaded();

/// Number of CUDA devices (0 when none or when the driver is unusable; `reason` says why).
int device_count(std::string* reason = nullptr);
/// True when device 0 can run the kernels (usable_device(0, reason)).
bool usable_device(std::string* reason = nullptr);
/// True when `device` can run the kernels: present, compute capability >= 8.0 (cp.async), not
/// in the prohibited compute mode, and a context can be made on it (a device held by another
/// process in exclusive mode cannot); otherwise false and `reason` holds a sentence for the
/// user that names the device. Makes CUDA calls (the first one on a device creates its
/// context); leaves the calling thread's current device as it was.
bool usable_device(int device, std::string* reason);

/// The devices the CUDA runtime reports, each checked with usable_device (which creates its
/// context); empty with `reason` set when there are none or the driver cannot be used. Makes CUDA calls: never call it during static initialisation.
std::vector<DeviceInfo> list_devices(std::string* reason);

/// Free memory of `device` now (cudaMemGetInfo), 0 when it cannot be read.
std::size_t free_device_memory(int device);

}  // namespace mjpeg::gpu
