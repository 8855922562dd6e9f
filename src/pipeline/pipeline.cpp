#include "pipeline/pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <unistd.h>

#include "core/geometry.hpp"
#include "core/quant.hpp"
#include "device_info.hpp"
#include "jpeg/entropy.hpp"
#include "jpeg/planar.hpp"
#include "jpeg/progressive.hpp"
#include "jpeg/tokens.hpp"
#include "jpeg/transform_cpu.hpp"
#include "mjpeg/error.hpp"
#include "pipeline/bounded_queue.hpp"

#if MJPEG_WITH_CUDA
#include <nvtx3/nvToolsExt.h>

#include "pipeline/stream_buffer.hpp"
#else
// A build without CUDA: no stream buffer (sok/aok are refused in Run::setup) and no NVTX
// ranges (they are for Nsight Systems, which profiles the GPU build).
#include "pipeline/stream_buffer_none.hpp"
namespace {
inline void nvtxRangePushA(const char*) {}
inline void nvtxRangePop() {}
}  // namespace
#endif

namespace mjpeg::pipeline {

const char* to_string(Mode m) {
  switch (m) {
    case Mode::cpu: return "cpu";
    case Mode::sok: return "sok";
    case Mode::aok: return "aok";
  }
  return "?";
}

Mode parse_mode(const std::string& text) {
  if (text == "cpu") return Mode::cpu;
  if (text == "sok") return Mode::sok;
  if (text == "aok") return Mode::aok;
  throw UsageError("unknown mode '" + text + "' (expected cpu, sok or aok)");
}

std::vector<int> device_list(const PipelineOptions& o) {
  return o.devices.empty() ? std::vector<int>{o.device} : o.devices;
}

std::vector<int> parse_device_list(const std::string& text, int device_count) {
  if (text == "all") {
    if (device_count <= 0) throw Error("--devices all: no CUDA device found");
    std::vector<int> all;
    for (int d = 0; d < std::min(device_count, kMaxStreamBuffers); ++d) all.push_back(d);
    return all;
  }
  std::vector<int> list;
  std::size_t from = 0;
  for (;;) {
    const std::size_t comma = text.find(',', from);
    const std::string item = text.substr(from, comma == std::string::npos ? comma : comma - from);
    if (item == "all")
      throw UsageError("--devices '" + text + "': 'all' stands alone (not in a list)");
    if (item.empty() || item.size() > 9 || item.find_first_not_of("0123456789") != std::string::npos)
      throw UsageError("--devices '" + text + "': '" + item +
                       "' is not a device index (a list such as 0,1, or all)");
    const int d = std::stoi(item);
    if (d > 1023) throw UsageError("--devices '" + text + "': device " + item + " is outside 0..1023");
    list.push_back(d);
    if (static_cast<int>(list.size()) > kMaxStreamBuffers)
      throw UsageError("--devices '" + text + "': more than " + std::to_string(kMaxStreamBuffers) +
                       " entries");
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return list;
}

std::string device_list_text(const std::vector<int>& devices) {
  std::string s;
  for (int d : devices) s += (s.empty() ? "" : ",") + std::to_string(d);
  return s;
}

void check_devices_exist(const std::vector<int>& devices, int device_count,
                         const std::string& reason) {
  for (int d : devices)
    if (d >= device_count)
      throw Error("CUDA device " + std::to_string(d) + " does not exist (" +
                  (device_count > 0 ? std::to_string(device_count) + " found"
                                    : (reason.empty() ? "none found" : reason)) +
                  ")");
}

void validate(const PipelineOptions& o) {
  auto check = [](int v, int lo, int hi, const char* name) {
    if (v < lo || v > hi)
      throw UsageError(std::string(name) + " " + std::to_string(v) + " is outside " +
                       std::to_string(lo) + ".." + std::to_string(hi));
  };
  check(o.producers, 1, 256, "producers");
  check(o.slots, 1, 4096, "slots");
  check(o.entropy_threads, 1, 1024, "entropy threads");
  check(o.device, 0, 1023, "device");
  check(static_cast<int>(o.devices.size()), 0, kMaxStreamBuffers, "device list length");
  for (int d : o.devices) check(d, 0, 1023, "device");
  check(o.inject_gpu_error_buffer, 0, static_cast<int>(device_list(o).size()) - 1,
        "injected error's stream buffer");
  check(o.stages, 1, gpu::kMaxStages, "stages");
  if (o.balance_threads != 0) {
    check(o.balance_threads, 2, 1024, "balanced threads");
    if (o.producers + o.entropy_threads != o.balance_threads)
      throw UsageError("a self-balancing split needs producers + entropy threads = " +
                       std::to_string(o.balance_threads));
  }
}

void apply_default_counts(PipelineOptions& o, int cores, int producers, int entropy_threads,
                          int slots, bool in_memory) {
  cores = std::max(1, cores);
  // cpu mode on frames in memory: the producers only hand the frames out (no copy), so one
  // does, and every core transforms and codes.
  const bool lent = in_memory && o.mode == Mode::cpu;
  // Cores left to the threads outside the split: sok's dispatcher; aok's dispatcher and its
  // downloader + writer (mostly waiting, but 18 busy threads on 16 cores lost 15%).
  const int reserved = o.mode == Mode::cpu ? 0 : o.mode == Mode::sok ? 1 : cores >= 8 ? 2 : 1;
  if (producers <= 0 && entropy_threads <= 0 && !lent) {
    // The split balances itself from a start of 2 producers (1 with two threads).
    const int threads = std::max(2, cores - reserved);
    o.balance_threads = threads;
    o.producers = std::min(2, threads - 1);
    o.entropy_threads = threads - o.producers;
  } else {
    o.balance_threads = 0;
    o.producers = producers > 0 ? producers : lent ? 1 : std::min(2, cores);
    if (lent && entropy_threads <= 0) entropy_threads = cores;
    const int busy = o.producers + reserved;
    o.entropy_threads = entropy_threads > 0 ? entropy_threads : std::max(1, cores - busy);
  }
  const int threads = o.entropy_threads + o.producers;
  o.slots_auto = slots <= 0;
  o.slots = slots > 0 ? slots : o.mode == Mode::cpu ? std::max(8, threads + 2)
                                                    : std::max(8, 3 * threads + 2);
}

int balanced_producers(double produce_s, double consume_s, int threads, int max_producers) {
  int best = 1;
  double best_fps = -1;
  for (int n = 1; n <= max_producers && n < threads; ++n) {
    const double fps = std::min(n / produce_s, (threads - n) / consume_s);
    if (fps > best_fps * 1.0001) {  // ties: fewer producers
      best = n;
      best_fps = fps;
    }
  }
  return best;
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// One stage's work on one frame: adds its duration to the stage's busy-time counter
/// (nanoseconds), is an NVTX range for Nsight Systems, and a span on the thread's track when
/// tracing. The frame index may be filled in later (set_frame) when it is only known after the
/// work, as for a producer's read; a read that found the end of the stream has no span.
class StageScope {
 public:
  StageScope(std::atomic<std::int64_t>& busy_ns, SpanKind kind, Trace* trace, int track,
             std::int64_t frame = -1)
      : busy_ns_(busy_ns), kind_(kind), trace_(trace), track_(track), frame_(frame),
        t0_(Clock::now()) {
    nvtxRangePushA(to_string(kind));
  }
  ~StageScope() {
    const Clock::time_point t1 = Clock::now();
    nvtxRangePop();
    busy_ns_.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0_).count(),
                       std::memory_order_relaxed);
    if (trace_ && frame_ >= 0) trace_->add(track_, kind_, frame_, t0_, t1);  // not the end probe
  }
  void set_frame(std::int64_t frame) { frame_ = frame; }
  StageScope(const StageScope&) = delete;
  StageScope& operator=(const StageScope&) = delete;

 private:
  std::atomic<std::int64_t>& busy_ns_;
  SpanKind kind_;
  Trace* trace_;
  int track_;
  std::int64_t frame_;
  Clock::time_point t0_;
};

/// Sum and union of the GPU spans (copies and kernels) of a run.
class GpuSpanLog {
 public:
  void add(const GpuTimes& t) {
    std::lock_guard<std::mutex> lock(mutex_);
    spans_.push_back({t.upload_start, t.upload_end});
    spans_.push_back({t.kernel_start, t.kernel_end});
    upload_s_ += t.upload_end - t.upload_start;
    kernel_s_ += t.kernel_end - t.kernel_start;
    if (t.body_start >= 0) {  // header and body copies, with the host's turn between them
      spans_.push_back({t.download_start, t.header_end});
      spans_.push_back({t.body_start, t.download_end});
      download_s_ += (t.header_end - t.download_start) + (t.download_end - t.body_start);
    } else {
      spans_.push_back({t.download_start, t.download_end});
      download_s_ += t.download_end - t.download_start;
    }
  }
  void fill(BufferStats& b) {
    std::lock_guard<std::mutex> lock(mutex_);
    b.upload_gpu_s = upload_s_;
    b.kernel_gpu_s = kernel_s_;
    b.download_gpu_s = download_s_;
  }
  void fill(Stats& st) {
    std::lock_guard<std::mutex> lock(mutex_);
    st.upload_gpu_s = upload_s_;
    st.kernel_gpu_s = kernel_s_;
    st.download_gpu_s = download_s_;
    std::sort(spans_.begin(), spans_.end());
    double covered = 0, end = -1e300;
    for (const auto& [a, b] : spans_) {
      if (b <= end) continue;
      covered += b - std::max(a, end);
      end = b;
    }
    st.gpu_union_s = covered;
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<double, double>> spans_;
  double upload_s_ = 0, kernel_s_ = 0, download_s_ = 0;
};

/// The track of thread `id` of a stage, or -1 when not tracing.
int track(const std::vector<int>& tracks, int id) {
  return id < static_cast<int>(tracks.size()) ? tracks[static_cast<std::size_t>(id)] : -1;
}

/// One frame in flight: which slot holds it and its position in the stream.
struct Job {
  int slot = -1;
  std::int64_t index = -1;
  int record = -1;  // where its JPEG bytes go (cpu mode: the slot's; sok/aok: see Run)
};

/// Finished frames waiting for their turn. Holds at most one entry per frame record (K in cpu
/// mode), so its storage is reserved once. The writer takes frames strictly by index.
class ReorderBuffer {
 public:
  explicit ReorderBuffer(int capacity) { done_.reserve(static_cast<std::size_t>(capacity)); }

