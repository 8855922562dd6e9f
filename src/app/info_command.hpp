// `mjpeg info`: version and build configuration.
#pragma once

#include <cstdio>

namespace mjpeg::app {

/// Prints the report of `mjpeg info` to `out`: a "version" section and a "build" section.
/// Each section is one function below, printed in order by run_info(); further sections
/// (e.g. the CUDA devices seen at run time) are added as functions of their own, in their own
/// files, and called from run_info().
void run_info(std::FILE* out);

/// "mjpeg X.Y.Z".
void print_version_info(std::FILE* out);

/// Options this binary was built with (OpenCV, build type, CUDA architectures).
void print_build_info(std::FILE* out);
/// CUDA devices (name, memory, compute capability), or why there are none.
void print_device_info(std::FILE* out);

}  // namespace mjpeg::app
