// Pictures of `mjpeg quality`: figures over frames, the worst frame side by side with a
// magnified, colour-mapped difference, a contact sheet, and the rate-distortion plot of
// --sweep. Drawn with OpenCV (src/plot/chart.hpp); in builds without OpenCV every function
// throws Error saying so (commands check pictures_available() before doing any work).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mjpeg/options.hpp"
#include "quality/metrics.hpp"

namespace mjpeg::app {

/// True when this build can draw pictures (it has OpenCV).
bool pictures_available();

/// --plot: PSNR (RGB, Y, Cb, Cr) and SSIM (Y) over frames, two panels, axes labelled.
/// Frame numbers on the x axis are 1-based.
void write_frames_plot(const std::vector<quality::FrameMetrics>& frames, const std::string& title,
                       const std::string& path, bool overwrite);

/// --worst: source | encoded | difference of one frame (`frame` 0-based), each labelled, with
/// the frame number and its figures in the header. The difference is the largest absolute
/// channel difference per pixel, multiplied so that its 99.5th percentile is bright (the gain
/// is written on the picture; brighter pixels saturate) and colour-mapped (inferno: black =
/// equal). Frames are shown 480..960 pixels wide (small ones magnified).
void write_worst_picture(const Image& source, const Image& encoded, std::int64_t frame,
                         const quality::FrameMetrics& m, const std::string& path, bool overwrite);

/// A frame kept for the contact sheet: a small rgb24 copy and its figures.
struct Thumbnail {
  std::int64_t frame = 0;  ///< 0-based
  Image image;
  double psnr_rgb = 0, ssim_y = 0;
};

/// A small rgb24 copy of `image`, at most `max_width` pixels wide (area-averaged).
Image make_thumbnail(const Image& image, int max_width);

/// --sheet: the thumbnails in a grid, each captioned with its frame number (1-based) and PSNR.
void write_contact_sheet(const std::vector<Thumbnail>& thumbs, const std::string& title,
                         const std::string& path, bool overwrite);

/// One rate-distortion point of --sweep.
struct RdPoint {
  std::string encoder;  ///< "mjpeg", "mjpeg --optimize", "libjpeg-turbo", ...
  int quality = 0;      ///< JPEG quality (ffmpeg: its -q:v)
  std::uint64_t bytes = 0;
  double bits_per_pixel = 0;
  double psnr_rgb = 0, ssim_y = 0;
};

/// --sweep --plot: size (bits per pixel) against PSNR and against SSIM, one series per
/// encoder; `labels` maps an encoder name to its legend text (same order as first seen).
void write_rd_plot(const std::vector<RdPoint>& points,
                   const std::vector<std::pair<std::string, std::string>>& labels,
                   const std::string& title, const std::string& path, bool overwrite);

}  // namespace mjpeg::app
