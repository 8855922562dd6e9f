// Shared bodies and helpers of the public video API tests (include/mjpeg/video.hpp), for the
// cpu-mode tests (test_push.cpp, test_encode_all.cpp and the other files of CMakeLists.txt's
// list) and the GPU modes (test_video_encoder_gpu.cpp), which run the same bodies per offload
// mode. Frames are synthetic; the reference of every frame is encode_jpeg() of its RGB (or gray)
// pixels, and so, through the exactness tests, libjpeg-turbo's bytes.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/deadline.hpp"
#include "common/test_media.hpp"
#include "api/internal.hpp"
#include "io/y4m.hpp"
#include "mjpeg/encoder.hpp"
#include "mjpeg/error.hpp"
#include "mjpeg/profile.hpp"
#include "mjpeg/video.hpp"

namespace mjpeg::apitest {

using test::within;

/// The message of the exception of type E that fn() throws; "no exception", or "wrong exception
/// type: " and the message of another.
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

/// Whether `part` occurs in `s`.
inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

/// One input frame in the contiguous layout of frame_bytes(options), plus the RGB (or gray)
/// picture that encode_jpeg must see for it.
struct TestFrame {
  std::vector<std::uint8_t> bytes;  // as handed to the encoder (contiguous layout)
  std::vector<std::uint8_t> pixels; // the reference picture, rows packed
  ImageView reference() const {
    return ImageView{pixels.data(), width, height, gray ? PixelFormat::gray8 : PixelFormat::rgb24,
                     static_cast<std::size_t>(width) * (gray ? 1 : 3)};
  }
  int width = 0, height = 0;
  bool gray = false;
};

/// The Y4M description of planar frames of `o`: the API's own (api::y4m_info; its mapping of
/// the formats is checked in test_frame_formats.cpp).
inline io::Y4mInfo y4m_info(const VideoOptions& o) { return api::y4m_info(o); }

/// Deterministic frame `seed` of `o`: synthetic pictures for packed formats (bgr24: the RGB
/// picture with red and blue swapped), noisy gradients with extreme samples for planar ones
/// (reference: io::yuv_to_rgb24, the Y4M reader's conversion).
inline TestFrame make_frame(const VideoOptions& o, std::uint32_t seed) {
  TestFrame f;
  f.width = o.width;
  f.height = o.height;
  f.gray = o.format == FrameFormat::gray8;
  if (!is_planar(o.format)) {
    const test::Image img = test::synthetic(o.width, o.height, f.gray ? 1 : 3, seed);
    f.pixels = img.pixels;
    f.bytes = img.pixels;
    if (o.format == FrameFormat::bgr24)
      for (std::size_t i = 0; i + 2 < f.bytes.size(); i += 3) std::swap(f.bytes[i], f.bytes[i + 2]);
    return f;
  }
  f.bytes.resize(frame_bytes(o));
  std::uint32_t s = seed * 2246822519u + 7u;
  for (std::size_t i = 0; i < f.bytes.size(); ++i) {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    int v = static_cast<int>((i * 3 + (i / static_cast<std::size_t>(o.width)) * 5 + seed * 17) % 256);
    v += static_cast<int>(s % 51) - 25;
    if (s % 97 == 0) v = (s & 1) ? 0 : 255;
    f.bytes[i] = static_cast<std::uint8_t>(std::clamp(v, 0, 255));
  }
  const io::Y4mInfo info = y4m_info(o);
  f.pixels.resize(static_cast<std::size_t>(o.width) * o.height * 3);
  io::yuv_to_rgb24(io::planes_of(f.bytes.data(), info), info, f.pixels.data(),
                   static_cast<std::size_t>(o.width) * 3);
  return f;
}

inline std::vector<TestFrame> make_frames(const VideoOptions& o, int n) {
  std::vector<TestFrame> frames;
  for (int i = 0; i < n; ++i) frames.push_back(make_frame(o, static_cast<std::uint32_t>(i + 1)));
  return frames;
}

inline std::vector<std::vector<std::uint8_t>> reference(const std::vector<TestFrame>& frames,
                                                        const EncodeOptions& o) {
  std::vector<std::vector<std::uint8_t>> ref;
  for (const TestFrame& f : frames) ref.push_back(encode_jpeg(f.reference(), o));
  return ref;
}

/// Size check, then memcmp, frame by frame.
inline void expect_same(const std::vector<std::vector<std::uint8_t>>& expected,
                        const std::vector<std::vector<std::uint8_t>>& got) {
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].size(), expected[i].size()) << "frame " << i;
    ASSERT_EQ(std::memcmp(got[i].data(), expected[i].data(), got[i].size()), 0) << "frame " << i;
  }
}

