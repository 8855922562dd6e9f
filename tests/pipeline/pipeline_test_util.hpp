// Shared pieces of the pipeline tests (CPU and GPU binaries): synthetic frames, a memory sink,
// sources that fail or raise the stop flag, a deadlock watchdog, and the test bodies, which
// take the PipelineOptions (and so the mode) as a parameter.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "io/frame_sink.hpp"
#include "io/image.hpp"
#include "mjpeg/encoder.hpp"
#include "mjpeg/error.hpp"
#include "pipeline/frame_source.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/trace.hpp"

namespace mjpeg::pipetest {

/// Deterministic frames: gradients, hard edges and noise, different for every `seed`.
inline io::Image synthetic(int w, int h, PixelFormat f, std::uint32_t seed) {
  io::Image img(w, h, f);
  const int ch = channels(f);
  std::uint32_t s = seed * 2654435761u + 777u;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < ch; ++c) {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        int v = (x * (2 + c) + y * (3 + static_cast<int>(seed % 5)) + static_cast<int>(seed) * 11) % 256;
        if (((x / 13) + (y / 9) + c) % 3 == 0) v = 255 - v;
        v += static_cast<int>(s % 41) - 20;
        img.pixels[(static_cast<std::size_t>(y) * w + x) * ch + c] =
            static_cast<std::uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
      }
  return img;
}

inline std::vector<io::Image> make_frames(int n, int w, int h, PixelFormat f) {
  std::vector<io::Image> frames;
  for (int i = 0; i < n; ++i) frames.push_back(synthetic(w, h, f, static_cast<std::uint32_t>(i + 1)));
  return frames;
}

inline std::vector<ImageView> views(const std::vector<io::Image>& frames) {
  std::vector<ImageView> v;
  for (const auto& f : frames) v.push_back(f.view());
  return v;
}

/// Keeps every frame in memory; optionally throws (like a full disk) on frame `fail_at`.
class MemorySink final : public io::FrameSink {
 public:
  explicit MemorySink(std::int64_t fail_at = -1) : fail_at_(fail_at) {}
  void write_frame(const std::uint8_t* jpeg, std::size_t size) override {
    if (static_cast<std::int64_t>(frames.size()) == fail_at_) throw Error("memory sink: disk full");
    frames.emplace_back(jpeg, jpeg + size);
    bytes_ += size;
  }
  void close() override { closed = true; }
  std::int64_t frames_written() const override { return static_cast<std::int64_t>(frames.size()); }
  std::uint64_t bytes_written() const override { return bytes_; }
  std::vector<std::vector<std::uint8_t>> frames;
  bool closed = false;

 private:
  std::int64_t fail_at_;
  std::uint64_t bytes_ = 0;
};

/// A memory source that throws when frame `fail_at` is read, or raises `stop` after
/// `stop_after` frames were handed out.
class ScriptedSource final : public pipeline::FrameSource {
 public:
  ScriptedSource(std::vector<ImageView> frames, std::int64_t fail_at, std::int64_t stop_after,
                 std::atomic<bool>* stop)
      : inner_(std::move(frames)), fail_at_(fail_at), stop_after_(stop_after), stop_(stop) {}
  pipeline::SourceFormat format() const override { return inner_.format(); }
  bool read_into(int producer, std::uint8_t* dst, std::size_t stride,
                 std::int64_t& index) override {
    if (!inner_.read_into(producer, dst, stride, index)) return false;
    if (index == fail_at_) throw Error("scripted source: read error in frame " + std::to_string(index));
    if (stop_ && index + 1 >= stop_after_) stop_->store(true);
    return true;
  }

 private:
  pipeline::MemoryFrameSource inner_;
  std::int64_t fail_at_, stop_after_;
  std::atomic<bool>* stop_;
};

/// Runs `fn` on a thread; a run longer than `seconds` is a deadlock: report and exit the binary
/// (a hung test would otherwise hang CI).
template <class Fn>
void within(double seconds, Fn fn) {
  std::packaged_task<void()> task(std::move(fn));
  std::future<void> done = task.get_future();
  std::thread t(std::move(task));
  if (done.wait_for(std::chrono::duration<double>(seconds)) != std::future_status::ready) {
    std::fprintf(stderr, "pipeline test: no result after %.0f s: deadlock\n", seconds);
    std::fflush(stderr);
    std::_Exit(3);
  }
  t.join();
  done.get();  // rethrows an assertion-free exception from fn, if any
}

inline std::vector<std::vector<std::uint8_t>> reference(const std::vector<io::Image>& frames,
                                                        const EncodeOptions& o) {
  std::vector<std::vector<std::uint8_t>> ref;
  for (const auto& f : frames) ref.push_back(encode_jpeg(f.view(), o));
  return ref;
}

