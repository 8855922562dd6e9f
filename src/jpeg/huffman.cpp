// Huffman coding of quantized coefficients into a baseline JPEG scan (the CPU mode's coder), and
// libjpeg's optimal Huffman tables for --optimize. The output is byte-identical to
// libjpeg(-turbo)'s.
//
// How the coder is made fast:
//  * Coded-value tables: for every AC value up to +-1023 after every zero run under 16, and every
//    DC difference, an entry holds the whole coded value, (Huffman code << category | value
//    bits) << 8 | total length, so a coefficient is one load by (value, run): no category, no
//    value bits, no second lookup (BlockCoder::ac_value, laid out by value so that the small
//    values that make most of a frame share a few KB of L1 cache). A block with a value outside
//    (none, from 8-bit samples) is coded from its categories instead.
//  * Zero skipping: each block's nonzero AC coefficients form a 64-bit mask (in zigzag order,
//    made with SIMD compares, which also check the block against the table's range). The coder
//    walks the set bits with count-trailing-zeros, so zero coefficients cost nothing and the
//    zero run is the distance between two set bits (runs of 16 or more emit ZRL codes first).
//  * Two coefficients a step: their coded values go into the 64-bit accumulator together
//    (at most 52 bits), then one flush stores the whole bytes with one 8-byte big-endian store
//    and keeps the partial byte pending: no branch on the data in the writer.
//  * Stuffing out of the loop: MCUs are coded unstuffed into a 16 KB band buffer that stays in
//    the L1 cache; each full band is copied into the output with a 0x00 after every 0xFF, the
//    0xFF bytes found by vector compares over 16, 32 or 64 bytes at a time (stuff_copy.inc,
//    shared with the token coder); restart markers go in between bands.
//  * Raw output pointer: capacity is checked once per band.
//  * The writer's state lives in locals of the MCU loop: a reference to the caller's object
//    would be reloaded after every store (the bytes it stores may alias it).
//  * Instruction-set variants, picked once at run time (huffman_coder.inc is compiled once
//    per variant under `#pragma GCC target`):
//      generic  SSE2 nonzero mask and stuffing, bsr/bsf for bit lengths;
//      avx2     the same source with lzcnt/tzcnt/bzhi/shlx and 32-byte stuffing compares
//               (x86-64 with AVX2, BMI2 and LZCNT); its AC walk finds ZRLs once per block
//               from the mask and indexes the table without computing runs or branching on
//               an odd count (blocks with ZRLs take the scalar walk, encode_ac_scalar);
//      avx512   (AVX-512 F/BW/CD/DQ/VL/VBMI2) the AC coefficients are coded in vectors:
//               nonzero values and positions are compressed into order, runs come from
//               neighbouring positions, categories from vplzcntd, codes from a gather, and two
//               symbols are joined per 64-bit lane, so the scalar writer does one put per two
//               coefficients. Blocks with zero runs of 16+ (ZRL) take the scalar path.
//    Every variant is checked against a reference coder in tests/jpeg/test_huffman.cpp and
//    against libjpeg's jpeg_write_coefficients in tests/jpeg/test_token_coder.cpp.
#include "jpeg/huffman.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

// The run-time ISA variants need GCC's per-function target pragmas; clang (the fuzz build) gets
// the generic coder only.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define MJPEG_X86_DISPATCH 1
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/jpeg_math.hpp"
#include "core/standard_huffman.hpp"
#include "jpeg/bit_io.hpp"
#include "jpeg/parallel_parts.hpp"
#include "jpeg/variant_table.hpp"
#include "mjpeg/error.hpp"

#if defined(__GNUC__)
#define MJPEG_ALWAYS_INLINE inline __attribute__((always_inline))
#define MJPEG_NOINLINE __attribute__((noinline))
#define MJPEG_LIKELY(x) __builtin_expect(!!(x), 1)
#else
#define MJPEG_ALWAYS_INLINE inline
#define MJPEG_NOINLINE
#define MJPEG_LIKELY(x) (x)
#endif

