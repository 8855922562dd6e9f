// Huffman coding of quantized coefficients (zigzag order, layout of core/geometry.hpp) into
// the entropy-coded segment of a baseline JPEG scan, with restart markers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/geometry.hpp"

namespace mjpeg {

/// A Huffman table as it appears in a DHT segment.
struct HuffmanSpec {
  std::uint8_t bits[17] = {};     ///< bits[n] = number of codes of length n (1..16); bits[0] unused
  std::uint8_t values[256] = {};  ///< symbols in order of increasing code length
  int count() const;
};

/// Code and length of every symbol of a table (length 0: the symbol is absent).
struct SymbolCodes {
  std::uint32_t code[256] = {};
  std::uint8_t size[256] = {};
};

/// The canonical codes of a DHT table (JPEG Annex C): consecutive codes within each length,
/// shifted left by one from each length to the next.
SymbolCodes derive_codes(const HuffmanSpec& spec);

/// Annex K tables: index 0 luma, 1 chroma.
const HuffmanSpec& standard_dc_spec(int index);
const HuffmanSpec& standard_ac_spec(int index);

/// Symbol frequencies of one frame, per table index, gathered as libjpeg's first pass does.
struct HuffmanStats {
  std::uint32_t dc[2][257] = {};
  std::uint32_t ac[2][257] = {};
};
void gather_stats(const FrameGeometry& g, const std::int16_t* coeffs, int restart_interval,
                  HuffmanStats& stats);

/// libjpeg's jpeg_gen_optimal_table: a length-limited (16-bit) Huffman code for `freq`
/// (257 entries; entry 256 is reserved so no code is all ones). `freq` is consumed.
HuffmanSpec optimal_spec(std::uint32_t freq[257]);

/// The four tables a frame is coded with (dc/ac x luma/chroma).
struct HuffmanTables {
  HuffmanSpec dc[2], ac[2];
};

/// The tables of table indexes 0..table_count-1 (1: grayscale, 2: luma and chroma): built for
/// `stats` (consumed) when it is given, as -optimize does, else Annex K's. Indexes beyond
/// table_count are left empty.
HuffmanTables frame_tables(int table_count, HuffmanStats* stats);

/// Appends the entropy-coded data of the whole scan (restart markers included, final byte
/// padded with 1-bits) to `out`.
void encode_scan(const FrameGeometry& g, const std::int16_t* coeffs, int restart_interval,
                 const HuffmanTables& tables, std::vector<std::uint8_t>& out);

/// encode_scan / gather_stats on up to `threads` threads (the caller is one of them), for the
/// latency of one large frame: the scan is cut at MCU rows (with a restart interval only at
/// rows that begin one) into about equal ranges, coded at once and joined bit-exactly (without
/// restarts the parts are coded unstuffed and stuffed as they are joined): the same bytes and
/// counts as one pass. `variant` "" = the best this CPU runs.
void encode_scan_parallel(const FrameGeometry& g, const std::int16_t* coeffs,
                          int restart_interval, const HuffmanTables& tables, int threads,
                          std::vector<std::uint8_t>& out, const std::string& variant = "");
void gather_stats_parallel(const FrameGeometry& g, const std::int16_t* coeffs,
                           int restart_interval, int threads, HuffmanStats& stats,
                           const std::string& variant = "");

/// The coder is compiled for several instruction sets and picks the best one the CPU has at
/// run time. These name the variants this CPU can run, best first (e.g. "avx512", "avx2",
/// "generic"), and the one encode_scan/gather_stats use.
std::vector<std::string> huffman_variants();
const char* huffman_variant();
/// Every variant compiled into this build, best first, whether or not this CPU can run it.
std::vector<std::string> built_huffman_variants();

/// encode_scan / gather_stats with a named variant (tests check they all agree). Throws
/// mjpeg::Error if this CPU cannot run it.
void encode_scan(const std::string& variant, const FrameGeometry& g, const std::int16_t* coeffs,
                 int restart_interval, const HuffmanTables& tables,
                 std::vector<std::uint8_t>& out);
void gather_stats(const std::string& variant, const FrameGeometry& g, const std::int16_t* coeffs,
                  int restart_interval, HuffmanStats& stats);

}  // namespace mjpeg
