#include "encode_command.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iterator>

#include <fmt/format.h>

#include "app/input/frame_reader.hpp"
#include "app/input/image_input.hpp"
#include "app/input/input_dump.hpp"
#include "mjpeg/files.hpp"
#include "mjpeg/encoder.hpp"
#include "mjpeg/error.hpp"
#include "app/common/paths.hpp"
#include "app/quality/quality_hook.hpp"
#include "stream_command.hpp"

namespace mjpeg::app {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

/// Usage checks that need no I/O on the input, done before anything is read or created.
void check_request(const EncodeArgs& args) {
  validate(args.options);
  output_kind_for(args.output);  // only JPEG for now
  if (same_file(args.input, args.output))
    throw UsageError(fmt::format("output '{}' is the input file", args.output));
}

/// Sets the density fields of the JFIF APP0 segment that every JPEG of ours starts with
/// (SOI, then APP0 "JFIF\0" 1.01: units at byte 13, X density 14..15, Y density 16..17).
void set_jfif_density(std::vector<std::uint8_t>& jpeg, int unit, int x, int y) {
  static const std::uint8_t head[] = {0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 'J', 'F', 'I', 'F', 0};
  if (jpeg.size() < 18 || !std::equal(std::begin(head), std::end(head), jpeg.begin()))
    throw Error("internal error: the JPEG does not start with a JFIF APP0 segment");
  jpeg[13] = static_cast<std::uint8_t>(unit);
  jpeg[14] = static_cast<std::uint8_t>(x >> 8);
  jpeg[15] = static_cast<std::uint8_t>(x & 0xFF);
  jpeg[16] = static_cast<std::uint8_t>(y >> 8);
  jpeg[17] = static_cast<std::uint8_t>(y & 0xFF);
}

}  // namespace

int run_encode(const EncodeArgs& args) {
  if (is_stream_request(args)) return run_encode_stream(args);
  const auto t_start = Clock::now();
  check_request(args);
  check_output_allowed(args.output, args.overwrite);

  const NoticeSink notice = [&](const std::string& text) {
    if (!args.quiet) std::fprintf(stderr, "mjpeg: note: %s\n", text.c_str());
  };
  std::unique_ptr<WrittenQuality> written_quality;  // --psnr (checked before any work)
  if (args.psnr) written_quality = std::make_unique<WrittenQuality>();
  std::unique_ptr<InputDump> dump;  // --dump-input
  if (!args.dump_input.empty()) dump = std::make_unique<InputDump>(args.dump_input, args.overwrite);
  Image image = read_input_image(args.input, notice, args.input_options.autorotate);
  // A grey picture makes a grayscale JPEG (as cjpeg makes of a PGM) unless -s asks for
  // 3-component frames (for a decoder that takes only YCbCr): then it goes in as R = G = B.
  EncodeOptions options = args.options;
  if (image.format == PixelFormat::gray8) {
    if (args.subsampling_given && options.subsampling != Subsampling::gray)
      image = to_rgb(image.view());
    else
      options.subsampling = Subsampling::gray;
  }
  check_optimize_size(image.width, image.height, options.subsampling,
                      options.optimize && !options.progressive);

  if (dump) dump->add(0, image.view());
  const auto t_encode = Clock::now();
  // One picture: every core (or --entropy-threads of them) when it is large enough to pay.
  std::vector<std::uint8_t> jpeg = encode_jpeg(image.view(), options, args.entropy_threads);
  const double encode_ms = ms_since(t_encode);
  // A BMP's resolution goes into the JFIF header as cjpeg puts it there (dots per cm).
  int x_density = 0, y_density = 0;
  if (bmp_density(args.input, x_density, y_density))
    set_jfif_density(jpeg, /*dots per cm*/ 2, x_density, y_density);

  write_file(args.output, jpeg.data(), jpeg.size(), /*replace_existing=*/args.overwrite);

  if (!args.quiet) {
    const double pixels = static_cast<double>(image.width) * image.height;
    std::fprintf(stderr, "%s\n",
                 fmt::format("mjpeg: wrote {}: {} bytes, {}x{} {}, {:.2f} bits/pixel, "
                             "q{} {}, {:.1f} ms (encode {:.1f} ms)",
                             args.output, jpeg.size(), image.width, image.height,
                             image.format == PixelFormat::gray8 ? "gray" : "rgb",
                             8.0 * static_cast<double>(jpeg.size()) / pixels,
                             options.quality, to_string(options.subsampling),
                             ms_since(t_start), encode_ms)
                     .c_str());
  }
  if (written_quality) {
    written_quality->add(0, image.view(), jpeg);
    written_quality->print(stderr, args.output);
  }
  return 0;
}

}  // namespace mjpeg::app
