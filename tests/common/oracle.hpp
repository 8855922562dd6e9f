// The byte-exactness oracle: libjpeg-turbo, in process (libjpeg API) and as the cjpeg program.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/test_media.hpp"
#include "core/geometry.hpp"
#include "mjpeg/options.hpp"

namespace mjpeg::test {

/// Compresses `image` with the libjpeg API exactly as cjpeg does for the same settings:
/// jpeg_set_defaults; in_color_space JCS_RGB (JCS_GRAYSCALE for gray8 input);
/// jpeg_set_colorspace(JCS_GRAYSCALE) for RGB input with Subsampling::gray;
/// jpeg_set_quality(quality, force_baseline) ; Y sampling 2x2 / 2x1 / 1x1 and Cb, Cr 1x1;
/// restart_in_rows 0 and restart_interval = options.restart_interval (MCUs);
/// optimize_coding = options.optimize; dct_method JDCT_ISLOW; density_unit, X_density and
/// Y_density = options.density; memory destination.
/// options.qtables / qslots as cjpeg -qtables / -qslots: jpeg_add_quant_table(slot, table,
/// jpeg_quality_scaling(quality)) and comp_info[c].quant_tbl_no (the last slot repeated).
/// options.tune must be Tune::none (turn a preset into tables with preset_as_qtables first).
///
/// force_baseline defaults to false, as in cjpeg without -baseline: qualities below 24 then
/// give 16-bit quantization tables and an SOF1 frame. (TurboJPEG and jpeg_set_quality(q, TRUE)
/// clamp to 255 instead; both agree for quality >= 24.)
/// Throws std::runtime_error with libjpeg's message on failure.
std::vector<std::uint8_t> libjpeg_encode(const ImageView& image, const EncodeOptions& options,
                                         bool force_baseline = false);

/// The entropy-coded segment of the scan (the bytes after the SOS header up to EOI, restart
/// markers included) that libjpeg writes for these quantized coefficients: jpeg_write_coefficients
/// (as jpegtran) on a frame of g's size, components and sampling, with the Annex K Huffman tables
/// or, `optimize`, libjpeg's own optimal ones, and `restart_interval`. `coeffs` in the layout of
/// core/geometry.hpp, zigzag order; libjpeg makes the dummy (MCU padding) blocks itself.
/// Throws std::runtime_error with libjpeg's message (e.g. a coefficient out of its range).
std::vector<std::uint8_t> libjpeg_scan(const FrameGeometry& g, const std::int16_t* coeffs,
                                       int restart_interval, bool optimize);

/// libjpeg's own jpeg_gen_optimal_table (jchuff.c; exported by the library, declared only in
/// its private jchuff.h) on the symbol counts `freq` (256 symbols; libjpeg adds the reserved
/// 257th itself): the number of codes of each length 1..16 (bits[0] unused) and the symbols in
/// code order. The reference of --optimize's tables.
void libjpeg_optimal_table(const std::uint32_t freq[256], std::uint8_t bits[17],
                           std::uint8_t values[256]);

/// libjpeg's own jpeg_fdct_islow (jfdctint.c, the "islow" integer DCT; exported, declared only
/// in its private jdct.h) on one 8x8 block of level-shifted samples (-128..127), row-major: the
/// coefficients scaled up by 8, as libjpeg leaves them for its quantizer. Its element type
/// (DCTELEM: short in a SIMD build, else int) is found out once, at run time.
void libjpeg_fdct_islow(const int in[64], int out[64]);

/// Full path of `cjpeg` when it is on PATH, else nullopt.
std::optional<std::string> find_cjpeg();

/// The cjpeg command-line arguments for `options` (without the input file), e.g.
/// {"-quality", "90", "-sample", "2x2", "-restart", "7B", "-optimize"}. For gray input
/// (`gray_input`) no -sample/-grayscale is passed; RGB with Subsampling::gray gives -grayscale.
/// options.qtables: "-qtables `qtables_file`" (the caller writes the file, write_qtables_file);
/// options.qslots: "-qslots N,N,...".
/// options.progressive: "-scans `scans_file`" (progressive_scan_script(); cjpeg_encode writes it).
std::vector<std::string> cjpeg_arguments(const EncodeOptions& options, bool gray_input,
                                         const std::string& qtables_file = "",
                                         const std::string& scans_file = "");

/// The cjpeg -scans script of `--progressive` for a colour (or a one-component) frame, written
/// out here independently of the encoder's copy: a DC scan of every component, luma AC bands
/// 1-2, 3-9, 10-63, chroma AC 1-63 per component, no successive approximation. libjpeg_encode
/// uses the same scans (jpeg_scan_info) when options.progressive is set.
std::string progressive_scan_script(bool gray);

/// Writes `tables` as a cjpeg -qtables file (one number a line, a comment before each table).
void write_qtables_file(const std::vector<QuantTableValues>& tables, const std::string& path);

/// The tables of preset `tune` at `quality` as cjpeg is given them: read from the committed
/// docs/tuning/<tune>.txt, or the file that `options.rdo` takes with it (psnr_rdo.txt for psnr,
/// psnr.txt for ssim with the trellis; its "# quality Q" section; independent of the compiled-in
/// copy),
/// returned as options with tune none, quality 50 (scale 100: values used as they are, like
/// cjpeg without -quality), those qtables and slots 0,1,1. Other fields copied from `options`.
EncodeOptions preset_as_qtables(const EncodeOptions& options);

/// Writes `img` as PPM/PGM into a fresh temporary directory, runs `cjpeg` (path from
/// find_cjpeg()) with cjpeg_arguments() and -outfile, and returns the JPEG bytes. Throws
/// std::runtime_error naming the command when cjpeg fails. The directory is removed.
std::vector<std::uint8_t> cjpeg_encode(const std::string& cjpeg, const Image& img,
                                       const EncodeOptions& options);

/// Human-readable comparison: empty when equal; otherwise the sizes and the first differing
/// offset with the bytes around it and the JPEG segment (marker) that offset falls in.
std::string describe_difference(const std::vector<std::uint8_t>& ours,
                                const std::vector<std::uint8_t>& reference);

}  // namespace mjpeg::test
