// mjpeg/devices.hpp over the GPU layer's device queries (cuda/device_info.hpp).
#include "mjpeg/devices.hpp"

#include <exception>

#include "device_info.hpp"

namespace mjpeg {

bool built_with_gpu() { return gpu::built_with_cuda(); }

bool nvidia_driver_loaded() { return gpu::driver_loaded(); }

std::vector<GpuDevice> gpu_devices(std::string* reason) {
  std::vector<GpuDevice> out;
  try {
    std::string why;
    const std::vector<gpu::DeviceInfo> found = gpu::list_devices(&why);
    for (const gpu::DeviceInfo& d : found) {
      GpuDevice g;
      g.index = d.index;
      g.name = d.name;
      g.memory_bytes = d.memory_bytes;
      g.compute_major = d.major;
      g.compute_minor = d.minor;
      g.multiprocessors = d.multiprocessors;
      g.usable = d.usable;
      g.problem = d.usable ? std::string() : d.problem;
      out.push_back(std::move(g));
    }
    if (out.empty() && reason) *reason = why.empty() ? "no CUDA device found" : why;
  } catch (const std::exception& e) {  // (allocation; the queries themselves do not throw)
    out.clear();
    if (reason) *reason = e.what();
  }
  return out;
}

}  // namespace mjpeg
