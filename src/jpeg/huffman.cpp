#include "jpeg/huffman.hpp"

#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "mjpeg/error.hpp"

namespace mjpeg {
namespace {

// ---------------------------------------------------------------------------------------------
// ITU-T T.81 Annex K.3: the typical (standard) Huffman tables.
// ---------------------------------------------------------------------------------------------
HuffmanSpec make_spec(std::initializer_list<int> bits, std::initializer_list<int> values) {
  HuffmanSpec s;
  int n = 1;
  for (int b : bits) s.bits[n++] = static_cast<std::uint8_t>(b);
  int i = 0;
  for (int v : values) s.values[i++] = static_cast<std::uint8_t>(v);
  return s;
}

const HuffmanSpec kStdDc[2] = {
    make_spec({0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0},
              {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}),
    make_spec({0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0},
              {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}),
};

const HuffmanSpec kStdAc[2] = {
    make_spec({0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7d},
              {0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51,
               0x61, 0x07, 0x22, 0x71, 0x14, 0x32, 0x81, 0x91, 0xa1, 0x08, 0x23, 0x42, 0xb1, 0xc1,
               0x15, 0x52, 0xd1, 0xf0, 0x24, 0x33, 0x62, 0x72, 0x82, 0x09, 0x0a, 0x16, 0x17, 0x18,
               0x19, 0x1a, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39,
               0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x53, 0x54, 0x55, 0x56, 0x57,
               0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74, 0x75,
               0x76, 0x77, 0x78, 0x79, 0x7a, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x92,
               0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
               0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3,
               0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8,
               0xd9, 0xda, 0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf1, 0xf2,
               0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa}),
    make_spec({0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77},
              {0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31, 0x06, 0x12, 0x41, 0x51, 0x07,
               0x61, 0x71, 0x13, 0x22, 0x32, 0x81, 0x08, 0x14, 0x42, 0x91, 0xa1, 0xb1, 0xc1, 0x09,
               0x23, 0x33, 0x52, 0xf0, 0x15, 0x62, 0x72, 0xd1, 0x0a, 0x16, 0x24, 0x34, 0xe1, 0x25,
               0xf1, 0x17, 0x18, 0x19, 0x1a, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x35, 0x36, 0x37, 0x38,
               0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x53, 0x54, 0x55, 0x56,
               0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74,
               0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89,
               0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5,
               0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba,
               0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6,
               0xd7, 0xd8, 0xd9, 0xda, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf2,
               0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa}),
};

// ---------------------------------------------------------------------------------------------
// Encoding tables: for each symbol, its code left-aligned nowhere, just value + length.
// ---------------------------------------------------------------------------------------------
struct CodeTable {
  std::uint32_t code[256] = {};
  std::uint8_t size[256] = {};  // 0 = symbol absent
};

CodeTable derive(const HuffmanSpec& spec) {
  CodeTable t;
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

inline int bit_length(std::uint32_t v) { return v ? 32 - __builtin_clz(v) : 0; }

/// Bit mask of the nonzero AC coefficients of a zigzag-ordered block (bit k = coefficient k).
inline std::uint64_t nonzero_ac_mask(const std::int16_t* b) {
#if defined(__SSE2__)
  const __m128i zero = _mm_setzero_si128();
  std::uint64_t zero_mask = 0;
  for (int i = 0; i < 4; ++i) {
    const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 16 * i));
    const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 16 * i + 8));
    const __m128i packed = _mm_packs_epi16(_mm_cmpeq_epi16(lo, zero), _mm_cmpeq_epi16(hi, zero));
    zero_mask |= static_cast<std::uint64_t>(_mm_movemask_epi8(packed) & 0xFFFF) << (16 * i);
  }
  return ~zero_mask & ~std::uint64_t{1};
#else
  std::uint64_t mask = 0;
  for (int k = 1; k < 64; ++k) mask |= static_cast<std::uint64_t>(b[k] != 0) << k;
  return mask;
#endif
}

// ---------------------------------------------------------------------------------------------
// Bit writer: a 64-bit accumulator filled from the top; full words go out with 0xFF stuffing.
// ---------------------------------------------------------------------------------------------
class BitWriter {
 public:
  explicit BitWriter(std::vector<std::uint8_t>& out) : out_(out), pos_(out.size()) {}

  /// Makes room for at least `bytes` more output bytes.
  void reserve(std::size_t bytes) {
    if (out_.size() - pos_ < bytes) out_.resize(std::max(out_.size() * 2, pos_ + bytes));
  }

  /// Appends the low `n` bits of `value` (n <= 32, value < 2^n).
  void put(std::uint32_t value, int n) {
    if (n < free_) {
      free_ -= n;
      acc_ |= static_cast<std::uint64_t>(value) << free_;
      return;
    }
    const int rest = n - free_;  // bits that do not fit in this word
    write_word(acc_ | (static_cast<std::uint64_t>(value) >> rest));
    free_ = 64 - rest;
    acc_ = rest ? static_cast<std::uint64_t>(value) << free_ : 0;
  }

