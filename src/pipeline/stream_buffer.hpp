// The stream buffer (docs/ARCHITECTURE.md, "The stream buffer and its events"): K slots between
// the host producers, the GPU transform and the host entropy workers.
//
// Per slot (allocated once per geometry, never per frame):
//   host pixels (pinned; pageable in mode sok, not sok_pinned), device pixels (one frame in
//   the source's layout: packed rows, or planar Y, Cb, Cr back to back: 1.5 bytes per pixel
//   at 4:2:0, converted to RGB by the transform kernels),
//   device coefficients, device token stream (header + slots, cuda/gpu_tokenize.hpp),
//   host result (pinned in AOK and pinned SOK): the stream header, then the token slots or,
//   when they would not fit (or the buffer downloads coefficients), the coefficients;
//   events data_ready (upload stream), transform_done (kernel stream), header_ready and
//   result_ready (download stream; blocking-sync so that waiting threads sleep, not spin).
// Streams: one upload stream, kernel_streams() kernel streams (kernel_streams_for(), one by
// default; where several, frames take them in turn, each with its own tokenizer scratch) and one download stream (all
// non-blocking), shared by all slots (AOK), and with token output a second download stream for
// the streams' bodies (issued by the downloader; nothing on it waits for the GPU); SOK uses the
// legacy default stream (see offload_sync).
//
// What comes back (Output): `tokens` (default): the kernel stream tokenizes the coefficients
// on the GPU and only the compact token stream crosses PCIe (coded blocks, 13% of the
// coefficients' bytes for a 1080p frame at quality 90; symbol slots, where the tables come
// from the frame or with MJPEG_TOKEN_FORMAT=slots, 29%); `coefficients`: the int16
// coefficients.
// The token stream's length is only known on the GPU, so its download has two steps: the
// fixed-size header first, then, once the host has read the length from it, exactly the slots.
//
// AOK follows the PICC protocol (producer initiates, consumer completes):
//   producer:   upload_async(slot): cudaMemcpyAsync H2D on the upload stream, then record
//               data_ready; then it bumps the slot's host-side count and hands the slot on.
//   dispatcher: transform_async(slot): checks the count (the event exists), makes the kernel
//               stream wait on data_ready (a GPU-side wait, the host does not block), launches
//               the transform (and the tokenizer), records transform_done; the download stream
//               waits on it and copies the header (tokens; records header_ready) or the
//               coefficients (records result_ready); bumps the count of what it recorded.
//               With MJPEG_CUDA_GRAPHS=1 (cuda_graphs_for) the kernel stream's part is one
//               graph launch per frame, captured once per slot and kernel stream.
//   downloader: wait_header(slot), download_async(slot) (tokens only): checks the count, waits
//               for header_ready, reads the stream's length and copies exactly that much (or
//               the coefficients on overflow), records result_ready and bumps its count.
//   worker:     wait_result(slot): checks the count, then cudaEventSynchronize(result_ready);
//               result(slot) says what arrived.
// CUDA leaves waiting on a never-recorded event undefined (it returns at once), hence the
// host-side counts: a stage only waits on an event whose record the count proves. In the
// pipeline, a slot id only enters the next stage's queue after the count was bumped, so the
// check never blocks; it guards the protocol (a violation throws instead of racing).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_raii.hpp"
#include "gpu_tokenize.hpp"
#include "gpu_transform.hpp"
#include "core/quant.hpp"
#include "jpeg/tokens.hpp"
#include "core/geometry.hpp"
#include "mjpeg/options.hpp"
#include "pipeline/frame_source.hpp"
#include "pipeline/observer.hpp"
#include "pipeline/offload.hpp"

