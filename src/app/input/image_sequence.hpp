// Image sequences ("frames/%05d.png") as a stream: the files of the pattern found in its
// directory, from --start-number (default: the lowest number present) without gaps. A missing
// number is an error naming the first missing file (with --keep-going the gaps are skipped,
// with a notice). Every build reads them (PPM/PGM always, other formats through OpenCV); each
// producer decodes its own file, so N producers decode N files at once.
#pragma once

#include <string>

#include "video_input.hpp"

namespace mjpeg::app {

/// Opens the sequence `pattern`; 25 frames/s, like ffmpeg's image2 demuxer. Throws Error.
VideoInput open_image_sequence(const std::string& pattern, const InputOptions& options);

}  // namespace mjpeg::app
