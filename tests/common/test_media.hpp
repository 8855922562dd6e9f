// Test images: the shared media directory, PNG loading (libpng), Kodak images, crops, mosaics
// and a deterministic synthetic generator. Shared by the CPU and GPU test binaries and the
// benchmarks (library mjpeg_test_common).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "mjpeg/options.hpp"

namespace mjpeg::test {

/// An owned 8-bit image, interleaved, rows packed (stride = width * channels).
struct Image {
  int width = 0;
  int height = 0;
  int channels = 0;  ///< 3 (RGB) or 1 (gray)
  std::vector<std::uint8_t> pixels;

  std::size_t stride() const { return static_cast<std::size_t>(width) * channels; }
  /// A view for the encoder; rgb24 for 3 channels, gray8 for 1.
  ImageView view() const;
};

/// The shared media directory: env MJPEG_MEDIA_DIR if set, else the compile-time
/// MJPEG_MEDIA_DIR (default <source>/../shared/media). Throws std::runtime_error naming the
/// path (and how to override it) when the directory does not exist; inside a test, prefer
/// require_media_dir(), which turns that into a fatal test failure.
std::string media_dir();

/// Loads an 8-bit RGB or gray image from a PNG file. Palette images become RGB, gray+alpha
/// becomes gray, alpha is dropped (not composited), 16-bit samples keep their high byte
/// (libpng's png_set_scale_16), low bit depths are expanded. Throws std::runtime_error with the
/// path on any failure.
Image load_png(const std::string& path);

/// kodim01.png .. kodim24.png from <media>/images/kodak (1-based index), cached per process.
/// Throws std::runtime_error naming the path when missing.
const Image& kodak(int index);

/// Landscape Kodak images in the order the benchmark mosaics tile them (25 entries).
const std::vector<int>& kodak_mosaic_order();

/// A width x height RGB mosaic of 768x512 Kodak images at native scale, tiled left to right,
/// top to bottom in kodak_mosaic_order() (cycled), max(5, ceil(width/768)) tiles per row, then
/// cropped at (0,0). For width <= 3840 this is exactly make-bench-frames.sh's k4k crop
/// (1920x1080 = its khd.png).
Image kodak_mosaic(int width, int height);

/// Sub-image [x, x+w) x [y, y+h); throws std::out_of_range when it is not inside `img`.
Image crop(const Image& img, int x, int y, int w, int h);

/// Luma of an RGB image is not needed by the tests; this keeps channel 0 only (for gray8 input
/// built from a colour photo).
Image first_channel(const Image& img);

/// Deterministic synthetic image (same bytes on every machine): smooth gradients, a few hard
/// edges and xorshift noise of amplitude `noise` (0..255). `seed` varies the pattern.
Image synthetic(int width, int height, int channels, std::uint32_t seed = 1, int noise = 48);

/// Writes a binary PPM (3 channels) or PGM (1 channel). Throws std::runtime_error on failure.
void write_pnm(const Image& img, const std::string& path);

}  // namespace mjpeg::test

/// Inside a TEST: fails (fatally) with a clear message when the media directory is missing.
#define MJPEG_REQUIRE_MEDIA()                                                   \
  do {                                                                          \
    try {                                                                       \
      (void)::mjpeg::test::media_dir();                                         \
    } catch (const std::exception& e_) {                                        \
      GTEST_FAIL() << e_.what();                                                \
    }                                                                           \
  } while (0)
