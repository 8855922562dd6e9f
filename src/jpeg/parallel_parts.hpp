// Runs the parts of one frame's work at once: part 0 on the calling thread, each other part on
// a thread of its own (a large frame's parts take milliseconds each, so starting a thread per
// part costs little and keeps no pool alive between calls).
#pragma once

#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace mjpeg {

/// Calls part(k) for k in 0 .. parts - 1, concurrently, and returns when every call has
/// returned; then rethrows the exception of the lowest part that threw, if any.
template <typename Part>
void run_parts(std::size_t parts, Part&& part) {
  std::vector<std::exception_ptr> errors(parts);
  auto guarded = [&](std::size_t k) {
    try {
      part(k);
    } catch (...) {
      errors[k] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(parts > 0 ? parts - 1 : 0);
  try {
    for (std::size_t k = 1; k < parts; ++k) pool.emplace_back(guarded, k);
  } catch (...) {  // no thread could be started: the rest runs here
    for (std::size_t k = pool.size() + 1; k < parts; ++k) guarded(k);
  }
  if (parts > 0) guarded(0);
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

/// How many parts a frame of width x height pixels is worth cutting into: one per half
/// megapixel (a part takes a few milliseconds to code, a thread tens of microseconds to start);
/// 0 or 1 for a smaller frame.
inline int parts_worth(int width, int height) {
  constexpr double kPixelsPerPart = 512.0 * 1024;
  return static_cast<int>(static_cast<double>(width) * height / kPixelsPerPart);
}

/// Where part k of `parts` equal ranges of `count` items begins (k = parts: count).
inline int part_begin(int count, int parts, int k) {
  return static_cast<int>(static_cast<long long>(count) * k / parts);
}

}  // namespace mjpeg
