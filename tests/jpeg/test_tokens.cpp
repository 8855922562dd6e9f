// The token stream (src/core/token_format.hpp), the CPU tokenizer and the token coder
// (src/jpeg/tokens.hpp) against the plain reference coder of common/reference_coder.hpp and a
// bit-by-bit reading of the format: every token-coder variant, serial and on several threads;
// streams heavy in 0xFF stuffing; hand-made slots; malformed streams. The token coder against
// libjpeg's own bytes, and the coded-blocks format: test_token_coder.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/reference_coder.hpp"
#include "core/geometry.hpp"
#include "core/token_format.hpp"
#include "jpeg/huffman.hpp"
#include "jpeg/tokens.hpp"
#include "mjpeg/error.hpp"
#include "mjpeg/options.hpp"

namespace mjpeg {
namespace {

using test::edge_case_coefficients;
using test::ReferenceBits;
using test::ReferenceCodes;
using test::reference_scan;

// ---------------------------------------------------------------------------------------------
// The token stream (src/core/token_format.hpp) and the token coder: the CPU tokenizer's histogram
// equals gather_stats, and every token-coder variant writes exactly the reference coder's bytes
// on the same edge-case coefficients (escapes: DC categories 9..11 and AC 9..10; ZRLs;
// coefficient 63 without EOB; 0xFF stuffing; restarts; optimal tables).
// ---------------------------------------------------------------------------------------------
TEST(Tokens, EveryCoderVariantMatchesTheReferenceCoder) {
  const std::vector<std::string> variants = token_coder_variants();
  ASSERT_FALSE(variants.empty());
  EXPECT_EQ(variants.back(), "generic");
  EXPECT_EQ(variants.front(), token_coder_variant());
  for (Subsampling s : {Subsampling::s420, Subsampling::s422, Subsampling::s444, Subsampling::gray}) {
    for (const auto& [w, h] : {std::pair{200, 72}, std::pair{17, 9}, std::pair{8, 8}, std::pair{1, 1},
                               std::pair{64, 300}}) {
      const FrameGeometry g = make_geometry(w, h, s);
      const std::vector<std::int16_t> coeffs = edge_case_coefficients(g);
      for (int restart : {0, 1, 7, 8, 65535}) {
        TokenBuffer tokens;
        tokenize(g, coeffs.data(), restart, true, tokens);
        HuffmanStats expected_stats;
        gather_stats(g, coeffs.data(), restart, expected_stats);
        const HuffmanStats got_stats = stats_from_histogram(tokens.histogram.data());
        for (int t = 0; t < 2; ++t) {
          EXPECT_TRUE(std::equal(got_stats.dc[t], got_stats.dc[t] + 257, expected_stats.dc[t]));
          EXPECT_TRUE(std::equal(got_stats.ac[t], got_stats.ac[t] + 257, expected_stats.ac[t]));
        }
        ASSERT_EQ(tokens.row_start.size(), static_cast<std::size_t>(g.mcus_y) + 1);
        EXPECT_EQ(tokens.row_start.front(), 0u);
        EXPECT_EQ(tokens.row_start.back(), tokens.slots.size());
        EXPECT_TRUE(std::is_sorted(tokens.row_start.begin(), tokens.row_start.end()));
        for (bool optimize : {false, true}) {
          SCOPED_TRACE(to_string(s) + " " + std::to_string(w) + "x" + std::to_string(h) +
                       (optimize ? " optimize" : " standard") + " restart " + std::to_string(restart));
          HuffmanTables tables;
          const int table_count = g.num_components == 1 ? 1 : 2;
          for (int t = 0; t < table_count; ++t) {
            HuffmanStats counts = expected_stats;
            tables.dc[t] = optimize ? optimal_spec(counts.dc[t]) : standard_dc_spec(t);
            tables.ac[t] = optimize ? optimal_spec(counts.ac[t]) : standard_ac_spec(t);
          }
          if (table_count == 1) tables.dc[1] = tables.dc[0], tables.ac[1] = tables.ac[0];
          const std::vector<std::uint8_t> expected = reference_scan(g, coeffs.data(), restart, tables);
          for (const std::string& v : variants) {
            std::vector<std::uint8_t> out = {0x12, 0x34};  // encode_token_scan appends
            encode_token_scan(g, restart, tokens.view(), tables, out, v);
            ASSERT_EQ(out.size(), expected.size() + 2) << v;
            EXPECT_TRUE(std::equal(expected.begin(), expected.end(), out.begin() + 2)) << v;
            // Cut into MCU-row ranges coded on several threads and joined: the same bytes.
            for (int threads : {2, 3, 8}) {
              std::vector<std::uint8_t> par = {0x56};
              encode_token_scan_parallel(g, restart, tokens.view(), tables, threads, par, v);
              ASSERT_EQ(par.size(), expected.size() + 1) << v << " threads " << threads;
              EXPECT_TRUE(std::equal(expected.begin(), expected.end(), par.begin() + 1))
                  << v << " threads " << threads;
            }
          }
        }
      }
    }
  }
}

// A second, bit-by-bit reading of the token format (core/token_format.hpp) on the reference bit
// writer: what the coder must write for any well-formed slot sequence, also ones no image gives.
std::vector<std::uint8_t> reference_token_scan(const std::vector<std::uint16_t>& slots,
                                               const HuffmanTables& tables) {
  ReferenceBits w;
  const ReferenceCodes dc[2] = {ReferenceCodes(tables.dc[0]), ReferenceCodes(tables.dc[1])};
  const ReferenceCodes ac[2] = {ReferenceCodes(tables.ac[0]), ReferenceCodes(tables.ac[1])};
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const int sym = slots[i] & 0xFF;
    const int cls = slots[i] >> 8 & 1;
    if (sym == 0x0D) {  // restart marker
      w.pad();
      w.marker(0xD0 + (slots[i] >> 9 & 7));
      continue;
    }
    const bool is_dc = (sym & 15) == 0x0B;
    const int size = is_dc ? sym >> 4 : sym & 15;
    (is_dc ? dc : ac)[cls].put(w, is_dc ? size : sym);
    const std::uint32_t bits = size > 7 ? slots[++i] : static_cast<std::uint32_t>(slots[i] >> 9);
    w.put(bits & ((1u << size) - 1u), size);
  }
  w.pad();
  return w.out;
}

// Slot sequences made to produce 0xFF bytes: symbols with long codes of mostly 1-bits (the
// Annex K tables' long AC codes are 0xFF80 and up; DC size 11 is 111111110) with all-ones value
// bits, mixed with short symbols so that the 0xFF bytes fall at every byte of the 8-byte stores,
// in runs, right before restart markers (whose padding is 1-bits) and at the scan's end. Every
// variant, and the scan cut into ranges joined on threads, must write the reference's bytes;
// the coverage checks at the end make sure the data did exercise those cases.
TEST(Tokens, StuffingHeavyStreamsMatchTheReferenceCoder) {
  HuffmanTables tables;
  for (int t = 0; t < 2; ++t) tables.dc[t] = standard_dc_spec(t), tables.ac[t] = standard_ac_spec(t);
  std::uint32_t state = 987654321;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
  };
  using namespace tokens;
  auto value_slot = [&](std::vector<std::uint16_t>& s, std::uint32_t symbol, int cls, int size) {
    const std::uint32_t bits = next() % 8 ? (1u << size) - 1u : next() & ((1u << size) - 1u);
    if (size > kInlineValueBits) {
      s.push_back(slot(symbol, cls, 0));
      s.push_back(static_cast<std::uint16_t>(bits));
    } else {
      s.push_back(slot(symbol, cls, bits));
    }
  };
  bool ff_at[8] = {};  // a 0xFF byte at each offset modulo 8 of the scan
  bool ff_run = false, ff_before_marker = false, ff_at_end = false;
  std::size_t ff_bytes = 0, all_bytes = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int rows = 1 + trial % 5;
    const int per_row = 1 + static_cast<int>(next() % 300);
    const bool markers = trial % 3 == 1;
    std::vector<std::uint16_t> slots;
    std::vector<std::uint32_t> row_start;
    int restart_index = 0;
    for (int r = 0; r < rows; ++r) {
      if (markers && r > 0) slots.push_back(slot(kRestart, 0, restart_index++ & 7));
      row_start.push_back(static_cast<std::uint32_t>(slots.size()) - (markers && r > 0 ? 1 : 0));
      for (int k = 0; k < per_row; ++k) {
        const int cls = static_cast<int>(next() % 2);
        switch (next() % 6) {
          case 0: {  // DC of size 0..8, or 9..11 (escape), mostly all-ones bits
            const int size = static_cast<int>(next() % 12);
            value_slot(slots, dc_symbol(size), cls, size);
            break;
          }
          case 1:
          case 2: {  // long AC codes: run 8..15, size 1..10 (escapes for 8..10)
            const int run = 8 + static_cast<int>(next() % 8);
            const int size = 1 + static_cast<int>(next() % 10);
            value_slot(slots, static_cast<std::uint32_t>(run << 4 | size), cls, size);
            break;
          }
          case 3: {  // run 0, size 5..7: 11010 .. 1111000 then all-ones bits
            const int size = 5 + static_cast<int>(next() % 3);
            value_slot(slots, static_cast<std::uint32_t>(size), cls, size);
            break;
          }
          case 4:  // short codes that shift the alignment
            if (next() % 2)
              slots.push_back(slot(kEob, cls, 0));
            else
              slots.push_back(slot(0x01, cls, next() & 1));
            break;
          default:
            slots.push_back(slot(kZrl, cls, 0));
            break;
        }
      }
    }
    row_start.push_back(static_cast<std::uint32_t>(slots.size()));
    const std::vector<std::uint8_t> expected = reference_token_scan(slots, tables);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      if (expected[i] != 0xFF || i + 1 >= expected.size() || expected[i + 1] != 0x00) continue;
      ++ff_bytes;
      ff_at[i % 8] = true;
      if (i + 3 < expected.size() && expected[i + 2] == 0xFF && expected[i + 3] == 0x00) ff_run = true;
      if (i + 3 < expected.size() && expected[i + 2] == 0xFF && (expected[i + 3] & 0xF8) == 0xD0)
        ff_before_marker = true;
      if (i + 2 == expected.size()) ff_at_end = true;
    }
    all_bytes += expected.size();
    TokenView view;
    view.slots = slots.data();
    view.count = slots.size();
    view.row_start = row_start.data();
    view.rows = rows;
    // One MCU per row (the slots name their classes and carry their markers themselves).
    const FrameGeometry column = make_geometry(8, 8 * rows, Subsampling::gray);
    for (const std::string& v : token_coder_variants()) {
      SCOPED_TRACE("trial " + std::to_string(trial) + " variant " + v);
      std::vector<std::uint8_t> out = {0x12};  // appended after what is there
      encode_token_scan(column, 0, view, tables, out, v);
      ASSERT_EQ(out.size(), expected.size() + 1);
      EXPECT_TRUE(std::equal(expected.begin(), expected.end(), out.begin() + 1));
      // Ranges start at the rows (each after a marker, when there are markers: restart
      // interval 1 with one MCU per row).
      for (int threads : {2, 3, 5}) {
        std::vector<std::uint8_t> par(7, 0x34);
        encode_token_scan_parallel(column, markers ? 1 : 0, view, tables, threads, par, v);
        ASSERT_EQ(par.size(), expected.size() + 7) << threads << " threads";
        EXPECT_TRUE(std::equal(expected.begin(), expected.end(), par.begin() + 7)) << threads;
      }
    }
  }
  for (int k = 0; k < 8; ++k) EXPECT_TRUE(ff_at[k]) << "no stuffed 0xFF at offset " << k << " mod 8";
  EXPECT_TRUE(ff_run);
  EXPECT_TRUE(ff_before_marker);
  EXPECT_TRUE(ff_at_end);
  EXPECT_GT(ff_bytes * 20, all_bytes);  // over 5% of the bytes are stuffed 0xFFs
}

