// The public video API (include/mjpeg/video.hpp) on top of the streaming pipeline
// (src/pipeline): VideoEncoder runs pipeline::encode_stream on a thread of its own and feeds it
// through PushSource, a pipeline::FrameSource whose read_into() takes the frame that encode()
// hands over and copies it straight into the producer's slot; encode_all() runs encode_stream
// on the caller's thread over PullSource, which lets the public FrameSource read into the
// slots. Frames leave the pipeline through SinkBridge (an io::FrameSink) in stream order.
#include "mjpeg/video.hpp"

#include "mjpeg/encoder.hpp"

#include <algorithm>
#include <cstdio>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "gpu_transform.hpp"
#include "io/frame_sink.hpp"
#include "io/y4m.hpp"
#include "core/geometry.hpp"
#include "core/planar_format.hpp"
#include "device_frames.hpp"
#include "device_info.hpp"
#include "internal.hpp"
#include "jpeg/planar.hpp"
#include "pipeline/analysis.hpp"
#include "pipeline/frame_source.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/trace.hpp"

namespace mjpeg {

// ---------------------------------------------------------------------------------------------
// Names and options
// ---------------------------------------------------------------------------------------------

namespace {


bool known(FrameFormat f) {
  switch (f) {
    case FrameFormat::rgb24: case FrameFormat::bgr24: case FrameFormat::gray8:
    case FrameFormat::yuv420p: case FrameFormat::yuv422p: case FrameFormat::yuv444p:
    case FrameFormat::yuv400p:
      return true;
  }
  return false;
}

void check_range(int v, int lo, int hi, const char* name) {
  if (v < lo || v > hi)
    throw UsageError(std::string("VideoOptions: ") + name + " " + std::to_string(v) +
                     " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
}

PlanarChroma planar_chroma(FrameFormat f) {
  switch (f) {
    case FrameFormat::yuv420p: return PlanarChroma::c420;
    case FrameFormat::yuv422p: return PlanarChroma::c422;
    case FrameFormat::yuv444p: return PlanarChroma::c444;
    case FrameFormat::yuv400p: return PlanarChroma::mono;
    default: return PlanarChroma::none;
  }
}

}  // namespace

pipeline::SourceFormat api::source_format(const VideoOptions& o) {
  pipeline::SourceFormat s;
  s.width = o.width;
  s.height = o.height;
  s.format = o.format == FrameFormat::gray8 ? PixelFormat::gray8 : PixelFormat::rgb24;
  if (is_planar(o.format)) {
    // The coefficients of the Y4M reader's conversion, so that a frame given here and the same
    // frame read from a Y4M file encode to the same bytes.
    io::Y4mInfo info;
    info.width = o.width;
    info.height = o.height;
    info.chroma = o.format == FrameFormat::yuv420p   ? io::Y4mChroma::c420
                  : o.format == FrameFormat::yuv422p ? io::Y4mChroma::c422
                  : o.format == FrameFormat::yuv400p ? io::Y4mChroma::mono
                                                     : io::Y4mChroma::c444;
    info.matrix = o.matrix;
    info.range = o.range;
    s.planar = io::planar_format(info);
    if (o.coefficients) {
      const YuvCoefficients& k = *o.coefficients;
      s.planar.ycc = math::YccToRgb{k.truncated ? 1 : 0, k.y0, k.cy, k.cr_r, k.cb_g, k.cr_g, k.cb_b};
    }
  }
  return s;
}

namespace {

YuvCoefficients public_form(const math::YccToRgb& k) {
  return YuvCoefficients{k.truncated != 0, k.y0, k.cy, k.cr_r, k.cb_g, k.cr_g, k.cb_b};
}

}  // namespace

YuvCoefficients rounded_coefficients(double kr, double kb, YuvRange range) {
  if (!(kr > 0 && kb > 0 && kr + kb < 1))
    throw UsageError("rounded_coefficients: the luma weights Kr, Kb must be positive and add up "
                     "to less than 1");
  return public_form(math::make_rounded_ycc(kr, kb, range == YuvRange::limited));
}

YuvCoefficients swscale_coefficients(const int table[4], YuvRange range) {
  if (table == nullptr) throw UsageError("swscale_coefficients: no coefficient table");
  return public_form(math::make_truncated_ycc(table, range == YuvRange::limited));
}

namespace {

using api::source_format;

std::size_t pixel_bytes(FrameFormat f) { return f == FrameFormat::gray8 ? 1 : 3; }

/// Swaps the first and third byte of each pixel of a packed row (BGR <-> RGB).
void swap_red_blue(std::uint8_t* row, int width) {
  for (int x = 0; x < width; ++x) std::swap(row[3 * x], row[3 * x + 2]);
}

void copy_bgr_row(const std::uint8_t* src, std::uint8_t* dst, int width) {
  for (int x = 0; x < width; ++x) {
    dst[3 * x] = src[3 * x + 2];
    dst[3 * x + 1] = src[3 * x + 1];
    dst[3 * x + 2] = src[3 * x];
  }
}

/// Copies `rows` rows of `row` bytes from `src` (rows `src_stride` apart) to `dst` (rows
/// `dst_stride` apart); with `bgr` the 3-byte pixels are reordered to RGB on the way.
void copy_rows(const std::uint8_t* src, std::size_t src_stride, std::uint8_t* dst,
               std::size_t dst_stride, std::size_t row, int rows, bool bgr = false) {
  if (!bgr && src_stride == row && dst_stride == row) {
    std::memcpy(dst, src, row * std::size_t(rows));
    return;
  }
  for (int y = 0; y < rows; ++y) {
    const std::uint8_t* in = src + std::size_t(y) * src_stride;
    std::uint8_t* out = dst + std::size_t(y) * dst_stride;
    if (bgr)
      copy_bgr_row(in, out, static_cast<int>(row / 3));
    else
      std::memcpy(out, in, row);
  }
}

/// Throws UsageError when `f` does not fit `o` (see VideoEncoder::encode).
void check_frame(const FrameView& f, const VideoOptions& o) {
  if (f.width != o.width || f.height != o.height)
    throw UsageError("VideoEncoder::encode: frame is " + std::to_string(f.width) + "x" +
                     std::to_string(f.height) + ", the encoder was opened for " +
                     std::to_string(o.width) + "x" + std::to_string(o.height));
  const int planes = o.format == FrameFormat::yuv400p ? 1 : is_planar(o.format) ? 3 : 1;
  const PlanarLayout l = is_planar(o.format)
                             ? planar_layout(o.width, o.height, planar_chroma(o.format))
                             : PlanarLayout{};
  for (int c = 0; c < planes; ++c) {
    if (f.plane[c] == nullptr)
      throw UsageError(std::string("VideoEncoder::encode: plane ") + std::to_string(c) +
                       " of a " + to_string(o.format) + " frame is null");
    const std::size_t row = !is_planar(o.format) ? std::size_t(o.width) * pixel_bytes(o.format)
                            : c == 0             ? std::size_t(o.width)
                                                 : std::size_t(l.chroma_width);
    if (f.stride[c] != 0 && f.stride[c] < row)
      throw UsageError("VideoEncoder::encode: stride " + std::to_string(f.stride[c]) +
                       " of plane " + std::to_string(c) + " is smaller than a row (" +
                       std::to_string(row) + " bytes)");
  }
}

/// Throws UsageError unless `f` is a device frame an encoder of `o` takes.
void check_device_frame(const DeviceFrame& f, const VideoOptions& o) {
  const std::string what = "VideoEncoder::encode(DeviceFrame): ";
  if (!o.device_frames)
    throw UsageError(what + "the encoder was made without VideoOptions::device_frames");
  if (f.width != o.width || f.height != o.height)
    throw UsageError(what + "the frame is " + std::to_string(f.width) + "x" +
                     std::to_string(f.height) + ", the encoder's frames " +
                     std::to_string(o.width) + "x" + std::to_string(o.height));
  const bool nv12 = f.layout == DeviceFrame::Layout::nv12;
  if (nv12 && o.format != FrameFormat::yuv420p)
    throw UsageError(what + "an nv12 frame needs the yuv420p format, not " + to_string(o.format));
  if (f.layout != DeviceFrame::Layout::planar && !nv12)
    throw UsageError(what + "unknown layout");
  const PlanarLayout l = planar_layout(o.width, o.height, planar_chroma(o.format));
  const int planes = nv12 ? 2 : o.format == FrameFormat::yuv400p ? 1 : 3;
  for (int c = 0; c < planes; ++c) {
    if (f.plane[c] == nullptr)
      throw UsageError(what + "plane " + std::to_string(c) + " is null");
    const std::size_t row = c == 0 ? std::size_t(o.width)
                            : nv12 ? 2 * std::size_t(l.chroma_width)
                                   : std::size_t(l.chroma_width);
    if (f.pitch[c] < row)
      throw UsageError(what + "pitch " + std::to_string(f.pitch[c]) + " of plane " +
                       std::to_string(c) + " is smaller than a row (" + std::to_string(row) +
                       " bytes)");
  }
}

/// Copies frame `f` of `o` into `dst` in the contiguous layout (bgr24 reordered to RGB).
void copy_frame(const FrameView& f, const VideoOptions& o, std::uint8_t* dst) {
  if (is_planar(o.format)) {
    const PlanarLayout l = planar_layout(o.width, o.height, planar_chroma(o.format));
    for (int c = 0; c < (o.format == FrameFormat::yuv400p ? 1 : 3); ++c) {
      const int rows = c == 0 ? o.height : l.chroma_height;
      const std::size_t row = l.pitch[c];
      copy_rows(f.plane[c], f.stride[c] ? f.stride[c] : row, dst + l.offset[c], row, row, rows);
    }
    return;
  }
  const std::size_t row = std::size_t(o.width) * pixel_bytes(o.format);
  copy_rows(f.plane[0], f.stride[0] ? f.stride[0] : row, dst, row, row, o.height,
            o.format == FrameFormat::bgr24);
}

/// The pipeline's options for `o`. `push`: VideoEncoder (one producer unless asked for more:
/// it only copies what encode() hands over); otherwise encode_all (the pipeline's defaults,
/// a self-balancing split when neither count is given).
pipeline::PipelineOptions pipeline_options(const VideoOptions& o, bool push,
                                           std::int64_t frames = -1, bool in_memory = false) {
  pipeline::PipelineOptions p;
  p.mode = o.offload;
  p.device = o.device;
  if (uses_gpu(o.offload)) p.devices = o.devices;
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  int producers = o.producers, workers = o.entropy_threads;
  if (push) {
    if (producers == 0) producers = 1;
    if (workers == 0) workers = uses_gpu(o.offload) ? std::max(1, cores - 1) : cores;
  }
  // o.threads: a total that balances itself (pushed frames have their fixed split).
  pipeline::apply_default_counts(p, cores, producers, workers, o.slots, in_memory,
                                 push ? 0 : o.threads);
  // A short stream (a still picture) needs no more slots than frames.
  if (o.slots == 0 && frames > 0 && frames < p.slots) p.slots = static_cast<int>(frames);
  p.variant = o.gpu.kernel;
  p.stages = o.gpu.stages;
  p.gpu_output = o.gpu.output;
  if (o.on_jpeg) {
    p.on_jpeg = [observer = o.on_jpeg](std::int64_t index, const std::vector<std::uint8_t>& jpeg) {
      observer(EncodedFrame{index, jpeg.data(), jpeg.size()});
    };
  }
  if (o.profile) p.gpu_timing = true;
  if (o.on_frame) {
    p.on_frame = [observer = o.on_frame](std::int64_t index, const ImageView& pixels,
                                         const std::vector<std::uint8_t>& jpeg) {
      observer(pixels, EncodedFrame{index, jpeg.data(), jpeg.size()});
    };
  }
  pipeline::validate(p);
  return p;
}

/// VideoOptions::profile from a run's statistics and trace.
void fill_profile(Profile& out, const pipeline::Stats& s, const pipeline::PipelineOptions& p,
                  const EncodeOptions& jpeg, const pipeline::Trace& trace) {
  Profile r;
  const pipeline::RunAnalysis a = pipeline::analyse(s, p);
  const double stage_time = s.wall_s - s.setup_s;
  r.fps = stage_time > 0 ? static_cast<double>(s.frames) / stage_time : 0;
  for (const pipeline::StageLoad& l : a.stages) r.stages.push_back({l.name, l.busy_s, l.lanes, l.bound_fps});
  r.bound_by = a.binding;
  r.bound_fps = a.bound_fps;
  r.of_bound = a.bound_fps > 0 ? r.fps / a.bound_fps : 0;
  r.gpu_timed = s.gpu_timed;
  r.upload_gpu_s = s.upload_gpu_s;
  r.kernel_gpu_s = s.kernel_gpu_s;
  r.download_gpu_s = s.download_gpu_s;
  r.gpu_union_s = s.gpu_union_s;
  r.overlap = a.overlap;
  r.h2d_gbps = a.h2d_gbps;
  r.d2h_gbps = a.d2h_gbps;
  r.token_frames = s.token_frames;
  if (uses_gpu(p.mode)) r.gpu_output = to_string(pipeline::gpu_output_for(p, jpeg));
  for (const pipeline::BufferStats& b : s.buffers)
    r.buffers.push_back({b.device, b.frames, b.gpu_s, b.upload_gpu_s, b.kernel_gpu_s, b.download_gpu_s});
  for (const pipeline::Track& t : trace.tracks()) r.tracks.push_back({t.name, t.gpu});
  for (const pipeline::Span& sp : trace.spans())
    r.spans.push_back({sp.track, pipeline::to_string(sp.kind), sp.frame, sp.start_s, sp.end_s});
  out = std::move(r);
}

/// The pipeline's progress callback for `o` (empty without one).
pipeline::ProgressFn progress_fn(const VideoOptions& o) {
  if (!o.on_progress) return {};
  return [report = o.on_progress](const pipeline::Progress& p) {
    report(Progress{p.frames, p.jpeg_bytes, p.elapsed_s});
  };
}

/// A GPU mode needs its devices: a clear error now rather than from a thread later.
void check_device(const VideoOptions& o) {
  if (!uses_gpu(o.offload)) return;
  std::string reason;
  const int devices = gpu::device_count(&reason);
  std::vector<int> wanted = o.devices.empty() ? std::vector<int>{o.device} : o.devices;
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  for (int device : wanted) {
    const std::string what = std::string("offload mode '") + to_string(o.offload) +
                             "' needs CUDA device " + std::to_string(device);
    if (devices == 0)
      throw Error(what + ": " + (reason.empty() ? "no CUDA device was found" : reason) +
                  " (use Offload::cpu to encode without a GPU)");
    if (device >= devices)
      throw Error(what + ", but there " + (devices == 1 ? "is 1 device" : "are " +
                  std::to_string(devices) + " devices"));
    if (!gpu::usable_device(device, &reason)) throw Error(what + ": " + reason);
  }
}

Stats public_stats(const pipeline::Stats& s, const pipeline::PipelineOptions& p, Offload mode) {
  Stats r;
  r.frames = s.frames;
  r.jpeg_bytes = s.jpeg_bytes;
  r.wall_s = s.wall_s;
  r.read_s = s.read_s + s.upload_issue_s;
  r.transform_s = s.transform_cpu_s;
  r.gpu_s = s.gpu_s + s.download_issue_s + s.coeff_wait_s;
  r.entropy_s = s.entropy_s;
  r.write_s = s.write_s;
  r.upload_bytes = s.upload_bytes;
  r.download_bytes = s.download_bytes;
  r.offload = mode;
  r.producers = s.producers;
  r.entropy_threads = s.entropy_threads;
  r.slots = p.slots;
  r.setup_s = s.setup_s;
  r.first_frame_s = s.first_frame_s;
  r.upload_issue_s = s.upload_issue_s;
  r.download_issue_s = s.download_issue_s;
  r.result_wait_s = s.coeff_wait_s;
  r.self_balancing = p.balance_threads > 0;
  r.rebalances = s.rebalances;
  r.split_frames = s.split_frames;
  for (const pipeline::BufferStats& b : s.buffers) r.frames_per_buffer.push_back(b.frames);
  if (s.frames > 0) {
    const pipeline::RunAnalysis a = pipeline::analyse(s, p);
    r.bound_by = a.binding;
    r.bound_fps = a.bound_fps;
  }
  return r;
}

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
    if (device) gpu::download_planar(device_input(*device), dst, device->stream);
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
    slot.write([&](std::uint8_t* dst, void* stream) {
      gpu::write_planar_ordered(in, dst, stream, device->stream);
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

void validate(const VideoOptions& o) {
  if (!known(o.format)) throw UsageError("VideoOptions: unknown frame format");
  if (o.device_frames && !is_planar(o.format))
    throw UsageError("VideoOptions: device_frames needs a planar format, not " +
                     std::string(to_string(o.format)));
  if (o.device_frames && !gpu::built_with_cuda())
    throw UsageError("VideoOptions: device_frames needs a build with CUDA");
  check_range(o.width, 1, kMaxDimension, "width");
  check_range(o.height, 1, kMaxDimension, "height");
  if (o.matrix != YuvMatrix::bt601 && o.matrix != YuvMatrix::bt709 &&
      o.matrix != YuvMatrix::bt2020)
    throw UsageError("VideoOptions: unknown colour matrix");
  if (o.range != YuvRange::limited && o.range != YuvRange::full)
    throw UsageError("VideoOptions: unknown colour range");
  if (o.offload != Offload::cpu && o.offload != Offload::sok && o.offload != Offload::sok_pinned &&
      o.offload != Offload::aok)
    throw UsageError("VideoOptions: unknown offload mode");
  check_range(o.device, 0, 1023, "device");
  if (o.devices.size() > static_cast<std::size_t>(kMaxStreamBuffers))
    throw UsageError("VideoOptions: " + std::to_string(o.devices.size()) +
                     " devices listed, at most " + std::to_string(kMaxStreamBuffers));
  for (int d : o.devices) check_range(d, 0, 1023, "device (in devices)");
  check_range(o.producers, 0, 256, "producers");
  check_range(o.entropy_threads, 0, 1024, "entropy_threads");
  check_range(o.slots, 0, 4096, "slots");
  check_range(o.threads, 0, 1024, "threads");
  if (o.gpu.kernel != KernelVariant::direct && o.gpu.kernel != KernelVariant::pipeline &&
      o.gpu.kernel != KernelVariant::partitioned && o.gpu.kernel != KernelVariant::primitives)
    throw UsageError("VideoOptions: unknown kernel variant");
  check_range(o.gpu.stages, 1, gpu::kMaxStages, "gpu.stages");
  if (o.gpu.output != GpuOutput::automatic && o.gpu.output != GpuOutput::tokens &&
      o.gpu.output != GpuOutput::coefficients)
    throw UsageError("VideoOptions: unknown GPU output");
  validate(o.jpeg);
  const Subsampling sampling = o.format == FrameFormat::gray8 ? Subsampling::gray : o.jpeg.subsampling;
  if (o.jpeg.optimize && !o.jpeg.progressive && !optimize_fits(o.width, o.height, sampling))
    throw UsageError("VideoOptions: optimize: a " + std::to_string(o.width) + "x" +
                     std::to_string(o.height) + " frame at " + to_string(sampling) +
                     " can hold more of one Huffman symbol than 32-bit counts allow");
}

std::size_t frame_bytes(const VideoOptions& o) {
  check_range(o.width, 1, kMaxDimension, "width");
  check_range(o.height, 1, kMaxDimension, "height");
  if (!known(o.format)) throw UsageError("VideoOptions: unknown frame format");
  if (is_planar(o.format)) return planar_layout(o.width, o.height, planar_chroma(o.format)).bytes;
  return std::size_t(o.width) * std::size_t(o.height) * pixel_bytes(o.format);
}

FrameView FrameView::packed(const std::uint8_t* data, int width, int height, std::size_t stride) {
  FrameView v;
  v.width = width;
  v.height = height;
  v.plane[0] = data;
  v.stride[0] = stride;
  return v;
}

FrameView FrameView::planar(const std::uint8_t* y, const std::uint8_t* cb, const std::uint8_t* cr,
                            int width, int height, std::size_t y_stride, std::size_t c_stride) {
  FrameView v;
  v.width = width;
  v.height = height;
  v.plane[0] = y;
  v.plane[1] = cb;
  v.plane[2] = cr;
  v.stride[0] = y_stride;
  v.stride[1] = v.stride[2] = c_stride;
  return v;
}

FrameView FrameView::contiguous(const std::uint8_t* data, const VideoOptions& o) {
  (void)frame_bytes(o);  // validates the size and format
  if (!is_planar(o.format)) return packed(data, o.width, o.height);
  const PlanarLayout l = planar_layout(o.width, o.height, planar_chroma(o.format));
  if (data == nullptr) return planar(nullptr, nullptr, nullptr, o.width, o.height);
  return planar(data + l.offset[0], data + l.offset[1], data + l.offset[2], o.width, o.height,
                l.pitch[0], l.pitch[1]);
}

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
        result = pipeline::encode_stream(source, options.jpeg, bridge, popt, progress_fn(options));
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
  check_device(options);
  pipeline::FrameSource* own = api::library_source(source, options);
  // Frames lent where they lie: in cpu mode the workers transform them there (one producer
  // only hands them out).
  pipeline::PipelineOptions p =
      pipeline_options(options, false, source.frame_count(), own != nullptr && own->lends_frames());
  pipeline::Trace trace;
  if (options.profile) p.trace = &trace;
  PullSource pull(source, options);
  SinkBridge bridge(sink);
  const pipeline::Stats s = pipeline::encode_stream(own ? *own : pull, options.jpeg, bridge, p,
                                                    progress_fn(options), stop);
  if (options.profile) fill_profile(*options.profile, s, p, options.jpeg, trace);
  return public_stats(s, p, options.offload);
}

void to_pixels(const FrameView& frame, const VideoOptions& o, std::uint8_t* dst,
               std::size_t stride) {
  (void)frame_bytes(o);  // validates the size and format
  check_frame(frame, o);
  const std::size_t row = std::size_t(o.width) * pixel_bytes(o.format == FrameFormat::gray8
                                                                  ? FrameFormat::gray8
                                                                  : FrameFormat::rgb24);
  if (dst == nullptr || stride < row)
    throw UsageError("to_pixels: null destination or stride " + std::to_string(stride) +
                     " smaller than a row (" + std::to_string(row) + " bytes)");
  if (!is_planar(o.format)) {
    const std::size_t in_row = std::size_t(o.width) * pixel_bytes(o.format);
    copy_rows(frame.plane[0], frame.stride[0] ? frame.stride[0] : in_row, dst, stride, in_row,
              o.height, o.format == FrameFormat::bgr24);
    return;
  }
  const pipeline::SourceFormat f = source_format(o);
  const PlanarLayout l = planar_layout(o.width, o.height, f.planar.chroma);
  PlanarView v;
  v.width = o.width;
  v.height = o.height;
  v.format = f.planar;
  const int planes = o.format == FrameFormat::yuv400p ? 1 : 3;
  for (int c = 0; c < planes; ++c) {
    v.plane[c] = frame.plane[c];
    v.pitch[c] = frame.stride[c] ? frame.stride[c] : l.pitch[c];
  }
  planar_to_rgb(v, dst, stride);
}

int slot_count(const VideoOptions& o, bool push, std::int64_t frames) {
  validate(o);
  return pipeline_options(o, push, frames).slots;
}

std::string gpu_memory_problem(const VideoOptions& o, int slots) {
  try {
    if (o.width < 1 || o.height < 1 || !known(o.format) || slots < 1) return "";
    const Subsampling sub = o.format == FrameFormat::gray8 ? Subsampling::gray : o.jpeg.subsampling;
    const FrameGeometry g = make_geometry(o.width, o.height, sub);
    // What a slot takes on the device (tokens unless coefficients are asked for: the larger).
    const double per_slot = static_cast<double>(pipeline::device_bytes_per_slot(
        frame_bytes(o), g,
        o.gpu.output == GpuOutput::coefficients ? GpuOutput::coefficients : GpuOutput::tokens));
    std::string reason;
    const std::vector<gpu::DeviceInfo> found = gpu::list_devices(&reason);
    const std::vector<int> devices = o.devices.empty() ? std::vector<int>{o.device} : o.devices;
    for (int device : devices) {
      // Stream buffers that share a device share its memory.
      const double buffers =
          static_cast<double>(std::count(devices.begin(), devices.end(), device));
      double device_bytes = 0;
      for (const gpu::DeviceInfo& d : found)
        if (d.index == device) device_bytes = static_cast<double>(d.memory_bytes);
      if (device_bytes <= 0 || per_slot * slots * buffers <= 0.9 * device_bytes) continue;
      char text[256];
      std::snprintf(text, sizeof text,
                    "a %dx%d frame needs %.1f GiB of device memory for %.0f slots (the frame, "
                    "its coefficients and what comes back), device %d has %.1f GiB",
                    o.width, o.height, per_slot * slots * buffers / (1 << 30), slots * buffers,
                    device, device_bytes / (1 << 30));
      return text;
    }
  } catch (...) {
  }
  return "";
}

}  // namespace mjpeg
