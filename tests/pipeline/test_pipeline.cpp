// CPU-mode tests of the streaming pipeline (label cpu). The same bodies run for sok/aok in
// test_pipeline_gpu.cpp.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <unistd.h>

#include "io/y4m.hpp"
#include "core/geometry.hpp"
#include "core/quant.hpp"
#include "core/token_format.hpp"
#include "jpeg/transform_cpu.hpp"
#include "pipeline/test_hooks.hpp"
#include "pipeline_test_util.hpp"

namespace mjpeg::pipetest {
namespace {


class CpuStream : public ::testing::TestWithParam<StreamCase> {};

TEST_P(CpuStream, ByteIdenticalToEncodeJpegInOrder) { check_stream(GetParam(), Offload::cpu); }

INSTANTIATE_TEST_SUITE_P(Cases, CpuStream, ::testing::ValuesIn(stream_cases()),
                         [](const auto& info) { return name_of(info.param); });

TEST(CpuPipeline, SourceErrorPropagates) {
  check_source_error(Offload::cpu, 1, 1, 1, 0);
  check_source_error(Offload::cpu, 3, 2, 4, 5);
  check_source_error(Offload::cpu, 4, 4, 16, 11);
  check_source_error(Offload::cpu, 2, 6, 2, 19);
}

TEST(CpuPipeline, SinkErrorPropagates) {
  check_sink_error(Offload::cpu, 1, 1, 1, 0);
  check_sink_error(Offload::cpu, 3, 2, 4, 7);
  check_sink_error(Offload::cpu, 4, 8, 16, 13);
}

TEST(CpuPipeline, StopFlagDrainsInFlightFrames) {
  check_stop(Offload::cpu, 1, 1, 1, 1);
  check_stop(Offload::cpu, 2, 3, 4, 6);
  check_stop(Offload::cpu, 4, 2, 8, 10);
  check_stop(Offload::cpu, 3, 3, 2, 29);
}

TEST(CpuPipeline, StopBeforeStartWritesNothing) {
  const auto frames = make_frames(5, 16, 16, PixelFormat::rgb24);
  pipeline::MemoryFrameSource source(views(frames));
  MemorySink sink;
  std::atomic<bool> stop{true};
  pipeline::PipelineOptions p;
  p.producers = 2;
  p.slots = 1;  // with slots < producers, a stopping producer must hand its slot back
  pipeline::Stats st;
  within(30, [&] { st = pipeline::encode_stream(source, EncodeOptions{}, sink, p, {}, &stop); });
  EXPECT_EQ(st.frames, 0);
  EXPECT_TRUE(sink.frames.empty());
}

// The GPU's output: as asked; unset, tokens, but coefficients for progressive JPEG.
TEST(PipelineOptions, GpuOutputDefaultsToTokensAndToCoefficientsForProgressive) {
  pipeline::PipelineOptions p;
  EncodeOptions sequential, progressive;
  progressive.progressive = true;
  EXPECT_EQ(pipeline::gpu_output_for(p, sequential), GpuOutput::tokens);
  EXPECT_EQ(pipeline::gpu_output_for(p, progressive), GpuOutput::coefficients);
  for (GpuOutput asked : {GpuOutput::tokens, GpuOutput::coefficients}) {
    p.gpu_output = asked;
    EXPECT_EQ(pipeline::gpu_output_for(p, sequential), asked);
    EXPECT_EQ(pipeline::gpu_output_for(p, progressive), asked);
  }
}

// A slot's device memory: the frame, its coefficients and, with tokens, a stream of at most
// the coefficients' bytes after the token format's header (the largest one: with the histogram
// that --optimize asks for).
TEST(PipelineOptions, DeviceBytesPerSlotCountFrameCoefficientsAndTokens) {
  for (const auto& [w, h, s] : {std::tuple{1920, 1080, Subsampling::s420},
                                std::tuple{3840, 2160, Subsampling::s444},
                                std::tuple{17, 9, Subsampling::gray}}) {
    const FrameGeometry g = make_geometry(w, h, s);
    const std::size_t frame = static_cast<std::size_t>(w) * h * 3;
    const std::size_t coeffs = g.coefficient_count() * sizeof(std::int16_t);
    EXPECT_EQ(pipeline::device_bytes_per_slot(frame, g, GpuOutput::coefficients), frame + coeffs);
    const std::size_t tokens = pipeline::device_bytes_per_slot(frame, g, GpuOutput::tokens);
    EXPECT_EQ(tokens, frame + 2 * coeffs + 4 * tokens::header_words(g.mcus_y, true)) << w;
    EXPECT_GT(tokens::header_words(g.mcus_y, true), tokens::header_words(g.mcus_y, false));
  }
}

TEST(CpuPipeline, InvalidOptionsThrowUsageError) {
  const auto frames = make_frames(2, 16, 16, PixelFormat::rgb24);
  pipeline::MemoryFrameSource source(views(frames));
  MemorySink sink;
  pipeline::PipelineOptions p;
  p.slots = 0;
  EXPECT_THROW(pipeline::encode_stream(source, EncodeOptions{}, sink, p), UsageError);
  p.slots = 2;
  p.producers = 0;
  EXPECT_THROW(pipeline::encode_stream(source, EncodeOptions{}, sink, p), UsageError);
  p.producers = 1;
  EncodeOptions bad;
  bad.quality = 0;
  EXPECT_THROW(pipeline::encode_stream(source, bad, sink, p), UsageError);
  EXPECT_TRUE(sink.frames.empty());
}

TEST(CpuPipeline, FrameObserverSeesEveryFrameWithItsPixelsAndBytes) {
  const auto frames = make_frames(9, 40, 24, PixelFormat::rgb24);
  pipeline::MemoryFrameSource source(views(frames));
  MemorySink sink;
  std::mutex mutex;
  std::map<std::int64_t, std::vector<std::uint8_t>> seen;  // index -> jpeg
  pipeline::PipelineOptions p;
  p.producers = 2;
  p.slots = 4;
  p.entropy_threads = 3;
  p.on_frame = [&](std::int64_t index, const ImageView& pixels,
                   const std::vector<std::uint8_t>& jpeg) {
    ASSERT_GE(index, 0);
    ASSERT_LT(index, 9);
    const mjpeg::Image& want = frames[static_cast<std::size_t>(index)];
    ASSERT_EQ(pixels.width, want.width);
    ASSERT_EQ(pixels.height, want.height);
    for (int y = 0; y < pixels.height; ++y)
      ASSERT_EQ(std::memcmp(pixels.data + y * pixels.stride,
                            want.pixels.data() + y * want.view().stride, want.view().stride), 0);
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_TRUE(seen.emplace(index, jpeg).second) << "frame " << index << " seen twice";
  };
  within(30, [&] { pipeline::encode_stream(source, EncodeOptions{}, sink, p); });
  ASSERT_EQ(seen.size(), 9u);
  ASSERT_EQ(sink.frames.size(), 9u);
  for (std::int64_t i = 0; i < 9; ++i) EXPECT_EQ(seen[i], sink.frames[i]) << "frame " << i;
}

// Frames in memory are transformed where they lie (the observer sees the source's own pixels,
// no copy); a source that cannot lend them gets copied into slots; both write the same bytes.
TEST(CpuPipeline, LentFramesAreEncodedInPlaceAndCopiedOnesAlike) {
  const auto frames = make_frames(10, 67, 35, PixelFormat::rgb24);
  const std::vector<ImageView> frame_views = views(frames);

  /// The same frames through read_into only (what a file reader does).
  class CopyingSource final : public pipeline::FrameSource {
   public:
    explicit CopyingSource(std::vector<ImageView> v) : inner_(std::move(v)) {}
    pipeline::SourceFormat format() const override { return inner_.format(); }
    bool read_into(int producer, std::uint8_t* dst, std::size_t stride,
                   std::int64_t& index) override {
      return inner_.read_into(producer, dst, stride, index);
    }

   private:
    pipeline::MemoryFrameSource inner_;
  };

  for (bool lend : {true, false}) {
    pipeline::MemoryFrameSource memory(frame_views);
    CopyingSource copying(frame_views);
    pipeline::FrameSource& source = lend ? static_cast<pipeline::FrameSource&>(memory) : copying;
    EXPECT_EQ(source.lends_frames(), lend);
    MemorySink sink;
    std::atomic<int> in_place{0};
    pipeline::PipelineOptions p;
    p.producers = 2;
    p.slots = 4;
    p.entropy_threads = 2;
    p.on_frame = [&](std::int64_t index, const ImageView& pixels,
                     const std::vector<std::uint8_t>&) {
      if (pixels.data == frame_views[static_cast<std::size_t>(index)].data) ++in_place;
    };
    EncodeOptions o;
    o.subsampling = Subsampling::s422;
    within(30, [&] { pipeline::encode_stream(source, o, sink, p); });
    EXPECT_EQ(in_place.load(), lend ? 10 : 0);
    expect_frames_equal(reference(frames, o), sink.frames, 10);
  }
}

/// Frames in memory, copied, whose end shows late: the read after the last frame returns false
/// only after `end_s` (the producer is slow to see the end). frame_count() says how many there
/// are, as MemoryFrameSource does.
class LateEndSource final : public pipeline::FrameSource {
 public:
  LateEndSource(std::vector<ImageView> frames, double end_s)
      : count_(static_cast<std::int64_t>(frames.size())), inner_(std::move(frames)), end_s_(end_s) {}
  pipeline::SourceFormat format() const override { return inner_.format(); }
  std::int64_t frame_count() const override { return count_; }
  bool read_into(int producer, std::uint8_t* dst, std::size_t stride,
                 std::int64_t& index) override {
    if (inner_.read_into(producer, dst, stride, index)) return true;
    std::this_thread::sleep_for(std::chrono::duration<double>(end_s_));
    return false;
  }