/// A sink keeping every frame; checks the order and the thread-safety contract (one write at a
/// time); optionally throws on frame `fail_at`.
class MemorySink final : public FrameSink {
 public:
  explicit MemorySink(std::int64_t fail_at = -1) : fail_at_(fail_at) {}
  void write(const EncodedFrame& f) override {
    if (busy_.exchange(true)) concurrent_ = true;
    if (f.index != static_cast<std::int64_t>(frames.size())) out_of_order_ = true;
    if (f.index == fail_at_) {
      busy_ = false;
      throw Error("memory sink: disk full at frame " + std::to_string(f.index));
    }
    frames.emplace_back(f.data, f.data + f.size);
    busy_ = false;
  }
  bool in_order() const { return !out_of_order_; }
  bool one_at_a_time() const { return !concurrent_; }
  std::vector<std::vector<std::uint8_t>> frames;

 private:
  std::int64_t fail_at_;
  std::atomic<bool> busy_{false};
  bool out_of_order_ = false, concurrent_ = false;
};

/// encode() every frame (given in the contiguous layout, or with padded strides when `pad`),
/// collecting the returned frames, then finish(). Checks indices and order.
inline std::vector<std::vector<std::uint8_t>> push_all(const VideoOptions& o,
                                                       const std::vector<TestFrame>& frames,
                                                       std::size_t pad = 0, Stats* stats = nullptr) {
  std::vector<std::vector<std::uint8_t>> out;
  within(120, [&] {
    VideoEncoder enc(o);
    std::int64_t next = 0;
    auto take = [&](std::vector<JpegFrame> got) {
      for (JpegFrame& j : got) {
        EXPECT_EQ(j.index, next);
        ++next;
        out.push_back(std::move(j.bytes));
      }
    };
    std::vector<std::uint8_t> padded;
    for (const TestFrame& f : frames) {
      if (pad == 0) {
        take(enc.encode(FrameView::contiguous(f.bytes.data(), o)));
        continue;
      }
      // Copy each plane into rows `pad` bytes longer than needed, then overwrite the padding
      // after encode() returned and the source buffer was dropped (the copy contract).
      const FrameView dense = FrameView::contiguous(f.bytes.data(), o);
      const int planes = is_planar(o.format) ? 3 : 1;
      std::size_t rows_of[3] = {}, row_of[3] = {}, total = 0;
      for (int c = 0; c < planes; ++c) {
        const bool chroma = c > 0;
        const int sub_x = o.format == FrameFormat::yuv444p ? 0 : 1;
        const int sub_y = o.format == FrameFormat::yuv420p ? 1 : 0;
        row_of[c] = !is_planar(o.format)
                        ? std::size_t(o.width) * (o.format == FrameFormat::gray8 ? 1 : 3)
                        : chroma ? std::size_t((o.width + sub_x) >> sub_x) : std::size_t(o.width);
        rows_of[c] = chroma ? std::size_t((o.height + sub_y) >> sub_y) : std::size_t(o.height);
        total += (row_of[c] + pad) * rows_of[c];
      }
      padded.assign(total, 0xEE);
      FrameView v;
      v.width = o.width;
      v.height = o.height;
      std::size_t at = 0;
      for (int c = 0; c < planes; ++c) {
        for (std::size_t y = 0; y < rows_of[c]; ++y)
          std::memcpy(padded.data() + at + y * (row_of[c] + pad), dense.plane[c] + y * row_of[c],
                      row_of[c]);
        v.plane[c] = padded.data() + at;
        v.stride[c] = row_of[c] + pad;
        at += (row_of[c] + pad) * rows_of[c];
      }
      take(enc.encode(v));
      std::fill(padded.begin(), padded.end(), 0x11);  // the encoder must have copied already
    }
    take(enc.finish());
    EXPECT_TRUE(enc.finish().empty());
    const Stats st = enc.stats();
    EXPECT_EQ(st.frames, static_cast<std::int64_t>(frames.size()));
    if (stats) *stats = st;
  });
  return out;
}

struct ApiCase {
  int width, height;
  FrameFormat format;
  Subsampling sampling;
  YuvMatrix matrix = YuvMatrix::bt601;
  YuvRange range = YuvRange::limited;
  int restart = 0;
  bool optimize = false;
  int producers = 1, entropy = 2, slots = 4;
  int frames = 7;
  std::size_t pad = 0;
  bool own_tables = false;
  bool progressive = false;
  bool aspect = false;  ///< pixels 4:3 wide: JfifDensity::pixel_aspect(4, 3) in every frame
};

