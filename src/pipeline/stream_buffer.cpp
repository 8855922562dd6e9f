#include "pipeline/stream_buffer.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <system_error>

#include "cuda_check.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg::pipeline {

namespace {

// A PICC violation: a stage was about to wait on an event that was never recorded for this use.
[[noreturn]] void protocol_error(const char* what, int slot) {
  throw Error(std::string("stream buffer: ") + what + " of slot " + std::to_string(slot) +
              " has not been recorded (PICC protocol violated)");
}

// Consumes one record of an event: the count of records must be ahead of the count of uses.
void use_record(std::atomic<std::uint64_t>& recorded, std::atomic<std::uint64_t>& used,
                const char* what, int slot) {
  const std::uint64_t next = used.load(std::memory_order_relaxed) + 1;
  if (recorded.load(std::memory_order_acquire) < next) protocol_error(what, slot);
  used.store(next, std::memory_order_relaxed);
}

}  // namespace

int parse_kernel_streams(const char* v) {
  if (v == nullptr || *v == '\0') return 0;
  const char* const end = v + std::strlen(v);
  int k = 0;
  const auto [stop, error] = std::from_chars(v, end, k);  // no blanks, no '+'
  if (error != std::errc() || stop != end || k < 1 || k > kMaxKernelStreams)
    throw UsageError(std::string("MJPEG_KERNEL_STREAMS: '") + v + "' is not a count from 1 to " +
                     std::to_string(kMaxKernelStreams));
  return k;
}

int kernel_streams_for(Offload mode, Rdo rdo) {
  if (!traits_of(mode).asynchronous) return 1;
  static const int forced = parse_kernel_streams(std::getenv("MJPEG_KERNEL_STREAMS"));
  if (forced != 0) return forced;
  return rdo == Rdo::trellis ? kTrellisKernelStreams : 1;
}

bool cuda_graphs_for(Offload mode, GpuOutput output) {
  if (!traits_of(mode).asynchronous || output != GpuOutput::tokens) return false;
  const char* v = std::getenv("MJPEG_CUDA_GRAPHS");
  if (v == nullptr || *v == '\0' || std::strcmp(v, "0") == 0) return false;
  if (std::strcmp(v, "1") == 0) return true;
  throw UsageError(std::string("MJPEG_CUDA_GRAPHS: '") + v + "' is not 0 or 1");
}

StreamBuffer::DeviceSelect::DeviceSelect(int device) { MJPEG_CUDA_CHECK(cudaSetDevice(device)); }

namespace {
// Without timing, events take no timestamps (cheaper records). header_ready and result_ready
// also sleep instead
// of spinning, because M entropy workers may wait on it at once.
unsigned event_flags(bool timing) { return timing ? cudaEventDefault : cudaEventDisableTiming; }
gpu::Event timing_event(bool timing) { return timing ? gpu::Event() : gpu::Event(nullptr); }
}  // namespace

StreamBuffer::Slot::Slot(bool timing)
    : data_ready(event_flags(timing)),
      transform_done(event_flags(timing)),
      header_ready(event_flags(timing) | cudaEventBlockingSync),
      result_ready(event_flags(timing) | cudaEventBlockingSync),
      upload_start(timing_event(timing)),
      kernel_start(timing_event(timing)),
      download_start(timing_event(timing)),
      body_start(timing_event(timing)) {}