// The hot loop stores up to 8 whole bytes at once (a pending 7 bits and a group of four slots
// of 57 bits); a 0xFF as the 8th byte of such a word must be stuffed too. Made by hand: four
// slots that leave 7 bits pending, then four of 57 bits whose last 8 bits are ones.
TEST(Tokens, AFullWordEndingInFFIsStuffed) {
  HuffmanTables tables;
  for (int t = 0; t < 2; ++t) tables.dc[t] = standard_dc_spec(t), tables.ac[t] = standard_ac_spec(t);
  const ReferenceCodes ac(tables.ac[0]);
  using namespace tokens;
  struct Sym {
    std::uint32_t symbol;
    int length;  // code + value bits
    bool ones_tail;  // with all-ones value bits, the last 8 bits are ones
  };
  std::vector<Sym> syms;
  for (int run = 0; run < 16; ++run)
    for (int size = 1; size <= kInlineValueBits; ++size) {
      const int s = run << 4 | size;
      if (!ac.size[s]) continue;
      const std::uint32_t tail_mask = (1u << (8 - size)) - 1u;
      syms.push_back({static_cast<std::uint32_t>(s), ac.size[s] + size,
                      ac.size[s] + size >= 8 && (ac.code[s] & tail_mask) == tail_mask});
    }
  // A symbol's bits with all-ones value bits.
  auto bits = [&](const Sym& s) {
    const int size = static_cast<int>(s.symbol & 15);
    return std::uint64_t{ac.code[s.symbol]} << size | ((1u << size) - 1u);
  };
  auto join = [&](const Sym& a, const Sym& b, const Sym& c, const Sym& d) {
    return ((bits(a) << b.length | bits(b)) << c.length | bits(c)) << d.length | bits(d);
  };
  std::vector<Sym> first, second;
  for (const Sym& a : syms)  // 4 slots, at most 57 bits, 7 of them left pending
    for (const Sym& b : syms)
      for (const Sym& c : syms)
        for (const Sym& d : syms)
          if (first.empty() && a.length + b.length + c.length + d.length <= 57 &&
              (a.length + b.length + c.length + d.length) % 8 == 7)
            first = {a, b, c, d};
  ASSERT_EQ(first.size(), 4u);
  const std::uint64_t pending = join(first[0], first[1], first[2], first[3]) & 0x7F;
  // Then 57 bits whose word (the 7 pending bits first) has its only 0xFF in the last byte.
  for (const Sym& d : syms) {
    if (!d.ones_tail || !second.empty()) continue;
    for (const Sym& c : syms)
      for (const Sym& b : syms)
        for (const Sym& a : syms) {
          if (!second.empty() || a.length + b.length + c.length + d.length != 57 ||
              a.length + b.length > 46 || c.length + d.length > 46)
            continue;
          const std::uint64_t word = pending << 57 | join(a, b, c, d);
          bool other_ff = false;
          for (int k = 1; k < 8; ++k) other_ff = other_ff || (word >> (8 * k) & 0xFF) == 0xFF;
          if ((word & 0xFF) == 0xFF && !other_ff) second = {a, b, c, d};
        }
  }
  ASSERT_EQ(second.size(), 4u);
  std::vector<std::uint16_t> slots;
  for (const std::vector<Sym>* group : {&first, &second})
    for (const Sym& s : *group)
      slots.push_back(slot(s.symbol, 0, (1u << (s.symbol & 15)) - 1u));
  slots.push_back(slot(kEob, 0, 0));
  const std::vector<std::uint8_t> expected = reference_token_scan(slots, tables);
  const int total = [&] {
    int n = 4;  // EOB
    for (const std::vector<Sym>* group : {&first, &second})
      for (const Sym& s : *group) n += s.length;
    return n;
  }();
  ASSERT_EQ((first[0].length + first[1].length + first[2].length + first[3].length + 57) % 8, 0);
  const std::size_t word_end = static_cast<std::size_t>(total - 4) / 8 - 1;  // the 8th byte
  ASSERT_LT(word_end + 1, expected.size());
  // Where the 8th byte lies in the stuffed output: after the stuffed zeros before it.
  std::size_t pos = 0;
  for (std::size_t b = 0; b < word_end; ++b) pos += expected[pos] == 0xFF ? 2 : 1;
  EXPECT_EQ(expected[pos], 0xFF);
  EXPECT_EQ(expected[pos + 1], 0x00);
  for (const std::string& v : token_coder_variants()) {
    TokenView view;
    view.slots = slots.data();
    view.count = slots.size();
    std::vector<std::uint8_t> out;
    encode_token_scan(make_geometry(8, 8, Subsampling::gray), 0, view, tables, out, v);
    EXPECT_EQ(out, expected) << v;
  }
}

