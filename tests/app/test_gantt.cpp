// Tests of the trace model (Chrome trace JSON -> processes, tracks, spans), its windows, and
// the Gantt picture drawn from it (with OpenCV).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "mjpeg/error.hpp"
#include "app/trace/trace_model.hpp"

#if MJPEG_HAVE_OPENCV
#include <unistd.h>

#include <filesystem>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "app/trace/gantt.hpp"
#endif

namespace mjpeg::app {
namespace {

using nlohmann::json;

// A synthetic trace of two runs of `frames` frames. Upload, kernel and download take 100 us
// each. SOK (pid 7) runs them one after another on its default stream: frame f's upload
// starts at 300 f. AOK (pid 3) overlaps them on three streams: frame f's upload starts at
// 100 f, its kernel at 100 f + 100, its download at 100 f + 200. Each frame's entropy span
// (50 us) starts when its download ends. The pids are in the opposite order of the
// process_sort_index, which must win (SOK above AOK). SOK also has two unnumbered "sync"
// spans on its dispatcher, at 10 us and at 100 ms.
constexpr double kStep = 100.0;
constexpr double kEntropy = 50.0;

json span(const char* name, int pid, int tid, double ts, double dur, int frame) {
  return {{"ph", "X"}, {"name", name}, {"cat", "gpu"}, {"pid", pid}, {"tid", tid},
          {"ts", ts},  {"dur", dur},   {"args", {{"frame", frame}}}};
}

json metadata(const char* kind, int pid, int tid, const char* key, json value) {
  json event = {{"ph", "M"}, {"name", kind}, {"pid", pid}, {"args", {{key, std::move(value)}}}};
  if (tid >= 0) event["tid"] = tid;
  return event;
}

json synthetic_trace(int frames) {
  json events = json::array();
  const int sok = 7, aok = 3;
  events.push_back(metadata("process_name", sok, -1, "name", "SOK"));
  events.push_back(metadata("process_sort_index", sok, -1, "sort_index", 0));
  events.push_back(metadata("process_name", aok, -1, "name", "AOK"));
  events.push_back(metadata("process_sort_index", aok, -1, "sort_index", 1));
  // SOK tracks: tid 1 "entropy 0" sorts after tid 2 "GPU (default stream)".
  events.push_back(metadata("thread_name", sok, 1, "name", "entropy 0"));
  events.push_back(metadata("thread_sort_index", sok, 1, "sort_index", 20));
  events.push_back(metadata("thread_name", sok, 2, "name", "GPU (default stream)"));
  events.push_back(metadata("thread_sort_index", sok, 2, "sort_index", 10));
  events.push_back(metadata("thread_name", sok, 3, "name", "GPU dispatcher"));
  events.push_back(metadata("thread_sort_index", sok, 3, "sort_index", 5));
  events.push_back(metadata("thread_name", sok, 4, "name", "never used"));
  const char* aok_tracks[] = {"GPU upload stream", "GPU kernel stream", "GPU download stream",
                              "entropy 0"};
  for (int i = 0; i < 4; ++i) events.push_back(metadata("thread_name", aok, i + 1, "name", aok_tracks[i]));

  for (int f = 0; f < frames; ++f) {
    const double s = 3 * kStep * f;
    events.push_back(span("upload", sok, 2, s, kStep, f));
    events.push_back(span("kernel", sok, 2, s + kStep, kStep, f));
    events.push_back(span("download", sok, 2, s + 2 * kStep, kStep, f));
    events.push_back(span("entropy", sok, 1, s + 3 * kStep, kEntropy, f));
    const double a = kStep * f;
    events.push_back(span("upload", aok, 1, a, kStep, f));
    events.push_back(span("kernel", aok, 2, a + kStep, kStep, f));
    events.push_back(span("download", aok, 3, a + 2 * kStep, kStep, f));
    events.push_back(span("entropy", aok, 4, a + 3 * kStep, kEntropy, f));
  }
  json early = span("sync", sok, 3, 10, 20, 0);
  early.erase("args");
  json late = early;
  late["ts"] = 100000.0;
  events.push_back(early);
  events.push_back(late);
  events.push_back({{"ph", "C"}, {"name", "slots"}, {"pid", sok}, {"ts", 5}, {"args", {{"used", 3}}}});
  events.push_back({{"ph", "i"}, {"name", "go"}, {"pid", aok}, {"tid", 9}, {"ts", 0}});
  json runs = json::array({{{"name", "AOK"}, {"wall_ms", 12.5}, {"fps", 960.0}, {"frames", frames}}});
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}, {"otherData", {{"runs", runs}}}};
}

