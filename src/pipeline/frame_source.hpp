// Where the pipeline's producers get frames from. A FrameSource hands out frames in stream
// order to any number of producer threads; each producer writes the pixels straight into its
// stream-buffer slot (pinned host memory in AOK), so there is no extra copy on the hot path.
// Sources of frames that already lie in memory for the whole encode lend them instead (the
// cpu mode transforms them where they lie; page-locked ones are uploaded from where they lie).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "io/y4m.hpp"
#include "core/planar_format.hpp"
#include "mjpeg/options.hpp"
#include "stream_handle.hpp"

namespace mjpeg::pipeline {

/// Size and layout of every frame of a source (fixed for the whole stream): packed pixels
/// (`format`, rows packed) or, when planar.planar(), planar YCbCr in planar_layout's layout
/// (Y, Cb, Cr back to back), which the transforms convert to RGB with planar.ycc.
struct SourceFormat {
  int width = 0;
  int height = 0;
  PixelFormat format = PixelFormat::rgb24;  ///< packed frames (ignored when planar)
  PlanarFormat planar{};

  bool is_planar() const { return planar.planar(); }
  /// Packed frames: bytes per row. Planar: the Y plane's (= width).
  std::size_t row_bytes() const {
    return static_cast<std::size_t>(width) * (is_planar() ? 1 : channels(format));
  }
  /// Bytes of one frame as read_into writes it.
  std::size_t frame_bytes() const;
};

class FrameSource {
 public:
  virtual ~FrameSource() = default;
  virtual SourceFormat format() const = 0;
  /// Called once before the producers start, with their number (sources may size per-producer
  /// scratch here, so that read_into never allocates).
  virtual void prepare(int producers) { (void)producers; }
  /// Thread-safe. Writes the next frame of the stream into `dst` and sets `index` to its
  /// 0-based position in the stream. Packed formats: rows `stride` bytes apart. Planar
  /// formats: format().frame_bytes() bytes in planar_layout's layout (`stride` is ignored).
  /// Returns false at the end of the stream. `producer` is the caller's id in 0..producers-1.
  /// Throws on a read error (the pipeline stops and rethrows).
  virtual bool read_into(int producer, std::uint8_t* dst, std::size_t stride,
                         std::int64_t& index) = 0;
  /// True when lend() can be used instead of read_into: the frames already lie in memory,
  /// frame_bytes() each in the layout read_into would write (rows packed), valid and unchanged
  /// until the source is destroyed. The cpu mode then transforms them where they lie.
  virtual bool lends_frames() const { return false; }
  /// True when the lent frames are page-locked too (gpu::HostPin), or will be once
  /// pin_lent_frames() was called: then sok --pinned and aok upload them from where they lie
  /// instead of copying them into pinned slots.
  virtual bool lent_frames_pinned() const { return false; }
  /// How many producers can read at once to any gain (0: no limit). A source that reads each
  /// frame entirely under one lock (a pipe, a file with frame parameters) gains nothing from a
  /// second producer; the self-balancing split does not give it more.
  virtual int max_useful_producers() const { return 0; }
  /// Thread-safe, lends_frames() sources: the next frame's bytes (not copied) and its index;
  /// false at the end.
  virtual bool lend(int producer, const std::uint8_t*& data, std::int64_t& index) {
    (void)producer, (void)data, (void)index;
    return false;
  }
  /// How many frames the stream has, when the source knows it beforehand (-1: unknown, the
  /// end shows when read_into or lend returns false). The run then knows the reading is over
  /// as soon as the last frame is read (the last frames are coded on idle workers' cores too).
  virtual std::int64_t frame_count() const { return -1; }
  /// lends_frames() sources: called once before the producers start when the lent frames
  /// will be uploaded to a GPU (sok --pinned, aok). A source whose frames are not page-locked
  /// yet (a mapped file) locks them from then on as they are lent, a window at a time.
  virtual void pin_lent_frames() {}
  /// lends_frames() sources, thread-safe: the pipeline is done with the bytes of lent frame
  /// `index` (uploaded and transformed, or transformed where they lie). A source may then
  /// unlock them, or let their pages go. Frames of a failed encode may never be released.
  virtual void release(std::int64_t index) { (void)index; }
  /// Where the lent frames' page locks begin and end: windows of `bytes` bytes from `origin`.
  /// A GPU copy must not cross from one window into the next (CUDA refuses a copy whose range
  /// spans two registrations), so uploads are split there. bytes == 0: no windows.
  struct LockWindows {
    const std::uint8_t* origin = nullptr;
    std::size_t bytes = 0;
  };
  virtual LockWindows lent_lock_windows() const { return {}; }

