// Frame sources of `mjpeg encode` for streams: Y4M (our own reader; every build), video files
// through FFmpeg's libraries with the source's colour matrix and range (builds with libav*;
// otherwise OpenCV's FFmpeg backend, which treats every source as BT.601), and image sequences
// through OpenCV (builds with OpenCV).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mjpeg/options.hpp"
#include "mjpeg/video.hpp"

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

/// How a stream input is read (the command line's input options).
struct InputOptions {
  std::int64_t start = 0;        ///< --start: frames before this one are read and dropped
  std::int64_t max_frames = -1;  ///< --frames: at most this many from `start` on (-1 = all)
  /// --keep-going: a truncated or damaged input encodes what can be decoded, with a notice of
  /// what was lost, instead of failing; an image sequence skips its gaps.
  bool keep_going = false;
  bool autorotate = true;        ///< false: --no-autorotate (display matrix, EXIF orientation)
  int stream = -1;               ///< --stream N: the N-th video stream (0-based); -1 = the best
  std::int64_t start_number = -1;  ///< image sequences: the first number (-1: the lowest found)
  std::string colorspace;        ///< --colorspace: "", "bt601", "bt709", "bt2020"
  std::string range;             ///< --range: "", "limited", "full"
  /// How decoded video reaches the encoder (--rgb-decode). false (default, planar): frames of
  /// the common 8-bit YCbCr formats (yuv420p, yuvj420p, yuv422p, yuvj422p, nv12, gray) go to
  /// the encoder as planes, converted to RGB by the transforms with the integer arithmetic of
  /// jpeg_math.hpp (libswscale's own, truncated form for 4:2:0 / 4:2:2 of even height; the
  /// rounded form otherwise) and the source's matrix and range (or --colorspace / --range); a
  /// display matrix turns the planes. 4:4:4 and every other format go through libswscale (for
  /// rgb24 it filters 4:4:4 chroma to half width: no per-pixel conversion gives its RGB).
  /// true (swscale): libswscale converts every frame to rgb24 on the CPU (exactly
  /// `ffmpeg -pix_fmt rgb24`). Y4M input is always planar.
  bool rgb_swscale = false;
  /// --decoder: who decodes compressed video (H.264, HEVC, VP9; MPEG-2 stays on the CPU):
  /// "gpu" (NVDEC, into device memory; an error where it cannot), "cpu" (FFmpeg's libavcodec)
  /// or "auto" (the GPU where the encode runs on one and NVDEC can decode the stream, else the
  /// CPU, with one notice when a GPU encode gets CPU-decoded frames).
  std::string decoder = "auto";
  /// The CUDA device the encode runs on (its NVDEC decodes); -1: the encode runs on the CPU.
  int gpu_device = -1;
  int decoders = 0;  ///< --decoders: NVDEC decoders at once on one file (0: 7)
  /// A regular Y4M file: true maps it and lends its frames where they lie (the cpu mode
  /// transforms them there, no copy); false reads each frame into its slot (pread), which the
  /// GPU modes use: page-locking a mapping for the GPU's copies (cudaHostRegister) holds the
  /// driver's lock while it runs and stalls every other thread's CUDA calls. The environment
  /// variable MJPEG_Y4M_MAP=1 / =0 forces either (to compare them).
  bool map_y4m = true;
  /// Reads one file of an image sequence (default: read_input_image, i.e. PPM/PGM or OpenCV).
  std::function<Image(const std::string& path)> read_image;
};

/// An opened stream input: the library's source of its frames, their format, and what the
/// user is told about it.
struct VideoInput {
  std::unique_ptr<mjpeg::FrameSource> source;
  /// The frames' size and format (width, height, format, matrix, range, coefficients; the
  /// rest of the options at their defaults).
  VideoOptions format;
  int fps_num = 25, fps_den = 1;
  std::int64_t frame_count = -1;  ///< -1 when unknown (a pipe, a container without a count)
  /// The source has no colour: a grey picture or image sequence (format gray8), a mono Y4M
  /// (yuv400p), a grey video (gray, gray10, ya8, ... also where libswscale makes rgb24 of it).
  /// `mjpeg encode` writes grayscale JPEGs of it unless -s asks for colour.
  bool gray = false;
  std::string description;        ///< one line: size, rate, pixel format, reader
  std::vector<std::string> notices;
  /// After the last frame was read (not after an interruption or --frames): what the user
  /// should know about the whole stream (frames lost with --keep-going, timing evened out).
  std::function<std::vector<std::string>()> final_notices;

  VideoInput();
  ~VideoInput();
  VideoInput(VideoInput&&) noexcept;
  VideoInput& operator=(VideoInput&&) noexcept;

  struct Owned;                   ///< readers the source refers to
  std::unique_ptr<Owned> owned;
};

/// Opens a Y4M, image-sequence or video input. Throws Error (unreadable, zero frames,
/// unsupported) or UsageError.
VideoInput open_video_input(const std::string& path, InputKind kind, const InputOptions& options);
inline VideoInput open_video_input(const std::string& path, InputKind kind,
                                   std::int64_t max_frames) {
  InputOptions o;
  o.max_frames = max_frames;
  return open_video_input(path, kind, o);
}

}  // namespace mjpeg::app
