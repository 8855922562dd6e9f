#include "pipeline/offload.hpp"

#include <algorithm>
#include <string>

#include "core/planar_format.hpp"
#include "device_info.hpp"
#include "gpu_transform.hpp"
#include "jpeg/transform_cpu.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg::pipeline {

namespace {

/// cpu: the entropy workers transform the frames (transform_cpu) where they lie, straight
/// from the source's memory when it lends its frames (no copy), else from the slot's pixels.
/// A slot carries its frame from the read to the write; its record is its own.
class CpuOffloader final : public Offloader {
 public:
  explicit CpuOffloader(const OffloadSetup& s)
      : format_(s.format), geometry_(s.geometry), tables_(s.tables), observer_(s.observer) {
    lend_ = s.source.lends_frames();
    const int k = s.options.slots;
    slots_.resize(static_cast<std::size_t>(k));
    const std::size_t pixel_bytes = format_.frame_bytes();
    for (int i = 0; i < k; ++i) {
      if (!lend_) pixels_.emplace_back(new std::uint8_t[pixel_bytes]);
      coeffs_.emplace_back(new std::int16_t[geometry_.coefficient_count()]);
      slots_[i].pixels = lend_ ? nullptr : pixels_.back().get();
      slots_[i].coeffs = coeffs_.back().get();
    }
  }

  std::vector<int> first_free_slots() const override {
    std::vector<int> all(slots_.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    return all;
  }

  void fetch(ThreadState& thread, int slot, std::int64_t index) override {
    FrameSlot& s = slots_[static_cast<std::size_t>(slot)];
    auto scope = observer_.scope(SpanKind::transform, thread.id, index);
    if (format_.is_planar()) {
      thread.rows.set_frame(planar_view(s.frame, format_.width, format_.height, format_.planar));
      transform_cpu(thread.rows, geometry_, tables_, s.coeffs);
    } else {
      const ImageView view{s.frame, format_.width, format_.height, format_.format,
                           format_.row_bytes()};
      transform_cpu(view, geometry_, tables_, s.coeffs);
    }
  }

  TransformResult result(int slot) override {
    TransformResult r;
    r.coeffs = slots_[static_cast<std::size_t>(slot)].coeffs;
    return r;
  }

 private:
  const SourceFormat& format_;
  const FrameGeometry& geometry_;
  const QuantTables& tables_;
  RunObserver& observer_;
  std::vector<std::unique_ptr<std::uint8_t[]>> pixels_;
  std::vector<std::unique_ptr<std::int16_t[]>> coeffs_;
};

/// A GPU mode's devices must exist and be usable before anything is allocated; in a build
/// without CUDA none does.
void check_gpu_devices(Offload mode, const std::vector<int>& devices) {
  const std::string what = std::string("mode ") + to_string(mode) + ": ";
  std::string reason;
  const int count = gpu::device_count(&reason);
  if (!gpu::built_with_cuda()) throw Error(what + reason + "; only mode cpu is available");
  try {
    check_devices_exist(devices, count, reason);
  } catch (const Error& e) {
    throw Error(what + e.what());
  }
  for (std::size_t i = 0; i < devices.size(); ++i)
    if (std::find(devices.begin(), devices.begin() + i, devices[i]) == devices.begin() + i &&
        !gpu::usable_device(devices[i], &reason))
      throw Error(what + reason);
}

}  // namespace

std::unique_ptr<Offloader> make_offloader(Offload mode, const OffloadSetup& setup) {
  if (!uses_gpu(mode)) return std::make_unique<CpuOffloader>(setup);
  check_gpu_devices(mode, device_list(setup.options));
  return make_gpu_offloader(mode, setup);
}

#if !MJPEG_WITH_CUDA
// A build without CUDA has no stream buffer; check_gpu_devices has refused every GPU mode.
std::unique_ptr<Offloader> make_gpu_offloader(Offload mode, const OffloadSetup&) {
  throw Error(std::string("mode ") + to_string(mode) + ": " + kBuiltWithoutCuda +
              "; only mode cpu is available");
}
#endif

}  // namespace mjpeg::pipeline