namespace mjpeg {

namespace {

// ---------------------------------------------------------------------------------------------
// ITU-T T.81 Annex K.3: the typical (standard) Huffman tables (core/standard_huffman.hpp).
// ---------------------------------------------------------------------------------------------
HuffmanSpec make_spec(const annex_k::HuffmanTable& t) {
  HuffmanSpec s;
  for (int n = 1; n <= 16; ++n) s.bits[n] = t.bits[n - 1];
  for (int i = 0; i < t.count; ++i) s.values[i] = t.values[i];
  return s;
}

const HuffmanSpec kStdDc[2] = {make_spec(*annex_k::kDc[0]), make_spec(*annex_k::kDc[1])};
const HuffmanSpec kStdAc[2] = {make_spec(*annex_k::kAc[0]), make_spec(*annex_k::kAc[1])};

// ---------------------------------------------------------------------------------------------
// Code tables.
// ---------------------------------------------------------------------------------------------
/// A symbol's code with room for its value bits: the coded coefficient is
/// (code | value bits) on `length` bits.
struct CodeEntry {
  std::uint32_t code = 0;    ///< Huffman code << category
  std::uint32_t length = 0;  ///< code length + category
};

/// Differences and values the coded-value tables below hold: every DC difference and AC value
/// of 8-bit samples (categories up to 11 and 10).
constexpr int kDcLimit = 2047;
constexpr int kAcLimit = 1024;

/// What one block is coded with (luma or chroma tables).
struct BlockCoder {
  CodeEntry dc[17];        ///< by DC category (0..11 in valid data; up to 16 stays in bounds)
  CodeEntry ac[256 + 16];  ///< by run << 4 | category (likewise: no read past the end)
  /// Unshifted code | code length << 16 by run << 4 | category, for the AVX-512 gather.
  std::int32_t ac_packed[256 + 16] = {};
  /// The whole coded value, (code << category | value bits) << 8 | code length + category:
  /// of a DC difference d at dc_value[d + kDcLimit], of an AC value v after a zero run r < 16
  /// at ac_value[v + kAcLimit][r] (v = 0 unused). One load instead of the category, the value
  /// bits and a table lookup. 256 KB, but by value first: the small values that make most of
  /// a frame lie together (about 2 KB for |v| < 8) and stay in the L1 cache.
  std::uint64_t dc_value[2 * kDcLimit + 1];
  std::uint64_t ac_value[2 * kAcLimit][16];
};

/// Bit length of |v| (JPEG's category).
int category_of(int v) {
  int n = 0;
  for (int m = v < 0 ? -v : v; m; m >>= 1) ++n;
  return n;
}

/// (code << category | value bits) << 8 | total length for value v coded as `entry`.
std::uint64_t coded_value(const CodeEntry& entry, int v, int category) {
  const std::uint32_t bits =
      static_cast<std::uint32_t>(v < 0 ? v - 1 : v) & ((1u << category) - 1u);
  return std::uint64_t{entry.code | bits} << 8 | entry.length;
}

void make_block_coder(const HuffmanSpec& dc_spec, const HuffmanSpec& ac_spec, BlockCoder& t) {
  const SymbolCodes dc = derive_codes(dc_spec);
  const SymbolCodes ac = derive_codes(ac_spec);
  for (int cat = 0; cat <= 16; ++cat)
    t.dc[cat] = {dc.code[cat] << cat, static_cast<std::uint32_t>(dc.size[cat] + cat)};
  for (int sym = 0; sym < 256; ++sym) {
    const int cat = sym & 15;
    t.ac[sym] = {ac.code[sym] << cat, static_cast<std::uint32_t>(ac.size[sym] + cat)};
    t.ac_packed[sym] = static_cast<std::int32_t>(ac.code[sym] | std::uint32_t{ac.size[sym]} << 16);
  }
  for (int d = -kDcLimit; d <= kDcLimit; ++d) {
    const int cat = category_of(d);
    t.dc_value[d + kDcLimit] = coded_value(t.dc[cat], d, cat);
  }
  for (int run = 0; run < 16; ++run)
    for (int v = -kAcLimit; v < kAcLimit; ++v) {
      const int cat = category_of(v);
      t.ac_value[v + kAcLimit][run] = v ? coded_value(t.ac[run << 4 | cat], v, cat) : 0;
    }
}

constexpr int kEob = 0x00;  // AC symbol: end of block
constexpr int kZrl = 0xF0;  // AC symbol: 16 zeros

// Worst case for one block: DC 16+11 bits, 63 AC codes of 16+10 bits, all bytes stuffed, plus
// a partial accumulator.
constexpr std::size_t kMaxBlockBytes = 2 * (27 + 63 * 26 + 7) / 8 + 16;

/// The scan's output space at the end of `out`, written through a raw pointer and grown a
/// chunk at a time (std::vector zero-fills what it grows, so not all at once).
class ScanOutput {
 public:
  explicit ScanOutput(std::vector<std::uint8_t>& out) : out_(out), used_(out.size()) {}

