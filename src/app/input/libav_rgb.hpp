// libswscale's conversion to rgb24 as the ffmpeg program sets it up, into memory laid out as
// FFmpeg lays out its frames (builds with FFmpeg's libraries only).
//
// Given rows exactly width*3 bytes long, libswscale's SIMD converters (which work in groups of 8
// or 16 pixels) either leave the last pixels of each row unconverted (6 black columns at
// 854x480) or write past the end of a row and of the last one. ffmpeg's own frames have rows
// aligned to 64 bytes with room to spare, where neither happens; so the conversion writes into
// such a buffer and the rows are copied out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "mjpeg/video.hpp"

struct AVFrame;
struct SwsContext;

namespace mjpeg::app {

/// Bytes `scratch` needs for a padded rgb24 frame of width x height.
std::size_t padded_rgb_bytes(int width, int height);

/// Converts `frame` with `sws` (set up for frame -> rgb24 of width x height) into `scratch`
/// (padded_rgb_bytes long, allocated by the caller once) and copies the rows to `dst` (rows
/// `stride` bytes apart). Returns the aligned start of the padded image in `scratch` and its
/// row stride through `padded_stride` (for callers that rotate from there instead).
const std::uint8_t* sws_to_rgb24(SwsContext* sws, const AVFrame& frame, int width, int height,
                                 std::vector<std::uint8_t>& scratch, std::uint8_t* dst,
                                 std::size_t stride, std::size_t* padded_stride = nullptr);

/// A scaler of width x height frames of pixel format `pix_fmt` to rgb24 of the same size, as
/// ffmpeg's automatic conversion sets it up (SWS_BICUBIC, nothing else), reading YCbCr with the
/// coefficient table `table` (sws_getCoefficients) and `full` range. Null when libswscale
/// cannot convert the format.
SwsContext* rgb24_scaler(int width, int height, int pix_fmt, const int* table, bool full);

/// The frames of `planes` (planar frames of `format`: yuv420p, yuv422p or yuv444p, contiguous
/// as FrameView::contiguous lays them out) converted to rgb24 by libswscale with `format`'s
/// matrix (its libswscale table) and range: the RGB `ffmpeg -pix_fmt rgb24` gives for them.
/// `planes` is read in frame order (one read at a time); the conversions run outside that, on
/// any number of threads.
std::unique_ptr<mjpeg::FrameSource> swscale_source(std::unique_ptr<mjpeg::FrameSource> planes,
                                                   const VideoOptions& format,
                                                   const int* table);

}  // namespace mjpeg::app
