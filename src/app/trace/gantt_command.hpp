// `mjpeg gantt TRACE.json -o G.png`: the timeline picture (SOK above AOK) of a trace written by
// `mjpeg compare --trace`, drawn on a machine whose mjpeg has OpenCV (the GPU machine's build
// has none: it writes the trace, and the picture is drawn afterwards elsewhere).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace mjpeg::app {

struct GanttArgs {
  std::string input;                  ///< the trace (Chrome trace-event JSON)
  std::string output;                 ///< the picture (.png)
  bool overwrite = false;             ///< -y
  bool quiet = false;                 ///< no summary line
  int width = 1920;                   ///< picture width in pixels
  std::optional<std::int64_t> frames; ///< --frames N
  std::optional<double> from_ms;      ///< --from MS
  std::optional<double> to_ms;        ///< --to MS
  bool all = false;                   ///< --all
  std::string title;                  ///< --title ("" = automatic)
};

/// Adds `mjpeg gantt` to `app`; the parsed values land in `args`.
CLI::App* add_gantt_command(CLI::App& app, GanttArgs& args);

/// Reads the trace, draws it and writes the PNG atomically; prints a one-line summary on
/// stderr unless quiet. Returns 0. Throws UsageError for invalid requests (exit 2) and Error
/// for unreadable or malformed traces and builds without OpenCV (exit 1); nothing is written
/// under the output name then.
int run_gantt(const GanttArgs& args);

}  // namespace mjpeg::app
