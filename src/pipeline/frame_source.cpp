#include "pipeline/frame_source.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "mjpeg/error.hpp"

namespace mjpeg::pipeline {

std::size_t SourceFormat::frame_bytes() const {
  if (is_planar()) return planar_layout(width, height, planar.chroma).bytes;
  return row_bytes() * static_cast<std::size_t>(height);
}

// ---------------------------------------------------------------------------------------------
// MemoryFrameSource
// ---------------------------------------------------------------------------------------------

MemoryFrameSource::MemoryFrameSource(std::vector<ImageView> frames, bool pinned)
    : pinned_(pinned) {
  if (frames.empty()) throw UsageError("MemoryFrameSource: no frames");
  format_ = SourceFormat{frames[0].width, frames[0].height, frames[0].format};
  bool packed = true;
  for (const ImageView& v : frames) {
    if (v.width != format_.width || v.height != format_.height || v.format != format_.format ||
        v.data == nullptr || v.stride < format_.row_bytes())
      throw UsageError("MemoryFrameSource: frames differ in size or format");
    packed = packed && v.stride == format_.row_bytes();
    data_.push_back(v.data);
    strides_.push_back(v.stride);
  }
  lends_ = packed;
}

MemoryFrameSource::MemoryFrameSource(std::vector<const std::uint8_t*> frames,
                                     const SourceFormat& format, bool pinned)
    : data_(std::move(frames)), format_(format), pinned_(pinned) {
  if (data_.empty()) throw UsageError("MemoryFrameSource: no frames");
  for (const std::uint8_t* d : data_)
    if (d == nullptr) throw UsageError("MemoryFrameSource: null frame");
  strides_.assign(data_.size(), format_.row_bytes());
}

bool MemoryFrameSource::next_index(std::int64_t& index) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (next_ >= static_cast<std::int64_t>(data_.size())) return false;
  index = next_++;
  return true;
}

bool MemoryFrameSource::read_into(int, std::uint8_t* dst, std::size_t stride,
                                  std::int64_t& index) {
  if (!next_index(index)) return false;
  // The frame is immutable: copy it outside the lock.
  const std::size_t i = static_cast<std::size_t>(index);
  if (format_.is_planar()) {
    std::memcpy(dst, data_[i], format_.frame_bytes());
    return true;
  }
  const std::size_t row = format_.row_bytes();
  for (int y = 0; y < format_.height; ++y)
    std::memcpy(dst + static_cast<std::size_t>(y) * stride,
                data_[i] + static_cast<std::size_t>(y) * strides_[i], row);
  return true;
}

bool MemoryFrameSource::lend(int, const std::uint8_t*& data, std::int64_t& index) {
  if (!lends_) throw UsageError("MemoryFrameSource: lend() on a source that copies");
  if (!next_index(index)) return false;
  data = data_[static_cast<std::size_t>(index)];
  return true;
}

// ---------------------------------------------------------------------------------------------
// Y4mFrameSource
// ---------------------------------------------------------------------------------------------

Y4mFrameSource::Y4mFrameSource(io::Y4mReader& reader, std::int64_t max_frames)
    : reader_(reader), max_frames_(max_frames) {
  const io::Y4mInfo& info = reader_.info();
  // Planar, as the file stores it; the transforms convert with yuv_to_rgb24's arithmetic
  // (matrix, range; mono gives R = G = B = the expanded Y).
  format_ = SourceFormat{info.width, info.height, PixelFormat::rgb24, io::planar_format(info)};
  bytes_ = info.frame_bytes();
  positional_ = reader_.positional_frames() >= 0;
  if (positional_) {
    count_ = reader_.positional_frames();
  } else {
    seq_next_ = 0;
  }
}

bool Y4mFrameSource::claim(std::int64_t& index) {
  if (failed_ || ended_) return false;
  if (max_frames_ >= 0 && next_ >= max_frames_) return false;
  // Without header parameters the file holds exactly count_ frames; with them fewer (the
  // sequential reading that follows finds the end).
  if (count_ >= 0 && next_ >= count_) return false;
  index = next_++;
  return true;
}

