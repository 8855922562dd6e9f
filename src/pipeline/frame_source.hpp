// Where the pipeline's producers get frames from. A FrameSource hands out frames in stream
// order to any number of producer threads; each producer writes the pixels straight into its
// stream-buffer slot (pinned host memory in AOK), so there is no extra copy on the hot path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "io/y4m.hpp"
#include "mjpeg/options.hpp"

namespace mjpeg::pipeline {

/// Size and pixel format of every frame of a source (fixed for the whole stream).
struct SourceFormat {
  int width = 0;
  int height = 0;
  PixelFormat format = PixelFormat::rgb24;
  std::size_t row_bytes() const { return static_cast<std::size_t>(width) * channels(format); }
};

class FrameSource {
 public:
  virtual ~FrameSource() = default;
  virtual SourceFormat format() const = 0;
  /// Called once before the producers start, with their number (sources may size per-producer
  /// scratch here, so that read_into never allocates).
  virtual void prepare(int producers) { (void)producers; }
  /// Thread-safe. Writes the next frame of the stream into `dst` (rows `stride` bytes apart,
  /// format() pixels) and sets `index` to its 0-based position in the stream. Returns false at
  /// the end of the stream. `producer` is the caller's id in 0..producers-1.
  /// Throws on a read error (the pipeline stops and rethrows).
  virtual bool read_into(int producer, std::uint8_t* dst, std::size_t stride,
                         std::int64_t& index) = 0;
  /// True when the frames are already in memory for the whole encode and lend() hands them out
  /// without a copy (the cpu mode transforms straight from them).
  virtual bool lends_frames() const { return false; }
  /// Thread-safe, for sources that lend frames: sets `frame` to the next frame of the stream
  /// (valid until the source is destroyed) and `index` to its position; false at the end.
  virtual bool lend(int /*producer*/, ImageView& /*frame*/, std::int64_t& /*index*/) {
    return false;
  }
};

/// Frames already in memory (tests, image sequences). The views must outlive the source.
class MemoryFrameSource final : public FrameSource {
 public:
  /// All views must have the same size and format; throws UsageError otherwise or when empty.
  explicit MemoryFrameSource(std::vector<ImageView> frames);
  SourceFormat format() const override { return format_; }
  bool read_into(int producer, std::uint8_t* dst, std::size_t stride,
                 std::int64_t& index) override;
  bool lends_frames() const override { return true; }
  bool lend(int producer, ImageView& frame, std::int64_t& index) override;

 private:
  std::vector<ImageView> frames_;
  SourceFormat format_;
  std::mutex mutex_;
  std::int64_t next_ = 0;
};

/// A Y4M stream: the raw YCbCr frame is read under a lock (the file is sequential) into the
/// producer's own scratch buffer, then converted by yuv_to_rgb24 straight into the slot outside
/// the lock, so N producers convert N frames at once. Frames are always rgb24.
/// `max_frames` < 0: the whole stream.
class Y4mFrameSource final : public FrameSource {
 public:
  explicit Y4mFrameSource(io::Y4mReader& reader, std::int64_t max_frames = -1);
  SourceFormat format() const override { return format_; }
  void prepare(int producers) override;
  bool read_into(int producer, std::uint8_t* dst, std::size_t stride,
                 std::int64_t& index) override;

 private:
  io::Y4mReader& reader_;
  std::int64_t max_frames_;
  SourceFormat format_;
  std::mutex mutex_;
  std::int64_t next_ = 0;
  bool ended_ = false;
  std::vector<std::vector<std::uint8_t>> scratch_;  // one raw frame per producer
};

}  // namespace mjpeg::pipeline