  /// Pads the last partial byte with 1-bits and writes every pending byte.
  void flush() {
    const int used = 64 - free_;
    const int pad = (8 - used % 8) % 8;
    if (pad) put((1u << pad) - 1, pad);
    const int bytes = (64 - free_) / 8;
    for (int i = 0; i < bytes; ++i) write_byte(static_cast<std::uint8_t>(acc_ >> (56 - 8 * i)));
    acc_ = 0;
    free_ = 64;
  }

  void marker(std::uint8_t code) {
    out_[pos_++] = 0xFF;
    out_[pos_++] = code;
  }

  /// Shrinks the output vector to what was written.
  void finish() { out_.resize(pos_); }

 private:
  void write_byte(std::uint8_t b) {
    out_[pos_++] = b;
    if (b == 0xFF) out_[pos_++] = 0x00;
  }
  void write_word(std::uint64_t w) {
    // Any 0xFF byte in w? (~w has a zero byte exactly where w has 0xFF.)
    const std::uint64_t x = ~w;
    if (((x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull) == 0) {
      const std::uint64_t be = __builtin_bswap64(w);
      std::memcpy(&out_[pos_], &be, 8);
      pos_ += 8;
    } else {
      for (int i = 0; i < 8; ++i) write_byte(static_cast<std::uint8_t>(w >> (56 - 8 * i)));
    }
  }

  std::vector<std::uint8_t>& out_;
  std::size_t pos_;
  std::uint64_t acc_ = 0;
  int free_ = 64;
};

// Worst case for one block: DC 16+11 bits, 63 AC codes of 16+10 bits, all bytes stuffed.
constexpr std::size_t kMaxBlockBytes = 2 * (27 + 63 * 26 + 7) / 8 + 16;

/// Visits the MCUs of a frame in scan order, calling on_restart(n) before each restart
/// interval except the first, and on_block(component, block) for each block of each MCU.
template <typename OnRestart, typename OnMcu, typename OnBlock>
void for_each_block(const FrameGeometry& g, const std::int16_t* coeffs, int restart_interval,
                    OnRestart&& on_restart, OnMcu&& on_mcu, OnBlock&& on_block) {
  long mcu = 0;
  int restart_index = 0;
  for (int my = 0; my < g.mcus_y; ++my) {
    for (int mx = 0; mx < g.mcus_x; ++mx, ++mcu) {
      if (restart_interval && mcu && mcu % restart_interval == 0) on_restart(restart_index++);
      on_mcu();
      for (int c = 0; c < g.num_components; ++c) {
        const ComponentGeometry& cg = g.comp[c];
        for (int yy = 0; yy < cg.v; ++yy) {
          const std::int16_t* row =
              coeffs + g.block_index(c, my * cg.v + yy, mx * cg.h) * kBlockSize;
          for (int xx = 0; xx < cg.h; ++xx) on_block(c, row + xx * kBlockSize);
        }
      }
    }
  }
}

}  // namespace

int HuffmanSpec::count() const {
  int n = 0;
  for (int i = 1; i <= 16; ++i) n += bits[i];
  return n;
}

const HuffmanSpec& standard_dc_spec(int index) { return kStdDc[index]; }
const HuffmanSpec& standard_ac_spec(int index) { return kStdAc[index]; }

void gather_stats(const FrameGeometry& g, const std::int16_t* coeffs, int restart_interval,
                  HuffmanStats& stats) {
  int last_dc[kMaxComponents] = {};
  for_each_block(
      g, coeffs, restart_interval, [&](int) { std::fill(last_dc, last_dc + kMaxComponents, 0); },
      [] {},
      [&](int c, const std::int16_t* b) {
        const int table = c == 0 ? 0 : 1;
        const int diff = b[0] - last_dc[c];
        last_dc[c] = b[0];
        stats.dc[table][bit_length(static_cast<std::uint32_t>(diff < 0 ? -diff : diff))]++;
        std::uint64_t mask = nonzero_ac_mask(b);
        int k = 0;
        while (mask) {
          const int z = __builtin_ctzll(mask);
          int run = z - k - 1;
          for (; run >= 16; run -= 16) stats.ac[table][0xF0]++;
          const int v = b[z];
          stats.ac[table][(run << 4) | bit_length(static_cast<std::uint32_t>(v < 0 ? -v : v))]++;
          k = z;
          mask &= mask - 1;
        }
        if (k != 63) stats.ac[table][0x00]++;
      });
}

