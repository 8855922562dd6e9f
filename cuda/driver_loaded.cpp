// Whether an NVIDIA kernel driver is loaded (device_info.hpp): plain C++, in every build, so
// that a CPU-only build can still say that the machine has a GPU it does not use.
#include <sys/stat.h>

#include "device_info.hpp"

namespace mjpeg::gpu {

bool driver_loaded() {
  struct stat st {};
  return ::stat("/proc/driver/nvidia", &st) == 0;
}

}  // namespace mjpeg::gpu
