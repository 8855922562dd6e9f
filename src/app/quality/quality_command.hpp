// `mjpeg quality SOURCE ENCODED`: PSNR (RGB, Y, Cb, Cr) and SSIM (Y) of every frame pair, with a
// summary, CSV/JSON files and pictures; `mjpeg quality --sweep INPUT`: rate-distortion points
// of the encoder (and libjpeg-turbo) over a range of qualities. Colour spaces: see
// src/quality/metrics.hpp and README "Checking quality".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "quality/metrics.hpp"

namespace CLI {
class App;
}

namespace mjpeg::app {

struct QualityArgs {
  std::vector<std::string> files;  ///< SOURCE ENCODED (empty with --sweep)
  std::string sweep;               ///< --sweep INPUT
  std::string qualities = "10:100:10";
  std::string subsampling = "420";  ///< --sweep: chroma subsampling
  std::string tunes = "none,psnr,ssim";  ///< --sweep: table presets, one pair of curves each
  bool progressive = false;              ///< --sweep: each preset also with --progressive
  std::int64_t frames = -1;        ///< at most this many frames (--sweep: default 1)
  /// --start: SOURCE's frames before this one are skipped, so that ENCODED's first frame is
  /// paired with SOURCE's frame `start` (a segment made with `encode --start`).
  std::int64_t start = 0;
  std::string csv, json;           ///< figure files
  std::string plot, worst, sheet;  ///< PNG pictures
  int sheet_frames = 12;
  int threads = 0;                 ///< 0 = all cores
  bool overwrite = false;
  bool quiet = false;              ///< summary only (no per-frame lines)
};

/// Adds `mjpeg quality` to `app`; the parsed values land in `args`.
CLI::App* add_quality_command(CLI::App& app, QualityArgs& args);

/// Runs it. Returns 0; throws UsageError (exit 2) or Error (exit 1, e.g. mismatched sizes or
/// frame counts, unreadable files). Outputs are written atomically, after all frames compared.
int run_quality(const QualityArgs& args);

/// The summary as lines of text ("PSNR RGB  min 36.10  mean 37.02  max 38.00 dB", ...).
std::vector<std::string> summary_lines(const quality::Summary& s);

}  // namespace mjpeg::app
