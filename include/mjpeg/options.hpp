// Public encoder options and image views. No CUDA, OpenCV or libjpeg types here.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mjpeg {

/// Chroma sampling of the output. `gray` writes a single-component (luma) JPEG.
enum class Subsampling { s444, s422, s420, gray };

/// "444", "422", "420", "gray".
std::string to_string(Subsampling s);
/// Parses "444", "422", "420" or "gray"; throws UsageError otherwise.
Subsampling parse_subsampling(const std::string& text);

/// Where the colour conversion, downsampling, DCT and quantization of a video run (video.hpp's
/// file comment): on the CPU, or offloaded to a CUDA device synchronously (blocking copies from
/// pageable or page-locked host memory, launch, wait) or asynchronously (copies and kernels of
/// different frames overlap on dedicated CUDA streams). The same bytes in every mode.
enum class Offload { cpu, sok, sok_pinned, aok };

/// "cpu", "sok", "sok-pinned", "aok" (the CLI's spelling).
const char* to_string(Offload offload);
/// True for the modes that offload to a CUDA device (sok, sok_pinned, aok).
bool uses_gpu(Offload offload);

/// What sets the modes apart, in one place: the pipeline, its analysis and the CLI ask these
/// questions of a mode instead of naming modes.
struct OffloadTraits {
  bool gpu = false;           ///< the transform runs on a CUDA device
  bool pinned_host = false;   ///< host staging buffers are page-locked (and lent frames too)
  bool asynchronous = false;  ///< copies and kernels of different frames overlap (a dispatcher)
};
/// cpu {}, sok {gpu}, sok_pinned {gpu, pinned_host}, aok {gpu, pinned_host, asynchronous}.
OffloadTraits traits_of(Offload offload);
/// Parses the names of to_string(Offload). Throws UsageError for any other text.
Offload parse_offload(const std::string& text);

/// Which quantization tables `quality` scales: cjpeg's (ITU-T T.81 Annex K, the default and the
/// exact oracle), or a preset tuned for a metric (smaller files at the same PSNR or SSIM; still
/// byte-identical to cjpeg given the same tables, see docs/tuning/ in the source tree).
enum class Tune { none, psnr, ssim };

/// "none", "psnr", "ssim".
std::string to_string(Tune t);
/// Parses "none", "psnr" or "ssim"; throws UsageError otherwise.
Tune parse_tune(const std::string& text);

/// How coefficients are rounded to quantization levels: to the nearest level (libjpeg's
/// rounding: byte-identical to cjpeg, the default), with a dead zone (AC coefficients round up
/// only from 5/8 of a step, as FFmpeg's MJPEG encoder does: smaller files), or by a trellis
/// search per block that picks each level among the nearest, the one below and zero to
/// minimise distortion + lambda x bits with the Huffman code lengths of the standard tables
/// (docs/rdo.md in the source tree). Not the oracle's bytes for deadzone and trellis, but the
/// same bytes in every mode, thread count and device.
enum class Rdo { off, deadzone, trellis };

/// "off", "deadzone", "trellis".
std::string to_string(Rdo r);
/// Parses "off", "deadzone" or "trellis"; throws UsageError otherwise.
Rdo parse_rdo(const std::string& text);

/// One base quantization table, 64 values in natural (row-major) order, as cjpeg -qtables
/// reads them (before quality scaling; any value, clamped after scaling).
using QuantTableValues = std::array<std::uint32_t, 64>;
inline constexpr int kMaxQuantTables = 4;  ///< table slots 0..3, as in libjpeg

/// Largest width or height accepted: libjpeg's JPEG_MAX_DIMENSION. A JPEG's SOF marker could
/// say 65535, but libjpeg (and so cjpeg, djpeg and most JPEG readers) refuses pictures above
/// 65500 per side, and there an encoder that is exact to libjpeg has no reference.
inline constexpr int kMaxDimension = 65500;
inline constexpr int kMaxRestartInterval = 65535;

/// The density fields of the JFIF header (APP0), as libjpeg's density_unit, X_density and
/// Y_density: unit 0 (no unit: x:y is the pixel aspect ratio), 1 (dots per inch) or 2 (dots
/// per cm); x and y 0..65535 (cjpeg copies a BMP's resolution, 0 included). The default, 0 and
/// 1:1, is what cjpeg writes; other values change only these five bytes of each JPEG.
struct JfifDensity {
  int unit = 0;
  int x = 1;
  int y = 1;
  /// A pixel aspect ratio num:den (the width of one pixel over its height, e.g. 4:3 for HDV's
  /// 1440x1080 shown as 1920x1080) as JFIF states it and FFmpeg-based players read it: unit 0,
  /// x = num, y = den, reduced, and approximated where a term exceeds 16 bits. 1:1, and an
  /// unknown ratio (a term 0 or negative), give the default.
  static JfifDensity pixel_aspect(int num, int den);
  bool operator==(const JfifDensity& o) const { return unit == o.unit && x == o.x && y == o.y; }
  bool operator!=(const JfifDensity& o) const { return !(*this == o); }
};

