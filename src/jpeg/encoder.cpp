#include "mjpeg/encoder.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "jpeg/entropy.hpp"
#include "jpeg/jfif_writer.hpp"
#include "jpeg/parallel_parts.hpp"
#include "core/geometry.hpp"
#include "core/quant.hpp"
#include "core/ratio.hpp"
#include "jpeg/transform_cpu.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg {

std::string to_string(Subsampling s) {
  switch (s) {
    case Subsampling::s444: return "444";
    case Subsampling::s422: return "422";
    case Subsampling::s420: return "420";
    case Subsampling::gray: return "gray";
  }
  return "?";
}

Subsampling parse_subsampling(const std::string& text) {
  if (text == "444") return Subsampling::s444;
  if (text == "422") return Subsampling::s422;
  if (text == "420") return Subsampling::s420;
  if (text == "gray") return Subsampling::gray;
  throw UsageError("unknown subsampling '" + text + "' (expected 444, 422, 420 or gray)");
}

std::string to_string(Tune t) {
  switch (t) {
    case Tune::none: return "none";
    case Tune::psnr: return "psnr";
    case Tune::ssim: return "ssim";
  }
  return "?";
}

Tune parse_tune(const std::string& text) {
  if (text == "none") return Tune::none;
  if (text == "psnr") return Tune::psnr;
  if (text == "ssim") return Tune::ssim;
  throw UsageError("unknown table preset '" + text + "' (expected none, psnr or ssim)");
}

const char* to_string(Offload o) {
  switch (o) {
    case Offload::cpu: return "cpu";
    case Offload::sok: return "sok";
    case Offload::sok_pinned: return "sok-pinned";
    case Offload::aok: return "aok";
  }
  return "?";
}

Offload parse_offload(const std::string& text) {
  for (Offload o : {Offload::cpu, Offload::sok, Offload::sok_pinned, Offload::aok})
    if (text == to_string(o)) return o;
  throw UsageError("unknown offload mode '" + text + "' (expected cpu, sok, sok-pinned or aok)");
}

void validate(const EncodeOptions& o) {
  if (o.quality < 1 || o.quality > 100)
    throw UsageError("quality " + std::to_string(o.quality) + " is outside 1..100");
  if (o.restart_interval < 0 || o.restart_interval > kMaxRestartInterval)
    throw UsageError("restart interval " + std::to_string(o.restart_interval) +
                     " is outside 0.." + std::to_string(kMaxRestartInterval));
  if (o.qtables.size() > static_cast<std::size_t>(kMaxQuantTables))
    throw UsageError(std::to_string(o.qtables.size()) + " quantization tables; at most " +
                     std::to_string(kMaxQuantTables));
  for (int s : o.qslots)
    if (s < 0 || s >= kMaxQuantTables)
      throw UsageError("quantization table slot " + std::to_string(s) + " is outside 0..3");
  const JfifDensity& d = o.density;
  if (d.unit < 0 || d.unit > 2 || d.x < 0 || d.x > 65535 || d.y < 0 || d.y > 65535)
    throw UsageError("JFIF density unit " + std::to_string(d.unit) + ", " +
                     std::to_string(d.x) + "x" + std::to_string(d.y) +
                     " is outside unit 0..2, 0..65535");
}

JfifDensity JfifDensity::pixel_aspect(int num, int den) {
  if (num <= 0 || den <= 0 || num == den) return {};
  std::uint64_t x = 0, y = 0;
  core::nearest_ratio(std::uint64_t(num), std::uint64_t(den), 65535, x, y);
  JfifDensity density;
  density.x = static_cast<int>(x);
  density.y = static_cast<int>(y);
  return density;
}

bool optimize_fits(int width, int height, Subsampling sampling) {
  if (width < 1 || height < 1 || width > kMaxDimension || height > kMaxDimension) return false;
  const FrameGeometry g = make_geometry(width, height, sampling);
  // Blocks per Huffman table: luma alone, the two chroma components share one; a block
  // contributes at most 63 AC symbols (and one DC) to its table's counts.
  std::uint64_t worst = static_cast<std::uint64_t>(g.comp[0].blocks_w) * g.comp[0].blocks_h;
  if (g.num_components == 3)
    worst = std::max<std::uint64_t>(
        worst, 2 * static_cast<std::uint64_t>(g.comp[1].blocks_w) * g.comp[1].blocks_h);
  return worst * 63 <= 0xFFFFFFFFull;
}

std::vector<std::uint8_t> encode_jpeg(const ImageView& image, const EncodeOptions& options) {
  return encode_jpeg(image, options, 1);
}

std::vector<std::uint8_t> encode_jpeg(const ImageView& image, const EncodeOptions& options,
                                      int threads) {
  if (threads < 0) throw UsageError("encode_jpeg: threads must be 0 (one per core) or more");
  validate(options);
  if (!image.data) throw UsageError("encode_jpeg: image has no pixels");
  const Subsampling sampling =
      image.format == PixelFormat::gray8 ? Subsampling::gray : options.subsampling;
  const FrameGeometry g = make_geometry(image.width, image.height, sampling);
  if (options.optimize && !options.progressive && !optimize_fits(image.width, image.height, sampling))
    throw UsageError("encode_jpeg: optimize: a " + std::to_string(image.width) + "x" +
                     std::to_string(image.height) + " picture at " + to_string(sampling) +
                     " can hold more of one Huffman symbol than 32-bit counts allow");
  if (image.stride < static_cast<std::size_t>(image.width) * channels(image.format))
    throw UsageError("encode_jpeg: row stride is smaller than a row");
  const QuantTables tables = make_quant_tables(options, g.num_components);
  std::unique_ptr<std::int16_t[]> coeffs(new std::int16_t[g.coefficient_count()]);
  if (threads == 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int parts =
      std::max(1, std::min({threads, parts_worth(image.width, image.height), g.mcus_y}));
  transform_cpu_parallel(image, g, tables, coeffs.get(), parts);
  std::vector<std::uint8_t> out;
  encode_coefficients(g, tables, coeffs.get(), options, out, parts);
  set_density(options.density, out);
  return out;
}

}  // namespace mjpeg
