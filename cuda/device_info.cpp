#include "device_info.hpp"

#include <cuda_runtime_api.h>

#include "cuda_raii.hpp"
#include "gpu_transform.hpp"

namespace mjpeg::gpu {

bool built_with_cuda() { return true; }

int device_count(std::string* reason) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    if (reason)
      *reason = std::string("no usable CUDA device: cudaGetDeviceCount failed with ") +
                cudaGetErrorName(e);
    return 0;
  }
  if (n == 0 && reason) *reason = "no CUDA device found";
  return n;
}

bool usable_device(std::string* reason) { return usable_device(0, reason); }

bool usable_device(int device, std::string* reason) {
  const int count = device_count(reason);
  if (count == 0) return false;
  const std::string name = "CUDA device " + std::to_string(device);
  if (device < 0 || device >= count) {
    if (reason) *reason = name + " does not exist (" + std::to_string(count) + " found)";
    return false;
  }
  cudaDeviceProp prop{};
  cudaError_t e = cudaGetDeviceProperties(&prop, device);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    if (reason)
      *reason = name + " unusable: cudaGetDeviceProperties failed with " + cudaGetErrorName(e);
    return false;
  }
  if (prop.major < 8) {
    if (reason)
      *reason = name + " (" + prop.name + ") has compute capability " +
                std::to_string(prop.major) + "." + std::to_string(prop.minor) +
                "; the kernels need 8.0 or newer";
    return false;
  }
  int compute_mode = cudaComputeModeDefault;
  if (cudaDeviceGetAttribute(&compute_mode, cudaDevAttrComputeMode, device) != cudaSuccess) {
    (void)cudaGetLastError();
    compute_mode = cudaComputeModeDefault;
  }
  if (compute_mode == cudaComputeModeProhibited) {
    if (reason) *reason = name + " (" + prop.name + ") is in the prohibited compute mode";
    return false;
  }
  // A context: fails where another process holds an exclusive-process device, or the device
  // is otherwise unavailable.
  const DeviceScope scope(device);
  e = scope.error();
  if (e == cudaSuccess) e = cudaFree(nullptr);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    if (reason)
      *reason = name + " (" + prop.name + ") cannot be used: " + cudaGetErrorName(e);
    return false;
  }
  // Code for it: a build for other architectures (and without PTX it can compile) passes the
  // checks above and fails at its first launch.
  const std::string image = kernel_image_problem();
  if (!image.empty()) {
    if (reason)
      *reason = name + " (" + prop.name + ", compute capability " + std::to_string(prop.major) +
                "." + std::to_string(prop.minor) + ") cannot run this build's kernels (" + image +
                "; built for CUDA architectures " + built_architectures() +
                "): rebuild with -DCMAKE_CUDA_ARCHITECTURES=" + std::to_string(prop.major) +
                std::to_string(prop.minor) + " or the default architectures";
    return false;
  }
  if (reason) reason->clear();
  return true;
}

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
  const DeviceScope scope(device);
  if (scope.error() != cudaSuccess) return 0;
  std::size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) {
    (void)cudaGetLastError();
    free_bytes = 0;
  }
  return free_bytes;
}

}  // namespace mjpeg::gpu
