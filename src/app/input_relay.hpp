// A pipe or FIFO input that Ctrl-C can interrupt while a read waits on it.
//
// A signal handler installed with SA_RESTART (as ours is: a read of a pipe must not fail because
// a signal came) does not end a read that waits for data: a stalled producer would keep mjpeg
// waiting, deaf to Ctrl-C, until it closes the pipe. So a non-regular input (standard input from
// a pipe or terminal, a named FIFO) is relayed: a thread moves its bytes (splice: no copy) into
// a pipe of our own, which the reader reads; the thread waits in poll() on the input, on
// interrupt_wake_fd() and on a stop descriptor. On the first signal it closes our pipe: the
// reader sees the end of the stream (or a frame cut short), the frames read so far are finished
// and the output is finalised, at once. RelaySource turns that cut into a clean end.
#pragma once

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "pipeline/frame_source.hpp"

namespace mjpeg::app {

class InputRelay {
 public:
  /// Relays `fd` (not owned: closed by the caller after the relay; may be non-blocking).
  InputRelay(int fd, std::string name);
  ~InputRelay();  ///< stops the thread (the reader's stream should be closed after this)
  InputRelay(const InputRelay&) = delete;
  InputRelay& operator=(const InputRelay&) = delete;

  /// Our pipe's read end as a stdio stream (owned by the relay).
  std::FILE* stream() const { return stream_; }
  /// True once a signal cut the input short.
  bool cut() const { return cut_.load(); }
  /// The errno of a failed read of the input (0: none), valid once the stream ended.
  int error() const { return error_.load(); }
  const std::string& name() const { return name_; }

  /// True when `fd` may wait for data indefinitely (not a regular file or block device).
  static bool needed(int fd);

 private:
  void run();

  std::string name_;
  int src_;
  int out_[2] = {-1, -1};   ///< our pipe
  int stop_[2] = {-1, -1};  ///< the destructor's wake-up
  std::FILE* stream_ = nullptr;
  std::atomic<bool> cut_{false};
  std::atomic<int> error_{0};
  std::thread thread_;
};

/// A source read through an InputRelay: a read cut short by a signal is the end of the stream
/// (the pipeline then finishes the frames in flight), and a failed read of the input, which the
/// reader sees only as an early end, is an error.
class RelaySource final : public pipeline::FrameSource {
 public:
  RelaySource(std::unique_ptr<pipeline::FrameSource> inner, const InputRelay& relay)
      : inner_(std::move(inner)), relay_(relay) {}
  // Every FrameSource method goes to the source it wraps (reading is relayed, nothing else).
  pipeline::SourceFormat format() const override { return inner_->format(); }
  void prepare(int producers) override { inner_->prepare(producers); }
  bool lends_frames() const override { return inner_->lends_frames(); }
  bool lent_frames_pinned() const override { return inner_->lent_frames_pinned(); }
  int max_useful_producers() const override { return inner_->max_useful_producers(); }
  bool lend(int producer, const std::uint8_t*& data, std::int64_t& index) override {
    return inner_->lend(producer, data, index);
  }
  void pin_lent_frames() override { inner_->pin_lent_frames(); }
  void release(std::int64_t index) override { inner_->release(index); }
  LockWindows lent_lock_windows() const override { return inner_->lent_lock_windows(); }
  bool read_into(int producer, std::uint8_t* dst, std::size_t stride,
                 std::int64_t& index) override;

 private:
  std::unique_ptr<pipeline::FrameSource> inner_;
  const InputRelay& relay_;
};

}  // namespace mjpeg::app
