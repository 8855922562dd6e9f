// Frame sources of `mjpeg encode` for streams (an input opened and recognised by open_input,
// input_file.hpp): Y4M (our own reader; every build), raw frames described on the command line,
// video through FFmpeg's libraries with the source's colour matrix and range (builds with
// libav*; otherwise OpenCV's FFmpeg backend, which treats every source as BT.601, for files
// only), and image sequences (PPM/PGM always, other formats through OpenCV).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/common/part_range.hpp"
#include "input_file.hpp"
#include "mjpeg/options.hpp"
#include "mjpeg/video.hpp"

namespace mjpeg::app {

class NvdecOpening;  // nvdec_input.hpp

/// Headerless frames, one after another (`ffmpeg ... -f rawvideo -pix_fmt F -`), described on
/// the command line in ffmpeg's words.
struct RawFormat {
  std::string pix_fmt;  ///< yuv420p, yuv422p, yuv444p, nv12, gray, rgb24 or bgr24; "": not raw
  int width = 0, height = 0;
  int fps_num = 25, fps_den = 1;
  bool fps_given = false;  ///< --fps was given (else 25/1 is assumed, with a notice)
  bool given() const { return !pix_fmt.empty(); }
};

/// How a stream input is read (the command line's input options).
struct InputOptions {
  /// --start: frames before this one are not encoded (Y4M files and image sequences go
  /// straight to it; videos through FFmpeg's libraries seek to the keyframe before it; other
  /// readers read and drop them)
  std::int64_t start = 0;
  std::int64_t max_frames = -1;  ///< --frames: at most this many from `start` on (-1 = all)
  /// --part I/K: only part I of K equal ranges of the frames `start` and `max_frames` select,
  /// worked out from the input's frame count (VideoInput::plan). Needs a count that is exact:
  /// a Y4M file's size, an image sequence's files, a video's packets (FFmpeg's libraries).
  PartSpec part;
  /// --keep-going: a truncated or damaged input encodes what can be decoded, with a notice of
  /// what was lost, instead of failing; an image sequence skips its gaps.
  bool keep_going = false;
  bool autorotate = true;        ///< false: --no-autorotate (display matrix, EXIF orientation)
  int stream = -1;               ///< --stream N: the N-th video stream (0-based); -1 = the best
  std::int64_t start_number = -1;  ///< image sequences: the first number (-1: the lowest found)
  std::string colorspace;        ///< --colorspace: "", "bt601", "bt709", "bt2020"
  std::string range;             ///< --range: "", "limited", "full"
  /// How decoded video reaches the encoder (--rgb-decode). false (default, planar): frames of
  /// 4:2:0 and 4:2:2 (yuv420p, yuvj420p, yuv422p, yuvj422p) of even height and gray go to the
  /// encoder as planes, converted to RGB by the transforms with libswscale's own integer
  /// arithmetic (ycbcr.hpp) and the source's matrix and range (or --colorspace / --range); a
  /// display matrix turns the planes. Odd heights, 4:4:4, nv12 and every other format go
  /// through libswscale (its scaler, chroma filters and interpolation: no per-pixel conversion
  /// gives its RGB). true (swscale): libswscale converts every frame to rgb24 on the CPU. Either
  /// way the RGB is `ffmpeg -pix_fmt rgb24`'s. Y4M and raw frames follow the same rule
  /// (ycbcr.hpp) whatever this says.
  bool rgb_swscale = false;
  /// --decoder: who decodes compressed video (H.264, HEVC, VP9; MPEG-2 stays on the CPU):
  /// "gpu" (NVDEC, into device memory; an error where it cannot), "cpu" (FFmpeg's libavcodec)
  /// or "auto" (the GPU where the encode runs on one and NVDEC can decode the stream, else the
  /// CPU, with one notice when a GPU encode gets CPU-decoded frames).
  std::string decoder = "auto";
  /// The CUDA device the encode runs on (its NVDEC decodes); -1: the encode runs on the CPU.
  int gpu_device = -1;
  int decoders = 0;  ///< --decoders: NVDEC decoders at once on one file (0: 7)
  /// The file's opening for NVDEC, begun ahead on a thread of its own (begin_nvdec_opening):
  /// what open_nvdec would do first, taken by it when it opens this file.
  std::shared_ptr<NvdecOpening> nvdec_opening;
  /// A regular Y4M file: true maps it and lends its frames where they lie (the cpu mode
  /// transforms them there, no copy); false reads each frame into its slot (pread), which the
  /// GPU modes use: page-locking a mapping for the GPU's copies (cudaHostRegister) holds the
  /// driver's lock while it runs and stalls every other thread's CUDA calls. The environment
  /// variable MJPEG_Y4M_MAP=1 / =0 forces either (to compare them).
  bool map_y4m = true;
  /// Reads one file of an image sequence (default: read_input_image, i.e. PPM/PGM or OpenCV).
  std::function<Image(const std::string& path)> read_image;
  /// Raw frames (--pix-fmt, --size, --fps): their format, which the input cannot say.
  RawFormat raw;
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
  /// The frames' pixel aspect ratio (width over height of one pixel): a video's, a Y4M
  /// header's A tag; 1:1 when the input does not say.
  int aspect_num = 1, aspect_den = 1;
  /// A video decoded by FFmpeg's libraries: it has an audio stream beside the video (which an
  /// output may carry, libav_extras.hpp); the index of the video stream that is decoded; the
  /// time of its first frame, seconds (where the output's time 0 lies in the input's).
  bool has_audio = false;
  int video_stream = -1;
  double start_seconds = 0;
  /// After the last frame was read (not after an interruption or --frames): what the user
  /// should know about the whole stream (frames lost with --keep-going, timing evened out).
  std::function<std::vector<std::string>()> final_notices;
  /// With InputOptions::part (and, for videos, --start): how the range was planned.
  std::optional<PartPlan> plan;
  /// Frames the reader decoded (or read) so far, those before the range included; unset when
  /// it decodes nothing it does not hand on.
  std::function<std::int64_t()> frames_decoded;
  /// Frames decoded on the GPU (NVDEC): a line for --stats and --decode-only on what its
  /// decoders did (busy share, time to make them, first frame); unset otherwise.
  std::function<std::string()> decoder_activity;