/// Byte comparison with a size check first (DESIGN.md section 4).
inline void expect_frames_equal(const std::vector<std::vector<std::uint8_t>>& expected,
                                const std::vector<std::vector<std::uint8_t>>& got,
                                std::size_t count) {
  ASSERT_GE(expected.size(), count);
  ASSERT_EQ(got.size(), count);
  for (std::size_t i = 0; i < count; ++i) {
    ASSERT_EQ(got[i].size(), expected[i].size()) << "frame " << i;
    ASSERT_EQ(std::memcmp(got[i].data(), expected[i].data(), got[i].size()), 0) << "frame " << i;
  }
}

// ---------------------------------------------------------------------------------------------
// Test bodies
// ---------------------------------------------------------------------------------------------

struct StreamCase {
  int width, height;
  Subsampling sampling;
  PixelFormat format;
  int producers, entropy_threads, slots;
  int restart = 0;
  bool optimize = false;
  int frames = 12;
};

inline std::string name_of(const StreamCase& c) {
  return std::to_string(c.width) + "x" + std::to_string(c.height) + "_" + to_string(c.sampling) +
         (c.format == PixelFormat::gray8 ? "_g8" : "_rgb") + "_N" + std::to_string(c.producers) +
         "M" + std::to_string(c.entropy_threads) + "K" + std::to_string(c.slots) +
         (c.restart ? "_r" + std::to_string(c.restart) : "") + (c.optimize ? "_opt" : "");
}

inline std::vector<StreamCase> stream_cases() {
  using S = Subsampling;
  const auto rgb = PixelFormat::rgb24, g8 = PixelFormat::gray8;
  return {
      {64, 48, S::s420, rgb, 1, 1, 1},       {64, 48, S::s420, rgb, 2, 3, 4},
      {37, 29, S::s420, rgb, 4, 2, 8},       {37, 29, S::s422, rgb, 3, 5, 2},
      {50, 17, S::s444, rgb, 2, 2, 3, 2},    {33, 70, S::gray, rgb, 1, 4, 16},
      {41, 23, S::gray, g8, 3, 3, 5},        {96, 64, S::s420, rgb, 8, 8, 32, 1, true, 40},
      {17, 9, S::s420, rgb, 5, 1, 1, 0, false, 7},
  };
}

/// Every frame byte-identical to encode_jpeg, in order, for this case and mode.
inline void check_stream(const StreamCase& c, pipeline::Mode mode, bool pinned_sok = false,
                         gpu::GpuOutput output = gpu::GpuOutput::tokens) {
  const auto frames = make_frames(c.frames, c.width, c.height, c.format);
  EncodeOptions o;
  o.quality = 85;
  o.subsampling = c.sampling;
  o.restart_interval = c.restart;
  o.optimize = c.optimize;
  const auto ref = reference(frames, o);

  pipeline::PipelineOptions p;
  p.mode = mode;
  p.producers = c.producers;
  p.entropy_threads = c.entropy_threads;
  p.slots = c.slots;
  p.pinned_sok = pinned_sok;
  p.gpu_output = output;
  pipeline::MemoryFrameSource source(views(frames));
  MemorySink sink;
  std::int64_t progress_calls = 0, last_progress = 0;
  bool progress_in_order = true;
  pipeline::Stats st;
  within(60, [&] {
    st = pipeline::encode_stream(source, o, sink, p, [&](const pipeline::Progress& pr) {
      ++progress_calls;
      progress_in_order = progress_in_order && pr.frames == last_progress + 1;
      last_progress = pr.frames;
    });
  });
  EXPECT_EQ(st.frames, c.frames);
  EXPECT_EQ(progress_calls, c.frames);
  EXPECT_TRUE(progress_in_order);
  EXPECT_FALSE(sink.closed) << "encode_stream must leave closing to the caller";
  std::uint64_t bytes = 0;
  for (const auto& f : ref) bytes += f.size();
  EXPECT_EQ(st.jpeg_bytes, bytes);
  expect_frames_equal(ref, sink.frames, static_cast<std::size_t>(c.frames));
  // Which path coded the frames: GPU tokens (these pictures never overflow) or coefficients.
  const bool tokens = mode != pipeline::Mode::cpu && output == gpu::GpuOutput::tokens;
  EXPECT_EQ(st.token_frames, tokens ? c.frames : 0);
}

