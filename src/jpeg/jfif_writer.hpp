// JFIF marker segments in libjpeg's order: SOI, APP0 (JFIF 1.01), DQT (each table once, in the
// order the components use them), SOF0 (SOF1 with 16-bit tables), DHT, DRI, SOS ... EOI.
#pragma once

#include <cstdint>
#include <vector>

#include "jpeg/huffman.hpp"
#include "core/quant.hpp"
#include "core/geometry.hpp"

namespace mjpeg {

/// Appends SOI .. SOS (everything before the entropy-coded data) to `out`.
void write_headers(const FrameGeometry& g, const QuantTables& q, const HuffmanTables& h,
                   int restart_interval, std::vector<std::uint8_t>& out);

/// Appends EOI.
void write_trailer(std::vector<std::uint8_t>& out);

}  // namespace mjpeg