inline std::string name_of(const ApiCase& c) {
  std::string n = std::to_string(c.width) + "x" + std::to_string(c.height) + "_" +
                  to_string(c.format) + "_" + to_string(c.sampling);
  if (is_planar(c.format))
    n += std::string(c.matrix == YuvMatrix::bt709 ? "_709" : "_601") +
         (c.range == YuvRange::full ? "_full" : "_tv");
  if (c.restart) n += "_r" + std::to_string(c.restart);
  if (c.optimize) n += "_opt";
  if (c.pad) n += "_pad" + std::to_string(c.pad);
  if (c.own_tables) n += "_qtables";
  if (c.progressive) n += "_prog";
  if (c.aspect) n += "_sar";
  n += "_N" + std::to_string(c.producers) + "M" + std::to_string(c.entropy) + "K" +
       std::to_string(c.slots);
  return n;
}

inline std::vector<ApiCase> api_cases() {
  using F = FrameFormat;
  using S = Subsampling;
  return {
      {64, 48, F::rgb24, S::s420},
      {37, 29, F::rgb24, S::s422, YuvMatrix::bt601, YuvRange::limited, 2, false, 2, 3, 5},
      {50, 17, F::bgr24, S::s444, YuvMatrix::bt601, YuvRange::limited, 0, true, 1, 4, 6},
      {33, 70, F::rgb24, S::gray},
      {41, 23, F::gray8, S::s420, YuvMatrix::bt601, YuvRange::limited, 1, false, 1, 1, 1},
      {64, 48, F::yuv420p, S::s420},
      {37, 29, F::yuv420p, S::s444, YuvMatrix::bt709, YuvRange::full, 3, true, 2, 2, 4},
      {37, 29, F::yuv422p, S::s422, YuvMatrix::bt709, YuvRange::limited},
      {50, 17, F::yuv444p, S::s420, YuvMatrix::bt601, YuvRange::full, 0, false, 1, 3, 8},
      {29, 31, F::yuv420p, S::gray},
      // Padded strides (packed and planar), own tables.
      {45, 21, F::rgb24, S::s420, YuvMatrix::bt601, YuvRange::limited, 0, false, 1, 2, 3, 5, 13},
      {45, 21, F::yuv420p, S::s422, YuvMatrix::bt601, YuvRange::limited, 0, false, 1, 2, 3, 5, 7},
      {45, 21, F::bgr24, S::s420, YuvMatrix::bt601, YuvRange::limited, 0, false, 2, 2, 4, 5, 3, true},
      // --progressive, planar and packed.
      {45, 21, F::yuv420p, S::s420, YuvMatrix::bt601, YuvRange::limited, 2, false, 1, 2, 3, 5, 0, false, true},
      {37, 29, F::rgb24, S::s444, YuvMatrix::bt601, YuvRange::limited, 0, true, 2, 2, 4, 5, 0, true, true},
      // A pixel aspect ratio in the JFIF header, baseline (tokens) and progressive.
      {48, 32, F::yuv420p, S::s420, YuvMatrix::bt601, YuvRange::limited, 0, true, 1, 2, 4, 7, 0, false, false, true},
      {48, 32, F::rgb24, S::s422, YuvMatrix::bt601, YuvRange::limited, 1, false, 2, 2, 4, 5, 0, false, true, true},
  };
}

inline VideoOptions options_of(const ApiCase& c, Offload mode) {
  VideoOptions o;
  o.width = c.width;
  o.height = c.height;
  o.format = c.format;
  o.matrix = c.matrix;
  o.range = c.range;
  o.jpeg.quality = 80;
  o.jpeg.subsampling = c.sampling;
  o.jpeg.restart_interval = c.restart;
  o.jpeg.optimize = c.optimize;
  o.jpeg.progressive = c.progressive;
  if (c.aspect) o.jpeg.density = JfifDensity::pixel_aspect(4, 3);
  if (c.own_tables) {
    o.jpeg.qtables.assign(3, QuantTableValues{});
    for (int i = 0; i < 64; ++i) {
      o.jpeg.qtables[0][i] = 2 + static_cast<std::uint32_t>(i) % 11;
      o.jpeg.qtables[1][i] = 40 + 5 * static_cast<std::uint32_t>(i);
      o.jpeg.qtables[2][i] = 3 + static_cast<std::uint32_t>(i) / 2;
    }
    o.jpeg.qslots = {0, 2, 1};
    o.jpeg.quality = 50;
  }
  o.offload = mode;
  o.producers = c.producers;
  o.entropy_threads = c.entropy;
  o.slots = c.slots;
  return o;
}

