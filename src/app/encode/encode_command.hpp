// `mjpeg encode INPUT -o OUTPUT`: one image to one JPEG file.
#pragma once

#include <cstdint>
#include <string>

#include "mjpeg/options.hpp"
#include "app/input/video_input.hpp"

namespace mjpeg::app {

struct EncodeArgs {
  std::string input;
  std::string output;
  EncodeOptions options;
  bool overwrite = false;  ///< -y: replace an existing output
  bool quiet = false;      ///< no notices, no summary
  bool psnr = false;       ///< --psnr: print PSNR/SSIM of what was written (quality_hook.hpp)
  std::string dump_input;  ///< --dump-input DIR: the encoded pixels as PPM/PGM (input_dump.hpp)

  // Streaming (video) options; see stream_command.hpp.
  std::string mode;                ///< "cpu", "sok", "aok", or "" = aok when a GPU is usable
  std::int64_t frames = -1;        ///< --frames: at most this many (-1 = all)
  std::int64_t start = 0;          ///< --start: skip this many frames first (a frame range)
  int producers = 0;               ///< 0 = default
  int slots = 0;                   ///< 0 = default
  int entropy_threads = 0;         ///< 0 = the cores left over
  int device = 0;
  bool device_given = false;       ///< --device was on the command line
  /// -s was on the command line: a grey source then makes the frames it asks for (3-component
  /// frames unless -s gray); without it a grey source makes grayscale JPEGs.
  bool subsampling_given = false;
  std::string devices;             ///< --devices: a list or "all" ("" = {device})
  std::string variant = "pipeline";
  std::string gpu_output = "auto";  ///< sok/aok: auto, tokens or coefficients
  int stages = 2;
  bool pinned = false;             ///< sok: pinned host memory
  bool stats = false;              ///< --stats: per-stage busy time after the summary
  bool decode_only = false;        ///< --decode-only: decode the input, encode nothing
  std::string rgb_decode = "planar";  ///< --rgb-decode: planar or swscale (video_input.hpp)
  bool progress = false;           ///< --progress: progress lines also off a terminal
  bool no_audio = false;           ///< --no-audio: leave the input's audio out
  bool first_frame_of_gif = false; ///< set by the stream path: a GIF's first frame to a .jpg
  InputOptions input_options;      ///< how the input is read (--keep-going, --stream, ...);
                                   ///< its max_frames and rgb_swscale are set from `frames` and
                                   ///< `rgb_decode`
};

/// Checks the request (output extension, output == input, existing output), reads the input,
/// encodes it and writes the output atomically, then prints a one-line summary on stderr
/// unless quiet. Stream requests (video inputs or outputs) go to run_encode_stream.
/// Returns the exit code (0, or 130 after an interrupted stream). Throws UsageError for
/// invalid requests and Error for runtime failures; on any failure nothing exists under the
/// output name that was not there before.
int run_encode(const EncodeArgs& args);

}  // namespace mjpeg::app
