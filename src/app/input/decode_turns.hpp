// What the app's decoding sources share as mjpeg::FrameSource (include/mjpeg/
// video.hpp): the encoder may read frames 0, 1, 2, ... on several threads at once, each thread
// asking for its own index, while a decoder can only decode them one after another. Each
// thread waits for its frame's turn under the source's lock, decodes, passes the turn on and
// converts its frame outside the lock; per-thread decoder state comes from a ScratchPool.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace mjpeg::app {

/// The turn of frame `index` (used under the source's mutex).
class DecodeTurns {
 public:
  /// Waits until frame `index` is the next to decode or the stream has ended; true: its turn.
  bool wait(std::unique_lock<std::mutex>& lock, std::int64_t index) {
    cv_.wait(lock, [&] { return next_ == index || ended_; });
    return !ended_;
  }
  std::int64_t next() const { return next_; }
  bool ended() const { return ended_; }

  /// The locked section of one read: the turn passes on when taken() was called, otherwise
  /// (the stream ended, or a decode threw) the stream ends for every waiting reader.
  class Section {
   public:
    explicit Section(DecodeTurns& turns) : turns_(turns) {}
    ~Section() {
      if (!taken_) turns_.ended_ = true;
      turns_.cv_.notify_all();
    }
    Section(const Section&) = delete;
    Section& operator=(const Section&) = delete;
    void taken() {
      ++turns_.next_;
      taken_ = true;
    }

   private:
    DecodeTurns& turns_;
    bool taken_ = false;
  };

 private:
  std::condition_variable cv_;
  std::int64_t next_ = 0;
  bool ended_ = false;
};

/// Scratch objects (decoded frames, converter contexts) for the threads reading at once: take()
/// lends one (made on first need) and the lease gives it back.
template <class T>
class ScratchPool {
 public:
  explicit ScratchPool(std::function<std::unique_ptr<T>()> make) : make_(std::move(make)) {}

  class Lease {
   public:
    Lease(ScratchPool& pool, std::unique_ptr<T> item) : pool_(pool), item_(std::move(item)) {}
    ~Lease() { pool_.put(std::move(item_)); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    T& operator*() const { return *item_; }
    T* operator->() const { return item_.get(); }

   private:
    ScratchPool& pool_;
    std::unique_ptr<T> item_;
  };

  Lease take() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        std::unique_ptr<T> item = std::move(free_.back());
        free_.pop_back();
        return Lease(*this, std::move(item));
      }
    }
    return Lease(*this, make_());
  }

 private:
  void put(std::unique_ptr<T> item) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(item));
  }

  std::function<std::unique_ptr<T>()> make_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<T>> free_;
};

}  // namespace mjpeg::app
