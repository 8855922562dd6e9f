// The pieces of `mjpeg compare`: the Chrome trace JSON of traced runs, the panning frames, the
// stage-bound analysis and the libjpeg-turbo peer.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/compare/bench_rows.hpp"
#include "app/common/cli_options.hpp"
#include "app/compare/frame_store.hpp"
#include "io/frame_sink.hpp"
#include "app/compare/mode_runner.hpp"
#include "mjpeg/encoder.hpp"
#include "mjpeg/error.hpp"
#include "mjpeg/video.hpp"
#include "app/compare/peer_turbojpeg.hpp"
#include "pipeline/analysis.hpp"
#include "pipeline/pipeline.hpp"
#include "app/compare/trace_json.hpp"

namespace mjpeg::app {
namespace {

mjpeg::Image gradient(int w, int h) {
  mjpeg::Image img(w, h, PixelFormat::rgb24);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        img.pixels[(static_cast<std::size_t>(y) * w + x) * 3 + c] =
            static_cast<std::uint8_t>((x * 7 + y * 3 + c * 50 + (x * y) % 13) & 255);
  return img;
}

class NullSink final : public io::FrameSink {
 public:
  void write_frame(const std::uint8_t*, std::size_t size) override {
    ++frames_;
    bytes_ += size;
  }
  void close() override {}
  std::int64_t frames_written() const override { return frames_; }
  std::uint64_t bytes_written() const override { return bytes_; }

 private:
  std::int64_t frames_ = 0;
  std::uint64_t bytes_ = 0;
};

TEST(FrameStore, PanningFramesHaveTheSizeAndDifferAndWrap) {
  const mjpeg::Image picture = gradient(50, 30);
  const FrameStore store = panning_frames(picture, 80, 70, 5);  // larger than the picture
  ASSERT_EQ(store.frames.size(), 5u);
  for (const mjpeg::Image& f : store.frames) {
    EXPECT_EQ(f.width, 80);
    EXPECT_EQ(f.height, 70);
  }
  EXPECT_NE(store.frames[0].pixels, store.frames[1].pixels);
  // Frame 0 starts at the picture's origin and tiles it: pixel (x, y) = picture (x%50, y%30).
  for (int y : {0, 29, 30, 69})
    for (int x : {0, 49, 50, 79})
      for (int c = 0; c < 3; ++c)
        EXPECT_EQ(store.frames[0].pixels[(static_cast<std::size_t>(y) * 80 + x) * 3 + c],
                  picture.pixels[(static_cast<std::size_t>(y % 30) * 50 + x % 50) * 3 + c]);
  // Frame 2 is panned by (16, 6).
  EXPECT_EQ(store.frames[2].pixels[0], picture.pixels[(6 * 50 + 16) * 3]);
  EXPECT_EQ(store.bytes(), 5u * 80 * 70 * 3);
  EXPECT_THROW(panning_frames(picture, 0, 10, 1), UsageError);
}

TEST(RunMode, EveryTimedRunIsCheckedFrameByFrameAgainstTheReference) {
  // The first run records the reference; later runs are checked on the workers. A reference
  // with frame 3 (and 5) changed must be reported as differing from frame 3 on.
  const FrameStore store = panning_frames(gradient(64, 48), 64, 48, 7);
  VideoOptions p;
  p.producers = 1;
  p.entropy_threads = 3;
  p.slots = 6;
  const ModeSpec cpu = parse_mode_spec("cpu");
  std::vector<std::vector<std::uint8_t>> reference;
  ModeResult r = run_mode(cpu, p, store, 2, reference);
  EXPECT_EQ(r.stats.slots, 6);
  EXPECT_EQ(r.stats.entropy_threads, 3);
  EXPECT_GT(r.profile.fps, 0.0);
  EXPECT_FALSE(r.profile.spans.empty());
  ASSERT_EQ(reference.size(), 7u);
  EXPECT_TRUE(r.identical);
  EXPECT_EQ(r.first_difference, -1);
  reference[5].back() ^= 1;
  reference[3][reference[3].size() / 2] ^= 0x40;
  r = run_mode(cpu, p, store, 2, reference);
  EXPECT_FALSE(r.identical);
  EXPECT_EQ(r.first_difference, 3);
  reference.pop_back();  // a frame the reference lacks
  reference[3][reference[3].size() / 2] ^= 0x40;
  reference[5].back() ^= 1;
  r = run_mode(cpu, p, store, 1, reference);
  EXPECT_EQ(r.first_difference, 6);
}

TEST(TraceJson, ProcessesTracksAndSpansOfATracedRun) {
  const FrameStore store = panning_frames(gradient(64, 48), 64, 48, 7);
  Profile profile;
  VideoOptions p = store.format;
  p.producers = 2;
  p.entropy_threads = 2;
  p.slots = 4;
  p.profile = &profile;
  struct Null final : FrameSink {
    void write(const EncodedFrame&) override {}
  } sink;
  const Stats st = encode_all(p, store.source(), sink);
  ASSERT_EQ(st.frames, 7);

  const nlohmann::json doc = nlohmann::json::parse(chrome_trace_json(
      {{"CPU", &profile, st.frames, st.wall_s}, {"EMPTY", nullptr, 0, 0}}));
  ASSERT_TRUE(doc.contains("traceEvents"));
  EXPECT_EQ(doc["displayTimeUnit"], "ms");
  ASSERT_EQ(doc["otherData"]["runs"].size(), 2u);
  EXPECT_EQ(doc["otherData"]["runs"][0]["name"], "CPU");
  EXPECT_EQ(doc["otherData"]["runs"][0]["frames"], 7);

  std::map<int, std::string> process;
  std::map<int, std::string> thread;  // of pid 1
  std::map<int, std::vector<std::pair<double, double>>> spans;  // tid -> (ts, end)
  std::map<std::string, int> per_name;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") process[e["pid"]] = e["args"]["name"];
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 1)
      thread[e["tid"]] = e["args"]["name"];
    if (e["ph"] != "X") continue;
    EXPECT_EQ(e["pid"], 1);
    EXPECT_EQ(e["cat"], "host");
    EXPECT_GE(e["dur"].get<double>(), 0);
    EXPECT_GE(e["args"]["frame"].get<int>(), 0);
    spans[e["tid"]].push_back({e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()});
    ++per_name[e["name"]];
  }
  EXPECT_EQ(process[1], "CPU");
  EXPECT_EQ(process[2], "EMPTY");
  EXPECT_EQ(thread.size(), profile.tracks.size());
  EXPECT_EQ(thread[1], "producer 0");
  EXPECT_EQ(per_name["read"], 7);
  EXPECT_EQ(per_name["transform"], 7);
  EXPECT_EQ(per_name["entropy"], 7);
  EXPECT_EQ(per_name["write"], 7);
  for (auto& [tid, list] : spans) {
    std::sort(list.begin(), list.end());
    for (std::size_t i = 1; i < list.size(); ++i)
      EXPECT_LE(list[i - 1].second, list[i].first) << "overlap on " << thread[tid];
  }
}