StreamBuffer::StreamBuffer(const FrameGeometry& geometry, const QuantTables& tables,
                           const SourceFormat& input, int slots, Offload mode, int device,
                           KernelVariant variant, int stages, bool timing, GpuOutput output,
                           const EncodeOptions& encode, bool host_pixels)
    : select_(device), device_(device), variant_(variant), stages_(stages),
      timing_(timing), origin_(timing_event(timing)), output_(output) {
  if (slots < 1) throw UsageError("stream buffer: at least one slot is needed");
  if (input.width != geometry.width || input.height != geometry.height)
    throw UsageError("stream buffer: the input size differs from the geometry");
  planar_ = input.is_planar();
  row_bytes_ = input.row_bytes();
  pixel_bytes_ = input.frame_bytes();
  coeff_bytes_ = geometry.coefficient_count() * sizeof(std::int16_t);
  if (planar_) {
    layout_ = planar_layout(input.width, input.height, input.planar.chroma);
    plan_ = std::make_unique<gpu::TransformPlan>(geometry, tables, input.planar);
  } else {
    plan_ = std::make_unique<gpu::TransformPlan>(geometry, tables, input.format);
  }
  const int kernel_count = kernel_streams_for(mode, tables.rdo);
  for (int k = 0; k < kernel_count; ++k) kernels_.emplace_back();
  if (output_ == GpuOutput::tokens) {
    // A stream as long as the coefficients' bytes fits the same host memory; a longer one (noise
    // at quality 100, say) is an overflow, and then the coefficients come back instead.
    const std::size_t capacity = geometry.coefficient_count() * sizeof(std::int16_t);
    // Coded blocks unless MJPEG_TOKEN_FORMAT=slots asks for symbol slots (requested_token_format).
    const bool blocks =
        token_format_for(geometry, encode, requested_token_format()) == tokens::Format::blocks;
    const int table_count = geometry.num_components == 1 ? 1 : 2;
    for (int k = 0; k < kernel_count; ++k) {
      if (blocks)
        tokenizers_.push_back(std::make_unique<gpu::TokenizePlan>(
            geometry, ac_codes(frame_tables(table_count, nullptr), table_count), capacity));
      else
        tokenizers_.push_back(std::make_unique<gpu::TokenizePlan>(
            geometry, encode.restart_interval, encode.optimize, capacity));
    }
    header_bytes_ = tokenizers_.front()->header_bytes();
    blocks_ = geometry.total_blocks;
  }
  // The host memory a slot's result comes back to. Coefficients: all of them. A token stream:
  // a quarter of the coefficients' bytes at first (coded blocks of a q90 frame are an eighth
  // of them), grown to the coefficients' bytes by the first frame whose stream is longer or
  // overflows (copy_body): page-locking 6 MB per slot at 1080p, 25 MB at 4K, was most of the
  // set-up's time and memory.
  const std::size_t result_bytes =
      header_bytes_ + (output_ == GpuOutput::tokens ? coeff_bytes_ / 4 : coeff_bytes_);

  slot_count_ = slots;
  pinned_ = traits_of(mode).pinned_host;
  for (int i = 0; i < slots; ++i) {
    slots_.push_back(std::make_unique<Slot>(timing));
    Slot& s = *slots_.back();
    if (pinned_) {
      if (host_pixels) s.pinned_pixels = gpu::PinnedBuffer(pixel_bytes_);
      s.host_pixels = s.pinned_pixels.as<std::uint8_t>();
    } else {
      // Pageable, as a plain program would have it (the SOK baseline).
      if (host_pixels) s.pageable_pixels.reset(new std::uint8_t[pixel_bytes_]);
      s.host_pixels = s.pageable_pixels.get();
    }
    allocate_result(s, result_bytes);
    s.device_pixels = gpu::DeviceBuffer(pixel_bytes_);
    s.device_coeffs = gpu::DeviceBuffer(coeff_bytes_);
    if (tokens()) s.device_tokens = gpu::DeviceBuffer(tokenizers_.front()->output_bytes());
  }
  if (cuda_graphs_for(mode, output_))
    graphs_.resize(static_cast<std::size_t>(slots) * static_cast<std::size_t>(kernel_count));
}

StreamBuffer::~StreamBuffer() { drain(); }

void StreamBuffer::bind_thread() const { MJPEG_CUDA_CHECK(cudaSetDevice(device_)); }

void StreamBuffer::drain() noexcept {
  // Buffers may still be the source or target of queued copies after an error: wait before
  // anything is freed.
  MJPEG_CUDA_WARN(cudaSetDevice(device_));
  MJPEG_CUDA_WARN(cudaStreamSynchronize(upload_.get()));
  for (const gpu::Stream& k : kernels_) MJPEG_CUDA_WARN(cudaStreamSynchronize(k.get()));
  MJPEG_CUDA_WARN(cudaStreamSynchronize(download_.get()));
  MJPEG_CUDA_WARN(cudaStreamSynchronize(body_.get()));
}

