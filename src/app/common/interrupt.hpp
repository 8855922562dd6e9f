// Ctrl-C (SIGINT) and SIGTERM for the whole process, installed as the first thing main() does,
// so that a signal at any moment, even during start-up, is handled the documented way:
//
//  - Inside a GracefulStop scope (a stream encode): the first signal only raises the stop flag
//    (the pipeline stops reading, finishes the frames in flight and the output is finalised;
//    exit 130); a second signal ends the process at once.
//  - Anywhere else (start-up, a single picture, quality, compare, bench): the signal ends the
//    process at once.
//
// Ending at once means: the registered temporary outputs are removed (mjpeg::remove_partial_outputs),
// one line "mjpeg: error: interrupted..." on stderr, exit status 130. Everything in the handler
// is async-signal-safe (atomics, unlink, write, _exit).
#pragma once

#include <atomic>

namespace mjpeg::app {

/// Installs the handlers for SIGINT and SIGTERM (also when the shell started us with SIGINT
/// ignored, as it does for a background job) and ignores SIGXFSZ. Call first in main().
void install_interrupt_handlers();

/// True once SIGINT or SIGTERM arrived (the pipeline's stop flag).
const std::atomic<bool>& interrupt_flag();
inline bool interrupted() { return interrupt_flag().load(); }

/// A descriptor that becomes readable (and stays so) when the first signal arrives inside a
/// GracefulStop scope: poll it beside a descriptor that may never deliver (-1 before
/// install_interrupt_handlers).
int interrupt_wake_fd();

/// While one exists, the first signal asks for a clean stop instead of ending the process.
class GracefulStop {
 public:
  GracefulStop();
  ~GracefulStop();
  GracefulStop(const GracefulStop&) = delete;
  GracefulStop& operator=(const GracefulStop&) = delete;
};

}  // namespace mjpeg::app
