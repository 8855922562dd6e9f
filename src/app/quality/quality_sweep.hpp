// `mjpeg quality --sweep INPUT`: encodes the input's first frame (or --frames N frames) in
// memory at each quality, for each table preset of --tunes (none, psnr, ssim), with and without
// --optimize, decodes each JPEG (jpeg_decoder.hpp) and measures bytes, bits per pixel, PSNR
// (RGB) and SSIM (Y). Peers measured the same way: libjpeg-turbo (TurboJPEG, TJFLAG_ACCURATEDCT,
// same subsampling; its bytes compared with ours) and, when `ffmpeg` is on PATH, ffmpeg's MJPEG
// encoder run on INPUT itself at -q:v 2..31 (as a user would run it: videos keep their own
// YCbCr planes; -pix_fmt yuvj420p/yuvj422p/yuvj444p/gray after -s). Prints a table; --csv
// writes the points, --plot the size/quality chart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "quality_command.hpp"

namespace mjpeg::app {

/// "10:100:10" -> 10, 20, ..., 100 (the last value always included); "75" -> 75.
/// Throws UsageError for anything else or values outside 1..100.
std::vector<int> parse_qualities(const std::string& text);

/// "none,psnr" -> {Tune::none, Tune::psnr}; throws UsageError for an unknown or repeated name.
std::vector<Tune> parse_tunes(const std::string& text);

/// Splits a raw M-JPEG stream (JPEGs back to back, as ffmpeg's mjpeg muxer writes them) into
/// its JPEGs, walking the marker segments and the entropy-coded data to each EOI. Throws Error
/// when the stream is not such a sequence.
std::vector<std::vector<std::uint8_t>> split_mjpeg(const std::vector<std::uint8_t>& stream);

/// Runs the sweep (args.sweep is the input). Returns 0; throws Error/UsageError.
int run_quality_sweep(const QualityArgs& args);

}  // namespace mjpeg::app