TEST(RunAnalysis, TheStageWithTheLowestBoundBinds) {
  pipeline::Stats st;
  st.frames = 100;
  st.wall_s = 1.0;
  st.read_s = 0.5;       // 2 producers: 400 fps
  st.gpu_s = 0.05;       // dispatch: 2000 fps
  st.gpu_timed = true;
  st.upload_gpu_s = 0.2;    // 500 fps
  st.kernel_gpu_s = 0.1;    // 1000 fps
  st.download_gpu_s = 0.1;  // 1000 fps
  st.gpu_union_s = 0.25;    // of 0.4 s of GPU work: 37.5% overlapped
  st.upload_bytes = 100 * 6000000ull;
  st.download_bytes = 100 * 3000000ull;
  st.entropy_s = 3.0;    // 4 workers: 133.3 fps
  st.write_s = 0.01;
  pipeline::PipelineOptions o;
  o.mode = Offload::aok;
  o.producers = 2;
  o.entropy_threads = 4;
  const pipeline::RunAnalysis a = pipeline::analyse(st, o);
  EXPECT_DOUBLE_EQ(a.fps, 100);
  EXPECT_EQ(a.binding, "entropy");
  EXPECT_NEAR(a.bound_fps, 133.333, 1e-3);
  EXPECT_NEAR(a.of_bound, 0.75, 1e-9);
  EXPECT_NEAR(a.overlap, 0.375, 1e-9);
  EXPECT_NEAR(a.h2d_gbps, 3.0, 1e-9);   // 600 MB in 0.2 s
  EXPECT_NEAR(a.d2h_gbps, 3.0, 1e-9);   // 300 MB in 0.1 s
  ASSERT_EQ(a.stages.size(), 7u);       // produce, dispatch, upload, kernel, download, entropy, write

  o.mode = Offload::cpu;
  st.gpu_timed = false;
  st.transform_cpu_s = 1.0;  // with entropy 3.0 on 4 workers: 100 fps
  const pipeline::RunAnalysis c = pipeline::analyse(st, o);
  EXPECT_EQ(c.binding, "transform+entropy");
  EXPECT_NEAR(c.bound_fps, 100, 1e-9);
  EXPECT_EQ(c.overlap, 0);
}