 private:
  std::int64_t count_;
  pipeline::MemoryFrameSource inner_;
  double end_s_;
};

// The last frames of a stream, coded while workers wait idle, are cut into MCU-row ranges
// coded at once (Stats::split_frames): the same bytes as one thread each. Whatever the threads'
// timing: six frames on eight workers, so the frame that reaches a worker last finds at least
// two of them idle and no frame waiting, and the reading is known to be over by then (the
// source's frame count), also when the producer sees the end late.
TEST(CpuPipeline, TheLastLargeFramesAreCodedOnTheIdleWorkersToo) {
  const auto frames = make_frames(6, 1280, 1024, PixelFormat::rgb24);  // 1.25 MP: 2 parts
  for (bool late_end : {false, true})
    for (bool optimize : {false, true}) {
      SCOPED_TRACE(std::string(late_end ? "end seen late" : "frames lent") +
                   (optimize ? ", optimize" : ""));
      pipeline::MemoryFrameSource memory(views(frames));
      LateEndSource late(views(frames), 0.5);
      pipeline::FrameSource& source = late_end ? static_cast<pipeline::FrameSource&>(late) : memory;
      MemorySink sink;
      pipeline::PipelineOptions p;
      p.producers = 1;
      p.slots = 8;
      p.entropy_threads = 8;
      EncodeOptions o;
      o.optimize = optimize;
      pipeline::Stats st;
      within(60, [&] { st = pipeline::encode_stream(source, o, sink, p); });
      EXPECT_EQ(st.frames, 6);
      EXPECT_GE(st.split_frames, 1);
      expect_frames_equal(reference(frames, o), sink.frames, 6);
    }
}

TEST(CpuPipeline, DefaultCountsOnFramesInMemoryPutAWorkerOnEveryCore) {
  pipeline::PipelineOptions p;
  p.mode = Offload::cpu;
  pipeline::apply_default_counts(p, 16, 0, 0, 0, /*in_memory=*/true);
  EXPECT_EQ(p.producers, 1);
  EXPECT_EQ(p.entropy_threads, 16);
  pipeline::apply_default_counts(p, 16, 0, 0, 0, /*in_memory=*/false);  // a file: producers decode
  EXPECT_EQ(p.producers, 2);
  EXPECT_EQ(p.entropy_threads, 14);
  pipeline::apply_default_counts(p, 16, 3, 5, 0, /*in_memory=*/true);  // requests are kept
  EXPECT_EQ(p.producers, 3);
  EXPECT_EQ(p.entropy_threads, 5);
  p.mode = Offload::aok;
  pipeline::apply_default_counts(p, 16, 0, 0, 0, /*in_memory=*/true);  // GPU modes: balanced,
  EXPECT_EQ(p.balance_threads, 15);  // aok leaves one core to the dispatcher, downloader, writer
  EXPECT_EQ(p.producers, 1);         // from one producer (it hands out and uploads)
  EXPECT_EQ(p.entropy_threads, 14);
  EXPECT_EQ(p.slots, 17);            // a frame in flight per thread, and two
  EXPECT_TRUE(p.slots_auto);
  p.mode = Offload::sok;
  pipeline::apply_default_counts(p, 16, 0, 0, 0, /*in_memory=*/true);
  EXPECT_EQ(p.entropy_threads, 14);  // sok: one core to the dispatcher
  p.mode = Offload::sok_pinned;
  pipeline::apply_default_counts(p, 16, 0, 0, 0, /*in_memory=*/true);
  EXPECT_EQ(p.entropy_threads, 14);  // pinned or not
}

// A total of threads (VideoOptions::threads, compare's one total for every mode): the split
// balances itself over it in every mode, cpu on frames in memory included, and the slots
// follow it by the one rule, N + M + 2.
TEST(CpuPipeline, DefaultCountsOfATotalBalanceInEveryMode) {
  for (Offload mode : {Offload::cpu, Offload::sok, Offload::aok}) {
    SCOPED_TRACE(to_string(mode));
    pipeline::PipelineOptions p;
    p.mode = mode;
    pipeline::apply_default_counts(p, 16, 0, 0, 0, /*in_memory=*/true, /*total_threads=*/15);
    EXPECT_EQ(p.balance_threads, 15);
    EXPECT_EQ(p.producers, 1);
    EXPECT_EQ(p.entropy_threads, 14);
    EXPECT_EQ(p.slots, 17);
    pipeline::apply_default_counts(p, 16, 0, 0, 0, /*in_memory=*/false, 6);
    EXPECT_EQ(p.balance_threads, 6);
    EXPECT_EQ(p.producers, 2);
    EXPECT_EQ(p.entropy_threads, 4);
    EXPECT_EQ(p.slots, 8);  // at least 8
    pipeline::apply_default_counts(p, 16, 3, 0, 0, /*in_memory=*/false, 6);  // a count: fixed
    EXPECT_EQ(p.balance_threads, 0);
    EXPECT_EQ(p.producers, 3);
  }
}

TEST(CpuPipeline, FrameObserverExceptionStopsTheEncode) {
  const auto frames = make_frames(12, 16, 16, PixelFormat::rgb24);
  pipeline::MemoryFrameSource source(views(frames));
  MemorySink sink;
  pipeline::PipelineOptions p;
  p.slots = 3;
  p.on_frame = [](std::int64_t index, const ImageView&, const std::vector<std::uint8_t>&) {
    if (index == 5) throw Error("observer failed");
  };
  within(30, [&] {
    EXPECT_THROW(pipeline::encode_stream(source, EncodeOptions{}, sink, p), Error);
  });
  EXPECT_LT(sink.frames.size(), 6u);
}

TEST(CpuPipeline, TraceHasEverySpanOnceWithoutOverlaps) { check_trace(Offload::cpu); }

TEST(CpuPipeline, ModeNames) {
  for (Offload m : {Offload::cpu, Offload::sok, Offload::sok_pinned, Offload::aok})
    EXPECT_EQ(parse_offload(to_string(m)), m);
  EXPECT_STREQ(to_string(Offload::sok_pinned), "sok-pinned");
  EXPECT_THROW(parse_offload("gpu"), UsageError);
}

TEST(DeviceList, MissingDevicesAreOneClearError) {
  EXPECT_NO_THROW(pipeline::check_devices_exist({0, 1, 0}, 2));
  try {
    pipeline::check_devices_exist({0, 3, 5}, 2);
    FAIL() << "no error";
  } catch (const UsageError&) {
    FAIL() << "a missing device is a runtime error, not a usage error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "CUDA device 3 does not exist (2 found)");
  }
  try {
    pipeline::check_devices_exist({0}, 0, "no CUDA device found");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "CUDA device 0 does not exist (no CUDA device found)");
  }
}

TEST(DeviceList, OptionsKeepDeviceAsAOneElementListAndAreValidated) {
  pipeline::PipelineOptions p;
  EXPECT_EQ(pipeline::device_list(p), (std::vector<int>{0}));
  p.device = 3;
  EXPECT_EQ(pipeline::device_list(p), (std::vector<int>{3}));
  p.devices = {1, 1, 2};
  EXPECT_EQ(pipeline::device_list(p), (std::vector<int>{1, 1, 2}));
  EXPECT_NO_THROW(pipeline::validate(p));
  p.devices = {0, 1024};
  EXPECT_THROW(pipeline::validate(p), UsageError);
  p.devices.assign(17, 0);
  EXPECT_THROW(pipeline::validate(p), UsageError);
}

// The cpu mode has no stream buffers: a device list changes nothing (same bytes, no buffer
// statistics).
TEST(DeviceList, CpuModeIgnoresTheDeviceList) {
  const auto frames = make_frames(9, 40, 24, PixelFormat::rgb24);
  const auto ref = reference(frames, EncodeOptions{});
  pipeline::PipelineOptions p;
  p.mode = Offload::cpu;
  p.producers = 2;
  p.entropy_threads = 2;
  p.slots = 3;
  p.devices = {0, 0, 1};
  pipeline::MemoryFrameSource source(views(frames));
  MemorySink sink;
  pipeline::Stats st;
  within(30, [&] { st = pipeline::encode_stream(source, EncodeOptions{}, sink, p); });
  expect_frames_equal(ref, sink.frames, frames.size());
  EXPECT_TRUE(st.buffers.empty());
}

// encode --start: a frame range; the frames before it are read and dropped, the rest renumbered
// from 0; every producer count gives the frames of the range, in order, byte-identical.
TEST(SkipFrameSource, FrameRangesOfCopiedAndLentFrames) {
  const auto frames = make_frames(15, 40, 24, PixelFormat::rgb24);
  const EncodeOptions o;
  const auto ref = reference(frames, o);
  for (bool lent : {true, false})
    for (int producers : {1, 3})
      for (std::int64_t skip : {0, 1, 7, 14, 15, 20}) {
        std::vector<ImageView> v = views(frames);
        std::vector<std::vector<std::uint8_t>> padded;
        if (!lent) {  // rows with padding: the source copies them (read_into), it cannot lend
          for (ImageView& f : v) {
            padded.emplace_back(f.stride * f.height + f.height * 4);
            for (int y = 0; y < f.height; ++y)
              std::memcpy(padded.back().data() + y * (f.stride + 4), f.data + y * f.stride, f.stride);
            f.data = padded.back().data();
            f.stride += 4;
          }
        }
        auto inner = std::make_unique<pipeline::MemoryFrameSource>(v);
        ASSERT_EQ(inner->lends_frames(), lent);
        pipeline::SkipFrameSource source(std::move(inner), skip);
        pipeline::PipelineOptions p;
        p.mode = Offload::cpu;
        p.producers = producers;
        p.entropy_threads = 2;
        p.slots = 5;
        MemorySink sink;
        pipeline::Stats st;
        within(30, [&] { st = pipeline::encode_stream(source, o, sink, p); });
        const std::size_t want = skip >= 15 ? 0 : static_cast<std::size_t>(15 - skip);
        ASSERT_EQ(sink.frames.size(), want) << "skip " << skip;
        for (std::size_t i = 0; i < want; ++i)
          ASSERT_EQ(sink.frames[i], ref[static_cast<std::size_t>(skip) + i]) << "skip " << skip << " frame " << i;
      }
}

// The Y4M adapter: N producers converting in parallel give exactly the frames of a serial
// read + yuv_to_rgb24 + encode_jpeg, in order; max_frames limits the count.
TEST(Y4mSource, ParallelConversionMatchesSerial) {
  const int w = 38, h = 22, n = 9;
  char path[] = "/tmp/mjpeg_pipe_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  {
    std::FILE* f = std::fopen(path, "wb");
    ASSERT_NE(f, nullptr);
    std::fprintf(f, "YUV4MPEG2 W%d H%d F30000:1001 Ip C420jpeg XCOLORRANGE=LIMITED\n", w, h);
    const int cw = (w + 1) / 2, chh = (h + 1) / 2;
    for (int i = 0; i < n; ++i) {
      std::fprintf(f, "FRAME\n");
      for (int k = 0; k < w * h; ++k) std::fputc(16 + (k * 7 + i * 13) % 220, f);
      for (int k = 0; k < 2 * cw * chh; ++k) std::fputc(16 + (k * 5 + i * 29) % 225, f);
    }
    std::fclose(f);
  }
  EncodeOptions o;
  o.subsampling = Subsampling::s444;
  std::vector<std::vector<std::uint8_t>> ref;
  {
    io::Y4mReader reader(path);
    io::Y4mFrame frame;
    mjpeg::Image rgb(w, h, PixelFormat::rgb24);
    while (reader.read_frame(frame)) {
      io::yuv_to_rgb24(frame.planes(reader.info()), reader.info(), rgb.pixels.data(), rgb.stride());
      ref.push_back(encode_jpeg(rgb.view(), o));
    }
  }
  ASSERT_EQ(ref.size(), static_cast<std::size_t>(n));
  for (std::int64_t limit : {std::int64_t(-1), std::int64_t(4)}) {
    io::Y4mReader reader(path);
    pipeline::Y4mFrameSource source(reader, limit);
    MemorySink sink;
    pipeline::PipelineOptions p;
    p.producers = 3;
    p.entropy_threads = 2;
    p.slots = 4;
    within(30, [&] { pipeline::encode_stream(source, o, sink, p); });
    expect_frames_equal(ref, sink.frames, limit < 0 ? n : static_cast<std::size_t>(limit));
  }
  std::remove(path);
}

