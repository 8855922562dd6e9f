// GPU-mode tests of the streaming pipeline (label gpu): the CPU-mode bodies for sok (pageable
// and pinned) and aok. Without a usable device they skip, or fail when MJPEG_REQUIRE_GPU=1.
#include <gtest/gtest.h>

#include <sstream>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <tuple>
#include <cstring>
#include <string>

#include "common/gpu_guard.hpp"
#include "common/scoped_env.hpp"
#include "gpu_faults.hpp"
#include "device_info.hpp"
#include "gpu_transform.hpp"
#include "pipeline_test_util.hpp"
#include "pipeline/stream_buffer.hpp"

namespace mjpeg::pipetest {
namespace {

// The trellis search's kernel fills a tenth of a GPU: aok issues six frames' kernels side by
// side under it; the default rounding keeps one kernel stream, and sok has one stream anyway.
TEST(KernelStreams, TheTrellisSearchRunsSixFramesSideBySideInAok) {
  if (std::getenv("MJPEG_KERNEL_STREAMS") != nullptr) GTEST_SKIP() << "MJPEG_KERNEL_STREAMS set";
  EXPECT_EQ(pipeline::kernel_streams_for(Offload::aok, Rdo::trellis), 6);
  EXPECT_EQ(pipeline::kernel_streams_for(Offload::aok, Rdo::off), 1);
  EXPECT_EQ(pipeline::kernel_streams_for(Offload::aok, Rdo::deadzone), 1);
  EXPECT_EQ(pipeline::kernel_streams_for(Offload::sok, Rdo::trellis), 1);
  EXPECT_EQ(pipeline::kernel_streams_for(Offload::sok_pinned, Rdo::trellis), 1);
}

// MJPEG_KERNEL_STREAMS: a count from 1 to kMaxKernelStreams, or unset; the rest is an error
// that names the range (not a count read as far as it goes, as atoi would).
TEST(KernelStreams, TheEnvironmentsCountIsOneToTheMostOrAnError) {
  EXPECT_EQ(pipeline::parse_kernel_streams(nullptr), 0);
  EXPECT_EQ(pipeline::parse_kernel_streams(""), 0);
  EXPECT_EQ(pipeline::parse_kernel_streams("1"), 1);
  EXPECT_EQ(pipeline::parse_kernel_streams("6"), 6);
  EXPECT_EQ(pipeline::parse_kernel_streams(std::to_string(pipeline::kMaxKernelStreams).c_str()),
            pipeline::kMaxKernelStreams);
  for (const char* bad : {"0", "9", "-1", "3x", " 2", "abc", "99999999999999999999"}) {
    SCOPED_TRACE(bad);
    try {
      (void)pipeline::parse_kernel_streams(bad);
      ADD_FAILURE() << "accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("is not a count from 1 to 8"), std::string::npos)
          << e.what();
    }
  }
}

struct GpuMode {
  Offload mode;
  GpuOutput output = GpuOutput::tokens;
};
std::string name_of_mode(const GpuMode& m) {
  std::string name = to_string(m.mode);  // "sok-pinned": "sok_pinned" (a test name)
  std::replace(name.begin(), name.end(), '-', '_');
  return name + (m.output == GpuOutput::coefficients ? "_coeffs" : "");
}
const GpuMode kModes[] = {{Offload::sok}, {Offload::sok_pinned}, {Offload::aok}};
// The stream tests also run with the coefficients coming back (the plain output).
const GpuMode kStreamModes[] = {{Offload::sok},
                                {Offload::sok_pinned},
                                {Offload::aok},
                                {Offload::sok_pinned, GpuOutput::coefficients},
                                {Offload::aok, GpuOutput::coefficients}};

class GpuStream : public ::testing::TestWithParam<std::tuple<GpuMode, StreamCase>> {};

TEST_P(GpuStream, ByteIdenticalToEncodeJpegInOrder) {
  MJPEG_NEED_GPU();
  const auto& [m, c] = GetParam();
  check_stream(c, m.mode, m.output);
}

std::string name_of_param(const ::testing::TestParamInfo<std::tuple<GpuMode, StreamCase>>& info) {
  return name_of_mode(std::get<0>(info.param)) + "_" + name_of(std::get<1>(info.param));
}

TEST(GpuPipeline, SokTraceHasGpuSpansFromEvents) {
  MJPEG_NEED_GPU();
  check_trace(Offload::sok);
}

TEST(GpuPipeline, SokPinnedTraceHasGpuSpansFromEvents) {
  MJPEG_NEED_GPU();
  check_trace(Offload::sok_pinned);
}

TEST(GpuPipeline, AokTraceHasGpuSpansFromEvents) {
  MJPEG_NEED_GPU();
  check_trace(Offload::aok);
}

TEST(GpuPipeline, CoefficientOutputTracesHaveOneDownloadSpan) {
  MJPEG_NEED_GPU();
  check_trace(Offload::sok_pinned, GpuOutput::coefficients);
  check_trace(Offload::aok, GpuOutput::coefficients);
}

// --progressive without an explicit output: the coefficients come back (no token frame), the
// bytes are the cpu mode's; with tokens asked for, every frame is coded from tokens, the same
// bytes.
TEST(GpuPipeline, ProgressiveTakesCoefficientsUnlessTokensAreAsked) {
  MJPEG_NEED_GPU();
  const auto frames = make_frames(12, 200, 120, PixelFormat::rgb24);
  EncodeOptions o;
  o.progressive = true;
  auto encode = [&](Offload mode, GpuOutput output, pipeline::Stats& st) {
    pipeline::PipelineOptions p;
    p.mode = mode;
    p.gpu_output = output;
    p.producers = 2;
    p.entropy_threads = 2;
    p.slots = 4;
    pipeline::MemoryFrameSource source(views(frames));
    MemorySink sink;
    within(60, [&] { st = pipeline::encode_stream(source, o, sink, p); });
    if (mode != Offload::cpu)
      expect_gpu_work(st, {}, 12, 200 * 120 * 3, output == GpuOutput::tokens ? 12 : 0);
    return sink.frames;
  };
  pipeline::Stats st;
  const auto cpu = encode(Offload::cpu, GpuOutput::automatic, st);
  expect_frames_equal(reference(frames, o), cpu, 12);
  for (Offload mode : {Offload::sok, Offload::aok}) {
    SCOPED_TRACE(to_string(mode));
    EXPECT_EQ(encode(mode, GpuOutput::automatic, st), cpu);
    EXPECT_EQ(encode(mode, GpuOutput::tokens, st), cpu);
  }
}

// Pure noise at quality 100 4:4:4: the token stream is longer than the coefficients' bytes, so
// every frame overflows and comes back as coefficients: the same bytes, no token frame, and
// the download is the header plus the coefficients. Symbol slots (MJPEG_TOKEN_FORMAT=slots),
// whose overflow this noise is made for; coded blocks' overflow is GpuTokenize's.
/// `count` frames of RGB noise (xorshift from `seed`); with `flat_even`, the even ones flat grey.
std::vector<mjpeg::Image> noise_frames(int count, int width, int height, std::uint32_t seed,
                                       bool flat_even = false) {
  std::vector<mjpeg::Image> frames;
  for (int i = 0; i < count; ++i) {
    mjpeg::Image f(width, height, PixelFormat::rgb24);
    for (auto& b : f.pixels) {
      seed ^= seed << 13;
      seed ^= seed >> 17;
      seed ^= seed << 5;
      b = flat_even && i % 2 == 0 ? std::uint8_t{128} : static_cast<std::uint8_t>(seed);
    }
    frames.push_back(std::move(f));
  }
  return frames;
}

/// Two producers, two entropy threads and `slots` slots in `mode`.
pipeline::PipelineOptions two_by_two(Offload mode, int slots) {
  pipeline::PipelineOptions p;
  p.mode = mode;
  p.producers = 2;
  p.entropy_threads = 2;
  p.slots = slots;
  return p;
}

TEST(GpuPipeline, TokenOverflowFallsBackToCoefficients) {
  MJPEG_NEED_GPU();
  const mjpeg::test::ScopedEnv slots_format("MJPEG_TOKEN_FORMAT", "slots");
  const std::vector<mjpeg::Image> frames = noise_frames(6, 48, 32, 99);
  EncodeOptions o;
  o.quality = 100;
  o.subsampling = Subsampling::s444;
  const auto ref = reference(frames, o);
  for (Offload mode : {Offload::sok, Offload::aok}) {
    pipeline::MemoryFrameSource source(views(frames));
    MemorySink sink;
    pipeline::Stats st;
    within(30, [&] { st = pipeline::encode_stream(source, o, sink, two_by_two(mode, 4)); });
    expect_frames_equal(ref, sink.frames, frames.size());
    SCOPED_TRACE(to_string(mode));
    expect_gpu_work(st, {}, 6, 48 * 32 * 3, 0);
    EXPECT_GT(st.download_bytes, frames.size() * 48u * 32u * 3u * 2u);
  }
}

// Coded blocks (the default token format) come back to host memory a quarter of the
// coefficients' size at first; noise at high qualities makes streams longer than that (and at
// 100, longer than the coefficients: an overflow), so the slots' memory grows mid-stream.
TEST(GpuPipeline, LongTokenStreamsGrowTheSlotsHostMemory) {
  MJPEG_NEED_GPU();
  // Noise in the odd frames, flat grey in the even ones: short and long streams alternate.
  const std::vector<mjpeg::Image> frames = noise_frames(8, 64, 48, 7, true);
  for (int quality : {100, 90, 60}) {
    EncodeOptions o;
    o.quality = quality;
    o.subsampling = Subsampling::s444;
    const auto ref = reference(frames, o);
    for (Offload mode : {Offload::sok, Offload::aok}) {
      SCOPED_TRACE(std::string(to_string(mode)) + " q" + std::to_string(quality));
      pipeline::MemoryFrameSource source(views(frames));
      MemorySink sink;
      within(30, [&] { pipeline::encode_stream(source, o, sink, two_by_two(mode, 3)); });
      expect_frames_equal(ref, sink.frames, frames.size());
    }
  }
}

// With MJPEG_CUDA_GRAPHS=1, aok with token output launches a frame's kernel-stream work as one
// graph captured per slot and kernel stream; unset or 0, call by call (the default).
TEST(CudaGraphs, OnlyAokWithTokensLaunchesGraphsWhenAskedTo) {
  {
    const mjpeg::test::ScopedEnv unset("MJPEG_CUDA_GRAPHS", nullptr);
    EXPECT_FALSE(pipeline::cuda_graphs_for(Offload::aok, GpuOutput::tokens));
  }
  {
    const mjpeg::test::ScopedEnv off("MJPEG_CUDA_GRAPHS", "0");
    EXPECT_FALSE(pipeline::cuda_graphs_for(Offload::aok, GpuOutput::tokens));
  }
  {
    const mjpeg::test::ScopedEnv on("MJPEG_CUDA_GRAPHS", "1");
    EXPECT_TRUE(pipeline::cuda_graphs_for(Offload::aok, GpuOutput::tokens));
    EXPECT_FALSE(pipeline::cuda_graphs_for(Offload::aok, GpuOutput::coefficients));
    EXPECT_FALSE(pipeline::cuda_graphs_for(Offload::sok, GpuOutput::tokens));
    EXPECT_FALSE(pipeline::cuda_graphs_for(Offload::sok_pinned, GpuOutput::tokens));
  }
  const mjpeg::test::ScopedEnv bad("MJPEG_CUDA_GRAPHS", "yes");
  EXPECT_THROW(pipeline::cuda_graphs_for(Offload::aok, GpuOutput::tokens), UsageError);
}

// The same bytes from graphs as from calls: long and short streams alternating (a slot's host
// memory grows mid-run, an overflow at q100), one kernel stream and, under the trellis search,
// six (a graph per slot and stream), more frames than slots.
TEST(CudaGraphs, AGraphLaunchAFrameWritesWhatCallByCallWrites) {
  MJPEG_NEED_GPU();
  const std::vector<mjpeg::Image> frames = noise_frames(14, 64, 48, 11, true);
  for (Rdo rdo : {Rdo::off, Rdo::trellis}) {
    for (int quality : {100, 85}) {
      EncodeOptions o;
      o.quality = quality;
      o.subsampling = Subsampling::s420;
      o.rdo = rdo;
      const auto ref = reference(frames, o);
      for (const char* graphs : {"0", "1"}) {
        SCOPED_TRACE(std::string("graphs ") + graphs + " q" + std::to_string(quality) +
                     (rdo == Rdo::trellis ? " trellis" : ""));
        const mjpeg::test::ScopedEnv env("MJPEG_CUDA_GRAPHS", graphs);
        pipeline::MemoryFrameSource source(views(frames));
        MemorySink sink;
        within(30, [&] { pipeline::encode_stream(source, o, sink, two_by_two(Offload::aok, 4)); });
        expect_frames_equal(ref, sink.frames, frames.size());
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, GpuStream,
                         ::testing::Combine(::testing::ValuesIn(kStreamModes),
                                            ::testing::ValuesIn(stream_cases())),
                         name_of_param);

// Full-HD frames: large enough that a cudaMemcpy from pageable memory returns before its DMA
// has finished, so that a SOK kernel not ordered after the copy (one on a non-blocking stream)
// would read half-uploaded pixels; the small cases above are too small to show it.
INSTANTIATE_TEST_SUITE_P(FullHd, GpuStream,
                         ::testing::Combine(::testing::ValuesIn(kStreamModes),
                                            ::testing::Values(StreamCase{
                                                1920, 1080, Subsampling::s420, PixelFormat::rgb24,
                                                2, 4, 8, 0, false, 24})),
                         name_of_param);

// Planar frames (Y4M, decoded video) from memory, copied into slots or uploaded in place:
// every frame byte-identical to encode_jpeg of its RGB; the planar bytes are what is uploaded.
class GpuPlanar : public ::testing::TestWithParam<std::tuple<GpuMode, PlanarCase>> {};

TEST_P(GpuPlanar, ByteIdenticalToEncodeJpegOfTheRgb) {
  MJPEG_NEED_GPU();
  const auto& [m, c] = GetParam();
  check_planar_stream(c, m.mode);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, GpuPlanar, ::testing::Combine(::testing::ValuesIn(kModes), ::testing::ValuesIn(planar_cases())),
    [](const ::testing::TestParamInfo<std::tuple<GpuMode, PlanarCase>>& info) {
      return name_of_mode(std::get<0>(info.param)) + "_" + name_of(std::get<1>(info.param));
    });

// Full-HD and 4K 4:2:0 planar frames in place (the compare path) and copied.
INSTANTIATE_TEST_SUITE_P(
    Large, GpuPlanar,
    ::testing::Combine(::testing::ValuesIn(kModes),
                       ::testing::Values(PlanarCase{1920, 1080, PlanarChroma::c420, Subsampling::s420,
                                                    false, true, 2, 4, 8, 12},
                                         PlanarCase{3840, 2160, PlanarChroma::c420, Subsampling::s420,
                                                    false, false, 3, 4, 6, 6})),
    [](const ::testing::TestParamInfo<std::tuple<GpuMode, PlanarCase>>& info) {
      return name_of_mode(std::get<0>(info.param)) + "_" + name_of(std::get<1>(info.param));
    });

// The default slot count: aok gets 8 slots more for the frames in its GPU stages where it
// uploads the frames from where they lie (page-locked in memory), no more than the frames; not
// where it copies them into pinned slots, nor in sok, nor where --slots is given.
TEST(GpuPipeline, AokDefaultSlotsCoverTheGpuStagesWhereFramesAreLent) {
  MJPEG_NEED_GPU();
  const int w = 64, h = 48;
  const auto frames = make_planar_frames(40, w, h, PlanarChroma::c420);
  std::vector<const std::uint8_t*> ptrs;
  for (const auto& f : frames) ptrs.push_back(f.data());
  std::vector<gpu::HostPin> pins;
  for (const auto& f : frames) pins.emplace_back(f.data(), f.size());
  PlanarFormat pf;
  pf.chroma = PlanarChroma::c420;
  pf.ycc = math::make_rounded_ycc(0.2126, 0.0722, true);
  const pipeline::SourceFormat format{w, h, PixelFormat::rgb24, pf};
  EncodeOptions o;
  o.subsampling = Subsampling::s420;
  const auto slots_of = [&](Offload mode, bool pinned, std::size_t count, int slots) {
    std::vector<const std::uint8_t*> some(ptrs.begin(), ptrs.begin() + count);
    pipeline::MemoryFrameSource source(some, format, pinned);
    pipeline::PipelineOptions p;
    p.mode = mode;
    pipeline::apply_default_counts(p, 4, 1, 2, slots);  // 1 + 2 threads: 8 slots by default
    MemorySink sink;
    pipeline::Stats st;
    within(60, [&] { st = pipeline::encode_stream(source, o, sink, p); });
    EXPECT_EQ(st.frames, static_cast<std::int64_t>(count));
    return st.slots;
  };
  EXPECT_EQ(slots_of(Offload::aok, true, 40, 0), 16);
  EXPECT_EQ(slots_of(Offload::aok, true, 11, 0), 11);  // no more slots than frames
  EXPECT_EQ(slots_of(Offload::aok, false, 40, 0), 8);  // copied into pinned slots
  EXPECT_EQ(slots_of(Offload::sok_pinned, true, 40, 0), 8);
  EXPECT_EQ(slots_of(Offload::aok, true, 40, 5), 5);  // asked for
}

// Y4M files through sok/aok: the frames read straight into pinned slots (positionally by several
// producers, sequentially after header parameters), converted by the kernels: every frame equal
// to yuv_to_rgb24 + encode_jpeg of the sequential read.
TEST(GpuPipeline, Y4mFilesPlanarThroughTheGpu) {
  MJPEG_NEED_GPU();
  char dir[] = "/tmp/mjpeg_gpu_y4m_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string d = dir;
  int i = 0;
  for (const char* tags : {"C420jpeg", "C422 XCOLORMATRIX=BT709", "C444 XCOLORRANGE=FULL", "Cmono"}) {
    const std::string path = d + "/c" + std::to_string(i++) + ".y4m";
    ASSERT_EQ(write_y4m(path, 131, 67, tags, 9), "");
    for (GpuMode m : kModes)
      for (Subsampling s : {Subsampling::s420, Subsampling::s422, Subsampling::gray})
        check_y4m_stream(path, m.mode, 3, 5, -1, s);
  }
  const std::string params = d + "/params.y4m";
  ASSERT_EQ(write_y4m(params, 8, 4, "Cmono", 12, {5}, 6 + 8 * 4 - 1), "");
  for (GpuMode m : kModes) check_y4m_stream(params, m.mode, 4, 6, -1, Subsampling::s420);
  const std::string hd = d + "/hd.y4m";
  ASSERT_EQ(write_y4m(hd, 1920, 1080, "C420jpeg", 10), "");
  for (GpuMode m : kModes) check_y4m_stream(hd, m.mode, 4, 8, -1, Subsampling::s420);
  std::system(("rm -rf '" + d + "'").c_str());
}

class GpuErrors : public ::testing::TestWithParam<GpuMode> {};

TEST_P(GpuErrors, SourceErrorPropagates) {
  MJPEG_NEED_GPU();
  const Offload m = GetParam().mode;
  check_source_error(m, 1, 1, 1, 0);
  check_source_error(m, 3, 2, 4, 5);
  check_source_error(m, 4, 4, 16, 11);
}

TEST_P(GpuErrors, SinkErrorPropagates) {
  MJPEG_NEED_GPU();
  const Offload m = GetParam().mode;
  check_sink_error(m, 1, 1, 1, 0);
  check_sink_error(m, 3, 2, 4, 7);
}

TEST_P(GpuErrors, StopFlagDrainsInFlightFrames) {
  MJPEG_NEED_GPU();
  const Offload m = GetParam().mode;
  check_stop(m, 1, 1, 1, 1);
  check_stop(m, 2, 3, 4, 6);
  check_stop(m, 4, 2, 8, 10);
}

// A real CUDA error in the middle of a stream (injected through the pipeline's test hooks, gpu_faults.hpp): the
// encode stops within the watchdog's time and throws a CUDA error; what was written is a
// byte-exact prefix of the stream; the device stays usable for the next encode.
TEST_P(GpuErrors, InjectedCudaErrorMidStreamStopsCleanly) {
  MJPEG_NEED_GPU();
  const GpuMode m = GetParam();
  const auto frames = make_frames(24, 64, 48, PixelFormat::rgb24);
  const EncodeOptions o;
  const auto ref = reference(frames, o);
  for (std::int64_t at : {0, 9, 23}) {
    pipeline::PipelineOptions p;
    p.mode = m.mode;
    p.gpu_output = m.output;
    p.producers = 2;
    p.entropy_threads = 3;
    p.slots = 6;
    GpuFaults faults(at);
    p.test_hooks = &faults;
    pipeline::MemoryFrameSource source(views(frames));
    MemorySink sink;
    const std::string message = encode_error(source, o, sink, p);
    EXPECT_NE(message.find("cudaErrorInvalidValue"), std::string::npos) << "at " << at << ": " << message;
    EXPECT_EQ(message.rfind("CUDA device 0: ", 0), 0u) << message;  // the device is named
    ASSERT_LE(sink.frames.size(), static_cast<std::size_t>(at));
    expect_frames_equal(ref, sink.frames, sink.frames.size());
  }
  check_stream(StreamCase{64, 48, Subsampling::s420, PixelFormat::rgb24, 2, 2, 4}, m.mode,
               m.output);  // the device still works
}

// More slots than device memory holds: a clear error from the allocation, nothing written.
TEST(GpuPipeline, DeviceOutOfMemoryIsAClearError) {
  MJPEG_NEED_GPU();
  mjpeg::Image big(16384, 16384, PixelFormat::gray8);  // 268 MB of pixels, 537 MB of coefficients
  const ImageView view = big.view();
  pipeline::MemoryFrameSource source({view});
  MemorySink sink;
  pipeline::PipelineOptions p;
  p.mode = Offload::sok;  // pageable host slots: only the device allocations are real
  p.slots = 1000;      // ~800 GB of device memory
  const std::string message = encode_error(source, EncodeOptions{}, sink, p, 120);
  EXPECT_NE(message.find("cudaErrorMemoryAllocation"), std::string::npos) << message;
  EXPECT_TRUE(sink.frames.empty());
}

INSTANTIATE_TEST_SUITE_P(Modes, GpuErrors, ::testing::ValuesIn(kModes),
                         [](const auto& info) { return name_of_mode(info.param); });

// Not a test: end-to-end frames/s of each mode on 1920x1080 4:2:0 q90 synthetic frames
// (16 distinct frames cycled; read_into copies each from host memory, as a decoder would write
// it). Run with --gtest_also_run_disabled_tests --gtest_filter='*Throughput*'.
// Env: MJPEG_PIPE_BENCH_FRAMES (default 300), _PRODUCERS (4), _WORKERS (12), _SLOTS (24).
class CyclingSource final : public pipeline::FrameSource {
 public:
  CyclingSource(const std::vector<mjpeg::Image>& frames, std::int64_t count)
      : frames_(frames), count_(count) {}
  pipeline::SourceFormat format() const override {
    return {frames_[0].width, frames_[0].height, frames_[0].format};
  }
  bool read_into(int, std::uint8_t* dst, std::size_t stride, std::int64_t& index) override {
    index = next_.fetch_add(1);
    if (index >= count_) return false;
    const mjpeg::Image& f = frames_[static_cast<std::size_t>(index) % frames_.size()];
    for (int y = 0; y < f.height; ++y)
      std::memcpy(dst + y * stride, f.pixels.data() + y * f.stride(), f.stride());
    return true;
  }

 private:
  const std::vector<mjpeg::Image>& frames_;
  std::int64_t count_;
  std::atomic<std::int64_t> next_{0};
};

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

TEST(GpuPipeline, DISABLED_Throughput) {
  MJPEG_NEED_GPU();
  const auto frames = make_frames(16, 1920, 1080, PixelFormat::rgb24);
  const int count = env_int("MJPEG_PIPE_BENCH_FRAMES", 300);
  EncodeOptions o;  // q90 4:2:0
  for (GpuMode m : {GpuMode{Offload::sok}, GpuMode{Offload::sok_pinned}, GpuMode{Offload::aok},
                    GpuMode{Offload::aok, GpuOutput::coefficients}, GpuMode{Offload::cpu}}) {
    pipeline::PipelineOptions p;
    p.mode = m.mode;
    p.gpu_output = m.output;
    p.producers = env_int("MJPEG_PIPE_BENCH_PRODUCERS", 4);
    p.entropy_threads = env_int("MJPEG_PIPE_BENCH_WORKERS", 12);
    p.slots = env_int("MJPEG_PIPE_BENCH_SLOTS", 24);
    CyclingSource source(frames, m.mode == Offload::cpu ? count / 3 : count);
    MemorySink sink;
    const pipeline::Stats st = pipeline::encode_stream(source, o, sink, p);
    const double run_s = st.wall_s - st.setup_s;
    std::printf("%-10s N=%d M=%d K=%d frames=%lld  %.1f fps (wall %.3f s, setup %.3f s)  busy s: "
                "read %.3f upload %.3f gpu %.3f cpu-transform %.3f coeff-wait %.3f entropy %.3f "
                "write %.3f\n",
                name_of_mode(m).c_str(), p.producers, p.entropy_threads, p.slots,
                static_cast<long long>(st.frames), st.frames / run_s, st.wall_s, st.setup_s,
                st.read_s, st.upload_issue_s, st.gpu_s, st.transform_cpu_s, st.coeff_wait_s,
                st.entropy_s, st.write_s);
    // Spot check: first frame identical to the CPU encoder.
    ASSERT_FALSE(sink.frames.empty());
    const auto ref0 = encode_jpeg(frames[0].view(), o);
    EXPECT_EQ(sink.frames[0], ref0);
  }
}

// ---------------------------------------------------------------------------------------------
// Several stream buffers (PipelineOptions::devices). With one GPU the buffers share device 0
// ({0, 0}: the multi-device paths, each buffer with its own streams, events, slots, dispatcher
// and downloader); on a machine with two GPUs, set MJPEG_TEST_DEVICES=0,1 to run the same
// tests on two devices (default 0,0).
// ---------------------------------------------------------------------------------------------

/// MJPEG_TEST_DEVICES: decimal device indices separated by commas (default 0,0).
std::vector<int> test_devices() {
  const char* v = std::getenv("MJPEG_TEST_DEVICES");
  std::vector<int> list;
  std::stringstream items(v && *v ? v : "0,0");
  for (std::string item; std::getline(items, item, ',');) list.push_back(std::stoi(item));
  return list;
}

std::string list_text(const std::vector<int>& devices) {
  std::string s;
  for (int d : devices) s += (s.empty() ? "" : ",") + std::to_string(d);
  return s;
}

class GpuDevices : public ::testing::TestWithParam<std::tuple<GpuMode, StreamCase>> {};

TEST_P(GpuDevices, ByteIdenticalToEncodeJpegInOrder) {
  MJPEG_NEED_GPU();
  const auto& [m, c] = GetParam();
  check_stream(c, m.mode, m.output, test_devices());
  std::vector<int> three = test_devices();
  three.push_back(three[0]);  // three buffers, two of them on one device
  check_stream(c, m.mode, m.output, three);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, GpuDevices,
    ::testing::Combine(
        ::testing::ValuesIn(kStreamModes),
        ::testing::Values(StreamCase{64, 48, Subsampling::s420, PixelFormat::rgb24, 2, 3, 4},
                          StreamCase{37, 29, Subsampling::s422, PixelFormat::rgb24, 3, 5, 2},
                          StreamCase{50, 17, Subsampling::s444, PixelFormat::rgb24, 2, 2, 3, 2},
                          StreamCase{41, 23, Subsampling::gray, PixelFormat::gray8, 3, 3, 5},
                          StreamCase{96, 64, Subsampling::s420, PixelFormat::rgb24, 8, 8, 32, 1, true, 40},
                          StreamCase{17, 9, Subsampling::s420, PixelFormat::rgb24, 5, 1, 1, 0, false, 7},
                          StreamCase{37, 29, Subsampling::s444, PixelFormat::rgb24, 3, 2, 5, 3, true, 9, 1},
                          StreamCase{1920, 1080, Subsampling::s420, PixelFormat::rgb24, 2, 4, 8, 0, false, 24})),
    name_of_param);

// One device, several stream buffers and the cpu mode write the same bytes: sok, sok --pinned
// and aok, token and coefficient output, 1, 2 and 3 buffers, against the cpu mode's output of
// the same pipeline (not only encode_jpeg).
TEST(GpuDevicesSameBytes, EveryDeviceCountEqualsTheCpuMode) {
  MJPEG_NEED_GPU();
  const auto frames = make_frames(30, 320, 184, PixelFormat::rgb24);
  EncodeOptions o;
  o.quality = 80;
  o.restart_interval = 3;
  auto encode = [&](Offload mode, GpuOutput output, std::vector<int> devices) {
    pipeline::PipelineOptions p;
    p.mode = mode;
    p.gpu_output = output;
    p.devices = devices;
    p.producers = 3;
    p.entropy_threads = 3;
    p.slots = 5;
    pipeline::MemoryFrameSource source(views(frames));
    MemorySink sink;
    pipeline::Stats st;
    within(60, [&] { st = pipeline::encode_stream(source, o, sink, p); });
    if (mode != Offload::cpu) expect_buffer_shares(st, devices, 30);
    return sink.frames;
  };
  const auto cpu = encode(Offload::cpu, GpuOutput::tokens, {});
  ASSERT_EQ(cpu.size(), 30u);
  expect_frames_equal(reference(frames, o), cpu, 30);
  std::vector<int> two = test_devices(), three = two;
  three.push_back(two[0]);
  for (GpuMode m : kStreamModes)
    for (const std::vector<int>& d : {std::vector<int>{two[0]}, two, three}) {
      SCOPED_TRACE(name_of_mode(m) + " devices " + list_text(d));
      expect_frames_equal(cpu, encode(m.mode, m.output, d), 30);
    }
}

TEST(GpuDevicesTrace, OneTrackPerStreamOfEveryBuffer) {
  MJPEG_NEED_GPU();
  for (GpuMode m : kStreamModes) {
    SCOPED_TRACE(name_of_mode(m));
    check_trace(m.mode, m.output, test_devices());
  }
  std::vector<int> three = test_devices();
  three.push_back(three[0]);
  check_trace(Offload::aok, GpuOutput::tokens, three);
}

// Planar frames copied or uploaded in place (the pinned frames of compare), and Y4M files,
// through several buffers.
TEST(GpuDevicesPlanar, PlanarFramesAndY4mThroughSeveralBuffers) {
  MJPEG_NEED_GPU();
  for (GpuMode m : kModes)
    for (const PlanarCase& c : planar_cases()) {
      SCOPED_TRACE(name_of_mode(m) + " " + name_of(c));
      check_planar_stream(c, m.mode, test_devices());
    }
  char dir[] = "/tmp/mjpeg_gpu_devices_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/hd.y4m";
  ASSERT_EQ(write_y4m(path, 1920, 1080, "C420jpeg", 10), "");
  for (GpuMode m : kModes)
    check_y4m_stream(path, m.mode, 4, 4, -1, Subsampling::s420, test_devices());
  std::system(("rm -rf '" + std::string(dir) + "'").c_str());
}

// Frames go by availability: a buffer that is four times slower than the other (paced in
// frames, not time: PacedSecondBuffer) gets far fewer frames, and the faster one is never held
// up by it; frames handed out in turn, or slots recycled in the writer's order, would give both
// half (and make the faster buffer wait: the pacing then reports it). Same bytes.
TEST(GpuDevicesBalance, ASlowBufferGetsFewerFrames) {
  MJPEG_NEED_GPU();
  const std::int64_t n = 96;
  const auto frames = make_frames(static_cast<int>(n), 64, 48, PixelFormat::rgb24);
  const auto ref = reference(frames, EncodeOptions{});
  for (GpuMode m : kModes) {
    SCOPED_TRACE(name_of_mode(m));
    pipeline::PipelineOptions p;
    p.mode = m.mode;
    p.devices = test_devices();
    p.producers = 1;  // frames read in order (the pacing's guarantee needs it)
    p.entropy_threads = 2;
    p.slots = 4;
    PacedSecondBuffer slow_second(4, n, p.slots);
    p.test_hooks = &slow_second;
    pipeline::MemoryFrameSource source(views(frames));
    MemorySink sink;
    pipeline::Stats st;
    within(60, [&] { st = pipeline::encode_stream(source, EncodeOptions{}, sink, p); });
    expect_frames_equal(ref, sink.frames, frames.size());
    expect_buffer_shares(st, p.devices, n);
    ASSERT_EQ(st.buffers.size(), 2u);
    // By the pacing, buffer 1 takes on its k-th frame after buffer 0's 4k-th, or after the 12
    // frames behind it that buffer 0 is sure to get: at most its 4 slots' worth per 16 frames.
    EXPECT_GT(st.buffers[0].frames, 2 * st.buffers[1].frames)
        << st.buffers[0].frames << " vs " << st.buffers[1].frames;
  }
}

// A device failing mid-encode (the injected CUDA error on one buffer, the first or the second):
// the encode stops within the watchdog's time with an error naming that device, what was
// written is an exact prefix, and the devices work for the next encode.
TEST(GpuDevicesErrors, AFailingBufferStopsTheEncodeAndIsNamed) {
  MJPEG_NEED_GPU();
  const auto frames = make_frames(24, 64, 48, PixelFormat::rgb24);
  const EncodeOptions o;
  const auto ref = reference(frames, o);
  const std::vector<int> devices = test_devices();
  const bool same = devices[0] == devices[1];
  for (GpuMode m : kStreamModes)
    for (int buffer : {0, 1})
      for (std::int64_t at : {0, 3}) {  // each buffer has >= 4 frames: the first 8 alternate
        SCOPED_TRACE(name_of_mode(m) + " buffer " + std::to_string(buffer) + " at " + std::to_string(at));
        pipeline::PipelineOptions p;
        p.mode = m.mode;
        p.gpu_output = m.output;
        p.devices = devices;
        p.producers = 2;
        p.entropy_threads = 3;
        p.slots = 4;
        GpuFaults faults(at, buffer);
        p.test_hooks = &faults;
        pipeline::MemoryFrameSource source(views(frames));
        MemorySink sink;
        const std::string message = encode_error(source, o, sink, p);
        const std::string name =
            "CUDA device " + std::to_string(devices[buffer]) +
            (same ? " (stream buffer " + std::to_string(buffer + 1) + " of 2)" : "") + ": ";
        EXPECT_EQ(message.rfind(name, 0), 0u) << message;
        EXPECT_NE(message.find("cudaErrorInvalidValue"), std::string::npos) << message;
        ASSERT_LT(sink.frames.size(), frames.size());
        expect_frames_equal(ref, sink.frames, sink.frames.size());
      }
  check_stream(StreamCase{64, 48, Subsampling::s420, PixelFormat::rgb24, 2, 2, 4}, Offload::aok,
               GpuOutput::tokens, devices);  // the devices still work
}

// A listed device that does not exist: one clear error naming it, nothing written.
TEST(GpuDevicesErrors, AMissingDeviceIsNamed) {
  MJPEG_NEED_GPU();
  const int count = gpu::device_count();
  const auto frames = make_frames(3, 16, 16, PixelFormat::rgb24);
  for (Offload mode : {Offload::sok, Offload::aok}) {
    pipeline::PipelineOptions p;
    p.mode = mode;
    p.devices = {0, count};
    pipeline::MemoryFrameSource source(views(frames));
    MemorySink sink;
    try {
      pipeline::encode_stream(source, EncodeOptions{}, sink, p);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), std::string("mode ") + to_string(mode) +
                                           ": CUDA device " + std::to_string(count) +
                                           " does not exist (" + std::to_string(count) + " found)");
    }
    EXPECT_TRUE(sink.frames.empty());
  }
}

TEST(GpuDevicesInfo, EveryDeviceIsCheckedOnItsOwn) {
  MJPEG_NEED_GPU();
  const int count = gpu::device_count();
  std::string reason;
  for (int d = 0; d < count; ++d) {
    const bool usable = gpu::usable_device(d, &reason);
    EXPECT_EQ(usable, reason.empty()) << d << ": " << reason;
    if (!usable) {
      EXPECT_NE(reason.find("CUDA device " + std::to_string(d)), std::string::npos) << reason;
    }
  }
  EXPECT_TRUE(gpu::usable_device(0, &reason)) << reason;
  EXPECT_FALSE(gpu::usable_device(count, &reason));
  EXPECT_EQ(reason, "CUDA device " + std::to_string(count) + " does not exist (" +
                        std::to_string(count) + " found)");
}

// Without a device, an explicit GPU mode is a clear error, not a hang or a crash.
TEST(GpuPipeline, NoDeviceIsAnError) {
  std::string reason;
  if (gpu::usable_device(&reason)) GTEST_SKIP() << "a device is present";
  const auto frames = make_frames(2, 16, 16, PixelFormat::rgb24);
  pipeline::MemoryFrameSource source(views(frames));
  MemorySink sink;
  pipeline::PipelineOptions p;
  p.mode = Offload::aok;
  EXPECT_THROW(pipeline::encode_stream(source, EncodeOptions{}, sink, p), Error);
  p.devices = {0, 0};
  EXPECT_THROW(pipeline::encode_stream(source, EncodeOptions{}, sink, p), Error);
  EXPECT_TRUE(sink.frames.empty());
}

}  // namespace
}  // namespace mjpeg::pipetest
