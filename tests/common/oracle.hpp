// The byte-exactness oracle: libjpeg-turbo, in process (libjpeg API) and as the cjpeg program.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/test_media.hpp"
#include "mjpeg/options.hpp"

namespace mjpeg::test {

/// Compresses `image` with the libjpeg API exactly as cjpeg does for the same settings:
/// jpeg_set_defaults; in_color_space JCS_RGB (JCS_GRAYSCALE for gray8 input);
/// jpeg_set_colorspace(JCS_GRAYSCALE) for RGB input with Subsampling::gray;
/// jpeg_set_quality(quality, force_baseline) ; Y sampling 2x2 / 2x1 / 1x1 and Cb, Cr 1x1;
/// restart_in_rows 0 and restart_interval = options.restart_interval (MCUs);
/// optimize_coding = options.optimize; dct_method JDCT_ISLOW; memory destination.
///
/// force_baseline defaults to false, as in cjpeg without -baseline: qualities below 24 then
/// give 16-bit quantization tables and an SOF1 frame. (TurboJPEG and jpeg_set_quality(q, TRUE)
/// clamp to 255 instead; both agree for quality >= 24.)
/// Throws std::runtime_error with libjpeg's message on failure.
std::vector<std::uint8_t> libjpeg_encode(const ImageView& image, const EncodeOptions& options,
                                         bool force_baseline = false);

/// Full path of `cjpeg` when it is on PATH, else nullopt.
std::optional<std::string> find_cjpeg();

/// The cjpeg command-line arguments for `options` (without the input file), e.g.
/// {"-quality", "90", "-sample", "2x2", "-restart", "7B", "-optimize"}. For gray input
/// (`gray_input`) no -sample/-grayscale is passed; RGB with Subsampling::gray gives -grayscale.
std::vector<std::string> cjpeg_arguments(const EncodeOptions& options, bool gray_input);

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
