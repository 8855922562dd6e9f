#include "trace_json.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

namespace mjpeg::app {
namespace {

/// Microseconds, rounded to 0.001 (the viewers take fractional microseconds).
double micros(double seconds) { return std::round(seconds * 1e9) / 1e3; }

nlohmann::json metadata(const char* name, int pid, int tid, nlohmann::json args) {
  nlohmann::json e = {{"ph", "M"}, {"name", name}, {"pid", pid}, {"args", std::move(args)}};
  if (tid >= 0) e["tid"] = tid;
  return e;
}

}  // namespace

std::string chrome_trace_json(const std::vector<TraceRun>& runs) {
  nlohmann::json events = nlohmann::json::array();
  nlohmann::json run_info = nlohmann::json::array();
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const TraceRun& run = runs[r];
    const int pid = static_cast<int>(r) + 1;
    events.push_back(metadata("process_name", pid, -1, {{"name", run.name}}));
    events.push_back(metadata("process_sort_index", pid, -1, {{"sort_index", pid}}));
    run_info.push_back({{"name", run.name},
                        {"pid", pid},
                        {"frames", run.frames},
                        {"wall_ms", run.wall_s * 1e3},
                        {"fps", run.wall_s > 0 ? run.frames / run.wall_s : 0.0}});
    if (!run.profile) continue;
    const auto& tracks = run.profile->tracks;
    for (std::size_t t = 0; t < tracks.size(); ++t) {
      const int tid = static_cast<int>(t) + 1;
      events.push_back(metadata("thread_name", pid, tid, {{"name", tracks[t].name}}));
      events.push_back(metadata("thread_sort_index", pid, tid, {{"sort_index", tid}}));
    }
    for (const TimelineSpan& s : run.profile->spans) {
      const double ts = micros(s.start_s);
      events.push_back({{"ph", "X"},
                        {"name", s.kind},
                        {"cat", tracks[static_cast<std::size_t>(s.track)].gpu ? "gpu" : "host"},
                        {"pid", pid},
                        {"tid", s.track + 1},
                        {"ts", ts},
                        {"dur", std::max(0.0, micros(s.end_s) - ts)},
                        {"args", {{"frame", s.frame}}}});
    }
  }
  nlohmann::json doc = {{"traceEvents", std::move(events)},
                        {"displayTimeUnit", "ms"},
                        {"otherData", {{"generator", "mjpeg"}, {"runs", std::move(run_info)}}}};
  return doc.dump() + "\n";
}

}  // namespace mjpeg::app
