#include "host_pin.hpp"

#include <cuda_runtime_api.h>

#include <new>

#include "cuda_check.hpp"

namespace mjpeg::gpu {

std::shared_ptr<void> try_pin_read_only(const void* data, std::size_t bytes) noexcept {
  if (data == nullptr || bytes == 0) return nullptr;
  void* p = const_cast<void*>(data);
  if (cudaHostRegister(p, bytes, cudaHostRegisterPortable | cudaHostRegisterReadOnly) !=
      cudaSuccess) {
    (void)cudaGetLastError();  // not a sticky error: the context stays usable
    return nullptr;
  }
  try {
    return std::shared_ptr<void>(p, [](void* q) { (void)cudaHostUnregister(q); });
  } catch (const std::bad_alloc&) {
    (void)cudaHostUnregister(p);
    return nullptr;
  }
}

HostPin::HostPin(const void* data, std::size_t bytes) {
  if (data == nullptr || bytes == 0) return;
  MJPEG_CUDA_CHECK(cudaHostRegister(const_cast<void*>(data), bytes, cudaHostRegisterPortable));
  data_ = const_cast<void*>(data);
}

HostPin::~HostPin() {
  if (data_) MJPEG_CUDA_WARN(cudaHostUnregister(data_));
}

HostPin::HostPin(HostPin&& other) noexcept : data_(other.data_) { other.data_ = nullptr; }

HostPin& HostPin::operator=(HostPin&& other) noexcept {
  if (this != &other) {
    if (data_) MJPEG_CUDA_WARN(cudaHostUnregister(data_));
    data_ = other.data_;
    other.data_ = nullptr;
  }
  return *this;
}

}  // namespace mjpeg::gpu
