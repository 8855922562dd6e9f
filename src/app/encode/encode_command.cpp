#include "encode_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iterator>

#include <fmt/format.h>

#include "app/input/frame_reader.hpp"
#include "app/input/image_input.hpp"
#include "app/input/input_dump.hpp"
#include "app/input/raw_source.hpp"
#include "mjpeg/files.hpp"
#include "mjpeg/encoder.hpp"
#include "mjpeg/error.hpp"
#include "mjpeg/video.hpp"
#include "app/common/paths.hpp"
#include "app/quality/quality_hook.hpp"
#include "libav_sink.hpp"
#include "stream_command.hpp"

namespace mjpeg::app {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

int run_encode(const EncodeArgs& args) {
  const auto t_start = Clock::now();
  // Usage checks that need no input, before anything is read or created.
  validate(args.options);
  if (args.frames == 0) throw UsageError("--frames 0 asks for nothing to encode");
  const RawFormat& raw = args.input_options.raw;
  if (!raw.given() && (raw.width > 0 || raw.fps_given))
    throw UsageError("--size and --fps describe raw frames: add --pix-fmt (one of " +
                     std::string(raw_pixel_formats()) + ")");
  if (raw.given() && raw.width <= 0)
    throw UsageError(fmt::format("--pix-fmt {}: raw frames need their size, --size WxH",
                                 raw.pix_fmt));
  const bool one_picture = is_single_jpeg(args.output);
  if (!one_picture) {
    check_output_name(args.output);  // UsageError if unknown
    check_stream_options(args);
  }
  if (args.output == "-" && isatty(STDOUT_FILENO))
    throw UsageError("-o - writes an M-JPEG stream to standard output, which is a terminal: "
                     "redirect it to a file or a pipe");
  if (args.input != "-" && same_file(args.input, args.output))
    throw UsageError(fmt::format("output '{}' is the input file", args.output));
  if (is_muxer_output(args.output))
    check_output_allowed(args.output, args.overwrite);
  else
    FileSink::check_target(args.output, args.overwrite);  // (a pattern: its first file)

  // The input, recognised by its content (a pipe's first bytes are awaited here).
  Input input = open_input(args.input, raw.given());
  if (!one_picture || input.kind != InputKind::image)
    return run_encode_stream(args, std::move(input), t_start);
  if (args.start > 0)
    throw UsageError("--start applies to a stream input (a still image has one frame)");

  const NoticeSink notice = [&](const std::string& text) {
    if (!args.quiet) std::fprintf(stderr, "mjpeg: note: %s\n", text.c_str());
  };
  std::unique_ptr<WrittenQuality> written_quality;  // --psnr (checked before any work)
  if (args.psnr) written_quality = std::make_unique<WrittenQuality>();
  std::unique_ptr<InputDump> dump;  // --dump-input
  if (!args.dump_input.empty()) dump = std::make_unique<InputDump>(args.dump_input, args.overwrite);
  Density density;
  Image image = read_input_image(*input.file, notice, args.input_options.autorotate, &density);
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
  // A BMP's resolution goes into the JFIF header as cjpeg puts it there (dots per cm).
  if (density.given()) options.density = {2, density.x_dots_per_cm, density.y_dots_per_cm};
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
