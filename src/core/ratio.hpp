// The fraction nearest to a ratio whose terms fit a field of limited width (16-bit fields of a
// JFIF header or of an AVI's video properties), found from the continued fraction of the ratio
// with its last term reduced where the full one would not fit (a semiconvergent): as close as
// any fraction of such terms can be, and the ratio itself, reduced, when it fits.
#pragma once

#include <cstdint>

namespace mjpeg::core {

/// num / den (both > 0) as p / q with 1 <= p, q <= limit. A ratio beyond what fits gives
/// limit / 1 or 1 / limit.
inline void nearest_ratio(std::uint64_t num, std::uint64_t den, std::uint64_t limit,
                          std::uint64_t& p, std::uint64_t& q) {
  const std::uint64_t n0 = num, d0 = den;
  std::uint64_t p0 = 0, q0 = 1, p1 = 1, q1 = 0;  // convergents p0/q0, p1/q1
  while (den != 0) {
    const std::uint64_t a = num / den;
    const std::uint64_t p2 = a * p1 + p0, q2 = a * q1 + q0;
    if (p2 > limit || q2 > limit) {
      // The largest k < a that still fits gives a semiconvergent; it is the closer of the two
      // when it lies nearer than p1/q1.
      std::uint64_t k = q1 == 0 ? 0 : (limit - q0) / q1;
      if (p1 != 0) k = k < (limit - p0) / p1 ? k : (limit - p0) / p1;
      if (k > 0 && q1 != 0) {
        const std::uint64_t ps = p0 + k * p1, qs = q0 + k * q1;
        const long double x = static_cast<long double>(n0) / d0;
        const auto error = [&](std::uint64_t pp, std::uint64_t qq) {
          const long double e = static_cast<long double>(pp) / qq - x;
          return e < 0 ? -e : e;
        };
        if (error(ps, qs) < error(p1, q1)) {
          p1 = ps;
          q1 = qs;
        }
      }
      break;
    }
    p0 = p1; q0 = q1; p1 = p2; q1 = q2;
    const std::uint64_t r = num - a * den;
    num = den;
    den = r;
  }
  if (q1 == 0) { p1 = limit; q1 = 1; }  // too large for the field
  if (p1 == 0) { p1 = 1; q1 = limit; }  // too small
  p = p1;
  q = q1;
}

}  // namespace mjpeg::core
