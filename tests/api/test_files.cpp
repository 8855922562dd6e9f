// FileSink and the file helpers (include/mjpeg/files.hpp): a raw MJPEG stream, an AVI and an
// image sequence of encode_jpeg's bytes; the names and targets a FileSink refuses, before it
// creates anything, and nothing left behind; sequence patterns and extensions; write_file,
// check_output_allowed, remove_partial_outputs. What the outputs carry, read back by ffprobe and
// ffmpeg: test_file_outputs.cpp.
#include <gtest/gtest.h>

#include <stdlib.h>  // mkdtemp
#include <unistd.h>  // getpid

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "api_test_util.hpp"
#include "mjpeg/files.hpp"

namespace mjpeg::apitest {
namespace {

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