// The self-balancing split: the rule, and that moving threads between producers and entropy
// workers mid-stream changes no byte.
TEST(Balance, RuleTakesTheSplitWithTheMostFramesPerSecond) {
  // Producing 1 ms, coding 5 ms per frame on 15 threads: N = 2 gives min(2000, 2600) fps,
  // N = 3 min(3000, 2400): 3 is best; with cheap production 1 producer suffices.
  EXPECT_EQ(pipeline::balanced_producers(1e-3, 5e-3, 15, 14), 3);
  EXPECT_EQ(pipeline::balanced_producers(1e-5, 5e-3, 15, 14), 1);
  EXPECT_EQ(pipeline::balanced_producers(10e-3, 1e-3, 8, 7), 7);  // decoding binds
  EXPECT_EQ(pipeline::balanced_producers(10e-3, 1e-3, 8, 2), 2);  // ... but 2 is all it uses
  EXPECT_EQ(pipeline::balanced_producers(1e-3, 1e-3, 2, 1), 1);
  // Equal throughput either way: the fewer producers.
  EXPECT_EQ(pipeline::balanced_producers(1e-3, 1e-3, 4, 3), 2);
}

TEST(Balance, DefaultsBalanceUnlessACountIsForced) {
  pipeline::PipelineOptions o;
  o.mode = Offload::aok;
  pipeline::apply_default_counts(o, 16);
  EXPECT_EQ(o.balance_threads, 15);
  EXPECT_EQ(o.producers + o.entropy_threads, 15);
  EXPECT_EQ(o.producers, 2);
  // GPU modes: N + M + 2, lowered at setup where memory is short (aok adds 8 at setup where it
  // uploads frames from where they lie: AokDefaultSlotsCoverTheGpuStagesWhereFramesAreLent)
  EXPECT_EQ(o.slots, 17);
  EXPECT_TRUE(o.slots_auto);
  pipeline::apply_default_counts(o, 16, 4);
  EXPECT_EQ(o.balance_threads, 0);
  EXPECT_EQ(o.producers, 4);
  EXPECT_EQ(o.entropy_threads, 11);
  pipeline::apply_default_counts(o, 16, 0, 3);
  EXPECT_EQ(o.balance_threads, 0);
  EXPECT_EQ(o.producers, 2);
  EXPECT_EQ(o.entropy_threads, 3);
  pipeline::apply_default_counts(o, 16, 0, 0, 20);
  EXPECT_EQ(o.slots, 20);
  EXPECT_FALSE(o.slots_auto);
  o.mode = Offload::cpu;
  pipeline::apply_default_counts(o, 16);
  EXPECT_EQ(o.slots, 18);  // cpu: N + M + 2
  pipeline::apply_default_counts(o, 2);
  EXPECT_EQ(o.balance_threads, 2);
  EXPECT_EQ(o.producers, 1);
  EXPECT_EQ(o.entropy_threads, 1);
  o.producers = 2;  // N + M must be the balanced count
  EXPECT_THROW(pipeline::validate(o), UsageError);
}

