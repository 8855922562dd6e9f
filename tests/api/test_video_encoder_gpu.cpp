// The public video API in the GPU modes (label gpu): the cpu-mode bodies of api_test_util.hpp
// for sok, sok-pinned and aok. Without a usable device they skip, or fail when
// MJPEG_REQUIRE_GPU=1 (the convention of tests/pipeline/test_pipeline_gpu.cpp).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <tuple>

#include "api_test_util.hpp"
#include "common/gpu_guard.hpp"
#include "gpu_transform.hpp"

#include <cuda_runtime_api.h>

namespace mjpeg::apitest {
namespace {

const Offload kModes[] = {Offload::sok, Offload::sok_pinned, Offload::aok};

std::string mode_name(Offload m) {
  std::string s = to_string(m);
  for (char& c : s) c = c == '-' ? '_' : c;
  return s;
}

class GpuPush : public ::testing::TestWithParam<std::tuple<Offload, ApiCase>> {};
TEST_P(GpuPush, ByteIdenticalToEncodeJpegInOrder) {
  MJPEG_NEED_GPU();
  check_push(std::get<1>(GetParam()), std::get<0>(GetParam()));
}
TEST_P(GpuPush, PullByteIdentical) {
  MJPEG_NEED_GPU();
  check_pull(std::get<1>(GetParam()), std::get<0>(GetParam()), true);
}
INSTANTIATE_TEST_SUITE_P(Cases, GpuPush,
                         ::testing::Combine(::testing::ValuesIn(kModes),
                                            ::testing::ValuesIn(api_cases())),
                         [](const auto& info) {
                           return mode_name(std::get<0>(info.param)) + "_" +
                                  name_of(std::get<1>(info.param));
                         });

/// Creating an encoder for `o` (which lists device 1023) throws an Error naming it.
void expect_device_1023_refused(const VideoOptions& o) {
  try {
    VideoEncoder enc(o);
    FAIL() << "device 1023 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs CUDA device 1023"), std::string::npos) << e.what();
  }
}

// VideoOptions::cpu_start with a GPU: a stream read at 2 ms a frame (0.8 s) outlasts the GPU's
// start, so the CPU encodes the first frames and aok the rest, uploaded: the same bytes.
TEST(GpuCpuStart, TheGpuTakesOverFromTheCpuWithTheSameBytes) {
  MJPEG_NEED_GPU();
  const Stats st = check_cpu_start(400, 2);
  EXPECT_EQ(st.offload, Offload::aok);
  EXPECT_TRUE(st.gpu_problem.empty()) << st.gpu_problem;
  EXPECT_GT(st.cpu_start_frames, 0);
  EXPECT_LT(st.cpu_start_frames, 400);
  EXPECT_GT(st.gpu_ready_s, 0);
  EXPECT_GE(st.handover_s, st.gpu_ready_s);
  EXPECT_EQ(st.upload_bytes, static_cast<std::uint64_t>(400 - st.cpu_start_frames) * 64 * 48 * 3);
  std::printf("cpu start: %lld frames on the CPU, GPU ready at %.3f s, took over at %.3f s\n",
              static_cast<long long>(st.cpu_start_frames), st.gpu_ready_s, st.handover_s);
}

