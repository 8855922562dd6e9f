// The GPU modes' offloaders (offload.hpp) on the stream buffer (stream_buffer.hpp): one stream
// buffer per device-list entry, each with its own K slots, streams and events, allocated on its
// device. All slots of all buffers share the run's free pool; a slot goes back once its frame
// is coded (frees_slots_when_coded), so frames go to whichever device finishes first.
//   SyncOffloader  (sok, sok_pinned): the dispatcher's blocking copy in, launch, wait, copy
//                  out (StreamBuffer::offload_sync); host slots pageable or page-locked.
//   AsyncOffloader (aok): PICC; the producer issues the upload, the dispatcher the kernel and
//                  the download, the downloader (token output) the exact-length copy, the
//                  worker waits for result_ready.
// Every thread selects the device of the buffer it is about to call (ThreadState::device).
#include <unistd.h>

#include <algorithm>
#include <string>

#include "device_info.hpp"
#include "gpu_transform.hpp"
#include "mjpeg/error.hpp"
#include "pipeline/offload.hpp"
#include "pipeline/stream_buffer.hpp"
#include "pipeline/test_hooks.hpp"

namespace mjpeg::pipeline {

namespace {

/// The default slot count of aok where the frames are uploaded from where they lie (lent) or
/// are already on the device: one frame per thread and two more (apply_default_counts), and
/// kGpuStageSlots for the frames in the GPU's stages (the upload, the kernel stream's queue,
/// the downloads) and those waiting for a worker. A slot then holds no page-locked pixels, so
/// the extra ones cost little set-up; with one per thread the kernel stream waited for frames
/// whose slots sat in those stages (planar 1080p compare on an H100 host: 17 slots 10953-11547
/// fps, 24 slots 12165-12260, docs/BENCHMARKS.md). No more slots than a known frame count.
int with_gpu_stage_slots(int k, std::int64_t frames) {
  constexpr int kGpuStageSlots = 8;
  const std::int64_t more =
      frames < 0 ? kGpuStageSlots : std::clamp<std::int64_t>(frames - k, 0, kGpuStageSlots);
  return k + static_cast<int>(more);
}

class GpuOffloader : public Offloader {
 public:
  GpuOffloader(const OffloadSetup& s, Offload mode)
      : source_(s.source), format_(s.format), geometry_(s.geometry), options_(s.options),
        observer_(s.observer), hooks_(s.options.test_hooks) {
    const OffloadTraits traits = traits_of(mode);
    // The pageable-SOK baseline copies into its own buffers, as a plain program would.
    lend_ = source_.lends_frames() && source_.lent_frames_pinned() && traits.pinned_host;
    // Frames in device memory go straight into the device pixels (aok); sok reads them to
    // the host like any frame (its blocking copy in is the mode), and so does aok when the
    // frames' pixels are wanted on the host (on_frame: --psnr, --dump-input).
    device_ = source_.device_frames() && traits.asynchronous && !options_.on_frame;
    const std::vector<int> devices = device_list(options_);
    const GpuOutput output = gpu_output_for(options_, s.encode);
    int k = options_.slots;
    if (options_.slots_auto && traits.asynchronous && (lend_ || device_))
      k = with_gpu_stage_slots(k, source_.frame_count());
    if (options_.slots_auto) k = fitting_slots(k, devices, output);
    timing_ = options_.gpu_timing || options_.trace != nullptr;
    downloader_ = traits.asynchronous && output == GpuOutput::tokens;
    k_ = k;
    devices_ = devices;
    kernel_streams_ = kernel_streams_for(mode, s.tables.rdo);
    observer_.set_buffers(devices, timing_, kernel_streams_);
    slots_.resize(static_cast<std::size_t>(k) * devices.size());
    for (int b = 0; b < static_cast<int>(devices.size()); ++b) {
      // Each buffer selects its device before it allocates (StreamBuffer::DeviceSelect).
      on_buffer(b, [&] {
        gpus_.push_back(std::make_unique<StreamBuffer>(
            geometry_, s.tables, format_, k, mode, devices[b], options_.variant,
            options_.stages, timing_, output, s.encode, !lend_ && !device_));
      });
      if (lend_) {
        const FrameSource::LockWindows w = source_.lent_lock_windows();
        if (w.bytes > 0) gpus_.back()->split_copies_at(w.origin, w.bytes);
      }
      for (int i = 0; i < k; ++i) {
        FrameSlot& slot = slots_[static_cast<std::size_t>(b) * k + i];
        slot.pixels = gpus_.back()->host_pixels(i);
        slot.buffer = b;
        slot.local = i;
      }
    }
  }

