// NVDEC in a build without it (no CUDA, or no nv-codec-headers when it was configured): the
// entry points of nvdec.hpp, saying why.
#include "mjpeg/error.hpp"
#include "nvdec.hpp"

namespace mjpeg::gpu {
namespace {
#if MJPEG_NVDEC_NO_CUDA
constexpr const char* kWhy = kBuiltWithoutCuda;
#else
constexpr const char* kWhy = "this mjpeg was built without NVDEC (no nv-codec-headers)";
#endif
}  // namespace

std::string nvdec_problem(const NvdecVideo&, int) { return kWhy; }

struct NvdecDecoder::Impl {};

NvdecDecoder::NvdecDecoder(const NvdecVideo&, int, int, std::int64_t, NextPacket) {
  throw Error(std::string("NVDEC: ") + kWhy);
}
NvdecDecoder::~NvdecDecoder() = default;
// Never reached: no decoder is ever constructed.
bool NvdecDecoder::next_frame(std::int64_t&, const std::function<StreamHandle(const std::uint8_t*)>&) {
  return false;
}
bool NvdecDecoder::next_frame_host(std::uint8_t*, std::int64_t&) { return false; }
int NvdecDecoder::decoders() const { return 0; }
std::size_t NvdecDecoder::frame_bytes() const { return 0; }
NvdecActivity NvdecDecoder::activity() const { return {}; }

}  // namespace mjpeg::gpu