TEST(Tokens, EscapesZrlAndMarkersAreWhereTheFormatSays) {
  // One 4:4:4 MCU row of 3 blocks... coded by hand: DC 300 (size 9: escape slot), AC +1 at
  // zigzag 1, -700 at zigzag 40 (run 38: two ZRLs, size 10: escape), then EOB.
  const FrameGeometry g = make_geometry(8, 8, Subsampling::s444);
  std::vector<std::int16_t> c(g.coefficient_count(), 0);
  c[0] = 300;
  c[1] = 1;
  c[40] = -700;
  TokenBuffer t;
  tokenize(g, c.data(), 0, false, t);
  using namespace tokens;
  const std::vector<std::uint16_t> luma = {
      slot(dc_symbol(9), 0, 0), 300,                  // DC diff 300, size 9, escape
      slot(0x01, 0, 1),                               // run 0 size 1, value 1
      slot(kZrl, 0, 0), slot(kZrl, 0, 0),             // 32 of the 38 zeros
      slot(0x6A, 0, 0), static_cast<std::uint16_t>(value_bits(-700, 10)),  // run 6 size 10, escape
      slot(kEob, 0, 0)};
  ASSERT_EQ(t.slots.size(), luma.size() + 4);
  EXPECT_TRUE(std::equal(luma.begin(), luma.end(), t.slots.begin()));
  // The chroma blocks: DC 0 (size 0) and EOB each, in class 1.
  EXPECT_EQ(t.slots[luma.size()], slot(dc_symbol(0), 1, 0));
  EXPECT_EQ(t.slots[luma.size() + 1], slot(kEob, 1, 0));
  EXPECT_EQ(t.slots[luma.size() + 3], slot(kEob, 1, 0));
  EXPECT_TRUE(t.histogram.empty());
  // Restart interval 1 on a 2-MCU gray frame: a marker slot before the second MCU's DC.
  const FrameGeometry g2 = make_geometry(16, 8, Subsampling::gray);
  std::vector<std::int16_t> c2(g2.coefficient_count(), 0);
  c2[64] = 5;
  tokenize(g2, c2.data(), 1, false, t);
  const std::vector<std::uint16_t> gray = {slot(dc_symbol(0), 0, 0), slot(kEob, 0, 0),
                                           slot(kRestart, 0, 0), slot(dc_symbol(3), 0, 5),
                                           slot(kEob, 0, 0)};
  EXPECT_EQ(t.slots, gray);
}

