// The CPU token coder: a token stream (core/token_format.hpp) -> the entropy-coded segment of a
// baseline JPEG scan, byte-identical to encode_scan() on the coefficients the tokens came from.
//
// All the per-coefficient work (zero runs, sizes, value bits, DC differences) was done by the
// tokenizer (on the GPU); what is left here is one table lookup per slot, joining bits and
// stuffing bytes. The symbol table has 2 x 256 entries indexed by the slot's low 9 bits
// ([component class][symbol]):
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
// The hot loop (token_coder.inc) is compiled once per instruction-set variant (generic; BMI2
// for shlx/shrx variable shifts, with MOVBE for the byte-swapping store), picked at run time
// like the Huffman coder's.
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
#include "mjpeg/error.hpp"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define MJPEG_TC_X86_DISPATCH 1
#include <cpuid.h>
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
// The hot loop, once per instruction-set variant.
// ---------------------------------------------------------------------------------------------
namespace generic {
#include "jpeg/token_coder.inc"
}  // namespace generic

#if MJPEG_TC_X86_DISPATCH
#pragma GCC push_options
#pragma GCC target("bmi,bmi2,lzcnt,movbe")
namespace bmi2 {
#include "jpeg/token_coder.inc"
}  // namespace bmi2
#pragma GCC pop_options

bool cpu_has_bmi2() {
  __builtin_cpu_init();
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;  // MOVBE: CPUID leaf 1, ECX bit 22
  const bool movbe = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_MOVBE) != 0;
  return movbe && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
}
#endif

bool always() { return true; }

using CodeFn = void (*)(const std::uint16_t*, std::size_t, std::size_t, const CoderTables&,
                        CoderState&, Sink&);

struct Variant {
  const char* name;
  CodeFn code;      ///< stuffed (a whole scan, or the parts of one cut at restart markers)
  CodeFn unstuffed;  ///< the parts of a scan without restarts, stuffed when they are joined
  bool (*supported)();
};

const Variant kVariants[] = {
#if MJPEG_TC_X86_DISPATCH
    {"bmi2", bmi2::code_slots<true>, bmi2::code_slots<false>, cpu_has_bmi2},
#endif
    {"generic", generic::code_slots<true>, generic::code_slots<false>, always},
};

const Variant& best_variant() {
  static const Variant* best = [] {
    for (const Variant& v : kVariants)
      if (v.supported()) return &v;
    return &kVariants[std::size(kVariants) - 1];
  }();
  return *best;
}

const Variant& find_variant(const std::string& name) {
  for (const Variant& v : kVariants)
    if (name == v.name && v.supported()) return v;
  throw Error("token coder variant '" + name + "' is not available on this CPU");
}

/// Codes the whole scan into `out` from byte `at` on (what lies after it is overwritten) and
/// cuts `out` at the scan's end; on an error `out` is cut at `at`.
void encode_into(const Variant& v, const TokenView& tokens, const HuffmanTables& tables,
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

// ---------------------------------------------------------------------------------------------
// One frame on several threads: the scan is cut at MCU-row starts into ranges of about equal
// slot counts; each range is coded on its own thread into its own buffer, then the parts are
// joined. With restart intervals the cuts are at rows that begin an interval: the bytes before
// a restart marker are padded to a byte and stuffed exactly as in one pass, so the parts are
// simply put one after the other. Without, a part starts at whatever bit the previous one ended:
// the parts are coded unstuffed and without their last partial byte, and joined with a bit
// shift (seven bytes per step) that stuffs as it goes.
// ---------------------------------------------------------------------------------------------
struct Part {
  Scratch scratch;
  std::size_t bytes = 0;  ///< whole bytes coded
  std::uint64_t acc = 0;  ///< the pending bits after them (unaligned parts)
  unsigned nbits = 0;
  std::exception_ptr error;
};

void encode_with_parts(const Variant& v, const TokenView& tokens, const HuffmanTables& tables,
                       int restart_interval, int mcus_x, int threads,
                       std::vector<std::uint8_t>& out, std::size_t at) {
  // Where the scan may be cut: MCU rows (that begin a restart interval, if there are any).
  std::vector<std::size_t> bounds = {0};
  if (threads > 1 && tokens.row_start && tokens.rows > 1) {
    const std::size_t total = tokens.count;
    for (int r = 1; r < tokens.rows && static_cast<int>(bounds.size()) < threads; ++r) {
      if (restart_interval && static_cast<long long>(r) * mcus_x % restart_interval != 0) continue;
      const std::size_t at_slot = tokens.row_start[r];
      const std::size_t target = total * bounds.size() / static_cast<std::size_t>(threads);
      if (at_slot >= target && at_slot > bounds.back() && at_slot < total)
        bounds.push_back(at_slot);
    }
  }
  if (bounds.size() < 2) {
    encode_into(v, tokens, tables, out, at);
    return;
  }
  bounds.push_back(tokens.count);
  const bool aligned = restart_interval != 0;
  const CoderTables& t = tables_for(tables);
  const std::size_t parts_count = bounds.size() - 1;
  std::vector<Part> parts(parts_count);
  auto code_part = [&](std::size_t k) {
    Part& p = parts[k];
    try {
      Sink space(p.scratch);
      CoderState s;
      s.out = space.ensure(space.data(), 0);
      (aligned ? v.code : v.unstuffed)(tokens.slots, bounds[k], bounds[k + 1], t, s, space);
      if (aligned) {  // as before the next part's marker, or at the end of the scan
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
  for (std::size_t k = 1; k < parts_count; ++k) pool.emplace_back(code_part, k);
  code_part(0);
  for (std::thread& th : pool) th.join();
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

}  // namespace

void encode_token_scan(const TokenView& tokens, const HuffmanTables& tables,
                       std::vector<std::uint8_t>& out) {
  encode_into(best_variant(), tokens, tables, out, out.size());
}

void encode_token_scan_parallel(const TokenView& tokens, const HuffmanTables& tables,
                                int restart_interval, int mcus_x, int threads,
                                std::vector<std::uint8_t>& out, const std::string& variant) {
  encode_with_parts(variant.empty() ? best_variant() : find_variant(variant), tokens, tables,
                    restart_interval, mcus_x, threads, out, out.size());
}

void encode_token_scan(const std::string& variant, const TokenView& tokens,
                       const HuffmanTables& tables, std::vector<std::uint8_t>& out) {
  encode_into(find_variant(variant), tokens, tables, out, out.size());
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
  if (threads > 1)
    encode_with_parts(best_variant(), tokens, huff, restart_interval, g.mcus_x, threads, out,
                      headers.size());
  else
    encode_into(best_variant(), tokens, huff, out, headers.size());
  write_trailer(out);
}

std::vector<std::string> token_coder_variants() {
  std::vector<std::string> names;
  for (const Variant& v : kVariants)
    if (v.supported()) names.emplace_back(v.name);
  return names;
}

const char* token_coder_variant() { return best_variant().name; }

}  // namespace mjpeg
