#include "part_range.hpp"

#include <fmt/format.h>

#include "mjpeg/error.hpp"

namespace mjpeg::app {

PartSpec parse_part(const std::string& text) {
  const auto slash = text.find('/');
  const auto number = [&](const std::string& s, long long& out) {
    if (s.empty() || s.size() > 9) return false;
    for (char c : s)
      if (c < '0' || c > '9') return false;
    out = std::stoll(s);
    return true;
  };
  long long i = 0, k = 0;
  if (slash == std::string::npos || !number(text.substr(0, slash), i) ||
      !number(text.substr(slash + 1), k))
    throw UsageError(fmt::format("--part '{}': expected I/K, part I of K (e.g. 2/8)", text));
  if (k < 1 || k > kMaxParts || i < 1 || i > k)
    throw UsageError(fmt::format("--part {}: I must lie in 1..K and K in 1..{}", text, kMaxParts));
  return PartSpec{static_cast<int>(i), static_cast<int>(k)};
}

PartPlan plan_part(const PartSpec& part, std::int64_t total, std::int64_t start,
                   std::int64_t frames, const std::string& input) {
  PartPlan plan;
  plan.part = part;
  plan.total = total;
  if (start >= total)
    throw Error(fmt::format("'{}' has {} frames: none after the first {} (--start)", input,
                            total, start));
  plan.whole.first = start;
  plan.whole.count = frames < 0 ? total - start : std::min(frames, total - start);
  const std::int64_t n = plan.whole.count, k = part.count;
  const auto edge = [&](std::int64_t i) { return plan.whole.first + i * n / k; };
  plan.range.first = edge(part.index - 1);
  plan.range.count = edge(part.index) - plan.range.first;
  if (plan.range.count == 0)
    throw Error(fmt::format("--part {}/{}: {} frames make at most {} parts, so part {} has none",
                            part.index, part.count, n, n, part.index));
  return plan;
}

}  // namespace mjpeg::app
