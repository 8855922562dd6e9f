#include "cli.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "mjpeg/vocabulary.hpp"
#include "app/compare/bench_command.hpp"
#include "app/common/cli_options.hpp"
#include "app/common/part_range.hpp"
#include "app/compare/compare_command.hpp"
#include "app/encode/encode_command.hpp"
#include "app/trace/gantt_command.hpp"
#include "app/join/join_command.hpp"
#include "app/input/image_input.hpp"
#include "app/input/raw_source.hpp"
#include "info_command.hpp"
#include "mjpeg/encoder.hpp"
#include "mjpeg/error.hpp"
#include "app/common/paths.hpp"
#include "app/quality/quality_command.hpp"

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
      "Encode an image to a JPEG file, or a video (Y4M, raw frames, an image sequence, or any "
      "container OpenCV/FFmpeg reads) to an M-JPEG AVI, a raw .mjpeg stream or numbered JPEGs; "
      "every frame byte-identical to libjpeg-turbo");
  cmd->add_option("input", args.input,
                  "Input: a file, a FIFO or - (standard input), recognised by its content: an "
                  "image (" + supported_input_formats() +
                      "), Y4M, a video, or raw frames (--pix-fmt); or a pattern like "
                      "frames/%05d.png. A name that begins with '-' goes after -- (or as ./NAME)")
      ->type_name("INPUT")
      ->required();
  cmd->add_option("-o,--output", args.output,
                  std::string("Output file; supported: ") + supported_output_extensions())
      ->type_name("OUTPUT")
      ->required();
  add_jpeg_options(cmd, args.options, subsampling);
  cmd->get_option("--subsampling")
      ->description("Chroma subsampling: 444, 422, 420 or gray; a grey source (PGM, grey PNG, "
                    "mono Y4M, grey video) makes gray JPEGs unless -s is given");
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

  const char* input = "Input options";
  InputOptions& in = args.input_options;
  cmd->add_flag("--keep-going", in.keep_going,
                "A truncated or damaged input (a video, a Y4M stream cut short or with a damaged "
                "frame header, raw frames with a partial last one): encode the complete frames "
                "and say what was lost (default: an error, nothing written); an image sequence "
                "skips its gaps")
      ->group(input);
  cmd->add_flag("--no-autorotate", [&in](std::int64_t) { in.autorotate = false; },
                "Keep frames as stored: do not turn them as a video's display matrix or a "
                "picture's EXIF orientation says")
      ->group(input);
  cmd->add_option("--stream", in.stream, "Encode the N-th video stream of the input (0-based)")
      ->transform(decimal_integer())
      ->check(CLI::Range(0, 1023).description(""))
      ->type_name("N")
      ->group(input);
  cmd->add_option("--start-number", in.start_number,
                  "Image sequence: the number of its first file (default: the lowest present)")
      ->transform(decimal_integer())
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40).description(""))
      ->type_name("N")
      ->group(input);
  cmd->add_option("--colorspace", in.colorspace,
                  "The source's YCbCr matrix (Y4M carries none; a video's tag is overridden)")
      ->check(CLI::IsMember(vocab::names_of<YuvMatrix>()).description(""))
      ->type_name(vocab::alternatives_of<YuvMatrix>())
      ->group(input);
  cmd->add_option("--range", in.range,
                  "The source's YCbCr range: " + vocab::explained_choices_of<YuvRange>())
      ->check(CLI::IsMember(vocab::names_of<YuvRange>()).description(""))
      ->type_name(vocab::alternatives_of<YuvRange>())
      ->group(input);
  const char* raw = "Raw frames (headerless, e.g. ffmpeg -f rawvideo -pix_fmt F -)";
  RawFormat& r = in.raw;
  cmd->add_option("--pix-fmt", r.pix_fmt,
                  std::string("The input holds raw frames of this pixel format (ffmpeg's "
                              "names): ") + raw_pixel_formats())
      ->check(CLI::IsMember({"yuv420p", "yuv422p", "yuv444p", "nv12", "gray", "rgb24", "bgr24"})
                  .description(""))
      ->type_name("F")
      ->group(raw);
  cmd->add_option_function<std::string>(
         "--size",
         [&r](const std::string& text) {
           const FrameSize z = parse_frame_size(text, "--size");
           r.width = z.width;
           r.height = z.height;
         },
         "Raw frames: their size")
      ->type_name("WxH")
      ->group(raw);
  cmd->add_option_function<std::string>(
         "--fps",
         [&r](const std::string& text) {
           parse_frame_rate(text, r.fps_num, r.fps_den);
           r.fps_given = true;
         },
         "Raw frames: their rate, as N, N/D (30000/1001) or a decimal (29.97); default 25")
      ->type_name("RATE")
      ->group(raw);
  cmd->add_option("--rgb-decode", args.rgb_decode,
                  "Videos decoded by FFmpeg's libraries: planar (default: the decoder's planes "
                  "go to the encoder, which converts them as libswscale does) or swscale "
                  "(libswscale converts each frame to RGB on the CPU)")
      ->check(CLI::IsMember({"planar", "swscale"}).description(""))
      ->type_name("planar|swscale")
      ->group(input);

  cmd->add_option("--decoder", in.decoder,
                  "Compressed video (H.264, HEVC, VP9): auto (default: the GPU's NVDEC "
                  "decoders into device memory when the encode runs on a GPU and they can, else "
                  "FFmpeg's libraries on the CPU), gpu or cpu; every frame is the same")
      ->check(CLI::IsMember({"auto", "gpu", "cpu"}).description(""))
      ->type_name("auto|gpu|cpu")
      ->group(input);
  cmd->add_option("--decoders", in.decoders,
                  "GPU decoding: NVDEC decoders working at once on parts of one file (default 7)")
      ->transform(decimal_integer())
      ->check(CLI::Range(1, 64).description(""))
      ->type_name("N")
      ->group(input);

  const char* stream = "Video (stream) options";
  cmd->add_option("--mode", args.mode,
                  "Where the transform runs: " + vocab::explained_choices_of<Offload>() +
                      "; default: aok when a GPU is usable, else cpu")
      ->check(CLI::IsMember(vocab::names_of<Offload>()).description(""))
      ->type_name(vocab::alternatives_of<Offload>())
      ->group(stream);
  cmd->add_option("--frames", args.frames, "Encode at most N frames")
      ->transform(decimal_integer())
      ->check(CLI::Validator(
          [](const std::string& text) -> std::string {
            // (decimal_integer has made it a plain integer)
            if (text == "0") return "0 asks for nothing to encode (1 or more frames)";
            if (text[0] == '-' || text.size() > 13 || std::stoll(text) > (std::int64_t{1} << 40))
              return fmt::format("{} is not a number of frames (1 to {})", text,
                                 std::int64_t{1} << 40);
            return {};
          },
          "", "frame count"))
      ->type_name("N")
      ->group(stream);
  cmd->add_option("--start", args.start,
                  "Skip the first N frames (with --frames: one frame range of a longer input; "
                  "see README, Segments)")
      ->transform(decimal_integer())
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40).description(""))
      ->type_name("N")
      ->group(stream);
  cmd->add_option("--part", args.part,
                  "Encode only part I of K equal frame ranges of the input (of the frames "
                  "--start / --frames select), counted from the input itself, recording what "
                  "the part is inside its file; `mjpeg join` joins the K parts (README: Several "
                  "GPUs, and past one host)")
      ->type_name("I/K")
      ->group(stream);
  cmd->add_option("--json", args.json,
                  "After writing, a report of the encode as JSON: input, output, frames, frames "
                  "decoded, seconds, and with --part the part's record")
      ->type_name("FILE")
      ->group(stream);
  add_pipeline_options(cmd, stream, args.producers, args.slots, args.entropy_threads,
                       args.device, args.variant, args.stages);
  add_devices_option(cmd, stream, args.devices);
  cmd->add_flag("--pinned", args.pinned, "With --mode sok: page-locked host memory, the same as --mode sok-pinned")
      ->group(stream);
  add_gpu_output_option(cmd, stream, args.gpu_output);
  cmd->add_flag("--progress", args.progress,
                "A progress line every quarter second also when stderr is not a terminal "
                "(one line each; on a terminal it is shown anyway, updated in place)")
      ->group(stream);
  cmd->add_flag("--stats", args.stats,
                "After the summary, each stage's busy time and the cores it kept busy")
      ->group(stream);
  cmd->add_flag("--decode-only", args.decode_only,
                "Read and decode every frame of the input, encode nothing and write nothing "
                "(-o is still checked): the decoder's own rate, for comparisons")
      ->group(stream);
  cmd->add_flag("--no-audio", args.no_audio,
                "Leave the input's audio out (by default an .avi, .mkv or .mov output carries "
                "it, copied as it is, like ffmpeg -c:a copy)")
      ->group(stream);
  return cmd;
}

