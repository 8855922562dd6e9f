// The CPU token coder: a token stream (core/token_format.hpp) -> the entropy-coded segment of a
// baseline JPEG scan, byte-identical to encode_scan() on the coefficients the tokens came from.
//
// Coded blocks (the GPU modes' default, tokens::Format::blocks). The AC parts are Huffman-coded
// already; per block the coder makes the DC difference from the block words (the predictor is the
// DC of the previous block of the same component, which the words hold, or 0 at the start of the
// scan and of a restart interval), codes it with one lookup, and appends it and the block's AC
// part to the bit accumulator: the DC code and the AC part's first piece in one put, the rest 56
// bits at a time, each piece a shift of an unaligned 8-byte load (token_packer.inc). Nothing is
// done per symbol. The scan is coded in bands of MCUs into a small unstuffed buffer that stays in
// the L1 cache, which is then copied into the output with 0xFF stuffing found by vector compares
// over 16, 32 or 64 bytes at a time (stuff_copy); restart markers go between bands. Before a band
// is coded its blocks' AC lengths are added up and checked against the stream, so a malformed
// stream is an error, never a read past it.
//
// Symbol slots (MJPEG_TOKEN_FORMAT=slots, and always with --optimize; one slot per symbol): all the
// per-coefficient work (zero runs, sizes, value bits, DC differences) was done by the tokenizer;
// what is left here is one table lookup per slot, joining bits and stuffing bytes. The symbol
// table has 2 x 256 entries indexed by the slot's low 9 bits ([component class][symbol]):
//   AC and DC symbols  the class's code shifted left by the symbol's size, and code length +
//                      size, so that code | value bits is the whole coded symbol;
//   specials           length >= kSpecial: an escape (the value bits are in the next slot), a
//                      restart marker, or a symbol the tables have no code for (a malformed
//                      stream).
// The hot loop reads a second table of 64K entries indexed by the whole slot, value bits
// included (one load per slot; built once per thread for each set of Huffman tables).
// Byte stuffing is part of the bit flush: every put stores the accumulator's bytes with one
// 8-byte store and checks them for 0xFF (a byte compare in an SSE2 register); only a word with
// a 0xFF byte is rewritten byte by byte with a 0x00 after each 0xFF. So the coded bytes are
// written once, straight into the caller's vector (no scratch copy, no stuffing pass).
//
// Both hot loops (token_coder.inc, token_packer.inc) are compiled once per instruction-set
// variant, picked at run time like the Huffman coder's: generic (SSE2 on x86-64), avx2 (with
// BMI2 for shlx/shrx variable shifts, LZCNT and MOVBE for the byte-swapping store) and avx512
// (AVX-512BW compares for the stuffing, on top of avx2).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <exception>
#include <memory>
#include <string>
#include <thread>

