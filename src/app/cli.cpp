#include "cli.hpp"

#include <cstdio>
#include <exception>
#include <functional>
#include <new>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench_command.hpp"
#include "cli_options.hpp"
#include "compare_command.hpp"
#include "encode_command.hpp"
#include "gantt_command.hpp"
#include "image_input.hpp"
#include "info_command.hpp"
#include "mjpeg/encoder.hpp"
#include "mjpeg/error.hpp"
#include "paths.hpp"
#include "quality_command.hpp"

namespace mjpeg::app {
namespace {

/// Prints "mjpeg: error: <message>" as exactly one line on stderr.
void print_error(std::string message) {
  for (char& c : message)
    if (c == '\n' || c == '\r') c = ' ';
  while (!message.empty() && message.back() == ' ') message.pop_back();
  std::fprintf(stderr, "mjpeg: error: %s\n", message.c_str());
}

/// Adds `mjpeg encode` to `app`; the parsed values land in `args` and `subsampling`.
CLI::App* add_encode_command(CLI::App& app, EncodeArgs& args, std::string& subsampling) {
  CLI::App* cmd = app.add_subcommand(
      "encode",
      "Encode an image to a JPEG file, or a video (Y4M, image sequence, or any container "
      "OpenCV/FFmpeg reads) to an M-JPEG AVI, a raw .mjpeg stream or numbered JPEGs; every "
      "frame byte-identical to libjpeg-turbo");
  cmd->add_option("input", args.input,
                  "Input: an image (" + supported_input_formats() +
                      "), a Y4M file or - (stdin), a pattern like frames/%05d.png, or a video")
      ->type_name("INPUT")
      ->required();
  cmd->add_option("-o,--output", args.output,
                  std::string("Output file; supported: ") + supported_output_extensions())
      ->type_name("OUTPUT")
      ->required();
  add_jpeg_options(cmd, args.options, subsampling);
  cmd->add_flag("-y,--overwrite", args.overwrite, "Replace the output if it exists");
  cmd->add_flag("--quiet", args.quiet, "No notices and no summary line on stderr");
  cmd->add_option("--dump-input", args.dump_input,
                  "Also write the pixels each frame was encoded from to DIR/000001.ppm, ... "
                  "(PGM for gray input; planar input as the RGB made of it): cjpeg on such a "
                  "file writes the frame's bytes")
      ->type_name("DIR");
  cmd->add_flag("--psnr", args.psnr,
                "After writing, print the PSNR (RGB, Y, Cb, Cr) and SSIM (Y) of the written "
                "frames against the input on stderr (see `mjpeg quality`)");

  const char* stream = "Video (stream) options";
  cmd->add_option("--mode", args.mode,
                  "cpu, sok (synchronous GPU offload) or aok (asynchronous); default: aok when "
                  "a GPU is usable, else cpu")
      ->check(CLI::IsMember({"cpu", "sok", "aok"}).description(""))
      ->type_name("cpu|sok|aok")
      ->group(stream);
  cmd->add_option("--frames", args.frames, "Encode at most N frames")
      ->transform(decimal_integer())
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40).description(""))
      ->type_name("N")
      ->group(stream);
  cmd->add_option("--start", args.start,
                  "Skip the first N frames (with --frames: one frame range of a longer input; "
                  "see README, Segments)")
      ->transform(decimal_integer())
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40).description(""))
      ->type_name("N")
      ->group(stream);
  add_pipeline_options(cmd, stream, args.producers, args.slots, args.entropy_threads,
                       args.device, args.variant, args.stages);
  add_devices_option(cmd, stream, args.devices);
  cmd->add_flag("--pinned", args.pinned, "sok: use pinned host memory (default: pageable)")
      ->group(stream);
  add_gpu_output_option(cmd, stream, args.gpu_output);
  cmd->add_option("--rgb-decode", args.rgb_decode,
                  "Videos decoded by FFmpeg's libraries: planar (default: the decoder's planes "
                  "go to the encoder, which converts them as libswscale does) or swscale "
                  "(libswscale converts each frame to RGB on the CPU)")
      ->check(CLI::IsMember({"planar", "swscale"}).description(""))
      ->type_name("planar|swscale")
      ->group(stream);
  cmd->add_flag("--stats", args.stats,
                "After the summary, each stage's busy time and the cores it kept busy")
      ->group(stream);
  return cmd;
}

