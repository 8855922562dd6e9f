// libFuzzer target: the Y4M reader (stream header, FRAME headers, planes) and the YCbCr -> RGB
// conversion of every frame it returns. Any input must either read cleanly or throw
// mjpeg::Error (UsageError included); anything else (a crash, a sanitizer report, another
// exception type) is a finding.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "io/y4m.hpp"
#include "mjpeg/error.hpp"

namespace {
// Frames larger than this are not read: the reader would allocate them (up to 16384^2 * 3
// bytes) for every input that declares them, which only slows the fuzzer down.
constexpr std::size_t kMaxFrameBytes = std::size_t(8) << 20;
constexpr int kMaxFrames = 8;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;  // fmemopen rejects an empty buffer
  std::FILE* file = ::fmemopen(const_cast<std::uint8_t*>(data), size, "rb");
  if (file == nullptr) return 0;
  try {
    mjpeg::io::Y4mReader reader(file, "fuzz input");
    const mjpeg::io::Y4mInfo& info = reader.info();
    if (info.frame_bytes() <= kMaxFrameBytes) {
      mjpeg::io::Y4mFrame frame;
      std::vector<std::uint8_t> rgb(info.luma_bytes() * 3);
      for (int i = 0; i < kMaxFrames && reader.read_frame(frame); ++i)
        mjpeg::io::yuv_to_rgb24(frame.planes(info), info, rgb.data(),
                                std::size_t(info.width) * 3);
    }
    (void)info.describe();
  } catch (const mjpeg::Error&) {
    // Invalid input, reported as it should be.
  }
  std::fclose(file);
  return 0;
}
