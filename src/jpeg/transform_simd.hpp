// The vector variants of the CPU transform (transform_simd.cpp), for the dispatcher in
// transform_cpu.cpp. Not used anywhere else.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/quant.hpp"
#include "jpeg/transform_cpu.hpp"
#include "core/geometry.hpp"

namespace mjpeg::simd {

struct TransformVariant {
  const char* name;
  bool (*supported)();
  /// Everything but the dummy blocks (the dispatcher fills those), for the bands (MCU rows)
  /// band0 .. band1 - 1 only: several threads may transform disjoint ranges of one frame.
  void (*transform)(RowSource& rows, const FrameGeometry& g, const QuantTables& tables,
                    std::int16_t* coeffs, int band0, int band1);
  void (*quantize)(const std::int16_t* in, std::int16_t* out, std::size_t n, int q);
};

/// The vector variants compiled into this build, best first; `count` may be 0.
const TransformVariant* variants(std::size_t& count);

}  // namespace mjpeg::simd