void StreamBuffer::launch(const gpu::DeviceBuffer& pixels, const gpu::DeviceBuffer& coeffs,
                          cudaStream_t stream) {
  const std::uint8_t* base = pixels.as<std::uint8_t>();
  if (planar_) {
    const std::uint8_t* planes[3] = {base + layout_.offset[0], base + layout_.offset[1],
                                     base + layout_.offset[2]};
    gpu::launch_transform_planar(*plan_, planes, layout_.pitch, coeffs.as<std::int16_t>(),
                                 variant_, stages_, stream);
  } else {
    gpu::launch_transform(*plan_, base, row_bytes_, coeffs.as<std::int16_t>(), variant_, stages_,
                          stream);
  }
}

void StreamBuffer::copy_to_device(void* dst, const std::uint8_t* src, std::size_t bytes,
                                  cudaStream_t stream, bool sync) const {
  auto* d = static_cast<std::uint8_t*>(dst);
  while (bytes > 0) {
    std::size_t piece = bytes;
    if (window_bytes_ > 0 && src >= window_origin_) {
      const auto into = static_cast<std::size_t>(src - window_origin_) % window_bytes_;
      piece = std::min(bytes, window_bytes_ - into);
    }
    if (sync) {
      MJPEG_CUDA_CHECK(cudaMemcpy(d, src, piece, cudaMemcpyHostToDevice));
    } else {
      MJPEG_CUDA_CHECK(cudaMemcpyAsync(d, src, piece, cudaMemcpyHostToDevice, stream));
    }
    d += piece;
    src += piece;
    bytes -= piece;
  }
}

void StreamBuffer::upload_async(int slot, const std::uint8_t* src) {
  Slot& s = *slots_[slot];
  // N producers share the upload stream: one producer's records and copy must not interleave
  // with another's, or a timed span [upload_start, data_ready] would also cover the other
  // frame's copy. The lock only orders the enqueueing.
  std::lock_guard<std::mutex> lock(upload_mutex_);
  // (1) initiate the transfer, (2) record DATARDY behind it in the same stream,
  // (3) signal on the host that the event exists (release: the record happens-before).
  if (timing_) s.upload_start.record(upload_.get());
  copy_to_device(s.device_pixels.get(), src, pixel_bytes_, upload_.get(), false);
  s.data_ready.record(upload_.get());
  s.data_ready_recorded.fetch_add(1, std::memory_order_release);
}

void StreamBuffer::write_async(int slot,
                               const std::function<void(std::uint8_t*, gpu::StreamHandle)>& work) {
  Slot& s = *slots_[slot];
  std::lock_guard<std::mutex> lock(upload_mutex_);
  if (timing_) s.upload_start.record(upload_.get());
  work(s.device_pixels.as<std::uint8_t>(), upload_.get());
  s.data_ready.record(upload_.get());
  s.data_ready_recorded.fetch_add(1, std::memory_order_release);
}

void StreamBuffer::transform_async(int slot) {
  Slot& s = *slots_[slot];
  use_record(s.data_ready_recorded, s.data_ready_used, "data_ready", slot);
  // The kernel streams in turn: a frame's kernels overlap the previous frame's tail.
  s.kernel_stream = next_kernel_;
  next_kernel_ = (next_kernel_ + 1) % kernel_streams();
  const cudaStream_t kernel = kernels_[static_cast<std::size_t>(s.kernel_stream)].get();
  if (graphs_.empty()) {
    issue_kernels(s, kernel, false);
  } else {
    // One launch of the graph this slot and kernel stream captured at its first frame.
    gpu::GraphExec& g = graphs_[static_cast<std::size_t>(slot * kernel_streams() + s.kernel_stream)];
    if (!g) g = gpu::GraphExec::capture(kernel, [&] { issue_kernels(s, kernel, true); });
    g.launch(kernel);
  }
  // The download stream waits for transform_done and copies the header (tokens) or the
  // coefficients back.
  MJPEG_CUDA_CHECK(cudaStreamWaitEvent(download_.get(), s.transform_done.get(), 0));
  if (timing_) s.download_start.record(download_.get());
  if (tokens()) {
    MJPEG_CUDA_CHECK(cudaMemcpyAsync(s.host_result, s.device_tokens.get(), header_bytes_,
                                     cudaMemcpyDeviceToHost, download_.get()));
    s.header_ready.record(download_.get());
    s.header_ready_recorded.fetch_add(1, std::memory_order_release);
  } else {
    MJPEG_CUDA_CHECK(cudaMemcpyAsync(s.host_result, s.device_coeffs.get(), coeff_bytes_,
                                     cudaMemcpyDeviceToHost, download_.get()));
    s.two_copies = false;
    s.got_tokens = false;
    s.result_bytes = coeff_bytes_;
    s.result_ready.record(download_.get());
    s.result_ready_recorded.fetch_add(1, std::memory_order_release);
  }
}