/// A memory source whose reads cost a little CPU (so that the balancer has something to move)
/// and that can say it gains nothing from more than `cap` producers.
class CostlySource final : public pipeline::FrameSource {
 public:
  CostlySource(std::vector<ImageView> frames, int cap) : inner_(std::move(frames)), cap_(cap) {}
  pipeline::SourceFormat format() const override { return inner_.format(); }
  int max_useful_producers() const override { return cap_; }
  bool read_into(int producer, std::uint8_t* dst, std::size_t stride,
                 std::int64_t& index) override {
    if (!inner_.read_into(producer, dst, stride, index)) return false;
    volatile std::uint32_t x = 0;
    for (int i = 0; i < 20000; ++i) x = x * 31u + dst[i % 64];
    return true;
  }

 private:
  pipeline::MemoryFrameSource inner_;
  int cap_;
};

TEST(Balance, SplitMovesWithoutChangingAByte) {
  const auto frames = make_frames(130, 48, 32, PixelFormat::rgb24);
  EncodeOptions o;
  o.quality = 70;
  const auto ref = reference(frames, o);
  for (int threads : {2, 3, 6, 9})
    for (int cap : {0, 1, 2}) {
      pipeline::PipelineOptions p;
      p.mode = Offload::cpu;
      p.balance_threads = threads;
      p.producers = std::min(2, threads - 1);
      p.entropy_threads = threads - p.producers;
      p.slots = threads + 2;
      CostlySource source(views(frames), cap);
      MemorySink sink;
      pipeline::Stats st;
      within(60, [&] { st = pipeline::encode_stream(source, o, sink, p); });
      expect_frames_equal(ref, sink.frames, frames.size());
      EXPECT_EQ(st.producers + st.entropy_threads, threads);
      EXPECT_GE(st.producers, 1);
      EXPECT_GE(st.entropy_threads, 1);
      if (cap == 1) {
        EXPECT_EQ(st.producers, 1) << "a source capped at one producer";
      }
    }
}

TEST(Balance, StopAndErrorsWithIdleThreads) {
  // 8 threads of which at most 7 can be either kind: the idle ones must leave on a stop, at
  // the end and on an error, without a deadlock.
  const auto frames = make_frames(120, 40, 24, PixelFormat::rgb24);
  EncodeOptions o;
  const auto ref = reference(frames, o);
  pipeline::PipelineOptions p;
  p.mode = Offload::cpu;
  p.balance_threads = 8;
  p.producers = 2;
  p.entropy_threads = 6;
  p.slots = 10;
  {
    std::atomic<bool> stop{false};
    ScriptedSource source(views(frames), -1, 50, &stop);
    MemorySink sink;
    pipeline::Stats st;
    within(30, [&] { st = pipeline::encode_stream(source, o, sink, p, {}, &stop); });
    EXPECT_GE(st.frames, 50);
    expect_frames_equal(ref, sink.frames, sink.frames.size());
  }
  {
    ScriptedSource source(views(frames), 100, -1, nullptr);
    MemorySink sink;
    const std::string message = encode_error(source, o, sink, p);
    EXPECT_NE(message.find("read error in frame 100"), std::string::npos) << message;
    expect_frames_equal(ref, sink.frames, sink.frames.size());
  }
}

// ---------------------------------------------------------------------------------------------
// The cpu start (PipelineOptions::cpu_start): the CPU encodes while the second run is made on
// another thread, then hands the rest of the stream over. Here the second run is the cpu mode
// too (encode_stream allows it for these tests), with other counts; the GPU tests run the real
// hand-over to aok.
// ---------------------------------------------------------------------------------------------

