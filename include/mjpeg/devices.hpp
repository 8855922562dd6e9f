// mjpeg/devices.hpp: the CUDA devices the GPU offload modes (Offload::sok, sok_pinned, aok)
// can run on, as the library itself checks them. No CUDA types: a program that includes this
// needs neither the CUDA headers nor a GPU, and a library built without CUDA answers too
// (with no devices).
//
// Errors: these functions never throw; where there is nothing to report they say why in
// `reason`.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace mjpeg {

/// One CUDA device, as the CUDA runtime reports it and as the library judged it.
struct GpuDevice {
  int index = 0;                  ///< CUDA device index: VideoOptions::device
  std::string name;               ///< e.g. "NVIDIA H200"
  std::size_t memory_bytes = 0;   ///< global memory
  int compute_major = 0;          ///< compute capability, major.minor
  int compute_minor = 0;
  int multiprocessors = 0;
  /// A GPU offload mode can run on it: compute capability 8.0 or higher (the kernels' copies
  /// into shared memory are asynchronous), compute not prohibited, and a context could be
  /// made on it.
  bool usable = false;
  std::string problem;            ///< why it is not usable (empty when usable)
};

/// False when this library was built without CUDA (CMake option MJPEG_WITH_CUDA=OFF): every
/// GPU offload mode is then refused and gpu_devices() is empty.
bool built_with_gpu();

/// Every CUDA device in the order of its index, each checked as a GPU mode checks it before
/// encoding (which creates a CUDA context on it: call this from main(), not from a static
/// initialiser). Empty when there is none, the driver cannot be used or the library was built
/// without CUDA; `reason` (may be null) then says which, as a phrase such as "this mjpeg was
/// built without CUDA". Never throws.
std::vector<GpuDevice> gpu_devices(std::string* reason = nullptr);

/// True when an NVIDIA kernel driver is loaded (Linux: /proc/driver/nvidia exists), whether or
/// not this library can use it: the machine has an NVIDIA GPU, so a program may want to say
/// why it encodes on the CPU (gpu_devices' reason: a driver too old, a device too old, a build
/// without CUDA). False on a machine without one, where the CPU is simply the only choice.
/// Never throws.
bool nvidia_driver_loaded();

}  // namespace mjpeg