/// A source that throws on frame `fail_at`: encode_stream throws that error, promptly, and what
/// was written before is a prefix of the right frames.
inline void check_source_error(pipeline::Mode mode, int n, int m, int k, std::int64_t fail_at) {
  const auto frames = make_frames(20, 40, 24, PixelFormat::rgb24);
  EncodeOptions o;
  const auto ref = reference(frames, o);
  pipeline::PipelineOptions p;
  p.mode = mode;
  p.producers = n;
  p.entropy_threads = m;
  p.slots = k;
  ScriptedSource source(views(frames), fail_at, -1, nullptr);
  MemorySink sink;
  std::string message;
  within(30, [&] {
    try {
      pipeline::encode_stream(source, o, sink, p);
    } catch (const Error& e) {
      message = e.what();
    }
  });
  EXPECT_NE(message.find("read error in frame " + std::to_string(fail_at)), std::string::npos)
      << "got: '" << message << "'";
  EXPECT_LE(sink.frames.size(), static_cast<std::size_t>(fail_at));
  expect_frames_equal(ref, sink.frames, sink.frames.size());
}

/// A sink that fails (disk full) on frame `fail_at`.
inline void check_sink_error(pipeline::Mode mode, int n, int m, int k, std::int64_t fail_at) {
  const auto frames = make_frames(20, 40, 24, PixelFormat::rgb24);
  EncodeOptions o;
  pipeline::PipelineOptions p;
  p.mode = mode;
  p.producers = n;
  p.entropy_threads = m;
  p.slots = k;
  pipeline::MemoryFrameSource source(views(frames));
  MemorySink sink(fail_at);
  std::string message;
  within(30, [&] {
    try {
      pipeline::encode_stream(source, o, sink, p);
    } catch (const Error& e) {
      message = e.what();
    }
  });
  EXPECT_EQ(message, "memory sink: disk full");
  EXPECT_EQ(sink.frames.size(), static_cast<std::size_t>(fail_at));
}

/// The stop flag rises after `stop_after` frames were read: every frame read is still written,
/// in order and exact, nothing after; the call returns normally.
inline void check_stop(pipeline::Mode mode, int n, int m, int k, std::int64_t stop_after) {
  const auto frames = make_frames(30, 40, 24, PixelFormat::rgb24);
  EncodeOptions o;
  const auto ref = reference(frames, o);
  pipeline::PipelineOptions p;
  p.mode = mode;
  p.producers = n;
  p.entropy_threads = m;
  p.slots = k;
  std::atomic<bool> stop{false};
  ScriptedSource source(views(frames), -1, stop_after, &stop);
  MemorySink sink;
  pipeline::Stats st;
  within(30, [&] { st = pipeline::encode_stream(source, o, sink, p, {}, &stop); });
  EXPECT_TRUE(stop.load());
  // At least the frames up to the stop; at most one more per producer that was already reading.
  EXPECT_GE(st.frames, stop_after);
  EXPECT_LE(st.frames, stop_after + n);
  EXPECT_EQ(static_cast<std::int64_t>(sink.frames.size()), st.frames);
  expect_frames_equal(ref, sink.frames, sink.frames.size());
  sink.close();  // the caller can finalize after a stop
  EXPECT_TRUE(sink.closed);
}