class GpuOrder : public ::testing::TestWithParam<Offload> {};
TEST_P(GpuOrder, SinkGetsFramesInOrderUnderManyThreads) {
  MJPEG_NEED_GPU();
  check_sink_order(GetParam(), 1, 1, 1, 9);
  check_sink_order(GetParam(), 3, 6, 4, 60);
  check_sink_order(GetParam(), 2, 8, 16, 80);
}
TEST_P(GpuOrder, DefaultCountsWork) {
  MJPEG_NEED_GPU();
  VideoOptions o;
  o.width = 1280;
  o.height = 720;
  o.format = FrameFormat::yuv420p;
  o.offload = GetParam();
  const auto frames = make_frames(o, 10);
  Stats st;
  expect_same(reference(frames, o.jpeg), push_all(o, frames, 0, &st));
  expect_work_done_by(o.offload, st, o, 10);
}
TEST_P(GpuOrder, MissingDeviceIsAClearError) {
  MJPEG_NEED_GPU();
  VideoOptions o;
  o.width = 16;
  o.height = 16;
  o.offload = GetParam();
  o.device = 1023;
  expect_device_1023_refused(o);
}
// Several stream buffers through the library's option: two on device 0 (the machine may have
// one GPU) write the bytes of one and of encode_jpeg, push and pull; a listed device that is
// not there is named.
TEST_P(GpuOrder, SeveralStreamBuffersWriteTheSameBytes) {
  MJPEG_NEED_GPU();
  VideoOptions o;
  o.width = 352;
  o.height = 200;
  o.offload = GetParam();
  o.devices = {0, 0};
  o.slots = 3;
  const auto frames = make_frames(o, 24);
  const auto expected = reference(frames, o.jpeg);
  Stats st;
  expect_same(expected, push_all(o, frames, 0, &st));
  expect_work_done_by(o.offload, st, o, 24, 2);
  o.format = FrameFormat::yuv420p;
  const auto planar = make_frames(o, 24);
  expect_same(reference(planar, o.jpeg), push_all(o, planar, 0, &st));
  expect_work_done_by(o.offload, st, o, 24, 2);
  VectorSource source(planar, true);
  MemorySink sink;
  within(120, [&] { st = encode_all(o, source, sink); });
  EXPECT_TRUE(sink.in_order());
  expect_same(reference(planar, o.jpeg), sink.frames);
  expect_work_done_by(o.offload, st, o, 24, 2);
  o.devices = {0, 1023};
  expect_device_1023_refused(o);
}
INSTANTIATE_TEST_SUITE_P(Modes, GpuOrder, ::testing::ValuesIn(kModes),
                         [](const auto& info) { return mode_name(info.param); });

// VideoOptions::profile in the GPU modes: the GPU's own times, each buffer's share, a timeline
// with GPU tracks; and the bytes stay encode_jpeg's.
TEST_P(GpuOrder, ProfileHasGpuTimesBuffersAndTimeline) {
  MJPEG_NEED_GPU();
  VideoOptions o;
  o.width = 640;
  o.height = 360;
  o.offload = GetParam();
  o.devices = {0, 0};
  const auto frames = make_frames(o, 24);
  Profile profile;
  o.profile = &profile;
  VectorSource source(frames, true);
  MemorySink sink;
  Stats st;
  within(120, [&] { st = encode_all(o, source, sink); });
  expect_same(reference(frames, o.jpeg), sink.frames);
  expect_work_done_by(o.offload, st, o, 24, 2);
  expect_profile_of(o.offload, profile, 24, 24);
  EXPECT_TRUE(profile.gpu_timed);
  EXPECT_GT(profile.upload_gpu_s, 0.0);
  EXPECT_GT(profile.kernel_gpu_s, 0.0);
  EXPECT_GT(profile.download_gpu_s, 0.0);
  EXPECT_GT(profile.gpu_union_s, 0.0);
  EXPECT_EQ(profile.gpu_output, "tokens");
  EXPECT_EQ(profile.token_frames, 24);
  ASSERT_EQ(profile.buffers.size(), 2u);
  EXPECT_EQ(profile.buffers[0].frames + profile.buffers[1].frames, 24);
  bool gpu_track = false;
  for (const TimelineTrack& t : profile.tracks) gpu_track = gpu_track || t.gpu;
  EXPECT_TRUE(gpu_track);
  int kernels = 0;
  for (const TimelineSpan& s : profile.spans) kernels += s.kind == "kernel";
  EXPECT_EQ(kernels, 24);
  EXPECT_FALSE(profile.bound_by.empty());
}

