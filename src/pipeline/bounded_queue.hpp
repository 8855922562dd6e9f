// A small blocking FIFO with a fixed capacity, used between the pipeline's stages.
//
//   push: blocks while the queue is full (back-pressure); returns false once aborted.
//   pop:  blocks while the queue is empty and open; returns false when it is closed and
//         drained (normal end) or aborted (error: pending items are dropped).
//   close: no more pushes; consumers drain what is there.   abort: wake everybody, now.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <utility>

namespace mjpeg::pipeline {

template <class T>
class BoundedQueue {
 public:
  explicit BoundedQueue(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}
  BoundedQueue(const BoundedQueue&) = delete;
  BoundedQueue& operator=(const BoundedQueue&) = delete;

  bool push(T item) {
    std::unique_lock<std::mutex> lock(mutex_);
    not_full_.wait(lock, [&] { return aborted_ || closed_ || items_.size() < capacity_; });
    if (aborted_ || closed_) return false;
    items_.push_back(std::move(item));
    not_empty_.notify_one();
    return true;
  }

  bool pop(T& out) {
    std::unique_lock<std::mutex> lock(mutex_);
    not_empty_.wait(lock, [&] { return aborted_ || closed_ || !items_.empty(); });
    if (aborted_ || items_.empty()) return false;
    out = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return true;
  }

  void close() {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    not_empty_.notify_all();
    not_full_.notify_all();
  }

  void abort() {
    std::lock_guard<std::mutex> lock(mutex_);
    aborted_ = true;
    not_empty_.notify_all();
    not_full_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable not_empty_, not_full_;
  std::deque<T> items_;  // never holds more than capacity_ items: no growth after warm-up
  std::size_t capacity_;
  bool closed_ = false;
  bool aborted_ = false;
};

}  // namespace mjpeg::pipeline
