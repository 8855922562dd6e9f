// Progressive (SOF2) spectral-selection coder; see progressive.hpp. The coding rules are those
// of libjpeg's progressive Huffman encoder (jcphuff.c) for first scans with Al = 0:
//  * DC scan: the difference to the previous block of the same component (reset to 0 at the
//    start and at every restart), coded as its size category and value bits, as in a baseline
//    scan.
//  * AC band Ss..Se of one component: zero runs and nonzero values as in a baseline scan (ZRL
//    for 16 zeros before a nonzero), but a block whose band ends in zeros is not closed by an
//    EOB of its own: it adds one to a count of such blocks (EOBRUN), which is coded as symbol
//    n << 4 (n = floor(log2(EOBRUN))) and n bits of EOBRUN before the next nonzero value is
//    coded, at a restart, at the end of the scan, and when the count reaches 0x7FFF.
//  * Each scan's tables are the optimal tables (libjpeg's jpeg_gen_optimal_table, here
//    optimal_spec) of that scan's own symbol counts, written in a DHT before its SOS.
#include "jpeg/progressive.hpp"

#include <algorithm>
#include <cstring>

#include "jpeg/huffman.hpp"
#include "jpeg/jfif_writer.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg {
namespace {

// Bands of the AC coefficients (zigzag positions) for luma and chroma; chosen by
// tools/search_scans.py (docs/tuning/scans.md).
struct Band {
  int ss, se;
};
const Band kLumaBands[] = {{1, 2}, {3, 9}, {10, 63}};
const Band kChromaBands[] = {{1, 63}};

/// Huffman code and length per symbol.
struct Codes {
  std::uint32_t code[256] = {};
  std::uint8_t size[256] = {};
};

Codes derive_codes(const HuffmanSpec& spec) {
  Codes t;
  std::uint32_t code = 0;
  int k = 0;
  for (int len = 1; len <= 16; ++len) {
    for (int i = 0; i < spec.bits[len]; ++i, ++k) {
      t.code[spec.values[k]] = code++;
      t.size[spec.values[k]] = static_cast<std::uint8_t>(len);
    }
    code <<= 1;
  }
  return t;
}

/// Bits to bytes with 0xFF stuffing, as libjpeg's emit_bits/flush_bits.
class BitWriter {
 public:
  explicit BitWriter(std::vector<std::uint8_t>& out) : out_(out) {}
  void put(std::uint32_t value, int n) {
    if (n == 0) return;
    acc_ = (acc_ << n) | (value & ((1u << n) - 1u));
    bits_ += n;
    while (bits_ >= 8) {
      bits_ -= 8;
      const std::uint8_t b = static_cast<std::uint8_t>(acc_ >> bits_);
      out_.push_back(b);
      if (b == 0xFF) out_.push_back(0);
    }
  }
  /// Pads the last byte with 1-bits.
  void flush() {
    put(0x7F, 7);
    acc_ = 0;
    bits_ = 0;
  }
  void marker(int code) {
    out_.push_back(0xFF);
    out_.push_back(static_cast<std::uint8_t>(code));
  }

 private:
  std::vector<std::uint8_t>& out_;
  std::uint64_t acc_ = 0;
  int bits_ = 0;
};

int bit_length(std::uint32_t v) {
  int n = 0;
  while (v) {
    ++n;
    v >>= 1;
  }
  return n;
}

/// Huffman table index of a component (libjpeg's defaults: luma 0, chroma 1).
int table_of(int c) { return c == 0 ? 0 : 1; }

/// One scan, run twice: Gather counts the symbols (libjpeg's first pass), the second pass
/// writes the bits with the tables made from those counts.
template <bool Gather>
class ScanCoder {
 public:
  ScanCoder(const FrameGeometry& g, const ProgressiveScan& scan, int restart_interval,
            std::uint32_t (*counts)[257], const Codes* codes, BitWriter* bits)
      : g_(g), scan_(scan), restart_(restart_interval), counts_(counts), codes_(codes),
        bits_(bits) {}

