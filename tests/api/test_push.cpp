// VideoEncoder, the push API (include/mjpeg/video.hpp), in cpu mode: encode() and finish()
// byte-identical to encode_jpeg over the case matrix of api_test_util.hpp (CpuPush; the GPU
// modes run the same bodies in test_video_encoder_gpu.cpp), into a sink under many threads, with
// the default thread counts, against the pipeline (what the CLI runs) and against libjpeg-turbo
// and cjpeg; an empty stream, an encoder destroyed mid-stream, an encoder moved.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api_test_util.hpp"
#include "common/oracle.hpp"
#include "io/frame_sink.hpp"
#include "io/y4m.hpp"
#include "pipeline/frame_source.hpp"
#include "pipeline/pipeline.hpp"

namespace mjpeg::apitest {
namespace {

class CpuPush : public ::testing::TestWithParam<ApiCase> {};
TEST_P(CpuPush, ByteIdenticalToEncodeJpegInOrder) { check_push(GetParam(), Offload::cpu); }
INSTANTIATE_TEST_SUITE_P(Cases, CpuPush, ::testing::ValuesIn(api_cases()),
                         [](const auto& info) { return name_of(info.param); });

TEST(VideoEncoder, SinkGetsFramesInOrderUnderManyThreads) {
  check_sink_order(Offload::cpu, 1, 1, 1, 9);
  check_sink_order(Offload::cpu, 3, 6, 4, 60);
  check_sink_order(Offload::cpu, 2, 8, 16, 80);
}

TEST(VideoEncoder, DefaultCountsWork) {
  VideoOptions o;
  o.width = 48;
  o.height = 32;
  const auto frames = make_frames(o, 12);
  const auto got = push_all(o, frames);
  expect_same(reference(frames, o.jpeg), got);
}

// The same frames through pipeline::encode_stream (what the CLI runs) give the same bytes.
class VectorIoSink final : public io::FrameSink {
 public:
  void write_frame(const std::uint8_t* j, std::size_t n) override { frames.emplace_back(j, j + n); }
  void close() override {}
  std::int64_t frames_written() const override { return std::int64_t(frames.size()); }
  std::uint64_t bytes_written() const override { return 0; }
  std::vector<std::vector<std::uint8_t>> frames;
};

TEST(VideoEncoder, SameBytesAsThePipeline) {
  for (const FrameFormat f : {FrameFormat::rgb24, FrameFormat::yuv420p, FrameFormat::yuv422p}) {
    VideoOptions o;
    o.width = 70;
    o.height = 38;
    o.format = f;
    o.matrix = YuvMatrix::bt709;
    o.jpeg.quality = 92;
    o.jpeg.subsampling = Subsampling::s422;
    o.jpeg.restart_interval = 2;
    o.entropy_threads = 3;
    const auto frames = make_frames(o, 6);
    std::vector<const std::uint8_t*> data;
    for (const auto& t : frames) data.push_back(t.bytes.data());
    pipeline::SourceFormat sf;
    sf.width = o.width;
    sf.height = o.height;
    if (is_planar(f)) {
      sf.planar = io::planar_format(y4m_info(o));
    }
    pipeline::MemoryFrameSource source(data, sf);
    pipeline::PipelineOptions p;
    p.producers = 2;
    p.entropy_threads = 2;
    p.slots = 5;
    VectorIoSink sink;
    pipeline::encode_stream(source, o.jpeg, sink, p);
    expect_same(sink.frames, push_all(o, frames));
  }
}

// Independent of our own encoder: libjpeg-turbo (in process, and the cjpeg program when it is
// installed) writes the same bytes for the same picture.
TEST(VideoEncoder, FramesEqualLibjpegAndCjpeg) {
  for (const FrameFormat f : {FrameFormat::bgr24, FrameFormat::yuv420p, FrameFormat::gray8}) {
    VideoOptions o;
    o.width = 83;
    o.height = 45;
    o.format = f;
    o.jpeg.quality = 77;
    o.jpeg.optimize = f == FrameFormat::yuv420p;
    const auto frames = make_frames(o, 3);
    const auto got = push_all(o, frames);
    ASSERT_EQ(got.size(), 3u);
    const TestFrame& t = frames[1];
    const auto oracle = test::libjpeg_encode(t.reference(), o.jpeg);
    EXPECT_EQ(test::describe_difference(got[1], oracle), "") << to_string(f);
    if (const std::optional<std::string> cjpeg = test::find_cjpeg()) {
      test::Image img;
      img.width = t.width;
      img.height = t.height;
      img.channels = t.gray ? 1 : 3;
      img.pixels = t.pixels;
      EXPECT_EQ(test::describe_difference(got[1], test::cjpeg_encode(*cjpeg, img, o.jpeg)), "")
          << to_string(f);
    }
  }
}

TEST(VideoEncoder, EmptyStream) {
  VideoOptions o;
  o.width = 16;
  o.height = 16;
  within(30, [&] {
    VideoEncoder enc(o);
    EXPECT_TRUE(enc.finish().empty());
    EXPECT_EQ(enc.stats().frames, 0);
  });
}

TEST(VideoEncoder, DestroyedMidStreamDoesNotHang) {
  VideoOptions o;
  o.width = 32;
  o.height = 16;
  o.entropy_threads = 2;
  o.slots = 2;
  const auto frames = make_frames(o, 10);
  within(30, [&] {
    for (int stop_after : {0, 1, 5, 10}) {
      MemorySink sink;
      {
        VideoEncoder enc(o, sink);
        for (int i = 0; i < stop_after; ++i) enc.encode(FrameView::contiguous(frames[i].bytes.data(), o));
      }  // no finish()
      EXPECT_LE(sink.frames.size(), static_cast<std::size_t>(stop_after));
      EXPECT_TRUE(sink.in_order());
    }
  });
}

TEST(VideoEncoder, MoveKeepsTheStream) {
  VideoOptions o;
  o.width = 24;
  o.height = 24;
  const auto frames = make_frames(o, 4);
  const auto ref = reference(frames, o.jpeg);
  std::vector<std::vector<std::uint8_t>> got;
  within(30, [&] {
    VideoEncoder a(o);
    for (auto& j : a.encode(FrameView::contiguous(frames[0].bytes.data(), o))) got.push_back(j.bytes);
    VideoEncoder b(std::move(a));
    for (int i = 1; i < 4; ++i)
      for (auto& j : b.encode(FrameView::contiguous(frames[i].bytes.data(), o))) got.push_back(j.bytes);
    for (auto& j : b.finish()) got.push_back(j.bytes);
    EXPECT_THROW(a.encode(FrameView::contiguous(frames[0].bytes.data(), o)), UsageError);
  });
  expect_same(ref, got);
}

}  // namespace
}  // namespace mjpeg::apitest