/// CLI11's help, with a positional that takes a fixed number of values shown by its type name
/// ("[SOURCE ENCODED]") instead of "[files(0x)]".
class Formatter final : public CLI::Formatter {
 public:
  std::string make_option_usage(const CLI::Option* opt) const override {
    const int max = opt->get_expected_max();
    if (max > 1 && max < CLI::detail::expected_max_vector_size && !opt->get_type_name().empty()) {
      const std::string usage = opt->get_type_name();
      return opt->get_required() ? usage : "[" + usage + "]";
    }
    return CLI::Formatter::make_option_usage(opt);
  }
};

/// "unknown option W (see HELP)"; for a word that could be a file name (-x.ppm, not --qualty)
/// also how to give such a name.
std::string unknown_option_message(const std::string& word, const std::string& help) {
  const bool file_like = word.rfind("--", 0) != 0 && word.size() > 2;
  return fmt::format("unknown option {} (see {}){}", word, help,
                     file_like ? fmt::format("; a file whose name begins with '-' is written "
                                             "./{} or after --",
                                             word)
                               : "");
}

/// The first argument of `command` (argv[2] on, before a stand-alone "--") that looks like an
/// option but is none of its options, or "".
std::string unknown_option_word(const CLI::App* command, int argc, char** argv) {
  if (command == nullptr) return "";
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") break;
    if (a.size() < 2 || a[0] != '-') continue;
    const std::size_t eq = a.find('=');
    const CLI::Option* option = command->get_option_no_throw(a.substr(0, eq));
    if (option == nullptr) return a;
    if (eq == std::string::npos && option->get_items_expected_min() > 0) ++i;  // its value
  }
  return "";
}

