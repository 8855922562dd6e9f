// The public video API (include/mjpeg/video.hpp) on top of the streaming pipeline
// (src/pipeline): VideoEncoder runs pipeline::encode_stream on a thread of its own and feeds it
// through PushSource, a pipeline::FrameSource whose read_into() takes the frame that encode()
// hands over and copies it straight into the producer's slot; encode_all() runs encode_stream
// on the caller's thread over PullSource, which lets the public FrameSource read into the
// slots. Frames leave the pipeline through SinkBridge (an io::FrameSink) in stream order.
#include "mjpeg/video.hpp"

#include "mjpeg/encoder.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

#include "gpu_transform.hpp"
#include "io/frame_sink.hpp"
#include "device_frames.hpp"
#include "internal.hpp"
#include "pipeline/frame_source.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/trace.hpp"

namespace mjpeg {

using namespace api;

namespace {

/// The pipeline's sink: numbers the frames (they arrive in order) and hands them on.
class SinkBridge final : public io::FrameSink {
 public:
  explicit SinkBridge(mjpeg::FrameSink& out) : out_(out) {}
  void write_frame(const std::uint8_t* jpeg, std::size_t size) override {
    out_.write(EncodedFrame{frames_, jpeg, size});
    ++frames_;
    bytes_ += size;
  }
  void close() override {}
  std::int64_t frames_written() const override { return frames_; }
  std::uint64_t bytes_written() const override { return bytes_; }

 private:
  mjpeg::FrameSink& out_;
  std::int64_t frames_ = 0;
  std::uint64_t bytes_ = 0;
};

/// encode_all's source: the public FrameSource reads straight into the producer's slot.
class PullSource final : public pipeline::FrameSource {
 public:
  PullSource(mjpeg::FrameSource& source, const VideoOptions& o)
      : source_(source), options_(o), format_(source_format(o)),
        concurrent_(source.concurrent_reads()) {}
  pipeline::SourceFormat format() const override { return format_; }
  int max_useful_producers() const override {
    return concurrent_ ? std::max(0, source_.max_concurrent_reads()) : 1;
  }
  bool read_into(int, std::uint8_t* dst, std::size_t, std::int64_t& index) override {
    bool got = false;
    if (concurrent_) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (ended_) return false;
        index = next_++;
      }
      got = source_.read(index, dst);
      if (!got) {
        std::lock_guard<std::mutex> lock(mutex_);
        ended_ = true;
      }
    } else {
      std::lock_guard<std::mutex> lock(mutex_);
      if (ended_) return false;
      index = next_++;
      got = source_.read(index, dst);
      ended_ = !got;
    }
    if (got && options_.format == FrameFormat::bgr24) {
      const std::size_t row = std::size_t(options_.width) * 3;
      for (int y = 0; y < options_.height; ++y) swap_red_blue(dst + y * row, options_.width);
    }
    return got;
  }

 private:
  mjpeg::FrameSource& source_;
  const VideoOptions options_;
  const pipeline::SourceFormat format_;
  const bool concurrent_;
  std::mutex mutex_;
  std::int64_t next_ = 0;
  bool ended_ = false;
};

/// Thrown into the pipeline by PushSource when the encoder is destroyed before finish().
struct Cancelled {};

/// VideoEncoder's source: hands each frame of encode() to one producer, which copies it into
/// its slot while encode() waits. Also the handshake of the start: the pipeline calls
/// prepare() once its slots and buffers exist.
class PushSource final : public pipeline::FrameSource {
 public:
  explicit PushSource(const VideoOptions& o) : options_(o), format_(source_format(o)) {}
  pipeline::SourceFormat format() const override { return format_; }

  void prepare(int) override {
    std::lock_guard<std::mutex> lock(mutex_);
    prepared_ = true;
    cv_.notify_all();
  }

