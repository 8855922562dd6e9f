// The PNG plots of `mjpeg bench` (builds with OpenCV): in DIR,
//   fps_vs_threads.png    frames/s against entropy threads, a line per mode and libjpeg-turbo
//   fps_vs_slots.png      frames/s against stream-buffer slots, a line per mode
//   stages_vs_resolution.png  per-stage busy time per frame against megapixels, a panel per
//                         mode, plus frames/s against megapixels
//   fps_vs_stages.png     aok frames/s against cuda::pipeline stages
// A plot whose sweep has no rows is not drawn.
#pragma once

#include <string>
#include <vector>

#include "bench_rows.hpp"

namespace mjpeg::app {

/// Throws Error when this build cannot draw (no OpenCV), before any measuring.
void check_bench_plots_possible();

/// Writes the plots into `dir` (created if missing; existing plots are replaced).
void write_bench_plots(const std::vector<BenchRow>& rows, const std::string& dir);

}  // namespace mjpeg::app
