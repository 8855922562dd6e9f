#include "info_command.hpp"

#include <fmt/format.h>

#include "image_input.hpp"
#include "mjpeg/encoder.hpp"

#if MJPEG_HAVE_OPENCV
#include <opencv2/core/version.hpp>
#endif

namespace mjpeg::app {

void print_version_info(std::FILE* out) { fmt::print(out, "mjpeg {}\n", version()); }

void print_build_info(std::FILE* out) {
#if MJPEG_HAVE_OPENCV
  fmt::print(out, "OpenCV: yes ({})\n", CV_VERSION);
#else
  fmt::print(out, "OpenCV: no\n");
#endif
  fmt::print(out, "inputs: {}\n", supported_input_formats());
  fmt::print(out, "build type: {}\n", MJPEG_APP_BUILD_TYPE);
  fmt::print(out, "CUDA architectures: {}\n", MJPEG_APP_CUDA_ARCHITECTURES);
}

void run_info(std::FILE* out) {
  print_version_info(out);
  print_build_info(out);
  // Run-time sections (e.g. CUDA devices) are called here once they exist.
}

}  // namespace mjpeg::app
