#include "device_info.hpp"

#include <cuda_runtime_api.h>

#include "gpu_transform.hpp"

namespace mjpeg::gpu {

bool built_with_cuda() { return true; }

std::vector<DeviceInfo> list_devices(std::string* reason) {
  std::vector<DeviceInfo> devices;
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    if (reason) {
      const std::string name = cudaGetErrorName(e);
      // The runtime says the same when no driver is installed and when it is too old.
      if (e == cudaErrorInsufficientDriver)
        *reason = driver_loaded()
                      ? "the NVIDIA driver is too old for this CUDA runtime: " + name
                      : "no NVIDIA driver is loaded: " + name;
      else if (e == cudaErrorNoDevice)
        *reason = "no CUDA device: " + name;
      else
        *reason = "cudaGetDeviceCount failed with " + name;
    }
    return devices;
  }
  if (count == 0 && reason) *reason = "the CUDA runtime found no device";
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) {
      (void)cudaGetLastError();
      continue;
    }
    DeviceInfo d;
    d.index = i;
    d.name = prop.name;
    d.memory_bytes = prop.totalGlobalMem;
    d.major = prop.major;
    d.minor = prop.minor;
    d.multiprocessors = prop.multiProcessorCount;
    d.usable = usable_device(i, &d.problem);
    devices.push_back(d);
  }
  return devices;
}

std::size_t free_device_memory(int device) {
  int previous = 0;
  if (cudaGetDevice(&previous) != cudaSuccess || cudaSetDevice(device) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  std::size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) {
    (void)cudaGetLastError();
    free_bytes = 0;
  }
  (void)cudaSetDevice(previous);
  return free_bytes;
}

}  // namespace mjpeg::gpu