  void put(const Job& job) {
    std::lock_guard<std::mutex> lock(mutex_);
    done_.push_back(job);
    cv_.notify_all();
  }
  /// Blocks until frame `index` is finished (true) or no more frames will come / abort (false).
  bool take(std::int64_t index, Job& out) {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      if (aborted_) return false;
      for (std::size_t i = 0; i < done_.size(); ++i) {
        if (done_[i].index == index) {
          out = done_[i];
          done_[i] = done_.back();
          done_.pop_back();
          return true;
        }
      }
      if (closed_) return false;  // every worker has finished and `index` is not among the rest
      cv_.wait(lock);
    }
  }
  void close() {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    cv_.notify_all();
  }
  void abort() {
    std::lock_guard<std::mutex> lock(mutex_);
    aborted_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<Job> done_;
  bool closed_ = false, aborted_ = false;
};

/// Which producer and entropy-worker threads work (PipelineOptions::balance_threads): thread
/// ids below the active counts run, the others wait here. A rebalance changes the counts; a
/// thread that is mid-frame finishes that frame first. Waiting threads are released at the end
/// (no more frames to read / to code) or on an abort, and then leave.
class RoleGate {
 public:
  void set(int producers, int workers) {
    std::lock_guard<std::mutex> lock(mutex_);
    producers_.store(producers, std::memory_order_relaxed);
    workers_.store(workers, std::memory_order_relaxed);
    cv_.notify_all();
  }
  int producers() const { return producers_.load(std::memory_order_relaxed); }
  int workers() const { return workers_.load(std::memory_order_relaxed); }
  /// True when producer `id` is (or becomes) active; false when it is released inactive.
  bool wait_producer(int id) { return wait(id, producers_, producers_released_); }
  bool wait_worker(int id) { return wait(id, workers_, workers_released_); }
  void release_producers() { release(producers_released_); }
  void release_workers() { release(workers_released_); }
  void abort() {
    std::lock_guard<std::mutex> lock(mutex_);
    producers_released_ = workers_released_ = true;
    cv_.notify_all();
  }

