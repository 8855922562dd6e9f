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

#include "mjpeg/video.hpp"

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
class RelaySource final : public mjpeg::FrameSource {
 public:
  RelaySource(std::unique_ptr<mjpeg::FrameSource> inner, const InputRelay& relay)
      : inner_(std::move(inner)), relay_(relay) {}
  bool read(std::int64_t index, std::uint8_t* dst) override;
  bool concurrent_reads() const override { return inner_->concurrent_reads(); }
  int max_concurrent_reads() const override { return inner_->max_concurrent_reads(); }
  std::int64_t frame_count() const override { return inner_->frame_count(); }

 private:
  std::unique_ptr<mjpeg::FrameSource> inner_;
  const InputRelay& relay_;
};

}  // namespace mjpeg::app
