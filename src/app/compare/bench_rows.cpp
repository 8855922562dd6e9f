#include "bench_rows.hpp"

#include <cstdlib>
#include <iterator>
#include <sstream>

#include <fmt/format.h>

#include "mjpeg/error.hpp"

namespace mjpeg::app {
namespace {

// The columns, in order: name, how to print a row's value, how to read it back.
struct Column {
  const char* name;
  std::string (*get)(const BenchRow&);
  void (*set)(BenchRow&, const std::string&);
};

double to_double(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0') throw Error("'" + s + "' is not a number");
  return v;
}
int to_int(const std::string& s) { return static_cast<int>(to_double(s)); }
std::string num(double v) { return fmt::format("{:.6g}", v); }

#define MJPEG_TEXT_COLUMN(field) \
  {#field, [](const BenchRow& r) { return r.field; }, [](BenchRow& r, const std::string& v) { r.field = v; }}
#define MJPEG_INT_COLUMN(field) \
  {#field, [](const BenchRow& r) { return std::to_string(r.field); }, [](BenchRow& r, const std::string& v) { r.field = to_int(v); }}
#define MJPEG_NUM_COLUMN(field) \
  {#field, [](const BenchRow& r) { return num(r.field); }, [](BenchRow& r, const std::string& v) { r.field = to_double(v); }}

const Column kColumns[] = {
    MJPEG_TEXT_COLUMN(sweep),       MJPEG_TEXT_COLUMN(mode),      MJPEG_INT_COLUMN(width),
    MJPEG_INT_COLUMN(height),       MJPEG_INT_COLUMN(frames),     MJPEG_INT_COLUMN(producers),
    MJPEG_INT_COLUMN(entropy_threads), MJPEG_INT_COLUMN(slots),   MJPEG_INT_COLUMN(stages),
    MJPEG_TEXT_COLUMN(variant),     MJPEG_NUM_COLUMN(fps),        MJPEG_TEXT_COLUMN(bound_stage),
    MJPEG_NUM_COLUMN(bound_fps),    MJPEG_NUM_COLUMN(produce_ms), MJPEG_NUM_COLUMN(upload_ms),
    MJPEG_NUM_COLUMN(kernel_ms),    MJPEG_NUM_COLUMN(download_ms), MJPEG_NUM_COLUMN(entropy_ms),
    MJPEG_NUM_COLUMN(write_ms),     MJPEG_NUM_COLUMN(overlap),    MJPEG_NUM_COLUMN(h2d_gbps),
    MJPEG_NUM_COLUMN(d2h_gbps),     MJPEG_NUM_COLUMN(kb_per_frame),
    {"identical", [](const BenchRow& r) { return std::string(r.identical ? "yes" : "no"); },
     [](BenchRow& r, const std::string& v) {
       if (v != "yes" && v != "no") throw Error("identical must be yes or no, not '" + v + "'");
       r.identical = v == "yes";
     }},
    MJPEG_INT_COLUMN(devices),
};

#undef MJPEG_TEXT_COLUMN
#undef MJPEG_INT_COLUMN
#undef MJPEG_NUM_COLUMN

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  std::string f;
  while (std::getline(in, f, ',')) fields.push_back(f);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

}  // namespace

std::string bench_csv(const std::vector<BenchRow>& rows) {
  std::string out;
  for (const Column& c : kColumns) out += (out.empty() ? "" : ",") + std::string(c.name);
  out += "\n";
  for (const BenchRow& r : rows) {
    std::string line;
    for (const Column& c : kColumns) line += (line.empty() ? "" : ",") + c.get(r);
    out += line + "\n";
  }
  return out;
}

std::vector<BenchRow> parse_bench_csv(const std::string& text) {
  std::stringstream in(text);
  std::string line;
  if (!std::getline(in, line)) throw Error("empty bench CSV");
  const std::vector<std::string> header = split(line);
  // A CSV of the version before the devices column (the last one) reads as one device.
  const std::size_t n = header.size() + 1 == std::size(kColumns) ? header.size() : std::size(kColumns);
  bool header_ok = header.size() == n;
  for (std::size_t i = 0; header_ok && i < n; ++i) header_ok = header[i] == kColumns[i].name;
  if (!header_ok) throw Error("not a bench CSV of this version (header differs)");
  std::vector<BenchRow> rows;
  for (int number = 2; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const std::vector<std::string> fields = split(line);
    if (fields.size() != n)
      throw Error(fmt::format("bench CSV line {}: {} fields, expected {}", number, fields.size(), n));
    BenchRow r;
    try {
      for (std::size_t i = 0; i < n; ++i) kColumns[i].set(r, fields[i]);
    } catch (const Error& e) {
      throw Error(fmt::format("bench CSV line {}: {}", number, e.what()));
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace mjpeg::app
