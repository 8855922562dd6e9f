#include "pipeline/frame_source.hpp"

#include <cstring>
#include <utility>

#include "mjpeg/error.hpp"

namespace mjpeg::pipeline {

MemoryFrameSource::MemoryFrameSource(std::vector<ImageView> frames) : frames_(std::move(frames)) {
  if (frames_.empty()) throw UsageError("MemoryFrameSource: no frames");
  format_ = SourceFormat{frames_[0].width, frames_[0].height, frames_[0].format};
  for (const ImageView& v : frames_) {
    if (v.width != format_.width || v.height != format_.height || v.format != format_.format ||
        v.data == nullptr || v.stride < format_.row_bytes())
      throw UsageError("MemoryFrameSource: frames differ in size or format");
  }
}

bool MemoryFrameSource::read_into(int, std::uint8_t* dst, std::size_t stride,
                                  std::int64_t& index) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (next_ >= static_cast<std::int64_t>(frames_.size())) return false;
    index = next_++;
  }
  // The frame is immutable: copy it outside the lock.
  const ImageView& v = frames_[static_cast<std::size_t>(index)];
  const std::size_t row = format_.row_bytes();
  for (int y = 0; y < v.height; ++y)
    std::memcpy(dst + static_cast<std::size_t>(y) * stride,
                v.data + static_cast<std::size_t>(y) * v.stride, row);
  return true;
}

bool MemoryFrameSource::lend(int, ImageView& frame, std::int64_t& index) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (next_ >= static_cast<std::int64_t>(frames_.size())) return false;
  index = next_++;
  frame = frames_[static_cast<std::size_t>(index)];
  return true;
}

Y4mFrameSource::Y4mFrameSource(io::Y4mReader& reader, std::int64_t max_frames)
    : reader_(reader), max_frames_(max_frames) {
  const io::Y4mInfo& info = reader_.info();
  // Always RGB: yuv_to_rgb24 honours matrix and range (mono gives R = G = B = expanded Y).
  format_ = SourceFormat{info.width, info.height, PixelFormat::rgb24};
}

void Y4mFrameSource::prepare(int producers) {
  scratch_.assign(static_cast<std::size_t>(producers < 1 ? 1 : producers),
                  std::vector<std::uint8_t>(reader_.info().frame_bytes()));
}

bool Y4mFrameSource::read_into(int producer, std::uint8_t* dst, std::size_t stride,
                               std::int64_t& index) {
  if (producer < 0 || static_cast<std::size_t>(producer) >= scratch_.size())
    throw UsageError("Y4mFrameSource: producer id out of range (prepare() not called?)");
  std::vector<std::uint8_t>& raw = scratch_[static_cast<std::size_t>(producer)];
  {
    // The file is sequential: reading and numbering happen together under the lock.
    std::lock_guard<std::mutex> lock(mutex_);
    if (ended_ || (max_frames_ >= 0 && next_ >= max_frames_)) return false;
    if (!reader_.read_frame(raw.data(), raw.size())) {
      ended_ = true;
      return false;
    }
    index = next_++;
  }
  const io::Y4mInfo& info = reader_.info();
  const io::Y4mPlanes planes = io::planes_of(raw.data(), info);
  io::yuv_to_rgb24(planes, info, dst, stride);
  return true;
}

}  // namespace mjpeg::pipeline