struct EncodeOptions {
  int quality = 90;                        ///< 1..100, libjpeg's scaling of the Annex K tables
  Subsampling subsampling = Subsampling::s420;
  int restart_interval = 0;                ///< in MCUs; 0 = no restart markers
  bool optimize = false;                   ///< per-frame optimal Huffman tables (libjpeg's two-pass)
  Tune tune = Tune::none;                  ///< the base tables that `quality` scales
  Rdo rdo = Rdo::off;                      ///< rounding to levels (off: cjpeg's, exact)
  /// Base tables for slots 0.. (at most kMaxQuantTables), like cjpeg -qtables FILE: they
  /// replace the preset's tables of those slots and are scaled by `quality` as cjpeg does.
  std::vector<QuantTableValues> qtables = {};
  /// Table slot of each component (0..3), like cjpeg -qslots: the last value repeats for the
  /// remaining components. Empty: the preset's choice (0 for luma, 1 for Cb and Cr).
  std::vector<int> qslots = {};
  /// Progressive JPEG (SOF2) by spectral selection: a DC scan, then bands of AC coefficients
  /// per component, each scan with its own optimal Huffman tables (so `optimize` is implied);
  /// on average about 2% smaller than `optimize` alone (up to 11% smaller, or 2% larger,
  /// depending on the content and quality), and slower to code. Byte-identical to
  /// `cjpeg -optimize -scans FILE` with the script in docs/tuning/scans.md of the source tree.
  bool progressive = false;
  /// The JFIF header's density: a BMP's resolution, or the source's pixel aspect ratio
  /// (JfifDensity::pixel_aspect). Nothing else of the JPEG depends on it.
  JfifDensity density = {};
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

/// An owned image of interleaved 8-bit pixels (rgb24 or gray8), rows packed: what the CLI's
/// readers return, and a convenient holder for encode_jpeg()'s input.
struct Image {
  int width = 0;
  int height = 0;
  PixelFormat format = PixelFormat::rgb24;
  std::vector<std::uint8_t> pixels;  ///< height * stride() bytes

  Image() = default;
  /// A zero-filled width x height image of `f`.
  Image(int w, int h, PixelFormat f)
      : width(w), height(h), format(f),
        pixels(static_cast<std::size_t>(w) * static_cast<std::size_t>(h) *
               static_cast<std::size_t>(channels(f))) {}

  /// Bytes per row (rows are packed: no padding).
  std::size_t stride() const { return static_cast<std::size_t>(width) * channels(format); }
  /// A read-only view; valid while this image is alive and not resized.
  ImageView view() const { return ImageView{pixels.data(), width, height, format, stride()}; }
};

/// Parses the text of a cjpeg -qtables file: unsigned decimal integers separated by white
/// space (a comma may follow a number), '#' starts a comment to the end of the line; 64 values
/// per table in natural order, 1 to 4 tables. Throws UsageError naming `source` and the line.
std::vector<QuantTableValues> parse_qtables(const std::string& text, const std::string& source);

/// The two tables (luma, chroma) of a plain `cjpeg -quality Q`: ITU-T T.81 Annex K scaled by
/// libjpeg's quality scaling and limited to 255 (jpeg_set_quality's forced baseline), as values
/// to use unscaled (EncodeOptions::qtables at quality 50). `cjpeg -qtables FILE` without
/// -quality keeps them at quality 75 (jpeg_set_defaults) in the slots the file does not give;
/// `mjpeg encode --qtables FILE` without -q fills those slots from here so. Throws UsageError
/// for a quality outside 1..100.
std::vector<QuantTableValues> default_qtables(int quality);

/// Parses a cjpeg -qslots list "N[,N...]" (each 0..3). Throws UsageError.
std::vector<int> parse_qslots(const std::string& text);

/// Writes `tables` in the -qtables format (8 values a line, a comment line before each table).
std::string format_qtables(const std::vector<QuantTableValues>& tables);

}  // namespace mjpeg
