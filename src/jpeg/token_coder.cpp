// The CPU token coder: a token stream (core/token_format.hpp) -> the entropy-coded segment of a
// baseline JPEG scan, byte-identical to encode_scan() on the coefficients the tokens came from.
//
// All the per-coefficient work (zero runs, sizes, value bits, DC differences) was done by the
// tokenizer (on the GPU); what is left here is one table lookup per slot, joining bits and
// stuffing bytes. The lookup table has 2 x 256 entries indexed by the slot's low 9 bits
// ([component class][symbol]):
//   AC and DC symbols  the class's code shifted left by the symbol's size, and code length +
//                      size, so that code | value bits is the whole coded symbol;
//   specials           length >= kSpecial: an escape (the value bits are in the next slot), a
//                      restart marker, or a symbol the tables have no code for (a malformed
//                      stream).
// The hot loop (token_coder.inc) is compiled once per instruction-set variant (generic; BMI2
// for shlx/shrx variable shifts), picked at run time like the Huffman coder's.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <exception>
#include <memory>
#include <string>
#include <thread>

#include "jpeg/tokens.hpp"
#include "mjpeg/error.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define MJPEG_TC_X86_DISPATCH 1
#endif

#if defined(__GNUC__)
#define MJPEG_TC_NOINLINE __attribute__((noinline))
#define MJPEG_TC_LIKELY(x) __builtin_expect(!!(x), 1)
#define MJPEG_TC_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define MJPEG_TC_NOINLINE
#define MJPEG_TC_LIKELY(x) (x)
#define MJPEG_TC_UNLIKELY(x) (x)
#endif

namespace mjpeg {
namespace {

using namespace tokens;

constexpr std::uint32_t kSpecial = 0x100;      ///< lengths at or above take the slow path
constexpr std::uint32_t kEscapeFlag = 0x100;   ///< value bits in the next slot
constexpr std::uint32_t kMarkerFlag = 0x200;   ///< restart marker
constexpr std::uint32_t kNoCodeFlag = 0x400;   ///< no code for this symbol
constexpr std::uint32_t kLengthMask = 0xFF;
constexpr std::uint32_t kIndexMask = (1u << kValueShift) - 1;  ///< class and symbol
constexpr std::size_t kQuadsPerChunk = 256;  ///< groups of 4 slots between room checks

struct Entry {
  std::uint32_t code = 0;  ///< Huffman code << size
  std::uint32_t len = kNoCodeFlag;  ///< code length + size, or flags
};

struct CoderTables {
  Entry entry[2 * 256];        ///< [class << 8 | symbol]
  std::uint64_t wide[2 * 256];  ///< the same as code | len << 32, for the hot loop
};
constexpr std::uint64_t kWideSpecial = std::uint64_t{kSpecial} << 32;

/// Code and length of every symbol of a DHT table (length 0: absent).
struct Codes {
  std::uint32_t code[256] = {};
  std::uint8_t length[256] = {};
  explicit Codes(const HuffmanSpec& spec) {
    std::uint32_t c = 0;
    int k = 0;
    for (int len = 1; len <= 16; ++len) {
      for (int i = 0; i < spec.bits[len]; ++i, ++k) {
        code[spec.values[k]] = c++;
        length[spec.values[k]] = static_cast<std::uint8_t>(len);
      }
      c <<= 1;
    }
  }
};

Entry make_entry(const Codes& codes, int symbol, int size) {
  Entry e;
  if (codes.length[symbol] == 0) return e;  // kNoCodeFlag
  e.code = codes.code[symbol] << size;
  e.len = codes.length[symbol] + static_cast<std::uint32_t>(size);
  if (size > kInlineValueBits) e.len |= kEscapeFlag;
  return e;
}

void build_tables(const HuffmanTables& h, CoderTables& t) {
  const Codes dc[2] = {Codes(h.dc[0]), Codes(h.dc[1])};
  const Codes ac[2] = {Codes(h.ac[0]), Codes(h.ac[1])};
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
      t.wide[cls << 8 | sym] = e.code | std::uint64_t{e.len} << 32;
    }
  }
}

