// The public video API in cpu mode (label cpu): VideoEncoder and encode_all against
// encode_jpeg, the pipeline and libjpeg-turbo; ordering; the copy contract; errors; FileSink.
// The GPU modes run the same bodies in test_video_encoder_gpu.cpp.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>

#include "api_test_util.hpp"
#include "common/oracle.hpp"
#include "device_info.hpp"
#include "gpu_transform.hpp"
#include "io/frame_sink.hpp"
#include "mjpeg/devices.hpp"
#include "mjpeg/files.hpp"
#include "mjpeg/y4m.hpp"
#include "api/internal.hpp"
#include "jpeg/planar.hpp"
#include "pipeline/frame_source.hpp"
#include "pipeline/pipeline.hpp"

namespace mjpeg::apitest {
namespace {

class CpuPush : public ::testing::TestWithParam<ApiCase> {};
TEST_P(CpuPush, ByteIdenticalToEncodeJpegInOrder) { check_push(GetParam(), Offload::cpu); }
INSTANTIATE_TEST_SUITE_P(Cases, CpuPush, ::testing::ValuesIn(api_cases()),
                         [](const auto& info) { return name_of(info.param); });

class CpuPull : public ::testing::TestWithParam<ApiCase> {};
TEST_P(CpuPull, SerialSourceByteIdentical) { check_pull(GetParam(), Offload::cpu, false); }
TEST_P(CpuPull, ConcurrentSourceByteIdentical) { check_pull(GetParam(), Offload::cpu, true); }
INSTANTIATE_TEST_SUITE_P(Cases, CpuPull, ::testing::ValuesIn(api_cases()),
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

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

template <class E, class Fn>
std::string message_of(Fn fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception type: ") + e.what();
  }
  return "no exception";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

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

// ---------------------------------------------------------------------------------------------
// FileSink
// ---------------------------------------------------------------------------------------------

std::string temp_dir() {
  std::string t = (std::filesystem::temp_directory_path() / "mjpeg_api_XXXXXX").string();
  if (!mkdtemp(t.data())) throw std::runtime_error("mkdtemp failed");
  return t;
}

std::vector<std::uint8_t> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(FileSink, WritesMjpegStreamAviAndSequence) {
  const std::string dir = temp_dir();
  VideoOptions o;
  o.width = 40;
  o.height = 30;
  const auto frames = make_frames(o, 5);
  const auto ref = reference(frames, o.jpeg);
  {
    FileSink raw(dir + "/out.mjpeg", o.width, o.height);
    FileSink avi(dir + "/out.avi", o.width, o.height, 30000, 1001);
    FileSink seq(dir + "/f%03d.jpg", o.width, o.height);
    struct Tee final : FrameSink {
      std::vector<FrameSink*> out;
      void write(const EncodedFrame& f) override {
        for (FrameSink* s : out) s->write(f);
      }
    } tee;
    tee.out = {&raw, &avi, &seq};
    encode_all(o, *std::make_unique<VectorSource>(frames, false), tee);
    EXPECT_FALSE(std::filesystem::exists(dir + "/out.avi")) << "published only at close()";
    raw.close();
    avi.close();
    seq.close();
    EXPECT_EQ(avi.frames_written(), 5);
    EXPECT_GT(avi.bytes_written(), raw.bytes_written());
  }
  std::vector<std::uint8_t> joined;
  for (const auto& r : ref) joined.insert(joined.end(), r.begin(), r.end());
  EXPECT_EQ(slurp(dir + "/out.mjpeg"), joined);
  EXPECT_EQ(slurp(dir + "/f005.jpg"), ref[4]);
  const auto avi = slurp(dir + "/out.avi");
  ASSERT_GT(avi.size(), 12u);
  EXPECT_EQ(std::string(avi.begin(), avi.begin() + 4), "RIFF");
  EXPECT_EQ(std::string(avi.begin() + 8, avi.begin() + 12), "AVI ");
  std::filesystem::remove_all(dir);
}

TEST(FileSink, ErrorsAndNoLeftovers) {
  const std::string dir = temp_dir();
  EXPECT_TRUE(contains(message_of<UsageError>([&] { FileSink s(dir + "/x.mp4", 8, 8); }), "x.mp4"));
  EXPECT_TRUE(contains(message_of<UsageError>([&] { FileSink s(dir + "/x.avi", 0, 8); }), "outside"));
  EXPECT_TRUE(contains(message_of<UsageError>([&] { FileSink s(dir + "/x.avi", 8, 8, 0, 1); }),
                       "frame rate 0/1"));
  { std::ofstream(dir + "/exists.avi") << "keep"; }
  EXPECT_NE(message_of<Error>([&] { FileSink s(dir + "/exists.avi", 8, 8, 25, 1, false); }),
            "no exception");
  EXPECT_EQ(slurp(dir + "/exists.avi").size(), 4u);
  {
    FileSink s(dir + "/abandoned.avi", 8, 8);
    const std::vector<std::uint8_t> pixels(8 * 8 * 3, 9);
    const std::vector<std::uint8_t> j =
        encode_jpeg(ImageView{pixels.data(), 8, 8, PixelFormat::rgb24, 24}, EncodeOptions{});
    s.write(EncodedFrame{0, j.data(), j.size()});
  }  // no close(): nothing stays
  std::size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) entries += e.path().filename() != "exists.avi";
  EXPECT_EQ(entries, 0u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace mjpeg::apitest

// ---------------------------------------------------------------------------------------------
// Callbacks and statistics (what `mjpeg encode` prints: progress, --psnr, --stats)
// ---------------------------------------------------------------------------------------------

namespace mjpeg::apitest {
namespace {

/// on_progress counts every delivered frame once, in order; on_frame sees each frame once with
/// the pixels it was encoded from (the reference picture: bgr24 reordered, planar converted as
/// the Y4M reader converts) and the very bytes that are delivered.
void check_callbacks(FrameFormat format, YuvMatrix matrix, bool pull) {
  VideoOptions o;
  o.width = 45;
  o.height = 29;
  o.format = format;
  o.matrix = matrix;
  o.jpeg.quality = 81;
  o.entropy_threads = 3;
  const int n = 7;
  const auto frames = make_frames(o, n);
  std::mutex mutex;
  std::vector<std::int64_t> progress;  // frames, as reported
  bool elapsed_went_back = false;
  double last_elapsed = 0;
  std::map<std::int64_t, std::vector<std::uint8_t>> seen_jpeg;
  std::vector<std::string> pixel_errors;
  o.on_progress = [&](const Progress& p) {
    std::lock_guard<std::mutex> lock(mutex);
    progress.push_back(p.frames);
    if (p.elapsed_s < last_elapsed) elapsed_went_back = true;
    last_elapsed = p.elapsed_s;
  };
  o.on_frame = [&](const ImageView& pixels, const EncodedFrame& jpeg) {
    const TestFrame& t = frames.at(static_cast<std::size_t>(jpeg.index));
    const ImageView ref = t.reference();
    std::string error;
    if (pixels.width != ref.width || pixels.height != ref.height || pixels.format != ref.format)
      error = "size or format differs";
    for (int y = 0; error.empty() && y < ref.height; ++y)
      if (std::memcmp(pixels.data + std::size_t(y) * pixels.stride,
                      ref.data + std::size_t(y) * ref.stride,
                      std::size_t(ref.width) * (ref.format == PixelFormat::gray8 ? 1 : 3)) != 0)
        error = "row " + std::to_string(y) + " differs";
    std::lock_guard<std::mutex> lock(mutex);
    if (!error.empty()) pixel_errors.push_back("frame " + std::to_string(jpeg.index) + ": " + error);
    EXPECT_TRUE(seen_jpeg.emplace(jpeg.index, std::vector<std::uint8_t>(jpeg.data, jpeg.data + jpeg.size)).second)
        << "frame " << jpeg.index << " seen twice";
  };
  std::vector<std::vector<std::uint8_t>> delivered;
  within(60, [&] {
    if (pull) {
      VectorSource source(frames, true);
      MemorySink sink;
      encode_all(o, source, sink);
      delivered = sink.frames;
    } else {
      delivered = push_all(o, frames);
    }
  });
  const std::string what = std::string(to_string(format)) + (pull ? " pull" : " push");
  std::vector<std::int64_t> expected(n);
  for (int i = 0; i < n; ++i) expected[std::size_t(i)] = i + 1;
  EXPECT_EQ(progress, expected) << what;
  EXPECT_FALSE(elapsed_went_back) << what;
  EXPECT_TRUE(pixel_errors.empty()) << what << ": " << (pixel_errors.empty() ? "" : pixel_errors[0]);
  ASSERT_EQ(seen_jpeg.size(), std::size_t(n)) << what;
  ASSERT_EQ(delivered.size(), std::size_t(n)) << what;
  for (int i = 0; i < n; ++i) EXPECT_EQ(seen_jpeg[i], delivered[std::size_t(i)]) << what << " frame " << i;
  expect_same(reference(frames, o.jpeg), delivered);
}

TEST(VideoCallbacks, ProgressAndFrameObserverSeeEveryFrame) {
  for (bool pull : {false, true}) {
    check_callbacks(FrameFormat::rgb24, YuvMatrix::bt601, pull);
    check_callbacks(FrameFormat::bgr24, YuvMatrix::bt601, pull);
    check_callbacks(FrameFormat::gray8, YuvMatrix::bt601, pull);
    check_callbacks(FrameFormat::yuv420p, YuvMatrix::bt709, pull);
    check_callbacks(FrameFormat::yuv444p, YuvMatrix::bt2020, pull);
  }
}

TEST(VideoCallbacks, ObserverErrorStopsTheEncode) {
  VideoOptions o;
  o.width = 32;
  o.height = 16;
  const auto frames = make_frames(o, 6);
  o.on_frame = [](const ImageView&, const EncodedFrame& jpeg) {
    if (jpeg.index == 3) throw Error("observer: frame 3 is not wanted");
  };
  VectorSource source(frames, false);
  MemorySink sink;
  within(60, [&] {
    EXPECT_EQ(message_of<Error>([&] { encode_all(o, source, sink); }),
              "observer: frame 3 is not wanted");
  });
  EXPECT_LE(sink.frames.size(), 3u);
}

TEST(VideoStats, BreakdownAndBoundStage) {
  VideoOptions o;
  o.width = 64;
  o.height = 48;
  o.jpeg.quality = 90;
  const auto frames = make_frames(o, 12);
  VectorSource source(frames, true);
  MemorySink sink;
  Stats st;
  within(60, [&] { st = encode_all(o, source, sink); });
  EXPECT_EQ(st.frames, 12);
  EXPECT_GE(st.setup_s, 0.0);
  EXPECT_LE(st.setup_s, st.wall_s);
  // Neither count given: encode_all balances the split itself; it first measures the stages
  // between frames 8 and 32, so 12 frames end with the split they started with.
  EXPECT_TRUE(st.self_balancing);
  EXPECT_EQ(st.rebalances, 0);
  EXPECT_TRUE(st.frames_per_buffer.empty());  // cpu mode: no stream buffer
  EXPECT_EQ(st.upload_issue_s, 0.0);
  EXPECT_EQ(st.result_wait_s, 0.0);
  EXPECT_FALSE(st.bound_by.empty());
  EXPECT_GT(st.bound_fps, 0.0);

  // A source that reads slowly (50 ms a frame, against microseconds of coding): by frame 32
  // the split has moved threads to reading.
  class SlowSource final : public FrameSource {
   public:
    explicit SlowSource(const std::vector<TestFrame>& f) : frames_(f) {}
    bool read(std::int64_t index, std::uint8_t* dst) override {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (index >= static_cast<std::int64_t>(frames_.size())) return false;
      const auto& b = frames_[static_cast<std::size_t>(index)].bytes;
      std::memcpy(dst, b.data(), b.size());
      return true;
    }
    bool concurrent_reads() const override { return true; }

   private:
    const std::vector<TestFrame>& frames_;
  };
  VideoOptions balanced = o;
  balanced.width = 16;
  balanced.height = 16;
  balanced.threads = 8;
  const auto slow_frames = make_frames(balanced, 40);
  SlowSource slow(slow_frames);
  MemorySink slow_sink;
  within(60, [&] { st = encode_all(balanced, slow, slow_sink); });
  expect_same(reference(slow_frames, balanced.jpeg), slow_sink.frames);
  EXPECT_TRUE(st.self_balancing);
  EXPECT_GE(st.rebalances, 1);
  EXPECT_GT(st.producers, 2);
  EXPECT_EQ(st.producers + st.entropy_threads, 8);

  VideoOptions fixed = o;
  fixed.producers = 1;
  fixed.entropy_threads = 2;
  VectorSource again(frames, true);
  MemorySink sink2;
  within(60, [&] { st = encode_all(fixed, again, sink2); });
  EXPECT_FALSE(st.self_balancing);
  EXPECT_EQ(st.rebalances, 0);
  EXPECT_EQ(st.producers, 1);
  EXPECT_EQ(st.entropy_threads, 2);
}

}  // namespace
}  // namespace mjpeg::apitest

// ---------------------------------------------------------------------------------------------
// Y4mSource, planar mono, own coefficients, to_pixels, slot counts
// ---------------------------------------------------------------------------------------------

namespace mjpeg::apitest {
namespace {

/// A Y4M file of `frames` (planar, contiguous layout) in a fresh temporary folder.
struct Y4mFile {
  std::filesystem::path dir, path;
  Y4mFile(const VideoOptions& o, const std::vector<TestFrame>& frames, const std::string& extra,
          const std::string& tag) {
    dir = std::filesystem::temp_directory_path() /
          ("mjpeg_api_y4m_" + std::to_string(::getpid()) + "_" + tag);
    std::filesystem::create_directories(dir);
    path = dir / "in.y4m";
    std::ofstream f(path, std::ios::binary);
    const char* c = o.format == FrameFormat::yuv420p   ? "420jpeg"
                    : o.format == FrameFormat::yuv422p ? "422"
                    : o.format == FrameFormat::yuv400p ? "mono"
                                                       : "444";
    f << "YUV4MPEG2 W" << o.width << " H" << o.height << " F30000:1001 Ip A1:1 C" << c << extra
      << "\n";
    for (const TestFrame& t : frames) {
      f << "FRAME\n";
      f.write(reinterpret_cast<const char*>(t.bytes.data()), std::streamsize(t.bytes.size()));
    }
  }
  ~Y4mFile() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

TEST(Y4mSource, EveryWayOfReadingWritesTheBytesOfEncodeJpeg) {
  for (const FrameFormat f : {FrameFormat::yuv420p, FrameFormat::yuv422p, FrameFormat::yuv444p,
                              FrameFormat::yuv400p}) {
    VideoOptions o;
    o.width = 53;
    o.height = 31;
    o.format = f;
    o.matrix = YuvMatrix::bt709;
    o.jpeg.quality = 85;
    const auto frames = make_frames(o, 9);
    const auto expected = reference(frames, o.jpeg);
    const Y4mFile file(o, frames, " XCOLORRANGE=LIMITED", to_string(f));
    for (const bool map : {false, true}) {
      SCOPED_TRACE(std::string(to_string(f)) + (map ? " mapped" : " read"));
      Y4mReadOptions ro;
      ro.map = map;
      ro.matrix = YuvMatrix::bt709;
      Y4mSource source(file.path.string(), ro);
      EXPECT_EQ(source.stream().format, f);
      EXPECT_EQ(source.stream().matrix, YuvMatrix::bt709);
      EXPECT_FALSE(source.stream().header_matrix.has_value());
      ASSERT_TRUE(source.stream().header_range.has_value());
      EXPECT_EQ(*source.stream().header_range, YuvRange::limited);
      EXPECT_EQ(source.stream().fps_num, 30000);
      EXPECT_EQ(source.stream().fps_den, 1001);
      EXPECT_EQ(source.frame_count(), 9);
      VideoOptions run = source.video_options();
      run.jpeg = o.jpeg;
      run.producers = 3;
      run.entropy_threads = 2;
      MemorySink sink;
      Stats st;
      within(60, [&] { st = encode_all(run, source, sink); });
      EXPECT_TRUE(sink.in_order());
      expect_same(expected, sink.frames);
      EXPECT_LE(st.slots, 9);
    }
    // A frame range: frames 3..6.
    Y4mReadOptions range;
    range.first_frame = 3;
    range.max_frames = 4;
    range.matrix = YuvMatrix::bt709;
    Y4mSource part(file.path.string(), range);
    EXPECT_EQ(part.frame_count(), 4);
    VideoOptions run = part.video_options();
    run.jpeg = o.jpeg;
    MemorySink sink;
    within(60, [&] { encode_all(run, part, sink); });
    expect_same({expected.begin() + 3, expected.begin() + 7}, sink.frames);
    // Through a pipe, sequentially; and read() by hand in order.
    std::FILE* pipe = ::popen(("cat '" + file.path.string() + "'").c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    {
      Y4mSource piped(pipe, "the pipe", range);
      EXPECT_EQ(piped.frame_count(), -1);
      std::vector<std::uint8_t> buf(frame_bytes(run));
      for (int i = 0; i < 4; ++i) {
        ASSERT_TRUE(piped.read(i, buf.data()));
        EXPECT_EQ(buf, frames[std::size_t(i + 3)].bytes) << "frame " << i;
      }
      EXPECT_FALSE(piped.read(4, buf.data()));
    }
    ::pclose(pipe);
  }
}

TEST(Y4mSource, ErrorsAreClear) {
  VideoOptions o;
  o.width = 16;
  o.height = 16;
  o.format = FrameFormat::yuv420p;
  const auto frames = make_frames(o, 2);
  const Y4mFile file(o, frames, "", "errors");
  Y4mSource source(file.path.string());
  VideoOptions wrong = source.video_options();
  wrong.matrix = YuvMatrix::bt709;
  MemorySink sink;
  EXPECT_TRUE(contains(message_of<UsageError>([&] { encode_all(wrong, source, sink); }),
                       "the VideoOptions do not describe the Y4M stream (16x16"));
  EXPECT_TRUE(contains(message_of<Error>([&] { Y4mSource missing((file.dir / "none.y4m").string()); }),
                       "none.y4m"));
  Y4mReadOptions bad;
  bad.first_frame = -1;
  EXPECT_TRUE(contains(message_of<UsageError>([&] { Y4mSource s(file.path.string(), bad); }),
                       "first_frame -1 is negative"));
  // A truncated last frame is an error, not a short stream.
  std::filesystem::resize_file(file.path, std::filesystem::file_size(file.path) - 10);
  Y4mSource cut(file.path.string());
  EXPECT_TRUE(contains(message_of<Error>([&] { encode_all(cut.video_options(), cut, sink); }),
                       "in.y4m"));
}

TEST(VideoFormats, OwnCoefficientsAndToPixels) {
  VideoOptions o;
  o.width = 37;
  o.height = 22;
  o.format = FrameFormat::yuv422p;
  // A truncated-form conversion (libswscale's kind) with arbitrary coefficients.
  o.coefficients = YuvCoefficients{true, 16 * 8, 76309, 104597, -25675, -53279, 132201};
  auto frames = make_frames(o, 3);
  const pipeline::SourceFormat sf = api::source_format(o);
  std::vector<std::uint8_t> rgb(std::size_t(o.width) * o.height * 3);
  for (TestFrame& t : frames) {
    planar_to_rgb(planar_view(t.bytes.data(), o.width, o.height, sf.planar), t.pixels.data(),
                  std::size_t(o.width) * 3);
    // to_pixels: the same conversion, into a padded buffer.
    std::vector<std::uint8_t> padded(std::size_t(o.width * 3 + 5) * o.height);
    to_pixels(FrameView::contiguous(t.bytes.data(), o), o, padded.data(), o.width * 3 + 5);
    for (int y = 0; y < o.height; ++y)
      ASSERT_EQ(0, std::memcmp(padded.data() + std::size_t(y) * (o.width * 3 + 5),
                               t.pixels.data() + std::size_t(y) * o.width * 3, o.width * 3));
  }
  EXPECT_NE(frames[0].pixels, make_frames([&] { VideoOptions p; p.width = o.width; p.height = o.height; p.format = o.format; return p; }(), 1)[0].pixels)
      << "the coefficients changed nothing";
  expect_same(reference(frames, o.jpeg), push_all(o, frames));
  // bgr24 and gray8 through to_pixels.
  VideoOptions b = o;
  b.format = FrameFormat::bgr24;
  b.coefficients.reset();
  const auto bgr = make_frames(b, 1);
  std::vector<std::uint8_t> out(std::size_t(b.width) * b.height * 3);
  to_pixels(FrameView::contiguous(bgr[0].bytes.data(), b), b, out.data(), b.width * 3);
  EXPECT_EQ(out, bgr[0].pixels);
  EXPECT_TRUE(contains(message_of<UsageError>([&] {
                         to_pixels(FrameView::contiguous(bgr[0].bytes.data(), b), b, out.data(), 10);
                       }),
                       "stride 10 smaller than a row"));
}

TEST(VideoFormats, SlotCountsAndDeviceMemory) {
  VideoOptions o;
  o.width = 64;
  o.height = 64;
  EXPECT_EQ(slot_count(o, false, 1), 1);  // a still picture: one slot
  EXPECT_GT(slot_count(o, false), 1);
  o.slots = 5;
  EXPECT_EQ(slot_count(o, false, 1), 5);  // asked for: kept
  // No GPU here (or a big one): a small frame always fits.
  EXPECT_EQ(gpu_memory_problem(o, 8), "");
  o.width = 0;
  EXPECT_TRUE(contains(message_of<UsageError>([&] { slot_count(o, true); }), "width 0"));
}

}  // namespace
}  // namespace mjpeg::apitest

namespace mjpeg::apitest {
namespace {

TEST(FileSink, ChecksBeforeCreatingAnything) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("mjpeg_api_check_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string avi = (dir / "a.avi").string(), jpg = (dir / "one.JPG").string();
  const std::string pattern = (dir / "f%03d.jpg").string();
  for (const std::string& p : {avi, jpg, pattern, std::string("-"), (dir / "s.mjpeg").string()})
    EXPECT_NO_THROW(FileSink::check_name(p)) << p;
  EXPECT_TRUE(contains(message_of<UsageError>([&] { FileSink::check_name((dir / "x.mp4").string()); }),
                       "unsupported output type"));
  EXPECT_NO_THROW(FileSink::check_target(avi, false));
  std::ofstream(avi) << "x";
  std::ofstream((dir / "f001.jpg").string()) << "x";
  EXPECT_FALSE(message_of<Error>([&] { FileSink::check_target(avi, false); }).empty());
  EXPECT_NO_THROW(FileSink::check_target(avi, true));
  EXPECT_FALSE(message_of<Error>([&] { FileSink::check_target(pattern, false); }).empty());
  EXPECT_TRUE(contains(message_of<Error>([&] {
                         FileSink::check_target((dir / "none" / "b.avi").string(), true);
                       }),
                       "none"));
  // One picture: the first frame is written, a second is an error; nothing was created before.
  EXPECT_FALSE(std::filesystem::exists(jpg));
  {
    FileSink sink(jpg, 16, 16);
    const std::vector<std::uint8_t> jpeg = encode_jpeg(
        ImageView{std::vector<std::uint8_t>(16 * 16 * 3, 90).data(), 16, 16, PixelFormat::rgb24, 48},
        EncodeOptions{});
    sink.write(EncodedFrame{0, jpeg.data(), jpeg.size()});
    EXPECT_FALSE(message_of<Error>([&] { sink.write(EncodedFrame{1, jpeg.data(), jpeg.size()}); }).empty());
    sink.close();
    EXPECT_EQ(std::filesystem::file_size(jpg), jpeg.size());
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

}  // namespace
}  // namespace mjpeg::apitest

namespace mjpeg::apitest {
namespace {

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

namespace mjpeg::apitest {
namespace {

/// Every frame has its spans: one write span per frame, and the kinds the mode runs.
void expect_timeline(const Profile& p, int frames, const std::vector<std::string>& kinds) {
  ASSERT_FALSE(p.tracks.empty());
  std::map<std::string, int> count;
  std::vector<int> writes(static_cast<std::size_t>(frames), 0);
  for (const TimelineSpan& s : p.spans) {
    ASSERT_GE(s.track, 0);
    ASSERT_LT(s.track, static_cast<int>(p.tracks.size()));
    EXPECT_LE(s.start_s, s.end_s);
    ++count[s.kind];
    if (s.kind == "write") {
      ASSERT_GE(s.frame, 0);
      ASSERT_LT(s.frame, frames);
      ++writes[static_cast<std::size_t>(s.frame)];
    }
  }
  for (const std::string& k : kinds) EXPECT_GT(count[k], 0) << k;
  for (int f = 0; f < frames; ++f) EXPECT_EQ(writes[static_cast<std::size_t>(f)], 1) << "frame " << f;
}

TEST(VideoProfile, CpuModeStagesAndTimeline) {
  VideoOptions o;
  o.width = 96;
  o.height = 64;
  o.entropy_threads = 2;
  const auto frames = make_frames(o, 10);
  for (const bool pull : {true, false}) {
    Profile profile;
    std::mutex mutex;
    std::map<std::int64_t, std::vector<std::uint8_t>> seen;
    VideoOptions run = o;
    run.profile = &profile;
    run.on_jpeg = [&](const EncodedFrame& f) {
      std::lock_guard<std::mutex> lock(mutex);
      EXPECT_TRUE(seen.emplace(f.index, std::vector<std::uint8_t>(f.data, f.data + f.size)).second);
    };
    std::vector<std::vector<std::uint8_t>> delivered;
    within(60, [&] {
      if (pull) {
        VectorSource source(frames, true);
        MemorySink sink;
        encode_all(run, source, sink);
        delivered = sink.frames;
      } else {
        delivered = push_all(run, frames);
      }
    });
    SCOPED_TRACE(pull ? "pull" : "push");
    ASSERT_EQ(seen.size(), 10u);
    for (int i = 0; i < 10; ++i) EXPECT_EQ(seen[i], delivered[std::size_t(i)]);
    EXPECT_GT(profile.fps, 0.0);
    std::vector<std::string> names;
    for (const StageLoad& s : profile.stages) names.push_back(s.name);
    EXPECT_EQ(names, (std::vector<std::string>{"produce", "transform+entropy", "write"}));
    EXPECT_FALSE(profile.bound_by.empty());
    EXPECT_GT(profile.bound_fps, 0.0);
    EXPECT_FALSE(profile.gpu_timed);
    EXPECT_EQ(profile.gpu_output, "");
    EXPECT_TRUE(profile.buffers.empty());
    expect_timeline(profile, 10, {"read", "transform", "entropy", "write"});
  }
}

}  // namespace
}  // namespace mjpeg::apitest

namespace mjpeg::apitest {
namespace {

TEST(VideoStats, ThreadsSetsTheTotalOfTheBalancingSplit) {
  VideoOptions o;
  o.width = 48;
  o.height = 32;
  o.threads = 3;
  const auto frames = make_frames(o, 12);
  VectorSource source(frames, true);
  MemorySink sink;
  Stats st;
  within(60, [&] { st = encode_all(o, source, sink); });
  EXPECT_TRUE(st.self_balancing);
  EXPECT_EQ(st.producers + st.entropy_threads, 3);
  EXPECT_EQ(st.slots, 8);  // max(8, threads + 2) in the cpu mode
  expect_same(reference(frames, o.jpeg), sink.frames);
  o.threads = -1;
  EXPECT_TRUE(contains(message_of<UsageError>([&] { validate(o); }), "threads -1 is outside 0..1024"));
}

}  // namespace
}  // namespace mjpeg::apitest

namespace mjpeg::apitest {
namespace {

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

// ---------------------------------------------------------------------------------------------
// The coefficient builders (video.hpp) and the file helpers (files.hpp)
// ---------------------------------------------------------------------------------------------
namespace mjpeg::apitest {
namespace {

TEST(VideoFormats, RoundedCoefficientsOfAMatrixConvertAsTheMatrixDoes) {
  struct Weights {
    YuvMatrix matrix;
    double kr, kb;
  };
  for (const Weights w : {Weights{YuvMatrix::bt601, 0.299, 0.114},
                          Weights{YuvMatrix::bt709, 0.2126, 0.0722},
                          Weights{YuvMatrix::bt2020, 0.2627, 0.0593}})
    for (const YuvRange range : {YuvRange::limited, YuvRange::full}) {
      VideoOptions by_matrix;
      by_matrix.width = 29;
      by_matrix.height = 17;
      by_matrix.format = FrameFormat::yuv420p;
      by_matrix.matrix = w.matrix;
      by_matrix.range = range;
      VideoOptions by_coefficients = by_matrix;
      by_coefficients.matrix = YuvMatrix::bt601;  // the coefficients decide, not these
      by_coefficients.range = YuvRange::full;
      by_coefficients.coefficients = rounded_coefficients(w.kr, w.kb, range);
      EXPECT_FALSE(by_coefficients.coefficients->truncated);
      const auto frames = make_frames(by_matrix, 2);
      for (const TestFrame& t : frames) {
        std::vector<std::uint8_t> a(std::size_t(29) * 17 * 3), b(a.size());
        to_pixels(FrameView::contiguous(t.bytes.data(), by_matrix), by_matrix, a.data(), 29 * 3);
        to_pixels(FrameView::contiguous(t.bytes.data(), by_coefficients), by_coefficients,
                  b.data(), 29 * 3);
        ASSERT_EQ(a, b) << to_string(by_matrix.format) << " matrix " << int(w.matrix)
                        << (range == YuvRange::full ? " full" : " limited");
      }
    }
  EXPECT_THROW(rounded_coefficients(0.6, 0.5, YuvRange::full), UsageError);
  EXPECT_THROW(rounded_coefficients(0, 0.1, YuvRange::full), UsageError);
}

TEST(VideoFormats, SwscaleCoefficientsFollowLibswscalesDerivation) {
  // libswscale's table for BT.601 (Cr->R, Cb->B, Cb->G, Cr->G in 16 fractional bits).
  const int bt601[4] = {117489, 138438, 13975, 34925};
  const YuvCoefficients k = swscale_coefficients(bt601, YuvRange::limited);
  EXPECT_TRUE(k.truncated);
  // y0 = 16 * 8; cy = (65536 * 255 / 219) * 8192 / 65536 and each chroma entry * 8192 / 65536,
  // rounded half up, G's negated.
  EXPECT_EQ(k.y0, 128);
  EXPECT_EQ(k.cy, 9539);
  EXPECT_EQ(k.cr_r, 14686);
  EXPECT_EQ(k.cb_g, -1747);
  EXPECT_EQ(k.cr_g, -4366);
  EXPECT_EQ(k.cb_b, 17305);
  const YuvCoefficients f = swscale_coefficients(bt601, YuvRange::full);
  EXPECT_EQ(f.y0, 0);
  EXPECT_EQ(f.cy, 8192);
  EXPECT_EQ(f.cr_r, 12901);  // the chroma entries first scaled by 224 / 255
  EXPECT_EQ(f.cb_b, 15201);
  // Black, white and grey stay neutral through the truncated form.
  VideoOptions o;
  o.width = 2;
  o.height = 2;
  o.format = FrameFormat::yuv444p;
  o.coefficients = k;
  for (const int y : {16, 235}) {
    const std::vector<std::uint8_t> frame = {std::uint8_t(y), std::uint8_t(y), std::uint8_t(y),
                                             std::uint8_t(y), 128, 128, 128, 128,
                                             128, 128, 128, 128};
    std::vector<std::uint8_t> rgb(12);
    to_pixels(FrameView::contiguous(frame.data(), o), o, rgb.data(), 6);
    for (const std::uint8_t v : rgb) EXPECT_EQ(v, y == 16 ? 0 : 255) << "Y " << y;
  }
  EXPECT_THROW(swscale_coefficients(nullptr, YuvRange::full), UsageError);
}

TEST(Files, SequencePatternsAndExtensions) {
  SequencePattern p;
  ASSERT_TRUE(SequencePattern::parse("out/%05d.jpg", p));
  EXPECT_EQ(p.name(7), "out/00007.jpg");
  EXPECT_EQ(p.directory(), "out");
  EXPECT_TRUE(p.number_in_file_name());
  EXPECT_EQ(p.number_of("00012.jpg"), 12);
  EXPECT_EQ(p.number_of("12.png"), -1);
  ASSERT_TRUE(SequencePattern::parse("100%%/f%d", p));
  EXPECT_EQ(p.name(3), "100%/f3");
  EXPECT_FALSE(SequencePattern::parse("%d_%d.jpg", p));
  EXPECT_FALSE(SequencePattern::parse("plain.jpg", p));
  EXPECT_FALSE(SequencePattern::parse("%s.jpg", p));
  EXPECT_TRUE(is_sequence_pattern("f%3d.jpg"));
  EXPECT_FALSE(is_sequence_pattern("f%.jpg"));
  EXPECT_EQ(file_extension("clip.AVI"), "avi");
  EXPECT_EQ(file_extension("a.b/c"), "");
  EXPECT_EQ(file_extension("none"), "");
  EXPECT_EQ(file_extension("dir/x.tar.JPEG"), "jpeg");
}

std::vector<std::string> entries_of(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(Files, WriteFileAndCheckOutputAllowed) {
  const std::string dir = temp_dir();
  write_file(dir + "/a.txt", std::string("first"));
  EXPECT_EQ(slurp(dir + "/a.txt").size(), 5u);
  write_file(dir + "/a.txt", std::string("second!"));  // replaced
  EXPECT_EQ(slurp(dir + "/a.txt").size(), 7u);
  EXPECT_NE(message_of<Error>([&] { write_file(dir + "/a.txt", std::string("x"), false); }),
            "no exception");
  EXPECT_EQ(slurp(dir + "/a.txt").size(), 7u);
  EXPECT_EQ(entries_of(dir), std::vector<std::string>{"a.txt"}) << "a temporary file stayed";
  EXPECT_NO_THROW(check_output_allowed(dir + "/a.txt", true));
  EXPECT_NO_THROW(check_output_allowed(dir + "/new.txt", false));
  EXPECT_TRUE(contains(message_of<Error>([&] { check_output_allowed(dir + "/a.txt", false); }),
                       "a.txt"));
  EXPECT_TRUE(contains(message_of<Error>([&] { check_output_allowed(dir, true); }),
                       "is a directory"));
  EXPECT_TRUE(contains(message_of<Error>([&] { check_output_allowed(dir + "/no/x.txt", true); }),
                       "does not exist"));
  EXPECT_TRUE(contains(message_of<Error>([&] { write_file(dir + "/no/x.txt", std::string("x")); }),
                       "x.txt"));
  std::filesystem::remove_all(dir);
}

TEST(Files, RemovePartialOutputsRemovesWhatIsBeingWritten) {
  const std::string dir = temp_dir();
  const std::vector<std::uint8_t> pixels(8 * 8 * 3, 77);
  const std::vector<std::uint8_t> j =
      encode_jpeg(ImageView{pixels.data(), 8, 8, PixelFormat::rgb24, 24}, EncodeOptions{});
  // What a signal handler sees: an AVI and an image sequence half-written.
  FileSink avi(dir + "/part.avi", 8, 8);
  FileSink frames(dir + "/f%03d.jpg", 8, 8);
  avi.write(EncodedFrame{0, j.data(), j.size()});
  frames.write(EncodedFrame{0, j.data(), j.size()});
  ASSERT_FALSE(entries_of(dir).empty());
  remove_partial_outputs();
  EXPECT_EQ(entries_of(dir), std::vector<std::string>{}) << "something half-written stayed";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace mjpeg::apitest