// Frames in memory, page-locked, uploaded from where they lie: encode_jpeg's bytes.
TEST_P(GpuOrder, PinnedMemorySourceWritesTheSameBytes) {
  MJPEG_NEED_GPU();
  for (const FrameFormat f : {FrameFormat::rgb24, FrameFormat::yuv420p}) {
    VideoOptions o;
    o.width = 320;
    o.height = 184;
    o.format = f;
    o.offload = GetParam();
    const auto frames = make_frames(o, 20);
    std::vector<const std::uint8_t*> data;
    for (const TestFrame& t : frames) data.push_back(t.bytes.data());
    MemorySource source(data, o);
    source.pin();
    EXPECT_TRUE(source.pinned());
    MemorySink sink;
    Stats st;
    within(120, [&] { st = encode_all(o, source, sink); });
    EXPECT_TRUE(sink.in_order());
    expect_same(reference(frames, o.jpeg), sink.frames);
    expect_work_done_by(o.offload, st, o, 20);
  }
}

// Every kernel variant, stage count and GPU output of VideoOptions::gpu writes encode_jpeg's
// bytes, baseline and progressive; the stage breakdown and the buffers' frames are reported.
TEST_P(GpuOrder, EveryKernelAndOutputWritesTheSameBytes) {
  MJPEG_NEED_GPU();
  VideoOptions o;
  o.width = 200;
  o.height = 120;
  o.format = FrameFormat::yuv420p;
  o.offload = GetParam();
  o.slots = 3;
  o.devices = {0, 0};
  for (const bool progressive : {false, true}) {
    o.jpeg.progressive = progressive;
    const auto frames = make_frames(o, 9);
    const auto expected = reference(frames, o.jpeg);
    for (KernelVariant k : {KernelVariant::direct, KernelVariant::pipeline,
                            KernelVariant::partitioned, KernelVariant::primitives})
      for (int stages : {1, 4})
        for (GpuOutput out : {GpuOutput::automatic, GpuOutput::tokens, GpuOutput::coefficients}) {
          o.gpu = GpuTuning{k, stages, out};
          SCOPED_TRACE(std::string(to_string(k)) + " stages " + std::to_string(stages) + " " +
                       to_string(out) + (progressive ? " progressive" : ""));
          VectorSource source(frames, true);
          MemorySink sink;
          Stats st;
          within(120, [&] { st = encode_all(o, source, sink); });
          expect_same(expected, sink.frames);
          expect_work_done_by(o.offload, st, o, 9, 2);
          EXPECT_FALSE(st.bound_by.empty());
        }
  }
}