namespace mjpeg::pipeline {

/// Kernel streams of an aok stream buffer whose frames use the trellis search: its kernel (one
/// thread per block) fills about a tenth of an H100 (11% achieved occupancy at 1080p), so the
/// searches of six frames run side by side (measured, docs/rdo.md: RGB 1080p bound by the
/// upload again, where one stream made 0.69x of the default rounding; planar 1080p frames, where
/// the kernels bind, 0.88-0.91x the default rounding's fps with six streams, 0.67-0.95x with
/// four, 0.62-0.81x with three; eight no faster than six).
inline constexpr int kTrellisKernelStreams = 6;

/// The most kernel streams MJPEG_KERNEL_STREAMS may ask for.
inline constexpr int kMaxKernelStreams = 8;

/// Kernel streams of a stream buffer in `mode` for frames rounded by `rdo`: 1 (the kernels of
/// the default rounding keep the GPU busy; a second stream measured no faster,
/// docs/BENCHMARKS.md), kTrellisKernelStreams under Rdo::trellis in aok, and in aok
/// MJPEG_KERNEL_STREAMS (1..kMaxKernelStreams) when set (read once).
int kernel_streams_for(Offload mode, Rdo rdo);

/// MJPEG_KERNEL_STREAMS's value `v`: 0 where unset or empty, else a count 1..kMaxKernelStreams
/// in decimal digits; anything else is a UsageError naming the range.
int parse_kernel_streams(const char* v);

/// Whether a stream buffer in `mode` with `output` launches each frame's kernel-stream work
/// (the wait for data_ready, the transform, the tokenizer, the events) as one CUDA graph,
/// captured once per slot and kernel stream: in aok with token output when MJPEG_CUDA_GRAPHS=1
/// (read at each stream buffer's construction; 0 or unset: call by call, the default). The
/// bytes are the same either way; graphs take a third off the dispatcher's time per frame but
/// measured no faster (docs/BENCHMARKS.md, "CUDA graphs").
bool cuda_graphs_for(Offload mode, GpuOutput output);

class StreamBuffer {
 public:
  /// Selects `device` for the calling thread and allocates everything. Throws mjpeg::Error.
  /// `mode` (sok, sok_pinned or aok): the host slots are page-locked except in sok.
  /// `timing`: every slot also gets start events and all events take timestamps, so that
  /// gpu_times() can say when each copy and kernel ran (a little dearer per record).
  /// `output`: what comes back; with tokens, `encode` and MJPEG_TOKEN_FORMAT say which format
  /// the tokenizer writes (token_format_for, requested_token_format) and for which restart
  /// interval. `host_pixels`: false when every frame is uploaded from memory of its own (lent,
  /// page-locked frames, or frames in device memory): the slots then get no host pixel buffer
  /// (host_pixels() is null), a third less page-locked memory to allocate.
  StreamBuffer(const FrameGeometry& geometry, const QuantTables& tables,
               const SourceFormat& input, int slots, Offload mode, int device, KernelVariant variant,
               int stages, bool timing = false, GpuOutput output = GpuOutput::coefficients,
               const EncodeOptions& encode = EncodeOptions{}, bool host_pixels = true);
  /// Waits for outstanding GPU work (never throws), then frees.
  ~StreamBuffer();
  StreamBuffer(const StreamBuffer&) = delete;
  StreamBuffer& operator=(const StreamBuffer&) = delete;

  int slots() const { return slot_count_; }
  /// Kernel streams the transforms are issued on (1 in SOK: the legacy default stream).
  int kernel_streams() const { return static_cast<int>(kernels_.size()); }
  std::size_t pixel_bytes() const { return pixel_bytes_; }
  std::size_t row_bytes() const { return row_bytes_; }
  std::uint8_t* host_pixels(int slot) const { return slots_[slot]->host_pixels; }
  GpuOutput output() const { return output_; }

  /// Every thread that calls into CUDA must select the device first.
  void bind_thread() const;

