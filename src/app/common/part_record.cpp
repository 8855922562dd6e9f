#include "part_record.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "mjpeg/encoder.hpp"
#include "mjpeg/error.hpp"
#include "mjpeg/vocabulary.hpp"
#include "mjpeg/video.hpp"

namespace mjpeg::app {

std::string why_no_audio(const std::string& path) {
  AudioFormat pcm;
  pcm.codec = "pcm_s16le";
  pcm.sample_rate = 48000;
  pcm.channels = 2;
  return FileSink::audio_problem(path, pcm);
}
namespace {

/// FNV-1a, 64 bits: identifies a source among files a user may mix up, not an adversary's.
std::uint64_t fnv1a(const void* data, std::size_t size, std::uint64_t h = 0xcbf29ce484222325ull) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  for (std::size_t i = 0; i < size; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

}  // namespace

std::string source_id(const std::string& file, std::int64_t frames) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) throw Error(fmt::format("cannot read '{}'", file));
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(file.c_str(), "rb"), std::fclose);
  if (!f) throw Error(fmt::format("cannot read '{}'", file));
  std::vector<std::uint8_t> head(std::size_t(1) << 20);
  head.resize(std::fread(head.data(), 1, head.size(), f.get()));
  return fmt::format("{} bytes, {} frames, first MiB {:016x}", static_cast<long long>(st.st_size),
                     frames, fnv1a(head.data(), head.size()));
}

bool is_source(const std::string& file, const std::string& id) {
  long long bytes = 0, frames = 0;
  if (std::sscanf(id.c_str(), "%lld bytes, %lld frames", &bytes, &frames) != 2) return false;
  return source_id(file, frames) == id;
}

std::string source_path(const std::string& input) {
  std::unique_ptr<char, void (*)(void*)> resolved(::realpath(input.c_str(), nullptr), std::free);
  return resolved ? std::string(resolved.get()) : input;
}

std::string tags_text(const std::vector<std::pair<std::string, std::string>>& tags) {
  const auto escape = [](const std::string& text) {
    std::string out;
    for (const char ch : text) {
      const auto c = static_cast<unsigned char>(ch);
      if (c < 0x20 || c >= 0x7F || c == '%' || c == ',' || c == '=')
        out += fmt::format("%{:02X}", c);
      else
        out += ch;
    }
    return out;
  };
  std::string out;
  for (const auto& [key, text] : tags) out += (out.empty() ? "" : ", ") + escape(key) + "=" + escape(text);
  return out;
}

std::vector<std::pair<std::string, std::string>> parse_tags(const std::string& text) {
  const auto unescape = [&](const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] != '%') {
        out += s[i];
        continue;
      }
      const auto digit = [&](std::size_t at) {
        const char c = at < s.size() ? s[at] : '\0';
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        throw Error("its part record is damaged (tags)");
      };
      out += static_cast<char>(digit(i + 1) * 16 + digit(i + 2));
      i += 2;
    }
    return out;
  };
  std::vector<std::pair<std::string, std::string>> tags;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(", ", at);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(at, end - at);
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos) throw Error("its part record is damaged (tags)");
    tags.emplace_back(unescape(item.substr(0, eq)), unescape(item.substr(eq + 1)));
    at = end + 2;
  }
  return tags;
}

