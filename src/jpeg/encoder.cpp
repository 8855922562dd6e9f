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
#include "jpeg/transform_cpu.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg {

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
