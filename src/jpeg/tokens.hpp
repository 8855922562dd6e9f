// Token streams (format in src/core/token_format.hpp): the compact form of a frame's quantized
// coefficients that the GPU tokenizer produces and the CPU token coder consumes. This module has
// the CPU tokenizer (the reference the GPU kernel is tested against, and what stands in for the
// GPU where there is none) and the coder.
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

/// A read-only view of one frame's tokens (slots, MCU-row starts, optional histogram).
struct TokenView {
  const std::uint16_t* slots = nullptr;
  std::size_t count = 0;                   ///< slots
  const std::uint32_t* row_start = nullptr;  ///< rows + 1 entries, or null
  int rows = 0;                            ///< MCU rows
  const std::uint32_t* histogram = nullptr;  ///< tokens::kHistogramWords counts, or null
};

/// A frame's tokens in host memory (what tokenize() writes).
struct TokenBuffer {
  std::vector<std::uint16_t> slots;
  std::vector<std::uint32_t> row_start;
  std::vector<std::uint32_t> histogram;  ///< empty unless asked for
  TokenView view() const;
};

/// Turns quantized coefficients (layout of core/geometry.hpp) into the token stream the scan
/// would code with `restart_interval`; fills the histogram too when `histogram` is true.
/// Reuses `out`'s storage.
void tokenize(const FrameGeometry& g, const std::int16_t* coeffs, int restart_interval,
              bool histogram, TokenBuffer& out);

/// Libjpeg's --optimize statistics (as gather_stats counts them) from a token histogram.
HuffmanStats stats_from_histogram(const std::uint32_t* histogram);

/// Appends the entropy-coded data of the scan (restart markers included, last byte padded with
/// 1-bits) to `out`: the same bytes as encode_scan() on the coefficients the tokens came from.
/// Throws mjpeg::Error for a malformed stream (a symbol the tables have no code for, an escape
/// slot missing at the end).
void encode_token_scan(const TokenView& tokens, const HuffmanTables& tables,
                       std::vector<std::uint8_t>& out);

/// encode_token_scan on up to `threads` threads (the caller is one of them), for the latency of
/// one large frame: the scan is cut at MCU-row starts (tokens.row_start; with a restart
/// interval only at rows that begin one) into ranges of about equal length, coded at once and
/// joined bit-exactly: the same bytes as encode_token_scan. `mcus_x` is the geometry's MCU
/// columns; `variant` "" = the best this CPU runs. Falls back to one pass when the stream
/// cannot be cut (one MCU row, no row starts, no row that begins a restart interval).
void encode_token_scan_parallel(const TokenView& tokens, const HuffmanTables& tables,
                                int restart_interval, int mcus_x, int threads,
                                std::vector<std::uint8_t>& out, const std::string& variant = "");

/// Replaces `out` with the whole JPEG file (headers, scan, EOI), as encode_coefficients() would
/// write it for the coefficients the tokens came from. With options.optimize the tables are
/// built from tokens.histogram (which must then be present). `threads` > 1 codes the scan
/// with encode_token_scan_parallel.
void encode_tokens(const FrameGeometry& g, const QuantTables& tables, const TokenView& tokens,
                   const EncodeOptions& options, std::vector<std::uint8_t>& out, int threads = 1);

/// encode_tokens' second half: replaces `out` with the headers for `huff`, the scan coded
/// straight behind them (on `threads` threads when > 1) and EOI. `out`'s old bytes are written
/// over in place (its storage is reused, not zero-filled again).
void encode_token_frame(const FrameGeometry& g, const QuantTables& q, const HuffmanTables& huff,
                        int restart_interval, const TokenView& tokens, int threads,
                        std::vector<std::uint8_t>& out);

/// The token coder's instruction-set variants this CPU runs, best first, and the one in use;
/// encode_token_scan with a named variant (tests run them all). Throws mjpeg::Error if this CPU
/// cannot run it.
std::vector<std::string> token_coder_variants();
const char* token_coder_variant();
void encode_token_scan(const std::string& variant, const TokenView& tokens,
                       const HuffmanTables& tables, std::vector<std::uint8_t>& out);

}  // namespace mjpeg
