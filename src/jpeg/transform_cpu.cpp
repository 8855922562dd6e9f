// The scalar reference transform (plain C++ on jpeg_math.hpp, kept simple: every vector
// variant is tested against it) and the choice of variant.
#include "jpeg/transform_cpu.hpp"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "jpeg/parallel_parts.hpp"
#include "jpeg/transform_simd.hpp"
#include "jpeg/variant_table.hpp"
#include "core/jpeg_math.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg {
namespace {

// The frame is processed one band at a time: a band is one MCU row (max_v * 8 pixel rows; for
// a grayscale frame one block row). For each band we
//   1. colour-convert the band's full-resolution rows into Y/Cb/Cr rows, replicating the last
//      column and the last row of the image (libjpeg's expand_right_edge / expand_bottom_edge);
//   2. build each component's samples for the band (downsampling chroma; component rows past
//      the component's height repeat its last row, as libjpeg pads after downsampling);
//   3. transform and quantize every real block of the band.
// Dummy blocks are filled at the end.
class BandTransformer {
 public:
  BandTransformer(RowSource& rows, const FrameGeometry& g, const QuantTables& tables,
                  std::int16_t* coeffs)
      : rows_(rows), g_(g), tables_(tables), coeffs_(coeffs) {
    band_rows_ = 8 * g.max_v;
    full_width_ = g.num_components == 1 ? g.comp[0].blocks_w * 8 : g.mcus_x * g.max_h * 8;
    for (int c = 0; c < g.num_components; ++c) {
      full_[c].resize(static_cast<std::size_t>(band_rows_) * full_width_);
      const ComponentGeometry& cg = g.comp[c];
      plane_[c].resize(static_cast<std::size_t>(cg.v * 8) * cg.width_in_blocks * 8);
    }
  }

  void run(int band0, int band1) {
    for (int band = band0; band < band1; ++band) {
      convert_band(band);
      for (int c = 0; c < g_.num_components; ++c) {
        sample_component(c, band);
        transform_component(c, band);
      }
    }
  }

 private:
  // Step 1: rows y0 .. y0 + band_rows_ - 1 of the frame (clamped) into full_[c].
  void convert_band(int band) {
    const int y0 = band * band_rows_;
    const int w = g_.width;
    const std::uint8_t* rows[kMaxBandRows];
    rows_.band(y0, std::min(band_rows_, g_.height - y0), rows);
    for (int r = 0; r < band_rows_; ++r) {
      const int y = std::min(y0 + r, g_.height - 1);
      const std::uint8_t* src = rows[y - y0];
      const std::size_t row = static_cast<std::size_t>(r) * full_width_;
      std::uint8_t* out_y = &full_[0][row];
      if (rows_.format() == PixelFormat::gray8) {
        std::copy(src, src + w, out_y);
      } else if (g_.num_components == 1) {
        for (int x = 0; x < w; ++x, src += 3)
          out_y[x] = static_cast<std::uint8_t>(math::rgb_to_y(src[0], src[1], src[2]));
      } else {
        std::uint8_t* out_cb = &full_[1][row];
        std::uint8_t* out_cr = &full_[2][row];
        for (int x = 0; x < w; ++x, src += 3) {
          out_y[x] = static_cast<std::uint8_t>(math::rgb_to_y(src[0], src[1], src[2]));
          out_cb[x] = static_cast<std::uint8_t>(math::rgb_to_cb(src[0], src[1], src[2]));
          out_cr[x] = static_cast<std::uint8_t>(math::rgb_to_cr(src[0], src[1], src[2]));
        }
      }
      // Replicate the last column into the padding (libjpeg's expand_right_edge).
      for (int c = 0; c < g_.num_components; ++c) {
        std::uint8_t* out = &full_[c][row];
        std::fill(out + w, out + full_width_, out[w - 1]);
      }
    }
  }

