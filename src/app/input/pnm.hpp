// Netpbm PPM/PGM reading and writing (no OpenCV).
//
// Reads P6/P5 (binary) and P3/P2 (ASCII) with maxval 1..65535, header comments included.
// Samples are brought to 8 bits exactly as libjpeg-turbo's cjpeg (rdppm.c) does, so that our
// JPEG of a PPM/PGM is byte-identical to `cjpeg` of the same file:
//   maxval == 255: samples are used as they are;
//   otherwise:     out = (v * 255 + maxval / 2) / maxval   (integer division).
// Unlike cjpeg, a sample above maxval is an error (cjpeg silently maps 8-bit ones to 0).
// Only the first image of a multi-image file is read; bytes after it are ignored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "mjpeg/options.hpp"

namespace mjpeg::app {

/// Scales a sample of 0..maxval to 0..255 with cjpeg's rounding (see above).
/// Requires 1 <= maxval <= 65535 and value <= maxval.
constexpr std::uint8_t rescale_sample(unsigned value, unsigned maxval) {
  return static_cast<std::uint8_t>((value * 255u + maxval / 2u) / maxval);
}

/// True when `data` starts like a Netpbm file ('P' and a digit 1..7), whatever its type.
bool looks_like_pnm(const std::uint8_t* data, std::size_t size);

/// Parses a PPM/PGM held in memory. `name` (usually the path) is put in error messages.
/// PPM gives rgb24, PGM gives gray8. Throws mjpeg::Error for corrupt, truncated or
/// unsupported data (PBM, PAM, sizes above kMaxDimension).
Image decode_pnm(const std::uint8_t* data, std::size_t size, const std::string& name);

/// Reads a PPM/PGM file. Throws mjpeg::Error naming the file when it cannot be read or parsed.
Image read_pnm(const std::string& path);

/// Encodes an image as binary PPM (rgb24) or PGM (gray8), maxval 255, no comments.
std::string encode_pnm(const ImageView& image);

/// Writes encode_pnm(image) to `path` (replacing it). Throws mjpeg::Error on failure.
void write_pnm(const std::string& path, const ImageView& image);

}  // namespace mjpeg::app