  // Every slot starts free, the buffers' slots interleaved, so that the first frames go to
  // every device in turn; from then on each comes back once its frame is coded, and the next
  // frame goes to whichever buffer's slot is back first.
  std::vector<int> first_free_slots() const override {
    std::vector<int> order;
    const int buffers = static_cast<int>(gpus_.size());
    for (int i = 0; i < k_; ++i)
      for (int b = 0; b < buffers; ++b) order.push_back(b * k_ + i);
    return order;
  }
  int buffers() const override { return static_cast<int>(gpus_.size()); }
  bool downloader() const override { return downloader_; }
  bool frees_slots_when_coded() const override { return true; }
  /// Frames in device memory (NVDEC's, the library's device frames in aok) go up not at all.
  std::size_t upload_bytes() const override { return device_ ? 0 : gpus_[0]->upload_bytes(); }

  void before_start() override {
    if (lend_) source_.pin_lent_frames();
  }
  void start_clock(std::chrono::steady_clock::time_point origin) override {
    if (!timing_) return;
    for (std::size_t b = 0; b < gpus_.size(); ++b)
      on_buffer(static_cast<int>(b), [&] { gpus_[b]->start_clock(origin); });
  }
  void drain() noexcept override {
    for (auto& gpu : gpus_) gpu->drain();
  }
  void enter_buffer(int buffer) override {
    on_buffer(buffer, [&] { gpus_[static_cast<std::size_t>(buffer)]->bind_thread(); });
  }

  TransformResult result(int slot) override {
    const FrameSlot& s = slots_[static_cast<std::size_t>(slot)];
    const StreamBuffer& gpu = *gpus_[static_cast<std::size_t>(s.buffer)];
    const TransformResult r = gpu.result(s.local);
    observer_.downloaded(gpu.download_bytes(s.local), r.is_tokens);
    return r;
  }

 protected:
  /// "GPU 1", or "GPU 0 buffer 2" where the device repeats in the list (trace tracks).
  std::string track_prefix(int buffer) const {
    const int device = devices_[static_cast<std::size_t>(buffer)];
    std::string gpu = "GPU " + std::to_string(device);
    if (std::count(devices_.begin(), devices_.end(), device) > 1)
      gpu += " buffer " + std::to_string(buffer + 1);
    return gpu;
  }
  /// "CUDA device 1", or "CUDA device 0 (stream buffer 2 of 3)" where the device repeats.
  std::string buffer_name(int buffer) const {
    const int device = devices_[static_cast<std::size_t>(buffer)];
    const auto same = std::count(devices_.begin(), devices_.end(), device);
    std::string name = "CUDA device " + std::to_string(device);
    if (same > 1)
      name += " (stream buffer " + std::to_string(buffer + 1) + " of " +
              std::to_string(devices_.size()) + ")";
    return name;
  }
  /// Runs `fn` (CUDA calls of stream buffer `buffer`); an Error from it comes out with the
  /// buffer's device named in front.
  template <class Fn>
  void on_buffer(int buffer, Fn&& fn) const {
    try {
      fn();
    } catch (const UsageError&) {
      throw;
    } catch (const Error& e) {
      throw Error(buffer_name(buffer) + ": " + e.what());
    }
  }
  /// Makes `buffer`'s device current in the calling thread unless it already is.
  void bind(ThreadState& thread, int buffer) {
    const int device = devices_[static_cast<std::size_t>(buffer)];
    if (device == thread.device) return;
    on_buffer(buffer, [&] { gpus_[static_cast<std::size_t>(buffer)]->bind_thread(); });
    thread.device = device;
  }
  /// Test hooks only: the point where a transform of `slot` is about to be issued.
  void before_transform(const FrameSlot& slot, bool sync) {
    if (!hooks_) return;
    const StreamBuffer& gpu = *gpus_[static_cast<std::size_t>(slot.buffer)];
    TransformHookPoint at;
    at.buffer = slot.buffer;
    at.slot = slot.local;
    at.stream = gpu.transform_stream(sync);
    at.device_pixels = gpu.device_pixels(slot.local);
    at.device_coeffs = gpu.device_coeffs(slot.local);
    hooks_->before_transform(at);
  }
  /// Timed runs: the GPU spans of the frame in `slot`, once its result is on the host.
  void log_gpu(int slot, std::int64_t index) {
    const FrameSlot& s = slots_[static_cast<std::size_t>(slot)];
    GpuTimes t;
    on_buffer(s.buffer,
              [&] { t = gpus_[static_cast<std::size_t>(s.buffer)]->gpu_times(s.local); });
    observer_.gpu_frame(s.buffer, index, t);
  }
  StreamBuffer& gpu_of(const FrameSlot& s) { return *gpus_[static_cast<std::size_t>(s.buffer)]; }