/// Where the coded bytes go: a per-thread scratch buffer that is never zero-filled (a
/// std::vector would zero what it grows, about as dear as coding a 1080p frame's last tenth),
/// written through a raw pointer; the finished scan is appended to the caller's vector at once.
class ByteOutput {
 public:
  struct Scratch {
    std::unique_ptr<std::uint8_t[]> data;
    std::size_t size = 0;
  };
  ByteOutput() : buf_(scratch()) {}
  explicit ByteOutput(Scratch& s) : buf_(s) {}
  std::uint8_t* begin() { return ensure(buf_.data.get(), 0); }
  std::uint8_t* data() { return buf_.data.get(); }
  std::uint8_t* ensure(std::uint8_t* p, std::size_t bytes) {
    const std::size_t used = static_cast<std::size_t>(p - buf_.data.get());
    if (MJPEG_TC_LIKELY(buf_.size - used >= bytes)) return p;
    const std::size_t size = used + bytes + std::max<std::size_t>(used, 256 * 1024);
    std::unique_ptr<std::uint8_t[]> grown(new std::uint8_t[size]);
    if (used) std::memcpy(grown.get(), buf_.data.get(), used);
    buf_.data = std::move(grown);
    buf_.size = size;
    return buf_.data.get() + used;
  }
  void append_to(std::uint8_t* end, std::vector<std::uint8_t>& out) {
    out.insert(out.end(), buf_.data.get(), end);
  }

 private:
  static Scratch& scratch() {
    thread_local Scratch s;
    return s;
  }
  Scratch& buf_;
};

struct CoderState {
  std::uint64_t acc = 0;  ///< pending bits: the low `nbits` (stale bits above are ignored)
  unsigned nbits = 0;     ///< 0..7 between steps
  std::uint8_t* out = nullptr;
  std::size_t segment = 0;  ///< output offset where the current restart interval's bytes begin
  std::vector<std::size_t> ff;  ///< scratch: positions of 0xFF bytes in a segment
};

/// Inserts the stuffed 0x00 after every 0xFF byte of the segment [state.segment, state.out)
/// (coded without stuffing) and moves state.out accordingly.
MJPEG_TC_NOINLINE void stuff_segment(CoderState& s, ByteOutput& out) {
  std::uint8_t* const base = out.data();
  const std::size_t begin = s.segment;
  const std::size_t end = static_cast<std::size_t>(s.out - base);
  s.ff.clear();
  std::size_t i = begin;
#if defined(__SSE2__)
  const __m128i ff = _mm_set1_epi8(static_cast<char>(0xFF));
  for (; i + 16 <= end; i += 16) {
    unsigned m = static_cast<unsigned>(_mm_movemask_epi8(
        _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(base + i)), ff)));
    while (m) {
      s.ff.push_back(i + static_cast<std::size_t>(__builtin_ctz(m)));
      m &= m - 1;
    }
  }
#endif
  for (; i < end; ++i)
    if (base[i] == 0xFF) s.ff.push_back(i);
  const std::size_t n = s.ff.size();
  if (n == 0) return;
  std::uint8_t* const p = out.ensure(s.out, n + 16) - end;  // may move the buffer
  // From the back: the bytes after the j-th 0xFF move up by j + 1, with a 0x00 in the gap.
  std::size_t tail = end;
  for (std::size_t j = n; j-- > 0;) {
    const std::size_t f = s.ff[j];
    std::memmove(p + f + 1 + (j + 1), p + f + 1, tail - (f + 1));
    p[f + 1 + j] = 0x00;
    tail = f + 1;
  }
  s.out = p + end + n;
}

/// Appends `len` bits and writes the whole bytes (slow path; nbits + len <= 64).
void put_bits(CoderState& s, std::uint64_t bits, unsigned len) {
  s.acc = s.acc << len | bits;
  s.nbits += len;
  const std::uint64_t word = s.acc << (64 - s.nbits);
  for (unsigned k = 0; k < s.nbits >> 3; ++k) *s.out++ = static_cast<std::uint8_t>(word >> (56 - 8 * k));
  s.nbits &= 7;
}

/// Pads the pending bits to a byte with 1-bits, as libjpeg does before a marker or the end.
void flush_to_byte(CoderState& s) {
  if (s.nbits == 0) return;
  const unsigned pad = 8 - s.nbits;
  put_bits(s, (1u << pad) - 1u, pad);
}