/// A subcommand and its action (returns the exit code; exceptions go to run_cli's mapping).
struct Command {
  CLI::App* app;
  std::function<int()> run;
};

/// Names a missing or unknown command word clearly (CLI11 would say "A subcommand is
/// required" for both).
void check_command_word(const CLI::App& app, int argc, char** argv) {
  if (argc >= 2 && argv[1][0] == '-') return;  // options such as --help, --version
  std::string known;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (argc >= 2 && sub->check_name(argv[1])) return;
    known += (known.empty() ? "" : ", ") + sub->get_name();
  }
  if (argc < 2)
    throw UsageError(fmt::format("no command given (commands: {}; see mjpeg --help)", known));
  throw UsageError(fmt::format("unknown command '{}' (commands: {}; see mjpeg --help)",
                               argv[1], known));
}

}  // namespace

namespace {

/// run_cli's body: parses, then (when `run_command`) runs the chosen command.
int cli_main(int argc, char** argv, bool run_command) {
  CLI::App app("mjpeg: CUDA-accelerated Motion-JPEG encoder", "mjpeg");
  app.set_version_flag("--version", std::string("mjpeg ") + version());
  app.require_subcommand(1);

  // Each command: its CLI11 definition and what runs when it was parsed. A command module
  // adds itself with one line here (its add_*_command function lives in its own file).
  std::vector<Command> commands;
  EncodeArgs encode_args;
  std::string subsampling = to_string(encode_args.options.subsampling);
  CLI::App* encode = add_encode_command(app, encode_args, subsampling);
  commands.push_back({encode, [&] {
                        encode_args.options.subsampling = parse_subsampling(subsampling);
                        encode_args.device_given = encode->count("--device") > 0;
                        return run_encode(encode_args);
                      }});
  CompareArgs compare_args;
  commands.push_back({add_compare_command(app, compare_args), [&] {
                        return run_compare(compare_args);
                      }});
  BenchArgs bench_args;
  commands.push_back({add_bench_command(app, bench_args), [&] { return run_bench(bench_args); }});
  QualityArgs quality_args;
  commands.push_back({add_quality_command(app, quality_args), [&] {
                        return run_quality(quality_args);
                      }});
  GanttArgs gantt_args;
  commands.push_back({add_gantt_command(app, gantt_args), [&] { return run_gantt(gantt_args); }});
  commands.push_back({app.add_subcommand("info", "Print the version and build options"), [] {
                        run_info(stdout);
                        return static_cast<int>(kExitOk);
                      }});

  try {
    check_command_word(app, argc, argv);
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
      return app.exit(e);  // --help, --version: printed on stdout
    print_error(e.what());
    return kExitUsage;
  } catch (const UsageError& e) {
    print_error(e.what());
    return kExitUsage;
  }

  if (!run_command) return kExitOk;
  try {
    for (const Command& command : commands)
      if (command.app->parsed()) return command.run();
    return kExitOk;  // unreachable: require_subcommand(1)
  } catch (const UsageError& e) {
    print_error(e.what());
    return kExitUsage;
  } catch (const Error& e) {
    print_error(e.what());
    return kExitFailure;
  } catch (const std::bad_alloc&) {
    print_error("out of memory");
    return kExitFailure;
  } catch (const std::exception& e) {
    print_error(e.what());
    return kExitFailure;
  }
}

}  // namespace

int run_cli(int argc, char** argv) { return cli_main(argc, argv, true); }

int parse_cli(int argc, char** argv) { return cli_main(argc, argv, false); }

}  // namespace mjpeg::app
