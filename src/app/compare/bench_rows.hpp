// The rows of `mjpeg bench`: one per measured configuration, written and read back as CSV
// (so that plots can be drawn on another machine than the one that measured).
#pragma once

#include <string>
#include <vector>

namespace mjpeg::app {

struct BenchRow {
  std::string sweep;  ///< resolution, threads, cpu, slots, stages, devices
  std::string mode;   ///< cpu, sok, sok-pinned, aok, libjpeg-turbo
  int width = 0, height = 0;
  int frames = 0;
  int producers = 0, entropy_threads = 0, slots = 0, stages = 0;
  std::string variant;
  double fps = 0;
  std::string bound_stage;
  double bound_fps = 0;
  // Busy time per frame (ms, summed over the stage's threads); -1 where the mode has none.
  double produce_ms = -1, upload_ms = -1, kernel_ms = -1, download_ms = -1, entropy_ms = -1,
         write_ms = -1;
  double overlap = 0, h2d_gbps = 0, d2h_gbps = 0;
  double kb_per_frame = 0;
  bool identical = true;
  int devices = 1;    ///< stream buffers (device-list entries) of a GPU mode; 1 otherwise
};

/// The CSV text: a header line, then one line per row.
std::string bench_csv(const std::vector<BenchRow>& rows);
/// Parses bench_csv's text; throws Error naming the line on a malformed one.
std::vector<BenchRow> parse_bench_csv(const std::string& text);

}  // namespace mjpeg::app
