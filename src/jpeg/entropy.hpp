// The entropy stage: quantized coefficients of one frame -> a complete JFIF file.
// Shared by the CPU path (encode_jpeg) and every GPU path, which hand over coefficients.
#pragma once

#include <cstdint>
#include <vector>

#include "core/quant.hpp"
#include "core/geometry.hpp"
#include "mjpeg/options.hpp"

namespace mjpeg {

/// Replaces `out` with the JPEG file for `coeffs` (layout of core/geometry.hpp).
/// Uses options.restart_interval and options.optimize; quality is already in `tables`.
/// `threads` > 1: the statistics (optimize) and the sequential scan are computed on that many
/// threads (encode_scan_parallel; the same bytes); a progressive file is coded on one.
void encode_coefficients(const FrameGeometry& g, const QuantTables& tables,
                         const std::int16_t* coeffs, const EncodeOptions& options,
                         std::vector<std::uint8_t>& out, int threads = 1);

}  // namespace mjpeg