void StreamBuffer::issue_kernels(Slot& s, cudaStream_t kernel, bool graph) {
  // In a graph the events are external: its record nodes record them at every launch, and its
  // wait node waits for data_ready's latest record when the graph is launched.
  const auto record = [graph, kernel](const gpu::Event& e) {
    if (graph) {
      MJPEG_CUDA_CHECK(cudaEventRecordWithFlags(e.get(), kernel, cudaEventRecordExternal));
    } else {
      e.record(kernel);
    }
  };
  // The consumer completes PICC on the GPU: the kernel stream waits for DATARDY, the host
  // thread goes on issuing.
  MJPEG_CUDA_CHECK(cudaStreamWaitEvent(kernel, s.data_ready.get(),
                                       graph ? cudaEventWaitExternal : cudaEventWaitDefault));
  if (timing_) record(s.kernel_start);
  launch(s.device_pixels, s.device_coeffs, kernel);
  if (tokens())
    gpu::launch_tokenize(*tokenizers_[static_cast<std::size_t>(s.kernel_stream)],
                         s.device_coeffs.as<std::int16_t>(), s.device_tokens.get(), kernel);
  record(s.transform_done);
}

void StreamBuffer::allocate_result(Slot& s, std::size_t bytes) {
  if (pinned_) {
    gpu::PinnedBuffer b(bytes);
    if (s.host_result != nullptr) std::memcpy(b.get(), s.host_result, header_bytes_);
    // The smaller buffer is freed with the slot: cudaFreeHost would wait for the whole device.
    s.retired_result = std::move(s.pinned_result);
    s.pinned_result = std::move(b);
    s.host_result = s.pinned_result.as<std::uint8_t>();
  } else {
    std::unique_ptr<std::uint8_t[]> b(new std::uint8_t[bytes]);
    if (s.host_result != nullptr) std::memcpy(b.get(), s.host_result, header_bytes_);
    s.pageable_result = std::move(b);
    s.host_result = s.pageable_result.get();
  }
  s.result_capacity = bytes;
}

void StreamBuffer::copy_body(Slot& s, cudaStream_t stream, bool sync) {
  tokens::StreamHeader h;
  std::memcpy(&h, s.host_result, sizeof h);
  s.two_copies = true;
  s.got_tokens = h.overflow == 0;
  const std::size_t bytes = s.got_tokens ? std::size_t{h.body_bytes} : coeff_bytes_;
  // A stream longer than the slot's first guess, or the coefficients of an overflow: the
  // slot's host memory becomes the most any frame needs (once per slot).
  if (header_bytes_ + bytes > s.result_capacity) allocate_result(s, header_bytes_ + coeff_bytes_);
  const void* src = s.got_tokens
                        ? static_cast<const void*>(s.device_tokens.as<std::uint8_t>() + header_bytes_)
                        : s.device_coeffs.get();
  s.result_bytes = header_bytes_ + bytes;
  if (timing_) s.body_start.record(stream);
  if (bytes == 0) return;
  if (sync)
    MJPEG_CUDA_CHECK(cudaMemcpy(s.host_result + header_bytes_, src, bytes, cudaMemcpyDeviceToHost));
  else
    MJPEG_CUDA_CHECK(cudaMemcpyAsync(s.host_result + header_bytes_, src, bytes,
                                     cudaMemcpyDeviceToHost, stream));
}

void StreamBuffer::wait_header(int slot) {
  Slot& s = *slots_[slot];
  if (!tokens()) throw Error("stream buffer: wait_header needs the token output");
  use_record(s.header_ready_recorded, s.header_ready_used, "header_ready", slot);
  s.header_ready.synchronize();  // the stream's length is in the header
}