Trace parse(const json& j) { return parse_trace_json(j.dump(), "t.json"); }

const TraceTrack& track_named(const TraceProcess& p, const std::string& name) {
  for (const TraceTrack& t : p.tracks)
    if (t.name == name) return t;
  throw std::runtime_error("no track " + name);
}

// ---------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------

TEST(TraceModel, ProcessesTracksAndSpansInDisplayOrder) {
  const Trace trace = parse(synthetic_trace(20));
  ASSERT_EQ(trace.processes.size(), 2u);
  const TraceProcess& sok = trace.processes[0];
  const TraceProcess& aok = trace.processes[1];
  EXPECT_EQ(sok.name, "SOK");
  EXPECT_EQ(sok.pid, 7);
  EXPECT_EQ(aok.name, "AOK");

  // By thread_sort_index; the named track without spans and the instant's tid are dropped.
  ASSERT_EQ(sok.tracks.size(), 3u);
  EXPECT_EQ(sok.tracks[0].name, "GPU dispatcher");
  EXPECT_EQ(sok.tracks[1].name, "GPU (default stream)");
  EXPECT_EQ(sok.tracks[2].name, "entropy 0");
  ASSERT_EQ(aok.tracks.size(), 4u);
  EXPECT_EQ(aok.tracks[0].name, "GPU upload stream");  // no sort index: by tid
  EXPECT_EQ(aok.tracks[3].name, "entropy 0");

  const TraceTrack& stream = sok.tracks[1];
  ASSERT_EQ(stream.spans.size(), 60u);
  EXPECT_EQ(stream.spans[4].name, "kernel");
  EXPECT_EQ(stream.spans[4].frame, 1);
  EXPECT_DOUBLE_EQ(stream.spans[4].start_us, 400.0);
  EXPECT_DOUBLE_EQ(stream.spans[4].dur_us, 100.0);
  EXPECT_EQ(sok.tracks[0].spans[0].frame, -1);  // "sync" has no frame

  EXPECT_FALSE(sok.info.wall_ms.has_value());
  ASSERT_TRUE(aok.info.wall_ms && aok.info.fps && aok.info.frames);
  EXPECT_DOUBLE_EQ(*aok.info.wall_ms, 12.5);
  EXPECT_DOUBLE_EQ(*aok.info.fps, 960.0);
  EXPECT_EQ(*aok.info.frames, 20);
}

TEST(TraceModel, BareEventArrayIsATraceAndUnnamedIdsGetNames) {
  const Trace trace = parse(json::array({span("kernel", 4, 11, 5, 10, 2)}));
  ASSERT_EQ(trace.processes.size(), 1u);
  EXPECT_EQ(trace.processes[0].name, "pid 4");
  ASSERT_EQ(trace.processes[0].tracks.size(), 1u);
  EXPECT_EQ(trace.processes[0].tracks[0].name, "tid 11");
}

TEST(TraceModel, BadInputIsOneLineErrorNamingTheSource) {
  json missing_ts = span("upload", 1, 1, 0, 5, 0);
  missing_ts.erase("ts");
  json negative = span("upload", 1, 1, 0, -5, 0);
  json string_pid = span("upload", 1, 1, 0, 5, 0);
  string_pid["pid"] = "one";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "not valid JSON"},
      {"{\"traceEvents\": [", "not valid JSON"},
      {"{\"traceEvents\": []}\n}", "not valid JSON"},
      {"42", "no \"traceEvents\""},
      {"{\"events\": []}", "no \"traceEvents\""},
      {"{\"traceEvents\": {}}", "no \"traceEvents\""},
      {"{\"traceEvents\": []}", "no spans"},
      {"[{\"ph\": \"i\", \"ts\": 1}]", "no spans"},
      {"[3]", "event 0 is not an object"},
      {"[{\"name\": \"x\"}]", "event 0 has no \"ph\""},
      {json::array({missing_ts}).dump(), "event 0 (ph X) lacks a number \"ts\""},
      {json::array({negative}).dump(), "negative"},
      {json::array({string_pid}).dump(), "lacks an integer \"pid\""},
  };
  for (const auto& [text, expected] : cases) {
    try {
      parse_trace_json(text, "t.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const UsageError& e) {
      ADD_FAILURE() << "a malformed trace is not a usage error: " << e.what();
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(expected), std::string::npos) << text << " -> " << message;
      EXPECT_EQ(message.rfind("t.json", 0), 0u) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }
}

