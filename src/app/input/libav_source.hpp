// Video files decoded by FFmpeg's own libraries (builds with libav*): the source's colour matrix
// and range honoured, the display matrix applied as ffmpeg applies it, truncation and damage
// detected (see libav_source.cpp).
#pragma once

#include <string>
#include <vector>

#include "video_input.hpp"

struct AVFormatContext;

namespace mjpeg::app {

/// Keeps FFmpeg's own log messages off stderr (once per process): the readers say what went
/// wrong in their one-line errors, from the messages they collect about their own files.
void quiet_libav_messages();

/// The indices of the video streams of `f` that are moving pictures (`attached` false) or the
/// attached cover pictures (`attached` true), in the file's order: what --stream N counts.
std::vector<int> libav_video_streams(const AVFormatContext* f, bool attached);

/// Opens `file`, which FFmpeg's own probe recognises (a regular file is read with seeks, a
/// stream once, front to back). Throws Error naming the input. The source reads `file`, which
/// must outlive it.
VideoInput open_libav(InputFile& file, const InputOptions& options);

/// video_header_pixels (video_input.hpp) with FFmpeg's libraries.
std::optional<double> libav_header_pixels(const std::string& path, const InputOptions& options);

/// How open_libav's reader gives frames of pixel format `pix_fmt` (an AVPixelFormat) in colour
/// space `colorspace` (an AVColorSpace), full range or not, `width` x `height` as stored, to
/// the encoder: planar (format yuv420p, ..., with the conversion's coefficients; --colorspace
/// and --range applied) or, format rgb24, converted by libswscale. `reduced` is set for the
/// 10- and 12-bit 4:2:0 formats, which are reduced to 8-bit planes first; `*swscale_after` when
/// those planes (yuv420p, returned) are then converted to RGB by libswscale (an odd height).
VideoOptions libav_frame_format(int pix_fmt, int colorspace, bool full_range, int width,
                                int height, const InputOptions& options, bool& reduced,
                                bool* swscale_after = nullptr);

/// The libswscale coefficient table (sws_getCoefficients) and range that frames of those tags
/// are converted to RGB with (--colorspace and --range applied).
const int* libav_sws_table(int colorspace, const InputOptions& options);
bool libav_full_range(bool full_range, const InputOptions& options);

/// The "{matrix} {range} range" words of the input line for frames of those tags.
std::string libav_colour_words(int colorspace, bool full_range, const InputOptions& options);

}  // namespace mjpeg::app