void StreamBuffer::download_async(int slot) {
  Slot& s = *slots_[slot];
  if (!tokens()) throw Error("stream buffer: download_async needs the token output");
  // On a stream of their own: on the download stream a body would queue behind the next
  // frames' header copies, each waiting for its kernel, and the workers would wait for bodies
  // long since downloadable.
  copy_body(s, body_.get(), false);
  s.result_ready.record(body_.get());
  s.result_ready_recorded.fetch_add(1, std::memory_order_release);
}

void StreamBuffer::wait_result(int slot) {
  Slot& s = *slots_[slot];
  use_record(s.result_ready_recorded, s.result_ready_used, "result_ready", slot);
  s.result_ready.synchronize();
}

TransformResult StreamBuffer::result(int slot) const {
  const Slot& s = *slots_[slot];
  TransformResult r;
  r.coeffs = host_coeffs(s);
  if (!s.got_tokens) return r;
  r.is_tokens = true;
  r.tokens = stream_view(s.host_result, header_bytes_, blocks_);
  r.coeffs = nullptr;
  return r;
}

void StreamBuffer::offload_sync(int slot, const std::uint8_t* src) {
  Slot& s = *slots_[slot];
  // A plain synchronous program: copy, launch and wait all on the legacy default stream, which
  // orders the kernel after the copy. The kernel must not go to the non-blocking kernel
  // stream here: a cudaMemcpy from pageable memory may return before its DMA has finished,
  // and nothing would order the kernel after it.
  // With timing, the events go to the same legacy stream between the calls; the stream
  // orders them with the copies and the kernel.
  cudaStream_t legacy = nullptr;
  if (timing_) s.upload_start.record(legacy);
  copy_to_device(s.device_pixels.get(), src, pixel_bytes_, legacy, true);
  if (timing_) {
    s.data_ready.record(legacy);
    s.kernel_start.record(legacy);
  }
  launch(s.device_pixels, s.device_coeffs, legacy);
  if (tokens())
    gpu::launch_tokenize(*tokenizers_.front(), s.device_coeffs.as<std::int16_t>(), s.device_tokens.get(),
                         legacy);
  if (timing_) s.transform_done.record(legacy);
  MJPEG_CUDA_CHECK(cudaStreamSynchronize(legacy));
  if (timing_) s.download_start.record(legacy);
  if (tokens()) {
    MJPEG_CUDA_CHECK(cudaMemcpy(s.host_result, s.device_tokens.get(), header_bytes_,
                                cudaMemcpyDeviceToHost));
    if (timing_) s.header_ready.record(legacy);
    copy_body(s, legacy, true);
  } else {
    MJPEG_CUDA_CHECK(cudaMemcpy(s.host_result, s.device_coeffs.get(), coeff_bytes_,
                                cudaMemcpyDeviceToHost));
    s.two_copies = false;
    s.got_tokens = false;
    s.result_bytes = coeff_bytes_;
  }
  if (timing_) {
    s.result_ready.record(legacy);
    s.result_ready.synchronize();  // the record after a synchronous copy completes at once
  }
}

void StreamBuffer::start_clock(std::chrono::steady_clock::time_point origin) {
  if (!timing_) throw Error("stream buffer: start_clock needs a buffer built with timing");
  using Clock = std::chrono::steady_clock;
  bind_thread();  // the caller may have another device selected (several stream buffers)
  const Clock::time_point before = Clock::now();
  origin_.record(upload_.get());
  origin_.synchronize();
  const Clock::time_point after = Clock::now();
  origin_host_s_ = std::chrono::duration<double>(before - origin).count() +
                   0.5 * std::chrono::duration<double>(after - before).count();
}

GpuTimes StreamBuffer::gpu_times(int slot) const {
  if (!timing_) throw Error("stream buffer: gpu_times needs a buffer built with timing");
  const Slot& s = *slots_[slot];
  auto at = [&](const gpu::Event& e) { return origin_host_s_ + 1e-3 * e.elapsed_since(origin_); };
  GpuTimes t;
  t.upload_start = at(s.upload_start);
  t.upload_end = at(s.data_ready);
  t.kernel_start = at(s.kernel_start);
  t.kernel_end = at(s.transform_done);
  t.kernel_stream = s.kernel_stream;
  t.download_start = at(s.download_start);
  t.download_end = at(s.result_ready);
  if (s.two_copies) {
    t.header_end = at(s.header_ready);
    t.body_start = at(s.body_start);
  }
  return t;
}

}  // namespace mjpeg::pipeline