bool Y4mFrameSource::read_in_turn(std::unique_lock<std::mutex>& lock, std::int64_t index,
                                  std::uint8_t* dst) {
  if (positional_) {
    // Sequential reading starts once every frame before the first one with parameters is
    // verified (so no earlier frame can turn out to have them), at that frame's fixed offset.
    cv_.wait(lock, [&] {
      return failed_ || (ended_ && index >= end_at_) ||
             (verified_ == sequential_from_ && (seq_next_ < 0 || seq_next_ == index));
    });
    if (failed_ || (ended_ && index >= end_at_)) return false;
    if (seq_next_ < 0) {
      reader_.resume_at(sequential_from_);
      seq_next_ = sequential_from_;
      if (seq_next_ != index) {  // another frame's turn first
        cv_.notify_all();
        cv_.wait(lock, [&] {
          return failed_ || (ended_ && index >= end_at_) || seq_next_ == index;
        });
        if (failed_ || (ended_ && index >= end_at_)) return false;
      }
    }
  }
  bool got = false;
  try {
    got = reader_.read_frame(dst, bytes_);
  } catch (...) {
    failed_ = true;
    cv_.notify_all();
    throw;
  }
  if (!got) {
    ended_ = true;
    end_at_ = index;
    cv_.notify_all();
    return false;
  }
  ++seq_next_;
  cv_.notify_all();
  return true;
}

bool Y4mFrameSource::read_into(int, std::uint8_t* dst, std::size_t, std::int64_t& index) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!claim(index)) return false;
  // Sequential reading: claiming and reading under one lock keeps the frames in order.
  if (!positional_ || index >= sequential_from_) return read_in_turn(lock, index, dst);
  lock.unlock();
  bool plain = false;
  try {
    plain = reader_.read_frame_at(index, dst, bytes_);
  } catch (...) {
    lock.lock();
    failed_ = true;
    cv_.notify_all();
    throw;
  }
  lock.lock();
  if (plain) {
    plain_.insert(index);
    while (plain_.erase(verified_) == 1) ++verified_;
  } else {
    sequential_from_ = std::min(sequential_from_, index);
    count_ = -1;  // fewer frames than a file of plain headers would hold: read to the end
  }
  cv_.notify_all();
  cv_.wait(lock, [&] { return failed_ || verified_ > index || sequential_from_ <= index; });
  if (failed_) return false;
  if (verified_ > index) return true;
  return read_in_turn(lock, index, dst);
}

SkipFrameSource::SkipFrameSource(std::unique_ptr<FrameSource> inner, std::int64_t skip)
    : inner_(std::move(inner)), skip_(skip < 0 ? 0 : skip) {}

bool SkipFrameSource::skip_once(int producer) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (skipped_) return !ended_;
  skipped_ = true;
  std::vector<std::uint8_t> scratch;
  if (!inner_->lends_frames()) scratch.resize(inner_->format().frame_bytes());
  for (std::int64_t i = 0; i < skip_ && !ended_; ++i) {
    std::int64_t index = -1;
    const std::uint8_t* lent = nullptr;
    ended_ = inner_->lends_frames()
                 ? !inner_->lend(producer, lent, index)
                 : !inner_->read_into(producer, scratch.data(), inner_->format().row_bytes(), index);
  }
  return !ended_;
}

bool SkipFrameSource::read_into(int producer, std::uint8_t* dst, std::size_t stride,
                                std::int64_t& index) {
  if (!skip_once(producer) || !inner_->read_into(producer, dst, stride, index)) return false;
  index -= skip_;
  return true;
}

bool SkipFrameSource::lend(int producer, const std::uint8_t*& data, std::int64_t& index) {
  if (!skip_once(producer) || !inner_->lend(producer, data, index)) return false;
  index -= skip_;
  return true;
}

}  // namespace mjpeg::pipeline
