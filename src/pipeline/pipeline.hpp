// The streaming encoder: frames from a FrameSource -> JPEG frames, in order, into a FrameSink.
//
//   producers (N threads)  read_into() straight into a free slot's host pixels
//        | cpu: slot -> entropy queue          sok/aok: slot -> GPU queue
//   GPU dispatcher (1 thread per stream buffer, sok/aok)
//        sok: blocking cudaMemcpy in, launch (transform, tokenizer), cudaStreamSynchronize,
//             blocking cudaMemcpy out
//        aok: the stream buffer (stream_buffer.hpp): upload / kernel / download streams and the
//             per-slot events; the producer issues the upload (PICC: producer initiates)
//   GPU downloader (1 thread per stream buffer, aok with token output): once a frame's
//        token-stream header is on the host, issues the download of exactly its length
//   entropy workers (M threads)   cpu: transform_cpu + encode_coefficients (straight from the
//                                      source's memory when it lends its frames: no copy)
//                                 aok: wait on the slot's result_ready event, then code the
//                                 tokens (encode_tokens) or the coefficients
//   reorder + writer (1 thread)   frames leave strictly by index, never by completion
//
// K slots are allocated once (before the first frame); a slot carries one frame from the read
// to the write (sok/aok: to the end of its entropy coding) and is then recycled, so K bounds
// the frames in flight (back-pressure). Use
// K >= M + 2 or so to keep every stage busy. All modes write the same bytes.
//
// Several devices (PipelineOptions::devices): one stream buffer per entry, each with its own
// streams, events and K slots, allocated on its device, with its own dispatcher (and
// downloader). All slots of all buffers share one free-slot pool: a producer takes whichever
// slot is free first and the frame goes to that slot's device. In sok/aok a slot goes back to
// the pool as soon as its frame is coded (its JPEG waits for the writer in a frame record, 2K
// per buffer, which bound how far frames run ahead of the writer), so frames are handed out
// by availability: a slower device's slots come back later and it gets fewer frames, instead
// of the writer's order recycling the slots round robin. The entropy workers and the writer
// are shared; the writer still orders by index.
// Every thread sets the device of the buffer it is about to call (cudaSetDevice per thread).
//
// The run loop (Run, pipeline.cpp) only moves frames between these threads; what a mode does at
// each point of a frame is its Offloader's (offload.hpp: cpu, sok/sok-pinned, aok), and what is
// measured (busy times, trace spans, NVTX ranges, GPU times) goes to one RunObserver
// (observer.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpu_tokenize.hpp"
#include "gpu_transform.hpp"
#include "io/frame_sink.hpp"
#include "mjpeg/options.hpp"
#include "mjpeg/video.hpp"  // kMaxStreamBuffers, GpuOutput
#include "pipeline/frame_source.hpp"
#include "pipeline/trace.hpp"

