// Page-locking host memory that already exists, so that a GPU copies straight from it at full
// PCIe speed: a range the process owns (HostPin) or may only read (a read-only file mapping,
// try_pin_read_only).
#pragma once

#include <cstddef>
#include <memory>

namespace mjpeg::gpu {

/// Page-locks an existing host range (cudaHostRegister, portable: pinned for every device's
/// context, so that several stream buffers upload from it) so that copies from it run at full
/// PCIe speed and asynchronously, until destroyed (cudaHostUnregister). Move-only. Throws
/// mjpeg::Error when the range cannot be registered.
class HostPin {
 public:
  HostPin() = default;
  HostPin(const void* data, std::size_t bytes);
  ~HostPin();
  HostPin(HostPin&& other) noexcept;
  HostPin& operator=(HostPin&& other) noexcept;
  HostPin(const HostPin&) = delete;
  HostPin& operator=(const HostPin&) = delete;

 private:
  void* data_ = nullptr;
};

/// Page-locks [data, data + bytes) read-only for every device's context (cudaHostRegister,
/// portable and read-only) until the returned handle is destroyed (cudaHostUnregister).
/// Never throws: null when the range cannot be locked (no device, a device without read-only
/// registration, memory limits); copies from the range still work then, staged by the driver.
std::shared_ptr<void> try_pin_read_only(const void* data, std::size_t bytes) noexcept;

}  // namespace mjpeg::gpu