/// A traced run of `mode`: output still byte-identical; every frame has exactly one span of
/// each kind its mode runs, on tracks of the right kind; spans lie within the run and never
/// overlap on one track; GPU spans of a frame come in order (upload, kernel, download) and the
/// GPU statistics agree with them. With token output a frame's download is two GPU spans (the
/// header, then the body) and, in aok, the downloader's host span.
inline void check_trace(pipeline::Mode mode, bool pinned_sok = false,
                        gpu::GpuOutput output = gpu::GpuOutput::tokens) {
  using pipeline::SpanKind;
  const int n = 10;
  const auto frames = make_frames(n, 96, 64, PixelFormat::rgb24);
  const EncodeOptions o;
  const auto ref = reference(frames, o);
  pipeline::Trace trace;
  pipeline::PipelineOptions p;
  p.mode = mode;
  p.producers = 2;
  p.entropy_threads = 3;
  p.slots = 6;
  p.pinned_sok = pinned_sok;
  p.gpu_output = output;
  p.trace = &trace;
  pipeline::MemoryFrameSource source(views(frames));
  MemorySink sink;
  pipeline::Stats st;
  within(60, [&] { st = pipeline::encode_stream(source, o, sink, p); });
  expect_frames_equal(ref, sink.frames, n);

  const bool gpu = mode != pipeline::Mode::cpu;
  std::vector<SpanKind> kinds = {SpanKind::read, SpanKind::entropy, SpanKind::write};
  if (!gpu) kinds.push_back(SpanKind::transform);
  if (gpu) {
    kinds.push_back(SpanKind::kernel);
    kinds.push_back(mode == pipeline::Mode::aok ? SpanKind::dispatch : SpanKind::sync);
  }
  if (mode == pipeline::Mode::aok) kinds.push_back(SpanKind::wait);
  // upload: a GPU span in both GPU modes, plus the producer's issue in aok.
  const int uploads_per_frame = mode == pipeline::Mode::aok ? 2 : gpu ? 1 : 0;
  // download: one GPU span (coefficients) or two (tokens: header, body), plus the downloader's
  // issue in aok with tokens.
  const bool tokens = gpu && output == gpu::GpuOutput::tokens;
  const int gpu_downloads_per_frame = !gpu ? 0 : tokens ? 2 : 1;
  const int downloads_per_frame =
      gpu_downloads_per_frame + (tokens && mode == pipeline::Mode::aok ? 1 : 0);

  const std::vector<pipeline::Span> spans = trace.spans();
  const auto& tracks = trace.tracks();
  ASSERT_FALSE(tracks.empty());
  std::map<std::pair<std::int64_t, SpanKind>, int> count;
  std::map<std::int64_t, std::map<SpanKind, pipeline::Span>> gpu_of_frame;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const pipeline::Span& s = spans[i];
    ASSERT_GE(s.track, 0);
    ASSERT_LT(s.track, static_cast<int>(tracks.size()));
    ASSERT_GE(s.frame, 0);
    ASSERT_LT(s.frame, n);
    EXPECT_LE(s.start_s, s.end_s);
    EXPECT_GE(s.start_s, -1e-4) << pipeline::to_string(s.kind);
    EXPECT_LE(s.end_s, st.wall_s + 1e-4) << pipeline::to_string(s.kind);
    if (i > 0 && spans[i - 1].track == s.track) {
      EXPECT_LE(spans[i - 1].end_s, s.start_s + 1e-6)
          << "overlap on track " << tracks[s.track].name;
    }
    ++count[{s.frame, s.kind}];
    const bool gpu_kind = s.kind == SpanKind::kernel ||
                          ((s.kind == SpanKind::download || s.kind == SpanKind::upload) &&
                           tracks[s.track].gpu);
    EXPECT_EQ(tracks[s.track].gpu, gpu_kind) << pipeline::to_string(s.kind) << " on "
                                              << tracks[s.track].name;
    if (gpu_kind) {
      auto& g = gpu_of_frame[s.frame];
      // The frame's download spans merged: from the first start to the last end.
      if (s.kind == SpanKind::download && g.count(SpanKind::download)) {
        g[SpanKind::download].end_s = std::max(g[SpanKind::download].end_s, s.end_s);
        g[SpanKind::download].start_s = std::min(g[SpanKind::download].start_s, s.start_s);
      } else {
        g[s.kind] = s;
      }
    }
  }
  for (std::int64_t f = 0; f < n; ++f) {
    for (SpanKind k : kinds)
      EXPECT_EQ((count[{f, k}]), 1) << "frame " << f << " " << pipeline::to_string(k);
    EXPECT_EQ((count[{f, SpanKind::upload}]), uploads_per_frame) << "frame " << f;
    EXPECT_EQ((count[{f, SpanKind::download}]), downloads_per_frame) << "frame " << f;
    if (!gpu) continue;
    const auto& g = gpu_of_frame[f];
    ASSERT_EQ(g.size(), 3u) << "frame " << f;
    const double eps = 2e-6;  // event timestamps have ~0.5 us resolution
    EXPECT_LE(g.at(SpanKind::upload).end_s, g.at(SpanKind::kernel).start_s + eps) << f;
    EXPECT_LE(g.at(SpanKind::kernel).end_s, g.at(SpanKind::download).start_s + eps) << f;
  }
  EXPECT_EQ(st.gpu_timed, gpu);
  if (gpu) {
    EXPECT_GT(st.upload_gpu_s, 0);
    EXPECT_GT(st.kernel_gpu_s, 0);
    EXPECT_GT(st.download_gpu_s, 0);
    const double sum = st.upload_gpu_s + st.kernel_gpu_s + st.download_gpu_s;
    EXPECT_LE(st.gpu_union_s, sum + 1e-9);
    EXPECT_GE(st.gpu_union_s, std::max({st.upload_gpu_s, st.kernel_gpu_s, st.download_gpu_s}));
    EXPECT_EQ(st.upload_bytes, static_cast<std::uint64_t>(n) * 96 * 64 * 3);
    EXPECT_GT(st.download_bytes, 0u);
  }
}

}  // namespace mjpeg::pipetest
