// Raw frames: headerless pictures one after another, as `ffmpeg ... -f rawvideo -pix_fmt F -`,
// camera SDKs and OpenCV programs write them, described on the command line (--pix-fmt, --size,
// --fps: RawFormat). The planar YCbCr formats take the path of the same planes read from a Y4M
// stream (ycbcr.hpp: ffmpeg's RGB), so that raw frames and their Y4M encode to the same bytes;
// nv12's interleaved chroma is split into the Cb and Cr planes it holds (the yuv420p frame that
// ffmpeg's yuv4mpegpipe writes of it); rgb24 and bgr24 are pixels as they are.
#pragma once

#include <memory>

#include "input_file.hpp"
#include "video_input.hpp"

namespace mjpeg::app {

/// The pixel formats raw frames may have (ffmpeg's names), for help and errors.
const char* raw_pixel_formats();

/// Opens the raw frames of `file` as options.raw describes them (--start and --frames
/// applied). A regular file is read at each frame's offset, several frames at once; a stream
/// one frame after another. A last frame cut short is an error, or with options.keep_going
/// left out with a final notice. Throws Error or UsageError (an unknown pixel format, no size).
VideoInput open_raw(std::unique_ptr<InputFile> file, const InputOptions& options);

}  // namespace mjpeg::app