TEST(TraceModel, MissingFileIsAnError) {
  EXPECT_THROW(read_trace_file("/nonexistent/trace.json"), Error);
}

// ---------------------------------------------------------------------------------------------
// Windows
// ---------------------------------------------------------------------------------------------

/// Every frame number shown in `p`.
std::vector<std::int64_t> frames_in(const TraceProcess& p) {
  std::vector<std::int64_t> frames;
  for (const TraceTrack& t : p.tracks)
    for (const TraceSpan& s : t.spans)
      if (s.frame >= 0) frames.push_back(s.frame);
  std::sort(frames.begin(), frames.end());
  frames.erase(std::unique(frames.begin(), frames.end()), frames.end());
  return frames;
}

TEST(TimelineWindowTest, FirstFramesCutsEachRunAtItsOwnFrameAndSharesTheAxis) {
  const Trace trace = parse(synthetic_trace(20));
  TimelineWindow window;
  window.frames = 4;
  const TimelineView view = select_window(trace, window);
  EXPECT_EQ(view.caption, "first 4 frames");
  const TraceProcess& sok = view.trace.processes[0];
  const TraceProcess& aok = view.trace.processes[1];
  const std::vector<std::int64_t> first4 = {0, 1, 2, 3};
  EXPECT_EQ(frames_in(sok), first4);
  EXPECT_EQ(frames_in(aok), first4);
  // SOK finishes frame 3's entropy at 4 * 300 + 50 us; AOK at 3 * 100 + 300 + 50 us.
  EXPECT_DOUBLE_EQ(last_span_end_us(sok), 1250.0);
  EXPECT_DOUBLE_EQ(last_span_end_us(aok), 650.0);
  EXPECT_DOUBLE_EQ(view.from_us, 0.0);
  EXPECT_DOUBLE_EQ(view.to_us, 1250.0);
  EXPECT_EQ(view.done_label, "first 4 frames done");
  EXPECT_EQ(view.done_us, (std::vector<double>{1250.0, 650.0}));
  // The unnumbered sync at 10 us is inside SOK's window; the one at 100 ms is not.
  const TraceTrack& dispatcher = track_named(sok, "GPU dispatcher");
  ASSERT_EQ(dispatcher.spans.size(), 1u);
  EXPECT_DOUBLE_EQ(dispatcher.spans[0].start_us, 10.0);
}

TEST(TimelineWindowTest, MoreFramesThanTheTraceHasShowsEverything) {
  const Trace trace = parse(synthetic_trace(5));
  TimelineWindow window;
  window.frames = 16;
  const TimelineView view = select_window(trace, window);
  EXPECT_EQ(view.caption, "all 5 frames");
  EXPECT_EQ(frames_in(view.trace.processes[1]).size(), 5u);
  // The late unnumbered span starts after SOK's last frame: not shown.
  EXPECT_DOUBLE_EQ(view.to_us, 5 * 300.0 + kEntropy);

  window.kind = TimelineWindow::Kind::all;
  const TimelineView all = select_window(trace, window);
  EXPECT_EQ(all.caption, "whole trace");
  EXPECT_DOUBLE_EQ(all.to_us, 100020.0);  // the late sync
}

TEST(TimelineWindowTest, TimeRangeClipsSpansToTheWindow) {
  const Trace trace = parse(synthetic_trace(20));
  TimelineWindow window;
  window.kind = TimelineWindow::Kind::time_range;
  window.from_ms = 0.15;
  window.to_ms = 0.25;
  const TimelineView view = select_window(trace, window);
  EXPECT_DOUBLE_EQ(view.from_us, 150.0);
  EXPECT_DOUBLE_EQ(view.to_us, 250.0);
  // SOK's stream: frame 0's kernel (100..200) clipped to 150..200, its download (200..300)
  // to 200..250; the upload (0..100) is outside.
  const TraceTrack& stream = track_named(view.trace.processes[0], "GPU (default stream)");
  ASSERT_EQ(stream.spans.size(), 2u);
  EXPECT_EQ(stream.spans[0].name, "kernel");
  EXPECT_DOUBLE_EQ(stream.spans[0].start_us, 150.0);
  EXPECT_DOUBLE_EQ(stream.spans[0].dur_us, 50.0);
  EXPECT_EQ(stream.spans[1].name, "download");
  EXPECT_DOUBLE_EQ(stream.spans[1].end_us(), 250.0);

  // "Done" is the end of the whole run, not of the clipped spans.
  EXPECT_EQ(view.done_label, "run done");
  EXPECT_EQ(view.done_us, (std::vector<double>{100020.0, 19 * 100.0 + 350.0}));

  // An open end runs to the end of the trace.
  window.to_ms = std::numeric_limits<double>::infinity();
  EXPECT_DOUBLE_EQ(select_window(trace, window).to_us, 100020.0);
}

