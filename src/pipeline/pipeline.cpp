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

#include "core/geometry.hpp"
#include "core/quant.hpp"
#include "core/token_format.hpp"
#include "jpeg/entropy.hpp"
#include "jpeg/jfif_writer.hpp"
#include "jpeg/parallel_parts.hpp"
#include "jpeg/planar.hpp"
#include "jpeg/progressive.hpp"
#include "jpeg/tokens.hpp"
#include "mjpeg/error.hpp"
#include "pipeline/bounded_queue.hpp"
#include "pipeline/observer.hpp"
#include "pipeline/offload.hpp"
#include "pipeline/test_hooks.hpp"

namespace mjpeg::pipeline {

std::vector<int> device_list(const PipelineOptions& o) {
  return o.devices.empty() ? std::vector<int>{o.device} : o.devices;
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

GpuOutput gpu_output_for(const PipelineOptions& o, const EncodeOptions& encode) {
  if (o.gpu_output != GpuOutput::automatic) return o.gpu_output;
  return encode.progressive ? GpuOutput::coefficients : GpuOutput::tokens;
}

std::size_t device_bytes_per_slot(std::size_t frame_bytes, const FrameGeometry& g,
                                  GpuOutput output) {
  const std::size_t coeffs = g.coefficient_count() * sizeof(std::int16_t);
  // The token stream as the stream buffer allocates it: the header (tokens::header_words, with
  // room for --optimize's histogram) and a body as large as the coefficients.
  const std::size_t tokens = coeffs + 4 * tokens::header_words(g.mcus_y, true);
  return frame_bytes + coeffs + (output == GpuOutput::coefficients ? 0 : tokens);
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
  check(o.stages, 1, gpu::kMaxStages, "stages");
  if (o.balance_threads != 0) {
    check(o.balance_threads, 2, 1024, "balanced threads");
    if (o.producers + o.entropy_threads != o.balance_threads)
      throw UsageError("a self-balancing split needs producers + entropy threads = " +
                       std::to_string(o.balance_threads));
  }
}

void apply_default_counts(PipelineOptions& o, int cores, int producers, int entropy_threads,
                          int slots, bool in_memory, int total_threads) {
  cores = std::max(1, cores);
  // cpu mode on frames in memory: the producers only hand the frames out (no copy), so one
  // does, and every core transforms and codes.
  const bool lent = in_memory && !uses_gpu(o.mode);
  // One core left to the threads outside the split: sok's dispatcher; aok's dispatcher and its
  // downloader + writer, which mostly wait on events.
  const int reserved = uses_gpu(o.mode) ? 1 : 0;
  if (producers <= 0 && entropy_threads <= 0 && (!lent || total_threads > 0)) {
    // The split balances itself from a start of 2 producers (1 with two threads; 1 for
    // frames in memory, which a producer only hands out and, in aok, uploads).
    const int threads = std::max(2, total_threads > 0 ? total_threads : cores - reserved);
    o.balance_threads = threads;
    o.producers = std::min(in_memory ? 1 : 2, threads - 1);
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
  // One frame in flight per thread and two more, in the GPU modes too: their slots are
  // page-locked memory allocated before the first frame, and more of them cost more start-up
  // than they gain (docs/BENCHMARKS.md, Short clips and start-up).
  o.slots = slots > 0 ? slots : std::max(8, threads + 2);
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

/// One frame in flight: which slot holds it and its position in the stream.
struct Job {
  int slot = -1;
  std::int64_t index = -1;
  int record = -1;  // where its JPEG bytes go (the slot's own, or one of its own: see Run)
};

/// Finished frames waiting for their turn. Holds at most one entry per frame record, so its
/// storage is reserved once. The writer takes frames strictly by index.
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
  int active_workers() const { return workers_.load(std::memory_order_relaxed); }
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
/// Where the transform runs is the Offloader's business (offload.hpp), what is measured the
/// RunObserver's (observer.hpp); Run moves frames between the threads.
class Run {
 public:
  Run(FrameSource& source, const EncodeOptions& encode, io::FrameSink& sink,
      const PipelineOptions& options, const ProgressFn& progress, const std::atomic<bool>* stop)
      : source_(source), encode_(encode), sink_(sink), opt_(options), progress_(progress),
        stop_(stop), observer_(options.trace) {}

  /// Makes the run's slots, queues and offloader (a GPU mode: its devices' contexts and
  /// buffers) without touching the source's frames: may run on another thread while a run
  /// before it still reads the source (PipelineOptions::cpu_start). execute() calls it when
  /// nobody did.
  void make();
  /// Frames a run before this one has written (the cpu start): this run's first frame is
  /// frame `frames` of the stream, and its progress counts from there and from `origin`.
  void continue_after(std::int64_t frames, std::uint64_t bytes, Clock::time_point origin) {
    first_index_ = frames;
    prior_bytes_ = bytes;
    origin_ = origin;
    has_origin_ = true;
  }
  /// When *pause becomes true, no new frame is read, as with a stop (the hand-over).
  void pause_when(const std::atomic<bool>* pause) { pause_ = pause; }
  /// A producer saw the end of the stream.
  bool reached_end() const { return ended_.load(); }

  Stats execute();

 private:
  void begin();  // the source's part of the set-up: right before the threads start
  void producer(int id);
  void dispatcher(int buffer);
  void downloader(int buffer);
  void worker(int id);
  void writer();
  void rebalance();  // writer thread, after each frame (balancing only)
  void fail(std::exception_ptr e);
  /// A dispatcher or downloader that fed the entropy queue has left; the last one closes it.
  void feeder_done();
  /// Threads to code frame `job` on: 1, except at the end of the stream when fewer frames are
  /// left than workers wait idle (the last frames of a short clip, or one large picture): then
  /// the frame's MCU rows are coded on that share of the idle workers' cores as well.
  int coding_threads();
  bool stopping() const {
    return (stop_ && stop_->load(std::memory_order_relaxed)) ||
           (pause_ && pause_->load(std::memory_order_relaxed));
  }

  FrameSource& source_;
  const EncodeOptions encode_;
  io::FrameSink& sink_;
  const PipelineOptions opt_;
  const ProgressFn& progress_;
  const std::atomic<bool>* stop_;
  const std::atomic<bool>* pause_ = nullptr;
  RunObserver observer_;  // counters, NVTX, trace (opt_.trace may be null)
  // Frames in memory used where they lie, no copy into a slot: transformed (cpu mode) or,
  // when page-locked, uploaded (sok_pinned, aok) from there (Offloader::lends).
  bool lend_ = false;
  // The slot goes back to the pool when its frame is coded (records of their own), not when
  // it is written (Offloader::frees_slots_when_coded).
  bool free_when_coded_ = false;

  SourceFormat format_;
  FrameGeometry geometry_;
  QuantTables tables_;
  std::unique_ptr<Offloader> offload_;  // the mode: where the transform runs; owns the slots
  // Frame records: a frame's JPEG bytes, from its worker to the writer (reused: the coders keep
  // their capacity).
  std::vector<std::vector<std::uint8_t>> records_;

  // Made by setup, sized by the offloader's slots (nothing can block on their capacity):
  // slots ready for a producer, every buffer's in one pool (see free_when_coded_); with
  // records of their own, records ready for a producer; per stream buffer, frames read (aok:
  // upload issued) waiting for its dispatcher and, with a downloader, frames whose header
  // download was issued; frames whose coefficients/tokens are produced or on their way (aok);
  // the coded frames waiting for the writer.
  std::unique_ptr<BoundedQueue<int>> free_slots_, free_records_;
  std::vector<std::unique_ptr<BoundedQueue<Job>>> to_gpu_, to_download_;
  std::unique_ptr<BoundedQueue<Job>> to_entropy_;
  std::unique_ptr<ReorderBuffer> reorder_;

  std::atomic<int> producers_left_{0}, workers_left_{0};
  std::atomic<int> feeders_left_{0};  // dispatchers/downloaders still feeding to_entropy_
  // The end of the stream, for coding_threads: every frame is read; frames read, frames a
  // worker has taken, workers coding now.
  std::atomic<bool> read_all_{false};
  std::atomic<bool> ended_{false};  // a producer saw the end of the stream
  bool made_ = false;
  // The frames written before this run (continue_after): its first index, their bytes, and
  // when the whole encode started (its progress reports count from there).
  std::int64_t first_index_ = 0;
  std::uint64_t prior_bytes_ = 0;
  Clock::time_point origin_;
  bool has_origin_ = false;
  std::atomic<std::int64_t> frames_read_{0}, frames_taken_{0};
  std::atomic<int> coding_{0};
  std::atomic<std::int64_t> split_frames_{0};
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

  std::int64_t frames_ = 0;
  std::uint64_t jpeg_bytes_ = 0;
  double first_frame_s_ = 0;  // writer: when the first frame was written
};

void Run::fail(std::exception_ptr e) {
  {
    std::lock_guard<std::mutex> lock(error_mutex_);
    if (!error_) error_ = e;  // first exception wins
  }
  for (auto* q : {free_slots_.get(), free_records_.get()})
    if (q) q->abort();
  for (auto& q : to_gpu_) q->abort();
  for (auto& q : to_download_) q->abort();
  if (to_entropy_) to_entropy_->abort();
  if (reorder_) reorder_->abort();
  gate_.abort();
}

void Run::feeder_done() {
  if (feeders_left_.fetch_sub(1) != 1) return;
  to_entropy_->close();
  gate_.release_workers();
}

void Run::make() {
  if (made_) return;
  format_ = source_.format();
  validate(encode_);
  validate(opt_);
  const Subsampling sampling = !format_.is_planar() && format_.format == PixelFormat::gray8
                                   ? Subsampling::gray
                                   : encode_.subsampling;
  geometry_ = make_geometry(format_.width, format_.height, sampling);
  tables_ = make_quant_tables(encode_, geometry_.num_components);

  offload_ = make_offloader(
      opt_.mode, OffloadSetup{source_, format_, geometry_, tables_, encode_, opt_, observer_});
  lend_ = offload_->lends();
  free_when_coded_ = offload_->frees_slots_when_coded();
  const auto slots = static_cast<std::size_t>(offload_->slot_count());
  const int buffers = offload_->buffers();
  const std::size_t per_buffer = slots / static_cast<std::size_t>(std::max(1, buffers));
  for (int b = 0; b < buffers; ++b) {
    to_gpu_.push_back(std::make_unique<BoundedQueue<Job>>(per_buffer));
    if (offload_->downloader()) to_download_.push_back(std::make_unique<BoundedQueue<Job>>(per_buffer));
  }
  // Frame records: one per slot (record i is slot i's), or twice the slots where a slot goes
  // back to the pool once its frame is coded: there the records bound how far the frames in
  // flight may run ahead of the writer.
  records_.resize(free_when_coded_ ? 2 * slots : slots);
  free_slots_ = std::make_unique<BoundedQueue<int>>(slots);
  free_records_ = std::make_unique<BoundedQueue<int>>(records_.size());
  to_entropy_ = std::make_unique<BoundedQueue<Job>>(slots);
  reorder_ = std::make_unique<ReorderBuffer>(static_cast<int>(records_.size()));
  for (int i : offload_->first_free_slots()) free_slots_->push(i);  // every slot starts free
  if (free_when_coded_)
    for (std::size_t r = 0; r < records_.size(); ++r) free_records_->push(static_cast<int>(r));
  const bool balance = opt_.balance_threads >= 2;
  producer_threads_ = balance ? opt_.balance_threads - 1 : opt_.producers;
  worker_threads_ = balance ? opt_.balance_threads - 1 : opt_.entropy_threads;
  gate_.set(opt_.producers, opt_.entropy_threads);
  observer_.add_tracks(producer_threads_, offload_->buffer_tracks(), worker_threads_);
  made_ = true;
}

void Run::begin() {
  offload_->before_start();
  source_.prepare(producer_threads_);
}

void Run::producer(int id) {
  try {
    ThreadState thread;
    thread.id = id;
    for (;;) {
      if (!gate_.wait_producer(id)) break;  // released while not needed
      if (stopping()) break;
      Job job;
      // Records of their own: a record first (bounds the frames ahead of the writer), then
      // whichever slot of any buffer is free first.
      if (free_when_coded_ && !free_records_->pop(job.record)) break;  // aborted
      if (!free_slots_->pop(job.slot)) break;                          // aborted
      if (!free_when_coded_) job.record = job.slot;
      auto give_back = [&] {  // for the other producers, who may be waiting for them
        free_slots_->push(job.slot);
        if (free_when_coded_) free_records_->push(job.record);
      };
      if (stopping()) {
        give_back();
        break;
      }
      bool got = false;
      FrameSlot& slot = offload_->slot(job.slot);
      {
        auto scope = observer_.scope(SpanKind::read, id);
        if (offload_->reads_device()) {
          got = offload_->read_device(thread, job.slot, job.index);
          slot.frame = nullptr;
        } else if (lend_) {
          got = source_.lend(id, slot.frame, job.index);
        } else {
          got = source_.read_into(id, slot.pixels, format_.row_bytes(), job.index);
          slot.frame = slot.pixels;
        }
        scope.set_frame(job.index);
      }
      if (!got) {
        ended_.store(true);
        give_back();  // the other producers will see the end too
        break;
      }
      // The last frame of a stream of known length: no frame is read after it, whatever the
      // producers still do before they see the end.
      if (first_index_ + frames_read_.fetch_add(1, std::memory_order_relaxed) + 1 ==
          source_.frame_count())
        read_all_.store(true);
      offload_->stage(thread, job.slot, job.index);  // aok: the upload
      // The frame goes to its slot's stream buffer (if any) or straight to the workers.
      BoundedQueue<Job>& next =
          to_gpu_.empty() ? *to_entropy_ : *to_gpu_[static_cast<std::size_t>(slot.buffer)];
      if (!next.push(job)) break;  // aborted
    }
  } catch (...) {
    fail(std::current_exception());
  }
  gate_.release_producers();  // the end, a stop or an abort: producers still waiting leave
  // The last producer out closes the next stage's input.
  if (producers_left_.fetch_sub(1) == 1) {
    read_all_.store(true);
    if (to_gpu_.empty()) {
      to_entropy_->close();
      gate_.release_workers();
    } else {
      for (auto& q : to_gpu_) q->close();
    }
  }
}

void Run::dispatcher(int buffer) {
  const auto b = static_cast<std::size_t>(buffer);
  const bool downloader = !to_download_.empty();
  try {
    offload_->enter_buffer(buffer);
    Job job;
    while (to_gpu_[b]->pop(job)) {
      if (opt_.test_hooks) opt_.test_hooks->before_dispatch(buffer, job.index);
      offload_->transform(buffer, job.slot, job.index);
      observer_.transformed(buffer);
      if (!(downloader ? *to_download_[b] : *to_entropy_).push(job)) break;
    }
  } catch (...) {
    fail(std::current_exception());
  }
  if (downloader)
    to_download_[b]->close();
  else
    feeder_done();
}

void Run::downloader(int buffer) {
  const auto b = static_cast<std::size_t>(buffer);
  try {
    offload_->enter_buffer(buffer);
    Job job;
    while (to_download_[b]->pop(job)) {
      offload_->download(buffer, job.slot, job.index);
      if (!to_entropy_->push(job)) break;
    }
  } catch (...) {
    fail(std::current_exception());
  }
  feeder_done();
}

void Run::worker(int id) {
  try {
    ThreadState thread;
    thread.id = id;
    Job job;
    std::vector<std::uint8_t> rgb;  // planar frames for on_frame: the RGB that was encoded
    std::vector<std::int16_t> expanded;  // --progressive from tokens: the frame's coefficients
    while (gate_.wait_worker(id) && to_entropy_->pop(job)) {
      const FrameSlot& s = offload_->slot(job.slot);
      std::vector<std::uint8_t>& jpeg = records_[static_cast<std::size_t>(job.record)];
      offload_->fetch(thread, job.slot, job.index);  // cpu: the transform; aok: the wait
      const int threads = coding_threads();
      // The frame's pixels are uploaded (or transformed where they lay): a lent frame's page
      // locks may go. Its bytes stay readable (on_frame below).
      if (lend_) source_.release(job.index);
      {
        auto scope = observer_.scope(SpanKind::entropy, id, job.index);
        const TransformResult r = offload_->result(job.slot);
        if (r.is_tokens) {
          if (encode_.progressive)  // the scans need whole coefficient blocks back
            encode_tokens_progressive(geometry_, tables_, r.tokens, encode_, expanded, jpeg);
          else
            encode_tokens(geometry_, tables_, r.tokens, encode_, jpeg, threads);
        } else {
          encode_coefficients(geometry_, tables_, r.coeffs, encode_, jpeg, threads);
        }
        if (encode_.density != JfifDensity{}) set_density(encode_.density, jpeg);
      }
      coding_.fetch_sub(1, std::memory_order_relaxed);
      if (opt_.on_frame) {
        ImageView view{s.frame, format_.width, format_.height, format_.format,
                       format_.row_bytes()};
        if (format_.is_planar()) {
          const PlanarView planar =
              planar_view(s.frame, format_.width, format_.height, format_.planar);
          rgb.resize(static_cast<std::size_t>(format_.width) * format_.height * 3);
          planar_to_rgb(planar, rgb.data(), static_cast<std::size_t>(format_.width) * 3);
          view = ImageView{rgb.data(), format_.width, format_.height, PixelFormat::rgb24,
                           static_cast<std::size_t>(format_.width) * 3};
        }
        opt_.on_frame(job.index, view, jpeg);
      }
      if (opt_.on_jpeg) opt_.on_jpeg(job.index, jpeg);
      // The slot's pixels and result are used; the JPEG waits in its record.
      if (free_when_coded_) free_slots_->push(job.slot);
      reorder_->put(job);
    }
  } catch (...) {
    fail(std::current_exception());
  }
  if (workers_left_.fetch_sub(1) == 1) reorder_->close();
}

int Run::coding_threads() {
  frames_taken_.fetch_add(1, std::memory_order_relaxed);
  const int others = coding_.fetch_add(1, std::memory_order_relaxed);
  // Parts of at least half a megapixel, at most 8.
  const int most = std::min(8, parts_worth(format_.width, format_.height));
  if (most < 2 || !read_all_.load()) return 1;
  const std::int64_t waiting = std::max<std::int64_t>(
      0, frames_read_.load(std::memory_order_relaxed) - frames_taken_.load(std::memory_order_relaxed));
  const int idle = gate_.active_workers() - others - 1;
  // The idle workers' cores, shared by this frame and the frames still waiting for a worker.
  const std::int64_t share = (idle - waiting) / (waiting + 1);
  const int threads = static_cast<int>(std::clamp<std::int64_t>(1 + share, 1, most));
  if (threads > 1) split_frames_.fetch_add(1, std::memory_order_relaxed);
  return threads;
}

void Run::writer() {
  try {
    Job job;
    for (std::int64_t next = first_index_; reorder_->take(next, job); ++next) {
      const std::vector<std::uint8_t>& jpeg = records_[static_cast<std::size_t>(job.record)];
      {
        auto scope = observer_.scope(SpanKind::write, 0, job.index);
        sink_.write_frame(jpeg.data(), jpeg.size());
      }
      if (frames_ == 0) first_frame_s_ = seconds_since(start_);
      ++frames_;
      jpeg_bytes_ += jpeg.size();
      // Recycled only now: the slot where it carries its frame to the write (its pixels,
      // coefficients and bytes are used); else the record (the slot went back when the frame
      // was coded).
      if (free_when_coded_)
        free_records_->push(job.record);
      else
        free_slots_->push(job.slot);
      if (opt_.balance_threads >= 2) rebalance();
      if (progress_)
        progress_(mjpeg::Progress{first_index_ + frames_, prior_bytes_ + jpeg_bytes_,
                                  seconds_since(has_origin_ ? origin_ : start_)});
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
  now.produce_ns = observer_.produce_ns();
  now.consume_ns = observer_.consume_ns();
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
  make();  // throws directly: no thread is running yet
  begin();
  const double setup_s = seconds_since(start_);
  // Time zero of the trace and of the GPU times: when the stages start (after the setup).
  const Clock::time_point stages_start = Clock::now();
  observer_.start(stages_start);
  offload_->start_clock(stages_start);

  const int buffers = offload_->buffers();
  producers_left_ = producer_threads_;
  workers_left_ = worker_threads_;
  feeders_left_ = buffers;
  std::vector<std::thread> threads;
  try {
    for (int p = 0; p < producer_threads_; ++p) threads.emplace_back(&Run::producer, this, p);
    for (int b = 0; b < buffers; ++b) {
      threads.emplace_back(&Run::dispatcher, this, b);
      if (!to_download_.empty()) threads.emplace_back(&Run::downloader, this, b);
    }
    for (int w = 0; w < worker_threads_; ++w) threads.emplace_back(&Run::worker, this, w);
  } catch (...) {
    // Thread creation failed: stop what runs. The counters of the missing threads never reach
    // zero, but abort() has already released everybody.
    fail(std::current_exception());
  }
  writer();  // the calling thread writes
  for (std::thread& t : threads) t.join();
  offload_->drain();
  if (error_) std::rethrow_exception(error_);

  Stats st;
  st.frames = frames_;
  st.jpeg_bytes = jpeg_bytes_;
  st.setup_s = setup_s;
  st.first_frame_s = first_frame_s_;
  observer_.fill(st);
  st.producers = gate_.producers();
  st.entropy_threads = gate_.workers();
  st.rebalances = rebalances_;
  st.slots = offload_->slot_count() / std::max(1, buffers);
  st.split_frames = split_frames_.load();
  st.upload_bytes = static_cast<std::uint64_t>(frames_) * offload_->upload_bytes();
  st.wall_s = seconds_since(start_);
  return st;
}

/// One encode's statistics from its two runs: the cpu start (`cpu`) and the GPU's (`gpu`).
/// Busy times and counts add up; the split, the buffers and the GPU's times are the GPU run's;
/// the cpu start's own fields the cpu run's.
Stats joined(const Stats& cpu, const Stats& gpu) {
  Stats st = gpu;
  st.cpu_start_frames = cpu.cpu_start_frames;
  st.gpu_ready_s = cpu.gpu_ready_s;
  st.gpu_problem = cpu.gpu_problem;
  st.frames = cpu.frames + gpu.frames;
  st.jpeg_bytes = cpu.jpeg_bytes + gpu.jpeg_bytes;
  st.setup_s = cpu.setup_s;
  st.first_frame_s = cpu.frames > 0 ? cpu.first_frame_s : cpu.wall_s + gpu.first_frame_s;
  for (auto field : {&Stats::read_s, &Stats::upload_issue_s, &Stats::gpu_s,
                     &Stats::transform_cpu_s, &Stats::download_issue_s, &Stats::coeff_wait_s,
                     &Stats::entropy_s, &Stats::write_s})
    st.*field = cpu.*field + gpu.*field;
  st.split_frames = cpu.split_frames + gpu.split_frames;
  st.rebalances = cpu.rebalances + gpu.rebalances;
  return st;
}

/// PipelineOptions::cpu_start: the cpu mode encodes while the GPU run is made on another
/// thread, and the GPU run goes on from the first frame the CPU did not read.
Stats encode_with_cpu_start(FrameSource& source, const EncodeOptions& encode,
                            io::FrameSink& sink, const PipelineOptions& options,
                            const ProgressFn& progress, const std::atomic<bool>* stop) {
  const Clock::time_point start = Clock::now();
  PipelineOptions cpu_options = *options.cpu_start;
  cpu_options.cpu_start.reset();
  if (uses_gpu(cpu_options.mode))
    throw UsageError(std::string("a cpu start runs in the cpu mode, not ") +
                     to_string(cpu_options.mode));
  PipelineOptions gpu_options = options;
  gpu_options.cpu_start.reset();
  validate(cpu_options);
  validate(gpu_options);  // what is wrong with the options is an error, not a GPU problem

  Run gpu(source, encode, sink, gpu_options, progress, stop);
  std::atomic<bool> ready{false};
  double ready_s = 0;
  std::string problem;
  std::thread maker([&] {
    try {
      if (gpu_options.check_gpu) gpu_options.check_gpu();
      gpu.make();
      if (gpu_options.test_hooks) gpu_options.test_hooks->before_handover();
      ready_s = seconds_since(start);
      ready.store(true);
    } catch (const std::exception& e) {
      problem = e.what();
    } catch (...) {
      problem = "the GPU's set-up failed";
    }
  });
  Run cpu(source, encode, sink, cpu_options, progress, stop);
  cpu.pause_when(&ready);
  Stats first;
  try {
    first = cpu.execute();
  } catch (...) {
    maker.join();
    throw;
  }
  maker.join();
  first.cpu_start_frames = first.frames;
  first.gpu_ready_s = ready_s;
  first.gpu_problem = problem;
  if (!ready.load() || cpu.reached_end() || (stop && stop->load())) {
    first.wall_s = seconds_since(start);
    return first;
  }
  const double handover_s = seconds_since(start);
  gpu.continue_after(first.frames, first.jpeg_bytes, start);
  Stats st = joined(first, gpu.execute());
  st.handover_s = handover_s;
  st.wall_s = seconds_since(start);
  return st;
}

}  // namespace

Stats encode_stream(FrameSource& source, const EncodeOptions& encode, io::FrameSink& sink,
                    const PipelineOptions& options, const ProgressFn& progress,
                    const std::atomic<bool>* stop) {
  if (options.cpu_start)  // (also from cpu to cpu: the tests of the hand-over run anywhere)
    return encode_with_cpu_start(source, encode, sink, options, progress, stop);
  Run run(source, encode, sink, options, progress, stop);
  return run.execute();
}

}  // namespace mjpeg::pipeline
