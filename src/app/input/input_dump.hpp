// `mjpeg encode --dump-input DIR`: the exact pixels the encoder encoded, one PPM (PGM for gray
// input) per frame, DIR/000001.ppm for frame 1 and so on; so that anyone can check a frame
// against cjpeg: `cjpeg -quality Q -sample HxV DIR/000001.ppm` writes the bytes of frame 1.
// Planar input (Y4M, decoded video) is dumped as the RGB the transforms made of its planes.
#pragma once

#include <cstdint>
#include <string>

#include "mjpeg/options.hpp"

namespace mjpeg::app {

class InputDump {
 public:
  /// Creates `dir` when it does not exist. Throws Error when it cannot, or (without
  /// `overwrite`) when the first frame's file is already there.
  InputDump(std::string dir, bool overwrite);

  /// The frames are grey (R = G = B where they come as rgb24, e.g. planar mono input) and
  /// encoded as grayscale JPEGs: every frame is written as PGM.
  void grey_frames() { grey_ = true; }

  /// Thread-safe: writes frame `index` (0-based) atomically. Throws Error on failure.
  void add(std::int64_t index, const ImageView& pixels) const;

  /// The file of frame `index` for `format` (".ppm" for rgb24, ".pgm" for gray8).
  std::string file_name(std::int64_t index, PixelFormat format) const;

 private:
  std::string dir_;
  bool overwrite_;
  bool grey_ = false;
};

}  // namespace mjpeg::app
