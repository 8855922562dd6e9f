// Frame sources of `mjpeg encode` for streams: Y4M (our own reader; every build), video files
// through FFmpeg's libraries with the source's colour matrix and range (builds with libav*;
// otherwise OpenCV's FFmpeg backend, which treats every source as BT.601), and image sequences
// through OpenCV (builds with OpenCV).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/frame_source.hpp"

namespace mjpeg::app {

enum class InputKind {
  image,           ///< one still image (PPM/PGM, PNG, JPEG, ...)
  y4m,             ///< "*.y4m" or "-" (standard input)
  image_sequence,  ///< a printf pattern such as frames/%05d.png
  video,           ///< anything else: a container OpenCV/FFmpeg reads
};

/// Classifies an input path by its name (an unknown extension counts as a video).
InputKind input_kind(const std::string& path);
/// True for the extensions of common video containers (.mp4, .mkv, .webm, .avi, ...).
bool is_video_name(const std::string& path);

/// An opened stream input: the pipeline's source plus what the user is told about it.
struct VideoInput {
  std::unique_ptr<pipeline::FrameSource> source;
  int fps_num = 25, fps_den = 1;
  std::int64_t frame_count = -1;  ///< -1 when unknown (a pipe, a container without a count)
  std::string description;        ///< one line: size, rate, pixel format, reader
  std::vector<std::string> notices;

  VideoInput();
  ~VideoInput();
  VideoInput(VideoInput&&) noexcept;
  VideoInput& operator=(VideoInput&&) noexcept;

  struct Owned;                   ///< readers the source refers to
  std::unique_ptr<Owned> owned;
};

/// How decoded video reaches the encoder.
struct VideoOptions {
  /// false (default): frames of the common 8-bit YCbCr formats (yuv420p, yuvj420p, yuv422p,
  /// yuvj422p, yuv444p, yuvj444p, nv12, gray) go to the encoder as planes, converted to RGB by
  /// the transforms with the integer arithmetic of jpeg_math.hpp (libswscale's own, truncated
  /// form for 4:2:0 / 4:2:2 of even height; the rounded form otherwise) and the source's
  /// matrix and range. true: libswscale converts every frame to rgb24 on the CPU (exactly
  /// `ffmpeg -pix_fmt rgb24`). Y4M input is always planar.
  bool rgb_swscale = false;
};

/// Opens a Y4M, image-sequence or video input; `max_frames` < 0 reads everything.
/// Throws Error (unreadable, zero frames, unsupported) or UsageError.
VideoInput open_video_input(const std::string& path, InputKind kind, std::int64_t max_frames,
                            const VideoOptions& options = {});

}  // namespace mjpeg::app
