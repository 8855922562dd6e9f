// Token streams (formats in src/core/token_format.hpp): the compact form of a frame's quantized
// coefficients that the GPU tokenizer produces and the CPU token coder consumes. This module has
// the CPU tokenizers (the reference the GPU kernels are tested against, and what stands in for
// the GPU where there is none) and the coder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "jpeg/huffman.hpp"
#include "core/quant.hpp"
#include "core/geometry.hpp"
#include "mjpeg/options.hpp"
#include "core/token_format.hpp"

namespace mjpeg {

/// A read-only view of one frame's tokens, in either format (core/token_format.hpp).
struct TokenView {
  tokens::Format format = tokens::Format::slots;
  // Format::slots
  const std::uint16_t* slots = nullptr;
  std::size_t count = 0;                     ///< slots
  // Format::blocks
  const std::uint32_t* blocks = nullptr;     ///< one word per block of the scan
  std::size_t block_count = 0;
  const std::uint8_t* bits = nullptr;        ///< the AC stream, its slack included
  std::size_t bit_bytes = 0;                 ///< bytes at `bits`, slack included
  // Both
  const std::uint32_t* row_start = nullptr;  ///< rows + 1 entries (slot indexes or bit offsets), or null
  int rows = 0;                              ///< MCU rows
  const std::uint32_t* histogram = nullptr;  ///< slots: tokens::kHistogramWords counts, or null
};

/// A frame's tokens in host memory (what tokenize() and tokenize_blocks() write).
struct TokenBuffer {
  tokens::Format format = tokens::Format::slots;
  std::vector<std::uint16_t> slots;
  std::vector<std::uint32_t> blocks;
  std::vector<std::uint8_t> bits;        ///< the AC stream with its slack
  std::vector<std::uint32_t> row_start;
  std::vector<std::uint32_t> histogram;  ///< empty unless asked for
  TokenView view() const;
  /// Bytes the stream takes (what crosses PCIe in the GPU modes, without the header).
  std::size_t bytes() const;
};

/// Turns quantized coefficients (layout of core/geometry.hpp) into the symbol slots the scan
/// would code with `restart_interval`; fills the histogram too when `histogram` is true.
/// Reuses `out`'s storage.
void tokenize(const FrameGeometry& g, const std::int16_t* coeffs, int restart_interval,
              bool histogram, TokenBuffer& out);

/// The AC codes of `tables` as a coded-blocks stream is made with them (class 1 = class 0 for
/// a one-component frame's tables, whose chroma entries are empty).
tokens::AcCodes ac_codes(const HuffmanTables& tables, int table_count);

/// True when a frame of this geometry can be a coded-blocks stream (tokens::kMaxCodedBlocks).
bool coded_blocks_fit(const FrameGeometry& g);

/// The token format the GPU modes are asked for, from the environment variable
/// MJPEG_TOKEN_FORMAT, read at each call: `coded` or no value (unset or empty) asks for coded
/// blocks, the default (1.25 times the JPEG's bytes down at q90 against 2.9 for symbol slots,
/// and half the coder's time per frame); `slots` for symbol slots. Throws UsageError naming the
/// variable for any other value.
tokens::Format requested_token_format();

/// The format the GPU modes hand the coder: `requested` (requested_token_format()), except
/// that where the tables come from the frame (--optimize), where the frame goes back to
/// coefficients (--progressive) and where it is too large for coded blocks (coded_blocks_fit)
/// it is symbol slots. Coded blocks are made with the Annex K AC codes.
tokens::Format token_format_for(const FrameGeometry& g, const EncodeOptions& options,
                                tokens::Format requested);

/// Turns quantized coefficients into a coded-blocks stream with the AC codes `codes`: what the
/// GPU tokenizer writes, block for block and bit for bit (the reference it is tested against,
/// and what stands in for it where there is none). Reuses `out`'s storage. Throws mjpeg::Error
/// when a symbol the frame needs has no code, UsageError when the frame is too large
/// (coded_blocks_fit).
void tokenize_blocks(const FrameGeometry& g, const std::int16_t* coeffs,
                     const tokens::AcCodes& codes, TokenBuffer& out);

/// The view of a stream as the GPU writes it (tokens::StreamHeader, row starts, histogram,
/// body) lying at `stream`: `header_bytes` as the tokenizer's plan says, `block_count` the
/// geometry's blocks. Throws mjpeg::Error for a header that is not one of such a stream (or
/// that says it overflowed).
TokenView stream_view(const std::uint8_t* stream, std::size_t header_bytes,
                      std::size_t block_count);

/// Libjpeg's --optimize statistics (as gather_stats counts them) from a token histogram.
HuffmanStats stats_from_histogram(const std::uint32_t* histogram);

/// Appends the entropy-coded data of the scan (restart markers included, last byte padded with
/// 1-bits) to `out`: the same bytes as encode_scan() on the coefficients the tokens came from.
/// `g` and `restart_interval` are the frame's: a coded-blocks stream holds neither component
/// classes nor markers (symbol slots carry both). `tables` must be those the stream was made
/// with (coded blocks: its AC codes; only the DC tables are used here). `variant` "" = the best
/// this CPU runs. Throws mjpeg::Error for a malformed stream (a symbol the tables have no code
/// for, an escape slot missing at the end; block lengths that do not add up to the rows' bits),
/// leaving `out` as it was.
void encode_token_scan(const FrameGeometry& g, int restart_interval, const TokenView& tokens,
                       const HuffmanTables& tables, std::vector<std::uint8_t>& out,
                       const std::string& variant = "");

/// encode_token_scan on up to `threads` threads (the caller is one of them), for the latency of
/// one large frame: the scan is cut at MCU-row starts (tokens.row_start; with a restart
/// interval only at rows that begin one) into ranges of about equal length, coded at once and
/// joined bit-exactly: the same bytes as encode_token_scan. Falls back to one pass when the
/// stream cannot be cut (one MCU row, no row starts, no row that begins a restart interval).
void encode_token_scan_parallel(const FrameGeometry& g, int restart_interval,
                                const TokenView& tokens, const HuffmanTables& tables,
                                int threads, std::vector<std::uint8_t>& out,
                                const std::string& variant = "");

/// Replaces `out` with the whole JPEG file (headers, scan, EOI), as encode_coefficients() would
/// write it for the coefficients the tokens came from. Symbol slots with options.optimize: the
/// tables are built from tokens.histogram (which must then be present); coded blocks are made
/// with the Annex K tables, so options.optimize is an error for them. `threads` > 1 codes the
/// scan with encode_token_scan_parallel.
void encode_tokens(const FrameGeometry& g, const QuantTables& tables, const TokenView& tokens,
                   const EncodeOptions& options, std::vector<std::uint8_t>& out, int threads = 1);

/// encode_tokens' second half: replaces `out` with the headers for `huff`, the scan coded
/// straight behind them (on `threads` threads when > 1) and EOI. `out`'s old bytes are written
/// over in place (its storage is reused, not zero-filled again).
void encode_token_frame(const FrameGeometry& g, const QuantTables& q, const HuffmanTables& huff,
                        int restart_interval, const TokenView& tokens, int threads,
                        std::vector<std::uint8_t>& out);

/// The token coder's instruction-set variants this CPU runs, best first ("generic" last), and
/// the one in use. Throws mjpeg::Error (from the coding functions) for a variant this CPU
/// cannot run.
std::vector<std::string> token_coder_variants();
const char* token_coder_variant();
/// Every variant compiled into this build, best first, whether or not this CPU can run it.
std::vector<std::string> built_token_coder_variants();

}  // namespace mjpeg