/// Frames in memory, copied: frame `hold_at` sets `reached` once read and returns only once
/// `released` is true, and 50 ms later (the hand-over then comes while the CPU still has
/// frames to read, right after that frame).
class HeldSource final : public pipeline::FrameSource {
 public:
  HeldSource(std::vector<ImageView> frames, std::int64_t hold_at, const std::atomic<bool>& released)
      : inner_(std::move(frames)), hold_at_(hold_at), released_(released) {}
  pipeline::SourceFormat format() const override { return inner_.format(); }
  std::int64_t frame_count() const override { return inner_.frame_count(); }
  bool read_into(int producer, std::uint8_t* dst, std::size_t stride,
                 std::int64_t& index) override {
    if (!inner_.read_into(producer, dst, stride, index)) return false;
    if (index == hold_at_) {
      reached.store(true);
      while (!released_.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
  }
  std::atomic<bool> reached{false};

 private:
  pipeline::MemoryFrameSource inner_;
  std::int64_t hold_at_;
  const std::atomic<bool>& released_;
};

/// The second run's set-up as a test sees it: what before_handover does (waits for `wait`,
/// then sets `called`; or throws `error`).
struct HandoverHooks final : pipeline::OffloadTestHooks {
  std::function<bool()> wait = [] { return true; };
  std::string error;
  std::atomic<bool> called{false};
  void before_handover() override {
    while (!wait()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!error.empty()) throw Error(error);
    called.store(true);
  }
};

/// The second run's options (`p`: 2 producers, 3 workers, 5 slots) with a cpu start of 1
/// producer, 2 workers and 3 slots, and `hooks`.
pipeline::PipelineOptions cpu_start_options(pipeline::OffloadTestHooks& hooks) {
  pipeline::PipelineOptions p;
  p.producers = 2;
  p.entropy_threads = 3;
  p.slots = 5;
  p.test_hooks = &hooks;
  pipeline::PipelineOptions c;
  c.producers = 1;
  c.entropy_threads = 2;
  c.slots = 3;
  p.cpu_start = std::make_shared<const pipeline::PipelineOptions>(c);
  return p;
}

/// The progress reports of a run: frames and bytes in order, one per frame.
struct ProgressLog {
  std::mutex mutex;
  std::vector<mjpeg::Progress> seen;
  std::atomic<std::int64_t> frames{0};
  pipeline::ProgressFn fn() {
    return [this](const mjpeg::Progress& p) {
      std::lock_guard<std::mutex> lock(mutex);
      seen.push_back(p);
      frames.store(p.frames);
    };
  }
  /// Frames 1, 2, ... n in turn, bytes growing by each frame's size, time never going back.
  void expect_every_frame(const std::vector<std::vector<std::uint8_t>>& jpegs) {
    ASSERT_EQ(seen.size(), jpegs.size());
    std::uint64_t bytes = 0;
    for (std::size_t i = 0; i < seen.size(); ++i) {
      bytes += jpegs[i].size();
      EXPECT_EQ(seen[i].frames, static_cast<std::int64_t>(i + 1));
      EXPECT_EQ(seen[i].jpeg_bytes, bytes) << "frame " << i;
      if (i > 0) {
        EXPECT_GE(seen[i].elapsed_s, seen[i - 1].elapsed_s);
      }
    }
  }
};

/// One encode of `source` with a cpu start (cpu_start_options(hooks)) into `sink`, each frame's
/// progress report into `progress`.
pipeline::Stats encode_cpu_start(pipeline::FrameSource& source, const EncodeOptions& o,
                                 HandoverHooks& hooks, MemorySink& sink, ProgressLog& progress) {
  pipeline::Stats st;
  within(30, [&] {
    st = pipeline::encode_stream(source, o, sink, cpu_start_options(hooks), progress.fn());
  });
  return st;
}

// The hand-over comes while frame 9 is read: the CPU finishes the frames it has (9 and those
// before; its one producer reads no further, unless the set-up thread was held up for 50 ms
// between the hook and the hand-over), the second run goes on from there with its own
// counts, and the stream is the same frame for frame; progress counts on across it.
TEST(CpuStart, TheSecondRunGoesOnFromTheFirstFrameTheCpuDidNotRead) {
  const auto frames = make_frames(40, 48, 32, PixelFormat::rgb24);
  EncodeOptions o;
  const auto ref = reference(frames, o);
  HandoverHooks hooks;
  HeldSource source(views(frames), 9, hooks.called);
  hooks.wait = [&] { return source.reached.load(); };
  MemorySink sink;
  ProgressLog progress;
  const pipeline::Stats st = encode_cpu_start(source, o, hooks, sink, progress);
  EXPECT_EQ(st.frames, 40);
  EXPECT_GE(st.cpu_start_frames, 10);
  EXPECT_LT(st.cpu_start_frames, 40);
  expect_frames_equal(ref, sink.frames, 40);
  std::uint64_t bytes = 0;
  for (const auto& f : ref) bytes += f.size();
  EXPECT_EQ(st.jpeg_bytes, bytes);
  EXPECT_GT(st.gpu_ready_s, 0);
  EXPECT_GE(st.handover_s, st.gpu_ready_s);
  EXPECT_LE(st.handover_s, st.wall_s);
  EXPECT_TRUE(st.gpu_problem.empty());
  EXPECT_EQ(st.producers, 2);  // the split of the run that ended the stream
  EXPECT_EQ(st.entropy_threads, 3);
  progress.expect_every_frame(ref);
}

// A set-up that fails leaves the whole stream to the CPU, with the reason; one that ends only
// after the stream did changes nothing either (the CPU encoded everything).
TEST(CpuStart, TheCpuKeepsTheStreamWhenTheSetUpFailsOrComesLate) {
  const auto frames = make_frames(30, 40, 24, PixelFormat::rgb24);
  EncodeOptions o;
  const auto ref = reference(frames, o);
  for (bool fails : {true, false}) {
    SCOPED_TRACE(fails ? "set-up fails" : "set-up ends after the stream");
    HandoverHooks hooks;
    ProgressLog progress;
    if (fails)
      hooks.error = "no device here";
    else
      hooks.wait = [&] { return progress.frames.load() == 30; };
    pipeline::MemoryFrameSource source(views(frames));
    MemorySink sink;
    const pipeline::Stats st = encode_cpu_start(source, o, hooks, sink, progress);
    EXPECT_EQ(st.frames, 30);
    EXPECT_EQ(st.cpu_start_frames, 30);
    EXPECT_EQ(st.handover_s, 0);
    EXPECT_EQ(st.gpu_problem, fails ? "no device here" : "");
    EXPECT_EQ(st.gpu_ready_s > 0, !fails);
    EXPECT_EQ(st.producers, 1);  // the cpu start's split
    expect_frames_equal(ref, sink.frames, 30);
    progress.expect_every_frame(ref);
  }
}

// A stop during the cpu start ends the encode there: no second run, even once it is ready.
TEST(CpuStart, AStopDuringTheCpuStartEndsTheEncode) {
  const auto frames = make_frames(40, 40, 24, PixelFormat::rgb24);
  EncodeOptions o;
  const auto ref = reference(frames, o);
  std::atomic<bool> stop{false};
  HandoverHooks hooks;
  hooks.wait = [&] { return stop.load(); };
  ScriptedSource source(views(frames), -1, 12, &stop);
  MemorySink sink;
  pipeline::Stats st;
  within(30, [&] { st = pipeline::encode_stream(source, o, sink, cpu_start_options(hooks), {}, &stop); });
  EXPECT_GE(st.frames, 12);
  EXPECT_LE(st.frames, 13);  // one producer: at most the frame it was reading
  EXPECT_EQ(st.cpu_start_frames, st.frames);
  EXPECT_EQ(st.handover_s, 0);
  expect_frames_equal(ref, sink.frames, sink.frames.size());
}

// An error of the cpu start is the encode's error, after the set-up thread has ended.
TEST(CpuStart, AnErrorOfTheCpuStartIsTheEncodesError) {
  const auto frames = make_frames(20, 40, 24, PixelFormat::rgb24);
  EncodeOptions o;
  HandoverHooks hooks;
  // The set-up takes 0.2 s: the read error of frame 6 comes first (on a loaded machine perhaps
  // not, and then it is the second run's error: the encode's all the same).
  const auto t0 = std::chrono::steady_clock::now();
  hooks.wait = [t0] { return std::chrono::steady_clock::now() - t0 > std::chrono::milliseconds(200); };
  ScriptedSource source(views(frames), 6, -1, nullptr);
  MemorySink sink;
  const std::string message = encode_error(source, o, sink, cpu_start_options(hooks));
  EXPECT_NE(message.find("read error in frame 6"), std::string::npos) << message;
}

/// A memory source whose every read takes at least `read_s` (a sleep: the producers' busy time
/// per frame is at least that, however loaded the machine).
class SlowReadSource final : public pipeline::FrameSource {
 public:
  SlowReadSource(std::vector<ImageView> frames, double read_s)
      : inner_(std::move(frames)), read_s_(read_s) {}
  pipeline::SourceFormat format() const override { return inner_.format(); }
  bool read_into(int producer, std::uint8_t* dst, std::size_t stride,
                 std::int64_t& index) override {
    std::this_thread::sleep_for(std::chrono::duration<double>(read_s_));
    return inner_.read_into(producer, dst, stride, index);
  }

 private:
  pipeline::MemoryFrameSource inner_;
  double read_s_;
};

// The self-balancing split moves threads to the stage that binds, measured between frames 8
// and 32: from its start of 2 producers and 6 workers,
//  - to more producers when reading binds: 50 ms a frame against microseconds of coding a
//    16x16 frame (3 producers beat 2 for any coding cost below 125 ms a frame);
//  - to 1 producer when coding binds: copying a 960x720 frame against coding it at q100, 4:4:4,
//    with optimized tables (1 beats 2 unless copying costs more than a sixth of the coding;
//    here it costs 0.03-0.04 of it, against 0.11-0.14 for 640x480 frames at q95 4:2:0, so
//    that a copy stretched by a busy machine's scheduler, whose busy time is wall time, still
//    counts for less).
TEST(Balance, TheSplitMovesThreadsToTheStageThatBinds) {
  pipeline::PipelineOptions p;
  p.mode = Offload::cpu;
  p.balance_threads = 8;
  p.producers = 2;
  p.entropy_threads = 6;
  p.slots = 10;
  {
    const auto frames = make_frames(40, 16, 16, PixelFormat::rgb24);
    SlowReadSource source(views(frames), 0.05);
    MemorySink sink;
    pipeline::Stats st;
    within(60, [&] { st = pipeline::encode_stream(source, EncodeOptions{}, sink, p); });
    expect_frames_equal(reference(frames, EncodeOptions{}), sink.frames, frames.size());
    EXPECT_GE(st.rebalances, 1);
    EXPECT_GT(st.producers, 2) << "reading binds";
    EXPECT_EQ(st.producers + st.entropy_threads, 8);
  }
  {
    const auto frames = make_frames(40, 960, 720, PixelFormat::rgb24);
    EncodeOptions o;
    o.quality = 100;
    o.subsampling = Subsampling::s444;
    o.optimize = true;
    ScriptedSource source(views(frames), -1, -1, nullptr);  // copies each frame into its slot
    MemorySink sink;
    pipeline::Stats st;
    within(120, [&] { st = pipeline::encode_stream(source, o, sink, p); });
    expect_frames_equal(reference(frames, o), sink.frames, frames.size());
    EXPECT_GE(st.rebalances, 1);
    EXPECT_EQ(st.producers, 1) << "coding binds";
    EXPECT_EQ(st.entropy_threads, 7);
  }
}

// The deadlock watchdog of these tests (common/deadline.hpp) tells a deadlock from a slow run
// by the CPU the process uses, not by wall time alone: a run that keeps working through
// several windows (an overloaded machine, a sanitizer build) passes; one whose threads all
// wait is reported as a deadlock after one window.
TEST(Watchdog, ASlowRunThatWorksIsNoDeadlock) {
  within(0.5, [] {
    timespec t0{}, t{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    volatile std::uint64_t x = 1;
    do {
      for (int i = 0; i < 100000; ++i) x = x * 6364136223846793005ull + 1;
      ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    } while ((t.tv_sec - t0.tv_sec) + 1e-9 * (t.tv_nsec - t0.tv_nsec) < 1);  // 2 windows or more
  }, /*max_windows=*/100);
}

TEST(WatchdogDeathTest, ThreadsThatAllWaitAreADeadlock) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(within(0.3, [] {
                std::promise<void> never;
                never.get_future().wait();
              }),
              ::testing::ExitedWithCode(3), "no CPU used in the last 0.3 s: deadlock");
}

class CpuPlanar : public ::testing::TestWithParam<PlanarCase> {};

TEST_P(CpuPlanar, ByteIdenticalToEncodeJpegOfTheRgb) { check_planar_stream(GetParam(), Offload::cpu); }

INSTANTIATE_TEST_SUITE_P(Cases, CpuPlanar, ::testing::ValuesIn(planar_cases()),
                         [](const auto& info) { return name_of(info.param); });

// transform_cpu of a planar frame is transform_cpu of its planar_to_rgb image, coefficient for
// coefficient, for every chroma layout, output sampling and conversion form at odd sizes.
TEST(PlanarTransform, CpuPlanarEqualsCpuOfTheRgb) {
  for (PlanarChroma chroma : {PlanarChroma::c420, PlanarChroma::c422, PlanarChroma::c444,
                              PlanarChroma::mono})
    for (Subsampling s : {Subsampling::s444, Subsampling::s422, Subsampling::s420,
                          Subsampling::gray})
      for (bool truncated : {false, true})
        for (auto [w, h] : {std::pair{1, 1}, std::pair{17, 9}, std::pair{33, 34}}) {
          PlanarCase c{w, h, chroma, s, truncated, false, 1, 1, 1, 1};
          const PlanarFormat f = planar_format_of(c);
          const auto frames = make_planar_frames(1, w, h, chroma);
          const PlanarView v = planar_view(frames[0].data(), w, h, f);
          mjpeg::Image rgb(w, h, PixelFormat::rgb24);
          planar_to_rgb(v, rgb.pixels.data(), rgb.stride());
          const FrameGeometry g = make_geometry(w, h, s);
          const QuantTables t = make_quant_tables(60, g.num_components == 1 ? 1 : 2);
          std::vector<std::int16_t> a(g.coefficient_count(), 1), b(g.coefficient_count(), 2);
          transform_cpu(v, g, t, a.data());
          transform_cpu(rgb.view(), g, t, b.data());
          EXPECT_EQ(a, b) << name_of(c);
        }
}

// The vector row conversion (AVX2 where the CPU has it) gives the scalar reference's bytes:
// every chroma layout and form, widths 1..80 (every tail), and a 4:4:4 frame holding every
// (Y, Cb, Cr) for both forms.
TEST(PlanarTransform, VectorRowsEqualTheScalarReference) {
  std::printf("planar rows: %s\n", planar_row_variant());
  for (PlanarChroma chroma : {PlanarChroma::c420, PlanarChroma::c422, PlanarChroma::c444,
                              PlanarChroma::mono})
    for (bool truncated : {false, true})
      for (int w = 1; w <= 80; ++w) {
        PlanarCase c{w, 3, chroma, Subsampling::s420, truncated, false, 1, 1, 1, 1};
        const auto frames = make_planar_frames(1, w, 3, chroma);
        const PlanarView v = planar_view(frames[0].data(), w, 3, planar_format_of(c));
        std::vector<std::uint8_t> a(static_cast<std::size_t>(w) * 3), b(a.size());
        for (int y = 0; y < 3; ++y) {
          planar_row_to_rgb(v, y, a.data());
          planar_row_to_rgb_scalar(v, y, b.data());
          ASSERT_EQ(a, b) << name_of(c) << " row " << y;
        }
      }
  const int w = 4096, h = 4096;
  const PlanarLayout l = planar_layout(w, h, PlanarChroma::c444);
  std::vector<std::uint8_t> frame(l.bytes);
  for (std::size_t k = 0; k < std::size_t(w) * h; ++k) {
    frame[k] = std::uint8_t(k);
    frame[l.offset[1] + k] = std::uint8_t(k >> 8);
    frame[l.offset[2] + k] = std::uint8_t(k >> 16);
  }
  for (bool truncated : {false, true}) {
    PlanarCase c{w, h, PlanarChroma::c444, Subsampling::s420, truncated, false, 1, 1, 1, 1};
    const PlanarView v = planar_view(frame.data(), w, h, planar_format_of(c));
    std::vector<std::uint8_t> a(std::size_t(w) * 3), b(a.size());
    for (int y = 0; y < h; ++y) {
      planar_row_to_rgb(v, y, a.data());
      planar_row_to_rgb_scalar(v, y, b.data());
      ASSERT_EQ(a, b) << "row " << y << (truncated ? " truncated" : " rounded");
    }
  }
}

// Y4M files of plain frame headers are read positionally by N producers; a frame with header
// parameters in a file whose size still looks like plain frames switches to sequential reading
// from there on; every frame equals the sequential read + yuv_to_rgb24 + encode_jpeg.
class Y4mFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/mjpeg_y4m_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string file(const std::string& name) const { return dir_ + "/" + name; }
  std::string dir_;
};

TEST_F(Y4mFiles, PlainHeadersAreReadPositionallyByEveryProducer) {
  const std::string path = file("plain.y4m");
  ASSERT_EQ(write_y4m(path, 38, 22, "C420jpeg XCOLORRANGE=LIMITED", 23), "");
  {
    io::Y4mReader r(path);
    EXPECT_EQ(r.positional_frames(), 23);
  }
  for (int producers : {1, 3, 6})
    for (std::int64_t limit : {std::int64_t(-1), std::int64_t(7)})
      check_y4m_stream(path, Offload::cpu, producers, 5, limit);
}

// Frame ranges of a Y4M file (encode --start N --frames F) read positionally by several
// producers: the frames of the range, renumbered, byte-identical to the sequential read; two
// ranges end to end are the whole file.
TEST_F(Y4mFiles, FrameRangesThroughSkipFrameSource) {
  const std::string path = file("range.y4m");
  ASSERT_EQ(write_y4m(path, 38, 22, "C420jpeg", 13), "");
  EncodeOptions o;
  o.quality = 75;
  const auto ref = y4m_reference(path, o);
  ASSERT_EQ(ref.size(), 13u);
  for (int producers : {1, 4})
    for (auto [start, count] : {std::pair<std::int64_t, std::int64_t>{0, 6}, {6, -1}, {5, 3}, {12, 5}, {13, -1}}) {
      io::Y4mReader reader(path);
      auto inner = std::make_unique<pipeline::Y4mFrameSource>(reader, count < 0 ? -1 : start + count);
      pipeline::SkipFrameSource source(std::move(inner), start);
      pipeline::PipelineOptions p;
      p.mode = Offload::cpu;
      p.producers = producers;
      p.entropy_threads = 2;
      p.slots = 4;
      MemorySink sink;
      within(30, [&] { pipeline::encode_stream(source, o, sink, p); });
      const std::size_t want = static_cast<std::size_t>(
          std::max<std::int64_t>(0, (count < 0 ? 13 : std::min<std::int64_t>(13, start + count)) - start));
      ASSERT_EQ(sink.frames.size(), want) << start << "+" << count;
      for (std::size_t i = 0; i < want; ++i)
        ASSERT_EQ(sink.frames[i], ref[static_cast<std::size_t>(start) + i]) << start << " frame " << i;
    }
}

// A range of a file of plain frame headers starts at its frame's fixed offset (encode --part,
// --start in the GPU modes): the frames before it are not read, only their headers checked
// (plain_headers_before); a header with parameters after the start still switches to
// sequential reading; the frames equal the sequential read's.
TEST_F(Y4mFiles, FrameRangesStartAtTheirOffset) {
  const int w = 8, h = 4;  // mono: 32-byte frames, 38-byte plain frames
  const std::size_t stride = 6 + w * h;
  const std::string plain = file("plain.y4m"), later = file("later.y4m");
  ASSERT_EQ(write_y4m(plain, w, h, "Cmono", 15), "");
  ASSERT_EQ(write_y4m(later, w, h, "Cmono", 14, {9}, stride - 1), "");  // parameters at frame 9
  EncodeOptions o;
  o.quality = 80;
  for (const std::string& path : {plain, later}) {
    const auto ref = y4m_reference(path, o);
    const std::int64_t n = static_cast<std::int64_t>(ref.size());
    for (int producers : {1, 4})
      for (auto [start, count] : {std::pair<std::int64_t, std::int64_t>{1, 5}, {6, -1}, {8, 3}, {9, -1}}) {
        io::Y4mReader reader(path);
        ASSERT_TRUE(reader.plain_headers_before(start)) << path << " " << start;
        pipeline::Y4mFrameSource source(reader, count < 0 ? -1 : start + count, start);
        pipeline::PipelineOptions p;
        p.mode = Offload::cpu;
        p.producers = producers;
        p.entropy_threads = 2;
        p.slots = 4;
        MemorySink sink;
        within(30, [&] { pipeline::encode_stream(source, o, sink, p); });
        const std::int64_t want = (count < 0 ? n : std::min(n, start + count)) - start;
        ASSERT_EQ(static_cast<std::int64_t>(sink.frames.size()), want) << path << " " << start;
        for (std::int64_t i = 0; i < want; ++i)
          ASSERT_EQ(sink.frames[static_cast<std::size_t>(i)], ref[static_cast<std::size_t>(start + i)])
              << path << " " << start << " frame " << i;
      }
    io::Y4mReader reader(path);
    EXPECT_EQ(reader.plain_headers_before(reader.positional_frames()), path == plain)
        << "frame 9's parameters are seen by their header alone";
  }
  io::Y4mReader reader(plain);
  EXPECT_THROW(pipeline::Y4mFrameSource(reader, -1, 16), UsageError);
}

TEST_F(Y4mFiles, EveryChromaLayoutRangeAndMatrix) {
  int i = 0;
  for (const char* tags : {"C420jpeg", "C420paldv XCOLORRANGE=FULL", "C422 XCOLORMATRIX=BT709",
                           "C444 XCOLORRANGE=FULL XCOLORMATRIX=BT709", "Cmono",
                           "Cmono XCOLORRANGE=FULL"}) {
    const std::string path = file("c" + std::to_string(i++) + ".y4m");
    ASSERT_EQ(write_y4m(path, 35, 19, tags, 6), "");
    for (Subsampling s : {Subsampling::s420, Subsampling::s444, Subsampling::gray})
      check_y4m_stream(path, Offload::cpu, 2, 4, -1, s);
  }
}

TEST_F(Y4mFiles, FrameParametersSwitchToSequentialReading) {
  const int w = 8, h = 4;  // mono: 32-byte frames, 38-byte plain frames
  const std::size_t stride = 6 + w * h;
  // One parameter header exactly one plain frame longer: the size is a whole number of plain
  // frames, so positional reading starts and must notice frame 5's parameters.
  const std::string one = file("one.y4m");
  ASSERT_EQ(write_y4m(one, w, h, "Cmono", 12, {5}, stride - 1), "");
  // Parameters from frame 2 on, and a first frame with them (sequential from the start).
  const std::string many = file("many.y4m");
  ASSERT_EQ(write_y4m(many, w, h, "Cmono", 14, {2, 3, 7}, stride - 1), "");
  const std::string first = file("first.y4m");
  ASSERT_EQ(write_y4m(first, w, h, "Cmono", 9, {0}, 5), "");
  {
    io::Y4mReader r1(one);
    EXPECT_EQ(r1.positional_frames(), 13) << "one plain frame's worth of parameters";
    io::Y4mReader r2(many);
    EXPECT_EQ(r2.positional_frames(), 17);
    io::Y4mReader r3(first);
    EXPECT_EQ(r3.positional_frames(), -1);
  }
  for (const std::string& path : {one, many, first})
    for (int producers : {1, 2, 5})
      for (std::int64_t limit : {std::int64_t(-1), std::int64_t(4), std::int64_t(12)})
        check_y4m_stream(path, Offload::cpu, producers, 6, limit);
}

TEST_F(Y4mFiles, TruncatedLastFrameIsAnErrorAfterTheWholeFrames) {
  const std::string path = file("cut.y4m");
  ASSERT_EQ(write_y4m(path, 16, 8, "C420jpeg", 5), "");
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(std::filesystem::file_size(path) - 10)), 0);
  io::Y4mReader reader(path);
  EXPECT_EQ(reader.positional_frames(), -1) << "not a whole number of frames";
  pipeline::Y4mFrameSource source(reader);
  MemorySink sink;
  pipeline::PipelineOptions p;
  p.producers = 3;
  p.slots = 4;
  const std::string message = encode_error(source, EncodeOptions{}, sink, p);
  EXPECT_NE(message.find("truncated frame 5"), std::string::npos) << message;
  EXPECT_LE(sink.frames.size(), 4u);
}