  void run(const std::int16_t* coeffs) {
    restarts_to_go_ = restart_;
    eob_component_ = scan_.components[0];
    if (scan_.count > 1) {
      for (int my = 0; my < g_.mcus_y; ++my)
        for (int mx = 0; mx < g_.mcus_x; ++mx) {
          before_unit();
          for (int i = 0; i < scan_.count; ++i) {
            const int c = scan_.components[i];
            const ComponentGeometry& cg = g_.comp[c];
            for (int yy = 0; yy < cg.v; ++yy)
              for (int xx = 0; xx < cg.h; ++xx)
                code_block(i, c,
                           coeffs + g_.block_index(c, my * cg.v + yy, mx * cg.h + xx) * kBlockSize);
          }
          after_unit();
        }
    } else {
      // A single-component scan is not interleaved: its MCU is one block and it covers only
      // the component's real blocks (no MCU padding).
      const int c = scan_.components[0];
      const ComponentGeometry& cg = g_.comp[c];
      for (int by = 0; by < cg.height_in_blocks; ++by)
        for (int bx = 0; bx < cg.width_in_blocks; ++bx) {
          before_unit();
          code_block(0, c, coeffs + g_.block_index(c, by, bx) * kBlockSize);
          after_unit();
        }
    }
    emit_eobrun();
    if (!Gather) bits_->flush();
  }

 private:
  void symbol(int c, int s) {
    const int t = table_of(c);
    if (Gather)
      ++counts_[t][s];
    else
      bits_->put(codes_[t].code[s], codes_[t].size[s]);
  }
  void value(std::uint32_t v, int n) {
    if (!Gather) bits_->put(v, n);
  }

  void before_unit() {
    if (restart_ && restarts_to_go_ == 0) {
      emit_eobrun();
      if (!Gather) {
        bits_->flush();
        bits_->marker(0xD0 + next_restart_);
      }
      std::fill(std::begin(last_dc_), std::end(last_dc_), 0);
      eobrun_ = 0;
    }
  }
  void after_unit() {
    if (!restart_) return;
    if (restarts_to_go_ == 0) {
      restarts_to_go_ = restart_;
      next_restart_ = (next_restart_ + 1) & 7;
    }
    --restarts_to_go_;
  }

  void emit_eobrun() {
    if (eobrun_ == 0) return;
    const int n = bit_length(static_cast<std::uint32_t>(eobrun_)) - 1;
    symbol(eob_component_, n << 4);
    value(static_cast<std::uint32_t>(eobrun_), n);
    eobrun_ = 0;
  }

  void code_block(int i, int c, const std::int16_t* b) {
    if (scan_.ss == 0) {
      const int diff = b[0] - last_dc_[i];
      last_dc_[i] = b[0];
      const int size = bit_length(static_cast<std::uint32_t>(diff < 0 ? -diff : diff));
      symbol(c, size);
      value(static_cast<std::uint32_t>(diff < 0 ? diff - 1 : diff), size);
      return;
    }
    int run = 0;
    for (int k = scan_.ss; k <= scan_.se; ++k) {
      const int v = b[k];
      if (v == 0) {
        ++run;
        continue;
      }
      emit_eobrun();
      for (; run > 15; run -= 16) symbol(c, 0xF0);
      const int size = bit_length(static_cast<std::uint32_t>(v < 0 ? -v : v));
      if (size > 10) throw Error("progressive coder: an AC coefficient above 10 bits");
      symbol(c, run << 4 | size);
      value(static_cast<std::uint32_t>(v < 0 ? v - 1 : v), size);
      run = 0;
    }
    if (run > 0 && ++eobrun_ == 0x7FFF) emit_eobrun();
  }

  const FrameGeometry& g_;
  const ProgressiveScan& scan_;
  int restart_;
  std::uint32_t (*counts_)[257];
  const Codes* codes_;
  BitWriter* bits_;
  int last_dc_[kMaxComponents] = {0, 0, 0};
  int eobrun_ = 0;
  int eob_component_ = 0;
  int restarts_to_go_ = 0;
  int next_restart_ = 0;
};

}  // namespace

std::vector<ProgressiveScan> progressive_script(int num_components) {
  std::vector<ProgressiveScan> scans;
  ProgressiveScan dc;
  dc.count = num_components;
  for (int c = 0; c < num_components; ++c) dc.components[c] = c;
  scans.push_back(dc);
  for (const Band& b : kLumaBands) {
    ProgressiveScan s;
    s.count = 1;
    s.ss = b.ss;
    s.se = b.se;
    scans.push_back(s);
  }
  for (int c = 1; c < num_components; ++c)
    for (const Band& b : kChromaBands) {
      ProgressiveScan s;
      s.count = 1;
      s.components[0] = c;
      s.ss = b.ss;
      s.se = b.se;
      scans.push_back(s);
    }
  return scans;
}

std::string progressive_script_text(int num_components) {
  std::string text;
  for (const ProgressiveScan& s : progressive_script(num_components)) {
    for (int i = 0; i < s.count; ++i) {
      if (i) text += ",";
      text += std::to_string(s.components[i]);
    }
    text += ": " + std::to_string(s.ss) + "-" + std::to_string(s.se) + ", 0, 0;\n";
  }
  return text;
}

