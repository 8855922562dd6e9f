// Page-locking memory the process may only read (a read-only file mapping), so that a GPU
// copies straight from it (the page cache) at full PCIe speed.
#pragma once

#include <cstddef>
#include <memory>

namespace mjpeg::gpu {

/// Page-locks [data, data + bytes) read-only for every device's context (cudaHostRegister,
/// portable and read-only) until the returned handle is destroyed (cudaHostUnregister).
/// Never throws: null when the range cannot be locked (no device, a device without read-only
/// registration, memory limits); copies from the range still work then, staged by the driver.
std::shared_ptr<void> try_pin_read_only(const void* data, std::size_t bytes) noexcept;

}  // namespace mjpeg::gpu