  std::uint8_t* begin() const { return out_.data() + used_; }

  /// Returns where `p` (a position in the output) now lies, with `bytes` of room after it.
  MJPEG_ALWAYS_INLINE std::uint8_t* ensure(std::uint8_t* p, std::size_t bytes) {
    if (MJPEG_LIKELY(static_cast<std::size_t>(out_.data() + out_.size() - p) >= bytes)) return p;
    return grow(p, bytes);
  }
  /// Cuts the output at `p`.
  void finish(std::uint8_t* p) { out_.resize(static_cast<std::size_t>(p - out_.data())); }

 private:
  MJPEG_NOINLINE std::uint8_t* grow(std::uint8_t* p, std::size_t bytes) {
    const std::size_t used = static_cast<std::size_t>(p - out_.data());
    out_.resize(used + bytes + std::max<std::size_t>(used / 4, 64 * 1024));
    return out_.data() + used;
  }

  std::vector<std::uint8_t>& out_;
  std::size_t used_;
};

/// How one part of a scan cut at MCU rows is coded (encode_scan_part in huffman_coder.inc).
enum PartKind { kAligned, kFirst, kUnstuffed };

// ---------------------------------------------------------------------------------------------
// The hot code, compiled once per instruction-set variant.
// ---------------------------------------------------------------------------------------------
namespace generic {
#if defined(__SSE2__)
#define MJPEG_STUFF_WIDTH 16
#else
#define MJPEG_STUFF_WIDTH 8
#endif
#include "jpeg/stuff_copy.inc"
#undef MJPEG_STUFF_WIDTH
#define MJPEG_HUFF_AVX2 0
#define MJPEG_HUFF_AVX512 0
#include "jpeg/huffman_coder.inc"
#undef MJPEG_HUFF_AVX512
#undef MJPEG_HUFF_AVX2
}  // namespace generic

#if MJPEG_X86_DISPATCH
#pragma GCC push_options
#pragma GCC target("avx2,bmi,bmi2,lzcnt")
namespace avx2 {
#define MJPEG_STUFF_WIDTH 32
#include "jpeg/stuff_copy.inc"
#undef MJPEG_STUFF_WIDTH
#define MJPEG_HUFF_AVX2 1
#define MJPEG_HUFF_AVX512 0
#include "jpeg/huffman_coder.inc"
#undef MJPEG_HUFF_AVX512
#undef MJPEG_HUFF_AVX2
}  // namespace avx2
#pragma GCC pop_options

#pragma GCC push_options
// GCC 12 warns (falsely) about the _mm512_undefined_* inside its own intrinsic headers.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC target("bmi,bmi2,lzcnt,popcnt,avx512f,avx512bw,avx512cd,avx512vl,avx512dq,avx512vbmi2")
namespace avx512 {
#define MJPEG_STUFF_WIDTH 64
#include "jpeg/stuff_copy.inc"
#undef MJPEG_STUFF_WIDTH
#define MJPEG_HUFF_AVX2 0
#define MJPEG_HUFF_AVX512 1
#include "jpeg/huffman_coder.inc"
#undef MJPEG_HUFF_AVX512
#undef MJPEG_HUFF_AVX2
}  // namespace avx512
#pragma GCC diagnostic pop
#pragma GCC pop_options

bool cpu_has_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
         __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("lzcnt");
}
bool cpu_has_avx512() {
  return cpu_has_avx2() && __builtin_cpu_supports("popcnt") &&
         __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vbmi2");
}
#endif

bool always() { return true; }

// ---------------------------------------------------------------------------------------------
// Instruction-set variants, picked once at run time.
// ---------------------------------------------------------------------------------------------
struct Variant {
  const char* name;
  void (*encode)(const FrameGeometry&, const std::int16_t*, int, const BlockCoder* const[2],
                 std::vector<std::uint8_t>&);
  void (*stats)(const FrameGeometry&, const std::int16_t*, int, HuffmanStats&);
  bool (*supported)();
  void (*encode_part)(const FrameGeometry&, const std::int16_t*, int, int, int,
                      const BlockCoder* const[2], int, std::vector<std::uint8_t>&,
                      std::uint64_t&, unsigned&);
  void (*stats_rows)(const FrameGeometry&, const std::int16_t*, int, int, int, HuffmanStats&);
};

// Best first.
const Variant kVariants[] = {
#if MJPEG_X86_DISPATCH
    {"avx512", avx512::encode_scan, avx512::gather_stats, cpu_has_avx512, avx512::encode_scan_part, avx512::gather_stats_rows},
    {"avx2", avx2::encode_scan, avx2::gather_stats, cpu_has_avx2, avx2::encode_scan_part, avx2::gather_stats_rows},
#endif
    {"generic", generic::encode_scan, generic::gather_stats, always, generic::encode_scan_part, generic::gather_stats_rows},
};

const Variant& best_variant() {
  static const Variant& best = variant_table::best(kVariants);
  return best;
}

const Variant& find_variant(const std::string& name) {
  return variant_table::named(kVariants, name, "Huffman coder");
}

/// The block coders of a frame's tables (single-component scans use table 0 only; tables[1]
/// may be unset then), built once per thread while the tables stay the same (the standard
/// ones, frame after frame; --optimize rebuilds them for every frame).
struct FrameCoders {
  BlockCoder coders[2];
  const BlockCoder* coder[2] = {};
};

const FrameCoders& coders_for(const FrameGeometry& g, const HuffmanTables& tables) {
  struct Cache {
    HuffmanTables key;
    int table_count = 0;
    std::unique_ptr<FrameCoders> coders{new FrameCoders};
  };
  thread_local Cache cache;
  const int table_count = g.num_components == 1 ? 1 : 2;
  bool same = cache.table_count == table_count;
  for (int t = 0; t < table_count && same; ++t)
    same = std::memcmp(&cache.key.dc[t], &tables.dc[t], sizeof(HuffmanSpec)) == 0 &&
           std::memcmp(&cache.key.ac[t], &tables.ac[t], sizeof(HuffmanSpec)) == 0;
  if (!same) {
    cache.table_count = 0;
    FrameCoders& c = *cache.coders;
    for (int t = 0; t < table_count; ++t) {
      make_block_coder(tables.dc[t], tables.ac[t], c.coders[t]);
      cache.key.dc[t] = tables.dc[t];
      cache.key.ac[t] = tables.ac[t];
    }
    c.coder[0] = &c.coders[0];
    c.coder[1] = &c.coders[table_count - 1];
    cache.table_count = table_count;
  }
  return *cache.coders;
}

void encode_scan_with(const Variant& variant, const FrameGeometry& g, const std::int16_t* coeffs,
                      int restart_interval, const HuffmanTables& tables,
                      std::vector<std::uint8_t>& out) {
  const FrameCoders& c = coders_for(g, tables);
  variant.encode(g, coeffs, restart_interval, c.coder, out);
}

/// Where a scan cut into about `parts` equal ranges of MCU rows may begin each range: {0, ...,
/// mcus_y}; with a restart interval only at rows that begin one. Fewer ranges when there are
/// not enough such rows.
std::vector<int> scan_cuts(const FrameGeometry& g, int restart_interval, int parts) {
  std::vector<int> cuts = {0};
  parts = std::max(1, std::min(parts, g.mcus_y));
  for (int k = 1; k < parts; ++k) {
    int row = std::max(part_begin(g.mcus_y, parts, k), cuts.back() + 1);
    while (row < g.mcus_y && restart_interval &&
           static_cast<long long>(row) * g.mcus_x % restart_interval != 0)
      ++row;
    if (row >= g.mcus_y) break;
    cuts.push_back(row);
  }
  cuts.push_back(g.mcus_y);
  return cuts;
}

const Variant& variant_or_best(const std::string& name) {
  return name.empty() ? best_variant() : find_variant(name);
}

}  // namespace

