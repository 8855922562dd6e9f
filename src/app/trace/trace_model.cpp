#include "trace_model.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "mjpeg/error.hpp"

namespace mjpeg::app {
namespace {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Reading one event's fields
// ---------------------------------------------------------------------------------------------

/// Where a bad event is: "trace.json: event 12 (ph X)".
std::string event_place(const std::string& source, std::size_t index, const json& event) {
  const auto ph = event.find("ph");
  return fmt::format("{}: event {}{}", source, index,
                     ph != event.end() && ph->is_string()
                         ? fmt::format(" (ph {})", ph->get<std::string>())
                         : "");
}

/// The integer field `key` of `event` (a JSON integer, or a float with no fraction).
std::int64_t integer_field(const json& event, const char* key, const std::string& place) {
  const auto it = event.find(key);
  if (it != event.end()) {
    if (it->is_number_integer()) return it->get<std::int64_t>();
    if (it->is_number_float()) {
      const double v = it->get<double>();
      if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15)
        return static_cast<std::int64_t>(v);
    }
  }
  throw Error(fmt::format("{} lacks an integer \"{}\"", place, key));
}

/// The finite number field `key` of `event`.
double number_field(const json& event, const char* key, const std::string& place) {
  const auto it = event.find(key);
  if (it != event.end() && it->is_number()) {
    const double v = it->get<double>();
    if (std::isfinite(v)) return v;
  }
  throw Error(fmt::format("{} lacks a number \"{}\"", place, key));
}

/// The string args.<key> of a metadata event, or "" when absent.
std::string string_arg(const json& event, const char* key) {
  const auto args = event.find("args");
  if (args == event.end() || !args->is_object()) return {};
  const auto it = args->find(key);
  return it != args->end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// The integer args.<key> of an event, if it is one.
std::optional<std::int64_t> integer_arg(const json& event, const char* key) {
  const auto args = event.find("args");
  if (args == event.end() || !args->is_object()) return std::nullopt;
  const auto it = args->find(key);
  if (it == args->end() || !it->is_number()) return std::nullopt;
  if (it->is_number_integer()) return it->get<std::int64_t>();
  const double v = it->get<double>();
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15)
    return static_cast<std::int64_t>(v);
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Building the model
// ---------------------------------------------------------------------------------------------

/// Processes and tracks keyed by id while events are read; turned into a Trace at the end.
struct Builder {
  struct Track {
    std::string name;
    std::int64_t sort_index = 0;
    std::vector<TraceSpan> spans;
  };
  struct Process {
    std::string name;
    std::int64_t sort_index = 0;
    std::map<std::int64_t, Track> tracks;
  };
  std::map<std::int64_t, Process> processes;
  std::size_t span_count = 0;

  /// Applies a metadata event (ph "M"): names and sort indices.
  void add_metadata(const json& event, const std::string& place) {
    const auto name_it = event.find("name");
    if (name_it == event.end() || !name_it->is_string()) return;
    const std::string kind = name_it->get<std::string>();
    if (kind == "process_name" || kind == "process_sort_index") {
      Process& p = processes[integer_field(event, "pid", place)];
      if (kind == "process_name") p.name = string_arg(event, "name");
      else p.sort_index = integer_arg(event, "sort_index").value_or(p.sort_index);
    } else if (kind == "thread_name" || kind == "thread_sort_index") {
      Process& p = processes[integer_field(event, "pid", place)];
      Track& t = p.tracks[integer_field(event, "tid", place)];
      if (kind == "thread_name") t.name = string_arg(event, "name");
      else t.sort_index = integer_arg(event, "sort_index").value_or(t.sort_index);
    }
  }

  /// Adds a complete event (ph "X") as a span.
  void add_span(const json& event, const std::string& place) {
    TraceSpan span;
    const auto name_it = event.find("name");
    span.name = name_it != event.end() && name_it->is_string() ? name_it->get<std::string>()
                                                               : std::string("?");
    span.start_us = number_field(event, "ts", place);
    span.dur_us = number_field(event, "dur", place);
    if (span.dur_us < 0) throw Error(fmt::format("{} has a negative \"dur\"", place));
    span.frame = integer_arg(event, "frame").value_or(-1);
    Process& p = processes[integer_field(event, "pid", place)];
    p.tracks[integer_field(event, "tid", place)].spans.push_back(std::move(span));
    ++span_count;
  }

  /// The finished model: only tracks with spans, everything in display order.
  Trace build(const json& runs) && {
    Trace trace;
    for (auto& [pid, p] : processes) {
      TraceProcess out;
      out.pid = pid;
      out.name = p.name.empty() ? fmt::format("pid {}", pid) : p.name;
      out.sort_index = p.sort_index;
      out.info = run_info(runs, out.name);
      for (auto& [tid, t] : p.tracks) {
        if (t.spans.empty()) continue;
        TraceTrack track;
        track.tid = tid;
        track.name = t.name.empty() ? fmt::format("tid {}", tid) : t.name;
        track.sort_index = t.sort_index;
        track.spans = std::move(t.spans);
        std::stable_sort(track.spans.begin(), track.spans.end(),
                         [](const TraceSpan& a, const TraceSpan& b) {
                           return a.start_us < b.start_us;
                         });
        out.tracks.push_back(std::move(track));
      }
      if (out.tracks.empty()) continue;
      std::stable_sort(out.tracks.begin(), out.tracks.end(),
                       [](const TraceTrack& a, const TraceTrack& b) {
                         return std::tie(a.sort_index, a.tid) < std::tie(b.sort_index, b.tid);
                       });
      trace.processes.push_back(std::move(out));
    }
    std::stable_sort(trace.processes.begin(), trace.processes.end(),
                     [](const TraceProcess& a, const TraceProcess& b) {
                       return std::tie(a.sort_index, a.pid) < std::tie(b.sort_index, b.pid);
                     });
    return trace;
  }

  /// otherData.runs[i] whose "name" is `name`, if any (fields of the wrong type are ignored).
  static TraceRunInfo run_info(const json& runs, const std::string& name) {
    TraceRunInfo info;
    if (!runs.is_array()) return info;
    for (const json& run : runs) {
      if (!run.is_object()) continue;
      const auto n = run.find("name");
      if (n == run.end() || !n->is_string() || n->get<std::string>() != name) continue;
      const auto number = [&](const char* key) -> std::optional<double> {
        const auto it = run.find(key);
        if (it == run.end() || !it->is_number()) return std::nullopt;
        return it->get<double>();
      };
      info.wall_ms = number("wall_ms");
      info.fps = number("fps");
      if (const auto frames = number("frames"))
        info.frames = static_cast<std::int64_t>(std::llround(*frames));
      break;
    }
    return info;
  }
};

/// nlohmann's message without its "[json.exception.parse_error.101] " prefix.
std::string short_json_message(const char* what) {
  std::string message = what;
  if (!message.empty() && message[0] == '[') {
    const std::size_t close = message.find("] ");
    if (close != std::string::npos) message.erase(0, close + 2);
  }
  return message;
}

}  // namespace

Trace parse_trace_json(const std::string& text, const std::string& source) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error(fmt::format("{}: not valid JSON: {}", source, short_json_message(e.what())));
  }

  const json* events = nullptr;
  json runs;
  if (root.is_array()) {
    events = &root;
  } else if (root.is_object()) {
    const auto it = root.find("traceEvents");
    if (it != root.end() && it->is_array()) events = &*it;
    const auto other = root.find("otherData");
    if (other != root.end() && other->is_object() && other->contains("runs"))
      runs = (*other)["runs"];
  }
  if (events == nullptr)
    throw Error(fmt::format("{}: not a Chrome trace (no \"traceEvents\" array)", source));

  Builder builder;
  for (std::size_t i = 0; i < events->size(); ++i) {
    const json& event = (*events)[i];
    if (!event.is_object()) throw Error(fmt::format("{}: event {} is not an object", source, i));
    const auto ph = event.find("ph");
    if (ph == event.end() || !ph->is_string())
      throw Error(fmt::format("{}: event {} has no \"ph\"", source, i));
    const std::string phase = ph->get<std::string>();
    if (phase == "M") builder.add_metadata(event, event_place(source, i, event));
    else if (phase == "X") builder.add_span(event, event_place(source, i, event));
    // Other kinds (B/E pairs, counters, instants, flows) are not drawn.
  }
  if (builder.span_count == 0)
    throw Error(fmt::format("{}: the trace has no spans (complete events, ph \"X\")", source));
  return std::move(builder).build(runs);
}

