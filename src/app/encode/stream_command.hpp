// `mjpeg encode` for streams: a video, Y4M, raw or image-sequence input (or one image) to an
// AVI, a raw .mjpeg stream or numbered JPEG files, through the streaming pipeline (cpu/sok/aok).
#pragma once

#include <chrono>

#include "app/input/input_file.hpp"
#include "encode_command.hpp"

namespace mjpeg::app {

/// Throws UsageError when the stream options (counts, kernel variant, GPU output) are out of
/// range: checked before the input is opened.
void check_stream_options(const EncodeArgs& args);

/// Throws UsageError when `output` names no kind this build writes (listing the kinds), or a
/// muxer output (.mkv / .mov) this build's FFmpeg cannot write.
void check_output_name(const std::string& output);

/// True when `output` names one JPEG picture (.jpg / .jpeg, not a pattern).
bool is_single_jpeg(const std::string& output);

/// Runs the streaming encode of `input` (opened and recognised; the output checked already,
/// see run_encode); returns the process exit code (0, or 130 after an interruption that still
/// finalised a playable output). `t0`: when the command started. Throws UsageError / Error
/// like run_encode.
int run_encode_stream(const EncodeArgs& args, Input input,
                      std::chrono::steady_clock::time_point t0);

}  // namespace mjpeg::app
