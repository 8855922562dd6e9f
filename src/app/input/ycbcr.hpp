// The RGB that planar YCbCr frames are encoded as, whichever way they arrive (a video file
// decoded by FFmpeg's libraries, a Y4M file or pipe, raw frames): `ffmpeg -pix_fmt rgb24`'s, i.e.
// libswscale's conversion of those planes, so that the same planes give the same JPEG and the
// quality figures agree with ffmpeg's filters. And what the user is told about a matrix or range
// that nothing states.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mjpeg/video.hpp"

namespace mjpeg::app {

struct InputOptions;

/// libswscale's coefficient table for `matrix` (what sws_getCoefficients() returns for
/// SWS_CS_ITU601, SWS_CS_ITU709, SWS_CS_BT2020: Cr->R, Cb->B, Cb->G, Cr->G in 16 fractional
/// bits). Its constants, so that builds without FFmpeg's libraries convert as it does too (the
/// tests compare them with sws_getCoefficients).
const int* swscale_table(YuvMatrix matrix);

/// How frames of `planes` (yuv420p, yuv422p, yuv444p or yuv400p), `height` rows tall, with the
/// matrix of libswscale table `table` and `range`, reach the encoder so that their RGB is
/// ffmpeg's, when the transforms can give it:
///  - 4:2:0 and 4:2:2 of even height: libswscale's unscaled converter, whose integer arithmetic
///    the transforms repeat (swscale_coefficients; nearest chroma);
///  - yuv400p (gray): R = G = B = Y, as libswscale's gray -> rgb24 gives it whatever the range.
/// Returns the planar format with its coefficients (width, height and format set), or nothing
/// when only libswscale itself gives ffmpeg's RGB: odd heights (libswscale then runs its
/// scaler, which interpolates chroma rows with its bicubic filter) and 4:4:4 (whose chroma it
/// filters to half width for rgb24).
std::optional<VideoOptions> ffmpeg_planes(FrameFormat planes, int width, int height,
                                          const int table[4], YuvRange range);

/// Planar frames of `planes` (width x height, `matrix`, `range`) as the encoder takes them:
/// ffmpeg_planes where that gives ffmpeg's RGB; otherwise, in builds with FFmpeg's libraries,
/// rgb24 frames made by libswscale (`swscale` is set: wrap the source in swscale_source); in
/// builds without them, the planes with the rounded conversion of the matrix and range, the
/// closest these builds have (`swscale` unset, `exact` unset).
struct PlanarInput {
  VideoOptions format;    ///< what the encoder gets
  VideoOptions planes;    ///< the frames as read (planar, before any libswscale conversion)
  bool swscale = false;   ///< libswscale converts each frame to rgb24
  bool exact = true;      ///< the RGB is ffmpeg's
  YuvMatrix matrix = YuvMatrix::bt601;
  YuvRange range = YuvRange::limited;
  /// For the input line: "ffmpeg's RGB, as planes" or "ffmpeg's RGB, converted by libswscale".
  std::string how() const;
};
PlanarInput planar_input(FrameFormat planes, int width, int height, YuvMatrix matrix,
                         YuvRange range);

/// `planes`, a source of the frames as read, as the encoder takes them: itself, or wrapped so
/// that libswscale converts each frame to rgb24 (`input.swscale`).
std::unique_ptr<mjpeg::FrameSource> planar_source(std::unique_ptr<mjpeg::FrameSource> planes,
                                                  const PlanarInput& input);

/// The source's matrix and range as --colorspace and --range state them (unset: not stated).
std::optional<YuvMatrix> stated_matrix(const InputOptions& options);
std::optional<YuvRange> stated_range(const InputOptions& options);

/// The notices for planar input whose matrix or range its header (`said_matrix`, `said_range`:
/// what it says, if anything) and the command line do not state, one line: `name` and `what`
/// ("the Y4M header does not say", "raw frames do not say") then what is assumed and which
/// options state the source's; and for a header overridden by --colorspace / --range, what was
/// used. `used_matrix` / `used_range`: what the frames are decoded with. Gray frames (whose RGB
/// is their luma whatever the matrix and range) need none.
void colour_notices(const std::string& name, const std::string& what, int width, int height,
                    std::optional<YuvMatrix> said_matrix, std::optional<YuvRange> said_range,
                    YuvMatrix used_matrix, YuvRange used_range, const InputOptions& options,
                    std::vector<std::string>& notices);

}  // namespace mjpeg::app