HuffmanSpec optimal_spec(std::uint32_t freq_in[257]) {
  // libjpeg's jpeg_gen_optimal_table (ITU-T T.81 K.2 with libjpeg's tie rules): repeatedly
  // merge the two least frequent trees (ties go to the larger symbol number), then limit code
  // lengths to 16 bits, then drop the reserved symbol 256 from the longest length.
  constexpr int kMaxLen = 32;
  long long freq[257];
  for (int i = 0; i < 257; ++i) freq[i] = freq_in[i];
  freq[256] = 1;
  int codesize[257] = {};
  int others[257];
  std::fill(others, others + 257, -1);
  for (;;) {
    int c1 = -1, c2 = -1;
    long long v = 1000000000LL;
    for (int i = 0; i <= 256; ++i)
      if (freq[i] && freq[i] <= v) { v = freq[i]; c1 = i; }
    v = 1000000000LL;
    for (int i = 0; i <= 256; ++i)
      if (freq[i] && freq[i] <= v && i != c1) { v = freq[i]; c2 = i; }
    if (c2 < 0) break;
    freq[c1] += freq[c2];
    freq[c2] = 0;
    ++codesize[c1];
    while (others[c1] >= 0) { c1 = others[c1]; ++codesize[c1]; }
    others[c1] = c2;
    ++codesize[c2];
    while (others[c2] >= 0) { c2 = others[c2]; ++codesize[c2]; }
  }
  int bits[kMaxLen + 1] = {};
  for (int i = 0; i <= 256; ++i) {
    if (!codesize[i]) continue;
    if (codesize[i] > kMaxLen) throw Error("Huffman code length overflow");
    ++bits[codesize[i]];
  }
  for (int i = kMaxLen; i > 16; --i) {
    while (bits[i] > 0) {
      int j = i - 2;
      while (bits[j] == 0) --j;
      bits[i] -= 2;
      bits[i - 1]++;
      bits[j + 1] += 2;
      bits[j]--;
    }
  }
  int longest = 16;
  while (bits[longest] == 0) --longest;
  bits[longest]--;
  HuffmanSpec spec;
  for (int i = 1; i <= 16; ++i) spec.bits[i] = static_cast<std::uint8_t>(bits[i]);
  int p = 0;
  for (int len = 1; len <= kMaxLen; ++len)
    for (int sym = 0; sym <= 255; ++sym)
      if (codesize[sym] == len) spec.values[p++] = static_cast<std::uint8_t>(sym);
  return spec;
}

void encode_scan(const FrameGeometry& g, const std::int16_t* coeffs, int restart_interval,
                 const HuffmanTables& tables, std::vector<std::uint8_t>& out) {
  CodeTable dc[2], ac[2];
  const int table_count = g.num_components == 1 ? 1 : 2;
  for (int t = 0; t < table_count; ++t) {
    dc[t] = derive(tables.dc[t]);
    ac[t] = derive(tables.ac[t]);
  }
  // Typical output is a fraction of this; the writer grows on demand per MCU.
  out.reserve(out.size() + g.total_blocks * 16 + 1024);
  BitWriter w(out);
  const std::size_t mcu_bytes = static_cast<std::size_t>(g.blocks_per_mcu) * kMaxBlockBytes + 16;
  int last_dc[kMaxComponents] = {};
  for_each_block(
      g, coeffs, restart_interval,
      [&](int index) {
        w.reserve(32);
        w.flush();
        w.marker(static_cast<std::uint8_t>(0xD0 + (index & 7)));
        std::fill(last_dc, last_dc + kMaxComponents, 0);
      },
      [&] { w.reserve(mcu_bytes); },
      [&](int c, const std::int16_t* b) {
        const CodeTable& dct = dc[c == 0 ? 0 : 1];
        const CodeTable& act = ac[c == 0 ? 0 : 1];
        // DC difference: magnitude category, then the category's low bits of the value
        // (one's complement for negative values).
        int diff = b[0] - last_dc[c];
        last_dc[c] = b[0];
        int nbits = bit_length(static_cast<std::uint32_t>(diff < 0 ? -diff : diff));
        if (diff < 0) diff -= 1;
        w.put((dct.code[nbits] << nbits) | (static_cast<std::uint32_t>(diff) & ((1u << nbits) - 1)),
              dct.size[nbits] + nbits);
        std::uint64_t mask = nonzero_ac_mask(b);
        int k = 0;
        while (mask) {
          const int z = __builtin_ctzll(mask);
          int run = z - k - 1;
          for (; run >= 16; run -= 16) w.put(act.code[0xF0], act.size[0xF0]);
          int v = b[z];
          nbits = bit_length(static_cast<std::uint32_t>(v < 0 ? -v : v));
          if (v < 0) v -= 1;
          const int sym = (run << 4) | nbits;
          w.put((act.code[sym] << nbits) | (static_cast<std::uint32_t>(v) & ((1u << nbits) - 1)),
                act.size[sym] + nbits);
          k = z;
          mask &= mask - 1;
        }
        if (k != 63) w.put(act.code[0x00], act.size[0x00]);
      });
  w.reserve(32);
  w.flush();
  w.finish();
}

}  // namespace mjpeg
