#include "host_pin.hpp"

#include <cuda_runtime_api.h>

#include <new>

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

}  // namespace mjpeg::gpu
