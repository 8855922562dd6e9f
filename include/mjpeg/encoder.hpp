// Baseline JPEG encoding on the CPU, byte-identical to libjpeg-turbo
// (islow DCT, jpeg_set_quality(q, TRUE), standard or optimal Huffman tables).
#pragma once

#include <cstdint>
#include <vector>

#include "mjpeg/options.hpp"

namespace mjpeg {

/// Encodes one image to a complete JFIF file (SOI..EOI).
/// RGB input with Subsampling::gray is converted to luma as libjpeg does;
/// gray8 input always gives a grayscale JPEG, whatever `options.subsampling` says.
/// Throws UsageError for invalid options or sizes (0, or above kMaxDimension).
std::vector<std::uint8_t> encode_jpeg(const ImageView& image, const EncodeOptions& options);

/// The encoder's version string, e.g. "0.1.0".
const char* version();

}  // namespace mjpeg