  FrameSource& source_;
  const SourceFormat& format_;
  const FrameGeometry& geometry_;
  const PipelineOptions& options_;
  RunObserver& observer_;
  OffloadTestHooks* const hooks_;
  bool timing_ = false;      // GPU event timing (gpu_timing or a trace)
  bool downloader_ = false;  // aok with token output: a downloader thread between the stages
  int k_ = 0;                // slots per stream buffer
  int kernel_streams_ = 1;   // per stream buffer (StreamBuffer::kernel_streams)
  std::vector<int> devices_;
  std::vector<std::unique_ptr<StreamBuffer>> gpus_;  // one per device-list entry

 private:
  int fitting_slots(int k, const std::vector<int>& devices, GpuOutput output) const;
};

/// The default slot count for a GPU mode, lowered (to no fewer than the entropy workers + 2)
/// where that many slots would take more than half the device's free memory or 8 GB of pinned
/// host memory (a quarter of it where the machine has less than 32 GB). Several stream
/// buffers share both: each device's half among the buffers on it, the pinned budget among
/// all buffers. The result holds for every buffer.
int GpuOffloader::fitting_slots(int k, const std::vector<int>& devices, GpuOutput output) const {
  const std::size_t frame = format_.frame_bytes();
  const std::size_t coeffs = geometry_.coefficient_count() * sizeof(std::int16_t);
  const std::size_t device_per_slot = device_bytes_per_slot(frame, geometry_, output);
  // Pixels (none when the frames are lent: they are uploaded from where they lie), result.
  const std::size_t pinned_per_slot = (lend_ || device_ ? 0 : frame) + coeffs;
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
  const int floor = std::min(k, options_.entropy_threads + options_.producers + 2);
  return std::max(floor, static_cast<int>(fit));
}

/// sok, sok_pinned: the dispatcher makes the blocking calls; nothing to do on the producer or
/// the worker side.
class SyncOffloader final : public GpuOffloader {
 public:
  using GpuOffloader::GpuOffloader;

  std::vector<BufferTracks> buffer_tracks() const override {
    std::vector<BufferTracks> all;
    for (int b = 0; b < buffers(); ++b) {
      BufferTracks t;
      t.dispatcher = track_prefix(b) + " dispatcher (blocking calls)";
      t.streams = {track_prefix(b) + " (legacy default stream)"};  // copies and kernel alike
      all.push_back(t);
    }
    return all;
  }

  void transform(int buffer, int slot, std::int64_t index) override {
    const FrameSlot& s = slots_[static_cast<std::size_t>(slot)];
    {
      auto scope = observer_.scope(SpanKind::sync, buffer, index);
      on_buffer(buffer, [&] {
        before_transform(s, true);
        gpu_of(s).offload_sync(s.local, s.frame);
      });
    }
    if (timing_) log_gpu(slot, index);
  }