SymbolCodes derive_codes(const HuffmanSpec& spec) {
  SymbolCodes t;
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

int HuffmanSpec::count() const {
  int n = 0;
  for (int i = 1; i <= 16; ++i) n += bits[i];
  return n;
}

const HuffmanSpec& standard_dc_spec(int index) { return kStdDc[index]; }
const HuffmanSpec& standard_ac_spec(int index) { return kStdAc[index]; }

void gather_stats(const FrameGeometry& g, const std::int16_t* coeffs, int restart_interval,
                  HuffmanStats& stats) {
  best_variant().stats(g, coeffs, restart_interval, stats);
}

void gather_stats(const std::string& variant, const FrameGeometry& g, const std::int16_t* coeffs,
                  int restart_interval, HuffmanStats& stats) {
  find_variant(variant).stats(g, coeffs, restart_interval, stats);
}

void encode_scan(const FrameGeometry& g, const std::int16_t* coeffs, int restart_interval,
                 const HuffmanTables& tables, std::vector<std::uint8_t>& out) {
  encode_scan_with(best_variant(), g, coeffs, restart_interval, tables, out);
}

void encode_scan_parallel(const FrameGeometry& g, const std::int16_t* coeffs,
                          int restart_interval, const HuffmanTables& tables, int threads,
                          std::vector<std::uint8_t>& out, const std::string& variant) {
  const Variant& v = variant_or_best(variant);
  const std::vector<int> cuts = scan_cuts(g, restart_interval, threads);
  const std::size_t parts = cuts.size() - 1;
  if (parts < 2) {
    encode_scan_with(v, g, coeffs, restart_interval, tables, out);
    return;
  }
  const FrameCoders& c = coders_for(g, tables);
  struct Part {
    std::vector<std::uint8_t> bytes;
    std::uint64_t bits = 0;
    unsigned nbits = 0;
  };
  // The first part is coded into `out` itself, the others into buffers of their own.
  std::vector<Part> part(parts);
  const bool aligned = restart_interval != 0;
  run_parts(parts, [&](std::size_t k) {
    const int kind = aligned ? kAligned : k == 0 ? kFirst : kUnstuffed;
    v.encode_part(g, coeffs, restart_interval, cuts[k], cuts[k + 1], c.coder, kind,
                  k == 0 ? out : part[k].bytes, part[k].bits, part[k].nbits);
  });
  if (aligned) {  // each part ends on a byte, before the next part's marker
    for (std::size_t k = 1; k < parts; ++k)
      out.insert(out.end(), part[k].bytes.begin(), part[k].bytes.end());
    return;
  }
  // The others shifted behind the first's last bits and stuffed, as the token coder joins its
  // parts; the end padded with 1-bits.
  bitio::Sink sink(out);
  bitio::CoderState s;
  s.acc = part[0].bits;
  s.nbits = part[0].nbits;
  s.out = sink.ensure(sink.data() + out.size(), 0);
  for (std::size_t k = 1; k < parts; ++k) {
    bitio::append_shifted(s, sink, part[k].bytes.data(), part[k].bytes.size());
    s.out = sink.ensure(s.out, 32);
    if (part[k].nbits) bitio::put_bits(s, part[k].bits, part[k].nbits, true);
  }
  s.out = sink.ensure(s.out, 16);
  bitio::flush_to_byte(s, true);
  sink.finish(s.out);
}

void gather_stats_parallel(const FrameGeometry& g, const std::int16_t* coeffs,
                           int restart_interval, int threads, HuffmanStats& stats,
                           const std::string& variant) {
  const Variant& v = variant_or_best(variant);
  const std::vector<int> cuts = scan_cuts(g, 0, threads);  // counting may cut anywhere
  const std::size_t parts = cuts.size() - 1;
  std::vector<HuffmanStats> part(parts > 1 ? parts - 1 : 0);
  run_parts(parts, [&](std::size_t k) {
    v.stats_rows(g, coeffs, restart_interval, cuts[k], cuts[k + 1], k == 0 ? stats : part[k - 1]);
  });
  for (const HuffmanStats& p : part)
    for (int t = 0; t < 2; ++t)
      for (int i = 0; i < 257; ++i) {
        stats.dc[t][i] += p.dc[t][i];
        stats.ac[t][i] += p.ac[t][i];
      }
}

void encode_scan(const std::string& variant, const FrameGeometry& g, const std::int16_t* coeffs,
                 int restart_interval, const HuffmanTables& tables,
                 std::vector<std::uint8_t>& out) {
  encode_scan_with(find_variant(variant), g, coeffs, restart_interval, tables, out);
}

std::vector<std::string> huffman_variants() { return variant_table::names(kVariants, true); }

const char* huffman_variant() { return best_variant().name; }

std::vector<std::string> built_huffman_variants() { return variant_table::names(kVariants, false); }

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
  //
  // libjpeg finds the two by scanning all 257 counts per merge: c1 is the last (largest)
  // symbol of the smallest nonzero count at most 1e9, c2 the same among the others. A heap
  // ordered by (count, then larger symbol first) pops exactly those two, in 257 log 257 steps
  // instead of 257 x 257; counts above 1e9 (never chosen by the scan) are never pushed.
  constexpr long long kNeverChosen = 1000000000LL;
  using Node = std::pair<long long, int>;  // count, symbol
  auto later = [](const Node& a, const Node& b) {  // a pops after b
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  std::vector<Node> heap;
  heap.reserve(257);
  for (int i = 0; i <= 256; ++i)
    if (freq[i] && freq[i] <= kNeverChosen) heap.emplace_back(freq[i], i);
  std::make_heap(heap.begin(), heap.end(), later);
  for (;;) {
    if (heap.size() < 2) break;
    std::pop_heap(heap.begin(), heap.end(), later);
    int c1 = heap.back().second;
    heap.pop_back();
    std::pop_heap(heap.begin(), heap.end(), later);
    int c2 = heap.back().second;
    heap.pop_back();
    freq[c1] += freq[c2];
    if (freq[c1] <= kNeverChosen) {
      heap.emplace_back(freq[c1], c1);
      std::push_heap(heap.begin(), heap.end(), later);
    }
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
HuffmanTables frame_tables(int table_count, HuffmanStats* stats) {
  HuffmanTables huff;
  for (int t = 0; t < table_count; ++t) {
    huff.dc[t] = stats ? optimal_spec(stats->dc[t]) : standard_dc_spec(t);
    huff.ac[t] = stats ? optimal_spec(stats->ac[t]) : standard_ac_spec(t);
  }
  return huff;
}

}  // namespace mjpeg
