#include "interrupt.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "mjpeg/files.hpp"

namespace mjpeg::app {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_graceful{0};
int g_wake[2] = {-1, -1};  // self-pipe: the handler writes one byte on a graceful stop
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free,
              "the signal handler needs lock-free atomics");

void say(const char* text) {
  const std::size_t n = std::strlen(text);  // strlen is async-signal-safe (POSIX.1-2008 TC2)
  ssize_t ignored = ::write(STDERR_FILENO, text, n);
  static_cast<void>(ignored);
}

extern "C" void on_interrupt(int) {
  const int saved_errno = errno;
  const bool first = !g_stop.exchange(true);
  if (first && g_graceful.load() > 0) {  // a stream encode stops cleanly
    if (g_wake[1] >= 0) {
      ssize_t ignored = ::write(g_wake[1], "!", 1);  // wakes every poll on interrupt_wake_fd
      static_cast<void>(ignored);
    }
    errno = saved_errno;
    return;
  }
  // Ending at once: the temporary outputs go first (their paths were registered in advance;
  // removing them is async-signal-safe), so nothing is left behind.
  remove_partial_outputs();
  say(first ? "mjpeg: error: interrupted; nothing written\n"
            : "mjpeg: error: interrupted again; stopped at once, nothing written\n");
  ::_exit(130);
}

}  // namespace

void install_interrupt_handlers() {
  // Past a file-size limit (ulimit -f) the kernel sends SIGXFSZ, whose default action kills
  // the process without a word. Ignored, the write fails with EFBIG instead, which surfaces
  // as a one-line error and leaves no partial output (see mjpeg/files.hpp).
  ::signal(SIGXFSZ, SIG_IGN);
  if (g_wake[0] < 0 && ::pipe2(g_wake, O_CLOEXEC | O_NONBLOCK) != 0) g_wake[0] = g_wake[1] = -1;
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sa.sa_flags = SA_RESTART;  // a read of a pipe goes on after the handler, it does not fail
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGINT);   // the handler never runs nested in itself
  sigaddset(&sa.sa_mask, SIGTERM);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

const std::atomic<bool>& interrupt_flag() { return g_stop; }

int interrupt_wake_fd() { return g_wake[0]; }

GracefulStop::GracefulStop() { g_graceful.fetch_add(1); }
GracefulStop::~GracefulStop() { g_graceful.fetch_sub(1); }

}  // namespace mjpeg::app