TEST(Tokens, MalformedStreamsAreErrors) {
  HuffmanTables tables;
  for (int t = 0; t < 2; ++t) tables.dc[t] = standard_dc_spec(t), tables.ac[t] = standard_ac_spec(t);
  std::vector<std::uint8_t> out;
  const FrameGeometry one = make_geometry(8, 8, Subsampling::gray);
  auto code = [&](std::vector<std::uint16_t> slots) {
    TokenView v;
    v.slots = slots.data();
    v.count = slots.size();
    out.clear();
    encode_token_scan(one, 0, v, tables, out);
  };
  using namespace tokens;
  EXPECT_NO_THROW(code({slot(dc_symbol(0), 0, 0), slot(kEob, 0, 0)}));
  EXPECT_THROW(code({slot(dc_symbol(0), 0, 0), slot(0x1E, 0, 0)}), Error);  // size 14: no such symbol
  EXPECT_THROW(code({slot(dc_symbol(0), 0, 0), slot(0x10, 0, 0)}), Error);  // run 1 size 0: none
  EXPECT_THROW(code({slot(dc_symbol(12), 0, 0)}), Error);                   // DC size 12: none
  EXPECT_THROW(code({slot(dc_symbol(10), 1, 0)}), Error);                   // escape slot missing
  EXPECT_THROW(code({slot(kRestart, 1, 0)}), Error);                        // markers are class 0
  for (const std::string& v : token_coder_variants()) {
    std::vector<std::uint16_t> slots = {slot(dc_symbol(0), 0, 0), slot(0x1E, 0, 0)};
    TokenView view;
    view.slots = slots.data();
    view.count = slots.size();
    out = {1, 2, 3};
    EXPECT_THROW(encode_token_scan(one, 0, view, tables, out, v), Error) << v;
    EXPECT_EQ(out, (std::vector<std::uint8_t>{1, 2, 3})) << v << ": what was there is kept";
    // The error after many slots (the output has grown by then), in the hot loop's chunks.
    slots.assign(20000, slot(kEob, 0, 0));
    slots.push_back(slot(0x1E, 0, 0));
    view.slots = slots.data();
    view.count = slots.size();
    EXPECT_THROW(encode_token_scan(one, 0, view, tables, out, v), Error) << v;
    EXPECT_EQ(out, (std::vector<std::uint8_t>{1, 2, 3})) << v;
    // A marker in a scan cut into ranges as if it had no restarts: an error, not wrong bytes.
    std::vector<std::uint16_t> marked = {slot(dc_symbol(0), 0, 0), slot(kEob, 0, 0),
                                         slot(kRestart, 0, 0), slot(dc_symbol(0), 0, 0),
                                         slot(kEob, 0, 0)};
    const std::uint32_t rows[3] = {0, 2, 5};
    view.slots = marked.data();
    view.count = marked.size();
    view.row_start = rows;
    view.rows = 2;
    const FrameGeometry two = make_geometry(8, 16, Subsampling::gray);
    EXPECT_THROW(encode_token_scan_parallel(two, 0, view, tables, 2, out, v), Error) << v;
    std::vector<std::uint8_t> with_restarts;
    EXPECT_NO_THROW(encode_token_scan_parallel(two, 1, view, tables, 2, with_restarts, v)) << v;
    EXPECT_EQ(with_restarts, reference_token_scan(marked, tables)) << v;
  }
  EXPECT_THROW(encode_token_scan(one, 0, TokenView{}, tables, out, "no-such-variant"), Error);
}

}  // namespace
}  // namespace mjpeg
