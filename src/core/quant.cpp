#include "core/quant.hpp"

#include <algorithm>
#include <cmath>

#include "core/standard_huffman.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg {
namespace {

/// f(symbol, code length) for every symbol of a DHT-style table.
template <class F>
void for_each_code(const annex_k::HuffmanTable& table, F f) {
  int i = 0;
  for (int length = 1; length <= 16; ++length)
    for (int j = 0; j < table.bits[length - 1]; ++j) f(table.values[i++], length);
}

// ITU-T T.81 Annex K, tables K.1 (luminance) and K.2 (chrominance), natural order.
constexpr QuantTableValues kAnnexK[2] = {
    {16, 11, 10, 16, 24,  40,  51,  61,  12, 12, 14, 19, 26,  58,  60,  55,
     14, 13, 16, 24, 40,  57,  69,  56,  14, 17, 22, 29, 51,  87,  80,  62,
     18, 22, 37, 56, 68,  109, 103, 77,  24, 35, 55, 64, 81,  104, 113, 92,
     49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99},
    {17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99,
     24, 26, 56, 99, 99, 99, 99, 99, 47, 66, 99, 99, 99, 99, 99, 99,
     99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
     99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99}};

#include "core/quant_presets.inc"

std::string line_of(const std::string& source, int line) {
  return source + ", line " + std::to_string(line);
}

}  // namespace

int quality_scale(int quality) {
  if (quality < 1 || quality > 100) throw UsageError("quality must be in 1..100");
  return quality < 50 ? 5000 / quality : 200 - quality * 2;
}

std::uint16_t scale_quant_value(std::uint32_t base, int scale) {
  // As jpeg_add_quant_table: long arithmetic (64-bit here, no overflow for any 32-bit base
  // and scale <= 5000), values below 1 become 1, above 32767 become 32767 (no -baseline).
  long long value = (static_cast<long long>(base) * scale + 50) / 100;
  value = std::clamp(value, 1LL, 32767LL);
  return static_cast<std::uint16_t>(value);
}

bool QuantTables::needs_16bit(int index) const {
  for (int i = 0; i < 64; ++i)
    if (natural[index][i] > 255) return true;
  return false;
}

bool QuantTables::any_16bit() const {
  for (int c = 0; c < components; ++c)
    if (needs_16bit(slot[c])) return true;
  return false;
}

PresetTables preset_tables(Tune tune, int quality, Rdo rdo, Subsampling sampling) {
  quality_scale(quality);  // range check
  if (tune == Tune::none) return {{kAnnexK[0], kAnnexK[1]}, quality_scale(quality), {0, 1, 1}};
  // --tune psnr under the rdo modes: the tables fitted for a dead zone. The SSIM preset with the
  // trellis: the PSNR preset's tables fitted for nearest rounding, the SSIM weighting moved into
  // the search (make_trellis_model's activity); measured smaller at equal SSIM than the SSIM
  // tables with or without it, and than the PSNR tables fitted for a dead zone (docs/rdo.md).
  // The PSNR presets are fitted at 4:2:0, where a chroma sample's error counts for the 4 pixels
  // it covers, and again at 4:4:4 and 4:2:2, where it counts for one or two; gray takes the
  // 4:2:0 ones (docs/tuning/README.md, "4:4:4"). The SSIM tables' chroma is coarse at every
  // sampling.
  const bool at444 = sampling == Subsampling::s444, at422 = sampling == Subsampling::s422;
  const auto& psnr = at444 ? kPreset_psnr_444 : at422 ? kPreset_psnr_422 : kPreset_psnr;
  const auto& psnr_rdo = at444   ? kPreset_psnr_rdo_444
                         : at422 ? kPreset_psnr_rdo_422
                                 : kPreset_psnr_rdo;
  const auto& preset = tune == Tune::ssim ? (rdo == Rdo::trellis ? psnr : kPreset_ssim)
                       : rdo == Rdo::off  ? psnr
                                          : psnr_rdo;
  const std::uint8_t(&t)[2][64] = preset[quality - 1];
  PresetTables p;
  p.tables.resize(2);
  for (int i = 0; i < 64; ++i) {
    p.tables[0][i] = t[0][i];
    p.tables[1][i] = t[1][i];
  }
  p.scale = 100;
  p.slots = {0, 1, 1};
  return p;
}

