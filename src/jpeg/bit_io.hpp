// The bit-level plumbing shared by the Huffman coders (huffman.cpp, token_coder.cpp): an output
// buffer written through a raw pointer (Sink), a bit accumulator (CoderState) with its 0xFF
// stuffing, and the join of a scan coded in parts: a part coded without stuffing is shifted
// to the bit where the previous one ended and stuffed as it is appended (append_shifted).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if defined(__GNUC__)
#define MJPEG_TC_NOINLINE __attribute__((noinline))
#define MJPEG_TC_INLINE inline __attribute__((always_inline))
#define MJPEG_TC_INLINE_LAMBDA __attribute__((always_inline))
#define MJPEG_TC_LIKELY(x) __builtin_expect(!!(x), 1)
#define MJPEG_TC_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define MJPEG_TC_NOINLINE
#define MJPEG_TC_INLINE inline
#define MJPEG_TC_INLINE_LAMBDA
#define MJPEG_TC_LIKELY(x) (x)
#define MJPEG_TC_UNLIKELY(x) (x)
#endif

namespace mjpeg::bitio {

/// A per-thread scratch buffer that is never zero-filled (the parts of a parallel scan).
struct Scratch {
  std::unique_ptr<std::uint8_t[]> data;
  std::size_t size = 0;
};

/// Where the coded bytes go, written through a raw pointer: either the caller's vector (bytes
/// past its size are never zero-filled twice: the coder writes over what the vector already
/// holds and grows it with resize() only where it must) or a Scratch buffer.
class Sink {
 public:
  explicit Sink(std::vector<std::uint8_t>& v) : vec_(&v) { limit_ = v.data() + v.size(); }
  explicit Sink(Scratch& s) : scratch_(&s) { limit_ = s.data.get() + s.size; }

  std::uint8_t* data() const { return vec_ ? vec_->data() : scratch_->data.get(); }

  /// Returns where `p` (a position in the buffer) now lies, with `bytes` of room after it.
  MJPEG_TC_INLINE std::uint8_t* ensure(std::uint8_t* p, std::size_t bytes) {
    if (MJPEG_TC_LIKELY(static_cast<std::size_t>(limit_ - p) >= bytes)) return p;
    return grow(p, bytes);
  }

  /// The vector ends at `end` (a vector sink).
  void finish(std::uint8_t* end) { vec_->resize(static_cast<std::size_t>(end - vec_->data())); }

 private:
  MJPEG_TC_NOINLINE std::uint8_t* grow(std::uint8_t* p, std::size_t bytes) {
    const std::size_t used = static_cast<std::size_t>(p - data());
    // A vector grows in steps of an eighth: one that held the previous frame (about as large)
    // is grown, and so zero-filled, only a little past it, and resize() itself reallocates
    // geometrically. A scratch buffer (copied when it grows) by half.
    const std::size_t size = used + bytes + (vec_ ? std::max<std::size_t>(used / 8, 64 * 1024)
                                                  : std::max<std::size_t>(used / 2, 256 * 1024));
    if (vec_) {
      vec_->resize(size);
    } else {
      std::unique_ptr<std::uint8_t[]> grown(new std::uint8_t[size]);
      if (used) std::memcpy(grown.get(), scratch_->data.get(), used);
      scratch_->data = std::move(grown);
      scratch_->size = size;
    }
    limit_ = data() + size;
    return data() + used;
  }

  std::vector<std::uint8_t>* vec_ = nullptr;
  Scratch* scratch_ = nullptr;
  std::uint8_t* limit_ = nullptr;
};

struct CoderState {
  std::uint64_t acc = 0;  ///< pending bits: the low `nbits` (stale bits above are ignored)
  unsigned nbits = 0;     ///< 0..7 between steps
  std::uint8_t* out = nullptr;
};

/// True when one of the 8 bytes of `w` is 0xFF: a byte compare in an SSE2 register (no 64-bit
/// constants to keep in general registers), else a zero byte of ~w found with the bit trick
/// (exact: no false hits).
MJPEG_TC_INLINE bool has_ff_byte(std::uint64_t w) {
#if defined(__SSE2__)
  const __m128i v = _mm_cvtsi64_si128(static_cast<long long>(w));
  return _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(-1))) != 0;  // upper bytes are 0
#else
  const std::uint64_t x = ~w;
  return ((x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull) != 0;
#endif
}

/// Writes the top `count` bytes of `word`, each 0xFF followed by a stuffed 0x00.
inline MJPEG_TC_NOINLINE std::uint8_t* write_stuffed(std::uint8_t* p, std::uint64_t word,
                                                   unsigned count) {
  for (unsigned i = 0; i < count; ++i) {
    const auto byte = static_cast<std::uint8_t>(word >> (56 - 8 * i));
    *p++ = byte;
    if (byte == 0xFF) *p++ = 0x00;
  }
  return p;
}

/// Appends `len` bits (nbits + len <= 64) and writes the whole bytes, stuffed when `stuff`
/// (slow path; room for 16 bytes at s.out).
inline void put_bits(CoderState& s, std::uint64_t bits, unsigned len, bool stuff) {
  s.acc = s.acc << len | bits;
  s.nbits += len;
  const std::uint64_t word = s.acc << (64 - s.nbits);
  const unsigned whole = s.nbits >> 3;
  if (stuff) {
    s.out = write_stuffed(s.out, word, whole);
  } else {
    for (unsigned k = 0; k < whole; ++k) *s.out++ = static_cast<std::uint8_t>(word >> (56 - 8 * k));
  }
  s.nbits &= 7;
}

/// Pads the pending bits to a byte with 1-bits, as libjpeg does before a marker or the end.
inline void flush_to_byte(CoderState& s, bool stuff) {
  if (s.nbits == 0) return;
  const unsigned pad = 8 - s.nbits;
  put_bits(s, (1u << pad) - 1u, pad, stuff);
}

/// Appends `n` unstuffed bytes to the bit stream in `s` at its current bit position, stuffed.
inline void append_shifted(CoderState& s, Sink& sink, const std::uint8_t* bytes, std::size_t n) {
  constexpr std::size_t kStep = 4096;  // bytes between room checks
  std::size_t i = 0;
  while (i + 8 <= n) {
    s.out = sink.ensure(s.out, 2 * kStep + 32);
    const std::size_t stop = std::min(n - 7, i + kStep);  // i + 8 <= n
    std::uint8_t* o = s.out;
    std::uint64_t acc = s.acc;
    unsigned nbits = s.nbits;
    for (; i < stop; i += 7) {  // 56 bits per step
      std::uint64_t w;
      std::memcpy(&w, bytes + i, 8);
      acc = acc << 56 | __builtin_bswap64(w) >> 8;
      nbits += 56;
      const std::uint64_t word = acc << (64 - nbits);
      const std::uint64_t be = __builtin_bswap64(word);
      std::memcpy(o, &be, 8);
      if (MJPEG_TC_UNLIKELY(has_ff_byte(word)))
        o = write_stuffed(o, word, nbits >> 3);
      else
        o += nbits >> 3;
      nbits &= 7;
    }
    s.out = o;
    s.acc = acc;
    s.nbits = nbits;
  }
  s.out = sink.ensure(s.out, 2 * 8 + 32);
  for (; i < n; ++i) put_bits(s, bytes[i], 8, true);
}

}  // namespace mjpeg::bitio
