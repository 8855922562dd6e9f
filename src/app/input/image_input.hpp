// Reading one input image for `mjpeg encode`: PPM/PGM with the project's own reader (always),
// other formats (PNG, JPEG, BMP, TIFF, WebP, ...) through OpenCV when the build has it.
#pragma once

#include <functional>
#include <string>

#include "mjpeg/options.hpp"

namespace mjpeg::app {

/// Receives one-line notices about lossy conversions (alpha dropped, 16 to 8 bits).
using NoticeSink = std::function<void(const std::string&)>;

/// A short description of the input formats this build reads, for help and errors.
std::string supported_input_formats();

/// Reads `path` as an 8-bit RGB or gray image.
/// - PPM/PGM (recognised by their signature) always use read_pnm.
/// - Otherwise, with OpenCV: cv::imread(IMREAD_UNCHANGED); BGR becomes RGB, gray stays gray
///   (also a grey+alpha PNG, which OpenCV expands to BGRA: its grey is kept), alpha is dropped and 16-bit samples become 8-bit with cjpeg's rounding for maxval 65535,
///   (v * 255 + 32767) / 65535, each reported once through `notice`.
///   The EXIF orientation of a JPEG or TIFF file is applied (the picture is turned as viewers
///   show it, with a notice) unless `autorotate` is false.
/// - Without OpenCV, any other file is refused with an error naming the supported formats.
/// Throws mjpeg::Error naming the file when it is missing, empty, a directory, unreadable or
/// cannot be decoded.
Image read_input_image(const std::string& path, const NoticeSink& notice,
                           bool autorotate = true);

/// True when `path` starts with the signature of a picture read_input_image takes: PPM/PGM
/// always; with OpenCV also PNG, JPEG, BMP, TIFF, WebP, JPEG 2000, OpenEXR, Radiance HDR, PFM
/// and Sun raster. False for anything else (a video, an audio file with a cover picture, a
/// file that cannot be read) and for what is not a regular file (a pipe is read once, by its
/// reader).
bool is_still_image_file(const std::string& path);

/// What a picture file's header says of its colour, without decoding it: 1 when it is grey
/// (PGM; PNG of colour type grey or grey+alpha; JPEG of one component), 0 when it is in colour
/// (PPM; any other PNG; JPEG of 3 or 4 components), -1 when it cannot tell (another format, a
/// file that cannot be read).
int picture_is_grey(const std::string& path);

/// Throws Error (exit 1, like every input problem) when `width` x `height` is beyond what
/// libjpeg reads and writes (kMaxDimension, 65500, per side), naming `name`.
void check_jpeg_size(const std::string& name, long long width, long long height);

/// Throws UsageError when --optimize's symbol counts (32 bits per symbol, as the coder keeps
/// them) could overflow for a frame of this size and sampling (only near 65500x65500 at 4:4:4
/// or 4:2:2).
void check_optimize_size(int width, int height, Subsampling sampling, bool optimize);

/// The resolution of a BMP file (BITMAPINFOHEADER or later: biXPelsPerMeter,
/// biYPelsPerMeter) as cjpeg carries it into the JFIF header: dots per cm, each the pixels per
/// metre / 100. False when `path` is no such BMP or either value is not positive.
bool bmp_density(const std::string& path, int& x_dots_per_cm, int& y_dots_per_cm);

/// The EXIF Orientation (1..8) of a JPEG (APP1 "Exif") or TIFF file; 1 when it has none or it
/// cannot be read. Reads only the file's first 64 KiB. For a TIFF file, sets `*tiff` and its
/// stored ImageWidth x ImageLength (when the pointers are given).
int exif_orientation(const std::string& path, bool* tiff = nullptr, int* width = nullptr,
                     int* height = nullptr);

}  // namespace mjpeg::app