TEST(TimelineWindowTest, EmptyOrInvertedWindowsAreUsageErrors) {
  const Trace trace = parse(synthetic_trace(4));
  TimelineWindow window;
  window.kind = TimelineWindow::Kind::time_range;
  window.from_ms = 2;
  window.to_ms = 1;
  EXPECT_THROW(select_window(trace, window), UsageError);
  window.from_ms = 500;  // after every span
  window.to_ms = 600;
  EXPECT_THROW(select_window(trace, window), UsageError);
  window.kind = TimelineWindow::Kind::first_frames;
  window.frames = 0;
  EXPECT_THROW(select_window(trace, window), UsageError);
}

// ---------------------------------------------------------------------------------------------
// The picture
// ---------------------------------------------------------------------------------------------

#if MJPEG_HAVE_OPENCV

cv::Vec3b bgr(const cv::Scalar& s) {
  return cv::Vec3b(static_cast<uchar>(s[0]), static_cast<uchar>(s[1]), static_cast<uchar>(s[2]));
}

const GanttLayout::Row& row_named(const GanttLayout::Panel& panel, const std::string& name) {
  for (const GanttLayout::Row& row : panel.rows)
    if (row.track == name) return row;
  throw std::runtime_error("no row " + name);
}

/// Pixels of exactly `colour` in rows [top, bottom) and columns [left, right).
int count_colour(const cv::Mat& img, int top, int bottom, int left, int right, cv::Vec3b colour) {
  int n = 0;
  for (int y = std::max(top, 0); y < std::min(bottom, img.rows); ++y)
    for (int x = std::max(left, 0); x < std::min(right, img.cols); ++x)
      n += img.at<cv::Vec3b>(y, x) == colour;
  return n;
}

/// Pixels in the region that are not grey (bars are coloured; background, grid, labels grey).
int count_coloured(const cv::Mat& img, int top, int bottom, int left, int right) {
  int n = 0;
  for (int y = std::max(top, 0); y < std::min(bottom, img.rows); ++y)
    for (int x = std::max(left, 0); x < std::min(right, img.cols); ++x) {
      const cv::Vec3b p = img.at<cv::Vec3b>(y, x);
      n += std::max({p[0], p[1], p[2]}) - std::min({p[0], p[1], p[2]}) > 24;
    }
  return n;
}

TEST(Gantt, PictureHasTheLayoutsSizeAndPanelsInOrder) {
  GanttOptions options;
  options.width = 1600;
  GanttLayout layout;
  const cv::Mat img = draw_gantt(parse(synthetic_trace(20)), options, &layout);
  EXPECT_EQ(img.type(), CV_8UC3);
  EXPECT_EQ(img.cols, 1600);
  EXPECT_EQ(img.rows, layout.height);
  EXPECT_GT(img.rows, 200);
  EXPECT_LT(img.rows, 800);
  ASSERT_EQ(layout.panels.size(), 2u);
  EXPECT_EQ(layout.panels[0].process, "SOK");
  EXPECT_EQ(layout.panels[1].process, "AOK");
  EXPECT_LT(layout.panels[0].rows.back().bottom, layout.panels[1].title_top);
  EXPECT_EQ(layout.caption, "first 16 frames");  // the default window
}