void encode_progressive(const FrameGeometry& g, const QuantTables& tables,
                        const std::int16_t* coeffs, const EncodeOptions& options,
                        std::vector<std::uint8_t>& out) {
  const int ri = options.restart_interval;
  out.clear();
  write_frame_header(g, tables, true, out);
  BitWriter bits(out);
  bool first = true;
  for (const ProgressiveScan& scan : progressive_script(g.num_components)) {
    const bool dc = scan.ss == 0;
    std::uint32_t counts[2][257];
    std::memset(counts, 0, sizeof counts);
    ScanCoder<true>(g, scan, ri, counts, nullptr, nullptr).run(coeffs);
    // One table per table index the scan uses, made and written in component order.
    Codes codes[2];
    bool made[2] = {false, false};
    int selectors[kMaxComponents] = {0, 0, 0};
    for (int i = 0; i < scan.count; ++i) {
      const int t = table_of(scan.components[i]);
      selectors[i] = dc ? t << 4 : t;
      if (made[t]) continue;
      made[t] = true;
      const HuffmanSpec spec = optimal_spec(counts[t]);
      write_dht(spec, (dc ? 0x00 : 0x10) | t, out);
      codes[t] = derive_codes(spec);
    }
    if (first && ri > 0) write_dri(ri, out);
    first = false;
    write_sos(scan.components, selectors, scan.count, scan.ss, scan.se, 0, out);
    ScanCoder<false>(g, scan, ri, nullptr, codes, &bits).run(coeffs);
  }
  write_trailer(out);
}

void tokens_to_coefficients(const FrameGeometry& g, const TokenView& tokens,
                            std::int16_t* coeffs) {
  using namespace tokens;
  const std::uint16_t* p = tokens.slots;
  const std::uint16_t* const end = tokens.slots + tokens.count;
  auto next = [&]() -> std::uint32_t {
    if (p == end) throw Error("token stream ends inside a block");
    return *p++;
  };
  // The value of `size` bits: inline in the slot or, above kInlineValueBits, the next slot.
  auto value = [&](std::uint32_t s, int size) -> int {
    if (size == 0) return 0;
    const std::uint32_t bits =
        (size > kInlineValueBits ? next() : s >> kValueShift) & ((1u << size) - 1u);
    return bits >> (size - 1) ? static_cast<int>(bits)
                              : static_cast<int>(bits) - (1 << size) + 1;
  };
  int pred[kMaxComponents] = {0, 0, 0};
  for (int my = 0; my < g.mcus_y; ++my)
    for (int mx = 0; mx < g.mcus_x; ++mx)
      for (int c = 0; c < g.num_components; ++c) {
        const ComponentGeometry& cg = g.comp[c];
        for (int yy = 0; yy < cg.v; ++yy)
          for (int xx = 0; xx < cg.h; ++xx) {
            std::int16_t* b =
                coeffs + g.block_index(c, my * cg.v + yy, mx * cg.h + xx) * kBlockSize;
            std::memset(b, 0, kBlockSize * sizeof *b);
            std::uint32_t s = next();
            if ((s & 0xFF) == kRestart) {
              std::fill(std::begin(pred), std::end(pred), 0);
              s = next();
            }
            if ((s & 0x0F) != kDcNibble) throw Error("token stream: a block without its DC");
            pred[c] += value(s, static_cast<int>(s >> 4 & 0x0F));
            b[0] = static_cast<std::int16_t>(pred[c]);
            for (int k = 1; k < kBlockSize;) {
              s = next();
              const std::uint32_t sym = s & 0xFF;
              if (sym == kEob) break;
              if (sym == kZrl) {
                k += 16;
                continue;
              }
              const int size = static_cast<int>(sym & 0x0F);
              k += static_cast<int>(sym >> 4);
              if (size == 0 || size > 10 || k >= kBlockSize)
                throw Error("token stream: a malformed AC symbol");
              b[k++] = static_cast<std::int16_t>(value(s, size));
            }
          }
      }
  if (p != end) throw Error("token stream: slots left after the last block");
}

void encode_tokens_progressive(const FrameGeometry& g, const QuantTables& tables,
                               const TokenView& tokens, const EncodeOptions& options,
                               std::vector<std::int16_t>& scratch,
                               std::vector<std::uint8_t>& out) {
  scratch.resize(g.coefficient_count());
  tokens_to_coefficients(g, tokens, scratch.data());
  encode_progressive(g, tables, scratch.data(), options, out);
}

}  // namespace mjpeg
