// The GPU entry points of a build without CUDA (MJPEG_WITH_CUDA=OFF): the same plain C++ API
// as the CUDA build (gpu_transform.hpp, gpu_tokenize.hpp, device_info.hpp),
// with no device behind it. Queries report none and say why (kBuiltWithoutCuda); what would need a
// device throws mjpeg::Error with that sentence. The pipeline, the API and the CLI refuse
// sok/aok before they get here, so only their messages reach the user.
#include <string>
#include <vector>

#include "device_frames.hpp"
#include "device_info.hpp"
#include "gpu_tokenize.hpp"
#include "gpu_transform.hpp"
#include "host_pin.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg::gpu {
namespace {

[[noreturn]] void no_cuda(const char* what) {
  throw Error(std::string(what) + ": " + kBuiltWithoutCuda);
}

void say(std::string* reason) {
  if (reason) *reason = kBuiltWithoutCuda;
}

}  // namespace

bool built_with_cuda() { return false; }

int device_count(std::string* reason) {
  say(reason);
  return 0;
}

bool usable_device(std::string* reason) { return usable_device(0, reason); }

bool usable_device(int, std::string* reason) {
  say(reason);
  return false;
}

std::vector<DeviceInfo> list_devices(std::string* reason) {
  say(reason);
  return {};
}

std::size_t free_device_memory(int) { return 0; }

struct TransformPlan::Impl {};

TransformPlan::TransformPlan(const FrameGeometry&, const QuantTables&, PixelFormat) {
  no_cuda("the GPU transform");
}
TransformPlan::TransformPlan(const FrameGeometry&, const QuantTables&, const PlanarFormat&) {
  no_cuda("the GPU transform");
}
TransformPlan::~TransformPlan() = default;
TransformPlan::TransformPlan(TransformPlan&&) noexcept = default;
TransformPlan& TransformPlan::operator=(TransformPlan&&) noexcept = default;
// Never reached: no TransformPlan is ever constructed.
const FrameGeometry& TransformPlan::geometry() const { no_cuda("TransformPlan"); }
PixelFormat TransformPlan::input_format() const { no_cuda("TransformPlan"); }
bool TransformPlan::planar() const { no_cuda("TransformPlan"); }
KernelInfo TransformPlan::kernel_info(KernelVariant, int) const { no_cuda("TransformPlan"); }

void launch_transform(const TransformPlan&, const std::uint8_t*, std::size_t, std::int16_t*,
                      KernelVariant, int, StreamHandle) {
  no_cuda("launch_transform");
}
void launch_transform_planar(const TransformPlan&, const std::uint8_t* const[3],
                             const std::size_t[3], std::int16_t*, KernelVariant, int, StreamHandle) {
  no_cuda("launch_transform_planar");
}

HostPin::HostPin(const void* data, std::size_t bytes) {
  if (data != nullptr && bytes != 0) no_cuda("page-locking host memory");
}
HostPin::~HostPin() = default;
HostPin::HostPin(HostPin&& other) noexcept : data_(other.data_) { other.data_ = nullptr; }
HostPin& HostPin::operator=(HostPin&& other) noexcept {
  data_ = other.data_;
  other.data_ = nullptr;
  return *this;
}

struct TokenizePlan::Impl {};

TokenizePlan::TokenizePlan(const FrameGeometry&, const tokens::AcCodes&, std::size_t) {
  no_cuda("the GPU tokenizer");
}
TokenizePlan::TokenizePlan(const FrameGeometry&, int, bool, std::size_t) {
  no_cuda("the GPU tokenizer");
}
TokenizePlan::~TokenizePlan() = default;
TokenizePlan::TokenizePlan(TokenizePlan&&) noexcept = default;
TokenizePlan& TokenizePlan::operator=(TokenizePlan&&) noexcept = default;
tokens::Format TokenizePlan::format() const { no_cuda("TokenizePlan"); }
std::size_t TokenizePlan::header_bytes() const { no_cuda("TokenizePlan"); }
std::size_t TokenizePlan::capacity_bytes() const { no_cuda("TokenizePlan"); }
std::size_t TokenizePlan::output_bytes() const { no_cuda("TokenizePlan"); }

void launch_tokenize(const TokenizePlan&, const std::int16_t*, void*, StreamHandle) {
  no_cuda("launch_tokenize");
}

std::shared_ptr<void> try_pin_read_only(const void*, std::size_t) noexcept { return nullptr; }

void write_planar(const DeviceFrameIn&, std::uint8_t*, StreamHandle) { no_cuda("device frames"); }
void write_planar_ordered(const DeviceFrameIn&, std::uint8_t*, StreamHandle, StreamHandle) {
  no_cuda("device frames");
}
void download_planar(const DeviceFrameIn&, std::uint8_t*, StreamHandle) { no_cuda("device frames"); }
void copy_device(void*, const void*, std::size_t, StreamHandle) { no_cuda("device frames"); }

}  // namespace mjpeg::gpu