 private:
  bool wait(int id, const std::atomic<int>& active, const bool& released) {
    if (id < active.load(std::memory_order_relaxed)) return true;
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return id < active.load(std::memory_order_relaxed) || released; });
    return id < active.load(std::memory_order_relaxed);
  }
  void release(bool& flag) {
    std::lock_guard<std::mutex> lock(mutex_);
    flag = true;
    cv_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::atomic<int> producers_{0}, workers_{0};
  bool producers_released_ = false, workers_released_ = false;
};

/// The state of one encode_stream call: slots, queues, threads, error hand-over, statistics.
class Run {
 public:
  Run(FrameSource& source, const EncodeOptions& encode, io::FrameSink& sink,
      const PipelineOptions& options, const ProgressFn& progress, const std::atomic<bool>* stop)
      : source_(source), encode_(encode), sink_(sink), opt_(options), progress_(progress),
        stop_(stop), trace_(options.trace), free_slots_(all_slots(options)),
        free_records_(all_records(options)), to_entropy_(all_slots(options)),
        reorder_(static_cast<int>(all_records(options))) {}

  Stats execute();

 private:
  struct HostSlot {
    std::uint8_t* pixels = nullptr;       // the slot's own buffer (null in cpu mode when lent)
    const std::uint8_t* frame = nullptr;  // this frame's pixels: `pixels`, or the lent frame
    std::int16_t* coeffs = nullptr;
    int buffer = 0;  // sok/aok: the stream buffer (device-list entry) the slot belongs to
    int local = 0;   // ... and its slot number there
  };

  /// Every slot of every stream buffer (an upper bound: fitting_slots may take fewer).
  static std::size_t all_slots(const PipelineOptions& o) {
    const std::size_t buffers = o.mode == Mode::cpu ? 1 : device_list(o).size();
    return static_cast<std::size_t>(std::max(1, o.slots)) * std::max<std::size_t>(1, buffers);
  }
  /// Frame records (JPEG bytes between a worker and the writer): one per slot in cpu mode; in
  /// sok/aok twice the slots, since there a slot goes back to the pool once its frame is coded
  /// and the records bound how far the frames in flight may run ahead of the writer.
  static std::size_t all_records(const PipelineOptions& o) {
    return (o.mode == Mode::cpu ? 1 : 2) * all_slots(o);
  }

  void setup();
  int fitting_slots(int k, const std::vector<int>& devices) const;
  void producer(int id);
  void dispatcher(int buffer);
  void downloader(int buffer);
  void worker(int id);
  void writer();
  void rebalance();  // writer thread, after each frame (balancing only)
  void fail(std::exception_ptr e);
  void add_tracks();
  /// A dispatcher or downloader that fed the entropy queue has left; the last one closes it.
  void feeder_done();
  /// "CUDA device 1", or "CUDA device 0 (stream buffer 2 of 3)" where the device repeats.
  std::string buffer_name(int buffer) const;
  /// Runs `fn` (CUDA calls of stream buffer `buffer`); an Error from it comes out with the
  /// buffer's device named in front.
  template <class Fn>
  void on_buffer(int buffer, Fn&& fn) {
    try {
      fn();
    } catch (const UsageError&) {
      throw;
    } catch (const Error& e) {
      throw Error(buffer_name(buffer) + ": " + e.what());
    }
  }
  /// Makes `buffer`'s device current in the calling thread unless it already is (`current`:
  /// the device the thread last selected, -1 before the first).
  void bind(int buffer, int& current) {
    const int device = buffer_device_[static_cast<std::size_t>(buffer)];
    if (device == current) return;
    on_buffer(buffer, [&] { gpus_[static_cast<std::size_t>(buffer)]->bind_thread(); });
    current = device;
  }
  /// sok/aok with timing: the GPU spans of the frame in `job`'s slot, once its coefficients
  /// are on the host.
  void log_gpu(const Job& job);
  bool stopping() const { return stop_ && stop_->load(std::memory_order_relaxed); }

  FrameSource& source_;
  const EncodeOptions encode_;
  io::FrameSink& sink_;
  const PipelineOptions opt_;
  const ProgressFn& progress_;
  const std::atomic<bool>* stop_;
  Trace* const trace_;  // opt_.trace (may be null)
  // Frames in memory used where they lie, no copy into a slot: transformed (cpu mode) or,
  // when page-locked, uploaded (sok --pinned, aok) from there.
  bool lend_ = false;

