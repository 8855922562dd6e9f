// SequencePattern, is_sequence_pattern and file_extension (mjpeg/files.hpp).
#include <cctype>

#include "mjpeg/files.hpp"

namespace mjpeg {

bool SequencePattern::parse(const std::string& pattern, SequencePattern& out) {
  SequencePattern p;
  std::string* part = &p.prefix;
  int conversions = 0;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      part->push_back(pattern[i]);
      continue;
    }
    if (i + 1 < pattern.size() && pattern[i + 1] == '%') {
      part->push_back('%');
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    bool zero = false;
    if (j < pattern.size() && pattern[j] == '0') {
      zero = true;
      ++j;
    }
    int w = 0;
    while (j < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[j])) && w < 100)
      w = w * 10 + (pattern[j++] - '0');
    if (j >= pattern.size() || pattern[j] != 'd' || w >= 100) return false;
    p.width = w;
    p.zero_pad = zero;
    ++conversions;
    part = &p.suffix;
    i = j;
  }
  if (conversions != 1) return false;
  out = p;
  return true;
}

std::string SequencePattern::name(std::int64_t n) const {
  std::string digits = std::to_string(n);
  if (static_cast<int>(digits.size()) < width)
    digits.insert(0, static_cast<std::size_t>(width) - digits.size(), zero_pad ? '0' : ' ');
  return prefix + digits + suffix;
}

std::string SequencePattern::directory() const {
  const auto slash = prefix.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return prefix.substr(0, slash);
}

std::int64_t SequencePattern::number_of(const std::string& entry) const {
  const auto slash = prefix.rfind('/');
  const std::string head = slash == std::string::npos ? prefix : prefix.substr(slash + 1);
  if (entry.size() <= head.size() + suffix.size() || entry.compare(0, head.size(), head) != 0 ||
      entry.compare(entry.size() - suffix.size(), suffix.size(), suffix) != 0)
    return -1;
  const std::string middle = entry.substr(head.size(), entry.size() - head.size() - suffix.size());
  std::size_t k = 0;
  while (k < middle.size() && middle[k] == ' ') ++k;  // space padding (%5d)
  if (k == middle.size() || middle.size() - k > 15) return -1;
  std::int64_t n = 0;
  for (std::size_t i = k; i < middle.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(middle[i]))) return -1;
    n = n * 10 + (middle[i] - '0');
  }
  // Only the name the pattern itself gives n ("0007" for %04d, not "07" or "00007").
  const std::string dir = slash == std::string::npos ? "" : prefix.substr(0, slash + 1);
  return name(n) == dir + entry ? n : -1;
}

bool is_sequence_pattern(const std::string& path) {
  SequencePattern p;
  return SequencePattern::parse(path, p);
}

std::string file_extension(const std::string& path) {
  const auto slash = path.rfind('/');
  const auto dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

}  // namespace mjpeg