Trace read_trace_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error(fmt::format("cannot read {}: it is a directory", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw Error(fmt::format("cannot read {}", path));
  return parse_trace_json(text.str(), path);
}

// ---------------------------------------------------------------------------------------------
// Windows
// ---------------------------------------------------------------------------------------------

double last_span_end_us(const TraceProcess& process) {
  double end = 0;
  for (const TraceTrack& track : process.tracks)
    for (const TraceSpan& span : track.spans) end = std::max(end, span.end_us());
  return end;
}

namespace {

/// The largest frame number among `process`'s first `count` distinct frame numbers, or
/// nullopt when the process has no numbered spans.
std::optional<std::int64_t> last_frame_of_first(const TraceProcess& process,
                                                std::int64_t count) {
  std::set<std::int64_t> frames;
  for (const TraceTrack& track : process.tracks)
    for (const TraceSpan& span : track.spans)
      if (span.frame >= 0) frames.insert(span.frame);
  if (frames.empty()) return std::nullopt;
  auto it = frames.begin();
  std::advance(it, std::min<std::int64_t>(count, static_cast<std::int64_t>(frames.size())) - 1);
  return *it;
}

/// `process` with only the spans of its first `count` frames, plus unnumbered spans that start
/// before the last of those ends. A process without numbered spans is kept whole.
TraceProcess keep_first_frames(const TraceProcess& process, std::int64_t count) {
  const std::optional<std::int64_t> last_frame = last_frame_of_first(process, count);
  if (!last_frame) return process;
  double cutoff = 0;
  for (const TraceTrack& track : process.tracks)
    for (const TraceSpan& span : track.spans)
      if (span.frame >= 0 && span.frame <= *last_frame) cutoff = std::max(cutoff, span.end_us());
  TraceProcess out = process;
  for (TraceTrack& track : out.tracks) {
    std::vector<TraceSpan> kept;
    for (const TraceSpan& span : track.spans) {
      const bool numbered = span.frame >= 0;
      if (numbered ? span.frame <= *last_frame : span.start_us < cutoff) kept.push_back(span);
    }
    track.spans = std::move(kept);
  }
  return out;
}

/// `process` with only the spans that overlap [from_us, to_us], clipped to it.
TraceProcess keep_range(const TraceProcess& process, double from_us, double to_us) {
  TraceProcess out = process;
  for (TraceTrack& track : out.tracks) {
    std::vector<TraceSpan> kept;
    for (TraceSpan span : track.spans) {
      const bool overlaps = span.dur_us > 0
                                ? span.end_us() > from_us && span.start_us < to_us
                                : span.start_us >= from_us && span.start_us <= to_us;
      if (!overlaps) continue;
      const double start = std::max(span.start_us, from_us);
      const double end = std::min(span.end_us(), to_us);
      span.start_us = start;
      span.dur_us = std::max(0.0, end - start);
      kept.push_back(std::move(span));
    }
    track.spans = std::move(kept);
  }
  return out;
}

/// The earliest start and the latest end of any span in `trace` (0, 0 when it has none).
std::pair<double, double> extent_us(const Trace& trace) {
  bool any = false;
  double lo = 0, hi = 0;
  for (const TraceProcess& p : trace.processes)
    for (const TraceTrack& t : p.tracks)
      for (const TraceSpan& s : t.spans) {
        lo = any ? std::min(lo, s.start_us) : s.start_us;
        hi = any ? std::max(hi, s.end_us()) : s.end_us();
        any = true;
      }
  return {lo, hi};
}

/// The most distinct frame numbers any process has.
std::int64_t max_frame_count(const Trace& trace) {
  std::size_t most = 0;
  for (const TraceProcess& p : trace.processes) {
    std::set<std::int64_t> frames;
    for (const TraceTrack& t : p.tracks)
      for (const TraceSpan& s : t.spans)
        if (s.frame >= 0) frames.insert(s.frame);
    most = std::max(most, frames.size());
  }
  return static_cast<std::int64_t>(most);
}

}  // namespace

TimelineView select_window(const Trace& trace, const TimelineWindow& window) {
  TimelineView view;
  switch (window.kind) {
    case TimelineWindow::Kind::first_frames: {
      if (window.frames < 1) throw UsageError("--frames must be at least 1");
      for (const TraceProcess& p : trace.processes)
        view.trace.processes.push_back(keep_first_frames(p, window.frames));
      const std::int64_t available = max_frame_count(trace);
      view.caption = available == 0            ? "whole trace (no frame numbers)"
                     : available <= window.frames ? fmt::format("all {} frames", available)
                                                  : fmt::format("first {} frames", window.frames);
      const auto [lo, hi] = extent_us(view.trace);
      view.from_us = std::min(0.0, lo);
      view.to_us = hi;
      break;
    }
    case TimelineWindow::Kind::time_range: {
      const double trace_end_ms = extent_us(trace).second / 1000.0;
      if (std::isinf(window.to_ms) && window.from_ms >= trace_end_ms)
        throw UsageError(fmt::format("the trace ends at {:.3f} ms, before --from {:g}",
                                     trace_end_ms, window.from_ms));
      const double to_ms = std::isinf(window.to_ms) ? trace_end_ms : window.to_ms;
      if (!(to_ms > window.from_ms))
        throw UsageError(fmt::format("the time window {} .. {} ms is empty (--to must be "
                                     "greater than --from)",
                                     window.from_ms, to_ms));
      view.from_us = window.from_ms * 1000.0;
      view.to_us = to_ms * 1000.0;
      for (const TraceProcess& p : trace.processes)
        view.trace.processes.push_back(keep_range(p, view.from_us, view.to_us));
      view.caption = fmt::format("{:g} .. {:g} ms", window.from_ms, to_ms);
      break;
    }
    case TimelineWindow::Kind::all: {
      view.trace = trace;
      const auto [lo, hi] = extent_us(trace);
      view.from_us = std::min(0.0, lo);
      view.to_us = hi;
      view.caption = "whole trace";
      break;
    }
  }
  const bool frames_cut =
      window.kind == TimelineWindow::Kind::first_frames && max_frame_count(trace) > 0;
  view.done_label = frames_cut ? view.caption + " done" : "run done";
  for (std::size_t i = 0; i < trace.processes.size(); ++i)
    view.done_us.push_back(frames_cut ? last_span_end_us(view.trace.processes[i])
                                      : last_span_end_us(trace.processes[i]));
  bool any = false;
  for (const TraceProcess& p : view.trace.processes)
    for (const TraceTrack& t : p.tracks) any = any || !t.spans.empty();
  if (!any)
    throw UsageError(fmt::format("no span of the trace falls into the window ({})",
                                 view.caption));
  if (!(view.to_us > view.from_us)) view.to_us = view.from_us + 1.0;  // only instants
  return view;
}

}  // namespace mjpeg::app
