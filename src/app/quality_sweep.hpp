// `mjpeg quality --sweep INPUT`: encodes the input's first frame (or --frames N frames) in
// memory at each quality, with and without --optimize, decodes each JPEG (jpeg_decoder.hpp) and
// measures bits per pixel, PSNR (RGB) and SSIM (Y). libjpeg-turbo's points (TurboJPEG,
// TJFLAG_ACCURATEDCT, same subsampling) are measured the same way and their bytes compared with
// ours. Prints a table; --csv writes the points, --plot the size/quality chart.
#pragma once

#include <string>
#include <vector>

#include "quality_command.hpp"

namespace mjpeg::app {

/// "10:100:10" -> 10, 20, ..., 100 (the last value always included); "75" -> 75.
/// Throws UsageError for anything else or values outside 1..100.
std::vector<int> parse_qualities(const std::string& text);

/// Runs the sweep (args.sweep is the input). Returns 0; throws Error/UsageError.
int run_quality_sweep(const QualityArgs& args);

}  // namespace mjpeg::app
