// What the video API refuses, and how (include/mjpeg/video.hpp): options outside their ranges
// (VideoEncoder and validate() say the same), the names of modes, formats, kernels and outputs,
// wrong frames, --optimize where its counts would overflow; errors of a sink, a source or a stop
// flag during an encode; GPU modes on a machine without a usable GPU, and the public device list
// (mjpeg/devices.hpp) agreeing with what the encoder accepts.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

#include "api_test_util.hpp"
#include "device_info.hpp"
#include "mjpeg/devices.hpp"

namespace mjpeg::apitest {
namespace {

TEST(VideoEncoderErrors, BadOptionsAreUsageErrors) {
  VideoOptions good;
  good.width = 16;
  good.height = 8;
  struct Bad {
    const char* expect;
    void (*edit)(VideoOptions&);
  };
  const Bad cases[] = {
      {"width 0 is outside 1..65500", [](VideoOptions& o) { o.width = 0; }},
      {"height 65501 is outside 1..65500", [](VideoOptions& o) { o.height = 65501; }},
      {"quality 0 is outside 1..100", [](VideoOptions& o) { o.jpeg.quality = 0; }},
      {"restart interval -1", [](VideoOptions& o) { o.jpeg.restart_interval = -1; }},
      {"producers -1 is outside 0..256", [](VideoOptions& o) { o.producers = -1; }},
      {"entropy_threads -2", [](VideoOptions& o) { o.entropy_threads = -2; }},
      {"slots 5000 is outside 0..4096", [](VideoOptions& o) { o.slots = 5000; }},
      {"device -1 is outside 0..1023", [](VideoOptions& o) { o.device = -1; }},
      {"device (in devices) 1024 is outside 0..1023", [](VideoOptions& o) { o.devices = {0, 1024}; }},
      {"17 devices listed, at most 16", [](VideoOptions& o) { o.devices.assign(17, 0); }},
      {"quantization table slot 7", [](VideoOptions& o) { o.jpeg.qslots = {7}; }},
      {"gpu.stages 0 is outside 1..4", [](VideoOptions& o) { o.gpu.stages = 0; }},
      {"gpu.stages 5 is outside 1..4", [](VideoOptions& o) { o.gpu.stages = 5; }},
      {"unknown kernel variant",
       [](VideoOptions& o) { o.gpu.kernel = static_cast<KernelVariant>(9); }},
      {"unknown GPU output", [](VideoOptions& o) { o.gpu.output = static_cast<GpuOutput>(9); }},
  };
  for (const Bad& b : cases) {
    VideoOptions o = good;
    b.edit(o);
    EXPECT_TRUE(contains(message_of<UsageError>([&] { VideoEncoder enc(o); }), b.expect)) << b.expect;
    EXPECT_TRUE(contains(message_of<UsageError>([&] { validate(o); }), b.expect)) << b.expect;
  }
  EXPECT_EQ(message_of<UsageError>([] { parse_offload("gpu"); }),
            "unknown offload mode 'gpu' (expected cpu, sok, sok-pinned or aok)");
  EXPECT_TRUE(contains(message_of<UsageError>([] { parse_frame_format("nv12"); }), "'nv12'"));
  EXPECT_EQ(parse_offload("sok-pinned"), Offload::sok_pinned);
  EXPECT_EQ(parse_frame_format("yuv422p"), FrameFormat::yuv422p);
  EXPECT_STREQ(to_string(Offload::aok), "aok");
  for (KernelVariant v : {KernelVariant::direct, KernelVariant::pipeline,
                          KernelVariant::partitioned, KernelVariant::primitives})
    EXPECT_EQ(parse_kernel_variant(to_string(v)), v);
  for (GpuOutput g : {GpuOutput::automatic, GpuOutput::tokens, GpuOutput::coefficients})
    EXPECT_EQ(parse_gpu_output(to_string(g)), g);
  EXPECT_EQ(message_of<UsageError>([] { parse_kernel_variant("tiled"); }),
            "unknown kernel variant 'tiled' (expected direct, pipeline, partitioned or primitives)");
  EXPECT_EQ(message_of<UsageError>([] { parse_gpu_output("bits"); }),
            "unknown GPU output 'bits' (expected auto, tokens or coefficients)");
}

TEST(VideoEncoderErrors, WrongFramesAreRejectedAndTheEncoderGoesOn) {
  VideoOptions o;
  o.width = 32;
  o.height = 16;
  o.format = FrameFormat::yuv420p;
  const auto frames = make_frames(o, 2);
  within(30, [&] {
    VideoEncoder enc(o);
    const FrameView good = FrameView::contiguous(frames[0].bytes.data(), o);
    FrameView small = good;
    small.width = 31;
    EXPECT_EQ(message_of<UsageError>([&] { enc.encode(small); }),
              "VideoEncoder::encode: frame is 31x16, the encoder was opened for 32x16");
    FrameView no_cr = good;
    no_cr.plane[2] = nullptr;
    EXPECT_EQ(message_of<UsageError>([&] { enc.encode(no_cr); }),
              "VideoEncoder::encode: plane 2 of a yuv420p frame is null");
    FrameView narrow = good;
    narrow.stride[1] = 15;
    EXPECT_EQ(message_of<UsageError>([&] { enc.encode(narrow); }),
              "VideoEncoder::encode: stride 15 of plane 1 is smaller than a row (16 bytes)");
    std::vector<JpegFrame> got = enc.encode(good);
    for (auto& j : enc.encode(FrameView::contiguous(frames[1].bytes.data(), o))) got.push_back(std::move(j));
    for (auto& j : enc.finish()) got.push_back(std::move(j));
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].index, 0);
    EXPECT_EQ(got[1].index, 1);
    EXPECT_EQ(message_of<UsageError>([&] { enc.encode(good); }),
              "VideoEncoder::encode: called after finish()");
  });
}

