// Quantization tables, exactly as cjpeg builds them: base tables (ITU-T T.81 Annex K by default,
// a tuned preset, or a cjpeg -qtables file) scaled by the quality as jpeg_add_quant_table does
// with jpeg_quality_scaling(q) (no forced baseline: values clamp to 1..32767, so coarse tables
// give 16-bit DQT precision and a non-baseline SOF1 frame), and each component's table chosen
// by slot as with cjpeg -qslots (default 0 for luma, 1 for Cb and Cr; the last slot repeats).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/geometry.hpp"
#include "core/jpeg_math.hpp"
#include "core/rdo.hpp"
#include "mjpeg/options.hpp"

namespace mjpeg {

struct QuantTables {
  int components = 0;                           ///< 1 (gray) or 3
  int slot[3] = {0, 1, 1};                      ///< each component's table slot (0..3)
  bool defined[kMaxQuantTables] = {};           ///< slots that hold a table
  std::uint16_t natural[kMaxQuantTables][64] = {};        ///< 1..32767, natural order
  math::QuantDivisor divisor[kMaxQuantTables][64] = {};   ///< for math::quantize, natural order
  /// How levels are chosen: off (math::quantize), deadzone (the divisors' AC rounding offset
  /// is 3/8 of a step; still math::quantize), trellis (math::trellis_quantize with `trellis`).
  Rdo rdo = Rdo::off;
  math::TrellisModel trellis = {};  ///< set when rdo is trellis
  /// True when table `slot` has a value above 255 (16-bit DQT precision).
  bool needs_16bit(int slot) const;
  /// True when a component's table needs 16 bits (the frame is then SOF1, as cjpeg writes it).
  bool any_16bit() const;
  /// The divisors of component `c`'s table.
  const math::QuantDivisor* component_divisor(int c) const { return divisor[slot[c]]; }
};

/// The largest quantization value (after scaling) a component's table may hold. libjpeg-turbo's
/// FDCT takes the divisor q * 8 as a 16-bit number, so from 8192 on it quantizes with
/// (8 q) mod 65536 (or divides by zero) while the DQT says q: beyond this no exact reference
/// exists, and for 8-bit samples any q above 2047 already quantizes every coefficient to 0.
inline constexpr int kMaxQuantValue = 8191;

/// libjpeg's quality scaling: q < 50 -> 5000/q, else 200 - 2q (percent).
int quality_scale(int quality);

/// jpeg_add_quant_table for one value: (base * scale + 50) / 100, clamped to 1..32767.
std::uint16_t scale_quant_value(std::uint32_t base, int scale);

/// Annex K tables for `quality` (1..100); `count` is 1 for grayscale and 2 otherwise.
QuantTables make_quant_tables(int quality, int count);

/// The trellis search's model (core/rdo.hpp) for `tables` and the frame's sampling: the
/// standard AC tables' code lengths, and lambda per component: for luma k x step^kTrellisPower
/// (scaled to k squared steps per bit at a step of 400, about -q 50; the step is the luma
/// table's root mean square), for chroma less by its share of the RGB error (docs/rdo.md).
/// With `activity` (`--tune ssim`) each block's lambda is also scaled by (E + A) / 2A
/// (math::block_lambda), A = kTrellisActivity: a block whose pixels deviate by about 16 from
/// their mean keeps the component's lambda, flatter blocks get less (down to half), busier ones
/// more (docs/rdo.md, the SSIM preset).
inline constexpr double kTrellisK = 0.035;
inline constexpr double kTrellisPower = 1.6;
inline constexpr std::int64_t kTrellisActivity = 1000000;
math::TrellisModel make_trellis_model(const QuantTables& tables, Subsampling sampling,
                                      bool activity = false, double k = kTrellisK);

/// Component c's blocks of `g` in scan order, for math::trellis_dc_row.
math::DcChain dc_chain(const FrameGeometry& g, int c);

/// The tables `options` ask for (the preset of options.tune at options.quality; options.qtables
/// replace its first slots and are scaled by options.quality like cjpeg -quality Q -qtables;
/// options.qslots replace its slots) for a frame of `components` (1 or 3) components. Throws
/// UsageError when a component's slot holds no table (e.g. -qslots 0,1,2 with a file of two
/// tables) or a value above kMaxQuantValue.
QuantTables make_quant_tables(const EncodeOptions& options, int components);

/// A preset's base tables (slots 0..), their scale (percent, as jpeg_add_quant_table takes it)
/// and the component slots at `quality`. Tune::none: the two Annex K tables scaled by
/// quality_scale(quality), slots 0,1,1 (cjpeg -quality Q). Tune::psnr / ssim: one luma and one
/// chroma table per quality (src/core/quant_presets.inc, docs/tuning/*.txt) used as they are
/// (scale 100, cjpeg -qtables without -quality), slots 0,1,1; Tune::psnr under `rdo` deadzone
/// or trellis takes the tables fitted for a dead zone (docs/tuning/psnr_rdo.txt), Tune::ssim
/// under the trellis the PSNR preset's. At 4:4:4 and 4:2:2 the PSNR presets are those fitted
/// there (docs/tuning/psnr_444.txt, psnr_rdo_444.txt, psnr_422.txt, psnr_rdo_422.txt).
struct PresetTables {
  std::vector<QuantTableValues> tables;
  int scale = 100;
  std::vector<int> slots;
};
PresetTables preset_tables(Tune tune, int quality, Rdo rdo = Rdo::off,
                           Subsampling sampling = Subsampling::s420);

// parse_qtables, parse_qslots and format_qtables (cjpeg's -qtables / -qslots syntax) are
// public: include/mjpeg/options.hpp.

}  // namespace mjpeg