  void fetch(ThreadState&, int, std::int64_t) override {}  // on the host since transform()
};

/// aok: PICC (stream_buffer.hpp). The producer initiates, the GPU streams complete.
class AsyncOffloader final : public GpuOffloader {
 public:
  using GpuOffloader::GpuOffloader;

  std::vector<BufferTracks> buffer_tracks() const override {
    std::vector<BufferTracks> all;
    for (int b = 0; b < buffers(); ++b) {
      const std::string gpu = track_prefix(b);
      BufferTracks t;
      t.dispatcher = gpu + " dispatcher";
      t.downloader = downloader_ ? gpu + " downloader" : "";
      // "kernel stream", then "kernel stream 2" ... where a buffer has several.
      t.streams = {gpu + " upload stream"};
      for (int k = 0; k < kernel_streams_; ++k)
        t.streams.push_back(gpu + " kernel stream" + (k > 0 ? " " + std::to_string(k + 1) : ""));
      t.streams.push_back(gpu + " download stream");
      if (downloader_) t.streams.push_back(gpu + " download stream (token bodies)");
      t.upload = 0;
      t.kernel = 1;
      t.kernels = kernel_streams_;
      t.download = 1 + kernel_streams_;
      t.body = downloader_ ? t.download + 1 : t.download;
      all.push_back(t);
    }
    return all;
  }

  bool read_device(ThreadState& thread, int slot, std::int64_t& index) override {
    const FrameSlot& s = slots_[static_cast<std::size_t>(slot)];
    bind(thread, s.buffer);
    struct Target final : FrameSource::DeviceSlot {
      StreamBuffer& gpu;
      int local;
      Target(StreamBuffer& g, int l) : gpu(g), local(l) {}
      void write(const std::function<void(std::uint8_t*, gpu::StreamHandle)>& work) override {
        gpu.write_async(local, work);
      }
    } target(gpu_of(s), s.local);
    bool got = false;
    on_buffer(s.buffer, [&] { got = source_.read_device(thread.id, target, index); });
    return got;
  }

  void stage(ThreadState& thread, int slot, std::int64_t index) override {
    if (device_) return;  // read_device wrote the device pixels
    const FrameSlot& s = slots_[static_cast<std::size_t>(slot)];
    bind(thread, s.buffer);
    auto scope = observer_.scope(SpanKind::upload, thread.id, index);
    // PICC step 1: initiate; the count says the event exists.
    on_buffer(s.buffer, [&] { gpu_of(s).upload_async(s.local, s.frame); });
  }

  void transform(int buffer, int slot, std::int64_t index) override {
    const FrameSlot& s = slots_[static_cast<std::size_t>(slot)];
    auto scope = observer_.scope(SpanKind::dispatch, buffer, index);
    // PICC: the consumer completes on the GPU.
    on_buffer(buffer, [&] {
      before_transform(s, false);
      gpu_of(s).transform_async(s.local);
    });
  }

  void download(int buffer, int slot, std::int64_t index) override {
    const FrameSlot& s = slots_[static_cast<std::size_t>(slot)];
    // Idle until the header is on the host: not busy time.
    on_buffer(buffer, [&] { gpu_of(s).wait_header(s.local); });
    auto scope = observer_.scope(SpanKind::download, buffer, index);
    on_buffer(buffer, [&] { gpu_of(s).download_async(s.local); });  // exactly the stream's length
  }

  void fetch(ThreadState& thread, int slot, std::int64_t index) override {
    const FrameSlot& s = slots_[static_cast<std::size_t>(slot)];
    bind(thread, s.buffer);
    {
      auto scope = observer_.scope(SpanKind::wait, thread.id, index);
      on_buffer(s.buffer, [&] { gpu_of(s).wait_result(s.local); });
    }
    if (timing_) log_gpu(slot, index);
  }
};

}  // namespace

std::unique_ptr<Offloader> make_gpu_offloader(Offload mode, const OffloadSetup& setup) {
  if (traits_of(mode).asynchronous) return std::make_unique<AsyncOffloader>(setup, mode);
  return std::make_unique<SyncOffloader>(setup, mode);
}

}  // namespace mjpeg::pipeline
