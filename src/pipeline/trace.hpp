// A timeline of one encode_stream run: spans on named tracks (one per host thread, one per
// CUDA stream), in seconds since the run started. Host spans come from steady_clock, GPU spans
// from CUDA events mapped onto the same clock (stream_buffer.hpp). The pipeline records into a
// Trace when PipelineOptions::trace is set; src/app/compare/trace_json.hpp turns runs into Chrome
// trace-event JSON (Perfetto, chrome://tracing), one process per run.
//
// Every stage span is also an NVTX range (RunObserver::Scope, observer.hpp), so Nsight Systems
// shows the same stages.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace mjpeg::pipeline {

/// What a span is. The names appear in the trace and the Gantt picture.
enum class SpanKind : std::uint8_t {
  read,       ///< producer: decode/copy a frame into its slot
  upload,     ///< GPU: host -> device copy of the pixels (aok: the issue on the producer)
  kernel,     ///< GPU: the transform kernel
  download,   ///< GPU: device -> host copy of the coefficients
  dispatch,   ///< aok dispatcher: issuing kernel + download
  sync,       ///< sok dispatcher: the blocking copy / launch / wait / copy
  wait,       ///< entropy worker blocked on the coefficients' event
  transform,  ///< cpu mode: transform_cpu
  entropy,    ///< Huffman coding
  write,      ///< the writer handing a frame to the sink
};
const char* to_string(SpanKind kind);

struct Span {
  int track = 0;
  SpanKind kind = SpanKind::read;
  std::int64_t frame = -1;
  double start_s = 0, end_s = 0;
};

struct Track {
  std::string name;
  bool gpu = false;  ///< a CUDA stream (spans from events) rather than a host thread
};

/// Thread-safe collection of spans. Tracks are added before the threads start.
class Trace {
 public:
  using Clock = std::chrono::steady_clock;

  /// Time zero of the run (set by the pipeline when its stages start, after the allocation).
  void set_origin(Clock::time_point t0) { origin_ = t0; }
  Clock::time_point origin() const { return origin_; }
  double seconds(Clock::time_point t) const {
    return std::chrono::duration<double>(t - origin_).count();
  }

  int add_track(std::string name, bool gpu = false);
  void add(const Span& span);
  void add(int track, SpanKind kind, std::int64_t frame, Clock::time_point t0,
           Clock::time_point t1) {
    add(Span{track, kind, frame, seconds(t0), seconds(t1)});
  }

  const std::vector<Track>& tracks() const { return tracks_; }
  /// All spans, sorted by track then start time.
  std::vector<Span> spans() const;

 private:
  Clock::time_point origin_ = Clock::now();
  std::vector<Track> tracks_;
  mutable std::mutex mutex_;
  std::vector<Span> spans_;
};

}  // namespace mjpeg::pipeline
