// The CPU code's instruction-set variants in tests: one test per variant compiled into the
// build (a test parameter), so that a variant this CPU cannot run is reported as a skipped test
// that names it, never counted as a pass or left out of a loop unseen. tests/gpu/check.sh fails
// when the GPU machine's CPU has a variant's instructions but its tests were skipped.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace mjpeg::test {

/// `built` without the entries of `drop` (e.g. the reference every other variant is held to).
inline std::vector<std::string> without(std::vector<std::string> built, const std::string& drop) {
  built.erase(std::remove(built.begin(), built.end(), drop), built.end());
  return built;
}

/// "" when `variant` is in `runnable`, else why the test cannot run here.
inline std::string not_runnable(const char* what, const std::string& variant,
                                const std::vector<std::string>& runnable) {
  if (std::find(runnable.begin(), runnable.end(), variant) != runnable.end()) return "";
  std::string list;
  for (const std::string& v : runnable) list += " " + v;
  return std::string(what) + " variant " + variant +
         " not tested: this CPU lacks its instructions (it runs" + list + ")";
}

}  // namespace mjpeg::test

/// First in a test of one variant: skips it, naming the variant, when this CPU cannot run it.
#define MJPEG_NEED_VARIANT(what, variant, runnable)                                 \
  do {                                                                              \
    const std::string mjpeg_why_ = ::mjpeg::test::not_runnable(what, variant, runnable); \
    if (!mjpeg_why_.empty()) GTEST_SKIP() << mjpeg_why_;                            \
  } while (0)