QuantTables make_quant_tables(const EncodeOptions& options, int components) {
  if (components != 1 && components != 3)
    throw UsageError("make_quant_tables: frames have 1 or 3 components");
  if (options.qtables.size() > static_cast<std::size_t>(kMaxQuantTables))
    throw UsageError("at most 4 quantization tables");
  PresetTables p =
      preset_tables(options.tune, options.quality, options.rdo, options.subsampling);
  std::vector<int> scales(p.tables.size(), p.scale);
  for (std::size_t i = 0; i < options.qtables.size(); ++i) {
    if (i >= p.tables.size()) {
      p.tables.emplace_back();
      scales.push_back(0);
    }
    p.tables[i] = options.qtables[i];
    scales[i] = quality_scale(options.quality);
  }
  const std::vector<int>& slots = options.qslots.empty() ? p.slots : options.qslots;

  QuantTables t;
  t.components = components;
  for (int c = 0; c < 3; ++c) {
    const int s = slots[std::min<std::size_t>(c, slots.size() - 1)];
    if (s < 0 || s >= kMaxQuantTables)
      throw UsageError("quantization table slots are numbered 0..3, not " + std::to_string(s));
    t.slot[c] = c < components ? s : t.slot[0];
  }
  for (std::size_t n = 0; n < p.tables.size(); ++n) {
    t.defined[n] = true;
    for (int i = 0; i < 64; ++i) {
      t.natural[n][i] = scale_quant_value(p.tables[n][i], scales[n]);
      // The dead zone is for AC only: the DC (natural index 0) keeps libjpeg's rounding.
      const bool dead_zone = options.rdo == Rdo::deadzone && i != 0;
      t.divisor[n][i] = math::make_divisor(t.natural[n][i], dead_zone ? 3 : 4);
    }
  }
  for (int c = 0; c < components; ++c) {
    if (!t.defined[t.slot[c]])
      throw UsageError("component " + std::to_string(c + 1) + " uses quantization table " +
                       std::to_string(t.slot[c]) + ", which is not defined (tables 0.." +
                       std::to_string(p.tables.size() - 1) + " are)");
    for (int i = 0; i < 64; ++i)
      if (t.natural[t.slot[c]][i] > kMaxQuantValue)
        throw UsageError("quantization table " + std::to_string(t.slot[c]) + " has " +
                         std::to_string(t.natural[t.slot[c]][i]) + " after -q scaling; at most " +
                         std::to_string(kMaxQuantValue) +
                         " (libjpeg-turbo's 16-bit divisor q*8 overflows beyond it)");
  }
  t.rdo = options.rdo;
  if (t.rdo == Rdo::trellis)
    t.trellis = make_trellis_model(t, options.subsampling, options.tune == Tune::ssim);
  return t;
}

math::TrellisModel make_trellis_model(const QuantTables& tables, Subsampling sampling,
                                      bool activity, double k) {
  math::TrellisModel m = {};
  for (int t = 0; t < 2; ++t) {
    std::uint8_t* bits = m.ac_bits[t];
    for (int s = 0; s < 256; ++s) bits[s] = math::kNoCodeBits;
    for_each_code(*annex_k::kAc[t], [bits](int symbol, int length) {
      bits[symbol] = static_cast<std::uint8_t>(length);
    });
    // The most bits a symbol of one size (1..10) may take after a shorter run than after a
    // longer one (runs 0..62, their ZRLs included): the second bound of trellis_search.
    const auto symbol_bits = [bits](int run, int size) {
      return (run >> 4) * bits[0xF0] + bits[(run & 15) << 4 | size];
    };
    int extra = 0;
    for (int size = 1; size <= 10; ++size)
      for (int longer = 1; longer < 63; ++longer)
        for (int shorter = 0; shorter < longer; ++shorter)
          extra = std::max(extra, symbol_bits(shorter, size) - symbol_bits(longer, size));
    m.shorter_run_bits[t] = extra;
    for (int size = 1; size <= 10; ++size)
      for (int run = 0; run < 63; ++run)
        m.run_bits[t][size][run] = static_cast<std::uint8_t>(symbol_bits(run, size) + size);
  }
  for (int t = 0; t < 2; ++t)  // a DC symbol is the difference's size: that many value bits
    for_each_code(*annex_k::kDc[t], [&m, t](int size, int length) {
      m.dc_bits[t][size] = static_cast<std::uint8_t>(length + size);
    });
  for (int z = 0; z < 64; ++z) m.natural_of_zigzag[z] = math::kZigzagToNatural[z];
  // Luma: lambda = k x step^1.6 x 400^0.4 (FDCT units), the step being the luma table's root
  // mean square (8q): k squared steps per bit where the step is 400 (about -q 50), a little
  // more per squared step at finer steps (fitted on Kodak images, docs/rdo.md), so that lambda
  // follows -q and the preset.
  double mean_square = 0;
  for (int n = 0; n < 64; ++n) {
    const double step = 8.0 * tables.natural[tables.slot[0]][n];
    mean_square += step * step / 64;
  }
  const double reference = 400.0 * 400.0;
  const double luma = k * reference * std::pow(mean_square / reference, kTrellisPower / 2);
  // Chroma: an error of one in a Cb (Cr) sample moves G and B (R and G) of every pixel it
  // covers by the YCbCr -> RGB factors, one in Y moves R, G and B by one: lambda divided by
  // the ratio of those squared RGB errors, so that the search minimises the RGB error.
  const double pixels = sampling == Subsampling::s420 ? 4 : sampling == Subsampling::s422 ? 2 : 1;
  const double cb = 0.344136 * 0.344136 + 1.772 * 1.772, cr = 1.402 * 1.402 + 0.714136 * 0.714136;
  m.lambda[0] = std::llround(luma);
  m.lambda[1] = std::llround(luma * 3 / (pixels * cb));
  m.lambda[2] = std::llround(luma * 3 / (pixels * cr));
  m.activity = activity ? kTrellisActivity : 0;
  return m;
}