  SourceFormat format_;
  FrameGeometry geometry_;
  QuantTables tables_;
  // sok / aok: one stream buffer per device-list entry, and each one's device.
  std::vector<std::unique_ptr<StreamBuffer>> gpus_;
  std::vector<int> buffer_device_;
  std::vector<std::unique_ptr<std::uint8_t[]>> cpu_pixels_;  // cpu mode storage
  std::vector<std::unique_ptr<std::int16_t[]>> cpu_coeffs_;
  std::vector<HostSlot> slots_;
  // Frame records: a frame's JPEG bytes, from its worker to the writer (reused: the coders keep
  // their capacity).
  std::vector<std::vector<std::uint8_t>> records_;

  // Slots ready for a producer, every buffer's in one pool. cpu mode: a slot comes back when its
  // frame is written. sok/aok: when its frame is coded (the device is done with it), so that a
  // device gets frames as fast as it finishes them, not in the writer's turn.
  BoundedQueue<int> free_slots_;
  BoundedQueue<int> free_records_;  // sok/aok: records ready for a producer (back when written)
  // Per stream buffer: read (aok: upload issued), waiting for its dispatcher; aok with tokens:
  // header download issued, waiting for its downloader.
  std::vector<std::unique_ptr<BoundedQueue<Job>>> to_gpu_, to_download_;
  BoundedQueue<Job> to_entropy_;  // coefficients/tokens produced or on their way (aok)
  ReorderBuffer reorder_;

  std::atomic<int> producers_left_{0}, workers_left_{0};
  std::atomic<int> feeders_left_{0};  // dispatchers/downloaders still feeding to_entropy_
  // Threads started per role (balancing: balance_threads - 1 each, of which the gate's counts
  // work) and the balancer's snapshots of the busy counters.
  int producer_threads_ = 0, worker_threads_ = 0;
  RoleGate gate_;
  struct Snapshot {
    std::int64_t frames = 0, produce_ns = 0, consume_ns = 0;
  };
  Snapshot last_snapshot_;
  int rebalances_ = 0;
  std::mutex error_mutex_;
  std::exception_ptr error_;
  Clock::time_point start_;

  bool timing_ = false;     // GPU event timing (sok/aok with gpu_timing or a trace)
  GpuSpanLog gpu_log_;      // every buffer's GPU spans
  // Per stream buffer: its GPU spans, frames and dispatcher busy time.
  std::vector<std::unique_ptr<GpuSpanLog>> buffer_log_;
  std::unique_ptr<std::atomic<std::int64_t>[]> buffer_frames_, buffer_gpu_ns_;
  // Tracks (trace only): one per producer and worker, the writer; per stream buffer its
  // dispatcher (and downloader) and its streams.
  std::vector<int> producer_track_, worker_track_;
  std::vector<int> dispatcher_track_, downloader_track_;
  std::vector<int> upload_track_, kernel_track_, download_track_, body_track_;
  int writer_track_ = -1;