/// CLI11's "The following argument(s) were not expected: 90 --qualty" as it is meant: an
/// unknown option (the first argument that looks like one), or an unexpected argument.
std::string extras_message(const std::string& what, const std::string& command) {
  const auto colon = what.find(": ");
  std::vector<std::string> words;
  if (colon != std::string::npos) {
    std::string rest = what.substr(colon + 2);
    std::size_t at = 0;
    while (at < rest.size()) {
      const std::size_t end = rest.find(' ', at);
      words.push_back(rest.substr(at, end == std::string::npos ? std::string::npos : end - at));
      if (end == std::string::npos) break;
      at = end + 1;
    }
  }
  const std::string help = command.empty() ? "mjpeg --help" : "mjpeg " + command + " --help";
  for (const std::string& w : words)
    if (w.size() > 1 && w[0] == '-') return unknown_option_message(w, help);
  if (!words.empty())
    return fmt::format("unexpected argument '{}' (see {})", words.front(), help);
  return what;
}

/// A subcommand and its action (returns the exit code; exceptions go to run_cli's mapping).
struct Command {
  CLI::App* app;
  std::function<int()> run;
};

/// Names a missing or unknown command word clearly (CLI11 would say "A subcommand is
/// required" for both).
void check_command_word(const CLI::App& app, int argc, char** argv) {
  if (argc >= 2 && argv[1][0] == '-') {  // options such as --help, --version
    const std::string a = argv[1];
    if (a == "--help" || a == "-h" || a == "--version" || a == "--help-all") return;
    throw UsageError(fmt::format("unknown option {} (see mjpeg --help)", a));
  }
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

/// The arguments with a stand-alone "--" read as users mean it: the end of the options for the
/// file names that follow, not for the options. After it, an argument that begins with '-' and
/// is neither "-" (standard input) nor an option of the command is a file name, passed on as
/// "./NAME", the same file, which CLI11 cannot take for an option; the options after "--" are
/// still read, and an option's value that begins with '-' is joined to it (--output=-y.jpg). So `mjpeg encode -- -x.ppm -o y.jpg`
/// encodes "-x.ppm" (CLI11 alone would take every argument after "--" as a file name, and then
/// miss -o).
std::vector<std::string> with_file_names_after_double_dash(const CLI::App& app, int argc,
                                                           char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  const auto dashes = std::find(args.begin() + std::min(argc, 2), args.end(), "--");
  if (argc < 2 || dashes == args.end()) return args;
  const CLI::App* command = nullptr;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (sub->check_name(args[1])) command = sub;
  if (command == nullptr) return args;
  std::vector<std::string> out(args.begin(), dashes);
  bool value_next = false;  // the argument before took a value: this is it
  const CLI::Option* value_of = nullptr;
  for (auto it = dashes + 1; it != args.end(); ++it) {
    const std::string& a = *it;
    if (value_next) {
      value_next = false;
      // A value that begins with '-' (-o -y.jpg) would be taken for an option: joined to its
      // option's long name instead (--output=-y.jpg).
      if (a.size() > 1 && a[0] == '-' && !value_of->get_lnames().empty())
        out.back() = "--" + value_of->get_lnames().front() + "=" + a;
      else
        out.push_back(a);
      continue;
    }
    if (a.size() > 1 && a[0] == '-') {
      const std::size_t eq = a.find('=');
      const CLI::Option* option = command->get_option_no_throw(a.substr(0, eq));
      if (option != nullptr) {
        value_next = eq == std::string::npos && option->get_items_expected_min() > 0;
        value_of = option;
        out.push_back(a);
      } else {
        out.push_back("./" + a);
      }
      continue;
    }
    out.push_back(a);
  }
  return out;
}

}  // namespace

