// MemorySource (include/mjpeg/video.hpp): frames in memory behind the public FrameSource, and
// for encode_all the pipeline's MemoryFrameSource, which lends them where they lie.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gpu_transform.hpp"
#include "host_pin.hpp"
#include "internal.hpp"
#include "mjpeg/video.hpp"
#include "pipeline/frame_source.hpp"

namespace mjpeg {

struct MemorySource::Impl {
  Impl(std::vector<const std::uint8_t*> f, const VideoOptions& o)
      : frames(std::move(f)), format(o), bytes(frame_bytes(o)) {
    if (frames.empty()) throw UsageError("MemorySource: no frames");
    for (std::size_t i = 0; i < frames.size(); ++i)
      if (frames[i] == nullptr)
        throw UsageError("MemorySource: frame " + std::to_string(i) + " is null");
  }

  /// The pipeline's source, made at the first encode (after pin(): it knows whether the
  /// frames are page-locked). bgr24 frames cannot be lent (slots hold RGB).
  pipeline::FrameSource* lent() {
    if (format.format == FrameFormat::bgr24) return nullptr;
    source = std::make_unique<pipeline::MemoryFrameSource>(frames, api::source_format(format),
                                                           !pins.empty());
    return source.get();
  }

  const std::vector<const std::uint8_t*> frames;
  const VideoOptions format;
  const std::size_t bytes;
  std::vector<gpu::HostPin> pins;
  std::unique_ptr<pipeline::FrameSource> source;
};

MemorySource::MemorySource(std::vector<const std::uint8_t*> frames, const VideoOptions& format)
    : impl_(std::make_unique<Impl>(std::move(frames), format)) {}

MemorySource::~MemorySource() = default;

void MemorySource::pin() {
  if (!impl_->pins.empty()) return;
  std::vector<gpu::HostPin> pins;
  for (const std::uint8_t* f : impl_->frames) pins.emplace_back(f, impl_->bytes);
  impl_->pins = std::move(pins);
}

bool MemorySource::pinned() const { return !impl_->pins.empty(); }

bool MemorySource::read(std::int64_t index, std::uint8_t* dst) {
  if (index < 0 || index >= static_cast<std::int64_t>(impl_->frames.size())) return false;
  std::memcpy(dst, impl_->frames[static_cast<std::size_t>(index)], impl_->bytes);
  return true;
}

std::int64_t MemorySource::frame_count() const {
  return static_cast<std::int64_t>(impl_->frames.size());
}

// The pipeline's in-memory source that lends its frames (none for bgr24 frames, which are
// copied).
pipeline::FrameSource* MemorySource::library_reader(const VideoOptions& o) {
  Impl& impl = *impl_;
  const VideoOptions& f = impl.format;
  const bool same_coefficients =
      f.coefficients.has_value() == o.coefficients.has_value() &&
      (!f.coefficients || std::memcmp(&*f.coefficients, &*o.coefficients, sizeof(YuvCoefficients)) == 0);
  if (o.width != f.width || o.height != f.height || o.format != f.format ||
      o.matrix != f.matrix || o.range != f.range || !same_coefficients)
    throw UsageError("encode_all: the VideoOptions do not describe the MemorySource's frames (" +
                     std::to_string(f.width) + "x" + std::to_string(f.height) + " " +
                     to_string(f.format) + ")");
  return impl.lent();
}
}  // namespace mjpeg