TEST(VideoEncoderErrors, SinkErrorIsRethrownByALaterCall) {
  VideoOptions o;
  o.width = 32;
  o.height = 16;
  o.entropy_threads = 2;
  o.slots = 3;
  const auto frames = make_frames(o, 20);
  within(30, [&] {
    MemorySink sink(4);
    VideoEncoder enc(o, sink);
    std::string message;
    try {
      for (const auto& f : frames) enc.encode(FrameView::contiguous(f.bytes.data(), o));
      enc.finish();
    } catch (const Error& e) {
      message = e.what();
    }
    EXPECT_EQ(message, "memory sink: disk full at frame 4");
    EXPECT_EQ(sink.frames.size(), 4u);
    // From then on every call throws the same error.
    EXPECT_EQ(message_of<Error>([&] { enc.finish(); }), "memory sink: disk full at frame 4");
    EXPECT_EQ(message_of<Error>([&] { enc.encode(FrameView::contiguous(frames[0].bytes.data(), o)); }),
              "memory sink: disk full at frame 4");
  });
}

TEST(VideoEncoderErrors, SourceErrorIsRethrownByEncodeAll) {
  VideoOptions o;
  o.width = 24;
  o.height = 24;
  const auto frames = make_frames(o, 10);
  for (bool concurrent : {false, true}) {
    VectorSource source(frames, concurrent, 6);
    MemorySink sink;
    o.producers = concurrent ? 3 : 1;
    o.entropy_threads = 2;
    std::string message;
    within(30, [&] { message = message_of<Error>([&] { encode_all(o, source, sink); }); });
    EXPECT_EQ(message, "vector source: read error at frame 6");
    EXPECT_LE(sink.frames.size(), 6u);
    const auto ref = reference(frames, o.jpeg);
    expect_same({ref.begin(), ref.begin() + static_cast<long>(sink.frames.size())}, sink.frames);
  }
}

TEST(VideoEncoderErrors, StopFlagEndsEncodeAllNormally) {
  VideoOptions o;
  o.width = 24;
  o.height = 24;
  o.producers = 1;
  o.entropy_threads = 2;
  const auto frames = make_frames(o, 30);
  std::atomic<bool> stop{false};
  struct StoppingSink final : FrameSink {
    std::atomic<bool>* stop;
    MemorySink inner;
    void write(const EncodedFrame& f) override {
      inner.write(f);
      if (f.index == 3) stop->store(true);
    }
  } sink;
  sink.stop = &stop;
  VectorSource source(frames, false);
  Stats st;
  within(30, [&] { st = encode_all(o, source, sink, &stop); });
  EXPECT_GE(st.frames, 4);
  EXPECT_LT(st.frames, 30);
  const auto ref = reference(frames, o.jpeg);
  expect_same({ref.begin(), ref.begin() + st.frames}, sink.inner.frames);
}