  std::atomic<std::int64_t> read_ns_{0}, upload_ns_{0}, download_ns_{0}, transform_ns_{0},
      wait_ns_{0}, entropy_ns_{0}, write_ns_{0};
  std::atomic<std::uint64_t> download_bytes_{0};
  std::atomic<std::int64_t> token_frames_{0};
  bool downloader_ = false;  // aok with token output: a downloader thread between the stages
  std::int64_t frames_ = 0;
  std::uint64_t jpeg_bytes_ = 0;
};

void Run::fail(std::exception_ptr e) {
  {
    std::lock_guard<std::mutex> lock(error_mutex_);
    if (!error_) error_ = e;  // first exception wins
  }
  free_slots_.abort();
  free_records_.abort();
  for (auto& q : to_gpu_) q->abort();
  for (auto& q : to_download_) q->abort();
  to_entropy_.abort();
  reorder_.abort();
  gate_.abort();
}

void Run::feeder_done() {
  if (feeders_left_.fetch_sub(1) != 1) return;
  to_entropy_.close();
  gate_.release_workers();
}

std::string Run::buffer_name(int buffer) const {
  const int device = buffer_device_[static_cast<std::size_t>(buffer)];
  const auto same = std::count(buffer_device_.begin(), buffer_device_.end(), device);
  std::string name = "CUDA device " + std::to_string(device);
  if (same > 1)
    name += " (stream buffer " + std::to_string(buffer + 1) + " of " +
            std::to_string(buffer_device_.size()) + ")";
  return name;
}

/// The default slot count for a GPU mode, lowered (to no fewer than the entropy workers + 2)
/// where that many slots would take more than half the device's free memory or 8 GB of pinned
/// host memory (a quarter of it where the machine has less than 32 GB). Several stream
/// buffers share both: each device's half among the buffers on it, the pinned budget among
/// all buffers. The result holds for every buffer.
int Run::fitting_slots(int k, const std::vector<int>& devices) const {
  const std::size_t frame = format_.frame_bytes();
  const std::size_t coeffs = geometry_.coefficient_count() * sizeof(std::int16_t);
  const std::size_t device_per_slot = frame + 3 * coeffs;  // pixels, coefficients, tokens
  // Pixels (none when the frames are lent: they are uploaded from where they lie), result.
  const std::size_t pinned_per_slot = (lend_ ? 0 : frame) + coeffs;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  const std::size_t ram = pages > 0 && page > 0 ? std::size_t(pages) * std::size_t(page) : 0;
  const std::size_t pinned_budget =
      std::min<std::size_t>(std::size_t(8) << 30, ram ? ram / 4 : std::size_t(8) << 30);
  std::size_t fit = std::size_t(k);
  for (int d : devices) {
    const std::size_t free_device = gpu::free_device_memory(d);
    const auto sharing = static_cast<std::size_t>(std::count(devices.begin(), devices.end(), d));
    if (free_device) fit = std::min(fit, free_device / 2 / sharing / device_per_slot);
  }
  fit = std::min(fit, pinned_budget / devices.size() / pinned_per_slot);
  const int floor = std::min(k, opt_.entropy_threads + opt_.producers + 2);
  return std::max(floor, static_cast<int>(fit));
}

void Run::setup() {
  format_ = source_.format();
  validate(encode_);
  validate(opt_);
  const Subsampling sampling = !format_.is_planar() && format_.format == PixelFormat::gray8
                                   ? Subsampling::gray
                                   : encode_.subsampling;
  geometry_ = make_geometry(format_.width, format_.height, sampling);
  tables_ = make_quant_tables(encode_, geometry_.num_components);

  int k = opt_.slots;
  // The pageable-SOK baseline copies into its own buffers, as a plain program would.
  lend_ = source_.lends_frames() &&
          (opt_.mode == Mode::cpu ||
           (source_.lent_frames_pinned() && !(opt_.mode == Mode::sok && !opt_.pinned_sok)));
  if (opt_.mode == Mode::cpu) {
    slots_.resize(static_cast<std::size_t>(k));
    const std::size_t pixel_bytes = format_.frame_bytes();
    for (int i = 0; i < k; ++i) {
      if (!lend_) cpu_pixels_.emplace_back(new std::uint8_t[pixel_bytes]);
      cpu_coeffs_.emplace_back(new std::int16_t[geometry_.coefficient_count()]);
      slots_[i].pixels = lend_ ? nullptr : cpu_pixels_.back().get();
      slots_[i].coeffs = cpu_coeffs_.back().get();
    }
    for (int i = 0; i < k; ++i) free_slots_.push(i);  // every slot starts free
    records_.resize(static_cast<std::size_t>(k));     // record i is slot i's
  } else {
    const std::vector<int> devices = device_list(opt_);
    const std::string mode = std::string("mode ") + to_string(opt_.mode) + ": ";
    std::string reason;
    const int count = gpu::device_count(&reason);
    if (!gpu::built_with_cuda()) throw Error(mode + reason + "; only mode cpu is available");
    try {
      check_devices_exist(devices, count, reason);
    } catch (const Error& e) {
      throw Error(mode + e.what());
    }
    for (std::size_t i = 0; i < devices.size(); ++i)
      if (std::find(devices.begin(), devices.begin() + i, devices[i]) == devices.begin() + i &&
          !gpu::usable_device(devices[i], &reason))
        throw Error(mode + reason);
    if (opt_.slots_auto) k = fitting_slots(k, devices);
    const StreamBuffer::Kind kind = opt_.mode == Mode::aok ? StreamBuffer::Kind::aok
                                    : opt_.pinned_sok      ? StreamBuffer::Kind::sok_pinned
                                                           : StreamBuffer::Kind::sok_pageable;
    timing_ = opt_.gpu_timing || trace_ != nullptr;
    downloader_ = opt_.mode == Mode::aok && opt_.gpu_output == gpu::GpuOutput::tokens;
    const int buffers = static_cast<int>(devices.size());
    buffer_device_ = devices;
    buffer_frames_.reset(new std::atomic<std::int64_t>[devices.size()]);
    buffer_gpu_ns_.reset(new std::atomic<std::int64_t>[devices.size()]);
    slots_.resize(static_cast<std::size_t>(k) * devices.size());
    for (int b = 0; b < buffers; ++b) {
      buffer_frames_[b] = 0;
      buffer_gpu_ns_[b] = 0;
      // Each buffer selects its device before it allocates (StreamBuffer::DeviceSelect).
      on_buffer(b, [&] {
        gpus_.push_back(std::make_unique<StreamBuffer>(
            geometry_, tables_, format_, k, kind, devices[b], opt_.variant, opt_.stages, timing_,
            opt_.gpu_output, encode_.restart_interval, encode_.optimize, !lend_));
      });
      if (b == opt_.inject_gpu_error_buffer) gpus_.back()->inject_error_at(opt_.inject_gpu_error_at);
      if (lend_) {
        const FrameSource::LockWindows w = source_.lent_lock_windows();
        if (w.bytes > 0) gpus_.back()->split_copies_at(w.origin, w.bytes);
      }
      to_gpu_.push_back(std::make_unique<BoundedQueue<Job>>(static_cast<std::size_t>(k)));
      if (downloader_)
        to_download_.push_back(std::make_unique<BoundedQueue<Job>>(static_cast<std::size_t>(k)));
      buffer_log_.push_back(std::make_unique<GpuSpanLog>());
      for (int i = 0; i < k; ++i) {
        HostSlot& s = slots_[static_cast<std::size_t>(b) * k + i];
        s.pixels = gpus_.back()->host_pixels(i);
        s.buffer = b;
        s.local = i;
      }
    }
    // Every slot starts free, the buffers' slots interleaved, so that the first frames go to
    // every device in turn; from then on each comes back once its frame is coded, and the
    // next frame goes to whichever buffer's slot is back first.
    for (int i = 0; i < k; ++i)
      for (int b = 0; b < buffers; ++b) free_slots_.push(b * k + i);
    records_.resize(2 * slots_.size());
    for (std::size_t r = 0; r < records_.size(); ++r) free_records_.push(static_cast<int>(r));
  }
  const bool balance = opt_.balance_threads >= 2;
  producer_threads_ = balance ? opt_.balance_threads - 1 : opt_.producers;
  worker_threads_ = balance ? opt_.balance_threads - 1 : opt_.entropy_threads;
  gate_.set(opt_.producers, opt_.entropy_threads);
  if (trace_) add_tracks();
  if (lend_ && opt_.mode != Mode::cpu) source_.pin_lent_frames();
  source_.prepare(producer_threads_);
}

void Run::add_tracks() {
  for (int p = 0; p < producer_threads_; ++p)
    producer_track_.push_back(trace_->add_track("producer " + std::to_string(p)));
  for (std::size_t b = 0; b < gpus_.size(); ++b) {
    // "GPU 1 ...", or "GPU 0 buffer 2 ..." where the device repeats in the list.
    const int device = buffer_device_[b];
    std::string gpu = "GPU " + std::to_string(device);
    if (std::count(buffer_device_.begin(), buffer_device_.end(), device) > 1)
      gpu += " buffer " + std::to_string(b + 1);
    if (opt_.mode == Mode::aok) {
      dispatcher_track_.push_back(trace_->add_track(gpu + " dispatcher"));
      downloader_track_.push_back(downloader_ ? trace_->add_track(gpu + " downloader") : -1);
      upload_track_.push_back(trace_->add_track(gpu + " upload stream", true));
      kernel_track_.push_back(trace_->add_track(gpu + " kernel stream", true));
      download_track_.push_back(trace_->add_track(gpu + " download stream", true));
      body_track_.push_back(downloader_
                                ? trace_->add_track(gpu + " download stream (token bodies)", true)
                                : download_track_.back());
    } else {
      dispatcher_track_.push_back(trace_->add_track(gpu + " dispatcher (blocking calls)"));
      downloader_track_.push_back(-1);
      const int legacy = trace_->add_track(gpu + " (legacy default stream)", true);
      upload_track_.push_back(legacy);
      kernel_track_.push_back(legacy);
      download_track_.push_back(legacy);
      body_track_.push_back(legacy);
    }
  }
  for (int w = 0; w < worker_threads_; ++w)
    worker_track_.push_back(trace_->add_track("entropy " + std::to_string(w)));
  writer_track_ = trace_->add_track("writer");
}

void Run::log_gpu(const Job& job) {
  const HostSlot& slot = slots_[job.slot];
  const auto b = static_cast<std::size_t>(slot.buffer);
  GpuTimes t;
  on_buffer(slot.buffer, [&] { t = gpus_[b]->gpu_times(slot.local); });
  gpu_log_.add(t);
  buffer_log_[b]->add(t);
  if (!trace_) return;
  trace_->add(Span{upload_track_[b], SpanKind::upload, job.index, t.upload_start, t.upload_end});
  trace_->add(Span{kernel_track_[b], SpanKind::kernel, job.index, t.kernel_start, t.kernel_end});
  if (t.body_start >= 0) {  // the token stream: header copy, then the body copy
    trace_->add(
        Span{download_track_[b], SpanKind::download, job.index, t.download_start, t.header_end});
    trace_->add(
        Span{body_track_[b], SpanKind::download, job.index, t.body_start, t.download_end});
  } else {
    trace_->add(Span{download_track_[b], SpanKind::download, job.index, t.download_start,
                     t.download_end});
  }
}

void Run::producer(int id) {
  try {
    int device = -1;  // the device this thread selected last
    const bool gpu = opt_.mode != Mode::cpu;
    for (;;) {
      if (!gate_.wait_producer(id)) break;  // released while not needed
      if (stopping()) break;
      Job job;
      // sok/aok: a record first (bounds the frames ahead of the writer), then whichever slot
      // of any buffer is free first.
      if (gpu && !free_records_.pop(job.record)) break;  // aborted
      if (!free_slots_.pop(job.slot)) break;              // aborted
      if (!gpu) job.record = job.slot;
      auto give_back = [&] {  // for the other producers, who may be waiting for them
        free_slots_.push(job.slot);
        if (gpu) free_records_.push(job.record);
      };
      if (stopping()) {
        give_back();
        break;
      }
      bool got = false;
      HostSlot& slot = slots_[job.slot];
      {
        StageScope scope(read_ns_, SpanKind::read, trace_, track(producer_track_, id));
        if (lend_) {
          got = source_.lend(id, slot.frame, job.index);
        } else {
          got = source_.read_into(id, slot.pixels, format_.row_bytes(), job.index);
          slot.frame = slot.pixels;
        }
        scope.set_frame(job.index);
      }
      if (!got) {
        give_back();  // the other producers will see the end too
        break;
      }
      if (opt_.mode == Mode::aok) {
        bind(slot.buffer, device);
        StageScope scope(upload_ns_, SpanKind::upload, trace_, track(producer_track_, id),
                         job.index);
        // PICC step 1: initiate; the count says the event exists.
        on_buffer(slot.buffer, [&] {
          gpus_[static_cast<std::size_t>(slot.buffer)]->upload_async(slot.local, slot.frame);
        });
      }
      // The frame goes to its slot's stream buffer (gpu modes) or straight to the workers.
      BoundedQueue<Job>& next = opt_.mode == Mode::cpu
                                    ? to_entropy_
                                    : *to_gpu_[static_cast<std::size_t>(slot.buffer)];
      if (!next.push(job)) break;  // aborted
    }
  } catch (...) {
    fail(std::current_exception());
  }
  gate_.release_producers();  // the end, a stop or an abort: producers still waiting leave
  // The last producer out closes the next stage's input.
  if (producers_left_.fetch_sub(1) == 1) {
    if (opt_.mode == Mode::cpu) {
      to_entropy_.close();
      gate_.release_workers();
    } else {
      for (auto& q : to_gpu_) q->close();
    }
  }
}

void Run::dispatcher(int buffer) {
  const auto b = static_cast<std::size_t>(buffer);
  try {
    StreamBuffer& gpu = *gpus_[b];
    on_buffer(buffer, [&] { gpu.bind_thread(); });
    const int my_track = track(dispatcher_track_, buffer);
    Job job;
    const double delay = b < opt_.test_dispatch_delay_s.size() ? opt_.test_dispatch_delay_s[b] : 0;
    while (to_gpu_[b]->pop(job)) {
      const HostSlot& slot = slots_[job.slot];
      if (delay > 0) std::this_thread::sleep_for(std::chrono::duration<double>(delay));
      if (opt_.mode == Mode::aok) {
        StageScope scope(buffer_gpu_ns_[b], SpanKind::dispatch, trace_, my_track, job.index);
        // PICC: the consumer completes on the GPU.
        on_buffer(buffer, [&] { gpu.transform_async(slot.local); });
      } else {
        {
          StageScope scope(buffer_gpu_ns_[b], SpanKind::sync, trace_, my_track, job.index);
          on_buffer(buffer, [&] { gpu.offload_sync(slot.local, slot.frame); });
        }
        if (timing_) log_gpu(job);
      }
      buffer_frames_[b].fetch_add(1, std::memory_order_relaxed);
      if (!(downloader_ ? *to_download_[b] : to_entropy_).push(job)) break;
    }
  } catch (...) {
    fail(std::current_exception());
  }
  if (downloader_)
    to_download_[b]->close();
  else
    feeder_done();
}

void Run::downloader(int buffer) {
  const auto b = static_cast<std::size_t>(buffer);
  try {
    StreamBuffer& gpu = *gpus_[b];
    on_buffer(buffer, [&] { gpu.bind_thread(); });
    Job job;
    while (to_download_[b]->pop(job)) {
      const int local = slots_[job.slot].local;
      // Idle until the header is on the host: not busy time.
      on_buffer(buffer, [&] { gpu.wait_header(local); });
      {
        StageScope scope(download_ns_, SpanKind::download, trace_,
                         track(downloader_track_, buffer), job.index);
        on_buffer(buffer, [&] { gpu.download_async(local); });  // exactly the stream's length
      }
      if (!to_entropy_.push(job)) break;
    }
  } catch (...) {
    fail(std::current_exception());
  }
  feeder_done();
}

void Run::worker(int id) {
  try {
    int device = -1;  // the device this thread selected last
    Job job;
    std::vector<std::uint8_t> rgb;  // planar frames for on_frame: the RGB that was encoded
    PlanarRows planar_rows;         // planar frames in cpu mode: rows to RGB, band by band
    std::vector<std::int16_t> expanded;  // --progressive from tokens: the frame's coefficients
    while (gate_.wait_worker(id) && to_entropy_.pop(job)) {
      HostSlot& s = slots_[job.slot];
      ImageView view{s.frame, format_.width, format_.height, format_.format,
                     format_.row_bytes()};
      const PlanarView planar = format_.is_planar()
                                    ? planar_view(s.frame, format_.width, format_.height,
                                                  format_.planar)
                                    : PlanarView{};
      const int my_track = track(worker_track_, id);
      StreamBuffer* gpu = gpus_.empty() ? nullptr : gpus_[static_cast<std::size_t>(s.buffer)].get();
      std::vector<std::uint8_t>& jpeg = records_[static_cast<std::size_t>(job.record)];
      if (opt_.mode == Mode::cpu) {
        StageScope scope(transform_ns_, SpanKind::transform, trace_, my_track, job.index);
        if (format_.is_planar()) {
          planar_rows.set_frame(planar);
          transform_cpu(planar_rows, geometry_, tables_, s.coeffs);
        } else {
          transform_cpu(view, geometry_, tables_, s.coeffs);
        }
      } else if (opt_.mode == Mode::aok) {
        bind(s.buffer, device);
        {
          StageScope scope(wait_ns_, SpanKind::wait, trace_, my_track, job.index);
          on_buffer(s.buffer, [&] { gpu->wait_result(s.local); });
        }
        if (timing_) log_gpu(job);
      }
      // The frame's pixels are uploaded (or transformed where they lay): a lent frame's page
      // locks may go. Its bytes stay readable (on_frame below).
      if (lend_) source_.release(job.index);
      {
        StageScope scope(entropy_ns_, SpanKind::entropy, trace_, my_track, job.index);
        if (gpu) {
          const GpuResult r = gpu->result(s.local);
          download_bytes_.fetch_add(gpu->download_bytes(s.local), std::memory_order_relaxed);
          if (r.is_tokens) {
            token_frames_.fetch_add(1, std::memory_order_relaxed);
            if (encode_.progressive)  // the scans need whole coefficient blocks back
              encode_tokens_progressive(geometry_, tables_, r.tokens, encode_, expanded, jpeg);
            else
              encode_tokens(geometry_, tables_, r.tokens, encode_, jpeg);
          } else {
            encode_coefficients(geometry_, tables_, r.coeffs, encode_, jpeg);
          }
        } else {
          encode_coefficients(geometry_, tables_, s.coeffs, encode_, jpeg);
        }
      }
      if (opt_.on_frame) {
        if (format_.is_planar()) {
          rgb.resize(static_cast<std::size_t>(format_.width) * format_.height * 3);
          planar_to_rgb(planar, rgb.data(), static_cast<std::size_t>(format_.width) * 3);
          view = ImageView{rgb.data(), format_.width, format_.height, PixelFormat::rgb24,
                           static_cast<std::size_t>(format_.width) * 3};
        }
        opt_.on_frame(job.index, view, jpeg);
      }
      if (opt_.on_jpeg) opt_.on_jpeg(job.index, jpeg);
      // sok/aok: the slot's pixels and result are used; the JPEG waits in its record.
      if (gpu) free_slots_.push(job.slot);
      reorder_.put(job);
    }
  } catch (...) {
    fail(std::current_exception());
  }
  if (workers_left_.fetch_sub(1) == 1) reorder_.close();
}

void Run::writer() {
  try {
    Job job;
    for (std::int64_t next = 0; reorder_.take(next, job); ++next) {
      const std::vector<std::uint8_t>& jpeg = records_[static_cast<std::size_t>(job.record)];
      {
        StageScope scope(write_ns_, SpanKind::write, trace_, writer_track_, job.index);
        sink_.write_frame(jpeg.data(), jpeg.size());
      }
      ++frames_;
      jpeg_bytes_ += jpeg.size();
      // Recycled only now: cpu mode, the slot (its pixels, coefficients and bytes are used);
      // sok/aok, the record (the slot went back when the frame was coded).
      if (opt_.mode == Mode::cpu)
        free_slots_.push(job.slot);
      else
        free_records_.push(job.record);
      if (opt_.balance_threads >= 2) rebalance();
      if (progress_) progress_(Progress{frames_, jpeg_bytes_, seconds_since(start_)});
    }
  } catch (...) {
    fail(std::current_exception());
  }
}

// The self-balancing split. The start (2 producers, the rest entropy workers) is an estimate;
// the stages' busy time per frame is measured between frames 8 and 32 (the first frames pay for
// thread start-up and cold caches) and the split with the most frames per second for those
// costs taken (balanced_producers; a source that gains nothing from more than P producers, such as
// a sequentially read file or pipe, caps N at P). A second measurement, frames 32 to 96 with
// that split, corrects it once more. Busy time is what a stage's threads spent in their work:
// producers reading (and in aok issuing the upload), workers transforming (cpu) and coding;
// waiting for a slot, a queue or the GPU does not count.
void Run::rebalance() {
  if (frames_ != 8 && frames_ != 32 && frames_ != 96) return;
  Snapshot now;
  now.frames = frames_;
  now.produce_ns = read_ns_.load() + upload_ns_.load();
  now.consume_ns = entropy_ns_.load() + transform_ns_.load();
  const Snapshot before = last_snapshot_;
  last_snapshot_ = now;
  if (frames_ == 8) return;
  const double frames = static_cast<double>(now.frames - before.frames);
  const double produce = (now.produce_ns - before.produce_ns) * 1e-9 / frames;
  const double consume = (now.consume_ns - before.consume_ns) * 1e-9 / frames;
  if (!(produce > 0) || !(consume > 0)) return;
  const int threads = opt_.balance_threads;
  const int cap = source_.max_useful_producers();
  const int most = std::min(threads - 1, cap > 0 ? cap : threads - 1);
  const int n = balanced_producers(produce, consume, threads, most);
  if (n == gate_.producers()) return;
  gate_.set(n, threads - n);
  ++rebalances_;
}

Stats Run::execute() {
  start_ = Clock::now();
  setup();  // throws directly: no thread is running yet
  const double setup_s = seconds_since(start_);
  // Time zero of the trace and of the GPU times: when the stages start (after the setup).
  const Clock::time_point stages_start = Clock::now();
  if (trace_) trace_->set_origin(stages_start);
  if (timing_)
    for (std::size_t b = 0; b < gpus_.size(); ++b)
      on_buffer(static_cast<int>(b), [&] { gpus_[b]->start_clock(stages_start); });

  producers_left_ = producer_threads_;
  workers_left_ = worker_threads_;
  feeders_left_ = static_cast<int>(gpus_.size());
  std::vector<std::thread> threads;
  try {
    for (int p = 0; p < producer_threads_; ++p) threads.emplace_back(&Run::producer, this, p);
    for (int b = 0; b < static_cast<int>(gpus_.size()); ++b) {
      threads.emplace_back(&Run::dispatcher, this, b);
      if (downloader_) threads.emplace_back(&Run::downloader, this, b);
    }
    for (int w = 0; w < worker_threads_; ++w) threads.emplace_back(&Run::worker, this, w);
  } catch (...) {
    // Thread creation failed: stop what runs. The counters of the missing threads never reach
    // zero, but abort() has already released everybody.
    fail(std::current_exception());
  }
  writer();  // the calling thread writes
  for (std::thread& t : threads) t.join();
  for (auto& gpu : gpus_) gpu->drain();
  if (error_) std::rethrow_exception(error_);

  auto s = [](const std::atomic<std::int64_t>& ns) { return ns.load() * 1e-9; };
  Stats st;
  st.frames = frames_;
  st.jpeg_bytes = jpeg_bytes_;
  st.setup_s = setup_s;
  st.read_s = s(read_ns_);
  st.upload_issue_s = s(upload_ns_);
  for (std::size_t b = 0; b < gpus_.size(); ++b) {
    BufferStats bs;
    bs.device = buffer_device_[b];
    bs.frames = buffer_frames_[b].load();
    bs.gpu_s = s(buffer_gpu_ns_[b]);
    if (timing_) buffer_log_[b]->fill(bs);
    st.gpu_s += bs.gpu_s;
    st.buffers.push_back(bs);
  }
  st.download_issue_s = s(download_ns_);
  st.token_frames = token_frames_.load();
  st.transform_cpu_s = s(transform_ns_);
  st.coeff_wait_s = s(wait_ns_);
  st.entropy_s = s(entropy_ns_);
  st.write_s = s(write_ns_);
  st.producers = gate_.producers();
  st.entropy_threads = gate_.workers();
  st.rebalances = rebalances_;
  if (!gpus_.empty()) {
    st.upload_bytes = static_cast<std::uint64_t>(frames_) * gpus_[0]->upload_bytes();
    st.download_bytes = download_bytes_.load();
  }
  if (timing_) {
    st.gpu_timed = true;
    gpu_log_.fill(st);
  }
  st.wall_s = seconds_since(start_);
  return st;
}

}  // namespace

Stats encode_stream(FrameSource& source, const EncodeOptions& encode, io::FrameSink& sink,
                    const PipelineOptions& options, const ProgressFn& progress,
                    const std::atomic<bool>* stop) {
  Run run(source, encode, sink, options, progress, stop);
  return run.execute();
}

}  // namespace mjpeg::pipeline