  /// Where read_device puts a frame: a slot's device pixels, in the slot's turn on its
  /// stream buffer's upload stream.
  class DeviceSlot {
   public:
    virtual ~DeviceSlot() = default;
    /// Calls `work(dst, stream)` once, which must enqueue on `stream` (a stream of the
    /// slot's device, current in the calling thread) the work that writes the frame into `dst`
    /// (device memory, format().frame_bytes() bytes in planar_layout's layout); the slot's
    /// data_ready is recorded behind it.
    virtual void write(const std::function<void(std::uint8_t* dst, gpu::StreamHandle stream)>& work) = 0;
  };
  /// True when the frames lie in CUDA device memory (a hardware decoder's output, a caller's
  /// device frames): aok then has read_device write each frame straight into the slot's device
  /// pixels (no host copy, no upload); the other modes read them with read_into, which such a
  /// source serves by copying the frame to the host.
  virtual bool device_frames() const { return false; }
  /// device_frames() sources, thread-safe: waits for the next frame, has `slot` write it and
  /// sets `index`; false at the end (without calling slot.write).
  virtual bool read_device(int producer, DeviceSlot& slot, std::int64_t& index) {
    (void)producer, (void)slot, (void)index;
    return false;
  }
};

/// Page-locks a range of host memory given out as frames: a frame's bytes are locked when
/// it is lent (acquire), in windows of `window` bytes, and a window is unlocked once every
/// frame touching it was released and no later frame can touch it (frames are lent in order
/// of their offsets). Not thread-safe: the source serialises. `pin(data, bytes)` returns a
/// handle whose destruction unlocks, or null when the range could not be locked (the frames
/// are then copied from pageable memory, which is slower but equally correct).
class WindowPins {
 public:
  using Pin = std::function<std::shared_ptr<void>(const void* data, std::size_t bytes)>;
  /// `base` page-aligned; `bytes` may end inside the last page (that page is locked whole).
  WindowPins(const std::uint8_t* base, std::size_t bytes, std::size_t window, Pin pin);
  ~WindowPins();
  /// The frame at [offset, offset + bytes) from base is lent: locks its windows.
  void acquire(std::size_t offset, std::size_t bytes);
  /// That frame is done with.
  void release(std::size_t offset, std::size_t bytes);
  /// No frame lent from now on starts before `offset` (the end of the stream: SIZE_MAX).
  void passed(std::size_t offset);
  /// Windows locked now, at most at once, and lock attempts that failed.
  int pinned_now() const { return pinned_now_; }
  int pinned_peak() const { return pinned_peak_; }
  int failures() const { return failures_; }

 private:
  struct Window {
    std::shared_ptr<void> pin;
    int refs = 0;
    bool tried = false;
  };
  void maybe_unpin(std::size_t w);