/// Who transformed the frames. The bytes cannot tell (every mode writes the same), and
/// Stats::offload only repeats the options; what the encode measured can. sok/aok: every
/// frame's pixels went up (Stats::upload_bytes, the frame's bytes each), results came back
/// (download_bytes) and the stream buffers transformed all the frames between them
/// (frames_per_buffer: `buffers` entries); cpu: none of it.
inline void expect_work_done_by(Offload mode, const Stats& st, const VideoOptions& o,
                                std::int64_t frames, std::size_t buffers = 1) {
  if (mode == Offload::cpu) {
    EXPECT_EQ(st.upload_bytes, 0u);
    EXPECT_EQ(st.download_bytes, 0u);
    EXPECT_TRUE(st.frames_per_buffer.empty());
    return;
  }
  EXPECT_EQ(st.upload_bytes, static_cast<std::uint64_t>(frames) * frame_bytes(o))
      << "the frames were not uploaded to the GPU";
  EXPECT_GE(st.download_bytes, static_cast<std::uint64_t>(frames))
      << "nothing came back from the GPU";
  ASSERT_EQ(st.frames_per_buffer.size(), buffers) << "no stream buffer transformed the frames";
  std::int64_t sum = 0;
  for (std::int64_t f : st.frames_per_buffer) sum += f;
  EXPECT_EQ(sum, frames);
}

/// The same from a Profile (VideoOptions::profile): in sok/aok every frame has exactly one
/// kernel span, on a GPU track (timed by CUDA events), and no CPU transform span; the GPU
/// times are measured; `token_frames` frames were coded from the GPU's tokens. cpu: one
/// transform span per frame and no GPU span or time.
inline void expect_profile_of(Offload mode, const Profile& profile, std::int64_t frames,
                              std::int64_t token_frames) {
  std::vector<int> kernels(static_cast<std::size_t>(frames)), transforms(kernels.size());
  for (const TimelineSpan& s : profile.spans) {
    ASSERT_GE(s.track, 0);
    ASSERT_LT(static_cast<std::size_t>(s.track), profile.tracks.size());
    if (s.kind != "kernel" && s.kind != "transform") continue;
    ASSERT_GE(s.frame, 0);
    ASSERT_LT(s.frame, frames);
    (s.kind == "kernel" ? kernels : transforms)[static_cast<std::size_t>(s.frame)]++;
    EXPECT_EQ(profile.tracks[static_cast<std::size_t>(s.track)].gpu, s.kind == "kernel")
        << s.kind << " span on " << profile.tracks[static_cast<std::size_t>(s.track)].name;
  }
  const bool gpu = mode != Offload::cpu;
  for (std::size_t f = 0; f < kernels.size(); ++f) {
    EXPECT_EQ(kernels[f], gpu ? 1 : 0) << "kernel spans of frame " << f;
    EXPECT_EQ(transforms[f], gpu ? 0 : 1) << "CPU transform spans of frame " << f;
  }
  EXPECT_EQ(profile.gpu_timed, gpu);
  EXPECT_EQ(profile.kernel_gpu_s > 0, gpu);
  EXPECT_EQ(profile.upload_gpu_s > 0, gpu);
  EXPECT_EQ(profile.download_gpu_s > 0, gpu);
  EXPECT_EQ(profile.token_frames, gpu ? token_frames : 0);
  std::int64_t sum = 0;
  for (const BufferProfile& b : profile.buffers) {
    sum += b.frames;
    EXPECT_EQ(b.kernel_gpu_s > 0, b.frames > 0) << "buffer on device " << b.device;
  }
  EXPECT_EQ(sum, gpu ? frames : 0);
}

/// VideoEncoder (returned frames) is byte-identical to encode_jpeg, frame by frame, in order.
inline void check_push(const ApiCase& c, Offload mode) {
  const VideoOptions o = options_of(c, mode);
  const auto frames = make_frames(o, c.frames);
  const auto ref = reference(frames, o.jpeg);
  Stats st;
  const auto got = push_all(o, frames, c.pad, &st);
  expect_same(ref, got);
  std::uint64_t bytes = 0;
  for (const auto& r : ref) bytes += r.size();
  EXPECT_EQ(st.jpeg_bytes, bytes);
  EXPECT_EQ(st.offload, mode);
  EXPECT_EQ(st.producers, c.producers);
  EXPECT_EQ(st.entropy_threads, c.entropy);
  expect_work_done_by(mode, st, o, c.frames);
}