// Frames in device memory (VideoOptions::device_frames): planar and NV12, at a pitch wider than
// a row and an odd size, in every GPU mode, give encode_jpeg's bytes of the same planes; and the
// caller's stream may overwrite the buffer right after encode() returns (the encoder's copy is
// ordered before it), which each frame here does, with 0xAB.
class GpuDeviceFrames : public ::testing::TestWithParam<std::tuple<Offload, bool>> {};
TEST_P(GpuDeviceFrames, ByteIdenticalAndBufferReusableOnTheStream) {
  MJPEG_NEED_GPU();
  const Offload mode = std::get<0>(GetParam());
  const bool nv12 = std::get<1>(GetParam());
  VideoOptions o;
  o.width = 97;
  o.height = 61;
  o.format = FrameFormat::yuv420p;
  o.offload = mode;
  o.device_frames = true;
  o.slots = 3;
  const int n = 12;
  const auto frames = make_frames(o, n);
  const auto expected = reference(frames, o.jpeg);
  const int cw = (o.width + 1) / 2, ch = (o.height + 1) / 2;
  const std::size_t pitch = 256;  // wider than any row here
  void* mem = nullptr;
  ASSERT_EQ(cudaMalloc(&mem, pitch * (o.height + 2 * ch)), cudaSuccess);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  auto* y = static_cast<std::uint8_t*>(mem);
  std::uint8_t* c1 = y + pitch * o.height;
  std::uint8_t* c2 = c1 + pitch * ch;
  std::vector<std::vector<std::uint8_t>> got;
  {
    VideoEncoder enc(o);
    for (const TestFrame& f : frames) {
      const std::uint8_t* cb = f.bytes.data() + std::size_t(o.width) * o.height;
      const std::uint8_t* cr = cb + std::size_t(cw) * ch;
      ASSERT_EQ(cudaMemcpy2DAsync(y, pitch, f.bytes.data(), o.width, o.width, o.height,
                                  cudaMemcpyHostToDevice, stream),
                cudaSuccess);
      DeviceFrame d;
      d.width = o.width;
      d.height = o.height;
      d.stream = stream;
      d.plane[0] = y;
      d.pitch[0] = pitch;
      if (nv12) {
        std::vector<std::uint8_t> uv(std::size_t(2) * cw * ch);
        for (int i = 0; i < cw * ch; ++i) {
          uv[2 * std::size_t(i)] = cb[i];
          uv[2 * std::size_t(i) + 1] = cr[i];
        }
        ASSERT_EQ(cudaMemcpy2D(c1, pitch, uv.data(), 2 * cw, 2 * cw, ch, cudaMemcpyHostToDevice),
                  cudaSuccess);
        d.layout = DeviceFrame::Layout::nv12;
        d.plane[1] = c1;
        d.pitch[1] = pitch;
      } else {
        ASSERT_EQ(cudaMemcpy2D(c1, pitch, cb, cw, cw, ch, cudaMemcpyHostToDevice), cudaSuccess);
        ASSERT_EQ(cudaMemcpy2D(c2, pitch, cr, cw, cw, ch, cudaMemcpyHostToDevice), cudaSuccess);
        d.plane[1] = c1;
        d.plane[2] = c2;
        d.pitch[1] = d.pitch[2] = pitch;
      }
      for (JpegFrame& j : enc.encode(d)) got.push_back(std::move(j.bytes));
      // Rewritten on the frame's stream at once: the copy was ordered before this.
      ASSERT_EQ(cudaMemsetAsync(mem, 0xAB, pitch * (o.height + 2 * ch), stream), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);  // the host copies above reuse mem
    }
    for (JpegFrame& j : enc.finish()) got.push_back(std::move(j.bytes));
    // aok reads the frames where they lie; sok reads them to the host and uploads them.
    const std::uint64_t uploaded = enc.stats().upload_bytes;
    if (mode == Offload::aok)
      EXPECT_EQ(uploaded, 0u) << "device frames counted as uploaded";
    else
      EXPECT_EQ(uploaded, static_cast<std::uint64_t>(n) * frame_bytes(o));
  }
  cudaStreamDestroy(stream);
  cudaFree(mem);
  expect_same(expected, got);
}
INSTANTIATE_TEST_SUITE_P(Modes, GpuDeviceFrames,
                         ::testing::Combine(::testing::ValuesIn(kModes), ::testing::Bool()),
                         [](const auto& info) {
                           return mode_name(std::get<0>(info.param)) +
                                  (std::get<1>(info.param) ? "_nv12" : "_planar");
                         });

TEST(GpuDeviceFramesRefused, WrongFramesAreUsageErrors) {
  MJPEG_NEED_GPU();
  VideoOptions o;
  o.width = 64;
  o.height = 48;
  o.format = FrameFormat::yuv420p;
  o.offload = Offload::aok;
  DeviceFrame d;
  d.width = 64;
  d.height = 48;
  static std::uint8_t dummy[64];
  d.plane[0] = d.plane[1] = d.plane[2] = dummy;
  d.pitch[0] = 64;
  d.pitch[1] = d.pitch[2] = 32;
  {
    VideoEncoder host_frames(o);  // made without device_frames
    EXPECT_THROW(host_frames.encode(d), UsageError);
  }
  o.device_frames = true;
  VideoEncoder enc(o);
  DeviceFrame small = d;
  small.width = 32;
  EXPECT_THROW(enc.encode(small), UsageError);
  DeviceFrame narrow = d;
  narrow.pitch[1] = 31;
  EXPECT_THROW(enc.encode(narrow), UsageError);
  o.format = FrameFormat::rgb24;
  EXPECT_THROW(VideoEncoder{o}, UsageError);
}

}  // namespace
}  // namespace mjpeg::apitest