  // Step 2: the component's v*8 sample rows of this band into plane_[c].
  void sample_component(int c, int band) {
    const ComponentGeometry& cg = g_.comp[c];
    const int fh = g_.max_h / cg.h;  // full-res columns per sample
    const int fv = g_.max_v / cg.v;  // full-res rows per sample
    const int width = cg.width_in_blocks * 8;
    const int y0 = band * band_rows_;
    for (int r = 0; r < cg.v * 8; ++r) {
      const int cy = std::min(band * cg.v * 8 + r, cg.height - 1);
      const int row_a = std::min(cy * fv, g_.height - 1) - y0;
      const int row_b = std::min(cy * fv + fv - 1, g_.height - 1) - y0;
      const std::uint8_t* a = &full_[c][static_cast<std::size_t>(row_a) * full_width_];
      const std::uint8_t* b = &full_[c][static_cast<std::size_t>(row_b) * full_width_];
      std::uint8_t* out = &plane_[c][static_cast<std::size_t>(r) * width];
      if (fh == 1 && fv == 1) {
        std::copy(a, a + width, out);
      } else if (fv == 1) {
        for (int x = 0; x < width; ++x)
          out[x] = static_cast<std::uint8_t>(math::downsample_h2v1(a[2 * x], a[2 * x + 1], x));
      } else {
        for (int x = 0; x < width; ++x)
          out[x] = static_cast<std::uint8_t>(
              math::downsample_h2v2(a[2 * x], a[2 * x + 1], b[2 * x], b[2 * x + 1], x));
      }
    }
  }

  // Step 3: FDCT + quantization of the band's real blocks of component c.
  void transform_component(int c, int band) {
    const ComponentGeometry& cg = g_.comp[c];
    const math::QuantDivisor* divisor = tables_.component_divisor(c);
    const int width = cg.width_in_blocks * 8;
    std::int32_t block[64];
    for (int bl = 0; bl < cg.v; ++bl) {
      const int by = band * cg.v + bl;
      if (by >= cg.height_in_blocks) break;
      for (int bx = 0; bx < cg.width_in_blocks; ++bx) {
        for (int r = 0; r < 8; ++r) {
          const std::uint8_t* src =
              &plane_[c][static_cast<std::size_t>(bl * 8 + r) * width + bx * 8];
          for (int x = 0; x < 8; ++x) block[r * 8 + x] = src[x] - 128;
        }
        math::fdct_islow(block);
        std::int16_t* out = coeffs_ + g_.block_index(c, by, bx) * kBlockSize;
        if (tables_.rdo == Rdo::trellis) {
          math::trellis_quantize([&block](int k) { return block[math::kZigzagToNatural[k]]; },
                                 divisor, tables_.trellis, c, out);
          continue;
        }
        for (int k = 0; k < 64; ++k) {
          const int n = math::kZigzagToNatural[k];
          out[k] = math::quantize(block[n], divisor[n]);
        }
      }
    }
  }

