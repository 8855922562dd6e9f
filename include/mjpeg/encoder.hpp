// mjpeg image API: one picture to one baseline JPEG, on the CPU, byte-identical to
// libjpeg-turbo (islow integer DCT, libjpeg's quality scaling as cjpeg applies it, standard or
// optimal Huffman tables). For video see mjpeg/video.hpp.
#pragma once

#include <cstdint>
#include <vector>

#include "mjpeg/options.hpp"

namespace mjpeg {

/// Encodes one image to a complete JFIF file (SOI..EOI).
///
/// @param image    the pixels: rgb24 or gray8, `stride` bytes from one row to the next
///                 (stride >= width * channels). Only read; not kept after the call.
/// @param options  quality, subsampling, restart interval, Huffman optimization, quantization
///                 tables (see EncodeOptions). RGB input with Subsampling::gray is converted
///                 to luma as libjpeg does; gray8 input always gives a grayscale JPEG, whatever
///                 `options.subsampling` says.
/// @return the JPEG file's bytes: what `cjpeg` writes for the same pixels and settings.
/// @throws UsageError for invalid options (validate()), a null `image.data`, a size of 0 or
///         above kMaxDimension, a stride smaller than a row, or `optimize` where
///         optimize_fits() is false.
/// Threading: reentrant; any number of threads may encode at once (no shared state). Runs on
/// the calling thread only.
std::vector<std::uint8_t> encode_jpeg(const ImageView& image, const EncodeOptions& options);

/// The same bytes, on up to `threads` threads for the latency of one large picture (the
/// calling thread is one of them): the transform and the Huffman coding (and the statistics
/// of options.optimize) are cut into ranges of MCU rows that are processed at once and joined
/// bit-exactly. 0: one thread per core. A picture gets no more threads than it has parts of
/// about half a megapixel (a smaller one is encoded on the calling thread), nor more than MCU
/// rows; a progressive file's scans are coded on one thread. Threads are started for the call
/// and joined before it returns.
/// @throws UsageError as encode_jpeg above, and for threads < 0.
std::vector<std::uint8_t> encode_jpeg(const ImageView& image, const EncodeOptions& options,
                                      int threads);

/// False when optimized Huffman tables (EncodeOptions::optimize, baseline) cannot be built for
/// a width x height picture at `subsampling`: one symbol could occur more often than the 32-bit
/// counts of the statistics pass hold (4:4:4 chroma of pictures above about 46700x46700). encode_jpeg,
/// VideoEncoder and encode_all refuse such a picture with a UsageError; a program can ask
/// first. Never throws (false for an invalid size).
bool optimize_fits(int width, int height, Subsampling subsampling);

/// The library's version, e.g. "0.1.0" (a static string; never throws).
const char* version();

}  // namespace mjpeg
