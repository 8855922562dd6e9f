// `mjpeg compare INPUT`: the frames are decoded once into memory, then encoded by each mode
// (cpu, sok, sok-pinned, aok) with identical settings and by libjpeg-turbo; the outputs must be
// byte-identical. Prints frames/s, speed-up over SOK, each stage's busy time and share of the
// wall time, the GPU overlap, PCIe rates, bytes per frame, and the bound the slowest stage sets;
// optionally writes the figures as JSON, the timeline as a Chrome trace and a Gantt picture.
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "mjpeg/options.hpp"

namespace mjpeg::app {

struct CompareArgs {
  std::string input;
  std::string modes;           ///< comma list; "" = cpu,sok,aok (cpu alone without a GPU)
  std::int64_t frames = 120;   ///< frames to hold in memory and encode per run
  int repeat = 3;              ///< timed runs per mode (after one warm-up); the median is shown
  std::string size;            ///< "WxH" for a still-image input (panning frames)
  EncodeOptions options;
  std::string subsampling = "420";
  int producers = 0, entropy_threads = 0, slots = 0;  ///< 0 = defaults (as encode)
  int device = 0;
  std::string devices;         ///< --devices: a list or "all" ("" = {device})
  std::string variant = "pipeline";
  std::string gpu_output = "auto";  ///< sok/aok: auto, tokens or coefficients
  int stages = 2;
  int nvjpeg_threads = 4;      ///< the nvJPEG row's threads/streams (0: no row)
  std::string json, trace, gantt;  ///< optional outputs (replaced if they exist)
  bool quiet = false;
};

CLI::App* add_compare_command(CLI::App& app, CompareArgs& args);
int run_compare(CompareArgs& args);

}  // namespace mjpeg::app