// The public device list (mjpeg/devices.hpp) says what the encoder then does: a device listed
// as usable takes a GPU mode, one listed as unusable (or a machine with none listed) refuses it
// with an Error. Here (no GPU) the list is empty with a reason; on a GPU machine
// (MJPEG_REQUIRE_GPU=1) it must not be.
TEST(GpuDevices, ListAgreesWithWhatTheEncoderAccepts) {
  std::string reason;
  const std::vector<GpuDevice> devices = gpu_devices(&reason);
  VideoOptions o;
  o.width = 16;
  o.height = 16;
  o.offload = Offload::aok;
  if (!built_with_gpu()) {
    EXPECT_TRUE(devices.empty());
    EXPECT_TRUE(contains(reason, "without CUDA")) << reason;
  }
  if (devices.empty()) {
    const char* require = std::getenv("MJPEG_REQUIRE_GPU");
    EXPECT_FALSE(require && std::string(require) == "1") << "no CUDA device listed: " << reason;
    EXPECT_FALSE(reason.empty());
    EXPECT_TRUE(contains(message_of<Error>([&] { VideoEncoder enc(o); }), "needs CUDA device 0"));
    return;
  }
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const GpuDevice& d = devices[i];
    SCOPED_TRACE("device " + std::to_string(i) + ": " + d.name);
    EXPECT_EQ(d.index, static_cast<int>(i));
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.memory_bytes, 0u);
    EXPECT_GT(d.multiprocessors, 0);
    EXPECT_EQ(d.usable, d.problem.empty()) << d.problem;
    o.device = d.index;
    if (d.usable) {
      VideoEncoder enc(o);  // throws (and fails the test) if the device is refused after all
      EXPECT_TRUE(enc.finish().empty());
    } else {
      EXPECT_TRUE(contains(message_of<Error>([&] { VideoEncoder enc(o); }), "needs CUDA device"));
    }
  }
}

// Without a usable GPU a GPU mode is refused when the encoder is created, with a sentence that
// says what to do; with one, test_video_encoder_gpu.cpp covers the modes.
TEST(VideoEncoderErrors, GpuModeWithoutGpuIsAClearError) {
  std::string reason;
  if (gpu::usable_device(&reason)) GTEST_SKIP() << "a usable CUDA device is present";
  VideoOptions o;
  o.width = 16;
  o.height = 16;
  for (Offload m : {Offload::sok, Offload::sok_pinned, Offload::aok}) {
    o.offload = m;
    const std::string msg = message_of<Error>([&] { VideoEncoder enc(o); });
    EXPECT_TRUE(contains(msg, std::string("offload mode '") + to_string(m) + "' needs CUDA device 0"))
        << msg;
    EXPECT_TRUE(contains(msg, "Offload::cpu") || contains(msg, "compute capability")) << msg;
    const std::vector<TestFrame> none;
    VectorSource source(none, false);
    MemorySink sink;
    EXPECT_TRUE(contains(message_of<Error>([&] { encode_all(o, source, sink); }), "needs CUDA device"));
  }
}

// VideoOptions::cpu_start without a usable GPU: no error, the CPU encodes the whole stream and
// the Stats say why (with one, test_video_encoder_gpu.cpp sees the hand-over).
TEST(CpuStart, WithoutAGpuTheCpuEncodesTheWholeStream) {
  std::string reason;
  if (gpu::usable_device(&reason)) GTEST_SKIP() << "a usable CUDA device is present";
  const Stats st = check_cpu_start(40, 0);
  EXPECT_EQ(st.offload, Offload::cpu);
  EXPECT_EQ(st.cpu_start_frames, 40);
  EXPECT_EQ(st.handover_s, 0);
  EXPECT_TRUE(contains(st.gpu_problem, "needs CUDA device 0")) << st.gpu_problem;
  EXPECT_EQ(st.upload_bytes, 0u);
  EXPECT_GT(st.entropy_threads, 0);  // the cpu start's split
}

TEST(VideoEncoderErrors, OptimizeRefusedWhereItsCountsWouldOverflow) {
  EXPECT_TRUE(optimize_fits(1920, 1080, Subsampling::s444));
  EXPECT_TRUE(optimize_fits(65500, 65500, Subsampling::s420));   // 4.23e9 luma symbols at most
  EXPECT_TRUE(optimize_fits(65500, 65500, Subsampling::gray));
  EXPECT_FALSE(optimize_fits(65500, 65500, Subsampling::s444));  // chroma: 8.45e9
  EXPECT_TRUE(optimize_fits(65500, 65500, Subsampling::s422));   // chroma: 4.23e9
  EXPECT_FALSE(optimize_fits(0, 10, Subsampling::s420));
  EXPECT_FALSE(optimize_fits(65501, 8, Subsampling::s420));      // above libjpeg's limit
  VideoOptions o;
  o.width = o.height = 65500;
  o.jpeg.subsampling = Subsampling::s444;
  o.jpeg.optimize = true;
  EXPECT_TRUE(contains(message_of<UsageError>([&] { validate(o); }),
                       "optimize: a 65500x65500 frame at 444 can hold more of one Huffman symbol"));
  o.jpeg.progressive = true;  // progressive files count per scan: not this limit
  EXPECT_NO_THROW(validate(o));
  o.jpeg.progressive = false;
  o.jpeg.subsampling = Subsampling::s420;
  EXPECT_NO_THROW(validate(o));
}

}  // namespace
}  // namespace mjpeg::apitest