// A stand-in for cudaHostRegister: records the live locks and fails the test on a lock that
// overlaps a live one, is not page-aligned or leaves the range.
struct FakePins {
  const std::uint8_t* base = nullptr;
  std::size_t limit = 0;  // bytes from base that may be locked (whole pages)
  std::mutex mutex;
  std::map<const std::uint8_t*, std::size_t> live;
  int locks = 0;
  bool fail_all = false;

  pipeline::WindowPins::Pin pin() {
    return [this](const void* data, std::size_t bytes) -> std::shared_ptr<void> {
      std::lock_guard<std::mutex> lock(mutex);
      const auto* p = static_cast<const std::uint8_t*>(data);
      const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % page, 0u);
      EXPECT_EQ(bytes % page, 0u);
      EXPECT_GE(p, base);
      EXPECT_LE(p + bytes, base + limit);
      for (const auto& [q, n] : live) EXPECT_TRUE(p + bytes <= q || q + n <= p) << "overlap";
      if (fail_all) return nullptr;
      live[p] = bytes;
      ++locks;
      return std::shared_ptr<void>(const_cast<std::uint8_t*>(p), [this](void* q) {
        std::lock_guard<std::mutex> l(mutex);
        EXPECT_EQ(live.erase(static_cast<std::uint8_t*>(q)), 1u);
      });
    };
  }
  bool covered(const std::uint8_t* p, std::size_t n) {
    std::lock_guard<std::mutex> lock(mutex);
    for (std::size_t i = 0; i < n; i += 64) {
      bool in = false;
      for (const auto& [q, m] : live) in = in || (p + i >= q && p + i < q + m);
      if (!in) return false;
    }
    return true;
  }
};

