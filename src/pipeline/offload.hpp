// Where a frame's transform (colour conversion, downsampling, DCT, quantization) runs: one
// Offloader per encode_stream run, made for its mode (mjpeg::Offload) by make_offloader.
// The run loop (pipeline.cpp) calls it at fixed points of every frame and never asks which
// mode it is:
//
//   producer     read into slot()  -> stage()      aok: issue the upload (PICC, producer side)
//   dispatcher   (buffers() > 0)   -> transform()  sok: the blocking copy / launch / copy back;
//                                                  aok: issue kernel + download
//   downloader   (downloader())    -> download()   aok with tokens: the exact-length copy
//   worker                          -> fetch()      cpu: transform_cpu; aok: wait for the result
//                                   -> result()     what to code: coefficients or tokens
//
// Implementations: CpuOffloader (offload.cpp; cpu), SyncOffloader (sok, pageable or
// page-locked host slots) and AsyncOffloader (aok), both on the stream buffer
// (stream_buffer.hpp, offload_gpu.cpp; absent from a build without CUDA, where
// make_offloader refuses the GPU modes). Each records its own stage spans and GPU times in
// the RunObserver (observer.hpp).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/geometry.hpp"
#include "core/quant.hpp"
#include "jpeg/planar.hpp"
#include "jpeg/tokens.hpp"
#include "mjpeg/options.hpp"
#include "pipeline/frame_source.hpp"
#include "pipeline/observer.hpp"
#include "pipeline/pipeline.hpp"

namespace mjpeg::pipeline {

/// One slot as the run loop sees it: where a producer puts the frame, where it lies.
struct FrameSlot {
  std::uint8_t* pixels = nullptr;       ///< the slot's own buffer (null when frames are lent)
  const std::uint8_t* frame = nullptr;  ///< this frame's pixels: `pixels`, or the lent frame
  std::int16_t* coeffs = nullptr;       ///< cpu: the slot's coefficients
  int buffer = 0;  ///< GPU modes: the stream buffer (device-list entry) the slot belongs to
  int local = 0;   ///< ... and its slot number there
};

/// A frame's transform result in host memory: tokens, or (cpu mode, the coefficients output,
/// or a token stream that did not fit) the coefficients.
struct TransformResult {
  bool is_tokens = false;
  TokenView tokens;
  const std::int16_t* coeffs = nullptr;
};

/// What one producer or entropy-worker thread keeps between frames for the offloader.
struct ThreadState {
  int id = 0;        ///< the thread's index in its role (its trace track)
  int device = -1;   ///< GPU modes: the device the thread selected last (-1: none yet)
  PlanarRows rows;   ///< cpu mode, planar frames: rows to RGB, band by band
};

/// What an offloader is made from (Run::setup). The references outlive it.
struct OffloadSetup {
  FrameSource& source;
  const SourceFormat& format;
  const FrameGeometry& geometry;
  const QuantTables& tables;
  const EncodeOptions& encode;
  const PipelineOptions& options;
  RunObserver& observer;
};

class Offloader {
 public:
  virtual ~Offloader() = default;

  // --- The run's shape (fixed once made) ----------------------------------------------------
  /// Frames lent by the source are used where they lie (no copy into a slot).
  bool lends() const { return lend_; }
  /// The source's frames lie in device memory and producers call read_device instead of
  /// reading into a slot (aok).
  bool reads_device() const { return device_; }
  /// Slots of every stream buffer; slot(i) for i in 0 .. slot_count() - 1.
  int slot_count() const { return static_cast<int>(slots_.size()); }
  FrameSlot& slot(int i) { return slots_[static_cast<std::size_t>(i)]; }
  /// The slots in the order they start in the free pool.
  virtual std::vector<int> first_free_slots() const = 0;
  /// Stream buffers, each with its dispatcher thread; 0: the producers hand frames straight
  /// to the entropy workers.
  virtual int buffers() const { return 0; }
  /// A downloader thread per stream buffer between the dispatcher and the workers.
  virtual bool downloader() const { return false; }
  /// True: a slot goes back to the free pool as soon as its frame is coded, and the JPEG waits
  /// for the writer in a frame record of its own (2 per slot); false: slot i's record is
  /// record i, and the writer frees the slot.
  virtual bool frees_slots_when_coded() const { return false; }
  /// The trace tracks of each stream buffer (RunObserver::add_tracks).
  virtual std::vector<BufferTracks> buffer_tracks() const { return {}; }
  /// Host-to-device bytes per frame (0 on the CPU).
  virtual std::size_t upload_bytes() const { return 0; }

  // --- Around the run -----------------------------------------------------------------------
  /// After the tracks, before the source is prepared: e.g. page-lock lent frames.
  virtual void before_start() {}
  /// Time zero of the GPU times (timed runs).
  virtual void start_clock(std::chrono::steady_clock::time_point) {}
  /// After every thread has left: waits for outstanding GPU work. Never throws.
  virtual void drain() noexcept {}

  // --- Per frame (the thread that calls each is named in the file comment) ------------------
  /// A dispatcher or downloader thread of stream buffer `buffer` starts.
  virtual void enter_buffer(int) {}
  /// Producer, reads_device() only: the source's next frame straight into slot `slot`'s
  /// device pixels (FrameSource::read_device); false at the end of the stream.
  virtual bool read_device(ThreadState&, int /*slot*/, std::int64_t& /*index*/) { return false; }
  /// Producer, after the frame is in slot `slot` (slot(slot).frame).
  virtual void stage(ThreadState&, int /*slot*/, std::int64_t /*index*/) {}
  /// Dispatcher of the slot's stream buffer.
  virtual void transform(int /*buffer*/, int /*slot*/, std::int64_t /*index*/) {}
  /// Downloader of the slot's stream buffer (downloader() only).
  virtual void download(int /*buffer*/, int /*slot*/, std::int64_t /*index*/) {}
  /// Entropy worker: makes the slot's result ready in host memory.
  virtual void fetch(ThreadState&, int slot, std::int64_t index) = 0;
  /// Entropy worker, after fetch, inside its entropy span: what to code.
  virtual TransformResult result(int slot) = 0;

 protected:
  std::vector<FrameSlot> slots_;
  bool lend_ = false;
  bool device_ = false;
};

/// The offloader of `mode`. Allocates every slot (and, in a GPU mode, checks the devices and
/// makes the stream buffers). Throws mjpeg::Error (a GPU mode without a usable device, in a
/// build without CUDA, or allocation failures).
std::unique_ptr<Offloader> make_offloader(Offload mode, const OffloadSetup& setup);

/// The GPU modes' offloaders (offload_gpu.cpp; in a build without CUDA one that throws).
std::unique_ptr<Offloader> make_gpu_offloader(Offload mode, const OffloadSetup& setup);

}  // namespace mjpeg::pipeline
