// encode_all, the pull API (include/mjpeg/video.hpp), in cpu mode: byte-identical to
// encode_jpeg over the case matrix of api_test_util.hpp from a serial and a concurrent source
// (CpuPull; the GPU modes: test_video_encoder_gpu.cpp), and from MemorySource (frames where
// they lie). Y4mSource: test_y4m_source.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "api_test_util.hpp"
#include "mjpeg/devices.hpp"

namespace mjpeg::apitest {
namespace {

class CpuPull : public ::testing::TestWithParam<ApiCase> {};
TEST_P(CpuPull, SerialSourceByteIdentical) { check_pull(GetParam(), Offload::cpu, false); }
TEST_P(CpuPull, ConcurrentSourceByteIdentical) { check_pull(GetParam(), Offload::cpu, true); }
INSTANTIATE_TEST_SUITE_P(Cases, CpuPull, ::testing::ValuesIn(api_cases()),
                         [](const auto& info) { return name_of(info.param); });

TEST(MemorySource, FramesWhereTheyLieGiveTheBytesOfEncodeJpeg) {
  for (const FrameFormat f : {FrameFormat::rgb24, FrameFormat::bgr24, FrameFormat::gray8,
                              FrameFormat::yuv420p, FrameFormat::yuv400p}) {
    VideoOptions o;
    o.width = 61;
    o.height = 35;
    o.format = f;
    o.jpeg.quality = 88;
    const auto frames = make_frames(o, 7);
    std::vector<const std::uint8_t*> data;
    for (const TestFrame& t : frames) data.push_back(t.bytes.data());
    MemorySource source(data, o);
    EXPECT_EQ(source.frame_count(), 7);
    EXPECT_FALSE(source.pinned());
    for (const int producers : {0, 3}) {  // 0: the default split for frames in memory
      VideoOptions run = o;
      run.producers = producers;
      MemorySink sink;
      Stats st;
      within(60, [&] { st = encode_all(run, source, sink); });
      EXPECT_TRUE(sink.in_order()) << to_string(f);
      expect_same(reference(frames, o.jpeg), sink.frames);
      EXPECT_LE(st.slots, 7);
    }
    std::vector<std::uint8_t> copy(frame_bytes(o));
    ASSERT_TRUE(source.read(6, copy.data()));
    EXPECT_EQ(copy, frames[6].bytes);
    EXPECT_FALSE(source.read(7, copy.data()));
  }
}

TEST(MemorySource, ErrorsAreClear) {
  VideoOptions o;
  o.width = 16;
  o.height = 16;
  const auto frames = make_frames(o, 2);
  EXPECT_TRUE(contains(message_of<UsageError>([&] { MemorySource s({}, o); }), "no frames"));
  EXPECT_TRUE(contains(message_of<UsageError>([&] { MemorySource s({frames[0].bytes.data(), nullptr}, o); }),
                       "frame 1 is null"));
  MemorySource source({frames[0].bytes.data(), frames[1].bytes.data()}, o);
  VideoOptions wrong = o;
  wrong.width = 8;
  MemorySink sink;
  EXPECT_TRUE(contains(message_of<UsageError>([&] { encode_all(wrong, source, sink); }),
                       "do not describe the MemorySource's frames (16x16 rgb24)"));
  if (gpu_devices().empty()) {  // no device to page-lock for
    EXPECT_FALSE(message_of<Error>([&] { source.pin(); }).empty());
    EXPECT_FALSE(source.pinned());
  }
}

}  // namespace
}  // namespace mjpeg::apitest
