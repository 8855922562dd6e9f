#include "pipeline/trace.hpp"

#include <algorithm>

namespace mjpeg::pipeline {

const char* to_string(SpanKind kind) {
  switch (kind) {
    case SpanKind::read: return "read";
    case SpanKind::upload: return "upload";
    case SpanKind::kernel: return "kernel";
    case SpanKind::download: return "download";
    case SpanKind::dispatch: return "dispatch";
    case SpanKind::sync: return "sync";
    case SpanKind::wait: return "wait";
    case SpanKind::transform: return "transform";
    case SpanKind::entropy: return "entropy";
    case SpanKind::write: return "write";
  }
  return "?";
}

int Trace::add_track(std::string name, bool gpu) {
  tracks_.push_back(Track{std::move(name), gpu});
  return static_cast<int>(tracks_.size()) - 1;
}

void Trace::add(const Span& span) {
  std::lock_guard<std::mutex> lock(mutex_);
  spans_.push_back(span);
}

std::vector<Span> Trace::spans() const {
  std::vector<Span> out;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    out = spans_;
  }
  std::sort(out.begin(), out.end(), [](const Span& a, const Span& b) {
    return a.track != b.track ? a.track < b.track : a.start_s < b.start_s;
  });
  return out;
}

}  // namespace mjpeg::pipeline
