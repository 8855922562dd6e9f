// Decoding one JPEG held in memory to 8-bit RGB, for quality figures of what the encoder wrote
// (`mjpeg encode --psnr`, `mjpeg quality --sweep`).
//
// With FFmpeg's libraries (MJPEG_HAVE_LIBAV) it decodes exactly as `mjpeg quality` decodes an
// M-JPEG AVI: libavcodec's mjpeg decoder, then libswscale (bicubic, full-range BT.601, the
// JFIF colour space) to rgb24, so `encode --psnr` and `quality` print the same figures. Without
// them it uses libjpeg-turbo's TurboJPEG (accurate IDCT, fancy upsampling), whose chroma
// upsampling differs slightly. Builds with neither cannot decode: the constructor throws.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mjpeg/options.hpp"

namespace mjpeg::app {

class JpegDecoder {
 public:
  JpegDecoder();  ///< throws Error when this build has no JPEG decoder
  ~JpegDecoder();
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;

  /// Decodes a complete JPEG (SOI..EOI) into `out` as rgb24 (gray JPEGs give R = G = B).
  /// Not thread-safe: use one decoder per thread. Throws Error on a damaged JPEG.
  void decode(const std::vector<std::uint8_t>& jpeg, Image& out);

  /// Which library decodes, for messages ("FFmpeg's mjpeg decoder", "libjpeg-turbo").
  static std::string backend();
  /// True when this build can decode JPEGs at all.
  static bool available();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mjpeg::app
