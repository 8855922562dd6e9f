#include "info_command.hpp"

#include <string>

#include <fmt/format.h>

#include "app/common/paths.hpp"
#include "mjpeg/devices.hpp"
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
#if MJPEG_HAVE_LIBAV
  fmt::print(out, "FFmpeg libraries: yes (video input with the source's colour matrix, its audio "
                  "and metadata; .mkv and .mov outputs)\n");
#else
  fmt::print(out, "FFmpeg libraries: no\n");
#endif
#if MJPEG_HAVE_TURBOJPEG
  fmt::print(out, "TurboJPEG: yes (the libjpeg-turbo row of compare and bench)\n");
#else
  fmt::print(out, "TurboJPEG: no\n");
#endif
  // Every kind of input this build reads, and every output it writes.
  std::string inputs = "Y4M (a file, a FIFO or - for standard input), PPM/PGM pictures, ";
#if MJPEG_HAVE_OPENCV
  inputs += "image sequences such as frames/%05d.png";
#else
  inputs += "PPM/PGM image sequences such as frames/%05d.ppm";
#endif
#if MJPEG_HAVE_LIBAV
  inputs += ", videos through FFmpeg's libraries (MP4, MKV, WebM, AVI, MOV, MPEG-TS, GIF, ...)";
#elif MJPEG_HAVE_OPENCV
  inputs += ", videos through OpenCV's FFmpeg backend (MP4, MKV, WebM, AVI, ...; BT.601 colour)";
#endif
#if MJPEG_HAVE_OPENCV
  inputs += ", PNG, JPEG, BMP, TIFF, WebP and other pictures through OpenCV";
#elif !MJPEG_HAVE_LIBAV
  inputs += "; no video (pipe it as Y4M from ffmpeg) and no other pictures: built without "
            "FFmpeg's libraries and OpenCV";
#endif
  fmt::print(out, "inputs: {}\n", inputs);
  fmt::print(out, "outputs: {}\n", supported_output_extensions());
  fmt::print(out, "build type: {}\n", MJPEG_APP_BUILD_TYPE);
  fmt::print(out, "loaded on first use: {}\n",
             *MJPEG_APP_LAZY_LIBS ? MJPEG_APP_LAZY_LIBS : "nothing (every library at start)");
  fmt::print(out, "CUDA architectures: {}\n", MJPEG_APP_CUDA_ARCHITECTURES);
}

void print_device_info(std::FILE* out) {
  std::string reason;
  const std::vector<GpuDevice> devices = gpu_devices(&reason);
  if (devices.empty()) {
    fmt::print(out, "CUDA devices: none ({}); encoding runs on the CPU\n", reason);
    return;
  }
  fmt::print(out, "CUDA devices: {}\n", devices.size());
  for (const GpuDevice& d : devices) {
    fmt::print(out, "  [{}] {}, {:.1f} GiB, compute capability {}.{}, {} SMs: {}\n", d.index,
               d.name, static_cast<double>(d.memory_bytes) / (1024.0 * 1024.0 * 1024.0),
               d.compute_major, d.compute_minor, d.multiprocessors,
               d.usable ? "usable" : "unusable (" + d.problem + ")");
  }
}

void run_info(std::FILE* out) {
  print_version_info(out);
  print_build_info(out);
  print_device_info(out);
}

}  // namespace mjpeg::app
