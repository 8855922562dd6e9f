#include "pipeline/observer.hpp"

#include <algorithm>

#if MJPEG_WITH_CUDA
#include <nvtx3/nvToolsExt.h>
#else
// A build without CUDA: no NVTX ranges (they are for Nsight Systems, which profiles the GPU
// build).
namespace {
inline void nvtxRangePushA(const char*) {}
inline void nvtxRangePop() {}
}  // namespace
#endif

namespace mjpeg::pipeline {

namespace {

/// Entry `id` of a list of tracks, or -1 (not tracing).
int track_of(const std::vector<int>& tracks, int id) {
  return id >= 0 && id < static_cast<int>(tracks.size()) ? tracks[static_cast<std::size_t>(id)]
                                                         : -1;
}

}  // namespace

void RunObserver::set_buffers(const std::vector<int>& devices, bool gpu_timed,
                              int kernel_streams) {
  gpu_timed_ = gpu_timed;
  kernel_streams_ = kernel_streams;
  buffer_count_ = devices.size();
  buffers_.reset(new Buffer[devices.size()]);
  for (std::size_t b = 0; b < devices.size(); ++b) buffers_[b].device = devices[b];
}

void RunObserver::add_tracks(int producers, const std::vector<BufferTracks>& buffers,
                             int workers) {
  if (!trace_) return;
  for (int p = 0; p < producers; ++p)
    producer_track_.push_back(trace_->add_track("producer " + std::to_string(p)));
  for (std::size_t b = 0; b < buffers.size() && b < buffer_count_; ++b) {
    const BufferTracks& t = buffers[b];
    Buffer& buf = buffers_[b];
    buf.dispatcher = trace_->add_track(t.dispatcher);
    buf.downloader = t.downloader.empty() ? -1 : trace_->add_track(t.downloader);
    std::vector<int> streams;
    for (const std::string& name : t.streams) streams.push_back(trace_->add_track(name, true));
    buf.upload = track_of(streams, t.upload);
    for (int k = 0; k < t.kernels; ++k) buf.kernels.push_back(track_of(streams, t.kernel + k));
    buf.download = track_of(streams, t.download);
    buf.body = track_of(streams, t.body);
  }
  for (int w = 0; w < workers; ++w)
    worker_track_.push_back(trace_->add_track("entropy " + std::to_string(w)));
  writer_track_ = trace_->add_track("writer");
}

std::atomic<std::int64_t>& RunObserver::counter(SpanKind kind, int thread) {
  if (kind == SpanKind::dispatch || kind == SpanKind::sync)
    return buffers_[static_cast<std::size_t>(thread)].gpu_ns;
  return busy_ns_[static_cast<int>(kind)];
}

int RunObserver::track(SpanKind kind, int thread) const {
  switch (kind) {
    case SpanKind::read:
    case SpanKind::upload:
      return track_of(producer_track_, thread);
    case SpanKind::dispatch:
    case SpanKind::sync:
      return trace_ ? buffers_[static_cast<std::size_t>(thread)].dispatcher : -1;
    case SpanKind::download:
      return trace_ ? buffers_[static_cast<std::size_t>(thread)].downloader : -1;
    case SpanKind::wait:
    case SpanKind::transform:
    case SpanKind::entropy:
      return track_of(worker_track_, thread);
    case SpanKind::write:
      return writer_track_;
    case SpanKind::kernel:
      break;
  }
  return -1;
}

RunObserver::Scope::Scope(RunObserver& observer, SpanKind kind, int thread, std::int64_t frame)
    : observer_(observer), kind_(kind), thread_(thread), frame_(frame), t0_(Clock::now()) {
  nvtxRangePushA(to_string(kind));
}

RunObserver::Scope::~Scope() {
  const Clock::time_point t1 = Clock::now();
  nvtxRangePop();
  observer_.counter(kind_, thread_)
      .fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0_).count(),
                 std::memory_order_relaxed);
  if (observer_.trace_ && frame_ >= 0)  // not the end probe
    observer_.trace_->add(observer_.track(kind_, thread_), kind_, frame_, t0_, t1);
}

void RunObserver::gpu_frame(int buffer, std::int64_t frame, const GpuTimes& t) {
  Buffer& b = buffers_[static_cast<std::size_t>(buffer)];
  gpu_log_.add(t);
  b.log.add(t);
  if (!trace_) return;
  trace_->add(Span{b.upload, SpanKind::upload, frame, t.upload_start, t.upload_end});
  trace_->add(Span{track_of(b.kernels, t.kernel_stream), SpanKind::kernel, frame, t.kernel_start,
                   t.kernel_end});
  if (t.body_start >= 0) {  // the token stream: header copy, then the body copy
    trace_->add(Span{b.download, SpanKind::download, frame, t.download_start, t.header_end});
    trace_->add(Span{b.body, SpanKind::download, frame, t.body_start, t.download_end});
  } else {
    trace_->add(Span{b.download, SpanKind::download, frame, t.download_start, t.download_end});
  }
}

void RunObserver::fill(Stats& st) {
  auto s = [this](SpanKind kind) { return busy(kind) * 1e-9; };
  st.read_s = s(SpanKind::read);
  st.upload_issue_s = s(SpanKind::upload);
  for (std::size_t b = 0; b < buffer_count_; ++b) {
    BufferStats bs;
    bs.device = buffers_[b].device;
    bs.frames = buffers_[b].frames.load();
    bs.gpu_s = buffers_[b].gpu_ns.load() * 1e-9;
    if (gpu_timed_) buffers_[b].log.fill(bs);
    st.gpu_s += bs.gpu_s;
    st.buffers.push_back(bs);
  }
  st.download_issue_s = s(SpanKind::download);
  st.token_frames = token_frames_.load();
  st.transform_cpu_s = s(SpanKind::transform);
  st.coeff_wait_s = s(SpanKind::wait);
  st.entropy_s = s(SpanKind::entropy);
  st.write_s = s(SpanKind::write);
  if (buffer_count_ > 0) st.download_bytes = download_bytes_.load();
  if (gpu_timed_) {
    st.gpu_timed = true;
    st.kernel_streams = kernel_streams_;
    gpu_log_.fill(st);
  }
}

void RunObserver::GpuSpanLog::add(const GpuTimes& t) {
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

void RunObserver::GpuSpanLog::fill(BufferStats& b) {
  std::lock_guard<std::mutex> lock(mutex_);
  b.upload_gpu_s = upload_s_;
  b.kernel_gpu_s = kernel_s_;
  b.download_gpu_s = download_s_;
}

void RunObserver::GpuSpanLog::fill(Stats& st) {
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

}  // namespace mjpeg::pipeline