namespace {

std::string jpeg_text(const EncodeOptions& o) {
  std::string tables = "default";
  if (!o.qtables.empty()) {
    const std::string t = format_qtables(o.qtables);
    tables = fmt::format("own {:016x}", fnv1a(t.data(), t.size()));
  }
  std::string slots = o.qslots.empty() ? "default" : "";
  for (std::size_t i = 0; i < o.qslots.size(); ++i) slots += (i ? "," : "") + std::to_string(o.qslots[i]);
  return fmt::format("quality {}, sampling {}, restart {}, optimize {}, progressive {}, tune {}, "
                     "tables {}, slots {}, rdo {}",
                     o.quality, to_string(o.subsampling), o.restart_interval,
                     o.optimize ? "yes" : "no", o.progressive ? "yes" : "no", to_string(o.tune),
                     tables, slots, to_string(o.rdo));
}

std::string format_text(const VideoOptions& f) {
  std::string text = to_string(f.format);
  if (!is_planar(f.format)) return text;
  if (f.coefficients) {
    const YuvCoefficients& c = *f.coefficients;
    return text + fmt::format(" with coefficients {} {} {} {} {} {} {}",
                              c.truncated ? "truncated" : "rounded", c.y0, c.cy, c.cr_r, c.cb_g,
                              c.cr_g, c.cb_b);
  }
  return text + fmt::format(" {} {} range", vocab::name_of(f.matrix), vocab::name_of(f.range));
}

bool parse_range(const std::string& text, FrameRange& r) {
  long long a = 0, b = 0;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%lld..%lld%c", &a, &b, &tail) != 2 || a < 0 || b < a - 1)
    return false;
  r.first = a;
  r.count = b - a + 1;
  return true;
}

}  // namespace

std::string range_text(const FrameRange& range) {
  return fmt::format("{}..{}", range.first, range.end() - 1);
}

const std::string& PartRecord::get(const std::string& key) const {
  static const std::string none;
  for (const auto& [k, v] : fields)
    if (k == key) return v;
  return none;
}

std::string PartRecord::text() const {
  std::string out = std::string(kPartRecordHeader) + "\n";
  for (const auto& [k, v] : fields) out += k + ": " + v + "\n";
  return out;
}

PartRecord PartRecord::parse(const std::string& text) {
  const std::string header = std::string(kPartRecordHeader) + "\n";
  if (text.compare(0, header.size(), header) != 0)
    throw Error("its note is no part record of this mjpeg");
  PartRecord r;
  std::size_t at = header.size();
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(at, end - at);
    at = end + 1;
    const auto colon = line.find(": ");
    if (colon == std::string::npos) throw Error("its part record is damaged ('" + line + "')");
    r.fields.emplace_back(line.substr(0, colon), line.substr(colon + 2));
  }
  const std::string& part = r.get("part");
  int i = 0, k = 0;
  char tail = 0;
  if (std::sscanf(part.c_str(), "%d/%d%c", &i, &k, &tail) != 2 || k < 1 || i < 1 || i > k ||
      !parse_range(r.get("frames"), r.range) || !parse_range(r.get("of"), r.whole) ||
      r.range.count < 1 || r.range.first < r.whole.first || r.range.end() > r.whole.end())
    throw Error("its part record is damaged (part, frames or of)");
  r.part = PartSpec{i, k};
  return r;
}

const std::vector<std::string>& shared_part_keys() {
  static const std::vector<std::string> keys = {"size",   "rate", "source id", "of",
                                                 "jpeg",   "input", "aspect",   "tags",
                                                 "audio", "audio timing"};
  return keys;
}

PartRecord make_part_record(const PartPlan& plan, const std::string& input,
                            const VideoOptions& format, int fps_num, int fps_den,
                            const EncodeOptions& jpeg, const std::string& reading,
                            const std::vector<std::pair<std::string, std::string>>& carried) {
  PartRecord r;
  r.part = plan.part;
  r.range = plan.range;
  r.whole = plan.whole;
  const auto slash = input.rfind('/');
  r.fields = {
      {"part", fmt::format("{}/{}", plan.part.index, plan.part.count)},
      {"frames", range_text(plan.range)},
      {"of", range_text(plan.whole)},
      {"source", slash == std::string::npos ? input : input.substr(slash + 1)},
      {"source id", source_id(plan.identity_file.empty() ? input : plan.identity_file, plan.total)},
      {"size", fmt::format("{}x{}", format.width, format.height)},
      {"rate", fmt::format("{}/{}", fps_num, fps_den)},
      {"jpeg", jpeg_text(jpeg)},
      {"input", format_text(format) + (reading.empty() ? "" : ", " + reading)},
  };
  r.fields.insert(r.fields.end(), carried.begin(), carried.end());
  r.fields.emplace_back("encoder", fmt::format("mjpeg {}", version()));
  return r;
}

}  // namespace mjpeg::app