namespace mjpeg::pipeline {

/// The offload mode is mjpeg::Offload (mjpeg/options.hpp): cpu, sok, sok_pinned, aok; the run
/// loop hands each frame to the mode's Offloader (offload.hpp).
class OffloadTestHooks;  // test_hooks.hpp

/// Sees each frame right after it was encoded, while its source pixels are still in the slot:
/// `pixels` is the frame as read (planar frames: the RGB that was encoded from them), `jpeg`
/// the bytes that will be written. Called by the entropy
/// workers, concurrently and in any order (index says which frame); must be thread-safe and must
/// not keep the references. An exception stops the encode like any other error.
using FrameObserver = std::function<void(std::int64_t index, const ImageView& pixels,
                                         const std::vector<std::uint8_t>& jpeg)>;

struct PipelineOptions {
  Offload mode = Offload::cpu;
  int producers = 1;         ///< N producer threads (>= 1)
  int slots = 8;             ///< K stream-buffer slots (>= 1); sok/aok: per stream buffer
  /// K was chosen by apply_default_counts: sok/aok may take fewer when that many slots would
  /// not fit the device's free memory (half of it) or a pinned-memory budget.
  bool slots_auto = false;
  int entropy_threads = 1;   ///< M entropy worker threads (>= 1)
  /// Self-balancing split (0: off, N and M stay fixed). When >= 2, N and M are the starting
  /// split and the pipeline moves threads between producers and entropy workers, keeping
  /// N + M = balance_threads, from the stages' measured busy time per frame during the first
  /// frames (see Balancer in pipeline.cpp); Stats says the split it ended with.
  int balance_threads = 0;
  int device = 0;            ///< CUDA device (sok/aok) when `devices` is empty
  /// sok/aok: the CUDA devices, one stream buffer (streams, events, K slots) per entry; frames
  /// go to whichever buffer has a free slot first. Empty: {device}. An index may repeat: each
  /// entry is one more stream buffer on that device ({0, 0}: two buffers on device 0, which
  /// runs the multi-device paths on one GPU). See device_list.
  std::vector<int> devices;
  KernelVariant variant = KernelVariant::pipeline;
  int stages = 2;            ///< cuda::pipeline stages of the kernel (1..4)
  /// sok/aok: what the GPU hands back: the token stream (the CPU only packs bits) or the int16
  /// coefficients (the CPU scans them). The same bytes either way. automatic: see gpu_output_for.
  GpuOutput gpu_output = GpuOutput::automatic;
  FrameObserver on_frame;    ///< optional (e.g. quality metrics of what is written)
  /// Optional, lighter than on_frame: only the coded frame (no pixels are prepared). Called by
  /// the entropy workers like on_frame (concurrently, any order); e.g. compare's byte check.
  std::function<void(std::int64_t index, const std::vector<std::uint8_t>& jpeg)> on_jpeg;
  /// sok/aok: time every copy and kernel with CUDA events (Stats::upload_gpu_s etc.).
  bool gpu_timing = false;
  /// Optional: record every stage's spans (host threads and, with a GPU, the streams; implies
  /// gpu_timing). The pipeline adds the tracks and sets the origin; must outlive the call.
  Trace* trace = nullptr;
  /// Tests only (test_hooks.hpp): called at fixed points of the GPU offload (fault injection,
  /// a slower stream buffer); null in production. Must outlive the call.
  OffloadTestHooks* test_hooks = nullptr;
  /// GPU modes: when set (its mode must be cpu), the encode starts on the CPU with these
  /// options while this run's GPU set-up (the device check, a context per device, the slots,
  /// the plans) is made on another thread. Once the GPU is ready the CPU reads no new frame,
  /// finishes and writes the ones it has, and the rest of the stream goes to the GPU: the
  /// GPU's start costs no time in which nothing is encoded. A stream that ends first is
  /// encoded on the CPU alone (encode_stream still waits for the set-up to end before it
  /// returns), and so is the whole stream when the set-up fails (Stats::gpu_problem). The
  /// same bytes either way.
  std::shared_ptr<const PipelineOptions> cpu_start;
  /// cpu_start runs: called on the set-up thread before the GPU run is made (e.g. the API's
  /// device and memory check, whose message says more than a failed CUDA call). What it
  /// throws leaves the whole stream to the CPU, as a failed set-up does.
  std::function<void()> check_gpu;
};

/// The stream buffers' devices: `devices`, or {device} when it is empty.
std::vector<int> device_list(const PipelineOptions& options);

/// Throws Error naming the first device of `devices` that is not among the `device_count`
/// present ("CUDA device 3 does not exist (2 found)"; `reason` says why none when 0).
void check_devices_exist(const std::vector<int>& devices, int device_count,
                         const std::string& reason = "");

/// Throws UsageError when a field is out of range.
void validate(const PipelineOptions& options);

/// What the GPU hands back in a run (tokens or coefficients): options.gpu_output unless it is
/// automatic, else the token stream, but
/// the coefficients for progressive JPEG (its scans code whole blocks band by band, so the CPU
/// would first rebuild the blocks from the tokens, which costs it more than the download).
GpuOutput gpu_output_for(const PipelineOptions& options, const EncodeOptions& encode);

/// Device memory one slot of a GPU stream buffer takes: the frame as uploaded (`frame_bytes`),
/// its int16 coefficients and, where tokens come back, the token stream (which holds at most
/// the coefficients' bytes, and its header). The one measure of the device-memory checks (the
/// API's gpu_memory_problem, the default slot count of the GPU offloaders).
std::size_t device_bytes_per_slot(std::size_t frame_bytes, const FrameGeometry& geometry,
                                  GpuOutput output);

/// Thread and slot counts for `mode` on a machine with `cores` cores; a request > 0 is kept,
/// 0 takes the default. With neither N nor M requested the split balances itself
/// (balance_threads = the cores left by the GPU dispatcher in sok/aok, all of them in cpu
/// mode), starting from 2 producers (1 on one core, or for frames already in memory) and the
/// rest entropy workers; except in
/// cpu mode on frames already in memory (`in_memory`, e.g. a MemoryFrameSource), where the
/// workers transform the frames where they lie: 1 producer and a worker on every core. With N
/// or M requested the other gets the cores left over, fixed. sok and aok leave one core to the
/// dispatcher (aok's downloader and writer share it: they mostly wait on events). K = max(8,
/// N + M + 2) slots in every mode: a GPU mode's slots are page-locked memory allocated before
/// the first frame, and more of them cost more start-up than they gain. `total_threads` > 0
/// (with neither N nor M requested): the split balances itself over that many threads instead
/// of the cores, in every mode (VideoOptions::threads; compare gives every mode the same).
void apply_default_counts(PipelineOptions& options, int cores, int producers = 0,
                          int entropy_threads = 0, int slots = 0, bool in_memory = false,
                          int total_threads = 0);

/// The producer count N (1..max_producers, below `threads`) with the most frames per second
/// when a producer spends `produce_s` and an entropy worker `consume_s` per frame: N producers
/// and M = threads - N workers sustain min(N / produce_s, M / consume_s); ties go to fewer
/// producers. The rule of the self-balancing split.
int balanced_producers(double produce_s, double consume_s, int threads, int max_producers);

/// One stream buffer's share of a sok/aok run.
struct BufferStats {
  int device = 0;                 ///< its CUDA device
  std::int64_t frames = 0;        ///< frames it transformed
  double gpu_s = 0;               ///< its dispatcher's busy time (as Stats::gpu_s)
  double upload_gpu_s = 0, kernel_gpu_s = 0, download_gpu_s = 0;  ///< timed runs only
};

/// Busy time of each stage, summed over the threads of the stage (seconds).
struct Stats {
  std::int64_t frames = 0;        ///< frames written to the sink
  std::uint64_t jpeg_bytes = 0;   ///< JPEG bytes handed to the sink (no container overhead)
  double wall_s = 0;              ///< whole encode_stream, allocation included
  double setup_s = 0;             ///< slot allocation, plans, stream creation
  double first_frame_s = 0;       ///< from the start to the first frame written
  double read_s = 0;              ///< producers inside FrameSource::read_into
  double upload_issue_s = 0;      ///< aok: producers issuing the H2D copy + DATARDY record
  double gpu_s = 0;               ///< sok: the blocking copy-in/launch/wait/copy-out;
                                  ///< aok: the dispatcher issuing kernel + download
  double transform_cpu_s = 0;     ///< cpu: transform_cpu in the workers
  double download_issue_s = 0;    ///< aok, tokens: the downloader issuing the exact copies
  double coeff_wait_s = 0;        ///< aok: workers blocked on result_ready events
  double entropy_s = 0;           ///< encode_coefficients
  double write_s = 0;             ///< FrameSink::write_frame
  // GPU work from CUDA events (sok/aok with gpu_timing or a trace; else 0).
  bool gpu_timed = false;
  double upload_gpu_s = 0;        ///< sum of the host-to-device copies
  double kernel_gpu_s = 0;        ///< sum of the transform kernels
  int kernel_streams = 1;         ///< aok: kernel streams per stream buffer (the kernels' lanes)
  int slots = 0;                  ///< slots as made, per stream buffer (the GPU modes' defaults
                                  ///< may differ from PipelineOptions::slots)
  double download_gpu_s = 0;      ///< sum of the device-to-host copies
  double gpu_union_s = 0;         ///< time in which at least one of them ran
  std::uint64_t upload_bytes = 0;    ///< host to device, all frames (sok/aok)
  std::uint64_t download_bytes = 0;  ///< device to host, all frames (sok/aok)
  std::int64_t token_frames = 0;     ///< sok/aok: frames coded from GPU tokens (the others
                                     ///< from coefficients: that output, or an overflow)
  int producers = 0;                 ///< the split the encode ended with (balancing may move
  int entropy_threads = 0;           ///< threads; else the options' N and M)
  int rebalances = 0;                ///< how many times the split was changed
  /// Frames coded on several threads (the last frames of the stream, while workers idled).
  std::int64_t split_frames = 0;
  std::vector<BufferStats> buffers;  ///< sok/aok: one per stream buffer (device list order)
  // Runs with PipelineOptions::cpu_start (the busy times above are the sums of both parts).
  std::int64_t cpu_start_frames = 0;  ///< frames encoded on the CPU before the hand-over
  double gpu_ready_s = 0;     ///< from the start until the GPU's set-up was made (0: never)
  double handover_s = 0;      ///< from the start until the GPU took over (0: it never did)
  std::string gpu_problem;    ///< why the GPU never took over when its set-up failed
};

/// What the progress callback sees (the writer thread calls it after each frame): the public
/// Progress.
using ProgressFn = std::function<void(const mjpeg::Progress&)>;

/// Encodes every frame of `source` into `sink`, in stream order. Does not close the sink (the
/// caller closes it after a normal return, also after a stop).
/// `stop` (may be null): when it becomes true, no new frame is read; the frames already read
/// are finished and written, then the function returns normally.
/// Errors: the first exception of any thread (source, CUDA, sink) stops every stage; all
/// threads are joined and that exception is rethrown here.
Stats encode_stream(FrameSource& source, const EncodeOptions& encode, io::FrameSink& sink,
                    const PipelineOptions& options, const ProgressFn& progress = {},
                    const std::atomic<bool>* stop = nullptr);

}  // namespace mjpeg::pipeline
