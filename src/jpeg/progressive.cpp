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

#include "core/jpeg_math.hpp"
#include "jpeg/huffman.hpp"
#include "jpeg/jfif_writer.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg {
namespace {

// Bands of the AC coefficients (zigzag positions) for luma and chroma; chosen by
// src/tools/search_scans.py (docs/tuning/scans.md).
struct Band {
  int ss, se;
};
const Band kLumaBands[] = {{1, 2}, {3, 9}, {10, 63}};
const Band kChromaBands[] = {{1, 63}};

/// Bits to bytes with 0xFF stuffing, as libjpeg's emit_bits/flush_bits: a 64-bit accumulator
/// that gives out 32 bits at a time (one append when none of the 4 bytes is 0xFF).
class BitWriter {
 public:
  explicit BitWriter(std::vector<std::uint8_t>& out) : out_(out) {}
  /// Appends the low `n` bits of `value` (n <= 32; the bits above n must be zero).
  void put(std::uint64_t value, int n) {
    acc_ = (acc_ << n) | value;
    bits_ += n;
    if (bits_ >= 32) {
      bits_ -= 32;
      word(static_cast<std::uint32_t>(acc_ >> bits_));
    }
  }
  /// Pads the last byte with 1-bits and writes what is left.
  void flush() {
    const int pad = (8 - (bits_ & 7)) & 7;
    if (pad) put((1u << pad) - 1u, pad);
    while (bits_ >= 8) {
      bits_ -= 8;
      byte(static_cast<std::uint8_t>(acc_ >> bits_));
    }
    acc_ = 0;
    bits_ = 0;
  }
  void marker(int code) {
    out_.push_back(0xFF);
    out_.push_back(static_cast<std::uint8_t>(code));
  }

 private:
  void byte(std::uint8_t b) {
    out_.push_back(b);
    if (b == 0xFF) out_.push_back(0);
  }
  void word(std::uint32_t w) {
    // A byte is 0xFF where ~w has a zero byte.
    const std::uint32_t n = ~w;
    if (((n - 0x01010101u) & ~n & 0x80808080u) == 0) {
      const std::uint8_t bytes[4] = {static_cast<std::uint8_t>(w >> 24),
                                     static_cast<std::uint8_t>(w >> 16),
                                     static_cast<std::uint8_t>(w >> 8), static_cast<std::uint8_t>(w)};
      out_.insert(out_.end(), bytes, bytes + 4);
    } else {
      for (int i = 3; i >= 0; --i) byte(static_cast<std::uint8_t>(w >> (8 * i)));
    }
  }

