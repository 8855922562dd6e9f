// Video files decoded by FFmpeg's own libraries (builds with libav*): the source's colour matrix
// and range honoured, the display matrix applied as ffmpeg applies it, truncation and damage
// detected (see libav_source.cpp).
#pragma once

#include <string>

#include "video_input.hpp"

namespace mjpeg::app {

/// Opens `path` (a regular file). Throws Error naming the file.
VideoInput open_libav(const std::string& path, const InputOptions& options);

}  // namespace mjpeg::app