  RowSource& rows_;
  const FrameGeometry& g_;
  const QuantTables& tables_;
  std::int16_t* coeffs_;
  int band_rows_ = 0;
  int full_width_ = 0;
  std::vector<std::uint8_t> full_[kMaxComponents];   // colour-converted band, full resolution
  std::vector<std::uint8_t> plane_[kMaxComponents];  // component samples of the band
};

void transform_scalar(RowSource& rows, const FrameGeometry& g, const QuantTables& tables,
                      std::int16_t* coeffs, int band0, int band1) {
  BandTransformer(rows, g, tables, coeffs).run(band0, band1);
}

void quantize_scalar(const std::int16_t* in, std::int16_t* out, std::size_t n, int q) {
  const math::QuantDivisor d = math::make_divisor(q);
  for (std::size_t i = 0; i < n; ++i) out[i] = math::quantize(in[i], d);
}

bool always() { return true; }

const simd::TransformVariant kScalar = {"scalar", always, transform_scalar, quantize_scalar};

/// Every variant of this build, best first, the scalar reference last.
std::vector<const simd::TransformVariant*> all_variants() {
  std::vector<const simd::TransformVariant*> all;
  std::size_t count = 0;
  const simd::TransformVariant* vector = simd::variants(count);
  for (std::size_t i = 0; i < count; ++i) all.push_back(&vector[i]);
  all.push_back(&kScalar);
  return all;
}

const simd::TransformVariant& find_variant(const std::string& name) {
  return variant_table::named(all_variants(), name, "CPU transform");
}

/// The best variant, or the one MJPEG_CPU_TRANSFORM names; chosen once.
const simd::TransformVariant& default_variant() {
  static const simd::TransformVariant& chosen = []() -> const simd::TransformVariant& {
    const char* forced = std::getenv("MJPEG_CPU_TRANSFORM");
    if (forced && *forced) {
      try {
        return find_variant(forced);
      } catch (const Error& e) {
        throw Error(std::string("MJPEG_CPU_TRANSFORM: ") + e.what());
      }
    }
    return variant_table::best(all_variants());
  }();
  return chosen;
}

void check(const RowSource& rows, const FrameGeometry& g, const QuantTables& tables) {
  if (rows.width() != g.width || rows.height() != g.height)
    throw Error("transform_cpu: image size does not match the frame geometry");
  if (rows.format() == PixelFormat::gray8 && g.num_components != 1)
    throw Error("transform_cpu: grayscale input needs a grayscale geometry");
  if (tables.components != g.num_components)
    throw Error("transform_cpu: quantization tables for another component count");
}

/// Rdo::trellis: chooses the DC levels of an MCU row, which the transform left as FDCT outputs
/// (math::trellis_dc_segments_of, as math::trellis_dc_row; each segment on its own, so parts
/// of a frame may run at once). Every full MCU row has its blocks at the same places from its
/// first block row: they are found once (math::dc_chain_block) and shifted per row.
class DcLevels {
 public:
  DcLevels(const FrameGeometry& g, const QuantTables& tables) : g_(g), tables_(tables) {
    for (int c = 0; c < g.num_components; ++c) {
      chain_[c] = dc_chain(g, c);
      place_[c].resize(static_cast<std::size_t>(math::dc_chain_length(chain_[c], 0)));
      for (std::size_t i = 0; i < place_[c].size(); ++i)
        place_[c][i] = math::dc_chain_block(chain_[c], 0, static_cast<int>(i)) * kBlockSize;
    }
  }

  void choose(std::int16_t* coeffs, int row) const {
    for (int c = 0; c < g_.num_components; ++c) {
      const math::DcChain& chain = chain_[c];
      const math::QuantDivisor& div = tables_.component_divisor(c)[0];
      const int n = math::dc_chain_length(chain, row);
      if (n != static_cast<int>(place_[c].size())) {  // the bottom row, short of block rows
        math::trellis_dc_row(coeffs, chain, row, div, tables_.trellis);
        continue;
      }
      std::int16_t* const base =
          coeffs + static_cast<std::size_t>(row) * chain.v * chain.blocks_w * kBlockSize;
      const long long* place = place_[c].data();
      math::trellis_dc_segments_of(
          n, [base, place](int i) -> std::int16_t& { return base[place[i]]; }, div,
          tables_.trellis, c);
    }
  }

 private:
  const FrameGeometry& g_;
  const QuantTables& tables_;
  math::DcChain chain_[kMaxComponents];
  std::vector<long long> place_[kMaxComponents];
};

/// MCU rows row0..row1-1 through the variant; under Rdo::trellis one at a time, each row's DC
/// levels chosen while its blocks are still in the cache.
void transform_rows(const simd::TransformVariant& v, RowSource& rows, const FrameGeometry& g,
                    const QuantTables& tables, std::int16_t* coeffs, int row0, int row1) {
  if (tables.rdo != Rdo::trellis) {
    v.transform(rows, g, tables, coeffs, row0, row1);
    return;
  }
  const DcLevels dc(g, tables);
  for (int row = row0; row < row1; ++row) {
    v.transform(rows, g, tables, coeffs, row, row + 1);
    dc.choose(coeffs, row);
  }
}

void run(const simd::TransformVariant& v, RowSource& rows, const FrameGeometry& g,
         const QuantTables& tables, std::int16_t* coeffs) {
  check(rows, g, tables);
  transform_rows(v, rows, g, tables, coeffs, 0, g.mcus_y);
  fill_dummy_blocks(g, coeffs);
}

/// The bands (MCU rows) cut into `threads` ranges, transformed at once; the dummy blocks after.
void run_parallel(const simd::TransformVariant& v, const ImageView& image, const FrameGeometry& g,
                  const QuantTables& tables, std::int16_t* coeffs, int threads) {
  ImageRows whole(image);
  check(whole, g, tables);
  const int parts = std::max(1, std::min(threads, g.mcus_y));
  run_parts(static_cast<std::size_t>(parts), [&](std::size_t k) {
    ImageRows rows(image);  // (stateless; one each all the same)
    const int row0 = part_begin(g.mcus_y, parts, static_cast<int>(k));
    const int row1 = part_begin(g.mcus_y, parts, static_cast<int>(k) + 1);
    transform_rows(v, rows, g, tables, coeffs, row0, row1);
  });
  fill_dummy_blocks(g, coeffs);
}

}  // namespace

