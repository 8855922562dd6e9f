#include "input_relay.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <vector>

#include <fmt/format.h>

#include "app/common/interrupt.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg::app {
namespace {

constexpr std::size_t kChunk = std::size_t(1) << 20;

}  // namespace

bool InputRelay::needed(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return false;
  return !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode);
}

InputRelay::InputRelay(int fd, std::string name) : name_(std::move(name)), src_(fd) {
  if (::pipe2(out_, O_CLOEXEC) != 0 || ::pipe2(stop_, O_CLOEXEC | O_NONBLOCK) != 0) {
    const int err = errno;
    for (int f : {out_[0], out_[1], stop_[0], stop_[1]})
      if (f >= 0) ::close(f);
    throw Error(fmt::format("{}: cannot make a pipe: {}", name_, std::strerror(err)));
  }
  ::fcntl(out_[1], F_SETFL, O_NONBLOCK);           // the thread never blocks in a write
  ::fcntl(out_[1], F_SETPIPE_SZ, int(kChunk));     // fewer wake-ups (best effort)
  // The input's own pipe too, where it is one (stdin from `ffmpeg ... |`): its writer then
  // blocks, and we wake, once per kChunk instead of per 64 KiB (best effort: the system's
  // pipe-max-size may refuse it, and it fails harmlessly on a terminal or a socket).
  ::fcntl(src_, F_SETPIPE_SZ, int(kChunk));
  stream_ = ::fdopen(out_[0], "rb");
  if (stream_ == nullptr) {
    for (int f : {out_[0], out_[1], stop_[0], stop_[1]}) ::close(f);
    throw std::bad_alloc();
  }
  thread_ = std::thread([this] { run(); });
}

InputRelay::~InputRelay() {
  ssize_t ignored = ::write(stop_[1], "!", 1);
  static_cast<void>(ignored);
  if (thread_.joinable()) thread_.join();
  std::fclose(stream_);  // closes out_[0]
  ::close(stop_[0]);
  ::close(stop_[1]);
}

void InputRelay::run() {
  // A write to our pipe after the reader closed it fails with EPIPE instead of killing us.
  sigset_t pipe_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, nullptr);
  const int wake = interrupt_wake_fd();
  bool use_splice = true;
  std::vector<char> buf;
  std::size_t pending = 0, done = 0;  // bytes of buf not yet written (read()/write() path)
  // Waits until `fd` has `events`; false when stopped or interrupted.
  const auto wait_for = [&](int fd, short events) {
    for (;;) {
      pollfd fds[3] = {{fd, events, 0}, {stop_[0], POLLIN, 0}, {wake, POLLIN, 0}};
      const int n = ::poll(fds, wake >= 0 ? 3 : 2, -1);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        error_ = errno;
        return false;
      }
      if (fds[1].revents != 0) return false;
      if (wake >= 0 && fds[2].revents != 0) {
        cut_ = true;
        return false;
      }
      if (fds[0].revents != 0) return true;
    }
  };
  for (;;) {
    if (pending > done) {  // finish what read() got
      if (!wait_for(out_[1], POLLOUT)) break;
      const ssize_t w = ::write(out_[1], buf.data() + done, pending - done);
      if (w < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (w < 0) break;  // EPIPE: the reader is gone
      done += static_cast<std::size_t>(w);
      continue;
    }
    if (!wait_for(src_, POLLIN)) break;
    if (use_splice) {
      const ssize_t n = ::splice(src_, nullptr, out_[1], nullptr, kChunk,
                                 SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n > 0) continue;
      if (n == 0) break;  // the end of the input
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {  // our pipe is full (or the input had nothing after all)
        if (!wait_for(out_[1], POLLOUT)) break;
        continue;
      }
      if (errno == EINVAL || errno == ENOSYS) {
        use_splice = false;  // e.g. a terminal: read() and write()
      } else if (errno == EPIPE) {
        break;
      } else {
        error_ = errno;
        break;
      }
    }
    if (buf.empty()) buf.resize(kChunk);
    const ssize_t n = ::read(src_, buf.data(), buf.size());
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      error_ = errno;
      break;
    }
    pending = static_cast<std::size_t>(n);
    done = 0;
  }
  ::close(out_[1]);  // the reader sees the end
  out_[1] = -1;
}

bool RelaySource::read(std::int64_t index, std::uint8_t* dst) {
  bool got = false;
  try {
    got = inner_->read(index, dst);
  } catch (const std::exception&) {
    if (relay_.cut()) return false;  // a frame cut short by Ctrl-C: the end of the stream
    if (relay_.error() != 0)  // the reader saw only a short frame
      throw Error(fmt::format("{}: read error: {}", relay_.name(), std::strerror(relay_.error())));
    throw;
  }
  if (!got && !relay_.cut() && relay_.error() != 0)
    throw Error(fmt::format("{}: read error: {}", relay_.name(), std::strerror(relay_.error())));
  return got;
}

}  // namespace mjpeg::app
