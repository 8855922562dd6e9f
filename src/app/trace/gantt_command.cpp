#include "gantt_command.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "app/common/cli_options.hpp"
#include "mjpeg/files.hpp"
#include "mjpeg/error.hpp"
#include "app/common/paths.hpp"
#include "trace_model.hpp"

#if MJPEG_HAVE_OPENCV
#include "gantt.hpp"
#endif

namespace mjpeg::app {
namespace {

constexpr const char* kGanttHelp = R"(
What the picture shows:
  One panel per run in the trace (SOK above AOK), one row per host thread or CUDA stream,
  bars coloured by span kind (legend at the top) with the frame number on bars wide enough,
  and one time axis in ms shared by all panels, so the faster run is visibly shorter. A red
  line marks when each run is done with the frames shown (with --from/--to or --all: when the
  whole run is done); panel titles give the run's wall time, fps and frames when the trace's
  otherData.runs has them.

The window's --frames N takes each run's first N frame numbers (and the spans without a frame
that start before the last of them ends); the axis ends where the slower run finishes them.
--from and --to may each be left out (0 / the trace's end). With --all, the bars of a long
run get too thin for frame numbers.

Examples:
  mjpeg compare ... --trace run.json       (on the GPU machine)
  mjpeg gantt run.json -o run.png          (anywhere mjpeg has OpenCV)
  mjpeg gantt run.json -o run.png -y --from 100 --to 120 --width 2400)";

/// The window asked for by the options (the default: the first 16 frames).
[[maybe_unused]] TimelineWindow window_of(const GanttArgs& args) {
  TimelineWindow window;
  if (args.all) {
    window.kind = TimelineWindow::Kind::all;
  } else if (args.from_ms || args.to_ms) {
    window.kind = TimelineWindow::Kind::time_range;
    window.from_ms = args.from_ms.value_or(0.0);
    window.to_ms = args.to_ms.value_or(std::numeric_limits<double>::infinity());
  } else {
    window.kind = TimelineWindow::Kind::first_frames;
    window.frames = args.frames.value_or(kDefaultGanttFrames);
  }
  return window;
}

/// Refuses conflicting windows, outputs that are not .png, or that would replace the trace.
void check_request(const GanttArgs& args) {
  const int windows = int(args.frames.has_value()) + int(args.from_ms || args.to_ms) + int(args.all);
  if (windows > 1)
    throw UsageError("choose one window: --frames, --from/--to or --all");
  for (const std::optional<double>& ms : {args.from_ms, args.to_ms})
    if (ms && !std::isfinite(*ms)) throw UsageError("--from and --to must be finite numbers");
  if (lower_extension(args.output) != ".png")
    throw UsageError(fmt::format("the picture must be a .png file, not '{}'", args.output));
  if (same_file(args.input, args.output))
    throw UsageError(fmt::format("the output {} is the input trace", args.output));
}

}  // namespace

CLI::App* add_gantt_command(CLI::App& app, GanttArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "gantt",
      "Draw the timeline of a trace (from `mjpeg compare --trace`) as a PNG Gantt chart: "
      "SOK above AOK, one row per thread or CUDA stream (needs a build with OpenCV)");
  cmd->add_option("trace", args.input, "Chrome trace-event JSON (e.g. from compare --trace)")
      ->type_name("TRACE.json")
      ->required();
  cmd->add_option("-o,--output", args.output, "The picture to write (.png)")
      ->type_name("G.png")
      ->required();
  cmd->add_flag("-y,--overwrite", args.overwrite, "Replace the output if it exists");
  cmd->add_flag("--quiet", args.quiet, "No summary line on stderr");
  cmd->add_option("--width", args.width, "Picture width in pixels; the height follows the rows")
      ->transform(decimal_integer())
      ->check(CLI::Range(kGanttMinWidth, kGanttMaxWidth).description(""))
      ->type_name(fmt::format("{}..{}", kGanttMinWidth, kGanttMaxWidth))
      ->capture_default_str();
  cmd->add_option("--title", args.title, "Title line (default: names the runs and the window)")
      ->type_name("TEXT");
  const char* window = "Window (at most one of --frames, --from/--to, --all; default --frames 16)";
  cmd->add_option("--frames", args.frames, "Show each run's first N frames")
      ->transform(decimal_integer())
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40).description(""))
      ->type_name("N")
      ->group(window);
  cmd->add_option("--from", args.from_ms, "Window start in ms (default 0)")
      ->type_name("MS")
      ->group(window);
  cmd->add_option("--to", args.to_ms, "Window end in ms (default: the trace's end)")
      ->type_name("MS")
      ->group(window);
  cmd->add_flag("--all", args.all, "Show the whole trace")->group(window);
  cmd->footer(kGanttHelp);
  return cmd;
}

int run_gantt(const GanttArgs& args) {
  check_request(args);
#if MJPEG_HAVE_OPENCV
  check_output_allowed(args.output, args.overwrite);
  const Trace trace = read_trace_file(args.input);

  GanttOptions options;
  options.width = args.width;
  options.window = window_of(args);
  options.title = args.title;
  std::size_t png_bytes = 0;
  const GanttLayout layout =
      write_gantt_png(trace, options, args.output, args.overwrite, &png_bytes);

  if (!args.quiet) {
    std::string runs;
    for (const GanttLayout::Panel& panel : layout.panels)
      runs += (runs.empty() ? "" : ", ") + panel.process;
    std::fprintf(stderr, "%s\n",
                 fmt::format("mjpeg: wrote {}: {}x{} PNG, {} bytes; runs {}; {}; axis {:.3f} .. "
                             "{:.3f} ms",
                             args.output, layout.width, layout.height, png_bytes, runs,
                             layout.caption, layout.from_us / 1000.0, layout.to_us / 1000.0)
                     .c_str());
  }
  return 0;
#else
  throw Error("this build of mjpeg has no OpenCV and cannot draw pictures; copy the trace to "
              "a machine whose `mjpeg info` says OpenCV: yes and run mjpeg gantt there");
#endif
}

}  // namespace mjpeg::app
