// The token stream: what the transform hands the Huffman coder instead of int16 coefficients.
// Plain C++ shared by the GPU tokenizer (cuda/gpu_tokenize.cu), the CPU tokenizer that stands in
// for it (src/jpeg/tokens.cpp) and the CPU coder (src/jpeg/token_coder.cpp). A stream comes in
// one of two formats (Format):
//
// Format::blocks, "coded blocks" (the GPU modes' default where the tables are fixed for the run:
// not with --optimize or --progressive; MJPEG_TOKEN_FORMAT=slots asks for slots): each block's AC
// coefficients already Huffman-coded with the frame's AC tables, and its DC as it is:
//
//     block words   one 32-bit word per block, in scan order (MCU by MCU; inside an MCU the
//                   blocks in the order the scan codes them):
//                       bits 0..15   the block's quantized DC coefficient (int16, not a difference)
//                       bits 16..31  the length in bits of the block's coded AC part
//     AC stream     the coded AC parts of every block one after another, without gaps: for each
//                   AC symbol (ZRL, run/size, EOB) its Huffman code then its value bits, exactly
//                   the bits the scan has after the block's DC; most significant bit first, bytes
//                   in order (bit p lies in byte p / 8 at bit 7 - p % 8). Zero-padded to a whole
//                   32-bit word and then kBitsSlack more zero bytes, so that a reader may load 8
//                   bytes at any byte of the stream.
//     row_start[r]  the bit offset in the AC stream where MCU row r begins (r = 0..mcus_y; the
//                   last is the stream's length in bits).
//
// What makes the scan stays with the CPU coder: the DC differences and their codes (the
// predictor of each component, reset at every restart interval), the order and joining of the
// parts at bit level, byte stuffing, restart markers and the padding before them. Per block the
// coder does one DC lookup and copies the AC part with shifts of up to 57 bits. A stream is
// 1.23 times the JPEG's bytes for the Kodak mosaic at quality 90 (4 bytes a block beside the
// coded bits; 1.66 at quality 50, 1.07 at 100), against 2.86 for symbol slots. The format does
// not depend on the restart interval; it needs the AC tables before the frame is tokenized,
// which --optimize (tables from the frame's own counts) does not have.
//
// Format::slots, "symbol slots" (MJPEG_TOKEN_FORMAT=slots; always with --optimize, and for the
// expansion back to coefficients of --progressive): a sequence of 16-bit slots, in scan order,
// one per symbol. Each slot is
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
// Per frame the slot tokenizer also gives
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

/// The two layouts of a stream (see the file comment).
enum class Format : std::uint32_t { slots = 0, blocks = 1 };

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

// ---------------------------------------------------------------------------------------------
// Coded blocks
// ---------------------------------------------------------------------------------------------
inline constexpr int kBlockAcShift = 16;           ///< AC bit count in a block word
inline constexpr std::size_t kBitsSlack = 8;       ///< zero bytes after the AC stream's last word
/// Longest coded AC part: 63 nonzero coefficients of a 16-bit code and 10 value bits each (a
/// zero run long enough for a ZRL leaves fewer symbols; an EOB follows at most 62 of them).
inline constexpr int kMaxAcBitsPerBlock = 63 * (16 + 10);
/// Most blocks a coded-blocks frame may have: every AC offset (a bit offset) stays in 32 bits.
/// Larger frames are tokenized as slots.
inline constexpr std::size_t kMaxCodedBlocks = 0xFFFFFFFFull / kMaxAcBitsPerBlock;

MJPEG_TOKEN_HD std::uint32_t block_word(int dc, std::uint32_t ac_bits) {
  return static_cast<std::uint32_t>(static_cast<std::uint16_t>(dc)) | ac_bits << kBlockAcShift;
}
MJPEG_TOKEN_HD int block_dc(std::uint32_t word) {
  return static_cast<std::int16_t>(static_cast<std::uint16_t>(word & 0xFFFFu));
}
MJPEG_TOKEN_HD std::uint32_t block_ac_bits(std::uint32_t word) { return word >> kBlockAcShift; }

/// Bytes of an AC stream of `bits` bits: whole 32-bit words, then the slack.
MJPEG_TOKEN_HD std::size_t ac_stream_bytes(std::uint64_t bits) {
  return static_cast<std::size_t>((bits + 31) / 32 * 4) + kBitsSlack;
}

/// The AC Huffman codes a coded-blocks stream is made with: [class][symbol], class 0 luma (or
/// grayscale), 1 chroma; length 0 where the table has no code for the symbol.
struct AcCodes {
  std::uint16_t code[2][256];
  std::uint8_t length[2][256];
};

// ---------------------------------------------------------------------------------------------
// The stream as the GPU writes it
// ---------------------------------------------------------------------------------------------
/// Header the GPU writes in front of a frame's stream (all 32-bit words), followed by
/// row_start[mcus_y + 1] and, when asked for (slots only), the histogram; then the body.
struct StreamHeader {
  std::uint32_t body_bytes;  ///< bytes after the header (slots: 2 per slot; blocks: the block
                             ///< words, the AC stream and its slack)
  std::uint32_t overflow;    ///< 1: the stream did not fit its buffer and was not written
  std::uint32_t rows;        ///< MCU rows (row_start has rows + 1 entries)
  std::uint32_t flags;       ///< kHistogramFlag | format << kFormatShift
};
inline constexpr std::uint32_t kHistogramFlag = 1;
inline constexpr int kFormatShift = 8;

/// 32-bit words of the header, row starts and (optional) histogram, rounded up to 16 bytes.
inline constexpr std::size_t header_words(int mcu_rows, bool histogram) {
  const std::size_t words = sizeof(StreamHeader) / 4 + static_cast<std::size_t>(mcu_rows) + 1 +
                            (histogram ? kHistogramWords : 0);
  return (words + 3) / 4 * 4;
}

}  // namespace mjpeg::tokens