  std::vector<std::uint8_t>& out_;
  std::uint64_t acc_ = 0;
  int bits_ = 0;
};

/// Bit k set where coefficient k (zigzag) of the block is nonzero, the DC's included: each AC
/// scan then walks only the nonzero positions of its band, and an empty band costs one test.
std::uint64_t nonzero_mask(const std::int16_t* b) {
  return math::nonzero_levels(b) | static_cast<std::uint64_t>(b[0] != 0);
}

int bit_length(std::uint32_t v) {
#if defined(__GNUC__)
  return v ? 32 - __builtin_clz(v) : 0;
#else
  int n = 0;
  while (v) {
    ++n;
    v >>= 1;
  }
  return n;
#endif
}

/// Huffman table index of a component (libjpeg's defaults: luma 0, chroma 1).
int table_of(int c) { return c == 0 ? 0 : 1; }

/// One scan, run twice: Gather counts the symbols (libjpeg's first pass), the second pass
/// writes the bits with the tables made from those counts.
template <bool Gather>
class ScanCoder {
 public:
  ScanCoder(const FrameGeometry& g, const ProgressiveScan& scan, int restart_interval,
            const std::uint64_t* masks, std::uint32_t (*counts)[257], const SymbolCodes* codes,
            BitWriter* bits)
      : g_(g), scan_(scan), restart_(restart_interval), masks_(masks), counts_(counts),
        codes_(codes), bits_(bits),
        band_((scan.se == 63 ? ~0ull : (1ull << (scan.se + 1)) - 1) & ~((1ull << scan.ss) - 1)) {}

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
                code_block(i, c, coeffs, g_.block_index(c, my * cg.v + yy, mx * cg.h + xx));
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
          code_block(0, c, coeffs, g_.block_index(c, by, bx));
          after_unit();
        }
    }
    emit_eobrun();
    if (!Gather) bits_->flush();
  }

 private:
  /// Symbol `s` of component c's table followed by the low `n` bits of `v`.
  void code(int c, int s, std::uint32_t v, int n) {
    const int t = table_of(c);
    if (Gather) {
      ++counts_[t][s];
    } else {
      const std::uint64_t bits = v & ((1u << n) - 1u);
      bits_->put(static_cast<std::uint64_t>(codes_[t].code[s]) << n | bits, codes_[t].size[s] + n);
    }
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
    code(eob_component_, n << 4, static_cast<std::uint32_t>(eobrun_), n);
    eobrun_ = 0;
  }

  void code_block(int i, int c, const std::int16_t* coeffs, std::size_t index) {
    const std::int16_t* b = coeffs + index * kBlockSize;
    if (scan_.ss == 0) {
      const int diff = b[0] - last_dc_[i];
      last_dc_[i] = b[0];
      const int size = bit_length(static_cast<std::uint32_t>(diff < 0 ? -diff : diff));
      code(c, size, static_cast<std::uint32_t>(diff < 0 ? diff - 1 : diff), size);
      return;
    }
    std::uint64_t m = masks_[index] & band_;
    int next = scan_.ss;  // the first position not coded yet
    if (m) emit_eobrun();
    while (m) {
      const int k = math::lowest_bit(m);
      m &= m - 1;
      int run = k - next;
      for (; run > 15; run -= 16) code(c, 0xF0, 0, 0);
      const int v = b[k];
      const int size = bit_length(static_cast<std::uint32_t>(v < 0 ? -v : v));
      if (size > 10) throw Error("progressive coder: an AC coefficient above 10 bits");
      code(c, run << 4 | size, static_cast<std::uint32_t>(v < 0 ? v - 1 : v), size);
      next = k + 1;
    }
    // The band ends in zeros: one more block for the end-of-band run.
    if (next <= scan_.se && ++eobrun_ == 0x7FFF) emit_eobrun();
  }

  const FrameGeometry& g_;
  const ProgressiveScan& scan_;
  int restart_;
  const std::uint64_t* masks_;  ///< nonzero_mask() of every block of the frame
  std::uint32_t (*counts_)[257];
  const SymbolCodes* codes_;
  BitWriter* bits_;
  std::uint64_t band_;  ///< bits ss..se
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
  thread_local std::vector<std::uint64_t> masks;
  masks.resize(g.total_blocks);
  for (std::size_t b = 0; b < g.total_blocks; ++b) masks[b] = nonzero_mask(coeffs + b * kBlockSize);
  out.clear();
  write_frame_header(g, tables, true, out);
  out.reserve(out.size() + g.total_blocks * 24);
  BitWriter bits(out);
  bool first = true;
  for (const ProgressiveScan& scan : progressive_script(g.num_components)) {
    const bool dc = scan.ss == 0;
    std::uint32_t counts[2][257];
    std::memset(counts, 0, sizeof counts);
    ScanCoder<true>(g, scan, ri, masks.data(), counts, nullptr, nullptr).run(coeffs);
    // One table per table index the scan uses, made and written in component order.
    SymbolCodes codes[2];
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
    ScanCoder<false>(g, scan, ri, masks.data(), nullptr, codes, &bits).run(coeffs);
  }
  write_trailer(out);
}

void tokens_to_coefficients(const FrameGeometry& g, const TokenView& tokens,
                            std::int16_t* coeffs) {
  using namespace tokens;
  if (tokens.format != Format::slots)
    throw Error("--progressive from a token stream needs symbol slots, not coded blocks");
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
