// Progressive JPEG (SOF2) by spectral selection only: a first scan of every component's DC
// (interleaved), then bands of AC coefficients per component, each band coded once (Ah = Al = 0,
// no successive approximation) with runs of empty blocks (EOBRUN) and its own optimal Huffman
// tables. The bytes are those of libjpeg(-turbo)'s progressive Huffman coder, i.e.
// `cjpeg -optimize -scans FILE` with the script of progressive_script_text() (libjpeg always
// computes optimal tables for progressive scans, so -optimize changes nothing there).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/geometry.hpp"
#include "core/quant.hpp"
#include "jpeg/tokens.hpp"
#include "mjpeg/options.hpp"

namespace mjpeg {

/// One scan of the script: components (0-based) and the coefficient band Ss..Se (zigzag).
struct ProgressiveScan {
  int components[kMaxComponents] = {0, 0, 0};
  int count = 0;
  int ss = 0, se = 0;
};

/// The scan script `--progressive` writes for a frame of `num_components` (1 or 3).
std::vector<ProgressiveScan> progressive_script(int num_components);

/// The same script in cjpeg's -scans syntax (what the tests hand cjpeg).
std::string progressive_script_text(int num_components);

/// Replaces `out` with the progressive JPEG file of `coeffs` (layout of core/geometry.hpp).
/// Uses options.restart_interval (in MCUs of each scan: of an interleaved scan an MCU, of a
/// single-component scan one block, as libjpeg counts them); options.optimize is implied.
void encode_progressive(const FrameGeometry& g, const QuantTables& tables,
                        const std::int16_t* coeffs, const EncodeOptions& options,
                        std::vector<std::uint8_t>& out);

/// Expands a token stream (core/token_format.hpp) back into the coefficient blocks it was
/// made from (layout of core/geometry.hpp; `coeffs` holds g.coefficient_count() values, all
/// written). Throws mjpeg::Error for a stream that does not fit the geometry.
void tokens_to_coefficients(const FrameGeometry& g, const TokenView& tokens,
                            std::int16_t* coeffs);

/// encode_progressive on the coefficients of `tokens`; `scratch` is reused between calls.
void encode_tokens_progressive(const FrameGeometry& g, const QuantTables& tables,
                               const TokenView& tokens, const EncodeOptions& options,
                               std::vector<std::int16_t>& scratch, std::vector<std::uint8_t>& out);

}  // namespace mjpeg
