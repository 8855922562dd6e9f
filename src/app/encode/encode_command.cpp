#include "encode_command.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iterator>

#include <fmt/format.h>

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
  const Image image = read_input_image(args.input, notice, args.input_options.autorotate);
  check_optimize_size(image.width, image.height,
                      image.format == PixelFormat::gray8 ? Subsampling::gray
                                                         : args.options.subsampling,
                      args.options.optimize && !args.options.progressive);

  if (dump) dump->add(0, image.view());
  // A BMP's resolution goes into the JFIF header as cjpeg puts it there (dots per cm).
  EncodeOptions options = args.options;
  int x_density = 0, y_density = 0;
  if (bmp_density(args.input, x_density, y_density)) options.density = {2, x_density, y_density};
  const auto t_encode = Clock::now();
  // One picture: every core (or --entropy-threads of them) when it is large enough to pay.
  std::vector<std::uint8_t> jpeg = encode_jpeg(image.view(), options, args.entropy_threads);
  const double encode_ms = ms_since(t_encode);

  write_file(args.output, jpeg.data(), jpeg.size(), /*replace_existing=*/args.overwrite);

  if (!args.quiet) {
    const double pixels = static_cast<double>(image.width) * image.height;
    std::fprintf(stderr, "%s\n",
                 fmt::format("mjpeg: wrote {}: {} bytes, {}x{} {}, {:.2f} bits/pixel, "
                             "q{} {}, {:.1f} ms (encode {:.1f} ms)",
                             args.output, jpeg.size(), image.width, image.height,
                             image.format == PixelFormat::gray8 ? "gray" : "rgb",
                             8.0 * static_cast<double>(jpeg.size()) / pixels,
                             args.options.quality, to_string(args.options.subsampling),
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
