// A deadlock guard for tests that run threads: a hung test would otherwise hang CI until its
// time limit, with no word of which test it was.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <thread>
#include <utility>

namespace mjpeg::test {

/// Runs `fn` on a thread and waits at most `seconds`; a longer run is taken for a deadlock: the
/// test's name goes to stderr and the binary exits (status 3). An exception from `fn` is
/// rethrown here.
template <class Fn>
void within(double seconds, Fn fn) {
  std::packaged_task<void()> task(std::move(fn));
  std::future<void> done = task.get_future();
  std::thread t(std::move(task));
  if (done.wait_for(std::chrono::duration<double>(seconds)) != std::future_status::ready) {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::fprintf(stderr, "%s.%s: no result after %.0f s: deadlock\n",
                 info ? info->test_suite_name() : "test", info ? info->name() : "?", seconds);
    std::fflush(stderr);
    std::_Exit(3);
  }
  t.join();
  done.get();
}

}  // namespace mjpeg::test
