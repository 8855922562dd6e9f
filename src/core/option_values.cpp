// The public option helpers of mjpeg/options.hpp and mjpeg/video.hpp that need no encoder:
// names (from the vocabulary tables), validation and the JFIF density of an aspect ratio.
#include <stdexcept>
#include <string>

#include "core/ratio.hpp"
#include "mjpeg/vocabulary.hpp"
#include "mjpeg/error.hpp"
#include "mjpeg/options.hpp"
#include "mjpeg/video.hpp"

namespace mjpeg {

std::string to_string(Subsampling s) { return vocab::name_of(s); }
Subsampling parse_subsampling(const std::string& text) { return vocab::parse_name<Subsampling>(text); }

std::string to_string(Tune t) { return vocab::name_of(t); }
Tune parse_tune(const std::string& text) { return vocab::parse_name<Tune>(text); }

std::string to_string(Rdo r) { return vocab::name_of(r); }
Rdo parse_rdo(const std::string& text) { return vocab::parse_name<Rdo>(text); }

const char* to_string(Offload o) { return vocab::name_of(o); }
Offload parse_offload(const std::string& text) { return vocab::parse_name<Offload>(text); }
OffloadTraits traits_of(Offload o) {
  switch (o) {
    case Offload::cpu: return {};
    case Offload::sok: return {true, false, false};
    case Offload::sok_pinned: return {true, true, false};
    case Offload::aok: return {true, true, true};
  }
  throw std::logic_error("traits_of: an Offload value without a row");
}
bool uses_gpu(Offload o) { return traits_of(o).gpu; }

const char* to_string(KernelVariant v) { return vocab::name_of(v); }
KernelVariant parse_kernel_variant(const std::string& text) {
  return vocab::parse_name<KernelVariant>(text);
}

const char* to_string(GpuOutput o) { return vocab::name_of(o); }
GpuOutput parse_gpu_output(const std::string& text) { return vocab::parse_name<GpuOutput>(text); }

const char* to_string(FrameFormat f) { return vocab::name_of(f); }
FrameFormat parse_frame_format(const std::string& text) {
  return vocab::parse_name<FrameFormat>(text);
}

bool is_planar(FrameFormat f) {
  return f == FrameFormat::yuv420p || f == FrameFormat::yuv422p || f == FrameFormat::yuv444p ||
         f == FrameFormat::yuv400p;
}

void validate(const EncodeOptions& o) {
  if (o.quality < 1 || o.quality > 100)
    throw UsageError("quality " + std::to_string(o.quality) + " is outside 1..100");
  if (o.restart_interval < 0 || o.restart_interval > kMaxRestartInterval)
    throw UsageError("restart interval " + std::to_string(o.restart_interval) +
                     " is outside 0.." + std::to_string(kMaxRestartInterval));
  if (o.qtables.size() > static_cast<std::size_t>(kMaxQuantTables))
    throw UsageError(std::to_string(o.qtables.size()) + " quantization tables; at most " +
                     std::to_string(kMaxQuantTables));
  for (int s : o.qslots)
    if (s < 0 || s >= kMaxQuantTables)
      throw UsageError("quantization table slot " + std::to_string(s) + " is outside 0..3");
  const JfifDensity& d = o.density;
  if (d.unit < 0 || d.unit > 2 || d.x < 0 || d.x > 65535 || d.y < 0 || d.y > 65535)
    throw UsageError("JFIF density unit " + std::to_string(d.unit) + ", " +
                     std::to_string(d.x) + "x" + std::to_string(d.y) +
                     " is outside unit 0..2, 0..65535");
}

JfifDensity JfifDensity::pixel_aspect(int num, int den) {
  if (num <= 0 || den <= 0 || num == den) return {};
  std::uint64_t x = 0, y = 0;
  core::nearest_ratio(std::uint64_t(num), std::uint64_t(den), 65535, x, y);
  JfifDensity density;
  density.x = static_cast<int>(x);
  density.y = static_cast<int>(y);
  return density;
}

}  // namespace mjpeg
