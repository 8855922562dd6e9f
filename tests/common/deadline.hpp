// A deadlock guard for tests that run threads: a hung test would otherwise hang CI until its
// time limit, with no word of which test it was.
#pragma once

#include <gtest/gtest.h>

#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <thread>
#include <utility>

namespace mjpeg::test {

/// CPU seconds this process has used, all threads together.
inline double process_cpu_seconds() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// What within() calls a process that still works: CPU time of at least this share of a
/// window (a deadlocked test's threads all wait and use next to none; a working one on a
/// machine loaded tenfold still gets several percent of a core).
constexpr double kWorkingCpuShare = 0.01;

/// Runs `fn` on a thread and waits for it, `seconds` at a time. After each such window the
/// process's CPU time tells a deadlock from a slow run: a window in which the process used
/// (next to) no CPU is a deadlock, while a run that keeps using CPU (an overloaded machine, a
/// sanitizer build) is given more windows, up to `max_windows` (then it is reported as still
/// running: a livelock, or far too slow). Either way the test's name goes to stderr and the
/// binary exits (status 3). An exception from `fn` is rethrown here.
template <class Fn>
void within(double seconds, Fn fn, int max_windows = 10) {
  std::packaged_task<void()> task(std::move(fn));
  std::future<void> done = task.get_future();
  std::thread t(std::move(task));
  const double working = kWorkingCpuShare * seconds;
  double cpu = process_cpu_seconds();
  for (int window = 1;; ++window) {
    if (done.wait_for(std::chrono::duration<double>(seconds)) == std::future_status::ready) break;
    const double now = process_cpu_seconds(), used = now - cpu;
    cpu = now;
    if (used >= working && window < max_windows) continue;
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    if (used < working)
      std::fprintf(stderr, "%s.%s: no result after %g s, and (next to) no CPU used in the last %g s: deadlock\n",
                   info ? info->test_suite_name() : "test", info ? info->name() : "?",
                   seconds * window, seconds);
    else
      std::fprintf(stderr, "%s.%s: no result after %g s although still using CPU (%.2f s in the last %g s): livelock, or far too slow\n",
                   info ? info->test_suite_name() : "test", info ? info->name() : "?",
                   seconds * window, used, seconds);
    std::fflush(stderr);
    std::_Exit(3);
  }
  t.join();
  done.get();
}

}  // namespace mjpeg::test
