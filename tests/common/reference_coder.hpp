// A plain bit-at-a-time baseline Huffman coder (T.81 F.1.2, written for clarity): the reference
// that the Huffman coder's and the token coder's instruction-set variants are held to
// (tests/jpeg/test_huffman.cpp, tests/jpeg/test_tokens.cpp), and synthetic coefficients that
// reach the edge cases: zero runs of 16..62 (ZRL codes), a nonzero coefficient 63 (no EOB), full
// blocks, empty blocks, extreme values (categories 10 for AC, 11 for DC), 0xFF bytes
// (stuffing), restarts.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "core/geometry.hpp"
#include "jpeg/huffman.hpp"

namespace mjpeg::test {

/// Bits written one at a time, most significant first, a 0x00 after every 0xFF byte; pad() fills
/// the last byte with 1-bits, marker() writes a marker.
class ReferenceBits {
 public:
  void put(std::uint32_t value, int n) {
    for (int i = n - 1; i >= 0; --i) bit((value >> i) & 1);
  }
  void pad() {
    while (used_) bit(1);
  }
  void marker(int code) {
    out.push_back(0xFF);
    out.push_back(static_cast<std::uint8_t>(code));
  }
  std::vector<std::uint8_t> out;

 private:
  void bit(std::uint32_t b) {
    byte_ = (byte_ << 1) | b;
    if (++used_ == 8) {
      out.push_back(static_cast<std::uint8_t>(byte_));
      if (byte_ == 0xFF) out.push_back(0x00);
      byte_ = 0;
      used_ = 0;
    }
  }
  std::uint32_t byte_ = 0;
  int used_ = 0;
};

/// The code and length of every symbol of a table (T.81 C.2), for ReferenceBits.
struct ReferenceCodes {
  std::uint32_t code[256] = {};
  int size[256] = {};
  explicit ReferenceCodes(const HuffmanSpec& spec) {
    std::uint32_t c = 0;
    int k = 0;
    for (int len = 1; len <= 16; ++len, c <<= 1)
      for (int i = 0; i < spec.bits[len]; ++i, ++k, ++c) {
        code[spec.values[k]] = c;
        size[spec.values[k]] = len;
      }
  }
  void put(ReferenceBits& w, int symbol) const {
    ASSERT_GT(size[symbol], 0) << "symbol " << symbol << " missing from the table";
    w.put(code[symbol], size[symbol]);
  }
};

/// A value's category (SSSS) and its additional bits (T.81 F.1.2.1).
inline int magnitude_bits(int v) {
  int n = 0;
  for (int a = std::abs(v); a; a >>= 1) ++n;
  return n;
}

inline void reference_value(ReferenceBits& w, int v, int n) {
  w.put(static_cast<std::uint32_t>(v < 0 ? v - 1 : v) & ((1u << n) - 1), n);
}

/// The baseline scan of `coeffs` (layout of core/geometry.hpp, zigzag order) with `tables`: the
/// entropy-coded bytes, 0xFF stuffed, restart markers every `restart_interval` MCUs.
inline std::vector<std::uint8_t> reference_scan(const FrameGeometry& g, const std::int16_t* coeffs,
                                                int restart_interval, const HuffmanTables& tables) {
  ReferenceBits w;
  const ReferenceCodes dc[2] = {ReferenceCodes(tables.dc[0]), ReferenceCodes(tables.dc[1])};
  const ReferenceCodes ac[2] = {ReferenceCodes(tables.ac[0]), ReferenceCodes(tables.ac[1])};
  int last_dc[kMaxComponents] = {};
  int mcu = 0;
  for (int my = 0; my < g.mcus_y; ++my)
    for (int mx = 0; mx < g.mcus_x; ++mx, ++mcu) {
      if (restart_interval && mcu && mcu % restart_interval == 0) {
        w.pad();
        w.marker(0xD0 + (mcu / restart_interval - 1) % 8);
        std::fill(last_dc, last_dc + kMaxComponents, 0);
      }
      for (int c = 0; c < g.num_components; ++c)
        for (int yy = 0; yy < g.comp[c].v; ++yy)
          for (int xx = 0; xx < g.comp[c].h; ++xx) {
            const std::int16_t* b =
                coeffs + g.block_index(c, my * g.comp[c].v + yy, mx * g.comp[c].h + xx) * kBlockSize;
            const int t = c == 0 ? 0 : 1;
            const int diff = b[0] - last_dc[c];
            last_dc[c] = b[0];
            dc[t].put(w, magnitude_bits(diff));
            reference_value(w, diff, magnitude_bits(diff));
            int run = 0;
            for (int k = 1; k < 64; ++k) {
              if (b[k] == 0) {
                ++run;
                continue;
              }
              for (; run >= 16; run -= 16) ac[t].put(w, 0xF0);
              ac[t].put(w, (run << 4) | magnitude_bits(b[k]));
              reference_value(w, b[k], magnitude_bits(b[k]));
              run = 0;
            }
            if (run) ac[t].put(w, 0x00);
          }
    }
  w.pad();
  return w.out;
}

/// Coefficients of every kind of block, deterministic (xorshift).
inline std::vector<std::int16_t> edge_case_coefficients(const FrameGeometry& g) {
  std::vector<std::int16_t> c(g.coefficient_count());
  std::uint32_t state = 12345;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
  };
  for (std::size_t b = 0; b < g.total_blocks; ++b) {
    std::int16_t* blk = c.data() + b * kBlockSize;
    blk[0] = static_cast<std::int16_t>(static_cast<int>(next() % 2048) - 1024);  // DC diffs to cat 11
    const int kind = static_cast<int>(next() % 8);
    auto value = [&] {  // mostly small, sometimes up to +-1023 (category 10)
      const int mag = next() % 8 == 0 ? 1 + next() % 1023 : 1 + next() % 7;
      return static_cast<std::int16_t>(next() & 1 ? mag : -mag);
    };
    switch (kind) {
      case 0:  // empty
        break;
      case 1:  // full
        for (int k = 1; k < 64; ++k) blk[k] = value();
        break;
      case 2:  // long runs, ZRL codes (runs 16..62)
        blk[1 + next() % 3] = value();
        blk[20 + next() % 10] = value();
        blk[63] = next() & 1 ? value() : 0;
        break;
      case 3:  // only coefficient 63 (run 62: three ZRLs, no EOB)
        blk[63] = value();
        break;
      case 4:  // run of exactly 16 and 32
        blk[17] = value();
        blk[50] = value();
        break;
      default:  // random density
        for (int k = 1; k < 64; ++k)
          if (next() % 64 < static_cast<std::uint32_t>(8 * kind)) blk[k] = value();
        break;
    }
  }
  return c;
}

}  // namespace mjpeg::test