  // --- AOK (asynchronous offload) ---------------------------------------------------------
  /// Producer side of PICC: H2D copy + data_ready record on the upload stream, count bumped.
  /// `src`: the frame's host bytes (pixel_bytes()); the slot's own host_pixels, or a frame
  /// that stays in (pinned) memory until its result is back (copied where it lies).
  void upload_async(int slot, const std::uint8_t* src);
  /// Producer side of PICC for frames that lie in device memory: `work(dst, stream)` enqueues
  /// on the upload stream what writes the slot's device pixels (a device-to-device copy or
  /// conversion); data_ready is recorded behind it and the count bumped.
  void write_async(int slot,
                   const std::function<void(std::uint8_t* dst, gpu::StreamHandle stream)>& work);
  /// Frames uploaded from memory page-locked in windows of `window` bytes from `origin` (a
  /// mapped file, FrameSource::lent_lock_windows): their copies are split where they cross a
  /// window boundary, since CUDA refuses one copy across two registrations. Before the first
  /// upload.
  void split_copies_at(const std::uint8_t* origin, std::size_t window) {
    window_origin_ = origin;
    window_bytes_ = window;
  }
  /// Dispatcher: kernel (and tokenizer) after data_ready; after transform_done the download of
  /// the coefficients (result_ready) or of the token stream's header (header_ready).
  void transform_async(int slot);
  /// Downloader (tokens only): returns once the slot's token-stream header is in host memory.
  void wait_header(int slot);
  /// Downloader (tokens only), after wait_header: copies exactly the stream (or the
  /// coefficients on overflow) and records result_ready.
  void download_async(int slot);
  /// Worker: returns once the slot's result is in host memory.
  void wait_result(int slot);
  /// What the slot's last frame came back as (after wait_result / offload_sync).
  TransformResult result(int slot) const;

  // --- SOK (synchronous offload) ----------------------------------------------------------
  /// Blocking cudaMemcpy in, launch, synchronize, blocking cudaMemcpy out, all on the legacy
  /// default stream (not the three streams above), as a plain synchronous program does.
  void offload_sync(int slot, const std::uint8_t* src);

  /// Blocks until all three streams are idle (used on shutdown). Never throws.
  void drain() noexcept;

  // --- Timing (constructed with timing = true) ----------------------------------------------
  bool timing() const { return timing_; }
  /// Ties GPU event time to the host clock: records an event, waits for it and takes the host
  /// time (the midpoint of the record and the wake-up; error a few microseconds). Call once,
  /// before the first frame, with the origin the times should be relative to.
  void start_clock(std::chrono::steady_clock::time_point origin);
  /// The GPU times of the slot's last frame. Valid once that frame's coefficients are in host
  /// memory (after wait_coeffs / offload_sync).
  GpuTimes gpu_times(int slot) const;
  std::size_t upload_bytes() const { return pixel_bytes_; }     ///< per frame, host to device
  /// Device-to-host bytes of the slot's last frame (header and stream, or coefficients).
  std::size_t download_bytes(int slot) const { return slots_[slot]->result_bytes; }

  /// For a test hook (test_hooks.hpp): the stream the next transform is issued on (`sync`,
  /// i.e. offload_sync: the legacy default stream, null; else the next kernel stream) and the
  /// slot's device pixels and coefficients.
  cudaStream_t transform_stream(bool sync) const {
    return sync ? nullptr : kernels_[static_cast<std::size_t>(next_kernel_)].get();
  }
  void* device_pixels(int slot) const { return slots_[slot]->device_pixels.get(); }
  void* device_coeffs(int slot) const { return slots_[slot]->device_coeffs.get(); }

