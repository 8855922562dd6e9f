// Video files decoded by FFmpeg's own libraries (builds with libav*): the source's colour matrix
// and range honoured, the display matrix applied as ffmpeg applies it, truncation and damage
// detected (see libav_source.cpp).
#pragma once

#include <string>

#include "video_input.hpp"

namespace mjpeg::app {

/// Opens `path` (a regular file). Throws Error naming the file.
VideoInput open_libav(const std::string& path, const InputOptions& options);

/// How open_libav's reader gives frames of pixel format `pix_fmt` (an AVPixelFormat) in colour
/// space `colorspace` (an AVColorSpace), full range or not, `width` x `height` as stored, to
/// the encoder: planar (format yuv420p, ..., with the conversion's coefficients; --colorspace
/// and --range applied) or, format rgb24, converted by libswscale. `reduced` is set for the
/// 10- and 12-bit 4:2:0 formats, which are reduced to 8-bit planes first.
VideoOptions libav_frame_format(int pix_fmt, int colorspace, bool full_range, int width,
                                int height, const InputOptions& options, bool& reduced);

/// The "{matrix} {range} range" words of the input line for frames of those tags.
std::string libav_colour_words(int colorspace, bool full_range, const InputOptions& options);

}  // namespace mjpeg::app
