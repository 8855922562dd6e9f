// nvJPEG as an in-process peer of `mjpeg compare`, loaded at run time with dlopen (libnvjpeg
// from the CUDA installation on the machine), so that one binary runs with and without it and
// says why when it is not there. Plain C++ API: no CUDA or nvJPEG types. A peer of the
// benchmarks, not part of the library: only the CLI links it (a build without CUDA gets a
// peer that says so).
//
// What it measures is what nvJPEG's own sample does and what compare's frames allow: all frames
// copied into pinned host memory first (not timed); then T host threads, each with its own CUDA
// stream, encoder state and device frame, upload frame i (i % T == thread), encode it on the GPU
// (nvJPEG does the Huffman coding there as well) and retrieve the bitstream. nvJPEG's output is
// a valid JPEG of the same quality and sampling, not libjpeg's bytes (its own DCT and rounding).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mjpeg/options.hpp"

namespace mjpeg::app {

struct NvjpegResult {
  bool available = false;
  std::string why_not;       ///< when not available (no library, no device, an nvJPEG error)
  std::string library;       ///< the library that was loaded
  int threads = 0;
  double wall_s = 0;         ///< the median pass over all frames
  std::int64_t frames = 0;
  std::uint64_t jpeg_bytes = 0;
};

/// One warm-up pass, then `repeat` timed passes over `frames` (rgb24; same size); the median
/// by wall time. Quality and subsampling from `options` (gray, restart intervals and optimized
/// tables are reported as not available: nvJPEG's encoder is compared as configured here only
/// where it can do the same thing). Never throws for a missing library or device.
NvjpegResult run_nvjpeg(const std::vector<ImageView>& frames, const EncodeOptions& options,
                        int threads, int repeat, int device);

}  // namespace mjpeg::app
