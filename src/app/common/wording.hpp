// Small helpers for the words of messages.
#pragma once

#include <cstdint>
#include <string>

namespace mjpeg::app {

/// "1 frame", "2 frames": `n` and the noun in the number it needs.
inline std::string count_of(std::int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace mjpeg::app
