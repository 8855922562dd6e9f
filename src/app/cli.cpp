#include "cli.hpp"

#include <cstdio>
#include <exception>
#include <functional>
#include <new>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "encode_command.hpp"
#include "gantt_command.hpp"
#include "image_input.hpp"
#include "info_command.hpp"
#include "mjpeg/encoder.hpp"
#include "mjpeg/error.hpp"
#include "paths.hpp"

namespace mjpeg::app {
namespace {

/// Prints "mjpeg: error: <message>" as exactly one line on stderr.
void print_error(std::string message) {
  for (char& c : message)
    if (c == '\n' || c == '\r') c = ' ';
  while (!message.empty() && message.back() == ' ') message.pop_back();
  std::fprintf(stderr, "mjpeg: error: %s\n", message.c_str());
}

/// Accepts only plain decimal integers ("90", "-1", "+5"), and strips leading zeros: CLI11
/// converts integers with strtoll base 0, which would read "010" as octal 8 and "0x5A" as 90.
CLI::Validator decimal_integer() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const std::size_t digits_from = (!text.empty() && (text[0] == '-' || text[0] == '+'));
        if (digits_from == text.size() ||
            text.find_first_not_of("0123456789", digits_from) != std::string::npos)
          return "'" + text + "' is not an integer";
        const std::size_t first = text.find_first_not_of('0', digits_from);
        const std::string sign = text[0] == '-' ? "-" : "";
        text = first == std::string::npos ? "0" : sign + text.substr(first);
        return {};
      },
      "", "decimal integer");  // no description: the option's type name says it all
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
  cmd->add_option("-q,--quality", args.options.quality, "JPEG quality 1..100 (never clamped)")
      ->transform(decimal_integer())
      ->check(CLI::Range(1, 100).description(""))
      ->type_name("1..100")
      ->capture_default_str();
  cmd->add_option("-s,--subsampling", subsampling, "Chroma subsampling: 444, 422, 420 or gray")
      ->check(CLI::IsMember({"444", "422", "420", "gray"}).description(""))
      ->type_name("444|422|420|gray")
      ->capture_default_str();
  cmd->add_option("-r,--restart", args.options.restart_interval,
                  fmt::format("Restart interval in MCUs, 0..{} (0 = none)", kMaxRestartInterval))
      ->transform(decimal_integer())
      ->check(CLI::Range(0, kMaxRestartInterval).description(""))
      ->type_name(fmt::format("0..{}", kMaxRestartInterval))
      ->capture_default_str();
  cmd->add_flag("--optimize", args.options.optimize,
                "Optimal Huffman tables (like cjpeg -optimize)");
  cmd->add_flag("-y,--overwrite", args.overwrite, "Replace the output if it exists");
  cmd->add_flag("--quiet", args.quiet, "No notices and no summary line on stderr");

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
  cmd->add_option("--producers", args.producers, "Producer (decode) threads (default 2)")
      ->transform(decimal_integer())
      ->check(CLI::Range(1, 64).description(""))
      ->type_name("N")
      ->group(stream);
  cmd->add_option("--slots", args.slots, "Stream-buffer slots (default: threads + 2, at least 8)")
      ->transform(decimal_integer())
      ->check(CLI::Range(1, 256).description(""))
      ->type_name("K")
      ->group(stream);
  cmd->add_option("--entropy-threads", args.entropy_threads,
                  "Huffman coding threads (default: the cores left over)")
      ->transform(decimal_integer())
      ->check(CLI::Range(1, 256).description(""))
      ->type_name("M")
      ->group(stream);
  cmd->add_option("--device", args.device, "CUDA device index")
      ->transform(decimal_integer())
      ->check(CLI::Range(0, 1023).description(""))
      ->type_name("N")
      ->capture_default_str()
      ->group(stream);
  cmd->add_option("--variant", args.variant,
                  "GPU kernel variant: direct, pipeline, partitioned or primitives")
      ->check(CLI::IsMember({"direct", "pipeline", "partitioned", "primitives"}).description(""))
      ->type_name("VARIANT")
      ->capture_default_str()
      ->group(stream);
  cmd->add_option("--stages", args.stages, "cuda::pipeline stages of the kernel, 1..4")
      ->transform(decimal_integer())
      ->check(CLI::Range(1, 4).description(""))
      ->type_name("1..4")
      ->capture_default_str()
      ->group(stream);
  cmd->add_flag("--pinned", args.pinned, "sok: use pinned host memory (default: pageable)")
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

int run_cli(int argc, char** argv) {
  CLI::App app("mjpeg: CUDA-accelerated Motion-JPEG encoder", "mjpeg");
  app.set_version_flag("--version", std::string("mjpeg ") + version());
  app.require_subcommand(1);

  // Each command: its CLI11 definition and what runs when it was parsed. A command module
  // adds itself with one line here (its add_*_command function lives in its own file).
  std::vector<Command> commands;
  EncodeArgs encode_args;
  std::string subsampling = to_string(encode_args.options.subsampling);
  commands.push_back({add_encode_command(app, encode_args, subsampling), [&] {
                        encode_args.options.subsampling = parse_subsampling(subsampling);
                        return run_encode(encode_args);
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

}  // namespace mjpeg::app
