// JFIF marker segments in libjpeg's order: SOI, APP0 (JFIF 1.01), DQT (each table once, in the
// order the components use them), SOF0 (SOF1 with 16-bit tables), DHT, DRI, SOS ... EOI; for
// progressive frames SOF2, then per scan its DHTs, DRI (first scan only), SOS and the data.
#pragma once

#include <cstdint>
#include <vector>

#include "jpeg/huffman.hpp"
#include "core/quant.hpp"
#include "core/geometry.hpp"
#include "mjpeg/options.hpp"

namespace mjpeg {

/// Appends SOI .. SOS (everything before the entropy-coded data) to `out`.
void write_headers(const FrameGeometry& g, const QuantTables& q, const HuffmanTables& h,
                   int restart_interval, std::vector<std::uint8_t>& out);

/// Appends SOI, APP0, DQT and SOF0/SOF1 (SOF2 when `progressive`) to `out`.
void write_frame_header(const FrameGeometry& g, const QuantTables& q, bool progressive,
                        std::vector<std::uint8_t>& out);

/// Appends one DHT segment (class_and_id: 0x00/0x01 DC tables, 0x10/0x11 AC tables).
void write_dht(const HuffmanSpec& spec, int class_and_id, std::vector<std::uint8_t>& out);

/// Appends DRI.
void write_dri(int restart_interval, std::vector<std::uint8_t>& out);

/// Appends an SOS segment: `count` components (0-based indices) with their Td << 4 | Ta
/// table selectors, spectral selection ss..se, successive approximation ah << 4 | al.
void write_sos(const int* components, const int* table_selectors, int count, int ss, int se,
               int ah_al, std::vector<std::uint8_t>& out);

/// Writes `density` into the JFIF APP0 segment that write_frame_header put at the start of
/// `jpeg` (units at byte 13, X and Y density at 14..17; every other byte stays).
void set_density(const JfifDensity& density, std::vector<std::uint8_t>& jpeg);

/// Appends EOI.
void write_trailer(std::vector<std::uint8_t>& out);

}  // namespace mjpeg
