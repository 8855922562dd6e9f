// Reading one still picture: PPM/PGM with the project's own reader (always), other formats
// (PNG, JPEG, BMP, TIFF, WebP, ...) through OpenCV when the build has it; from its bytes, so
// that a picture read from a pipe is read as from a file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "input_file.hpp"
#include "mjpeg/options.hpp"

namespace mjpeg::app {

/// Receives one-line notices about lossy conversions (alpha dropped, 16 to 8 bits).
using NoticeSink = std::function<void(const std::string&)>;

/// A short description of the input formats this build reads, for help and errors.
std::string supported_input_formats();

/// A BMP's resolution as cjpeg carries it into the JFIF header: dots per cm.
struct Density {
  int x_dots_per_cm = 0, y_dots_per_cm = 0;
  bool given() const { return x_dots_per_cm > 0 && y_dots_per_cm > 0; }
};

/// Decodes `bytes`, the whole content of the input `name`, as an 8-bit RGB or gray image,
/// recognised by its content:
/// - PPM/PGM (their signature) with the project's own reader (pnm.hpp, cjpeg's rounding).
/// - Otherwise, with OpenCV: cv::imdecode(IMREAD_UNCHANGED); BGR becomes RGB, gray stays gray
///   (also a grey+alpha PNG, which OpenCV expands to BGRA: its grey is kept),
///   alpha is dropped and 16-bit samples become 8-bit with cjpeg's rounding for maxval 65535,
///   (v * 255 + 32767) / 65535, each reported once through `notice`.
///   The EXIF orientation of a JPEG or TIFF is applied (the picture is turned as viewers
///   show it, with a notice) unless `autorotate` is false.
/// - Without OpenCV, any other content is refused with an error naming the supported formats.
/// `density`, when given, receives a BMP's resolution. Throws mjpeg::Error naming the input when
/// it is empty or cannot be decoded.
Image decode_input_image(const std::vector<std::uint8_t>& bytes, const std::string& name,
                         const NoticeSink& notice, bool autorotate = true,
                         Density* density = nullptr);
/// decode_input_image of the whole of `file`.
Image read_input_image(InputFile& file, const NoticeSink& notice, bool autorotate = true,
                       Density* density = nullptr);
/// The same for the file at `path` (an image sequence's file, bench's picture). Throws Error
/// when it is missing, a directory or unreadable.
Image read_input_image(const std::string& path, const NoticeSink& notice, bool autorotate = true);

/// What a picture file's header says of its colour, without decoding it: 1 when it is grey
/// (PGM; PNG of colour type grey or grey+alpha; JPEG of one component), 0 when it is in colour
/// (PPM; any other PNG; JPEG of 3 or 4 components), -1 when it cannot tell (another format, a
/// file that cannot be read).
int picture_is_grey(const std::string& path);
/// The same of a picture's first `n` bytes (all of them for a JPEG whose APP segments are long).
int picture_is_grey(const unsigned char* bytes, std::size_t n);

/// Throws Error (exit 1, like every input problem) when `width` x `height` is beyond what
/// libjpeg reads and writes (kMaxDimension, 65500, per side), naming `name`.
void check_jpeg_size(const std::string& name, long long width, long long height);

/// Throws UsageError when --optimize's symbol counts (32 bits per symbol, as the coder keeps
/// them) could overflow for a frame of this size and sampling (only near 65500x65500 at 4:4:4
/// or 4:2:2).
void check_optimize_size(int width, int height, Subsampling sampling, bool optimize);

/// The resolution of a BMP (BITMAPINFOHEADER or later: biXPelsPerMeter, biYPelsPerMeter) in
/// `bytes` as cjpeg carries it into the JFIF header: dots per cm, each the pixels per metre /
/// 100. None when `bytes` are no such BMP or either value is not positive.
Density bmp_density(const std::uint8_t* bytes, std::size_t size);

/// The EXIF Orientation (1..8) of a JPEG (APP1 "Exif") or TIFF held in `bytes` (its first 64 KiB
/// are looked at); 1 when it has none or it cannot be read. For a TIFF, sets `*tiff` and its
/// stored ImageWidth x ImageLength (when the pointers are given).
int exif_orientation(const std::uint8_t* bytes, std::size_t size, bool* tiff = nullptr,
                     int* width = nullptr, int* height = nullptr);

}  // namespace mjpeg::app