// Frames of 3000 bytes lent in order, four in flight, released out of order: every lent
// frame's bytes stay locked until it is released, windows behind go, nothing is left.
TEST(WindowPins, LentFramesStayLockedAndWindowsBehindAreUnlocked) {
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t frame = 3000, frames = 40, bytes = frame * frames + 100;
  std::vector<std::uint8_t> storage(bytes + 2 * page);
  auto* base = reinterpret_cast<std::uint8_t*>(
      (reinterpret_cast<std::uintptr_t>(storage.data()) + page - 1) / page * page);
  FakePins fake;
  fake.base = base;
  fake.limit = (bytes + page - 1) / page * page;
  {
    pipeline::WindowPins pins(base, bytes, 2 * page, fake.pin());
    std::vector<std::size_t> in_flight;
    for (std::size_t i = 0; i < frames; ++i) {
      pins.passed(100 + i * frame);
      pins.acquire(100 + i * frame, frame);
      in_flight.push_back(i);
      if (in_flight.size() == 4) {  // release the second oldest, then the oldest
        for (std::size_t k : {std::size_t(1), std::size_t(0)}) {
          const std::size_t f = in_flight[k];
          in_flight.erase(in_flight.begin() + static_cast<std::ptrdiff_t>(k));
          pins.release(100 + f * frame, frame);
        }
      }
      for (std::size_t f : in_flight)
        ASSERT_TRUE(fake.covered(base + 100 + f * frame, frame)) << "frame " << f << " after " << i;
      EXPECT_LE(pins.pinned_now(), 5) << "only the windows of the frames in flight";
    }
    pins.passed(std::numeric_limits<std::size_t>::max());
    for (std::size_t f : in_flight) pins.release(100 + f * frame, frame);
    EXPECT_EQ(pins.pinned_now(), 0);
    EXPECT_GE(pins.pinned_peak(), 2);
    EXPECT_EQ(pins.failures(), 0);
  }
  EXPECT_TRUE(fake.live.empty());
  EXPECT_GE(fake.locks, static_cast<int>(bytes / (2 * page)));
}