math::DcChain dc_chain(const FrameGeometry& g, int c) {
  const ComponentGeometry& cg = g.comp[c];
  math::DcChain chain;
  chain.offset = static_cast<long long>(cg.block_offset);
  chain.blocks_w = cg.blocks_w;
  chain.width_in_blocks = cg.width_in_blocks;
  chain.height_in_blocks = cg.height_in_blocks;
  chain.h = g.num_components == 1 ? 1 : cg.h;  // one component: a non-interleaved scan
  chain.v = g.num_components == 1 ? 1 : cg.v;
  chain.comp = c;
  return chain;
}

std::vector<QuantTableValues> default_qtables(int quality) {
  const int scale = quality_scale(quality);
  std::vector<QuantTableValues> tables(std::begin(kAnnexK), std::end(kAnnexK));
  for (QuantTableValues& t : tables)
    for (std::uint32_t& v : t) v = std::min<std::uint32_t>(scale_quant_value(v, scale), 255);
  return tables;
}

QuantTables make_quant_tables(int quality, int count) {
  EncodeOptions o;
  o.quality = quality;
  return make_quant_tables(o, count == 1 ? 1 : 3);
}

std::vector<QuantTableValues> parse_qtables(const std::string& text, const std::string& source) {
  std::vector<std::uint32_t> values;
  int line = 1;
  std::size_t i = 0;
  const std::size_t n = text.size();
  const auto space = [](char ch) {
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v';
  };
  while (i < n) {
    const char ch = text[i];
    if (ch == '#') {
      while (i < n && text[i] != '\n') ++i;
    } else if (space(ch)) {
      if (ch == '\n') ++line;
      ++i;
    } else if (ch >= '0' && ch <= '9') {
      std::uint64_t v = 0;
      while (i < n && text[i] >= '0' && text[i] <= '9') {
        v = v * 10 + static_cast<unsigned>(text[i] - '0');
        if (v > 0xFFFFFFFFull)
          throw UsageError(line_of(source, line) + ": quantization value too large");
        ++i;
      }
      values.push_back(static_cast<std::uint32_t>(v));
      if (i < n && text[i] == ',') ++i;  // cjpeg takes one character after a number
    } else {
      const bool printable = ch > ' ' && ch < 127;
      throw UsageError(line_of(source, line) + ": expected a number, found " +
                       (printable ? "'" + std::string(1, ch) + "'" : std::string("a control byte")));
    }
  }
  if (values.empty()) throw UsageError(source + ": no quantization table in it");
  if (values.size() % 64 != 0)
    throw UsageError(source + ": " + std::to_string(values.size()) +
                     " values; each table has 64 (natural order)");
  if (values.size() > 64u * kMaxQuantTables)
    throw UsageError(source + ": " + std::to_string(values.size() / 64) +
                     " tables; at most 4");
  std::vector<QuantTableValues> tables(values.size() / 64);
  for (std::size_t k = 0; k < values.size(); ++k) tables[k / 64][k % 64] = values[k];
  return tables;
}

std::vector<int> parse_qslots(const std::string& text) {
  std::vector<int> slots;
  std::size_t from = 0;
  for (;;) {
    const std::size_t comma = text.find(',', from);
    const std::string part = text.substr(from, comma == std::string::npos ? std::string::npos
                                                                         : comma - from);
    if (part.size() != 1 || part[0] < '0' || part[0] > '3')
      throw UsageError("--qslots '" + text + "': expected slots 0..3 separated by commas "
                       "(e.g. 0,1,1)");
    slots.push_back(part[0] - '0');
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return slots;
}

std::string format_qtables(const std::vector<QuantTableValues>& tables) {
  std::string out;
  for (std::size_t t = 0; t < tables.size(); ++t) {
    out += "# table " + std::to_string(t) + "\n";
    for (int i = 0; i < 64; ++i) {
      std::string v = std::to_string(tables[t][i]);
      out += std::string(v.size() < 4 ? 4 - v.size() : 0, ' ') + v;
      out += i % 8 == 7 ? "\n" : " ";
    }
  }
  return out;
}

}  // namespace mjpeg