#include "jpeg/bit_io.hpp"
#include "jpeg/jfif_writer.hpp"
#include "jpeg/tokens.hpp"
#include "jpeg/variant_table.hpp"
#include "mjpeg/error.hpp"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define MJPEG_TC_X86_DISPATCH 1
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace mjpeg {
namespace {

using namespace tokens;
using namespace bitio;

constexpr std::uint32_t kSpecial = 0x100;      ///< lengths at or above take the slow path
constexpr std::uint32_t kEscapeFlag = 0x100;   ///< value bits in the next slot
constexpr std::uint32_t kMarkerFlag = 0x200;   ///< restart marker
constexpr std::uint32_t kNoCodeFlag = 0x400;   ///< no code for this symbol
constexpr std::uint32_t kLengthMask = 0xFF;
constexpr std::uint32_t kIndexMask = (1u << kValueShift) - 1;  ///< class and symbol
constexpr std::size_t kQuadsPerChunk = 256;  ///< groups of 4 slots between room checks
/// Room the hot loop asks for per chunk: a group's at most 64 bits (stuffed: 16 bytes), the
/// slots of one slow group (4 x 27 bits, stuffed), the 8-byte store past the end.
constexpr std::size_t kChunkRoom = kQuadsPerChunk * 16 + 64;

struct Entry {
  std::uint32_t code = 0;  ///< Huffman code << size
  std::uint32_t len = kNoCodeFlag;  ///< code length + size, or flags
};

/// The hot loop's table, indexed by the whole 16-bit slot (class, symbol and inline value
/// bits): (code << size | value bits) << 16 | code length + size, so that a slot is one load
/// and the sum of four entries has the four lengths in its low 16 bits. Specials (escapes,
/// markers, symbols without a code, whatever their value bits) have kFullSpecial set instead,
/// which the sum of four entries keeps (4 x (0x1000 + 27) < 0x10000: no carry into the codes).
constexpr std::uint64_t kFullSpecial = 0x1000;
constexpr std::uint64_t kFullSpecialMask = 0xF000;
constexpr int kFullCodeShift = 16;

struct CoderTables {
  Entry entry[2 * 256];               ///< [class << 8 | symbol], for the slow path
  std::uint64_t full[1u << 16];       ///< [slot], for the hot loop
};

Entry make_entry(const SymbolCodes& codes, int symbol, int size) {
  Entry e;
  if (codes.size[symbol] == 0) return e;  // kNoCodeFlag
  e.code = codes.code[symbol] << size;
  e.len = codes.size[symbol] + static_cast<std::uint32_t>(size);
  if (size > kInlineValueBits) e.len |= kEscapeFlag;
  return e;
}

void build_tables(const HuffmanTables& h, CoderTables& t) {
  const SymbolCodes dc[2] = {derive_codes(h.dc[0]), derive_codes(h.dc[1])};
  const SymbolCodes ac[2] = {derive_codes(h.ac[0]), derive_codes(h.ac[1])};
  for (int cls = 0; cls < 2; ++cls) {
    for (int sym = 0; sym < 256; ++sym) {
      Entry& e = t.entry[cls << 8 | sym];
      const int nibble = sym & 15;
      const int high = sym >> 4;
      if (sym == static_cast<int>(kRestart)) {
        if (cls == 0) e = Entry{0, kMarkerFlag};
      } else if (nibble == static_cast<int>(kDcNibble)) {
        if (high <= 11) e = make_entry(dc[cls], high, high);
      } else if (nibble <= 10) {
        e = make_entry(ac[cls], sym, nibble);
      }
    }
  }
  std::uint64_t base[2 * 256];
  for (int i = 0; i < 2 * 256; ++i) {
    const Entry& e = t.entry[i];
    base[i] = e.len < kSpecial ? std::uint64_t{e.code} << kFullCodeShift | e.len : kFullSpecial;
  }
  // Value bits v of a slot go into the code's low bits (OR: value bits wider than the symbol's
  // size would spill into the code, as the slow path does too; the tokenizer never makes them).
  for (std::uint32_t v = 0; v < (1u << (16 - kValueShift)); ++v)
    for (std::uint32_t i = 0; i < 2 * 256; ++i)
      t.full[v << kValueShift | i] = base[i] | std::uint64_t{v} << kFullCodeShift;
}

/// The coder's tables for `h`, built once per thread while the tables stay the same (the
/// standard ones, frame after frame); rebuilt when they change (--optimize).
const CoderTables& tables_for(const HuffmanTables& h) {
  struct Cache {
    HuffmanTables key;
    bool valid = false;
    std::unique_ptr<CoderTables> tables{new CoderTables};
  };
  thread_local Cache cache;
  static_assert(sizeof(HuffmanTables) == 4 * (17 + 256), "HuffmanTables is compared bytewise");
  if (!cache.valid || std::memcmp(&cache.key, &h, sizeof h) != 0) {
    cache.valid = false;
    build_tables(h, *cache.tables);
    cache.key = h;
    cache.valid = true;
  }
  return *cache.tables;
}

/// Codes a restart marker slot (after padding the pending bits) or throws for a slot the
/// tables have no code for; `e` is its entry (a special that is no escape). Unstuffed coding
/// (the unaligned parts of a parallel scan) cannot place a marker: an error too.
MJPEG_TC_NOINLINE void code_marker_or_throw(const std::uint16_t* slots, std::size_t i, Entry e,
                                            CoderState& s, bool stuff) {
  const std::uint32_t slot = slots[i];
  if (e.len & kMarkerFlag) {
    if (!stuff)
      throw Error("token stream: restart marker at slot " + std::to_string(i) +
                  " in a scan coded without a restart interval");
    flush_to_byte(s, true);
    s.out[0] = 0xFF;
    s.out[1] = static_cast<std::uint8_t>(0xD0 + ((slot >> kValueShift) & 7u));
    s.out += 2;
    return;
  }
  throw Error("token stream: symbol " + std::to_string(slot & 0xFFu) + " of class " +
              std::to_string(slot >> kClassShift & 1u) + " at slot " + std::to_string(i) +
              " has no Huffman code");
}

[[noreturn]] MJPEG_TC_NOINLINE void throw_cut_escape() {
  throw Error("token stream: it ends inside an escape slot");
}

// ---------------------------------------------------------------------------------------------
// Coded blocks: what the packer reads besides the stream.
// ---------------------------------------------------------------------------------------------
/// The coded DC difference d of a class at dc[d + kDcLimit]: its code and value bits << 8 |
/// `room`, where room = 57 - (code length + size) is what a put has left for the AC part after
/// it. An entry whose category has no code, and the last one (where every difference beyond
/// +-kDcLimit goes: 8-bit samples never give one), has room kNoDcCode.
constexpr int kDcLimit = 2047;
constexpr std::uint64_t kNoDcCode = 0xFF;
using DcTable = std::uint64_t[2 * kDcLimit + 2];

/// The scan's shape and DC codes, and where the stream lies.
struct PackArgs {
  const std::uint32_t* words = nullptr;  ///< block words
  const std::uint8_t* bits = nullptr;    ///< AC stream
  int blocks_per_mcu = 1;  ///< 1 (gray), 3 (4:4:4), 4 (4:2:2) or 6 (4:2:0): luma first, then
                           ///< one block of each chroma component
  const std::uint64_t* dc[2] = {};  ///< [class]: a DcTable
};

struct PackState {
  std::uint64_t acc = 0;  ///< pending bits: the low `nbits`
  unsigned nbits = 0;     ///< 0..7 between calls
  std::uint64_t pos = 0;  ///< next bit of the AC stream
  std::uint8_t* out = nullptr;
};

[[noreturn]] MJPEG_TC_NOINLINE void throw_no_dc_code(int cls, int diff) {
  const int magnitude = diff < 0 ? -diff : diff;
  int size = 0;
  while (magnitude >> size) ++size;
  throw Error("token stream: a DC difference of " + std::to_string(diff) + " (size " +
              std::to_string(size) + "), which the " + (cls ? "chroma" : "luma") +
              " DC table has no code for");
}

/// The DC tables of `h` (classes 0 and 1; a one-component frame's class 1 is class 0), built
/// once per thread while the tables stay the same.
const std::uint64_t* const* dc_tables_for(const HuffmanTables& h, int table_count) {
  struct Cache {
    HuffmanSpec key[2];
    bool valid = false;
    std::unique_ptr<DcTable[]> tables{new DcTable[2]};
    const std::uint64_t* pointers[2] = {};
  };
  thread_local Cache cache;
  const HuffmanSpec& spec1 = h.dc[table_count > 1 ? 1 : 0];
  if (!cache.valid || std::memcmp(&cache.key[0], &h.dc[0], sizeof(HuffmanSpec)) != 0 ||
      std::memcmp(&cache.key[1], &spec1, sizeof(HuffmanSpec)) != 0) {
    cache.valid = false;
    for (int cls = 0; cls < 2; ++cls) {
      const SymbolCodes codes = derive_codes(cls ? spec1 : h.dc[0]);
      std::uint64_t* t = cache.tables[cls];
      for (int d = -kDcLimit; d <= kDcLimit; ++d) {
        const std::uint32_t magnitude = static_cast<std::uint32_t>(d < 0 ? -d : d);
        const int size = magnitude_size(magnitude);
        const int len = codes.size[size] + size;
        t[d + kDcLimit] = codes.size[size] == 0
                              ? kNoDcCode
                              : std::uint64_t{codes.code[size] << size | value_bits(d, size)} << 8 |
                                    static_cast<std::uint64_t>(57 - len);
      }
      t[2 * kDcLimit + 1] = kNoDcCode;
      cache.pointers[cls] = t;
    }
    cache.key[0] = h.dc[0];
    cache.key[1] = spec1;
    cache.valid = true;
  }
  return cache.pointers;
}

PackArgs pack_args(const FrameGeometry& g, const TokenView& tokens, const HuffmanTables& h) {
  if (g.num_components != 1 && g.num_components != 3)
    throw UsageError("token coder: geometry has no components");
  const int luma = g.comp[0].h * g.comp[0].v;
  if ((luma != 1 && luma != 2 && luma != 4) ||
      g.blocks_per_mcu != luma + (g.num_components == 3 ? 2 : 0) ||
      (g.num_components == 1 && luma != 1))
    throw UsageError("token coder: an MCU shape other than gray, 4:4:4, 4:2:2 or 4:2:0");
  PackArgs a;
  a.words = tokens.blocks;
  a.bits = tokens.bits;
  a.blocks_per_mcu = g.blocks_per_mcu;
  const std::uint64_t* const* dc = dc_tables_for(h, g.num_components == 1 ? 1 : 2);
  a.dc[0] = dc[0];
  a.dc[1] = dc[1];
  return a;
}

// ---------------------------------------------------------------------------------------------
// The hot loops, once per instruction-set variant.
// ---------------------------------------------------------------------------------------------
namespace generic {
#if defined(__SSE2__)
#define MJPEG_STUFF_WIDTH 16
#else
#define MJPEG_STUFF_WIDTH 8
#endif
#include "jpeg/token_coder.inc"
#include "jpeg/token_packer.inc"
#include "jpeg/stuff_copy.inc"
#undef MJPEG_STUFF_WIDTH
}  // namespace generic

#if MJPEG_TC_X86_DISPATCH
#pragma GCC push_options
#pragma GCC target("avx2,bmi,bmi2,lzcnt,movbe")
namespace avx2 {
#define MJPEG_STUFF_WIDTH 32
#include "jpeg/token_coder.inc"
#include "jpeg/token_packer.inc"
#include "jpeg/stuff_copy.inc"
#undef MJPEG_STUFF_WIDTH
}  // namespace avx2

#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,bmi,bmi2,lzcnt,movbe,avx512f,avx512bw")
namespace avx512 {
#define MJPEG_STUFF_WIDTH 64
#include "jpeg/token_coder.inc"
#include "jpeg/token_packer.inc"
#include "jpeg/stuff_copy.inc"
#undef MJPEG_STUFF_WIDTH
}  // namespace avx512
#pragma GCC pop_options

bool cpu_has_avx2() {
  __builtin_cpu_init();
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;  // MOVBE: CPUID leaf 1, ECX bit 22
  const bool movbe = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_MOVBE) != 0;
  return movbe && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
         __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("lzcnt");
}
bool cpu_has_avx512() {
  return cpu_has_avx2() && __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw");
}
#endif

bool always() { return true; }

using CodeFn = void (*)(const std::uint16_t*, std::size_t, std::size_t, const CoderTables&,
                        CoderState&, Sink&);
using PackFn = void (*)(const PackArgs&, std::size_t, std::size_t, bool, PackState&);
using StuffFn = std::uint8_t* (*)(std::uint8_t*, const std::uint8_t*, std::size_t);
using SumFn = std::uint64_t (*)(const std::uint32_t*, std::size_t);

struct Variant {
  const char* name;
  CodeFn code;      ///< slots, stuffed (a whole scan, or the parts of one cut at restart markers)
  CodeFn unstuffed;  ///< slots: the parts of a scan without restarts, stuffed when joined
  PackFn pack;       ///< coded blocks
  StuffFn stuff;     ///< stuff_copy
  SumFn ac_bits;     ///< ac_bits_of
  bool (*supported)();
};

const Variant kVariants[] = {
#if MJPEG_TC_X86_DISPATCH
    {"avx512", avx512::code_slots<true>, avx512::code_slots<false>, avx512::pack_mcus,
     avx512::stuff_copy, avx512::ac_bits_of, cpu_has_avx512},
    {"avx2", avx2::code_slots<true>, avx2::code_slots<false>, avx2::pack_mcus, avx2::stuff_copy, avx2::ac_bits_of,
     cpu_has_avx2},

#endif
    {"generic", generic::code_slots<true>, generic::code_slots<false>, generic::pack_mcus,
     generic::stuff_copy, generic::ac_bits_of, always},
};

const Variant& best_variant() {
  static const Variant& best = variant_table::best(kVariants);
  return best;
}

const Variant& find_variant(const std::string& name) {
  return name.empty() ? best_variant() : variant_table::named(kVariants, name, "token coder");
}

// ---------------------------------------------------------------------------------------------
// Symbol slots: one pass, or parts on several threads.
// ---------------------------------------------------------------------------------------------
/// Codes the whole scan into `out` from byte `at` on (what lies after it is overwritten) and
/// cuts `out` at the scan's end; on an error `out` is cut at `at`.
void encode_slots(const Variant& v, const TokenView& tokens, const HuffmanTables& tables,
                  std::vector<std::uint8_t>& out, std::size_t at) {
  try {
    const CoderTables& t = tables_for(tables);
    Sink sink(out);
    CoderState state;
    state.out = sink.ensure(sink.data() + at, 0);
    v.code(tokens.slots, 0, tokens.count, t, state, sink);
    state.out = sink.ensure(state.out, 16);
    flush_to_byte(state, true);
    sink.finish(state.out);
  } catch (...) {
    out.resize(at);
    throw;
  }
}

// One frame on several threads: the scan is cut at MCU-row starts into ranges of about equal
// lengths; each range is coded on its own thread into its own buffer, then the parts are
// joined. With restart intervals the cuts are at rows that begin an interval: the bytes before
// a restart marker are padded to a byte and stuffed exactly as in one pass, so the parts are
// simply put one after the other. Without, a part starts at whatever bit the previous one ended:
// the parts are coded unstuffed and without their last partial byte, and joined with a bit
// shift (seven bytes per step) that stuffs as it goes.
struct Part {
  Scratch scratch;
  std::size_t bytes = 0;  ///< whole bytes coded
  std::uint64_t acc = 0;  ///< the pending bits after them (unaligned parts)
  unsigned nbits = 0;
  std::exception_ptr error;
};

/// Where a scan may be cut into about `threads` parts of about equal length: {0, rows..., end}
/// as row indexes; a row that begins a restart interval when there are intervals. `length(r)`
/// is where row r begins, in any unit that grows along the scan.
template <typename Length>
std::vector<int> part_rows(int rows, int restart_interval, int mcus_x, int threads,
                           Length&& length) {
  std::vector<int> cut = {0};
  if (threads > 1 && rows > 1) {
    const std::uint64_t total = length(rows);
    for (int r = 1; r < rows && static_cast<int>(cut.size()) < threads; ++r) {
      if (restart_interval && static_cast<long long>(r) * mcus_x % restart_interval != 0) continue;
      const std::uint64_t target = total * cut.size() / static_cast<std::uint64_t>(threads);
      const std::uint64_t at = length(r);
      if (at >= target && at > length(cut.back()) && at < total) cut.push_back(r);
    }
  }
  cut.push_back(rows);
  return cut;
}

/// Joins the parts of a scan into `out` from byte `at` on: one after the other (aligned) or
/// shifted to the bit where the previous one ended and stuffed (then the end padded).
void join_parts(std::vector<Part>& parts, bool aligned, std::vector<std::uint8_t>& out,
                std::size_t at) {
  for (const Part& p : parts)
    if (p.error) std::rethrow_exception(p.error);  // `out` untouched so far
  Sink sink(out);
  CoderState s;
  s.out = sink.ensure(sink.data() + at, 0);
  if (aligned) {
    for (const Part& p : parts) {
      s.out = sink.ensure(s.out, p.bytes);
      if (p.bytes) std::memcpy(s.out, p.scratch.data.get(), p.bytes);
      s.out += p.bytes;
    }
  } else {
    for (const Part& p : parts) {
      append_shifted(s, sink, p.scratch.data.get(), p.bytes);
      s.out = sink.ensure(s.out, 32);
      if (p.nbits) put_bits(s, p.acc & ((std::uint64_t{1} << p.nbits) - 1), p.nbits, true);
    }
    s.out = sink.ensure(s.out, 16);
    flush_to_byte(s, true);
  }
  sink.finish(s.out);
}

/// Codes every part, the first on this thread and the others on threads of their own:
/// code(k, state, space) codes part k from an empty state into its scratch; an aligned part
/// is then padded to a byte, as before the next part's marker or at the end of the scan. What
/// a part throws is kept in its `error`.
template <typename Code>
void code_parts(std::vector<Part>& parts, bool aligned, Code&& code) {
  const auto code_part = [&](std::size_t k) {
    Part& p = parts[k];
    try {
      Sink space(p.scratch);
      CoderState s;
      s.out = space.ensure(space.data(), 0);
      code(k, s, space);
      if (aligned) {
        s.out = space.ensure(s.out, 16);
        flush_to_byte(s, true);
      }
      p.bytes = static_cast<std::size_t>(s.out - space.data());
      p.acc = s.acc;
      p.nbits = s.nbits;
    } catch (...) {
      p.error = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t k = 1; k < parts.size(); ++k) pool.emplace_back(code_part, k);
  code_part(0);
  for (std::thread& th : pool) th.join();
}

void encode_slots_parallel(const Variant& v, const TokenView& tokens,
                           const HuffmanTables& tables, int restart_interval, int mcus_x,
                           int threads, std::vector<std::uint8_t>& out, std::size_t at) {
  std::vector<int> rows = {0, 0};
  if (tokens.row_start)
    rows = part_rows(tokens.rows, restart_interval, mcus_x, threads,
                     [&](int r) -> std::uint64_t {
                       return r == tokens.rows ? tokens.count : tokens.row_start[r];
                     });
  if (rows.size() < 3) {
    encode_slots(v, tokens, tables, out, at);
    return;
  }
  const bool aligned = restart_interval != 0;
  const CoderTables& t = tables_for(tables);
  std::vector<Part> parts(rows.size() - 1);
  auto begin_of = [&](std::size_t k) {
    return k + 1 == rows.size() ? tokens.count : std::size_t{tokens.row_start[rows[k]]};
  };
  code_parts(parts, aligned, [&](std::size_t k, CoderState& s, Sink& space) {
    (aligned ? v.code : v.unstuffed)(tokens.slots, begin_of(k), begin_of(k + 1), t, s, space);
  });
  join_parts(parts, aligned, out, at);
}

// ---------------------------------------------------------------------------------------------
// Coded blocks: MCU rows in bands, one pass or parts on several threads.
// ---------------------------------------------------------------------------------------------
/// MCUs per band: at most kBandBlocks blocks, whose unstuffed bytes (about 13 a block at
/// quality 90, at most 209) stay in the L1 cache until they are stuffed into the output.
constexpr std::size_t kBandBlocks = 512;
/// Bytes pack_mcus may write past what it codes (its 7-byte steps past a block's end, and the
/// 8-byte stores).
constexpr std::size_t kPackOverrun = 32;

/// Checks what a coded-blocks view promises before anything reads it: its block count and
/// row starts against the geometry and the AC stream's bytes.
void check_blocks(const FrameGeometry& g, const TokenView& t) {
  if (!t.blocks || !t.bits || !t.row_start || t.block_count != g.total_blocks ||
      t.rows != g.mcus_y)
    throw Error("token stream: coded blocks that do not match the frame's geometry");
  const std::uint64_t total = t.row_start[t.rows];
  if (t.bit_bytes < ac_stream_bytes(total) || t.row_start[0] != 0)
    throw Error("token stream: an AC stream shorter than its row starts say");
  for (int r = 0; r < t.rows; ++r)
    if (t.row_start[r] > t.row_start[r + 1])
      throw Error("token stream: row starts that go backwards");
}

/// Codes MCU rows r0 .. r1 - 1 of a coded-blocks stream at s.out on: stuffed (through the band
/// buffer `band`, restart markers included: a whole scan, or a part of one cut where an
/// interval begins) or unstuffed (a part of a scan without restarts, stuffed when joined).
/// Ends with the last partial byte pending in s (padded by the caller where a marker or the
/// end follows). Throws Error where the blocks' AC lengths disagree with the row starts.
void pack_rows(const Variant& v, const PackArgs& a, const FrameGeometry& g, const TokenView& t,
               int restart_interval, int r0, int r1, bool stuff, CoderState& s, Sink& sink,
               Scratch& band) {
  const std::size_t bpm = static_cast<std::size_t>(g.blocks_per_mcu);
  const std::size_t mcus_x = static_cast<std::size_t>(g.mcus_x);
  const std::size_t band_mcus = std::max<std::size_t>(1, kBandBlocks / bpm);
  const std::size_t ri = static_cast<std::size_t>(restart_interval);
  std::size_t mcu = static_cast<std::size_t>(r0) * mcus_x;
  const std::size_t end = static_cast<std::size_t>(r1) * mcus_x;
  PackState ps;
  ps.acc = s.acc;
  ps.nbits = s.nbits;
  ps.pos = t.row_start[r0];
  const std::uint64_t stop_bit = t.row_start[r1];
  // Moves the band's whole bytes (from `from`) into the output, stuffed.
  auto flush_band = [&](std::uint8_t* from) {
    const std::size_t whole = static_cast<std::size_t>(ps.out - from);
    s.out = sink.ensure(s.out, 2 * whole + 80);
    s.out = v.stuff(s.out, from, whole);
  };
  while (mcu < end) {
    const bool interval_start = ri ? mcu % ri == 0 : mcu == 0;
    if (ri && interval_start && mcu > 0) {
      // Pad with 1-bits, then the marker RSTn (n counts the markers modulo 8).
      CoderState pad;
      pad.acc = ps.acc;
      pad.nbits = ps.nbits;
      s.out = sink.ensure(s.out, 32);
      pad.out = s.out;
      flush_to_byte(pad, true);
      s.out = pad.out;
      s.out[0] = 0xFF;
      s.out[1] = static_cast<std::uint8_t>(0xD0 + ((mcu / ri - 1) & 7));
      s.out += 2;
      ps.acc = 0;
      ps.nbits = 0;
    }
    std::size_t stop = std::min(end, mcu + band_mcus);
    if (ri) stop = std::min(stop, (mcu / ri + 1) * ri);
    // The band's AC bits, checked against the stream before any is read.
    const std::uint64_t ac = v.ac_bits(a.words + mcu * bpm, (stop - mcu) * bpm);
    if (ac > stop_bit - ps.pos)
      throw Error("token stream: block lengths that run past their rows' bits");
    const std::size_t most =
        static_cast<std::size_t>((ac + 27 * (stop - mcu) * bpm) / 8) + kPackOverrun;
    if (stuff) {
      if (band.size < most) {
        band.data.reset(new std::uint8_t[most]);
        band.size = most;
      }
      ps.out = band.data.get();
      v.pack(a, mcu, stop - mcu, interval_start, ps);
      flush_band(band.data.get());
    } else {
      ps.out = sink.ensure(s.out, most);
      v.pack(a, mcu, stop - mcu, interval_start, ps);
      s.out = ps.out;
    }
    mcu = stop;
  }
  if (ps.pos != stop_bit)
    throw Error("token stream: block lengths that do not add up to their rows' bits");
  s.acc = ps.acc;
  s.nbits = ps.nbits;
}

/// The band buffer of this thread (kept between frames).
Scratch& band_buffer() {
  thread_local Scratch band;
  return band;
}

void encode_blocks(const Variant& v, const FrameGeometry& g, int restart_interval,
                   const TokenView& tokens, const HuffmanTables& tables,
                   std::vector<std::uint8_t>& out, std::size_t at) {
  try {
    check_blocks(g, tokens);
    const PackArgs a = pack_args(g, tokens, tables);
    Sink sink(out);
    CoderState s;
    s.out = sink.ensure(sink.data() + at, 0);
    pack_rows(v, a, g, tokens, restart_interval, 0, g.mcus_y, true, s, sink, band_buffer());
    s.out = sink.ensure(s.out, 16);
    flush_to_byte(s, true);
    sink.finish(s.out);
  } catch (...) {
    out.resize(at);
    throw;
  }
}

void encode_blocks_parallel(const Variant& v, const FrameGeometry& g, int restart_interval,
                            const TokenView& tokens, const HuffmanTables& tables, int threads,
                            std::vector<std::uint8_t>& out, std::size_t at) {
  check_blocks(g, tokens);
  const std::vector<int> rows = part_rows(tokens.rows, restart_interval, g.mcus_x, threads,
                                          [&](int r) -> std::uint64_t { return tokens.row_start[r]; });
  if (rows.size() < 3) {
    encode_blocks(v, g, restart_interval, tokens, tables, out, at);
    return;
  }
  const PackArgs a = pack_args(g, tokens, tables);
  const bool aligned = restart_interval != 0;
  std::vector<Part> parts(rows.size() - 1);
  code_parts(parts, aligned, [&](std::size_t k, CoderState& s, Sink& space) {
    pack_rows(v, a, g, tokens, restart_interval, rows[k], rows[k + 1], aligned, s, space,
              band_buffer());
  });
  join_parts(parts, aligned, out, at);
}

void encode_scan_at(const Variant& v, const FrameGeometry& g, int restart_interval,
                    const TokenView& tokens, const HuffmanTables& tables, int threads,
                    std::vector<std::uint8_t>& out, std::size_t at) {
  if (tokens.format == Format::blocks) {
    if (threads > 1)
      encode_blocks_parallel(v, g, restart_interval, tokens, tables, threads, out, at);
    else
      encode_blocks(v, g, restart_interval, tokens, tables, out, at);
  } else if (threads > 1) {
    encode_slots_parallel(v, tokens, tables, restart_interval, g.mcus_x, threads, out, at);
  } else {
    encode_slots(v, tokens, tables, out, at);
  }
}

}  // namespace

void encode_token_scan(const FrameGeometry& g, int restart_interval, const TokenView& tokens,
                       const HuffmanTables& tables, std::vector<std::uint8_t>& out,
                       const std::string& variant) {
  encode_scan_at(find_variant(variant), g, restart_interval, tokens, tables, 1, out, out.size());
}

void encode_token_scan_parallel(const FrameGeometry& g, int restart_interval,
                                const TokenView& tokens, const HuffmanTables& tables,
                                int threads, std::vector<std::uint8_t>& out,
                                const std::string& variant) {
  encode_scan_at(find_variant(variant), g, restart_interval, tokens, tables, threads, out,
                 out.size());
}

void encode_token_frame(const FrameGeometry& g, const QuantTables& q, const HuffmanTables& huff,
                        int restart_interval, const TokenView& tokens, int threads,
                        std::vector<std::uint8_t>& out) {
  // The headers go in front of whatever `out` holds (its old bytes are written over, not
  // zero-filled first); the scan follows them directly.
  thread_local std::vector<std::uint8_t> headers;
  headers.clear();
  write_headers(g, q, huff, restart_interval, headers);
  if (out.size() < headers.size()) out.resize(headers.size());
  std::memcpy(out.data(), headers.data(), headers.size());
  encode_scan_at(best_variant(), g, restart_interval, tokens, huff, threads, out,
                 headers.size());
  write_trailer(out);
}

std::vector<std::string> token_coder_variants() { return variant_table::names(kVariants, true); }

const char* token_coder_variant() { return best_variant().name; }

std::vector<std::string> built_token_coder_variants() {
  return variant_table::names(kVariants, false);
}

}  // namespace mjpeg
