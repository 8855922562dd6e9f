// Shared pieces of the pipeline tests (CPU and GPU binaries): synthetic frames, a memory sink,
// sources that fail or raise the stop flag, a deadlock watchdog, and the test bodies, which
// take the PipelineOptions (and so the mode) as a parameter.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

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

#include "common/deadline.hpp"
#include "gpu_transform.hpp"
#include "host_pin.hpp"
#include "io/frame_sink.hpp"
#include "mjpeg/options.hpp"
#include "io/y4m.hpp"
#include "jpeg/planar.hpp"
#include "mjpeg/encoder.hpp"
#include "mjpeg/error.hpp"
#include "pipeline/frame_source.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/trace.hpp"

namespace mjpeg::pipetest {

/// Deterministic frames: gradients, hard edges and noise, different for every `seed`.
inline mjpeg::Image synthetic(int w, int h, PixelFormat f, std::uint32_t seed) {
  mjpeg::Image img(w, h, f);
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

inline std::vector<mjpeg::Image> make_frames(int n, int w, int h, PixelFormat f) {
  std::vector<mjpeg::Image> frames;
  for (int i = 0; i < n; ++i) frames.push_back(synthetic(w, h, f, static_cast<std::uint32_t>(i + 1)));
  return frames;
}

inline std::vector<ImageView> views(const std::vector<mjpeg::Image>& frames) {
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

using test::within;

inline std::vector<std::vector<std::uint8_t>> reference(const std::vector<mjpeg::Image>& frames,
                                                        const EncodeOptions& o) {
  std::vector<std::vector<std::uint8_t>> ref;
  for (const auto& f : frames) ref.push_back(encode_jpeg(f.view(), o));
  return ref;
}

/// Byte comparison with a size check first (docs/ARCHITECTURE.md, "Rules the code follows").
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

/// A sok/aok run's per-buffer statistics: one per device-list entry (one for an empty list),
/// on its device, frames adding up to `frames`; with several buffers and at least as many
/// frames, every buffer got some (the first slots handed out alternate between buffers).
inline void expect_buffer_shares(const pipeline::Stats& st, const std::vector<int>& devices,
                                 std::int64_t frames) {
  const std::vector<int> list = devices.empty() ? std::vector<int>{0} : devices;
  ASSERT_EQ(st.buffers.size(), list.size());
  std::int64_t sum = 0;
  for (std::size_t b = 0; b < list.size(); ++b) {
    EXPECT_EQ(st.buffers[b].device, list[b]);
    if (frames >= static_cast<std::int64_t>(list.size())) {
      EXPECT_GT(st.buffers[b].frames, 0) << "buffer " << b;
    }
    sum += st.buffers[b].frames;
  }
  EXPECT_EQ(sum, frames);
}

/// That a sok/aok run's frames went through the GPU, which its bytes cannot tell (every mode
/// writes the same): each frame's `frame_bytes` uploaded, results downloaded, the stream
/// buffers' frames adding up (expect_buffer_shares) and `token_frames` coded from the GPU's
/// tokens. A run whose frames were transformed on the CPU has none of these.
inline void expect_gpu_work(const pipeline::Stats& st, const std::vector<int>& devices,
                            std::int64_t frames, std::size_t frame_bytes,
                            std::int64_t token_frames) {
  EXPECT_EQ(st.upload_bytes, static_cast<std::uint64_t>(frames) * frame_bytes)
      << "the frames were not uploaded";
  EXPECT_GE(st.download_bytes, static_cast<std::uint64_t>(frames)) << "nothing came back";
  EXPECT_EQ(st.token_frames, token_frames);
  expect_buffer_shares(st, devices, frames);
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
  /// Quantization tables: 0 Annex K; 1 three own tables, Cb and Cr on different ones (slots
  /// 0,2,1; one of them 16-bit); 2 --tune psnr; 3 --tune ssim.
  int tables = 0;
  bool progressive = false;  ///< --progressive (the token path expands tokens to coefficients)
};

/// The EncodeOptions fields of StreamCase::tables.
inline void set_tables(EncodeOptions& o, int tables) {
  if (tables == 1) {
    o.qtables.assign(3, QuantTableValues{});
    for (int i = 0; i < 64; ++i) {
      o.qtables[0][i] = 2 + static_cast<std::uint32_t>(i) % 11;
      o.qtables[1][i] = 40 + 5 * static_cast<std::uint32_t>(i);  // up to 355: 16-bit at q50
      o.qtables[2][i] = 3 + static_cast<std::uint32_t>(i) / 2;
    }
    o.qslots = {0, 2, 1};
  } else if (tables == 2) {
    o.tune = Tune::psnr;
  } else if (tables == 3) {
    o.tune = Tune::ssim;
  }
}

inline std::string name_of(const StreamCase& c) {
  return std::to_string(c.width) + "x" + std::to_string(c.height) + "_" + to_string(c.sampling) +
         (c.format == PixelFormat::gray8 ? "_g8" : "_rgb") + "_N" + std::to_string(c.producers) +
         "M" + std::to_string(c.entropy_threads) + "K" + std::to_string(c.slots) +
         (c.restart ? "_r" + std::to_string(c.restart) : "") + (c.optimize ? "_opt" : "") +
         (c.tables == 1 ? "_qtables" : c.tables == 2 ? "_psnr" : c.tables == 3 ? "_ssim" : "") +
         (c.progressive ? "_prog" : "");
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
      // Own tables (Cb and Cr on different tables, one of them 16-bit) and the presets.
      {64, 48, S::s420, rgb, 2, 3, 4, 0, false, 12, 1},
      {37, 29, S::s444, rgb, 3, 2, 5, 3, true, 9, 1},
      {41, 23, S::gray, g8, 2, 2, 4, 0, false, 6, 1},
      {50, 17, S::s422, rgb, 2, 2, 3, 0, true, 8, 2},
      {96, 64, S::s420, rgb, 4, 4, 8, 2, false, 10, 3},
      // --progressive: every sampling, restarts, own tables and a preset.
      {64, 48, S::s420, rgb, 2, 3, 4, 0, false, 12, 0, true},
      {37, 29, S::s420, rgb, 3, 2, 5, 3, true, 9, 2, true},
      {50, 17, S::s422, rgb, 2, 2, 3, 1, false, 8, 1, true},
      {33, 70, S::s444, rgb, 1, 4, 16, 0, false, 6, 3, true},
      {41, 23, S::gray, g8, 3, 3, 5, 2, false, 6, 0, true},
  };
}

/// Every frame byte-identical to encode_jpeg, in order, for this case and mode. `devices`
/// (sok/aok): the stream buffers' devices (empty: device 0); with several, every buffer
/// transforms some frames and their counts add up.
inline void check_stream(const StreamCase& c, Offload mode,
                         GpuOutput output = GpuOutput::tokens,
                         const std::vector<int>& devices = {}) {
  const auto frames = make_frames(c.frames, c.width, c.height, c.format);
  EncodeOptions o;
  o.quality = 85;
  o.subsampling = c.sampling;
  o.restart_interval = c.restart;
  o.optimize = c.optimize;
  o.progressive = c.progressive;
  set_tables(o, c.tables);
  if (c.tables == 1) o.quality = 50;  // the tables as they are (one of them 16-bit)
  const auto ref = reference(frames, o);

  pipeline::PipelineOptions p;
  p.mode = mode;
  p.producers = c.producers;
  p.entropy_threads = c.entropy_threads;
  p.slots = c.slots;
  p.gpu_output = output;
  p.devices = devices;
  pipeline::MemoryFrameSource source(views(frames));
  MemorySink sink;
  std::int64_t progress_calls = 0, last_progress = 0;
  bool progress_in_order = true;
  pipeline::Stats st;
  within(60, [&] {
    st = pipeline::encode_stream(source, o, sink, p, [&](const Progress& pr) {
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
  const bool tokens = mode != Offload::cpu && output == GpuOutput::tokens;
  EXPECT_EQ(st.token_frames, tokens ? c.frames : 0);
  if (mode != Offload::cpu) expect_buffer_shares(st, devices, c.frames);
}

/// Runs encode_stream (failing the test after `seconds`) and returns the message of the
/// mjpeg::Error it throws; empty when it returns normally.
inline std::string encode_error(pipeline::FrameSource& source, const EncodeOptions& o,
                                io::FrameSink& sink, const pipeline::PipelineOptions& p,
                                int seconds = 30) {
  std::string message;
  within(seconds, [&] {
    try {
      pipeline::encode_stream(source, o, sink, p);
    } catch (const Error& e) {
      message = e.what();
    }
  });
  return message;
}

/// A source that throws on frame `fail_at`: encode_stream throws that error, promptly, and what
/// was written before is a prefix of the right frames.
inline void check_source_error(Offload mode, int n, int m, int k, std::int64_t fail_at) {
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
  const std::string message = encode_error(source, o, sink, p);
  EXPECT_NE(message.find("read error in frame " + std::to_string(fail_at)), std::string::npos)
      << "got: '" << message << "'";
  EXPECT_LE(sink.frames.size(), static_cast<std::size_t>(fail_at));
  expect_frames_equal(ref, sink.frames, sink.frames.size());
}

/// A sink that fails (disk full) on frame `fail_at`.
inline void check_sink_error(Offload mode, int n, int m, int k, std::int64_t fail_at) {
  const auto frames = make_frames(20, 40, 24, PixelFormat::rgb24);
  EncodeOptions o;
  pipeline::PipelineOptions p;
  p.mode = mode;
  p.producers = n;
  p.entropy_threads = m;
  p.slots = k;
  pipeline::MemoryFrameSource source(views(frames));
  MemorySink sink(fail_at);
  const std::string message = encode_error(source, o, sink, p);
  EXPECT_EQ(message, "memory sink: disk full");
  EXPECT_EQ(sink.frames.size(), static_cast<std::size_t>(fail_at));
}

/// The stop flag rises after `stop_after` frames were read: every frame read is still written,
/// in order and exact, nothing after; the call returns normally.
inline void check_stop(Offload mode, int n, int m, int k, std::int64_t stop_after) {
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
inline void check_trace(Offload mode,
                        GpuOutput output = GpuOutput::tokens,
                        const std::vector<int>& devices = {}) {
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
  p.gpu_output = output;
  p.devices = devices;
  p.trace = &trace;
  pipeline::MemoryFrameSource source(views(frames));
  MemorySink sink;
  pipeline::Stats st;
  within(60, [&] { st = pipeline::encode_stream(source, o, sink, p); });
  expect_frames_equal(ref, sink.frames, n);

  const bool gpu = mode != Offload::cpu;
  std::vector<SpanKind> kinds = {SpanKind::read, SpanKind::entropy, SpanKind::write};
  if (!gpu) kinds.push_back(SpanKind::transform);
  if (gpu) {
    kinds.push_back(SpanKind::kernel);
    kinds.push_back(mode == Offload::aok ? SpanKind::dispatch : SpanKind::sync);
  }
  if (mode == Offload::aok) kinds.push_back(SpanKind::wait);
  // upload: a GPU span in both GPU modes, plus the producer's issue in aok.
  const int uploads_per_frame = mode == Offload::aok ? 2 : gpu ? 1 : 0;
  // download: one GPU span (coefficients) or two (tokens: header, body), plus the downloader's
  // issue in aok with tokens.
  const bool tokens = gpu && output == GpuOutput::tokens;
  const int gpu_downloads_per_frame = !gpu ? 0 : tokens ? 2 : 1;
  const int downloads_per_frame =
      gpu_downloads_per_frame + (tokens && mode == Offload::aok ? 1 : 0);

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
    // Every stream buffer has its own tracks, named with its device; the frames' GPU spans lie
    // on the tracks of the buffer that transformed them, so each buffer's kernel track has as
    // many spans as the buffer has frames.
    expect_buffer_shares(st, devices, n);
    const std::vector<int> list = devices.empty() ? std::vector<int>{0} : devices;
    for (std::size_t b = 0; b < list.size(); ++b) {
      std::string prefix = "GPU " + std::to_string(list[b]);
      if (std::count(list.begin(), list.end(), list[b]) > 1) prefix += " buffer " + std::to_string(b + 1);
      // aok: "kernel stream", "kernel stream 2", ... (one per kernel stream); sok: one track.
      const std::string kernel_track =
          prefix + (mode == Offload::aok ? " kernel stream" : " (legacy default stream)");
      const int kernel_streams = mode == Offload::aok ? st.kernel_streams : 1;
      std::vector<int> kernel_tracks;
      for (int k = 0; k < kernel_streams; ++k) {
        const std::string name = kernel_track + (k > 0 ? " " + std::to_string(k + 1) : "");
        int track = -1;
        for (std::size_t t = 0; t < tracks.size(); ++t)
          if (tracks[t].name == name) track = static_cast<int>(t);
        ASSERT_GE(track, 0) << "no track " << name;
        EXPECT_TRUE(tracks[static_cast<std::size_t>(track)].gpu);
        kernel_tracks.push_back(track);
      }
      std::int64_t kernels = 0;
      for (const pipeline::Span& s : spans)
        kernels += s.kind == SpanKind::kernel &&
                   std::count(kernel_tracks.begin(), kernel_tracks.end(), s.track) > 0;
      EXPECT_EQ(kernels, st.buffers[b].frames) << kernel_track;
      if (st.gpu_timed) {
        EXPECT_GT(st.buffers[b].kernel_gpu_s, 0) << kernel_track;
      }
    }
    EXPECT_GT(st.upload_gpu_s, 0);
    EXPECT_GT(st.kernel_gpu_s, 0);
    EXPECT_GT(st.download_gpu_s, 0);
    const double sum = st.upload_gpu_s + st.kernel_gpu_s + st.download_gpu_s;
    EXPECT_LE(st.gpu_union_s, sum + 1e-9);
    // One stream's work never overlaps itself, so the union covers at least each kind's sum;
    // with D stream buffers D streams of a kind may run at once (times the kernel streams).
    const double buffers = static_cast<double>(st.buffers.size());
    EXPECT_GE(st.gpu_union_s * buffers + 1e-9, std::max(st.upload_gpu_s, st.download_gpu_s));
    EXPECT_GE(st.gpu_union_s * buffers * std::max(1, st.kernel_streams) + 1e-9, st.kernel_gpu_s);
    EXPECT_EQ(st.upload_bytes, static_cast<std::uint64_t>(n) * 96 * 64 * 3);
    EXPECT_GT(st.download_bytes, 0u);
  }
}

// ---------------------------------------------------------------------------------------------
// Planar frames (Y4M, decoded video) and frames used in place
// ---------------------------------------------------------------------------------------------

/// Deterministic planar frames in planar_layout's layout, with extreme samples (clamping).
inline std::vector<std::vector<std::uint8_t>> make_planar_frames(int n, int w, int h,
                                                                 PlanarChroma chroma) {
  std::vector<std::vector<std::uint8_t>> frames;
  const PlanarLayout l = planar_layout(w, h, chroma);
  for (int i = 0; i < n; ++i) {
    std::vector<std::uint8_t> f(l.bytes);
    std::uint32_t s = 2654435761u * static_cast<std::uint32_t>(i + 3);
    for (std::size_t k = 0; k < f.size(); ++k) {
      s ^= s << 13;
      s ^= s >> 17;
      s ^= s << 5;
      int v = static_cast<int>((k * (3 + i) / 7) % 256) + static_cast<int>(s % 31) - 15;
      if (s % 97 == 0) v = (s & 1) ? 0 : 255;
      f[k] = static_cast<std::uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
    }
    frames.push_back(std::move(f));
  }
  return frames;
}

/// encode_jpeg of each planar frame's planar_to_rgb image: the oracle of planar input.
inline std::vector<std::vector<std::uint8_t>> planar_reference(
    const std::vector<std::vector<std::uint8_t>>& frames, int w, int h, const PlanarFormat& f,
    const EncodeOptions& o) {
  std::vector<std::vector<std::uint8_t>> ref;
  mjpeg::Image rgb(w, h, PixelFormat::rgb24);
  for (const auto& frame : frames) {
    planar_to_rgb(planar_view(frame.data(), w, h, f), rgb.pixels.data(), rgb.stride());
    ref.push_back(encode_jpeg(rgb.view(), o));
  }
  return ref;
}

struct PlanarCase {
  int width, height;
  PlanarChroma chroma;
  Subsampling sampling;
  bool truncated;  // the conversion form of decoded video (else Y4M's rounded one)
  bool in_place;   // sok --pinned / aok: frames page-locked and uploaded where they lie
                   // (the cpu mode always transforms frames in memory where they lie)
  int producers, entropy_threads, slots;
  int frames = 10;
};

inline std::string name_of(const PlanarCase& c) {
  const char* in = c.chroma == PlanarChroma::c420   ? "yuv420"
                   : c.chroma == PlanarChroma::c422 ? "yuv422"
                   : c.chroma == PlanarChroma::c444 ? "yuv444"
                                                    : "mono";
  return std::to_string(c.width) + "x" + std::to_string(c.height) + "_" + in + "_s" +
         to_string(c.sampling) + (c.truncated ? "_trunc" : "_round") +
         (c.in_place ? "_inplace" : "_copied") + "_N" + std::to_string(c.producers) + "M" +
         std::to_string(c.entropy_threads) + "K" + std::to_string(c.slots);
}

inline std::vector<PlanarCase> planar_cases() {
  using C = PlanarChroma;
  using S = Subsampling;
  return {
      {64, 48, C::c420, S::s420, false, false, 2, 3, 4},
      {37, 29, C::c420, S::s420, true, true, 3, 2, 5},
      {37, 29, C::c420, S::s444, false, true, 1, 2, 3},
      {50, 17, C::c422, S::s422, false, false, 2, 2, 4},
      {33, 18, C::c422, S::s420, true, false, 4, 1, 8},
      {41, 23, C::c444, S::s420, false, true, 2, 3, 6},
      {41, 23, C::c444, S::gray, true, false, 2, 2, 2},
      {19, 13, C::mono, S::s420, false, false, 3, 3, 5},
      {19, 13, C::mono, S::gray, false, true, 1, 1, 1},
      {300, 48, C::c420, S::s420, false, true, 2, 4, 8},
  };
}

inline PlanarFormat planar_format_of(const PlanarCase& c) {
  static const int kSws601[4] = {104597, 132201, 25675, 53279};
  PlanarFormat f;
  f.chroma = c.chroma;
  f.ycc = c.truncated ? math::make_truncated_ycc(kSws601, true)
                      : math::make_rounded_ycc(0.2126, 0.0722, true);
  return f;
}

/// Planar frames from memory (copied or in place): every frame byte-identical to encode_jpeg
/// of its RGB, in order; upload bytes (GPU modes) are the planar frame's bytes.
inline void check_planar_stream(const PlanarCase& c, Offload mode,
                                const std::vector<int>& devices = {}) {
  const auto frames = make_planar_frames(c.frames, c.width, c.height, c.chroma);
  const PlanarFormat pf = planar_format_of(c);
  EncodeOptions o;
  o.quality = 80;
  o.subsampling = c.sampling;
  const auto ref = planar_reference(frames, c.width, c.height, pf, o);
  std::vector<const std::uint8_t*> ptrs;
  for (const auto& f : frames) ptrs.push_back(f.data());
  // In place on a GPU: page-locked, as compare holds its frames (uploads go from there).
  std::vector<gpu::HostPin> pins;
  if (c.in_place && mode != Offload::cpu)
    for (const auto& f : frames) pins.emplace_back(f.data(), f.size());
  pipeline::SourceFormat format{c.width, c.height, PixelFormat::rgb24, pf};
  pipeline::MemoryFrameSource source(ptrs, format, /*pinned=*/!pins.empty());
  pipeline::PipelineOptions p;
  p.mode = mode;
  p.producers = c.producers;
  p.entropy_threads = c.entropy_threads;
  p.slots = c.slots;
  p.gpu_timing = mode != Offload::cpu;
  p.devices = devices;
  MemorySink sink;
  pipeline::Stats st;
  within(60, [&] { st = pipeline::encode_stream(source, o, sink, p); });
  EXPECT_EQ(st.frames, c.frames);
  expect_frames_equal(ref, sink.frames, static_cast<std::size_t>(c.frames));
  if (mode != Offload::cpu) {
    EXPECT_EQ(st.upload_bytes, static_cast<std::uint64_t>(c.frames) *
                                   planar_layout(c.width, c.height, c.chroma).bytes);
    expect_buffer_shares(st, devices, c.frames);
  }
}

/// A Y4M file of `n` frames of w x h with the given C tag and X tags; `params_at`: frame
/// indices whose FRAME header carries a parameter (" X" and param_len - 1 more characters:
/// param_len + 1 bytes more than a plain header). Returns "" or what went wrong.
inline std::string write_y4m(const std::string& path, int w, int h, const std::string& tags, int n,
                             const std::vector<int>& params_at = {}, std::size_t param_len = 3) {
  const io::Y4mInfo info =
      io::parse_y4m_header("W" + std::to_string(w) + " H" + std::to_string(h) + " " + tags, path);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return "cannot write " + path;
  std::fprintf(f, "YUV4MPEG2 W%d H%d F25:1 Ip %s\n", w, h, tags.c_str());
  for (int i = 0; i < n; ++i) {
    std::string head = "FRAME";
    if (std::find(params_at.begin(), params_at.end(), i) != params_at.end())
      head += " X" + std::string(param_len - 1, 'p');
    std::fprintf(f, "%s\n", head.c_str());
    std::uint32_t s = 977u * static_cast<std::uint32_t>(i + 1);
    for (std::size_t k = 0; k < info.frame_bytes(); ++k) {
      s = s * 1664525u + 1013904223u;
      std::fputc(static_cast<int>((k * 5 + i * 29 + (s >> 28)) % 256), f);
    }
  }
  std::fclose(f);
  return "";
}

/// encode_jpeg of every frame of a Y4M file, read sequentially and converted by yuv_to_rgb24
/// (the path of main before planar frames, and what cjpeg sees).
inline std::vector<std::vector<std::uint8_t>> y4m_reference(const std::string& path,
                                                            const EncodeOptions& o) {
  std::vector<std::vector<std::uint8_t>> ref;
  io::Y4mReader reader(path);
  io::Y4mFrame frame;
  mjpeg::Image rgb(reader.info().width, reader.info().height, PixelFormat::rgb24);
  while (reader.read_frame(frame)) {
    io::yuv_to_rgb24(frame.planes(reader.info()), reader.info(), rgb.pixels.data(), rgb.stride());
    ref.push_back(encode_jpeg(rgb.view(), o));
  }
  return ref;
}

/// A Y4M file through the pipeline (planar frames read straight into the slots): every frame
/// equal to the sequential reference; `limit` frames at most (-1: all).
inline void check_y4m_stream(const std::string& path, Offload mode, int producers,
                             int slots, std::int64_t limit = -1, Subsampling s = Subsampling::s420,
                             const std::vector<int>& devices = {}) {
  EncodeOptions o;
  o.quality = 75;
  o.subsampling = s;
  const auto ref = y4m_reference(path, o);
  // Read into the slots, and mapped (frames used where they lie; in sok --pinned and aok
  // page-locked window by window, uploaded from the page cache).
  for (const bool mapped : {false, true}) {
    SCOPED_TRACE(mapped ? "mapped file" : "read into the slots");
    io::Y4mReader reader(path);
    std::unique_ptr<pipeline::FrameSource> source;
    if (mapped) {
      ASSERT_TRUE(reader.map_frames()) << path;
      // Page-sized lock windows: many of the small frames cross a window boundary, where the
      // upload must be split (one copy may not span two registrations).
      source = std::make_unique<pipeline::MappedY4mFrameSource>(
          reader, limit, pipeline::WindowPins::Pin{},
          static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)));
    } else {
      source = std::make_unique<pipeline::Y4mFrameSource>(reader, limit);
    }
    pipeline::PipelineOptions p;
    p.mode = mode;
    p.producers = producers;
    p.entropy_threads = 2;
    p.slots = slots;
    p.devices = devices;
    MemorySink sink;
    pipeline::Stats st;
    within(60, [&] { st = pipeline::encode_stream(*source, o, sink, p); });
    const std::size_t want = limit < 0 ? ref.size() : std::min<std::size_t>(ref.size(), limit);
    EXPECT_EQ(static_cast<std::size_t>(st.frames), want) << path;
    expect_frames_equal(ref, sink.frames, want);
    // The planes went up as they are (Y4M's frame bytes each) and tokens came back.
    if (mode != Offload::cpu)
      expect_gpu_work(st, devices, static_cast<std::int64_t>(want), reader.info().frame_bytes(),
                      static_cast<std::int64_t>(want));
    else
      EXPECT_EQ(st.upload_bytes, 0u);
    if (mapped && mode != Offload::cpu) {
      const auto& m = static_cast<const pipeline::MappedY4mFrameSource&>(*source);
      EXPECT_EQ(m.pinned_windows(), 0) << "every page lock released after the encode";
      if (mode == Offload::aok || mode == Offload::sok_pinned) {
        EXPECT_EQ(m.pin_failures(), 0) << "read-only registration of the mapped file";
      }
    }
  }
}

}  // namespace mjpeg::pipetest
