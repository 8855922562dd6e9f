// `mjpeg encode` for streams: a video, Y4M or image-sequence input (or one image) to an AVI,
// a raw .mjpeg stream or numbered JPEG files, through the streaming pipeline (cpu/sok/aok).
#pragma once

#include "encode_command.hpp"

namespace mjpeg::app {

/// True when `args` asks for the streaming path (a stream input or a stream output).
bool is_stream_request(const EncodeArgs& args);

/// Runs the streaming encode; returns the process exit code (0, or 130 after an interruption
/// that still finalised a playable output). Throws UsageError / Error like run_encode.
int run_encode_stream(const EncodeArgs& args);

}  // namespace mjpeg::app