void fill_dummy_blocks(const FrameGeometry& g, std::int16_t* coeffs) {
  if (g.num_components == 1) return;  // non-interleaved scan: no MCU padding
  for (int c = 0; c < g.num_components; ++c) {
    const ComponentGeometry& cg = g.comp[c];
    auto block = [&](int by, int bx) { return coeffs + g.block_index(c, by, bx) * kBlockSize; };
    // Row by row, left to right: a dummy's source is real or a dummy filled before it.
    for (int by = 0; by < cg.blocks_h; ++by) {
      const bool real_row = by < cg.height_in_blocks;
      for (int bx = real_row ? cg.width_in_blocks : 0; bx < cg.blocks_w; ++bx) {
        std::int16_t* out = block(by, bx);
        std::int16_t dc;
        if (real_row) {
          dc = block(by, bx - 1)[0];  // right edge: the block to the left (filled already)
        } else {
          const int mcu_col = bx / cg.h;
          dc = block(by - 1, mcu_col * cg.h + cg.h - 1)[0];  // bottom: last of the row above
        }
        std::fill(out, out + kBlockSize, std::int16_t{0});
        out[0] = dc;
      }
    }
  }
}

void transform_cpu(const ImageView& image, const FrameGeometry& g, const QuantTables& tables,
                   std::int16_t* coeffs) {
  ImageRows rows(image);
  run(default_variant(), rows, g, tables, coeffs);
}

void transform_cpu(RowSource& rows, const FrameGeometry& g, const QuantTables& tables,
                   std::int16_t* coeffs) {
  run(default_variant(), rows, g, tables, coeffs);
}

void transform_cpu(const std::string& variant, const ImageView& image, const FrameGeometry& g,
                   const QuantTables& tables, std::int16_t* coeffs) {
  ImageRows rows(image);
  run(find_variant(variant), rows, g, tables, coeffs);
}

void transform_cpu(const std::string& variant, RowSource& rows, const FrameGeometry& g,
                   const QuantTables& tables, std::int16_t* coeffs) {
  run(find_variant(variant), rows, g, tables, coeffs);
}

void transform_cpu_parallel(const ImageView& image, const FrameGeometry& g,
                            const QuantTables& tables, std::int16_t* coeffs, int threads,
                            const std::string& variant) {
  run_parallel(variant.empty() ? default_variant() : find_variant(variant), image, g, tables,
               coeffs, threads);
}

std::vector<std::string> transform_variants() {
  return variant_table::names(all_variants(), true);
}

const char* transform_variant() { return default_variant().name; }

std::vector<std::string> built_transform_variants() {
  return variant_table::names(all_variants(), false);
}

void quantize_values(const std::string& variant, const std::int16_t* in, std::int16_t* out,
                     std::size_t n, int q) {
  if (n % 64 != 0) throw Error("quantize_values: n must be a multiple of 64");
  if (q < 1 || q > 32767) throw Error("quantize_values: q must be in 1..32767");
  find_variant(variant).quantize(in, out, n, q);
}

}  // namespace mjpeg