TEST(PeerTurbojpeg, FrameParallelOutputIsIdenticalToOurs) {
  const FrameStore store = panning_frames(gradient(97, 61), 97, 61, 9);
  const std::vector<ImageView> views = store.views();
  for (Subsampling s : {Subsampling::s420, Subsampling::s422, Subsampling::s444, Subsampling::gray}) {
    EncodeOptions o;
    o.quality = 77;
    o.subsampling = s;
    std::vector<std::vector<std::uint8_t>> ours;
    for (const ImageView& v : views) ours.push_back(encode_jpeg(v, o));
    const PeerResult r = run_turbojpeg(views, o, 3, ours);
    if (!r.available) GTEST_SKIP() << r.why_not;
    EXPECT_EQ(r.frames, 9);
    EXPECT_TRUE(r.identical) << to_string(s) << ": " << r.identity_note;
    std::uint64_t bytes = 0;
    for (const auto& j : ours) bytes += j.size();
    EXPECT_EQ(r.jpeg_bytes, bytes);
    // A different reference is noticed.
    ours[4].back() ^= 1;
    EXPECT_FALSE(run_turbojpeg(views, o, 2, ours).identical);
  }
}

TEST(BenchRows, CsvRoundTripAndErrors) {
  BenchRow a;
  a.sweep = "threads";
  a.mode = "aok";
  a.width = 1920;
  a.height = 1080;
  a.frames = 120;
  a.producers = 2;
  a.entropy_threads = 13;
  a.slots = 17;
  a.stages = 2;
  a.variant = "pipeline";
  a.fps = 1521.75;
  a.bound_stage = "gpu offload";
  a.bound_fps = 1715.5;
  a.upload_ms = 0.133;
  a.overlap = 0.1;
  a.identical = false;
  BenchRow b;
  b.sweep = "threads";
  b.mode = "libjpeg-turbo";
  const std::vector<BenchRow> back = parse_bench_csv(bench_csv({a, b}));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].mode, "aok");
  EXPECT_EQ(back[0].bound_stage, "gpu offload");
  EXPECT_EQ(back[0].entropy_threads, 13);
  EXPECT_DOUBLE_EQ(back[0].fps, 1521.75);
  EXPECT_DOUBLE_EQ(back[0].upload_ms, 0.133);
  EXPECT_DOUBLE_EQ(back[0].kernel_ms, -1);
  EXPECT_FALSE(back[0].identical);
  EXPECT_TRUE(back[1].identical);
  EXPECT_EQ(back[1].variant, "");
  EXPECT_THROW(parse_bench_csv(""), Error);
  EXPECT_THROW(parse_bench_csv("sweep,mode\n"), Error);
  std::string text = bench_csv({a});
  EXPECT_THROW(parse_bench_csv(text + "threads,aok\n"), Error);        // too few fields
  const std::size_t fps = text.find("1521.75");
  EXPECT_THROW(parse_bench_csv(text.replace(fps, 7, "fast")), Error);  // not a number
}

// The devices column (stream buffers of a GPU run) round-trips; a CSV of the version before it
// (no devices column) still reads, as one device.
TEST(BenchRows, DevicesColumnAndCsvWithoutIt) {
  BenchRow a;
  a.sweep = "devices";
  a.mode = "aok";
  a.devices = 2;
  a.fps = 3000;
  const std::string text = bench_csv({a});
  ASSERT_NE(text.find(",devices\n"), std::string::npos) << text;  // the last column
  const std::vector<BenchRow> back = parse_bench_csv(text);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].devices, 2);
  EXPECT_EQ(back[0].sweep, "devices");
  // Drop the last field of every line: the previous version's CSV.
  std::string old;
  std::size_t from = 0;
  while (from < text.size()) {
    const std::size_t end = text.find('\n', from);
    const std::string line = text.substr(from, end - from);
    old += line.substr(0, line.rfind(',')) + "\n";
    from = end + 1;
  }
  const std::vector<BenchRow> older = parse_bench_csv(old);
  ASSERT_EQ(older.size(), 1u);
  EXPECT_EQ(older[0].devices, 1);
  EXPECT_DOUBLE_EQ(older[0].fps, 3000);
}

