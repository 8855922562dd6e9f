// The timeline of a traced run, as read from a Chrome trace-event JSON file, and the choice of
// the part of it a picture shows. No OpenCV here: the model is plain data, so that
// `mjpeg compare --gantt` can build it in memory and `mjpeg gantt` can read it from a file.
//
// The trace conventions (what `mjpeg compare --trace` writes; any Chrome trace that follows
// them is read):
//   - one process (pid) per mode run ("CPU", "SOK", "AOK", ...), named by a "process_name"
//     metadata event; processes are stacked by "process_sort_index", then by pid;
//   - one thread (tid) per track (host thread or CUDA stream), named by "thread_name" and
//     ordered by "thread_sort_index", then by tid;
//   - complete events (ph "X") with ts and dur in microseconds are the spans; args.frame, when
//     present, is the frame the span worked on; other event kinds are ignored;
//   - otherData.runs (optional): [{"name": "AOK", "wall_ms": .., "fps": .., "frames": ..}].
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mjpeg::app {

/// One span of work on one track.
struct TraceSpan {
  std::string name;          ///< "upload", "kernel", "entropy", ... (colours the bar)
  double start_us = 0;       ///< start time in microseconds (each run starts near 0)
  double dur_us = 0;         ///< duration in microseconds (>= 0)
  std::int64_t frame = -1;   ///< the frame worked on, or -1 when the span has none
  double end_us() const { return start_us + dur_us; }
};

/// One row of the picture: a host thread or a CUDA stream.
struct TraceTrack {
  std::int64_t tid = 0;
  std::string name;               ///< "GPU upload stream", "entropy 0", ...
  std::int64_t sort_index = 0;    ///< rows are ordered by (sort_index, tid)
  std::vector<TraceSpan> spans;   ///< in start order
};

/// Facts about a run that the trace's otherData.runs may give (all optional).
struct TraceRunInfo {
  std::optional<double> wall_ms;
  std::optional<double> fps;
  std::optional<std::int64_t> frames;
};

/// One mode run (a panel of the picture).
struct TraceProcess {
  std::int64_t pid = 0;
  std::string name;               ///< "SOK", "AOK", ...
  std::int64_t sort_index = 0;    ///< panels are stacked by (sort_index, pid)
  TraceRunInfo info;
  std::vector<TraceTrack> tracks; ///< in row order
};

/// A whole trace: the processes in stacking order (top to bottom).
struct Trace {
  std::vector<TraceProcess> processes;
};

/// Parses Chrome trace-event JSON text (an object with "traceEvents", or a bare event array).
/// `source` names the input in error messages. Throws Error (one line) when the text is not
/// JSON, is not a trace, has a malformed span, or has no spans at all. Sorts processes,
/// tracks and spans into their display order; tracks without spans are dropped.
Trace parse_trace_json(const std::string& text, const std::string& source);

/// Reads and parses a trace file (see parse_trace_json). Throws Error when it cannot be read.
Trace read_trace_file(const std::string& path);

/// Which part of the timeline to show.
struct TimelineWindow {
  enum class Kind {
    first_frames,  ///< the spans of each run's first `frames` frames (and unnumbered spans
                   ///< that start before that run's last such span ends)
    time_range,    ///< every span that overlaps [from_ms, to_ms], clipped to it
    all,           ///< the whole trace
  };
  Kind kind = Kind::first_frames;
  std::int64_t frames = 16;
  double from_ms = 0;   ///< time_range: left end
  double to_ms = 0;     ///< time_range: right end; +infinity = where the trace ends
};

/// The picture widths the Gantt chart accepts (pixels).
constexpr int kGanttMinWidth = 800;
constexpr int kGanttMaxWidth = 8000;

/// The default window: the first 16 frames, which keeps frame numbers readable on the bars.
constexpr std::int64_t kDefaultGanttFrames = 16;

/// The trace cut to a window: only the spans shown (clipped to [from_us, to_us]), and the
/// time range of the axis, shared by all panels.
struct TimelineView {
  Trace trace;           ///< the processes and tracks as in the input, spans filtered/clipped
  double from_us = 0;    ///< left end of the time axis
  double to_us = 0;      ///< right end of the time axis (> from_us)
  std::string caption;   ///< what the window shows, e.g. "first 16 frames"
  /// Per process (same order): when the work the window is about is done, in microseconds:
  /// the end of its last selected span before clipping (first_frames: those frames; all and
  /// time_range: the whole run). The picture marks it when it falls inside the axis.
  std::vector<double> done_us;
  std::string done_label;  ///< what done_us means: "first 16 frames done", "run done"
};

/// Cuts `trace` to `window`. Throws UsageError for an empty or inverted time range, or when
/// no span falls into it.
TimelineView select_window(const Trace& trace, const TimelineWindow& window);

/// The time at which the last span in `process` ends, in microseconds; 0 when it has none.
double last_span_end_us(const TraceProcess& process);

}  // namespace mjpeg::app