/// A sink instead of returned frames: the same bytes, in order, one write at a time; many
/// frames through few slots and several threads.
inline void check_sink_order(Offload mode, int producers, int entropy, int slots, int n) {
  VideoOptions o;
  o.width = 40;
  o.height = 24;
  o.jpeg.quality = 70;
  o.offload = mode;
  o.producers = producers;
  o.entropy_threads = entropy;
  o.slots = slots;
  const auto frames = make_frames(o, n);
  const auto ref = reference(frames, o.jpeg);
  MemorySink sink;
  within(120, [&] {
    VideoEncoder enc(o, sink);
    for (const TestFrame& f : frames) EXPECT_TRUE(enc.encode(FrameView::contiguous(f.bytes.data(), o)).empty());
    EXPECT_TRUE(enc.finish().empty());
    EXPECT_EQ(enc.stats().frames, n);
    expect_work_done_by(mode, enc.stats(), o, n);
  });
  EXPECT_TRUE(sink.in_order());
  EXPECT_TRUE(sink.one_at_a_time());
  expect_same(ref, sink.frames);
}

/// A FrameSource of in-memory frames for encode_all; `concurrent` lets reads overlap.
class VectorSource final : public FrameSource {
 public:
  VectorSource(const std::vector<TestFrame>& frames, bool concurrent, std::int64_t fail_at = -1)
      : frames_(frames), concurrent_(concurrent), fail_at_(fail_at) {}
  bool read(std::int64_t index, std::uint8_t* dst) override {
    if (index == fail_at_) throw Error("vector source: read error at frame " + std::to_string(index));
    if (index >= static_cast<std::int64_t>(frames_.size())) return false;
    if (!concurrent_ && busy_.exchange(true)) overlapped_ = true;
    const auto& b = frames_[static_cast<std::size_t>(index)].bytes;
    std::memcpy(dst, b.data(), b.size());
    if (!concurrent_) busy_ = false;
    return true;
  }
  bool concurrent_reads() const override { return concurrent_; }
  bool overlapped() const { return overlapped_; }

 private:
  const std::vector<TestFrame>& frames_;
  bool concurrent_;
  std::int64_t fail_at_;
  std::atomic<bool> busy_{false};
  std::atomic<bool> overlapped_{false};
};

/// encode_all in aok with VideoOptions::cpu_start over `n` frames of 64x48 RGB, read one at a
/// time with `read_ms` ms each (a stream that outlasts the GPU's start): the same frames as
/// encode_jpeg, in order; returns the Stats, whose hand-over fields the caller checks.
inline Stats check_cpu_start(int n, int read_ms) {
  class SlowSource final : public FrameSource {
   public:
    SlowSource(const std::vector<TestFrame>& frames, int ms) : inner_(frames, false), ms_(ms) {}
    bool read(std::int64_t index, std::uint8_t* dst) override {
      if (ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms_));
      return inner_.read(index, dst);
    }

   private:
    VectorSource inner_;
    int ms_;
  };
  ApiCase c{64, 48, FrameFormat::rgb24, Subsampling::s420};
  VideoOptions o = options_of(c, Offload::aok);
  o.producers = o.entropy_threads = o.slots = 0;  // the defaults of each run
  o.cpu_start = true;
  const auto frames = make_frames(o, n);
  const auto ref = reference(frames, o.jpeg);
  SlowSource source(frames, read_ms);
  MemorySink sink;
  Stats st;
  within(120, [&] { st = encode_all(o, source, sink); });
  EXPECT_TRUE(sink.in_order());
  EXPECT_EQ(st.frames, n);
  expect_same(ref, sink.frames);
  EXPECT_LE(st.cpu_start_frames, st.frames);
  return st;
}

/// encode_all over a source and a sink gives the same frames as encode_jpeg; the profile
/// shows where the frames were transformed (GPU modes: with --progressive the coefficients
/// come back instead of tokens).
inline void check_pull(const ApiCase& c, Offload mode, bool concurrent) {
  VideoOptions o = options_of(c, mode);
  const auto frames = make_frames(o, c.frames);
  const auto ref = reference(frames, o.jpeg);
  VectorSource source(frames, concurrent);
  MemorySink sink;
  Stats st;
  Profile profile;
  o.profile = &profile;
  within(120, [&] { st = encode_all(o, source, sink); });
  EXPECT_FALSE(source.overlapped());
  EXPECT_TRUE(sink.in_order());
  EXPECT_EQ(st.frames, c.frames);
  expect_same(ref, sink.frames);
  expect_work_done_by(mode, st, o, c.frames);
  expect_profile_of(mode, profile, c.frames, c.progressive ? 0 : c.frames);
}

}  // namespace mjpeg::apitest