TEST(WindowPins, AFailedLockIsCountedAndNotRetried) {
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<std::uint8_t> storage(6 * page);
  auto* base = reinterpret_cast<std::uint8_t*>(
      (reinterpret_cast<std::uintptr_t>(storage.data()) + page - 1) / page * page);
  FakePins fake;
  fake.base = base;
  fake.limit = 4 * page;
  fake.fail_all = true;
  pipeline::WindowPins pins(base, 4 * page, 2 * page, fake.pin());
  pins.acquire(0, 100);
  pins.acquire(200, 100);  // the same window: not tried again
  EXPECT_EQ(pins.failures(), 1);
  EXPECT_EQ(pins.pinned_now(), 0);
}

// A mapped Y4M file: frames lent where they lie in the mapping, equal to the read ones; with
// page locks (a stand-in here; the GPU tests lock for real), small windows that frames
// straddle, all released after the encode; a truncated last frame is the reader's error.
TEST_F(Y4mFiles, MappedFileLendsFramesAndReleasesEveryLock) {
  const std::string path = file("mapped.y4m");
  ASSERT_EQ(write_y4m(path, 38, 22, "C420jpeg", 13), "");
  EncodeOptions o;
  o.quality = 75;
  const auto ref = y4m_reference(path, o);
  for (int producers : {1, 3}) {
    io::Y4mReader reader(path);
    ASSERT_TRUE(reader.map_frames());
    FakePins fake;
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const auto first = reinterpret_cast<std::uintptr_t>(reader.mapping());
    fake.base = reinterpret_cast<const std::uint8_t*>(first - first % page);
    fake.limit = (first % page + reader.mapping_bytes() + page - 1) / page * page;
    pipeline::MappedY4mFrameSource source(reader, -1, fake.pin(), page);
    EXPECT_TRUE(source.lends_frames());
    source.pin_lent_frames();  // the pipeline does this in sok --pinned and aok only
    pipeline::PipelineOptions p;
    p.mode = Offload::cpu;
    p.producers = producers;
    p.entropy_threads = 2;
    p.slots = 4;
    MemorySink sink;
    within(30, [&] { pipeline::encode_stream(source, o, sink, p); });
    expect_frames_equal(ref, sink.frames, ref.size());
    EXPECT_EQ(source.pinned_windows(), 0);
    EXPECT_GE(source.pinned_windows_peak(), 1);
    EXPECT_LE(source.pinned_windows_peak(), 6) << "4 slots of 1254-byte frames, 4 KiB windows";
    EXPECT_GE(fake.locks, 4) << "13 frames of 1254 bytes span 4 windows";
    EXPECT_TRUE(fake.live.empty());
  }
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(std::filesystem::file_size(path) - 10)), 0);
  io::Y4mReader reader(path);
  ASSERT_TRUE(reader.map_frames());
  pipeline::MappedY4mFrameSource source(reader);
  MemorySink sink;
  pipeline::PipelineOptions p;
  p.producers = 3;
  p.slots = 4;
  const std::string message = encode_error(source, o, sink, p);
  EXPECT_NE(message.find("truncated frame 13: got 1244 of 1254 bytes"), std::string::npos) << message;
  EXPECT_LE(sink.frames.size(), 12u);
}

// The kilobytes of this process's resident set inside the mapping that holds `address`, as
// the kernel counts them (/proc/self/smaps); -1 when no mapping holds it.
long resident_kib_of_mapping(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2) {  // a mapping's first line
      inside = a >= lo && a < hi;
      continue;
    }
    long kib = 0;
    if (inside && std::sscanf(line.c_str(), "Rss: %ld kB", &kib) == 1) return kib;
  }
  return -1;
}

// The cpu mode transforms a mapped file's frames where they lie; once a frame is encoded its
// pages leave the resident set, so that a long clip's memory stays flat (they stay in the page
// cache). Only the pages a frame shares with its neighbours may stay.
TEST_F(Y4mFiles, MappedFramesLeaveTheResidentSetOnceEncoded) {
  const std::string path = file("resident.y4m");
  const int frames = 40;
  ASSERT_EQ(write_y4m(path, 256, 256, "C420jpeg", frames), "");  // 98304 bytes a frame
  const long page_kib = ::sysconf(_SC_PAGESIZE) / 1024;
  io::Y4mReader reader(path);
  ASSERT_TRUE(reader.map_frames());
  // Every page touched first: the whole file resident, as a reader that keeps its pages has it.
  unsigned sum = 0;
  for (std::size_t i = 0; i < reader.mapping_bytes(); i += 512) sum += reader.mapping()[i];
  EXPECT_NE(sum, 1u);  // (keeps the loop)
  const long whole = resident_kib_of_mapping(reader.mapping());
  ASSERT_GE(whole, frames * 96) << "the touched mapping is resident";
  pipeline::MappedY4mFrameSource source(reader);
  pipeline::PipelineOptions p;
  p.mode = Offload::cpu;
  p.producers = 2;
  p.entropy_threads = 2;
  p.slots = 4;
  EncodeOptions o;
  MemorySink sink;
  within(60, [&] { pipeline::encode_stream(source, o, sink, p); });
  ASSERT_EQ(sink.frames.size(), static_cast<std::size_t>(frames));
  const long after = resident_kib_of_mapping(reader.mapping());
  EXPECT_LE(after, 2 * frames * page_kib + 4 * page_kib)
      << "resident after the encode: " << after << " KiB of " << whole;
}

TEST(Y4mMapping, PipesAndStandardInputAreNotMapped) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string header = "YUV4MPEG2 W8 H4 F25:1 Cmono\n";
  ASSERT_EQ(::write(fds[1], header.data(), header.size()), static_cast<ssize_t>(header.size()));
  ::close(fds[1]);
  std::FILE* f = ::fdopen(fds[0], "rb");
  ASSERT_NE(f, nullptr);
  {
    io::Y4mReader reader(f, "pipe");
    EXPECT_FALSE(reader.map_frames());
    EXPECT_EQ(reader.mapping(), nullptr);
  }
  std::fclose(f);
}

}  // namespace
}  // namespace mjpeg::pipetest