  const std::uint8_t* base_;
  std::size_t bytes_, window_;
  Pin pin_;
  std::vector<Window> windows_;
  std::size_t frontier_ = 0;  // no frame lent later starts before it
  std::size_t low_ = 0;       // windows below it are unlocked and done
  int pinned_now_ = 0, pinned_peak_ = 0, failures_ = 0;
};

/// Frames already in memory (tests, compare, image sequences). The frames must outlive the
/// source.
class MemoryFrameSource final : public FrameSource {
 public:
  /// All views must have the same size and format; throws UsageError otherwise or when empty.
  /// The frames are lent when every view's rows are packed (stride == width * channels),
  /// otherwise copied by read_into. `pinned`: the caller page-locked them (gpu::HostPin).
  explicit MemoryFrameSource(std::vector<ImageView> frames, bool pinned = false);
  /// Frames of `format` (planar or packed), frame_bytes() each at frames[i]; always lent.
  MemoryFrameSource(std::vector<const std::uint8_t*> frames, const SourceFormat& format,
                    bool pinned = false);
  SourceFormat format() const override { return format_; }
  bool read_into(int producer, std::uint8_t* dst, std::size_t stride,
                 std::int64_t& index) override;
  bool lends_frames() const override { return lends_; }
  bool lent_frames_pinned() const override { return lends_ && pinned_; }
  bool lend(int producer, const std::uint8_t*& data, std::int64_t& index) override;
  std::int64_t frame_count() const override { return static_cast<std::int64_t>(data_.size()); }

 private:
  bool next_index(std::int64_t& index);

  std::vector<const std::uint8_t*> data_;
  std::vector<std::size_t> strides_;  // packed formats: each frame's row stride
  SourceFormat format_;
  bool lends_ = true, pinned_ = false;
  std::mutex mutex_;
  std::int64_t next_ = 0;
};

/// The frames of `inner` from index `skip` on, renumbered from 0 (encode --start: one frame
/// range of a longer stream). The first producer to ask reads (decodes) the `skip` frames
/// before the range and drops them; the others wait for that, then frames pass through.
class SkipFrameSource final : public FrameSource {
 public:
  SkipFrameSource(std::unique_ptr<FrameSource> inner, std::int64_t skip);
  SourceFormat format() const override { return inner_->format(); }
  void prepare(int producers) override { inner_->prepare(producers); }
  bool read_into(int producer, std::uint8_t* dst, std::size_t stride,
                 std::int64_t& index) override;
  bool lends_frames() const override { return inner_->lends_frames(); }
  bool lent_frames_pinned() const override { return inner_->lent_frames_pinned(); }
  int max_useful_producers() const override { return inner_->max_useful_producers(); }
  bool lend(int producer, const std::uint8_t*& data, std::int64_t& index) override;
  void pin_lent_frames() override { inner_->pin_lent_frames(); }
  void release(std::int64_t index) override { inner_->release(index + skip_); }
  LockWindows lent_lock_windows() const override { return inner_->lent_lock_windows(); }

 private:
  /// Skips the frames before the range once; false when the stream ends among them.
  bool skip_once(int producer);

  std::unique_ptr<FrameSource> inner_;
  std::int64_t skip_;
  std::mutex mutex_;
  bool skipped_ = false, ended_ = false;
};

/// A Y4M stream as planar frames: each frame's payload is read straight into the slot, with
/// no conversion (the transforms convert to RGB exactly as io::yuv_to_rgb24 does).
/// Regular files of plain frame headers are read positionally (Y4mReader::read_frame_at), so
/// N producers read N frames at once; a frame that turns out to have header parameters
/// switches the rest of the stream to sequential reading. Pipes, and files with parameters
/// from the first frame on, are read sequentially (one frame at a time under a lock).
/// `max_frames` < 0: the whole stream. `first` > 0 (positional files whose frames before it all
/// have plain headers: Y4mReader::plain_headers_before): reading starts at that frame, which
/// is returned as index 0, without reading the frames before it.
class Y4mFrameSource final : public FrameSource {
 public:
  explicit Y4mFrameSource(io::Y4mReader& reader, std::int64_t max_frames = -1,
                          std::int64_t first = 0);
  SourceFormat format() const override { return format_; }
  /// Sequential reading (a pipe, frame parameters): one frame at a time, under a lock.
  int max_useful_producers() const override { return positional_ ? 0 : 1; }
  bool read_into(int producer, std::uint8_t* dst, std::size_t stride,
                 std::int64_t& index) override;

 private:
  bool claim(std::int64_t& index);
  bool read_at(std::uint8_t* dst, std::int64_t& index);
  bool read_in_turn(std::unique_lock<std::mutex>& lock, std::int64_t index, std::uint8_t* dst);

