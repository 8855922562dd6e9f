// Public encoder options and image views. No CUDA, OpenCV or libjpeg types here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace mjpeg {

/// Chroma sampling of the output. `gray` writes a single-component (luma) JPEG.
enum class Subsampling { s444, s422, s420, gray };

/// "444", "422", "420", "gray".
std::string to_string(Subsampling s);
/// Parses "444", "422", "420" or "gray"; throws UsageError otherwise.
Subsampling parse_subsampling(const std::string& text);

/// Largest width or height accepted: JPEG's own limit (16-bit fields of the SOF marker).
inline constexpr int kMaxDimension = 65535;
inline constexpr int kMaxRestartInterval = 65535;

struct EncodeOptions {
  int quality = 90;                        ///< 1..100, libjpeg's scaling of the Annex K tables
  Subsampling subsampling = Subsampling::s420;
  int restart_interval = 0;                ///< in MCUs; 0 = no restart markers
  bool optimize = false;                   ///< per-frame optimal Huffman tables (libjpeg's two-pass)
};

/// Throws UsageError when a field is out of range (nothing is clamped).
void validate(const EncodeOptions& options);

enum class PixelFormat { rgb24, gray8 };

inline constexpr int channels(PixelFormat f) { return f == PixelFormat::rgb24 ? 3 : 1; }

/// A read-only view of interleaved 8-bit pixels, row-major, `stride` bytes between rows.
struct ImageView {
  const std::uint8_t* data = nullptr;
  int width = 0;
  int height = 0;
  PixelFormat format = PixelFormat::rgb24;
  std::size_t stride = 0;
};

}  // namespace mjpeg
