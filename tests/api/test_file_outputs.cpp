// What the library's outputs carry and promise (label cpu), judged by independent readers:
// FileSink refuses frames that do not fit it; no output replaces a file that appeared while it
// was written (without overwrite); the pixel aspect ratio (JFIF density as libjpeg writes it,
// the AVI's vprp as ffprobe reads it), audio copied into the AVI (ffmpeg decodes the same
// samples), metadata (ffprobe's format tags); OutputFile.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/oracle.hpp"
#include "io/io_test_util.hpp"
#include "mjpeg/encoder.hpp"
#include "mjpeg/files.hpp"
#include "mjpeg/video.hpp"
#include "mjpeg/y4m.hpp"

namespace mjpeg {
namespace {

using Bytes = std::vector<std::uint8_t>;
using io_test::ScratchDir;

Bytes jpeg_of(int width, int height, Subsampling s = Subsampling::s420, int seed = 0) {
  Image img(width, height, PixelFormat::rgb24);
  for (std::size_t i = 0; i < img.pixels.size(); ++i)
    img.pixels[i] = std::uint8_t((i * 7 + std::size_t(seed) * 31) / 3);
  EncodeOptions o;
  o.subsampling = s;
  return encode_jpeg(img.view(), o);
}

template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "no exception";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const char* const kOutputs[] = {"out.avi", "out.mjpeg", "f%03d.jpg", "one.jpg"};

// ---------------------------------------------------------------------------------------------
// Frames that do not fit
// ---------------------------------------------------------------------------------------------

TEST(FileSink, RefusesAFrameOfAnotherSizeAndPublishesNothing) {
  const Bytes small = jpeg_of(320, 240), right = jpeg_of(64, 36);
  for (const char* name : kOutputs) {
    ScratchDir dir;
    const std::string path = dir.file(name);
    FileSink sink(path, 64, 36);
    if (std::string(name) != "one.jpg") sink.write(EncodedFrame{0, right.data(), right.size()});
    const std::string msg = message_of<Error>([&] { sink.write(EncodedFrame{1, small.data(), small.size()}); });
    EXPECT_TRUE(contains(msg, "320x240") && contains(msg, "64x36")) << name << ": " << msg;
    EXPECT_EQ(dir.list(), std::vector<std::string>{}) << name << ": something stayed";
    EXPECT_NE(message_of<Error>([&] { sink.close(); }), "no exception") << name;
    EXPECT_EQ(dir.list(), std::vector<std::string>{}) << name << ": published after a refusal";
  }
}

TEST(FileSink, RefusesWhatIsNotAJpegOrChangesLayout) {
  const Bytes j420 = jpeg_of(32, 16), j444 = jpeg_of(32, 16, Subsampling::s444);
  const Bytes text = {'n', 'o', 't', ' ', 'a', ' ', 'J', 'P', 'E', 'G'};
  Bytes cut(j420.begin(), j420.end() - 10);
  for (const Bytes* bad : std::vector<const Bytes*>{&text, &cut, &j444}) {
    ScratchDir dir;
    FileSink sink(dir.file("out.avi"), 32, 16);
    sink.write(EncodedFrame{0, j420.data(), j420.size()});
    const std::string msg = message_of<Error>([&] { sink.write(EncodedFrame{1, bad->data(), bad->size()}); });
    EXPECT_TRUE(contains(msg, "frame 2")) << msg;
    if (bad == &j444) {
      EXPECT_TRUE(contains(msg, "3 components sampled 1x1, 1x1, 1x1")) << msg;
    }
    EXPECT_NE(message_of<Error>([&] { sink.close(); }), "no exception");
    EXPECT_EQ(dir.list(), std::vector<std::string>{});
  }
}

TEST(FileSink, AnEncoderOfAnotherSizeFailsAndLeavesNothing) {
  ScratchDir dir;
  VideoOptions o;
  o.width = 32;
  o.height = 24;
  FileSink sink(dir.file("out.avi"), 640, 360);
  const std::vector<std::uint8_t> pixels(frame_bytes(o), 100);
  const std::string msg = message_of<Error>([&] {
    VideoEncoder encoder(o, sink);
    for (int i = 0; i < 4; ++i) encoder.encode(FrameView::contiguous(pixels.data(), o));
    encoder.finish();
  });
  EXPECT_TRUE(contains(msg, "32x24") && contains(msg, "640x360")) << msg;
  EXPECT_NE(message_of<Error>([&] { sink.close(); }), "no exception");
  EXPECT_EQ(dir.list(), std::vector<std::string>{});
}

// ---------------------------------------------------------------------------------------------
// Names claimed without replacing
// ---------------------------------------------------------------------------------------------

TEST(FileSink, WithoutOverwriteNeverReplacesAFileThatAppeared) {
  const Bytes frame = jpeg_of(16, 16);
  for (const char* name : kOutputs) {
    for (const bool overwrite : {false, true}) {
      ScratchDir dir;
      const std::string path = dir.file(name);
      const std::string victim = dir.file(std::string(name) == "f%03d.jpg" ? "f001.jpg" : name);
      FileSinkOptions so;
      so.overwrite = overwrite;
      FileSink sink(path, 16, 16, so);  // nothing there yet: allowed
      sink.write(EncodedFrame{0, frame.data(), frame.size()});
      { std::ofstream(victim) << "precious"; }  // appears while the encode runs
      if (overwrite) {
        sink.close();
        EXPECT_GT(io_test::read_bytes(victim).size(), 8u) << name << ": not replaced";
      } else {
        const std::string msg = message_of<Error>([&] { sink.close(); });
        EXPECT_EQ(msg, "output '" + victim + "' already exists (use -y to overwrite)") << name;
        EXPECT_EQ(io_test::read_bytes(victim), Bytes({'p', 'r', 'e', 'c', 'i', 'o', 'u', 's'}))
            << name << ": replaced";
      }
      EXPECT_EQ(dir.list().size(), 1u) << name << ": a temporary file stayed";
    }
  }
}

TEST(Files, WriteFileAndOutputFileClaimWithoutReplacing) {
  ScratchDir dir;
  const std::string path = dir.file("report.txt");
  OutputFile out(path, /*replace_existing=*/false);
  out.write("abcdef", 6);
  out.write_at(2, "XY", 2);      // over bytes written
  out.write_at(5, "1234", 4);    // over the last byte and past it
  out.write_at(12, "!", 1);      // past the end: a gap of zeros
  EXPECT_EQ(out.size(), 13u);
  { std::ofstream(path) << "theirs"; }
  EXPECT_EQ(message_of<Error>([&] { out.commit(); }),
            "output '" + path + "' already exists (use -y to overwrite)");
  EXPECT_EQ(dir.list(), std::vector<std::string>{"report.txt"});
  std::filesystem::remove(path);
  {
    OutputFile again(path, false);
    again.write("abcdef", 6);
    again.write_at(2, "XY", 2);
    again.write_at(5, "1234", 4);
    again.write_at(12, "!", 1);
    again.commit();
  }
  const Bytes want = {'a', 'b', 'X', 'Y', 'e', '1', '2', '3', '4', 0, 0, 0, '!'};
  EXPECT_EQ(io_test::read_bytes(path), want);
  EXPECT_THROW(write_file(path, std::string("x"), /*replace_existing=*/false), Error);
  EXPECT_EQ(io_test::read_bytes(path), want);
}

// ---------------------------------------------------------------------------------------------
// Pixel aspect ratio
// ---------------------------------------------------------------------------------------------

TEST(JfifDensity, PixelAspectIsTheReducedRatioWithin16Bits) {
  const auto d = [](int n, int m) {
    const JfifDensity j = JfifDensity::pixel_aspect(n, m);
    return std::to_string(j.unit) + " " + std::to_string(j.x) + ":" + std::to_string(j.y);
  };
  EXPECT_EQ(d(4, 3), "0 4:3");
  EXPECT_EQ(d(8, 6), "0 4:3");
  EXPECT_EQ(d(1, 1), "0 1:1");
  EXPECT_EQ(d(5, 5), "0 1:1");
  EXPECT_EQ(d(0, 0), "0 1:1");   // unknown
  EXPECT_EQ(d(-4, 3), "0 1:1");
  EXPECT_EQ(d(64, 45), "0 64:45");  // PAL 16:9 at 720x576
  EXPECT_EQ(d(100000, 1), "0 65535:1");
  EXPECT_EQ(d(1, 100000), "0 1:65535");
  // No exact 16-bit form: as close as any 16-bit fraction (found here by trying them all).
  for (const auto& [n, m] : std::vector<std::pair<int, int>>{{123457, 50000}, {1000003, 999999},
                                                             {70001, 3}, {3, 70001}}) {
    const double r = double(n) / m;
    double best = 1e9;
    for (int q = 1; q <= 65535; ++q) {
      const double p = std::min(65535.0, std::max(1.0, std::round(r * q)));
      best = std::min(best, std::fabs(p / q - r));
    }
    const JfifDensity j = JfifDensity::pixel_aspect(n, m);
    EXPECT_LE(std::fabs(double(j.x) / j.y - r), best + 1e-15) << n << ":" << m;
  }
}

TEST(EncodeJpeg, DensityIsWhatLibjpegWritesForIt) {
  Image img(61, 37, PixelFormat::rgb24);
  for (std::size_t i = 0; i < img.pixels.size(); ++i) img.pixels[i] = std::uint8_t(i * 13 / 7);
  for (const JfifDensity density : {JfifDensity{0, 4, 3}, JfifDensity{1, 300, 300},
                                    JfifDensity{2, 118, 59}, JfifDensity{}}) {
    EncodeOptions o;
    o.density = density;
    const Bytes ours = encode_jpeg(img.view(), o);
    const Bytes theirs = test::libjpeg_encode(img.view(), o);
    EXPECT_EQ(test::describe_difference(ours, theirs), "") << density.unit << " " << density.x;
    EXPECT_EQ(ours[13], density.unit);
  }
  EncodeOptions bad;
  bad.density = {3, 1, 1};
  EXPECT_THROW(encode_jpeg(img.view(), bad), UsageError);
}

/// ffprobe's view of stream `selector` ("v:0", "a:0") of `path`: its key=value lines.
std::map<std::string, std::string> probe(const std::string& path, const std::string& selector) {
  std::map<std::string, std::string> kv;
  for (const std::string& line : ScratchDir::lines(
           "ffprobe -v error -select_streams " + selector +
           " -show_entries stream=codec_name,sample_aspect_ratio,display_aspect_ratio,"
           "sample_rate,channels -show_entries format_tags -of default=nw=1 '" + path + "'")) {
    const auto eq = line.find('=');
    if (eq != std::string::npos) kv[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return kv;
}

TEST(Y4mSource, PixelAspectOfTheHeaderGoesIntoTheOptions) {
  ScratchDir dir;
  const std::string y4m = dir.file("hdv.y4m");
  for (const char* tag : {" A4:3", " A0:0", ""}) {
    {
      std::ofstream f(y4m, std::ios::binary);
      f << "YUV4MPEG2 W32 H16 F25:1 Ip" << tag << " C420jpeg\nFRAME\n"
        << std::string(32 * 16 * 3 / 2, '\x50');
    }
    Y4mSource source(y4m);
    const bool wide = std::string(tag) == " A4:3";
    EXPECT_EQ(source.stream().aspect_num, wide ? 4 : 1) << tag;
    EXPECT_EQ(source.stream().aspect_den, wide ? 3 : 1) << tag;
    EXPECT_TRUE(source.video_options().jpeg.density ==
                (wide ? JfifDensity{0, 4, 3} : JfifDensity{}))
        << tag;
  }
}

// An AudioSource of PCM packets made here: 16-bit stereo at 48 kHz, `seconds` long, in packets
// of `per_packet` samples.
class PcmSource final : public AudioSource {
 public:
  PcmSource(double seconds, int per_packet) : per_packet_(per_packet) {
    format_.codec = "pcm_s16le";
    format_.sample_rate = 48000;
    format_.channels = 2;
    const int n = int(seconds * 48000);
    for (int i = 0; i < n; ++i) {
      const auto v = std::int16_t(8000 * std::sin(i * 0.0576) + (i % 7));
      for (int c = 0; c < 2; ++c) {
        samples_.push_back(std::uint8_t(v & 0xFF));
        samples_.push_back(std::uint8_t((v >> 8) & 0xFF));
      }
    }
  }
  const AudioFormat& format() const override { return format_; }
  bool read(AudioPacket& p) override {
    const std::size_t bytes = std::size_t(per_packet_) * 4;
    if (at_ >= samples_.size()) return false;
    const std::size_t n = std::min(bytes, samples_.size() - at_);
    p.data.assign(samples_.begin() + long(at_), samples_.begin() + long(at_ + n));
    p.time = double(at_ / 4) / 48000;
    at_ += n;
    return true;
  }
  const Bytes& samples() const { return samples_; }

 private:
  AudioFormat format_;
  int per_packet_;
  Bytes samples_;
  std::size_t at_ = 0;
};

TEST(FileSink, AviCarriesAspectAudioAndMetadataAsFfmpegReadsThem) {
  if (!io_test::have_tool("ffprobe") || !io_test::have_tool("ffmpeg"))
    GTEST_SKIP() << "ffprobe/ffmpeg not found on PATH";
  ScratchDir dir;
  VideoOptions o;
  o.width = 72;   // shown 96x36 (8:3) with pixels 4:3 wide
  o.height = 36;
  o.jpeg.density = JfifDensity::pixel_aspect(4, 3);
  PcmSource audio(2.0, 1000);
  FileSinkOptions so;
  so.aspect_num = 4;
  so.aspect_den = 3;
  so.metadata = {{"title", "A title"}, {"artist", "Someone"}, {"unknown_key", "left out"}};
  so.audio = &audio;
  const std::string path = dir.file("out.avi");
  {
    FileSink sink(path, o.width, o.height, so);
    VideoEncoder encoder(o, sink);
    std::vector<std::uint8_t> pixels(frame_bytes(o));
    for (int t = 0; t < 50; ++t) {  // 2 s at 25 frames/s
      for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = std::uint8_t(i / 3 + 4 * t);
      encoder.encode(FrameView::contiguous(pixels.data(), o));
    }
    encoder.finish();
    sink.close();
  }
  auto v = probe(path, "v:0");
  EXPECT_EQ(v["codec_name"], "mjpeg");
  EXPECT_EQ(v["sample_aspect_ratio"], "4:3");
  EXPECT_EQ(v["display_aspect_ratio"], "8:3");
  EXPECT_EQ(v["TAG:title"], "A title");
  EXPECT_EQ(v["TAG:artist"], "Someone");
  EXPECT_EQ(v.count("TAG:unknown_key"), 0u);
  auto a = probe(path, "a:0");
  EXPECT_EQ(a["codec_name"], "pcm_s16le");
  EXPECT_EQ(a["sample_rate"], "48000");
  EXPECT_EQ(a["channels"], "2");
  // ffmpeg decodes exactly the samples given, and the frames say 4:3 in their JFIF header.
  const std::string raw = dir.file("audio.raw");
  std::string log;
  ASSERT_EQ(io_test::run("ffmpeg -nostdin -v error -xerror -i '" + path + "' -map 0:a -f s16le '" +
                         raw + "' 2>&1", &log), 0) << log;
  EXPECT_TRUE(io_test::read_bytes(raw) == audio.samples()) << "the audio differs";
  ASSERT_EQ(io_test::run("ffmpeg -nostdin -v error -i '" + path + "' -map 0:v -c copy -frames:v 1 "
                         "-f image2 '" + dir.file("f.jpg") + "' 2>&1", &log), 0) << log;
  EXPECT_EQ(probe(dir.file("f.jpg"), "v:0")["sample_aspect_ratio"], "4:3");
  ASSERT_EQ(io_test::run("ffmpeg -nostdin -v error -xerror -i '" + path + "' -f null - 2>&1", &log), 0);
  EXPECT_EQ(log, "");
}

TEST(FileSink, AudioOnlyWhereTheOutputHoldsIt) {
  PcmSource pcm(0.1, 480);
  AudioFormat opus;
  opus.codec = "opus";
  opus.sample_rate = 48000;
  opus.channels = 2;
  opus.frame_samples = 960;
  EXPECT_EQ(FileSink::audio_problem("a.avi", pcm.format()), "");
  EXPECT_EQ(FileSink::audio_problem("a.avi", opus), "AVI has no place for opus audio");
  EXPECT_EQ(FileSink::audio_problem("a.mjpeg", pcm.format()), ".mjpeg holds only the video");
  EXPECT_EQ(FileSink::audio_problem("f%03d.jpg", pcm.format()), "numbered JPEG files hold only the video");
  EXPECT_EQ(FileSink::audio_problem("one.jpg", pcm.format()), "a .jpg holds one picture");
  ScratchDir dir;
  FileSinkOptions so;
  so.audio = &pcm;
  EXPECT_THROW(FileSink(dir.file("x.mjpeg"), 8, 8, so), UsageError);
  EXPECT_EQ(dir.list(), std::vector<std::string>{});
  EXPECT_EQ(FileSink::metadata_keys("a.avi").front(), "title");
  EXPECT_TRUE(FileSink::metadata_keys("a.mjpeg").empty());
}

}  // namespace
}  // namespace mjpeg