  bool read_into(int, std::uint8_t* dst, std::size_t, std::int64_t& index) override {
    const FrameView* frame = nullptr;
    const DeviceFrame* device = nullptr;
    if (!take(frame, device, index)) return false;
    // encode() waits: the view is valid
    if (device) gpu::download_planar(device_input(*device), dst, caller_stream(*device));
    else copy_frame(*frame, options_, dst);
    copied(index);
    return true;
  }

  bool device_frames() const override { return options_.device_frames; }
  bool read_device(int, DeviceSlot& slot, std::int64_t& index) override {
    const FrameView* frame = nullptr;
    const DeviceFrame* device = nullptr;
    if (!take(frame, device, index)) return false;
    const gpu::DeviceFrameIn in = device_input(*device);
    slot.write([&](std::uint8_t* dst, gpu::StreamHandle stream) {
      gpu::write_planar_ordered(in, dst, stream, caller_stream(*device));
    });
    copied(index);
    return true;
  }

  /// Waits until the pipeline is ready (true) or has ended (false: it failed in its setup).
  bool wait_prepared() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return prepared_ || ended_; });
    return prepared_;
  }

  /// Hands `frame` over and waits until a producer copied it (true) or the pipeline ended
  /// (false).
  bool push(const FrameView& frame) { return push_pending(&frame, nullptr); }
  /// The same for a frame in device memory: true once its copy is enqueued.
  bool push(const DeviceFrame& frame) { return push_pending(nullptr, &frame); }

  void finish() { set(finished_); }
  void cancel() { set(cancelled_); }

  /// The planes of a device frame of this encoder's format.
  /// The caller's stream of a device frame (the API's void*, a cudaStream_t).
  static gpu::StreamHandle caller_stream(const DeviceFrame& f) {
    return static_cast<gpu::StreamHandle>(f.stream);
  }
  gpu::DeviceFrameIn device_input(const DeviceFrame& f) const {
    gpu::DeviceFrameIn in;
    in.layout = f.layout == DeviceFrame::Layout::nv12 ? gpu::DeviceLayout::nv12
                                                      : gpu::DeviceLayout::planar;
    in.chroma = planar_chroma(options_.format);
    in.width = f.width;
    in.height = f.height;
    for (int c = 0; c < 3; ++c) {
      in.plane[c] = f.plane[c];
      in.pitch[c] = f.pitch[c];
    }
    return in;
  }
  /// The pipeline has returned (normally or not): nobody will take frames any more.
  void ended() { set(ended_); }

 private:
  void set(bool& flag) {
    std::lock_guard<std::mutex> lock(mutex_);
    flag = true;
    cv_.notify_all();
  }

  /// Waits for the frame encode() hands over; false when finished. Throws Cancelled.
  bool take(const FrameView*& frame, const DeviceFrame*& device, std::int64_t& index) {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return pending_ || pending_device_ || finished_ || cancelled_; });
    if (cancelled_) throw Cancelled{};
    if (!pending_ && !pending_device_) return false;  // finished
    frame = pending_;
    device = pending_device_;
    pending_ = nullptr;
    pending_device_ = nullptr;
    index = next_++;
    return true;
  }
  void copied(std::int64_t index) {
    std::lock_guard<std::mutex> lock(mutex_);
    copied_ = index + 1;
    cv_.notify_all();
  }
  bool push_pending(const FrameView* frame, const DeviceFrame* device) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (ended_) return false;
    const std::int64_t mine = next_;
    pending_ = frame;
    pending_device_ = device;
    cv_.notify_all();
    cv_.wait(lock, [&] { return copied_ > mine || ended_; });
    if (copied_ > mine) return true;
    pending_ = nullptr;  // never taken
    pending_device_ = nullptr;
    return false;
  }

  const VideoOptions options_;
  const pipeline::SourceFormat format_;
  std::mutex mutex_;
  std::condition_variable cv_;
  const FrameView* pending_ = nullptr;
  const DeviceFrame* pending_device_ = nullptr;
  std::int64_t next_ = 0;    // index of the next frame taken
  std::int64_t copied_ = 0;  // frames copied into slots so far
  bool prepared_ = false, finished_ = false, cancelled_ = false, ended_ = false;
};

