// The names of the GPU output as the CLI and the reports write them, and
// whether an NVIDIA driver is loaded: plain C++, in every build (a CPU-only build parses and
// prints the names too, and then refuses the mode).
#include <sys/stat.h>

#include <string>

#include "device_info.hpp"

#include "gpu_tokenize.hpp"
#include "gpu_transform.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg::gpu {

const char* to_string(GpuOutput o) { return o == GpuOutput::tokens ? "tokens" : "coefficients"; }

GpuOutput parse_gpu_output(const std::string& text) {
  if (text == "tokens") return GpuOutput::tokens;
  if (text == "coefficients") return GpuOutput::coefficients;
  throw UsageError("unknown GPU output '" + text + "' (expected tokens or coefficients)");
}

bool driver_loaded() {
  struct stat st {};
  return ::stat("/proc/driver/nvidia", &st) == 0;
}

}  // namespace mjpeg::gpu
