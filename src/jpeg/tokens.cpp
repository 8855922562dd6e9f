// The CPU tokenizer (coefficients -> token stream, src/core/token_format.hpp), the histogram to
// --optimize statistics, and the whole-frame encode_tokens. The coder's hot loop is in
// token_coder.cpp.
#include "jpeg/tokens.hpp"

#include <algorithm>

#include "mjpeg/error.hpp"

namespace mjpeg {

TokenView TokenBuffer::view() const {
  TokenView v;
  v.slots = slots.data();
  v.count = slots.size();
  v.row_start = row_start.empty() ? nullptr : row_start.data();
  v.rows = row_start.empty() ? 0 : static_cast<int>(row_start.size()) - 1;
  v.histogram = histogram.empty() ? nullptr : histogram.data();
  return v;
}

namespace {

/// Appends one block's slots; `last_dc` is the predictor of its component.
void tokenize_block(const std::int16_t* b, int& last_dc, int chroma, std::uint16_t*& out,
                    std::uint32_t* hist_dc, std::uint32_t* hist_ac) {
  using namespace tokens;
  const int diff = b[0] - last_dc;
  last_dc = b[0];
  const int dc_size = magnitude_size(static_cast<std::uint32_t>(diff < 0 ? -diff : diff));
  const std::uint32_t dc_bits = value_bits(diff, dc_size);
  if (dc_size > kInlineValueBits) {
    *out++ = slot(dc_symbol(dc_size), chroma, 0);
    *out++ = static_cast<std::uint16_t>(dc_bits);
  } else {
    *out++ = slot(dc_symbol(dc_size), chroma, dc_bits);
  }
  if (hist_dc) ++hist_dc[dc_size];
  int run = 0;
  int last_nonzero = 0;
  for (int k = 1; k < 64; ++k) {
    const int v = b[k];
    if (v == 0) {
      ++run;
      continue;
    }
    for (; run >= 16; run -= 16) {
      *out++ = slot(kZrl, chroma, 0);
      if (hist_ac) ++hist_ac[kZrl];
    }
    const int size = magnitude_size(static_cast<std::uint32_t>(v < 0 ? -v : v));
    const std::uint32_t symbol = static_cast<std::uint32_t>(run) << 4 | static_cast<std::uint32_t>(size);
    const std::uint32_t bits = value_bits(v, size);
    if (size > kInlineValueBits) {
      *out++ = slot(symbol, chroma, 0);
      *out++ = static_cast<std::uint16_t>(bits);
    } else {
      *out++ = slot(symbol, chroma, bits);
    }
    if (hist_ac) ++hist_ac[symbol];
    run = 0;
    last_nonzero = k;
  }
  if (last_nonzero != 63) {
    *out++ = slot(kEob, chroma, 0);
    if (hist_ac) ++hist_ac[kEob];
  }
}

}  // namespace

void tokenize(const FrameGeometry& g, const std::int16_t* coeffs, int restart_interval,
              bool histogram, TokenBuffer& out) {
  using namespace tokens;
  if (g.num_components != 1 && g.num_components != 3)
    throw UsageError("tokenize: geometry has no components");
  // Room for the worst case; resize() only value-initialises what grows, and the buffer is
  // reused frame after frame.
  const std::size_t worst = g.total_blocks * kMaxSlotsPerBlock;
  if (out.slots.size() < worst) out.slots.resize(worst);
  out.row_start.assign(static_cast<std::size_t>(g.mcus_y) + 1, 0);
  if (histogram)
    out.histogram.assign(kHistogramWords, 0);
  else
    out.histogram.clear();
  std::uint32_t* hist = histogram ? out.histogram.data() : nullptr;
  std::uint16_t* const begin = out.slots.data();
  std::uint16_t* p = begin;
  int last_dc[kMaxComponents] = {};
  int until_restart = restart_interval;
  int restart_index = 0;
  for (int my = 0; my < g.mcus_y; ++my) {
    out.row_start[static_cast<std::size_t>(my)] = static_cast<std::uint32_t>(p - begin);
    for (int mx = 0; mx < g.mcus_x; ++mx) {
      if (restart_interval) {
        if (until_restart == 0) {
          *p++ = slot(kRestart, 0, static_cast<std::uint32_t>(restart_index++ & 7));
          std::fill(last_dc, last_dc + kMaxComponents, 0);
          until_restart = restart_interval;
        }
        --until_restart;
      }
      for (int c = 0; c < g.num_components; ++c) {
        const ComponentGeometry& cg = g.comp[c];
        const int chroma = c == 0 ? 0 : 1;
        std::uint32_t* hdc = hist ? hist + (2 * chroma) * kHistogramBins : nullptr;
        std::uint32_t* hac = hist ? hist + (2 * chroma + 1) * kHistogramBins : nullptr;
        for (int yy = 0; yy < cg.v; ++yy) {
          const std::int16_t* row =
              coeffs + g.block_index(c, my * cg.v + yy, mx * cg.h) * kBlockSize;
          for (int xx = 0; xx < cg.h; ++xx)
            tokenize_block(row + xx * kBlockSize, last_dc[c], chroma, p, hdc, hac);
        }
      }
    }
  }
  out.row_start[static_cast<std::size_t>(g.mcus_y)] = static_cast<std::uint32_t>(p - begin);
  out.slots.resize(static_cast<std::size_t>(p - begin));
}

HuffmanStats stats_from_histogram(const std::uint32_t* histogram) {
  using namespace tokens;
  HuffmanStats s;
  for (int t = 0; t < 2; ++t) {
    std::copy(histogram + (2 * t) * kHistogramBins, histogram + (2 * t + 1) * kHistogramBins,
              s.dc[t]);
    std::copy(histogram + (2 * t + 1) * kHistogramBins, histogram + (2 * t + 2) * kHistogramBins,
              s.ac[t]);
  }
  return s;
}

void encode_tokens(const FrameGeometry& g, const QuantTables& tables, const TokenView& tokens,
                   const EncodeOptions& options, std::vector<std::uint8_t>& out, int threads) {
  const int table_count = g.num_components == 1 ? 1 : 2;
  HuffmanTables huff;
  if (options.optimize) {  // the statistics only where they are used (4 KB to zero)
    if (!tokens.histogram) throw Error("encode_tokens: --optimize needs the token histogram");
    HuffmanStats stats = stats_from_histogram(tokens.histogram);
    huff = frame_tables(table_count, &stats);
  } else {
    huff = frame_tables(table_count, nullptr);
  }
  if (table_count == 1) {  // grayscale: only class 0 occurs; keep class 1 valid all the same
    huff.dc[1] = huff.dc[0];
    huff.ac[1] = huff.ac[0];
  }
  encode_token_frame(g, tables, huff, options.restart_interval, tokens, threads, out);
}

}  // namespace mjpeg