 private:
  struct Slot {
    gpu::PinnedBuffer pinned_pixels, pinned_result;
    gpu::PinnedBuffer retired_result;  ///< the first, smaller result memory, once grown
    std::unique_ptr<std::uint8_t[]> pageable_pixels;
    std::unique_ptr<std::uint8_t[]> pageable_result;
    std::uint8_t* host_pixels = nullptr;
    std::uint8_t* host_result = nullptr;  ///< header (tokens), then slots or coefficients
    std::size_t result_capacity = 0;      ///< bytes at host_result
    gpu::DeviceBuffer device_pixels, device_coeffs, device_tokens;
    gpu::Event data_ready, transform_done, header_ready, result_ready;
    // Timing only: recorded just before the copy in, the kernel, the (first) copy out and the
    // token stream's body copy.
    gpu::Event upload_start, kernel_start, download_start, body_start;
    int kernel_stream = 0;          ///< which kernel stream the last transform ran on
    bool two_copies = false;        ///< the last download was header + body
    bool got_tokens = false;        ///< the last result is a token stream
    std::size_t result_bytes = 0;   ///< device-to-host bytes of the last frame
    // Host-side counts of the records above (PICC): how many times each event was recorded,
    // and how many of those records a consumer has already used.
    std::atomic<std::uint64_t> data_ready_recorded{0}, data_ready_used{0};
    std::atomic<std::uint64_t> header_ready_recorded{0}, header_ready_used{0};
    std::atomic<std::uint64_t> result_ready_recorded{0}, result_ready_used{0};
    explicit Slot(bool timing);
  };
  /// Host pointer to the slot's coefficients / token slots (after the header area).
  const std::int16_t* host_coeffs(const Slot& s) const {
    return reinterpret_cast<const std::int16_t*>(s.host_result + header_bytes_);
  }
  /// After the header is in host memory: copies the body (slots or, on overflow, the
  /// coefficients) on `stream`, synchronously when `sync`; grows the slot's host memory first
  /// where the body does not fit.
  void copy_body(Slot& s, cudaStream_t stream, bool sync);
  /// The dispatcher's kernel-stream work for slot `s`'s frame: the wait for data_ready, the
  /// transform and the tokenizer, the kernel_start (timing) and transform_done records.
  /// `graph`: being captured (the events become external record and wait nodes).
  void issue_kernels(Slot& s, cudaStream_t kernel, bool graph);
  /// Gives slot `s` `bytes` of host result memory (page-locked in the modes that use it),
  /// keeping the header area's bytes.
  void allocate_result(Slot& s, std::size_t bytes);
  bool pinned_ = false;

  // Declared first: selects the device before the streams below are created.
  struct DeviceSelect {
    explicit DeviceSelect(int device);
  };
  DeviceSelect select_;
  int device_;
  KernelVariant variant_;
  int stages_;
  bool timing_ = false;
  gpu::Event origin_;        // timing: the event start_clock() recorded
  double origin_host_s_ = 0;  // ... and the host time it maps to (relative to the origin)
  std::size_t row_bytes_ = 0, pixel_bytes_ = 0, coeff_bytes_ = 0;
  bool planar_ = false;
  PlanarLayout layout_;  // planar input: where the planes lie in a slot
  void launch(const gpu::DeviceBuffer& pixels, const gpu::DeviceBuffer& coeffs,
              cudaStream_t stream);
  GpuOutput output_ = GpuOutput::coefficients;
  std::size_t header_bytes_ = 0;  // tokens: the stream header area at the start of host_result
  std::size_t blocks_ = 0;        // tokens: the geometry's blocks (coded blocks' word count)
  std::unique_ptr<gpu::TransformPlan> plan_;
  // One tokenizer per kernel stream: a plan's counts and offsets are scratch of one frame.
  std::vector<std::unique_ptr<gpu::TokenizePlan>> tokenizers_;  // empty: coefficients come back
  bool tokens() const { return !tokenizers_.empty(); }
  gpu::Stream upload_, download_;
  std::vector<gpu::Stream> kernels_;  // AOK: the kernel streams; SOK: one, unused
  int next_kernel_ = 0;               // the dispatcher's turn among kernels_
  // cuda_graphs_for: one graph per slot and kernel stream (slot * kernel_streams() + stream),
  // captured at its first frame; empty: each frame's work is issued call by call.
  std::vector<gpu::GraphExec> graphs_;
  gpu::Stream body_;  // tokens: the bodies (downloader only; no waits on GPU events)
  std::mutex upload_mutex_;    // producers enqueue on the upload stream one at a time
  /// Copies `bytes` from host `src` to `dst` as cudaMemcpyAsync calls on `stream` (or
  /// synchronous cudaMemcpy calls when `sync`), split at the lock windows' boundaries.
  void copy_to_device(void* dst, const std::uint8_t* src, std::size_t bytes, cudaStream_t stream,
                      bool sync) const;
  const std::uint8_t* window_origin_ = nullptr;
  std::size_t window_bytes_ = 0;
  int slot_count_ = 0;
  std::vector<std::unique_ptr<Slot>> slots_;  // Slot holds atomics: not movable
};

}  // namespace mjpeg::pipeline