/// VideoEncoder without a sink: keeps finished frames until encode() / finish() take them.
class CollectingSink final : public mjpeg::FrameSink {
 public:
  void write(const EncodedFrame& f) override {
    JpegFrame j;
    j.index = f.index;
    j.bytes.assign(f.data, f.data + f.size);
    std::lock_guard<std::mutex> lock(mutex_);
    frames_.push_back(std::move(j));
  }
  std::vector<JpegFrame> take() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<JpegFrame> out(std::make_move_iterator(frames_.begin()),
                               std::make_move_iterator(frames_.end()));
    frames_.clear();
    return out;
  }

 private:
  std::mutex mutex_;
  std::deque<JpegFrame> frames_;
};

/// Counts what goes to the user's sink (for stats() before finish()).
class CountingSink final : public mjpeg::FrameSink {
 public:
  explicit CountingSink(mjpeg::FrameSink& out) : out_(out) {}
  void write(const EncodedFrame& f) override {
    out_.write(f);
    frames_.fetch_add(1, std::memory_order_relaxed);
    bytes_.fetch_add(f.size, std::memory_order_relaxed);
  }
  std::int64_t frames() const { return frames_.load(std::memory_order_relaxed); }
  std::uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }

 private:
  mjpeg::FrameSink& out_;
  std::atomic<std::int64_t> frames_{0};
  std::atomic<std::uint64_t> bytes_{0};
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// VideoEncoder
// ---------------------------------------------------------------------------------------------

struct VideoEncoder::Impl {
  Impl(const VideoOptions& o, mjpeg::FrameSink* user_sink)
      : options(o), source(o), collected(), counting(user_sink ? *user_sink : collected),
        bridge(counting), collect(user_sink == nullptr) {}

  void start() {
    validate(options);
    check_device(options);
    popt = pipeline_options(options, true);
    if (options.profile) popt.trace = &trace;
    thread = std::thread([this] {
      try {
        result = pipeline::encode_stream(source, options.jpeg, bridge, popt, options.on_progress);
      } catch (const Cancelled&) {
        // destroyed before finish(): nothing to report
      } catch (...) {
        error = std::current_exception();
      }
      source.ended();
    });
    if (!source.wait_prepared()) {  // the pipeline's setup failed (e.g. device memory)
      thread.join();
      if (error) std::rethrow_exception(error);
      throw Error("VideoEncoder: the encoder stopped while starting");
    }
  }

  /// Joins the pipeline thread once it has ended; rethrows its error.
  void join_and_check() {
    if (thread.joinable()) thread.join();
    if (error) std::rethrow_exception(error);
  }

  std::vector<JpegFrame> take() { return collect ? collected.take() : std::vector<JpegFrame>{}; }

  const VideoOptions options;
  PushSource source;
  CollectingSink collected;
  CountingSink counting;
  SinkBridge bridge;
  const bool collect;
  pipeline::PipelineOptions popt;
  pipeline::Trace trace;  // VideoOptions::profile
  std::thread thread;
  pipeline::Stats result;
  std::exception_ptr error;  // written by the pipeline thread before source.ended()
  bool finished = false;
};

VideoEncoder::VideoEncoder(const VideoOptions& options)
    : impl_(std::make_unique<Impl>(options, nullptr)) {
  impl_->start();
}

VideoEncoder::VideoEncoder(const VideoOptions& options, FrameSink& sink)
    : impl_(std::make_unique<Impl>(options, &sink)) {
  impl_->start();
}

VideoEncoder::~VideoEncoder() {
  if (!impl_) return;  // moved from
  if (impl_->thread.joinable()) {
    impl_->source.cancel();
    impl_->thread.join();
  }
}

VideoEncoder::VideoEncoder(VideoEncoder&&) noexcept = default;
VideoEncoder& VideoEncoder::operator=(VideoEncoder&& other) noexcept {
  if (this != &other) {
    VideoEncoder gone(std::move(*this));  // stops this encoder's threads
    impl_ = std::move(other.impl_);
  }
  return *this;
}