  VideoInput();
  ~VideoInput();
  VideoInput(VideoInput&&) noexcept;
  VideoInput& operator=(VideoInput&&) noexcept;

  /// Keeps `file`, which the source reads, for as long as the source lives.
  void own(std::unique_ptr<InputFile> file);

  struct Owned;                   ///< readers the source refers to
  std::unique_ptr<Owned> owned;
};

/// Opens a stream input (Y4M, raw, image sequence or video; `input.kind` says which). Throws
/// Error (unreadable, zero frames, unsupported) or UsageError.
VideoInput open_video_input(Input input, const InputOptions& options);
/// open_input(path) (raw when options.raw says so), then the above; a still picture is refused.
VideoInput open_video_input(const std::string& path, const InputOptions& options);
inline VideoInput open_video_input(const std::string& path, std::int64_t max_frames) {
  InputOptions o;
  o.max_frames = max_frames;
  return open_video_input(path, o);
}

/// Frames x pixels of the video file at `path` as its container's header announces them (the
/// frame count open_video_input takes, `options.start` and `options.max_frames` applied), read
/// without FFmpeg's probe of its packets (which decodes several frames of H.264: 0.25-0.4 s at
/// 4K); empty where the header does not say (Matroska, raw streams), where several video
/// streams leave the choice to the probe, or in a build without FFmpeg's libraries. Never
/// throws.
std::optional<double> video_header_pixels(const std::string& path, const InputOptions& options);

}  // namespace mjpeg::app
