// Chrome trace-event JSON of one or more pipeline runs (opens in Perfetto and chrome://tracing):
// one process per run, in the given order (SOK above AOK), one thread per track (host threads
// and CUDA streams), each span a complete ("X") event in microseconds with args.frame.
// otherData.runs carries each run's name, frames, wall time and fps (mjpeg gantt reads them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mjpeg/profile.hpp"

namespace mjpeg::app {

struct TraceRun {
  std::string name;  ///< "SOK", "AOK", ...
  const Profile* profile = nullptr;  ///< its timeline (tracks and spans)
  std::int64_t frames = 0;
  double wall_s = 0;
};

std::string chrome_trace_json(const std::vector<TraceRun>& runs);

}  // namespace mjpeg::app