std::vector<JpegFrame> VideoEncoder::encode(const FrameView& frame) {
  if (!impl_) throw UsageError("VideoEncoder::encode: the encoder was moved from");
  Impl& m = *impl_;
  if (m.finished) {
    if (m.error) std::rethrow_exception(m.error);
    throw UsageError("VideoEncoder::encode: called after finish()");
  }
  check_frame(frame, m.options);
  if (!m.source.push(frame)) {
    // The pipeline ended before taking the frame: only an error does that.
    m.join_and_check();
    throw Error("VideoEncoder::encode: the encoder has stopped");
  }
  return m.take();
}

std::vector<JpegFrame> VideoEncoder::encode(const DeviceFrame& frame) {
  if (!impl_) throw UsageError("VideoEncoder::encode: the encoder was moved from");
  Impl& m = *impl_;
  if (m.finished) {
    if (m.error) std::rethrow_exception(m.error);
    throw UsageError("VideoEncoder::encode: called after finish()");
  }
  check_device_frame(frame, m.options);
  if (!m.source.push(frame)) {
    m.join_and_check();
    throw Error("VideoEncoder::encode: the encoder has stopped");
  }
  return m.take();
}

std::vector<JpegFrame> VideoEncoder::finish() {
  if (!impl_) throw UsageError("VideoEncoder::finish: the encoder was moved from");
  Impl& m = *impl_;
  if (m.finished) {
    if (m.error) std::rethrow_exception(m.error);
    return {};
  }
  m.finished = true;
  m.source.finish();
  m.join_and_check();
  if (m.options.profile) fill_profile(*m.options.profile, m.result, m.popt, m.options.jpeg, m.trace);
  return m.take();
}

Stats VideoEncoder::stats() const {
  if (!impl_) return {};
  const Impl& m = *impl_;
  if (m.finished && !m.thread.joinable() && !m.error)
    return public_stats(m.result, m.popt, m.options.offload);
  Stats s;
  s.frames = m.counting.frames();
  s.jpeg_bytes = m.counting.bytes();
  s.offload = m.options.offload;
  return s;
}

const VideoOptions& VideoEncoder::options() const { return impl_->options; }

// ---------------------------------------------------------------------------------------------
// encode_all
// ---------------------------------------------------------------------------------------------

Stats encode_all(const VideoOptions& options, FrameSource& source, FrameSink& sink,
                 const std::atomic<bool>* stop) {
  validate(options);
  // A cpu start checks the devices on its set-up thread, while the CPU encodes.
  const bool cpu_start = options.cpu_start && uses_gpu(options.offload);
  if (!cpu_start) check_device(options);
  pipeline::FrameSource* own = library_reader(source, options);
  // Frames lent where they lie: in cpu mode the workers transform them there (one producer
  // only hands them out).
  const bool lent = own != nullptr && own->lends_frames();
  pipeline::PipelineOptions p = pipeline_options(options, false, source.frame_count(), lent);
  if (cpu_start) {
    VideoOptions c = options;
    c.offload = Offload::cpu;
    c.devices.clear();
    p.cpu_start = std::make_shared<const pipeline::PipelineOptions>(
        pipeline_options(c, false, source.frame_count(), lent));
    p.check_gpu = [options, frames = source.frame_count()] {
      check_device(options);
      const std::string memory = gpu_memory_problem(options, slot_count(options, false, frames));
      if (!memory.empty()) throw Error(memory);
    };
  }
  pipeline::Trace trace;
  if (options.profile) p.trace = &trace;
  PullSource pull(source, options);
  SinkBridge bridge(sink);
  const pipeline::Stats s = pipeline::encode_stream(own ? *own : pull, options.jpeg, bridge, p,
                                                    options.on_progress, stop);
  if (options.profile) fill_profile(*options.profile, s, p, options.jpeg, trace);
  return public_stats(s, p, options.offload);
}

}  // namespace mjpeg
