// What an encode reports (what `mjpeg encode` prints: progress, --psnr, --stats, --profile):
// the on_progress and on_frame callbacks see every frame once, an observer's error stops the
// encode; Stats (the stage breakdown, the bound stage, the self-balancing thread split); the
// Profile of a cpu-mode encode (stages and timeline).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api_test_util.hpp"

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