/// Codes slot i the slow way; returns the slots it used (1, or 2 for an escape).
std::size_t emit_one(const std::uint16_t* slots, std::size_t i, std::size_t end,
                     const CoderTables& t, CoderState& s, ByteOutput& out) {
  const std::uint32_t slot = slots[i];
  const Entry e = t.entry[slot & kIndexMask];
  if (e.len < kSpecial) {
    put_bits(s, e.code | (slot >> kValueShift), e.len);
    return 1;
  }
  if (e.len & kMarkerFlag) {
    flush_to_byte(s);
    stuff_segment(s, out);
    s.out = out.ensure(s.out, 16);
    s.out[0] = 0xFF;
    s.out[1] = static_cast<std::uint8_t>(0xD0 + ((slot >> kValueShift) & 7u));
    s.out += 2;
    s.segment = static_cast<std::size_t>(s.out - out.data());
    return 1;
  }
  const std::uint32_t sym = slot & 0xFFu;
  if (e.len & kNoCodeFlag)
    throw Error("token stream: symbol " + std::to_string(sym) + " of class " +
                std::to_string(slot >> kClassShift & 1u) + " at slot " + std::to_string(i) +
                " has no Huffman code");
  if (i + 1 >= end) throw Error("token stream: it ends inside an escape slot");
  const unsigned size = (sym & 15u) == kDcNibble ? sym >> 4 : sym & 15u;
  put_bits(s, e.code | (slots[i + 1] & ((1u << size) - 1u)), e.len & kLengthMask);
  return 2;
}

// ---------------------------------------------------------------------------------------------
// The hot loop, once per instruction-set variant.
// ---------------------------------------------------------------------------------------------
namespace generic {
#include "jpeg/token_coder.inc"
}  // namespace generic

#if MJPEG_TC_X86_DISPATCH
#pragma GCC push_options
#pragma GCC target("bmi,bmi2,lzcnt")
namespace bmi2 {
#include "jpeg/token_coder.inc"
}  // namespace bmi2
#pragma GCC pop_options

bool cpu_has_bmi2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
}
#endif

bool always() { return true; }

struct Variant {
  const char* name;
  void (*code)(const std::uint16_t*, std::size_t, std::size_t, const CoderTables&, CoderState&,
               ByteOutput&);
  bool (*supported)();
};