// compare/bench with a device list of D > 1 entries: each GPU mode once per device count
// 1, 2, 4, ... and D, named by the count; the cpu mode once; one entry: nothing changes.
TEST(DeviceCounts, GpuModesOncePerDeviceCount) {
  const std::vector<ModeSpec> modes = parse_mode_list("cpu,sok-pinned,aok");
  EXPECT_EQ(per_device_count(modes, {0}).size(), 3u);
  const std::vector<ModeSpec> two = per_device_count(modes, {0, 0});
  std::vector<std::string> names;
  for (const ModeSpec& m : two) names.push_back(m.name + ":" + device_list_text(m.devices));
  EXPECT_EQ(names, (std::vector<std::string>{"cpu:", "sok-pinned:0", "sok-pinned-2dev:0,0",
                                             "aok:0", "aok-2dev:0,0"}));
  EXPECT_EQ(display_name(two[4]), "AOK 2DEV");
  std::vector<std::string> counts;
  for (const ModeSpec& m : per_device_count(parse_mode_list("aok"), {3, 1, 2, 0, 4, 5}))
    counts.push_back(m.name + ":" + device_list_text(m.devices));
  EXPECT_EQ(counts, (std::vector<std::string>{"aok:3", "aok-2dev:3,1", "aok-4dev:3,1,2,0",
                                              "aok-6dev:3,1,2,0,4,5"}));
}

// The GPU stages of a run with D stream buffers have D lanes (a dispatcher and a device's
// engines each).
TEST(RunAnalysis, GpuStagesHaveALanePerStreamBuffer) {
  pipeline::Stats st;
  st.frames = 100;
  st.wall_s = 1.0;
  st.read_s = 0.1;
  st.gpu_s = 0.5;  // 1 lane: 200 fps; 2 lanes: 400 fps
  st.entropy_s = 0.3;
  st.write_s = 0.01;
  pipeline::PipelineOptions o;
  o.mode = Offload::sok;
  o.producers = 2;
  o.entropy_threads = 1;  // 333 fps
  EXPECT_EQ(pipeline::analyse(st, o).binding, "gpu offload");
  st.buffers.resize(2);
  const pipeline::RunAnalysis two = pipeline::analyse(st, o);
  EXPECT_EQ(two.binding, "entropy");
  EXPECT_NEAR(two.stages[1].bound_fps, 400, 1e-9);
  EXPECT_EQ(two.stages[1].lanes, 2);
}

// --devices: lists, "all", repeats (one more stream buffer on that device) and the errors,
// each a UsageError naming the offending item.
TEST(DeviceList, ParsesListsAllAndRepeats) {
  EXPECT_EQ(parse_device_list("0", 0), (std::vector<int>{0}));
  EXPECT_EQ(parse_device_list("0,1", 0), (std::vector<int>{0, 1}));
  EXPECT_EQ(parse_device_list("3,1", 0), (std::vector<int>{3, 1}));
  EXPECT_EQ(parse_device_list("007", 0), (std::vector<int>{7}));  // decimal, not octal
  EXPECT_EQ(parse_device_list("0,0", 1), (std::vector<int>{0, 0}));  // two buffers on device 0
  EXPECT_EQ(parse_device_list("1,0,1", 2), (std::vector<int>{1, 0, 1}));
  EXPECT_EQ(parse_device_list("1023", 0), (std::vector<int>{1023}));
  // "all": every device the runtime reports (the count is only asked for then).
  EXPECT_EQ(parse_device_list("all", 1), (std::vector<int>{0}));
  EXPECT_EQ(parse_device_list("all", 4), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(parse_device_list("all", 40).size(), static_cast<std::size_t>(kMaxStreamBuffers));
  EXPECT_THROW(parse_device_list("all", 0), Error);
  EXPECT_EQ(device_list_text({0, 0, 2}), "0,0,2");
}

TEST(DeviceList, SyntaxErrorsAreUsageErrorsNamingTheItem) {
  auto message = [](const std::string& text) {
    try {
      parse_device_list(text, 2);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  for (const char* bad : {"", ",", "0,", ",1", "0,,1", "x", "0,x", "-1", "+1", "1.5", " 1",
                          "0x1", "1024", "99999999999", "all,0", "0,all", "ALL"}) {
    const std::string m = message(bad);
    EXPECT_EQ(m.rfind("--devices '" + std::string(bad) + "': ", 0), 0u) << bad << ": " << m;
  }
  EXPECT_NE(message("0,x").find("'x' is not a device index"), std::string::npos);
  EXPECT_NE(message("1024").find("device 1024 is outside 0..1023"), std::string::npos);
  EXPECT_NE(message("0,all").find("'all' stands alone"), std::string::npos);
  std::string seventeen = "0";
  for (int i = 1; i < 17; ++i) seventeen += "," + std::to_string(i % 2);
  EXPECT_NE(message(seventeen).find("more than 16 entries"), std::string::npos);
  std::string sixteen = seventeen.substr(0, seventeen.size() - 2);
  EXPECT_EQ(parse_device_list(sixteen, 0).size(), 16u);
}

}  // namespace
}  // namespace mjpeg::app
