// The CPU tokenizers (coefficients -> symbol slots or coded blocks, src/core/token_format.hpp),
// the view of a stream as the GPU writes it, the histogram to --optimize statistics, and the
// whole-frame encode_tokens. The coder is in token_coder.cpp.
#include "jpeg/tokens.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "mjpeg/error.hpp"

namespace mjpeg {

TokenView TokenBuffer::view() const {
  TokenView v;
  v.format = format;
  v.slots = slots.data();
  v.count = slots.size();
  v.blocks = blocks.data();
  v.block_count = blocks.size();
  v.bits = bits.data();
  v.bit_bytes = bits.size();
  v.row_start = row_start.empty() ? nullptr : row_start.data();
  v.rows = row_start.empty() ? 0 : static_cast<int>(row_start.size()) - 1;
  v.histogram = histogram.empty() ? nullptr : histogram.data();
  return v;
}

std::size_t TokenBuffer::bytes() const {
  return format == tokens::Format::slots ? 2 * slots.size() : 4 * blocks.size() + bits.size();
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
  out.format = Format::slots;
  out.blocks.clear();
  out.bits.clear();
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

tokens::AcCodes ac_codes(const HuffmanTables& tables, int table_count) {
  tokens::AcCodes codes{};
  for (int cls = 0; cls < 2; ++cls) {
    const SymbolCodes c = derive_codes(tables.ac[cls < table_count ? cls : 0]);
    for (int sym = 0; sym < 256; ++sym) {
      codes.code[cls][sym] = static_cast<std::uint16_t>(c.code[sym]);
      codes.length[cls][sym] = c.size[sym];
    }
  }
  return codes;
}

bool coded_blocks_fit(const FrameGeometry& g) { return g.total_blocks <= tokens::kMaxCodedBlocks; }

tokens::Format requested_token_format() {
  const char* value = std::getenv("MJPEG_TOKEN_FORMAT");
  if (value == nullptr || *value == 0 || std::strcmp(value, "coded") == 0)
    return tokens::Format::blocks;
  if (std::strcmp(value, "slots") == 0) return tokens::Format::slots;
  throw UsageError(std::string("MJPEG_TOKEN_FORMAT: '") + value +
                   "' is not a token format (coded or slots)");
}

tokens::Format token_format_for(const FrameGeometry& g, const EncodeOptions& options,
                                tokens::Format requested) {
  return requested == tokens::Format::blocks && !options.optimize && !options.progressive &&
                 coded_blocks_fit(g)
             ? tokens::Format::blocks
             : tokens::Format::slots;
}

namespace {

/// The AC stream as the reference writes it: one bit after another into bytes, most
/// significant first (kept plain: it is what the GPU kernel and the fast coders are held to).
class AcBits {
 public:
  explicit AcBits(std::vector<std::uint8_t>& out) : out_(out) { out_.clear(); }
  void put(std::uint32_t value, int n) {
    for (int i = n - 1; i >= 0; --i) {
      byte_ = static_cast<std::uint8_t>(byte_ << 1 | (value >> i & 1u));
      if (++count_ % 8 == 0) {
        out_.push_back(byte_);
        byte_ = 0;
      }
    }
  }
  std::uint64_t count() const { return count_; }
  /// Zero bits to a whole 32-bit word, then the slack.
  void finish() {
    while (count_ % 32) put(0, 1);
    out_.resize(out_.size() + tokens::kBitsSlack, 0);
  }

 private:
  std::vector<std::uint8_t>& out_;
  std::uint8_t byte_ = 0;
  std::uint64_t count_ = 0;
};

[[noreturn]] void no_code(int cls, int symbol) {
  throw Error("tokenize_blocks: the " + std::string(cls ? "chroma" : "luma") +
              " AC table has no code for symbol " + std::to_string(symbol));
}

}  // namespace

void tokenize_blocks(const FrameGeometry& g, const std::int16_t* coeffs,
                     const tokens::AcCodes& codes, TokenBuffer& out) {
  using namespace tokens;
  if (g.num_components != 1 && g.num_components != 3)
    throw UsageError("tokenize_blocks: geometry has no components");
  if (!coded_blocks_fit(g))
    throw UsageError("tokenize_blocks: " + std::to_string(g.total_blocks) +
                     " blocks are more than a coded-blocks stream holds");
  out.format = Format::blocks;
  out.slots.clear();
  out.histogram.clear();
  out.blocks.resize(g.total_blocks);
  out.row_start.assign(static_cast<std::size_t>(g.mcus_y) + 1, 0);
  AcBits w(out.bits);
  auto code = [&](int cls, int symbol) {
    const int n = codes.length[cls][symbol];
    if (n == 0) no_code(cls, symbol);
    w.put(codes.code[cls][symbol], n);
  };
  std::size_t s = 0;
  for (int my = 0; my < g.mcus_y; ++my) {
    out.row_start[static_cast<std::size_t>(my)] = static_cast<std::uint32_t>(w.count());
    for (int mx = 0; mx < g.mcus_x; ++mx)
      for (int c = 0; c < g.num_components; ++c) {
        const ComponentGeometry& cg = g.comp[c];
        const int cls = c == 0 ? 0 : 1;
        for (int yy = 0; yy < cg.v; ++yy)
          for (int xx = 0; xx < cg.h; ++xx) {
            const std::int16_t* b =
                coeffs + g.block_index(c, my * cg.v + yy, mx * cg.h + xx) * kBlockSize;
            const std::uint64_t before = w.count();
            int run = 0;
            for (int k = 1; k < kBlockSize; ++k) {
              const int v = b[k];
              if (v == 0) {
                ++run;
                continue;
              }
              for (; run >= 16; run -= 16) code(cls, static_cast<int>(kZrl));
              const int size = magnitude_size(static_cast<std::uint32_t>(v < 0 ? -v : v));
              code(cls, run << 4 | size);
              w.put(value_bits(v, size), size);
              run = 0;
            }
            if (run) code(cls, static_cast<int>(kEob));
            out.blocks[s++] = block_word(b[0], static_cast<std::uint32_t>(w.count() - before));
          }
      }
  }
  out.row_start[static_cast<std::size_t>(g.mcus_y)] = static_cast<std::uint32_t>(w.count());
  w.finish();
}

TokenView stream_view(const std::uint8_t* stream, std::size_t header_bytes,
                      std::size_t block_count) {
  using namespace tokens;
  StreamHeader h;
  std::memcpy(&h, stream, sizeof h);
  if (h.overflow) throw Error("token stream: it did not fit its buffer");
  const bool histogram = (h.flags & kHistogramFlag) != 0;
  const auto format = static_cast<Format>(h.flags >> kFormatShift);
  if ((format != Format::slots && format != Format::blocks) ||
      (histogram && format != Format::slots) ||
      4 * header_words(static_cast<int>(h.rows), histogram) > header_bytes)
    throw Error("token stream: a malformed header");
  TokenView v;
  v.format = format;
  const auto* words = reinterpret_cast<const std::uint32_t*>(stream) + sizeof h / 4;
  v.row_start = words;
  v.rows = static_cast<int>(h.rows);
  v.histogram = histogram ? words + h.rows + 1 : nullptr;
  const std::uint8_t* body = stream + header_bytes;
  if (format == Format::slots) {
    v.slots = reinterpret_cast<const std::uint16_t*>(body);
    v.count = h.body_bytes / 2;
  } else {
    if (h.body_bytes < 4 * block_count + kBitsSlack)
      throw Error("token stream: a coded-blocks body shorter than its block words");
    v.blocks = reinterpret_cast<const std::uint32_t*>(body);
    v.block_count = block_count;
    v.bits = body + 4 * block_count;
    v.bit_bytes = h.body_bytes - 4 * block_count;
  }
  return v;
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
  if (tokens.format == tokens::Format::blocks && options.optimize)
    throw Error("encode_tokens: coded blocks carry the Annex K codes; --optimize needs symbol slots");
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