TEST(Gantt, BarsAreDrawnWhereTheSpansAreAndAokIsVisiblyShorter) {
  GanttOptions options;
  options.width = 1600;
  options.window.frames = 4;
  GanttLayout layout;
  const cv::Mat img = draw_gantt(parse(synthetic_trace(20)), options, &layout);
  const GanttLayout::Panel& aok = layout.panels[1];
  const cv::Vec3b upload = bgr(gantt_colour("upload"));

  // AOK's upload of frame 2 spans 200..300 us: its bar is mostly the upload colour (the
  // border and the frame number take the rest), and the number is on it.
  const GanttLayout::Row& up = row_named(aok, "GPU upload stream");
  const int x0 = static_cast<int>(std::ceil(layout.x_of(200.0)));
  const int x1 = static_cast<int>(std::floor(layout.x_of(300.0)));
  ASSERT_GT(x1 - x0, 40) << "bars too narrow for the test";
  const int area = (x1 - x0) * (up.bottom - up.top);
  const int fill = count_colour(img, up.top, up.bottom, x0, x1, upload);
  EXPECT_GT(fill, area / 2);
  const int inner = count_colour(img, up.top + 5, up.bottom - 5, x0 + 3, x1 - 3, upload);
  EXPECT_LT(inner, (x1 - x0 - 6) * (up.bottom - up.top - 10)) << "no frame number on the bar";
  // No upload colour on AOK's kernel or entropy rows, none on its upload row after frame 3.
  const GanttLayout::Row& kernel = row_named(aok, "GPU kernel stream");
  EXPECT_EQ(count_colour(img, kernel.top, kernel.bottom, 0, img.cols, upload), 0);
  EXPECT_GT(count_colour(img, kernel.top, kernel.bottom, 0, img.cols,
                         bgr(gantt_colour("kernel"))), 0);
  const int after = static_cast<int>(std::ceil(layout.x_of(400.0))) + 2;
  EXPECT_EQ(count_colour(img, up.top, up.bottom, after, img.cols, upload), 0);

  // AOK is done at 650 us, SOK at 1250 us: right of AOK's end marker its rows are empty,
  // while SOK's rows still have bars there.
  const int aok_done = static_cast<int>(std::ceil(layout.x_of(650.0))) + 3;
  EXPECT_EQ(count_coloured(img, aok.rows.front().top, aok.rows.back().bottom, aok_done,
                           layout.plot_right), 0);
  const GanttLayout::Panel& sok = layout.panels[0];
  EXPECT_GT(count_coloured(img, sok.rows.front().top, sok.rows.back().bottom, aok_done,
                           layout.plot_right), 1000);
}

TEST(Gantt, NothingIsDrawnInTheRightMarginEvenWhenNarrow) {
  // The legend wraps and the panel titles shrink rather than run off the picture.
  for (const int width : {800, 1000, 1920}) {
    GanttOptions options;
    options.width = width;
    GanttLayout layout;
    const cv::Mat img = draw_gantt(parse(synthetic_trace(20)), options, &layout);
    const cv::Mat strip = img(cv::Rect(width - 8, 0, 8, img.rows));
    EXPECT_EQ(cv::countNonZero(cv::Mat(strip != cv::Scalar(255, 255, 255)).reshape(1)), 0)
        << "width " << width;
  }
}

TEST(Gantt, KnownKindsHaveDistinctColours) {
  const char* kinds[] = {"read", "upload", "kernel",  "download", "dispatch",
                         "transform", "wait", "sync", "entropy", "write"};
  for (const char* a : kinds)
    for (const char* b : kinds)
      if (std::string(a) != b) {
        EXPECT_NE(gantt_colour(a), gantt_colour(b)) << a << " " << b;
      }
  EXPECT_EQ(gantt_colour("something new"), gantt_colour("something new"));
}

TEST(Gantt, WidthOutOfRangeIsAUsageError) {
  GanttOptions options;
  options.width = 100;
  EXPECT_THROW(draw_gantt(parse(synthetic_trace(2)), options), UsageError);
}

TEST(Gantt, WritesALosslessPngAtomicallyAndRefusesToReplaceWithoutOverwrite) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("mjpeg_gantt_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "g.png").string();
  const Trace trace = parse(synthetic_trace(6));
  GanttOptions options;
  options.width = 1000;

  std::size_t bytes = 0;
  const GanttLayout layout = write_gantt_png(trace, options, path, false, &bytes);
  EXPECT_EQ(std::filesystem::file_size(path), bytes);
  const cv::Mat read = cv::imread(path, cv::IMREAD_COLOR);
  ASSERT_FALSE(read.empty());
  EXPECT_EQ(read.cols, 1000);
  EXPECT_EQ(read.rows, layout.height);
  const cv::Mat drawn = draw_gantt(trace, options);
  EXPECT_EQ(cv::norm(read, drawn, cv::NORM_INF), 0.0);  // PNG is lossless

  EXPECT_THROW(write_gantt_png(trace, options, path, false), Error);
  EXPECT_EQ(std::filesystem::file_size(path), bytes);
  options.width = 1200;
  write_gantt_png(trace, options, path, true);
  EXPECT_EQ(cv::imread(path, cv::IMREAD_COLOR).cols, 1200);
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1u);  // no temporary files left
  std::filesystem::remove_all(dir);
}

#endif  // MJPEG_HAVE_OPENCV

}  // namespace
}  // namespace mjpeg::app