const Variant kVariants[] = {
#if MJPEG_TC_X86_DISPATCH
    {"bmi2", bmi2::code_slots, cpu_has_bmi2},
#endif
    {"generic", generic::code_slots, always},
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

void encode_with(const Variant& v, const TokenView& tokens, const HuffmanTables& tables,
                 std::vector<std::uint8_t>& out) {
  CoderTables t;
  build_tables(tables, t);
  ByteOutput space;
  CoderState state;
  state.out = space.begin();
  state.segment = static_cast<std::size_t>(state.out - space.data());
  v.code(tokens.slots, 0, tokens.count, t, state, space);
  state.out = space.ensure(state.out, 16);
  flush_to_byte(state);
  stuff_segment(state, space);
  space.append_to(state.out, out);
}

// ---------------------------------------------------------------------------------------------
// One frame on several threads: the scan is cut at MCU-row starts into ranges of about equal
// slot counts; each range is coded on its own thread into its own buffer, then the parts are
// joined. With restart intervals the cuts are at rows that begin an interval: the bytes before
// a restart marker are padded to a byte and stuffed exactly as in one pass, so the parts are
// simply put one after the other. Without, a part starts at whatever bit the previous one ended:
// the parts are coded unstuffed and without their last partial byte, joined with a bit shift
// (seven bytes per step), and the whole scan is stuffed at the end.
// ---------------------------------------------------------------------------------------------
struct Part {
  ByteOutput::Scratch scratch;
  std::size_t bytes = 0;  ///< whole bytes coded
  std::uint64_t acc = 0;  ///< the pending bits after them (unaligned parts)
  unsigned nbits = 0;
  std::exception_ptr error;
};

/// Appends `n` bytes to the bit stream in `s` (unstuffed), at its current bit position.
void append_shifted(CoderState& s, ByteOutput& out, const std::uint8_t* bytes, std::size_t n) {
  s.out = out.ensure(s.out, n + 16);
  if (s.nbits == 0) {
    std::memcpy(s.out, bytes, n);
    s.out += n;
    return;
  }
  std::size_t i = 0;
  for (; i + 8 <= n; i += 7) {  // 56 bits per step
    std::uint64_t w;
    std::memcpy(&w, bytes + i, 8);
    s.acc = s.acc << 56 | __builtin_bswap64(w) >> 8;
    s.nbits += 56;
    const std::uint64_t be = __builtin_bswap64(s.acc << (64 - s.nbits));
    std::memcpy(s.out, &be, 8);
    s.out += s.nbits >> 3;
    s.nbits &= 7;
  }
  for (; i < n; ++i) put_bits(s, bytes[i], 8);
}

void encode_with_parts(const Variant& v, const TokenView& tokens, const HuffmanTables& tables,
                       int restart_interval, int mcus_x, int threads,
                       std::vector<std::uint8_t>& out) {
  // Where the scan may be cut: MCU rows (that begin a restart interval, if there are any).
  std::vector<std::size_t> bounds = {0};
  if (threads > 1 && tokens.row_start && tokens.rows > 1) {
    const std::size_t total = tokens.count;
    for (int r = 1; r < tokens.rows && static_cast<int>(bounds.size()) < threads; ++r) {
      if (restart_interval && static_cast<long long>(r) * mcus_x % restart_interval != 0) continue;
      const std::size_t at = tokens.row_start[r];
      const std::size_t target = total * bounds.size() / static_cast<std::size_t>(threads);
      if (at >= target && at > bounds.back() && at < total) bounds.push_back(at);
    }
  }
  if (bounds.size() < 2) {
    encode_with(v, tokens, tables, out);
    return;
  }
  bounds.push_back(tokens.count);
  const bool aligned = restart_interval != 0;
  CoderTables t;
  build_tables(tables, t);
  const std::size_t parts_count = bounds.size() - 1;
  std::vector<Part> parts(parts_count);
  auto code_part = [&](std::size_t k) {
    Part& p = parts[k];
    try {
      ByteOutput space(p.scratch);
      CoderState s;
      s.out = space.begin();
      s.segment = 0;
      v.code(tokens.slots, bounds[k], bounds[k + 1], t, s, space);
      if (aligned) {  // as before the next part's marker, or at the end of the scan
        s.out = space.ensure(s.out, 16);
        flush_to_byte(s);
        stuff_segment(s, space);
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
    if (p.error) std::rethrow_exception(p.error);
  if (aligned) {
    for (const Part& p : parts) out.insert(out.end(), p.scratch.data.get(), p.scratch.data.get() + p.bytes);
    return;
  }
  ByteOutput space;
  CoderState s;
  s.out = space.begin();
  s.segment = 0;
  for (const Part& p : parts) {
    append_shifted(s, space, p.scratch.data.get(), p.bytes);
    if (p.nbits) put_bits(s, p.acc & ((std::uint64_t{1} << p.nbits) - 1), p.nbits);
  }
  s.out = space.ensure(s.out, 16);
  flush_to_byte(s);
  stuff_segment(s, space);
  space.append_to(s.out, out);
}

}  // namespace

void encode_token_scan(const TokenView& tokens, const HuffmanTables& tables,
                       std::vector<std::uint8_t>& out) {
  encode_with(best_variant(), tokens, tables, out);
}

void encode_token_scan_parallel(const TokenView& tokens, const HuffmanTables& tables,
                                int restart_interval, int mcus_x, int threads,
                                std::vector<std::uint8_t>& out, const std::string& variant) {
  encode_with_parts(variant.empty() ? best_variant() : find_variant(variant), tokens, tables,
                    restart_interval, mcus_x, threads, out);
}

void encode_token_scan(const std::string& variant, const TokenView& tokens,
                       const HuffmanTables& tables, std::vector<std::uint8_t>& out) {
  encode_with(find_variant(variant), tokens, tables, out);
}

std::vector<std::string> token_coder_variants() {
  std::vector<std::string> names;
  for (const Variant& v : kVariants)
    if (v.supported()) names.emplace_back(v.name);
  return names;
}

const char* token_coder_variant() { return best_variant().name; }

}  // namespace mjpeg
