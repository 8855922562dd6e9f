// GPU-mode tests of the streaming pipeline (label gpu): the CPU-mode bodies for sok (pageable
// and pinned) and aok. Without a usable device they skip, or fail when MJPEG_REQUIRE_GPU=1.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "gpu_transform.hpp"
#include "pipeline_test_util.hpp"

namespace mjpeg::pipetest {
namespace {

using pipeline::Mode;

bool require_gpu() {
  const char* v = std::getenv("MJPEG_REQUIRE_GPU");
  return v && std::string(v) == "1";
}

// Skips the test (or fails it under MJPEG_REQUIRE_GPU=1) when no device can run the kernels.
#define MJPEG_NEED_GPU()                                                          \
  do {                                                                            \
    std::string reason_;                                                          \
    if (!gpu::usable_device(&reason_)) {                                          \
      if (require_gpu()) FAIL() << "MJPEG_REQUIRE_GPU=1 but: " << reason_;        \
      GTEST_SKIP() << "no usable CUDA device: " << reason_;                       \
    }                                                                             \
  } while (0)

struct GpuMode {
  Mode mode;
  bool pinned_sok;
};
std::string name_of_mode(const GpuMode& m) {
  return std::string(pipeline::to_string(m.mode)) + (m.pinned_sok ? "_pinned" : "");
}
const GpuMode kModes[] = {{Mode::sok, false}, {Mode::sok, true}, {Mode::aok, false}};

class GpuStream : public ::testing::TestWithParam<std::tuple<GpuMode, StreamCase>> {};

TEST_P(GpuStream, ByteIdenticalToEncodeJpegInOrder) {
  MJPEG_NEED_GPU();
  const auto& [m, c] = GetParam();
  check_stream(c, m.mode, m.pinned_sok);
}

INSTANTIATE_TEST_SUITE_P(Cases, GpuStream,
                         ::testing::Combine(::testing::ValuesIn(kModes),
                                            ::testing::ValuesIn(stream_cases())),
                         [](const auto& info) {
                           return name_of_mode(std::get<0>(info.param)) + "_" +
                                  name_of(std::get<1>(info.param));
                         });

class GpuErrors : public ::testing::TestWithParam<GpuMode> {};

TEST_P(GpuErrors, SourceErrorPropagates) {
  MJPEG_NEED_GPU();
  const Mode m = GetParam().mode;
  check_source_error(m, 1, 1, 1, 0);
  check_source_error(m, 3, 2, 4, 5);
  check_source_error(m, 4, 4, 16, 11);
}

TEST_P(GpuErrors, SinkErrorPropagates) {
  MJPEG_NEED_GPU();
  const Mode m = GetParam().mode;
  check_sink_error(m, 1, 1, 1, 0);
  check_sink_error(m, 3, 2, 4, 7);
}

TEST_P(GpuErrors, StopFlagDrainsInFlightFrames) {
  MJPEG_NEED_GPU();
  const Mode m = GetParam().mode;
  check_stop(m, 1, 1, 1, 1);
  check_stop(m, 2, 3, 4, 6);
  check_stop(m, 4, 2, 8, 10);
}

INSTANTIATE_TEST_SUITE_P(Modes, GpuErrors, ::testing::ValuesIn(kModes),
                         [](const auto& info) { return name_of_mode(info.param); });

// Without a device, an explicit GPU mode is a clear error, not a hang or a crash.
TEST(GpuPipeline, NoDeviceIsAnError) {
  std::string reason;
  if (gpu::usable_device(&reason)) GTEST_SKIP() << "a device is present";
  const auto frames = make_frames(2, 16, 16, PixelFormat::rgb24);
  pipeline::MemoryFrameSource source(views(frames));
  MemorySink sink;
  pipeline::PipelineOptions p;
  p.mode = Mode::aok;
  EXPECT_THROW(pipeline::encode_stream(source, EncodeOptions{}, sink, p), Error);
}

}  // namespace
}  // namespace mjpeg::pipetest
