#include "pipeline/frame_source.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

#include "host_pin.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg::pipeline {
namespace {

std::size_t page_size() {
  static const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

}  // namespace

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
    if (inner_->lends_frames()) {
      ended_ = !inner_->lend(producer, lent, index);
      if (!ended_) inner_->release(index);  // not encoded: done with at once
    } else {
      ended_ = !inner_->read_into(producer, scratch.data(), inner_->format().row_bytes(), index);
    }
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

// ---------------------------------------------------------------------------------------------
// WindowPins
// ---------------------------------------------------------------------------------------------

WindowPins::WindowPins(const std::uint8_t* base, std::size_t bytes, std::size_t window, Pin pin)
    : base_(base), bytes_(bytes), window_(window), pin_(std::move(pin)) {
  if (window_ == 0) throw UsageError("WindowPins: zero window");
  windows_.resize(bytes_ == 0 ? 0 : (bytes_ - 1) / window_ + 1);
}

WindowPins::~WindowPins() {
  for (Window& w : windows_) w.pin.reset();
}

void WindowPins::acquire(std::size_t offset, std::size_t bytes) {
  if (bytes == 0) return;
  const std::size_t page = page_size();
  for (std::size_t w = offset / window_; w <= (offset + bytes - 1) / window_; ++w) {
    Window& win = windows_[w];
    if (!win.pin && !win.tried) {
      // Whole pages: the last window ends inside the file's last page, which is mapped whole.
      const std::size_t begin = w * window_;
      std::size_t end = std::min(begin + window_, bytes_);
      end = (end + page - 1) / page * page;
      win.pin = pin_ ? pin_(base_ + begin, end - begin) : nullptr;
      win.tried = !win.pin;  // a failure is not retried
      if (win.pin) {
        pinned_peak_ = std::max(pinned_peak_, ++pinned_now_);
      } else {
        ++failures_;
      }
    }
    ++win.refs;
  }
}

void WindowPins::release(std::size_t offset, std::size_t bytes) {
  if (bytes == 0) return;
  for (std::size_t w = offset / window_; w <= (offset + bytes - 1) / window_; ++w) {
    if (windows_[w].refs > 0) --windows_[w].refs;
    maybe_unpin(w);
  }
}

void WindowPins::passed(std::size_t offset) {
  frontier_ = std::max(frontier_, offset);
  for (std::size_t w = low_; w < windows_.size() && (w + 1) * window_ <= frontier_; ++w)
    maybe_unpin(w);
}

void WindowPins::maybe_unpin(std::size_t w) {
  Window& win = windows_[w];
  const bool behind = frontier_ == std::numeric_limits<std::size_t>::max() ||
                      (w + 1) * window_ <= frontier_;
  if (win.refs > 0 || !behind) return;
  if (win.pin) {
    win.pin.reset();
    --pinned_now_;
  }
  win.tried = true;  // no later frame touches it: never locked again
  while (low_ < windows_.size() && windows_[low_].tried && !windows_[low_].pin &&
         windows_[low_].refs == 0 && (low_ + 1) * window_ <= frontier_)
    ++low_;
}

// ---------------------------------------------------------------------------------------------
// MappedY4mFrameSource
// ---------------------------------------------------------------------------------------------

MappedY4mFrameSource::MappedY4mFrameSource(io::Y4mReader& reader, std::int64_t max_frames,
                                           WindowPins::Pin pin, std::size_t window_bytes)
    : reader_(reader), max_frames_(max_frames), pin_(std::move(pin)), window_bytes_(window_bytes) {
  if (reader_.mapping() == nullptr)
    throw UsageError("MappedY4mFrameSource: the reader has not mapped its file");
  const io::Y4mInfo& info = reader_.info();
  format_ = SourceFormat{info.width, info.height, PixelFormat::rgb24, io::planar_format(info)};
  bytes_ = info.frame_bytes();
  const std::size_t page = page_size();
  const auto first = reinterpret_cast<std::uintptr_t>(reader_.mapping());
  page_base_ = reinterpret_cast<const std::uint8_t*>(first - first % page);
  if (!pin_) pin_ = gpu::try_pin_read_only;
}

void MappedY4mFrameSource::pin_lent_frames() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (pins_) return;
  const std::size_t span =
      static_cast<std::size_t>(reader_.mapping() - page_base_) + reader_.mapping_bytes();
  pins_ = std::make_unique<WindowPins>(page_base_, span, window_bytes_, pin_);
}

bool MappedY4mFrameSource::next(const std::uint8_t*& data, std::int64_t& index) {
  if (ended_) return false;
  try {
    const std::uint8_t* frame =
        max_frames_ >= 0 && next_ >= max_frames_ ? nullptr : reader_.next_mapped_frame();
    if (frame == nullptr) {
      ended_ = true;
      if (pins_) pins_->passed(std::numeric_limits<std::size_t>::max());
      return false;
    }
    const auto offset = static_cast<std::size_t>(frame - page_base_);
    offsets_.push_back(offset);
    if (pins_) {
      pins_->passed(offset);
      pins_->acquire(offset, bytes_);
    }
    data = frame;
    index = next_++;
    return true;
  } catch (...) {
    ended_ = true;  // the other producers see the end; the pipeline rethrows this
    throw;
  }
}

bool MappedY4mFrameSource::lend(int, const std::uint8_t*& data, std::int64_t& index) {
  std::lock_guard<std::mutex> lock(mutex_);
  return next(data, index);
}

bool MappedY4mFrameSource::read_into(int, std::uint8_t* dst, std::size_t, std::int64_t& index) {
  const std::uint8_t* data = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!next(data, index)) return false;
  }
  std::memcpy(dst, data, bytes_);  // the mapping stays valid: no lock needed
  release(index);
  return true;
}

void MappedY4mFrameSource::release(std::int64_t index) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (index < 0 || index >= static_cast<std::int64_t>(offsets_.size())) return;
  const std::size_t offset = offsets_[static_cast<std::size_t>(index)];
  if (pins_) {
    pins_->release(offset, bytes_);
    return;
  }
  // Unlocked frames (the cpu mode) leave the process's resident set once encoded, so that its
  // memory stays flat however long the clip (they stay in the page cache). Only the pages
  // wholly inside the frame: a page it shares with a neighbour stays, and one that another
  // thread touches after this is simply read again from the page cache (the mapping is
  // read-only, so nothing is lost).
  const std::size_t page = page_size();
  const std::size_t begin = (offset + page - 1) / page * page;
  const std::size_t end = (offset + bytes_) / page * page;
  if (end > begin)
    ::madvise(const_cast<std::uint8_t*>(page_base_ + begin), end - begin, MADV_DONTNEED);
}

int MappedY4mFrameSource::pinned_windows() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pins_ ? pins_->pinned_now() : 0;
}

int MappedY4mFrameSource::pinned_windows_peak() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pins_ ? pins_->pinned_peak() : 0;
}

int MappedY4mFrameSource::pin_failures() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pins_ ? pins_->failures() : 0;
}

}  // namespace mjpeg::pipeline