namespace {

/// run_cli's body: parses, then (when `run_command`) runs the chosen command.
int cli_main(int argc, char** argv, bool run_command) {
  CLI::App app("mjpeg: CUDA-accelerated Motion-JPEG encoder", "mjpeg");
  app.formatter(std::make_shared<Formatter>());
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
                        encode_args.subsampling_given = encode->count("--subsampling") > 0;
                        if (encode->count("--part") > 0) parse_part(encode_args.part);
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
  JoinArgs join_args;
  commands.push_back({add_join_command(app, join_args), [&] { return run_join(join_args); }});
  commands.push_back({app.add_subcommand("info", "Print the version and build options"), [] {
                        run_info(stdout);
                        return static_cast<int>(kExitOk);
                      }});

  try {
    check_command_word(app, argc, argv);
    std::vector<std::string> args = with_file_names_after_double_dash(app, argc, argv);
    args.erase(args.begin());                  // the program's name
    std::reverse(args.begin(), args.end());    // CLI11 takes the arguments last first
    app.parse(args);
  } catch (const CLI::ExtrasError& e) {
    std::string command;
    for (const Command& c : commands)
      if (c.app->parsed()) command = c.app->get_name();
    if (command.empty() && argc >= 2 && argv[1][0] != '-') command = argv[1];
    print_error(extras_message(e.what(), command));
    return kExitUsage;
  } catch (const CLI::RequiredError& e) {
    // `mjpeg encode in.mp4 out.avi`: the output given without -o is an extra argument, which
    // CLI11 reports only after the missing option. Name it, and how to give it.
    std::string stray;
    if (encode->parsed() && encode_args.output.empty() && !encode->remaining().empty())
      stray = encode->remaining().front();
    if (!stray.empty() && stray[0] != '-') {
      print_error(fmt::format("--output is required, and '{}' is an extra argument: the output "
                              "is given with -o (mjpeg encode {} -o {})",
                              stray, encode_args.input.empty() ? "INPUT" : encode_args.input,
                              stray));
      return kExitUsage;
    }
    // "input is required" after `encode -x.ppm`: CLI11 took the file for an option it does not
    // know, which is what to say.
    const CLI::App* command = nullptr;
    for (const Command& c : commands)
      if (argc >= 2 && c.app->check_name(argv[1])) command = c.app;
    const std::string word = unknown_option_word(command, argc, argv);
    print_error(word.empty() ? std::string(e.what())
                             : unknown_option_message(word, "mjpeg " + command->get_name() +
                                                                " --help"));
    return kExitUsage;
  } catch (const CLI::ArgumentMismatch& e) {
    const std::string what = e.what();
    if (what.rfind("files:", 0) == 0)  // `quality` with other than two files
      print_error("quality compares two files, SOURCE ENCODED (or --sweep INPUT): " +
                  what.substr(what.find(':') + 2));
    else
      print_error(what);
    return kExitUsage;
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
