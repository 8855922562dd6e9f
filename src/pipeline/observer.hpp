// The pipeline's instrumentation in one object (docs/ARCHITECTURE.md, "Instrumentation"): the
// run loop and the offloaders (offload.hpp) tell it what they did, and it keeps
//   - the busy-time counters of every stage (Stats: read_s, upload_issue_s, gpu_s, ...),
//   - an NVTX range per stage span (for Nsight Systems; none in a build without CUDA),
//   - the trace (PipelineOptions::trace): one track per host thread and per CUDA stream, a
//     span per stage and frame, the GPU's copies and kernels from CUDA events,
//   - the GPU side's sums (per stream buffer and overall, with the union of the GPU spans),
//     frames per stream buffer, bytes downloaded, frames coded from tokens.
// A stage span's kind says which counter and which thread's track it belongs to:
//   read, upload               producer `thread`
//   dispatch, sync             the dispatcher of stream buffer `thread` (its own counter)
//   download                   the downloader of stream buffer `thread`
//   transform, wait, entropy   entropy worker `thread`
//   write                      the writer
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/pipeline.hpp"
#include "pipeline/trace.hpp"

namespace mjpeg::pipeline {

/// When the GPU worked on one frame: seconds on the host's steady clock, relative to the
/// origin given to StreamBuffer::start_clock (from CUDA events; timing builds only).
struct GpuTimes {
  double upload_start = 0, upload_end = 0;
  double kernel_start = 0, kernel_end = 0;   ///< transform (and tokenizer)
  int kernel_stream = 0;                     ///< which of the buffer's kernel streams
  /// The download: one copy (coefficients), or the header copy [download_start, header_end]
  /// and the body copy [body_start, download_end] (tokens; header_end = body_start = -1 for
  /// a single copy).
  double download_start = 0, download_end = 0;
  double header_end = -1, body_start = -1;
};

/// The trace tracks of one stream buffer, by name, as its offloader lays them out.
struct BufferTracks {
  std::string dispatcher;            ///< the dispatcher thread
  std::string downloader;            ///< the downloader thread; empty: none
  /// The GPU stream tracks, created in this order; `upload` etc. say which of them the copies
  /// and kernels of a frame go to (the legacy default stream: all on one); kernel stream k
  /// (GpuTimes::kernel_stream) is track `kernel + k`, k < `kernels`.
  std::vector<std::string> streams;
  int upload = 0, kernel = 0, download = 0, body = 0;
  int kernels = 1;
};

class RunObserver {
 public:
  using Clock = std::chrono::steady_clock;

  /// `trace`: may be null (no tracks, no spans).
  explicit RunObserver(Trace* trace) : trace_(trace) {}
  RunObserver(const RunObserver&) = delete;
  RunObserver& operator=(const RunObserver&) = delete;

  /// Before the threads: the stream buffers' devices (none in cpu mode) and whether their GPU
  /// work is timed with CUDA events (gpu_frame is then called once per frame).
  /// `kernel_streams`: how many kernel streams each buffer has (the kernel stage's lanes).
  void set_buffers(const std::vector<int>& devices, bool gpu_timed, int kernel_streams = 1);
  /// Trace only (else nothing): the tracks, in the order the trace shows them: one per
  /// producer, per stream buffer those of `buffers` (the same count as set_buffers), one per
  /// entropy worker, the writer.
  void add_tracks(int producers, const std::vector<BufferTracks>& buffers, int workers);
  /// Time zero of the trace: when the stages start.
  void start(Clock::time_point origin) {
    if (trace_) trace_->set_origin(origin);
  }

  /// One stage's work on one frame, from construction to destruction: adds its duration to the
  /// stage's busy-time counter, is an NVTX range, and a span on the thread's track when
  /// tracing. The frame index may be filled in later (set_frame) when it is only known after
  /// the work, as for a producer's read; a read that found the end of the stream has no span.
  class Scope {
   public:
    Scope(RunObserver& observer, SpanKind kind, int thread, std::int64_t frame);
    ~Scope();
    void set_frame(std::int64_t frame) { frame_ = frame; }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    RunObserver& observer_;
    SpanKind kind_;
    int thread_;
    std::int64_t frame_;
    Clock::time_point t0_;
  };
  Scope scope(SpanKind kind, int thread, std::int64_t frame = -1) {
    return Scope(*this, kind, thread, frame);
  }

  /// Stream buffer `buffer` transformed a frame (its dispatcher handed it on).
  void transformed(int buffer) {
    buffers_[static_cast<std::size_t>(buffer)].frames.fetch_add(1, std::memory_order_relaxed);
  }
  /// A worker took a GPU result: `bytes` came back from the device, as tokens or not.
  void downloaded(std::size_t bytes, bool tokens) {
    download_bytes_.fetch_add(bytes, std::memory_order_relaxed);
    if (tokens) token_frames_.fetch_add(1, std::memory_order_relaxed);
  }
  /// Timed runs: the GPU spans of frame `frame`, transformed by stream buffer `buffer`.
  void gpu_frame(int buffer, std::int64_t frame, const GpuTimes& t);

  /// The self-balancing split's measure (Run::rebalance): busy nanoseconds so far of the
  /// producers (read, upload issue) and of the entropy workers (transform, coding).
  std::int64_t produce_ns() const { return busy(SpanKind::read) + busy(SpanKind::upload); }
  std::int64_t consume_ns() const { return busy(SpanKind::entropy) + busy(SpanKind::transform); }

  /// The busy times, the stream buffers' shares (BufferStats), download bytes, token frames
  /// and (timed runs) the GPU sums and union.
  void fill(Stats& st);

 private:
  /// Sum and union of GPU spans (copies and kernels).
  class GpuSpanLog {
   public:
    void add(const GpuTimes& t);
    void fill(BufferStats& b);
    void fill(Stats& st);

   private:
    std::mutex mutex_;
    std::vector<std::pair<double, double>> spans_;
    double upload_s_ = 0, kernel_s_ = 0, download_s_ = 0;
  };
  struct Buffer {
    int device = 0;
    std::atomic<std::int64_t> frames{0}, gpu_ns{0};  // gpu_ns: its dispatcher's busy time
    GpuSpanLog log;
    // Tracks (trace only): its threads and its streams.
    int dispatcher = -1, downloader = -1, upload = -1, download = -1, body = -1;
    std::vector<int> kernels;  // one track per kernel stream
  };
  static constexpr int kKinds = static_cast<int>(SpanKind::write) + 1;

  std::atomic<std::int64_t>& counter(SpanKind kind, int thread);
  int track(SpanKind kind, int thread) const;
  std::int64_t busy(SpanKind kind) const {
    return busy_ns_[static_cast<int>(kind)].load(std::memory_order_relaxed);
  }

  Trace* const trace_;
  bool gpu_timed_ = false;
  int kernel_streams_ = 1;
  std::atomic<std::int64_t> busy_ns_[kKinds] = {};  // host stages (dispatch/sync: per buffer)
  std::unique_ptr<Buffer[]> buffers_;
  std::size_t buffer_count_ = 0;
  GpuSpanLog gpu_log_;  // every buffer's GPU spans
  std::atomic<std::uint64_t> download_bytes_{0};
  std::atomic<std::int64_t> token_frames_{0};
  std::vector<int> producer_track_, worker_track_;
  int writer_track_ = -1;
};

}  // namespace mjpeg::pipeline
