// `mjpeg bench INPUT`: sweeps of the streaming encoder on frames cut from INPUT (held in
// memory), written as CSV rows, with PNG plots when the build can draw:
//   resolution  every size (default 1920x1080, 3840x2160, 7680x4320) x every mode, default
//               counts: fps and per-stage time vs resolution
//   threads     the first size x every mode x entropy threads M (1 .. the cores), plus
//               libjpeg-turbo on N + M threads: fps vs threads
//   cpu         the first size: the cpu mode on T worker threads (1 .. the cores, or
//               --threads) beside libjpeg-turbo on T threads: fps vs threads
//   slots       the first size x every mode x slots K (1..8): fps vs slots
//   stages      the first size x aok x cuda::pipeline stages (1..4)
//   devices     the first size x every GPU mode x device count 1, 2, 4, ... and all of
//               --devices (the list's first entries): fps per device count (run only when
//               --devices lists more than one)
// Every run at one size is checked byte for byte against the first run at that size.
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "mjpeg/options.hpp"

namespace mjpeg::app {

struct BenchArgs {
  std::string input;
  std::string sizes = "1920x1080,3840x2160,7680x4320";
  std::string modes;            ///< "" = cpu,sok,aok (cpu without a GPU)
  std::string threads;          ///< entropy threads list (also the cpu sweep's threads);
                                ///< "" = 1, 2, 4, ... up to the cores
  std::string slots = "1,2,3,4,6,8";
  std::string stages = "1,2,3,4";
  std::string sweeps = "resolution,threads,cpu,slots,stages,devices";
  std::int64_t frames = 60;     ///< frames per run at 1920x1080; scaled by area, at least 40
  int repeat = 3;
  EncodeOptions options;
  std::string subsampling = "420";
  int producers = 0;
  int device = 0;
  std::string devices;          ///< --devices: a list or "all" ("" = {device}); every sweep
                                ///< uses all of them, the devices sweep their first 1, 2, ...
  std::string variant = "pipeline";
  std::string csv = "bench.csv";
  std::string plots;            ///< directory for the PNG plots ("" = none)
  std::string from;             ///< redraw the plots from this CSV instead of measuring
  bool quiet = false;
};

CLI::App* add_bench_command(CLI::App& app, BenchArgs& args);
int run_bench(BenchArgs& args);

}  // namespace mjpeg::app
