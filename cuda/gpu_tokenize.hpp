// Plain C++ API of the GPU tokenizer (no CUDA headers needed to include it): a frame's quantized
// coefficients in device memory -> its token stream (src/core/token_format.hpp) in device memory,
// so that only the compact stream crosses PCIe and the CPU coder does the least per symbol.
//
//   TokenizePlan plan(geometry, ac_codes, capacity_bytes);                        // coded blocks
//   TokenizePlan plan(geometry, restart_interval, histogram, capacity_bytes);     // symbol slots
//   launch_tokenize(plan, d_coeffs, d_out, stream);                               // per frame
//
// d_out receives, from its start:
//   plan.header_bytes()   tokens::StreamHeader, row_start[mcus_y + 1], the histogram (slots, if
//                         asked for), padded to 16 bytes;
//   then the body         header.body_bytes, unless header.overflow is 1: the body would have
//                         been longer than capacity_bytes, and what was written after the
//                         header is not a stream (the caller then uses the coefficients).
// So a consumer copies the header first and then exactly header.body_bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/geometry.hpp"
#include "core/token_format.hpp"
#include "stream_handle.hpp"

namespace mjpeg::gpu {


class TokenizePlan {
 public:
  /// Coded blocks with the AC codes `codes` (every run/size symbol, EOB and ZRL of both classes
  /// must have a code). Allocates the plan's device scratch (the tiles' look-back state, the
  /// codes). Throws mjpeg::Error for CUDA failures, UsageError for bad arguments (a frame
  /// beyond tokens::kMaxCodedBlocks, codes missing).
  TokenizePlan(const FrameGeometry& geometry, const tokens::AcCodes& codes,
               std::size_t capacity_bytes);
  /// Symbol slots for `restart_interval`, with the --optimize histogram when asked for.
  TokenizePlan(const FrameGeometry& geometry, int restart_interval, bool histogram,
               std::size_t capacity_bytes);
  ~TokenizePlan();
  TokenizePlan(TokenizePlan&&) noexcept;
  TokenizePlan& operator=(TokenizePlan&&) noexcept;
  TokenizePlan(const TokenizePlan&) = delete;
  TokenizePlan& operator=(const TokenizePlan&) = delete;

  tokens::Format format() const;
  std::size_t header_bytes() const;
  /// Bytes of body that fit after the header.
  std::size_t capacity_bytes() const;
  /// header_bytes() + capacity_bytes(): the size d_out must have.
  std::size_t output_bytes() const;

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

/// Enqueues the tokenization of one frame on `stream` (a cudaStream_t; nullptr = the legacy
/// default stream). The plan's scratch is reused by every launch, so launches with one plan must
/// be ordered (one stream). d_out must be 16-byte aligned and plan.output_bytes() long.
void launch_tokenize(const TokenizePlan& plan, const std::int16_t* d_coeffs, void* d_out,
                     StreamHandle stream);

}  // namespace mjpeg::gpu
