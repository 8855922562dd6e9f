// Picture quality metrics of a decoded frame against its source: PSNR per plane and SSIM on luma.
// Plain C++ (no OpenCV, no FFmpeg), used by `mjpeg quality` and `mjpeg encode --psnr`.
//
// Colour spaces (what each figure is computed on):
//  - R, G, B and "RGB": the 8-bit RGB frames as given. The RGB figure is PSNR of the mean of
//    the three channels' MSE, which is what ffmpeg's `psnr` filter reports as "average" for
//    rgb24 (gbrp) frames.
//  - Y, Cb, Cr: full-range ("JPEG") BT.601 YCbCr at full resolution (4:4:4), computed from each
//    RGB pixel with libjpeg's own fixed-point conversion (src/core/jpeg_math.hpp, the encoder's
//    arithmetic). Chroma is compared before any subsampling, so Cb/Cr errors include what
//    subsampling and upsampling lost.
//  - SSIM: on that Y plane, computed as ffmpeg's `ssim` filter computes it: 8x8 windows on a
//    4-pixel grid (only whole windows; rows and columns past the last multiple of 4 ignored),
//    unweighted window sums, C1 = round(0.01^2 * 255^2 * 64), C2 = round(0.03^2 * 255^2 * 64 * 63)
//    in the sum domain, and the mean over all windows.
// Gray frames count as R = G = B (so Y is the gray value and Cb = Cr = 128).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "mjpeg/options.hpp"

namespace mjpeg::quality {

/// PSNR in dB of a mean squared error for 8-bit samples: 10 log10(255^2 / mse); +infinity when
/// mse is 0 (identical).
double psnr_from_mse(double mse);

/// Figures of one frame pair.
struct FrameMetrics {
  double mse_r = 0, mse_g = 0, mse_b = 0;   ///< RGB channels
  double mse_y = 0, mse_cb = 0, mse_cr = 0;  ///< full-range BT.601 YCbCr, 4:4:4
  double ssim_y = 1;                         ///< SSIM on Y (ffmpeg's windowing); NaN below 8x8

  double mse_rgb() const { return (mse_r + mse_g + mse_b) / 3.0; }
  double psnr_rgb() const { return psnr_from_mse(mse_rgb()); }
  double psnr_y() const { return psnr_from_mse(mse_y); }
  double psnr_cb() const { return psnr_from_mse(mse_cb); }
  double psnr_cr() const { return psnr_from_mse(mse_cr); }
};

/// Compares `distorted` against `reference` (same size and format; rgb24 or gray8, any stride).
/// `threads` >= 1 splits the rows over that many threads (the result does not depend on it).
/// Throws UsageError when sizes or formats differ or a view is empty.
FrameMetrics compare(const ImageView& reference, const ImageView& distorted, int threads = 1);

/// SSIM of two 8-bit planes as ffmpeg's `ssim` filter computes it (see the header comment).
/// Planes smaller than 8x8 have no whole window: the result is then NaN (undefined).
double ssim_plane(const std::uint8_t* a, std::size_t a_stride, const std::uint8_t* b,
                  std::size_t b_stride, int width, int height, int threads = 1);

/// The full-range BT.601 luma plane of an rgb24 or gray8 view (libjpeg's conversion), packed.
std::vector<std::uint8_t> luma_plane(const ImageView& image);

/// One figure over many frames.
struct Range {
  double min = std::numeric_limits<double>::infinity();
  double mean = 0;
  double max = -std::numeric_limits<double>::infinity();
};

/// Summary over frames. PSNR "mean" is the PSNR of the mean MSE over the frames (ffmpeg's
/// "average"; frames with identical pictures then cannot make it infinite alone); min and max
/// are over the per-frame PSNRs. SSIM mean is the plain mean of the per-frame values; where no
/// frame has one (pictures under 8x8), min, mean and max are NaN (undefined: ffmpeg's ssim
/// filter gives no figure either, printing nan or inf), never +-infinity.
struct Summary {
  std::int64_t frames = 0;
  Range psnr_rgb, psnr_y, psnr_cb, psnr_cr, ssim_y;
  /// Frame indices (0-based), lowest RGB PSNR first (ties: lower SSIM, then lower index).
  std::vector<std::int64_t> worst;
};

/// Summarises per-frame figures; `worst_count` frames are listed in Summary::worst.
Summary summarize(const std::vector<FrameMetrics>& frames, std::size_t worst_count = 5);

/// "inf" for +infinity, else the value with `decimals` decimals.
std::string format_db(double db, int decimals = 2);

}  // namespace mjpeg::quality