  io::Y4mReader& reader_;
  std::int64_t max_frames_;
  std::int64_t first_ = 0;   // frames before the range, neither read nor handed out
  SourceFormat format_;
  std::size_t bytes_ = 0;
  bool positional_ = false;  // the reader can read frames at fixed offsets
  std::int64_t count_ = -1;  // frames known to be there (positional), or -1
  std::mutex mutex_;
  std::condition_variable cv_;
  std::int64_t next_ = 0;       // the next index to hand out
  bool ended_ = false;          // sequential reading reached the end at index end_at_
  std::int64_t end_at_ = -1;
  bool failed_ = false;         // a read threw: the other producers stop
  // Positional reading: frames below verified_ had plain headers, so frame verified_ is at
  // its fixed offset; plain_ holds plain frames above it that finished early. A frame handed
  // out returns only once it is verified (a header with parameters before it would have
  // shifted it). sequential_from_: the first frame with header parameters; from there on the
  // file is read sequentially, frame seq_next_ next, once every frame before it is verified.
  std::int64_t verified_ = 0;
  std::set<std::int64_t> plain_;
  std::int64_t sequential_from_ = INT64_MAX;
  std::int64_t seq_next_ = -1;
};

/// A Y4M file mapped into memory (io::Y4mReader::map_frames): its frames are lent where they
/// lie, so that a GPU uploads them straight from the page cache once they are page-locked
/// (pin_lent_frames: read-only cudaHostRegister, window by window as frames are lent,
/// released as frames are done) and the cpu mode transforms them there. No producer copies a
/// frame. Frame headers are checked in order as frames are lent (parameters allowed), with
/// the reader's messages. `max_frames` < 0: the whole stream. `pin`: how ranges are locked
/// (default: gpu::try_pin_read_only; tests pass their own).
class MappedY4mFrameSource final : public FrameSource {
 public:
  /// `reader` must have been mapped (map_frames() returned true) and outlive the source.
  MappedY4mFrameSource(io::Y4mReader& reader, std::int64_t max_frames = -1,
                       WindowPins::Pin pin = {}, std::size_t window_bytes = kWindowBytes);
  SourceFormat format() const override { return format_; }
  bool read_into(int producer, std::uint8_t* dst, std::size_t stride,
                 std::int64_t& index) override;
  bool lends_frames() const override { return true; }
  bool lent_frames_pinned() const override { return true; }
  bool lend(int producer, const std::uint8_t*& data, std::int64_t& index) override;
  void pin_lent_frames() override;
  void release(std::int64_t index) override;
  LockWindows lent_lock_windows() const override { return {page_base_, window_bytes_}; }
  /// Lock windows (for tests): locked now, at most at once, failed attempts.
  int pinned_windows() const;
  int pinned_windows_peak() const;
  int pin_failures() const;

  /// Bytes per lock window: few registrations (each costs about 3 ms per 64 MB on the H200,
  /// and the few frames that straddle two windows are uploaded in two copies), yet small
  /// enough that little more than the frames in flight stays locked.
  static constexpr std::size_t kWindowBytes = std::size_t(64) << 20;

 private:
  /// The next frame where it lies (the caller holds mutex_); false at the end. A reader error
  /// ends the source for every producer and is rethrown.
  bool next(const std::uint8_t*& data, std::int64_t& index);

  io::Y4mReader& reader_;
  std::int64_t max_frames_;
  SourceFormat format_;
  std::size_t bytes_ = 0;
  const std::uint8_t* page_base_ = nullptr;  // page-aligned start of the frames' pages
  WindowPins::Pin pin_;
  std::size_t window_bytes_;
  mutable std::mutex mutex_;
  std::unique_ptr<WindowPins> pins_;  // after pin_lent_frames()
  std::int64_t next_ = 0;
  bool ended_ = false;
  std::vector<std::size_t> offsets_;  // frame i at page_base_ + offsets_[i]
};

}  // namespace mjpeg::pipeline
