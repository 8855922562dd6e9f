// The token stream: what the transform hands the Huffman coder instead of int16 coefficients.
// Plain C++ shared by the GPU tokenizer (cuda/gpu_tokenize.cu), the CPU tokenizer that stands in
// for it (src/jpeg/tokens.cpp) and the CPU coder (src/jpeg/token_coder.cpp).
//
// A frame's scan becomes a sequence of 16-bit slots, in scan order (MCU by MCU; inside an MCU the
// blocks in the order the scan codes them). Each slot is
//
//     bits 0..7   symbol S
//     bit  8      component class: 0 luma (or grayscale), 1 chroma; it picks the Huffman tables
//     bits 9..15  the "value bits" of S when there are at most 7 of them, else 0 (see below)
//
// so bits 0..8 index a 512-entry code table directly. S is one of
//     run << 4 | size   an AC symbol exactly as JPEG defines it (EOB 0x00, ZRL 0xF0, size 1..10);
//     size << 4 | 0x0B  the DC difference of a block, size 0..11;
//     0x0D              a restart marker RSTn, n = bits 9..11 (0..7), class 0; it precedes the DC
//                       slot of the first block of every restart interval but the first.
// No AC symbol has a low nibble of 0xB or 0xD (AC sizes stop at 10), so the kinds cannot be
// confused.
// Value bits: the `size` low bits that JPEG appends to the symbol's code (v for v > 0, v - 1 for
// v < 0, i.e. one's complement). With size <= 7 they sit in bits 9..15; with size >= 8 (an
// "escape": rare, e.g. 0.5% of the slots of a 1080p frame at quality 90) bits 9..15 are 0 and the
// NEXT slot holds all `size` bits.
//
// So every slot is one Huffman code (plus its value bits) of a table the slot names, and the CPU
// coder only looks up the code, appends bits and stuffs bytes. DC differences are final: the
// predictor (previous block of the same component in scan order, reset to 0 at each restart
// interval) is applied by the tokenizer.
//
// Per frame the tokenizer also gives
//     row_start[r]  the slot index where MCU row r begins (r = 0..mcus_y; the last is the slot
//                   count), so rows can be coded separately;
//     histogram     optionally, the symbol counts per table as libjpeg's first --optimize pass
//                   counts them: [0] luma DC, [1] luma AC, [2] chroma DC, [3] chroma AC, 256 bins
//                   each (DC bins by size, AC bins by symbol; markers and escape slots uncounted).
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define MJPEG_TOKEN_HD __host__ __device__ __forceinline__
#else
#define MJPEG_TOKEN_HD inline
#endif

namespace mjpeg::tokens {

inline constexpr std::uint32_t kDcNibble = 0x0B;  ///< low nibble of a DC symbol
inline constexpr std::uint32_t kRestart = 0x0D;   ///< restart marker symbol
inline constexpr std::uint32_t kEob = 0x00;
inline constexpr std::uint32_t kZrl = 0xF0;
inline constexpr int kClassShift = 8;             ///< the class bit
inline constexpr int kValueShift = 9;             ///< inline value bits start here
inline constexpr int kInlineValueBits = 7;        ///< sizes above this take an escape slot

inline constexpr int kHistogramTables = 4;        ///< luma DC, luma AC, chroma DC, chroma AC
inline constexpr int kHistogramBins = 256;
inline constexpr std::size_t kHistogramWords = kHistogramTables * kHistogramBins;

/// Most slots a block can take: a restart marker, a DC with escape (2), 63 AC values with escape
/// (126), at most 3 ZRLs (48 zeros need a nonzero after them), EOB.
inline constexpr int kMaxSlotsPerBlock = 1 + 2 + 126 + 3 + 1;

/// Bit length of a magnitude (0 for 0): JPEG's "size" category.
MJPEG_TOKEN_HD int magnitude_size(std::uint32_t magnitude) {
  int n = 0;
  while (magnitude) {
    ++n;
    magnitude >>= 1;
  }
  return n;
}

/// The `size` value bits of a nonzero or zero value v.
MJPEG_TOKEN_HD std::uint32_t value_bits(int v, int size) {
  return static_cast<std::uint32_t>(v < 0 ? v - 1 : v) & ((1u << size) - 1u);
}

/// Slot of a symbol of class `chroma` (0 or 1) with value bits that fit inline (or 0).
MJPEG_TOKEN_HD std::uint16_t slot(std::uint32_t symbol, int chroma, std::uint32_t bits) {
  return static_cast<std::uint16_t>(symbol | static_cast<std::uint32_t>(chroma) << kClassShift |
                                    bits << kValueShift);
}

/// Slots a value of this size takes (1, or 2 with the escape slot).
MJPEG_TOKEN_HD int slots_for_size(int size) { return size > kInlineValueBits ? 2 : 1; }

/// DC symbol of a difference of this size.
MJPEG_TOKEN_HD std::uint32_t dc_symbol(int size) {
  return static_cast<std::uint32_t>(size) << 4 | kDcNibble;
}

/// Header the GPU writes in front of a frame's token stream (all 32-bit words), followed by
/// row_start[mcus_y + 1] and, when asked for, the histogram.
struct StreamHeader {
  std::uint32_t slots;     ///< slots in the stream
  std::uint32_t overflow;  ///< 1: the stream did not fit its buffer and was not written
  std::uint32_t rows;      ///< MCU rows (row_start has rows + 1 entries)
  std::uint32_t has_histogram;
};

/// 32-bit words of the header, row starts and (optional) histogram, rounded up to 16 bytes.
inline constexpr std::size_t header_words(int mcu_rows, bool histogram) {
  const std::size_t words = sizeof(StreamHeader) / 4 + static_cast<std::size_t>(mcu_rows) + 1 +
                            (histogram ? kHistogramWords : 0);
  return (words + 3) / 4 * 4;
}

}  // namespace mjpeg::tokens
