// Y4mSource (include/mjpeg/y4m.hpp) feeding encode_all: every chroma layout (mono included),
// read or mapped, a frame range, a pipe; the bytes are encode_jpeg's of the frames. Its errors:
// options that do not describe the stream, a missing file, a truncated frame.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "api_test_util.hpp"
#include "mjpeg/y4m.hpp"

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

}  // namespace
}  // namespace mjpeg::apitest
