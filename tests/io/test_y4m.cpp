// Y4M reader and YCbCr -> RGB converter.
#include "io/y4m.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "io_test_util.hpp"
#include "mjpeg/error.hpp"

using namespace mjpeg::io;
using mjpeg::YuvMatrix;
using mjpeg::YuvRange;
using mjpeg::PlanarChroma;
using io_test::ScratchDir;

namespace {

/// Frame `index` of a synthetic stream: byte k of the frame is (k * 7 + index * 13) & 255.
std::string frame_payload(std::size_t bytes, int index) {
  std::string s(bytes, '\0');
  for (std::size_t k = 0; k < bytes; ++k) s[k] = char((k * 7 + std::size_t(index) * 13) & 255);
  return s;
}

std::string make_y4m(const std::string& header_tags, std::size_t frame_bytes, int frames,
                     const std::string& frame_tags = "") {
  std::string s = "YUV4MPEG2 " + header_tags + "\n";
  for (int i = 0; i < frames; ++i) s += "FRAME" + frame_tags + "\n" + frame_payload(frame_bytes, i);
  return s;
}

/// Expects `fn` to throw mjpeg::Error whose message contains every string in `parts`.
template <class Fn>
void expect_error(Fn fn, std::initializer_list<const char*> parts) {
  try {
    fn();
    ADD_FAILURE() << "no mjpeg::Error thrown";
  } catch (const mjpeg::Error& e) {
    for (const char* p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
        << "message '" << e.what() << "' lacks '" << p << "'";
  }
}

struct ChromaCase {
  const char* tag;       // C tag ("" = none: the 420jpeg default)
  PlanarChroma chroma;
  int cw, ch;            // expected chroma plane size for 5x3
};

class PlanarChromaTest : public ::testing::TestWithParam<ChromaCase> {};

TEST_P(PlanarChromaTest, ParsesHeaderAndFramesForOddSizes) {
  const ChromaCase c = GetParam();
  ScratchDir dir;
  const std::size_t frame = 5 * 3 + 2 * std::size_t(c.cw * c.ch);
  const std::string tags = std::string("W5 H3 F30000:1001 Ip A1:1") +
                           (*c.tag ? std::string(" C") + c.tag : std::string());
  io_test::write_bytes(dir.file("a.y4m"), make_y4m(tags, frame, 3, " Ixyz"));

  Y4mReader r(dir.file("a.y4m"));
  const Y4mInfo& info = r.info();
  EXPECT_EQ(info.width, 5);
  EXPECT_EQ(info.height, 3);
  EXPECT_EQ(info.fps_num, 30000);
  EXPECT_EQ(info.fps_den, 1001);
  EXPECT_EQ(info.aspect_num, 1);
  EXPECT_EQ(info.interlace, 'p');
  EXPECT_EQ(info.chroma, c.chroma);
  EXPECT_EQ(info.chroma_width(), c.cw);
  EXPECT_EQ(info.chroma_height(), c.ch);
  EXPECT_EQ(info.frame_bytes(), frame);
  EXPECT_EQ(info.range, YuvRange::limited);
  EXPECT_EQ(info.matrix, YuvMatrix::bt601);
  EXPECT_TRUE(info.notices.empty());

  Y4mFrame f;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(r.read_frame(f)) << "frame " << i;
    const std::string want = frame_payload(frame, i);
    ASSERT_EQ(f.data.size(), frame);
    EXPECT_EQ(0, std::memcmp(f.data.data(), want.data(), frame));
    const Y4mPlanes p = f.planes(info);
    EXPECT_EQ(p.y, f.data.data());
    if (c.chroma == PlanarChroma::mono) {
      EXPECT_EQ(p.cb, nullptr);
    } else {
      EXPECT_EQ(p.cb, f.data.data() + 15);
      EXPECT_EQ(p.cr, p.cb + c.cw * c.ch);
      EXPECT_EQ(p.c_stride, std::size_t(c.cw));
    }
  }
  const std::uint8_t* before = f.data.data();
  EXPECT_FALSE(r.read_frame(f));
  EXPECT_EQ(f.data.data(), before) << "the frame buffer is reused, not reallocated";
  EXPECT_EQ(r.frames_read(), 3);
}

INSTANTIATE_TEST_SUITE_P(AllChromas, PlanarChromaTest,
    ::testing::Values(ChromaCase{"", PlanarChroma::c420, 3, 2},
                      ChromaCase{"420jpeg", PlanarChroma::c420, 3, 2},
                      ChromaCase{"420paldv", PlanarChroma::c420, 3, 2},
                      ChromaCase{"420mpeg2", PlanarChroma::c420, 3, 2},
                      ChromaCase{"420", PlanarChroma::c420, 3, 2},
                      ChromaCase{"422", PlanarChroma::c422, 3, 3},
                      ChromaCase{"444", PlanarChroma::c444, 5, 3},
                      ChromaCase{"mono", PlanarChroma::mono, 0, 0}),
    [](const auto& info) { return std::string(*info.param.tag ? info.param.tag : "default"); });

TEST(Y4mHeader, ExtensionsRangeAndMatrix) {
  Y4mInfo a = parse_y4m_header("YUV4MPEG2 W8 H8 F25:1 C420jpeg XYSCSS=420JPEG XCOLORRANGE=FULL", "t");
  EXPECT_EQ(a.range, YuvRange::full);
  EXPECT_EQ(a.matrix, YuvMatrix::bt601);
  Y4mInfo b = parse_y4m_header(" W8 H8 F25:1 XCOLORRANGE=LIMITED XCOLORMATRIX=BT709", "t");
  EXPECT_EQ(b.range, YuvRange::limited);
  EXPECT_EQ(b.matrix, YuvMatrix::bt709);
  EXPECT_THROW(parse_y4m_header("W8 H8 XCOLORRANGE=SOMETIMES", "t"), mjpeg::Error);
  // What the header said, and what was assumed (the CLI's notice and --colorspace/--range).
  EXPECT_TRUE(a.range_tagged);
  EXPECT_FALSE(a.matrix_tagged);
  EXPECT_NE(a.describe().find("BT.601 (assumed)"), std::string::npos) << a.describe();
  EXPECT_TRUE(b.range_tagged && b.matrix_tagged);
  Y4mInfo c = parse_y4m_header("W8 H8 F25:1 XCOLORMATRIX=BT2020", "t");
  EXPECT_EQ(c.matrix, YuvMatrix::bt2020);
  EXPECT_FALSE(c.range_tagged);
}

TEST(Y4mHeader, DefaultsAndNotices) {
  Y4mInfo a = parse_y4m_header("W8 H8", "t");
  EXPECT_EQ(a.fps_num, 25);
  EXPECT_EQ(a.fps_den, 1);
  EXPECT_EQ(a.chroma, PlanarChroma::c420);
  ASSERT_EQ(a.notices.size(), 1u);  // no frame rate
  Y4mInfo b = parse_y4m_header("W8 H8 F0:0 It", "t");
  EXPECT_EQ(b.fps_num, 25);
  EXPECT_EQ(b.interlace, 't');
  EXPECT_EQ(b.notices.size(), 2u);  // unknown rate, interlaced
  Y4mInfo c = parse_y4m_header("W8 H8 F24:1 I? Zunknown", "t");  // unknown tags are ignored
  EXPECT_EQ(c.interlace, '?');
  EXPECT_TRUE(c.notices.empty());
  EXPECT_NE(c.describe().find("8x8 24/1"), std::string::npos);
}

TEST(Y4mHeader, RejectsInvalidAndUnsupported) {
  expect_error([] { parse_y4m_header("W8 H8 C420p10", "clip.y4m"); }, {"clip.y4m", "420p10", "8-bit"});
  expect_error([] { parse_y4m_header("W8 H8 C444p16", "x"); }, {"444p16", "8-bit"});
  expect_error([] { parse_y4m_header("W8 H8 Cmono16", "x"); }, {"mono16", "8-bit"});
  expect_error([] { parse_y4m_header("W8 H8 C444alpha", "x"); }, {"444alpha"});
  expect_error([] { parse_y4m_header("H8 F25:1", "x"); }, {"W"});
  expect_error([] { parse_y4m_header("W0 H8", "x"); }, {"width"});
  expect_error([] { parse_y4m_header("W8 H-3", "x"); }, {"height"});
  expect_error([] { parse_y4m_header("W8 H8 F25", "x"); }, {"frame rate"});
  expect_error([] { parse_y4m_header("W8 H8 Iq", "x"); }, {"interlacing"});
  expect_error([] { parse_y4m_header("W8 H8 Ax:1", "x"); }, {"aspect"});
  expect_error([] { parse_y4m_header("W100000 H8", "x"); }, {"too large"});
}

TEST(Y4mReader, TruncatedFinalFrameNamesFileAndFrame) {
  ScratchDir dir;
  std::string data = make_y4m("W4 H4 F25:1 C420jpeg", 24, 3);
  data.resize(data.size() - 5);  // the third frame loses 5 bytes
  const std::string path = dir.file("cut.y4m");
  io_test::write_bytes(path, data);
  Y4mReader r(path);
  Y4mFrame f;
  EXPECT_TRUE(r.read_frame(f));
  EXPECT_TRUE(r.read_frame(f));
  expect_error([&] { r.read_frame(f); }, {path.c_str(), "frame 3", "truncated", "19 of 24"});
}

TEST(Y4mReader, TruncatedInsideFrameHeader) {
  ScratchDir dir;
  std::string data = make_y4m("W4 H4 F25:1", 24, 1) + "FRA";
  io_test::write_bytes(dir.file("h.y4m"), data);
  Y4mReader r(dir.file("h.y4m"));
  Y4mFrame f;
  EXPECT_TRUE(r.read_frame(f));
  expect_error([&] { r.read_frame(f); }, {"frame 2", "truncated"});
}

TEST(Y4mReader, GarbageBetweenFrames) {
  ScratchDir dir;
  // Frames one byte longer than the header says: the second "FRAME" is misaligned.
  std::string data = "YUV4MPEG2 W4 H4 F25:1\nFRAME\n" + frame_payload(25, 0) + "FRAME\n" + frame_payload(24, 1);
  io_test::write_bytes(dir.file("g.y4m"), data);
  Y4mReader r(dir.file("g.y4m"));
  Y4mFrame f;
  EXPECT_TRUE(r.read_frame(f));
  expect_error([&] { r.read_frame(f); }, {"frame 2", "FRAME"});
}

// With keep-going, each kind of damage ends the stream after the complete frames (their bytes
// intact), lost() names the damaged frame and what was left; read sequentially and mapped alike.
TEST(Y4mReader, KeepGoingEndsAtTheLastCompleteFrame) {
  ScratchDir dir;
  const std::string whole = make_y4m("W4 H4 F25:1", 24, 4);
  const std::size_t frame = 6 + 24, head = whole.size() - 4 * frame;
  std::string payload_cut = whole.substr(0, head + 2 * frame + 6 + 10);   // inside frame 3
  std::string header_cut = whole.substr(0, head + 2 * frame + 3);          // "FRA"
  std::string damaged = whole;
  damaged.replace(head + 2 * frame, 5, "XXXXX");                          // frame 3's header
  std::string bad_params = whole;
  bad_params.replace(head + 2 * frame + 5, 1, "?");                       // "FRAME?"
  const struct {
    const char* name;
    const std::string* data;
    const char* says;
  } cases[] = {{"payload", &payload_cut, "truncated frame 3: got 10 of 24 bytes"},
               {"header", &header_cut, "truncated frame 3 (the stream ends inside its FRAME"},
               {"damaged", &damaged, "frame 3: expected a 'FRAME' header"},
               {"params", &bad_params, "frame 3: malformed FRAME header"}};
  for (const auto& c : cases) {
    const std::string path = dir.file(std::string(c.name) + ".y4m");
    io_test::write_bytes(path, *c.data);
    for (const bool mapped : {false, true}) {
      Y4mReader r(path);
      r.set_keep_going(true);
      ASSERT_TRUE(!mapped || r.map_frames()) << c.name;
      for (int i = 0; i < 2; ++i) {
        const std::uint8_t* got = nullptr;
        Y4mFrame f;
        if (mapped) {
          got = r.next_mapped_frame();
          ASSERT_NE(got, nullptr) << c.name << " frame " << i + 1;
        } else {
          ASSERT_TRUE(r.read_frame(f)) << c.name << " frame " << i + 1;
          got = f.data.data();
        }
        EXPECT_EQ(0, std::memcmp(got, frame_payload(24, i).data(), 24)) << c.name;
      }
      Y4mFrame f;
      if (mapped)
        EXPECT_EQ(r.next_mapped_frame(), nullptr) << c.name;
      else
        EXPECT_FALSE(r.read_frame(f)) << c.name;
      EXPECT_NE(r.lost().find(c.says), std::string::npos) << c.name << ": " << r.lost();
      EXPECT_NE(r.lost().find("frames 1 to 2 are complete"), std::string::npos) << r.lost();
      EXPECT_FALSE(mapped ? r.next_mapped_frame() != nullptr : r.read_frame(f));  // stays ended
    }
    // Without it, the same damage is an error naming the frame.
    Y4mReader strict(path);
    Y4mFrame f;
    EXPECT_TRUE(strict.read_frame(f));
    EXPECT_TRUE(strict.read_frame(f));
    expect_error([&] { strict.read_frame(f); }, {"frame 3"});
  }
  // A whole stream loses nothing.
  const std::string path = dir.file("whole.y4m");
  io_test::write_bytes(path, whole);
  Y4mReader r(path);
  r.set_keep_going(true);
  Y4mFrame f;
  int n = 0;
  while (r.read_frame(f)) ++n;
  EXPECT_EQ(n, 4);
  EXPECT_EQ(r.lost(), "");
}

TEST(Y4mReader, GarbageFilesAndMissingFiles) {
  ScratchDir dir;
  io_test::write_bytes(dir.file("empty.y4m"), "");
  expect_error([&] { Y4mReader r(dir.file("empty.y4m")); }, {"empty.y4m", "empty"});
  io_test::write_bytes(dir.file("png.y4m"), "\x89PNG\r\n\x1a\n0000000000000000");
  expect_error([&] { Y4mReader r(dir.file("png.y4m")); }, {"png.y4m", "YUV4MPEG2"});
  io_test::write_bytes(dir.file("nonl.y4m"), "YUV4MPEG2 W4 H4");
  expect_error([&] { Y4mReader r(dir.file("nonl.y4m")); }, {"nonl.y4m", "header"});
  io_test::write_bytes(dir.file("deep.y4m"), "YUV4MPEG2 W4 H4 C420p10\n");
  expect_error([&] { Y4mReader r(dir.file("deep.y4m")); }, {"deep.y4m", "420p10"});
  expect_error([&] { Y4mReader r(dir.file("missing.y4m")); }, {"missing.y4m", "cannot open"});
}

TEST(Y4mReader, FileStreamOverloadAndCallerBuffer) {
  const std::string data = make_y4m("W6 H2 F50:1 C444", 36, 2);
  FILE* f = ::fmemopen(const_cast<char*>(data.data()), data.size(), "rb");
  ASSERT_NE(f, nullptr);
  {
    Y4mReader r(f, "<memory>");
    EXPECT_EQ(r.info().fps_num, 50);
    std::vector<std::uint8_t> buf(100);
    EXPECT_THROW(r.read_frame(buf.data(), 10), mjpeg::UsageError);
    ASSERT_TRUE(r.read_frame(buf.data(), buf.size()));
    EXPECT_EQ(0, std::memcmp(buf.data(), frame_payload(36, 0).data(), 36));
    ASSERT_TRUE(r.read_frame(buf.data(), buf.size()));
    EXPECT_EQ(0, std::memcmp(buf.data(), frame_payload(36, 1).data(), 36));
    EXPECT_FALSE(r.read_frame(buf.data(), buf.size()));
  }
  std::fclose(f);  // not owned by the reader
}

// A stream of no file descriptor (fopencookie, as the CLI makes of a pipe whose first bytes it
// looked at) keeps its maker's buffer: unbuffered, glibc would ask its read function for one
// byte at a time, three million calls for a 1080p frame.
TEST(Y4mReader, CookieStreamIsReadInBlocks) {
  struct Source {
    std::string data;
    std::size_t at = 0;
    int calls = 0;
  } src;
  src.data = make_y4m("W640 H480 F25:1 C420jpeg", 640 * 480 * 3 / 2, 3);
  cookie_io_functions_t io{};
  io.read = [](void* cookie, char* buf, std::size_t size) -> ssize_t {
    auto* s = static_cast<Source*>(cookie);
    ++s->calls;
    // At most 64 KiB a call, as a pipe gives it.
    const std::size_t n = std::min({size, s->data.size() - s->at, std::size_t(1) << 16});
    std::memcpy(buf, s->data.data() + s->at, n);
    s->at += n;
    return static_cast<ssize_t>(n);
  };
  FILE* f = ::fopencookie(&src, "rb", io);
  ASSERT_NE(f, nullptr);
  std::vector<char> buffer(std::size_t(1) << 20);
  ASSERT_EQ(std::setvbuf(f, buffer.data(), _IOFBF, buffer.size()), 0);
  {
    Y4mReader r(f, "<cookie>");
    std::vector<std::uint8_t> buf(640 * 480 * 3 / 2);
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(r.read_frame(buf.data(), buf.size()));
      EXPECT_EQ(0, std::memcmp(buf.data(), frame_payload(buf.size(), i).data(), buf.size()));
    }
    EXPECT_FALSE(r.read_frame(buf.data(), buf.size()));
  }
  std::fclose(f);
  // 1.4 MB in 64 KiB reads: about 22, and a few more at the frames' ends.
  EXPECT_LE(src.calls, 40) << "the reader asked for its bytes a few at a time";
}

TEST(Y4mReader, PositionalReadsOfPlainFramesAndResume) {
  ScratchDir dir;
  const std::string path = dir.file("p.y4m");
  io_test::write_bytes(path, make_y4m("W5 H3 F25:1 C420jpeg", 5 * 3 + 2 * 3 * 2, 7));
  Y4mReader r(path);
  ASSERT_EQ(r.positional_frames(), 7);
  std::vector<std::uint8_t> buf(r.info().frame_bytes());
  for (int i : {6, 0, 3}) {  // any order, independent of the sequential position
    ASSERT_TRUE(r.read_frame_at(i, buf.data(), buf.size()));
    EXPECT_EQ(0, std::memcmp(buf.data(), frame_payload(buf.size(), i).data(), buf.size())) << i;
  }
  EXPECT_THROW(r.read_frame_at(7, buf.data(), buf.size()), mjpeg::UsageError);
  EXPECT_THROW(r.read_frame_at(0, buf.data(), buf.size() - 1), mjpeg::UsageError);
  r.resume_at(5);  // sequential reading goes on from frame 5
  ASSERT_TRUE(r.read_frame(buf.data(), buf.size()));
  EXPECT_EQ(0, std::memcmp(buf.data(), frame_payload(buf.size(), 5).data(), buf.size()));
  ASSERT_TRUE(r.read_frame(buf.data(), buf.size()));
  EXPECT_FALSE(r.read_frame(buf.data(), buf.size()));
}

TEST(Y4mReader, NoPositionalReadsWhenFramesMayNotBeAtFixedOffsets) {
  ScratchDir dir;
  const std::size_t fb = 4 * 2 + 2 * 2 * 1;
  // Frame parameters from the first frame on.
  io_test::write_bytes(dir.file("a.y4m"), make_y4m("W4 H2 C420jpeg", fb, 3, " Ixx"));
  EXPECT_EQ(Y4mReader(dir.file("a.y4m")).positional_frames(), -1);
  // A truncated last frame.
  std::string cut = make_y4m("W4 H2 C420jpeg", fb, 3);
  cut.pop_back();
  io_test::write_bytes(dir.file("b.y4m"), cut);
  EXPECT_EQ(Y4mReader(dir.file("b.y4m")).positional_frames(), -1);
  // No frames at all.
  io_test::write_bytes(dir.file("c.y4m"), make_y4m("W4 H2 C420jpeg", fb, 0));
  EXPECT_EQ(Y4mReader(dir.file("c.y4m")).positional_frames(), -1);
  // A memory stream.
  const std::string data = make_y4m("W4 H2 C420jpeg", fb, 2);
  FILE* f = ::fmemopen(const_cast<char*>(data.data()), data.size(), "rb");
  ASSERT_NE(f, nullptr);
  {
    Y4mReader r(f, "<memory>");
    EXPECT_EQ(r.positional_frames(), -1);
    std::vector<std::uint8_t> buf(fb);
    EXPECT_THROW(r.read_frame_at(0, buf.data(), buf.size()), mjpeg::UsageError);
  }
  std::fclose(f);
}

TEST(Y4mReader, ReadsStandardInputThroughAPipe) {
  const std::string data = make_y4m("W8 H4 F25:1 C422", 64, 5);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {  // child: stdin is the pipe; exit code 0 = all frames read and correct
    ::close(fds[1]);
    ::dup2(fds[0], 0);
    int code = 0;
    try {
      Y4mReader r("-");
      Y4mFrame f;
      int n = 0;
      while (r.read_frame(f)) {
        if (std::memcmp(f.data.data(), frame_payload(64, n).data(), 64) != 0) code = 3;
        ++n;
      }
      if (n != 5) code = 2;
    } catch (...) {
      code = 1;
    }
    std::_Exit(code);
  }
  ::close(fds[0]);
  std::size_t off = 0;
  while (off < data.size()) {  // small writes: the reader must cope with short pipe reads
    const std::size_t n = std::min<std::size_t>(7, data.size() - off);
    ASSERT_EQ(::write(fds[1], data.data() + off, n), ssize_t(n));
    off += n;
  }
  ::close(fds[1]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: threw, 2: wrong frame count, 3: wrong bytes";
}

// --- conversion ------------------------------------------------------------------------------

std::array<int, 3> convert_one(int y, int cb, int cr, YuvMatrix m, YuvRange r) {
  Y4mInfo info;
  info.width = 1;
  info.height = 1;
  info.chroma = PlanarChroma::c444;
  info.matrix = m;
  info.range = r;
  const std::uint8_t yy = std::uint8_t(y), u = std::uint8_t(cb), v = std::uint8_t(cr);
  Y4mPlanes p{&yy, &u, &v, 1, 1};
  std::uint8_t rgb[3];
  yuv_to_rgb24(p, info, rgb, 3);
  return {rgb[0], rgb[1], rgb[2]};
}

void expect_rgb(std::array<int, 3> got, int r, int g, int b, int tol, const char* what) {
  EXPECT_NEAR(got[0], r, tol) << what;
  EXPECT_NEAR(got[1], g, tol) << what;
  EXPECT_NEAR(got[2], b, tol) << what;
}

TEST(YuvToRgb, KnownColours) {
  using M = YuvMatrix;
  using R = YuvRange;
  expect_rgb(convert_one(235, 128, 128, M::bt601, R::limited), 255, 255, 255, 0, "601 limited white");
  expect_rgb(convert_one(16, 128, 128, M::bt601, R::limited), 0, 0, 0, 0, "601 limited black");
  expect_rgb(convert_one(126, 128, 128, M::bt601, R::limited), 128, 128, 128, 0, "601 limited grey");
  expect_rgb(convert_one(255, 128, 128, M::bt601, R::full), 255, 255, 255, 0, "601 full white");
  expect_rgb(convert_one(0, 128, 128, M::bt601, R::full), 0, 0, 0, 0, "601 full black");
  expect_rgb(convert_one(81, 90, 240, M::bt601, R::limited), 255, 0, 0, 1, "601 limited red");
  expect_rgb(convert_one(145, 54, 34, M::bt601, R::limited), 0, 255, 0, 1, "601 limited green");
  expect_rgb(convert_one(41, 240, 110, M::bt601, R::limited), 0, 0, 255, 1, "601 limited blue");
  expect_rgb(convert_one(76, 85, 255, M::bt601, R::full), 254, 0, 0, 1, "601 full red");
  expect_rgb(convert_one(63, 102, 240, M::bt709, R::limited), 255, 0, 0, 1, "709 limited red");
  expect_rgb(convert_one(173, 42, 26, M::bt709, R::limited), 0, 255, 0, 1, "709 limited green");
  expect_rgb(convert_one(32, 240, 118, M::bt709, R::limited), 0, 0, 255, 1, "709 limited blue");
  // BT.2020 (Kr 0.2627, Kb 0.0593), full range: R = Y + 1.4746 (Cr - 128),
  // G = Y - 0.16455 (Cb - 128) - 0.57135 (Cr - 128), B = Y + 1.8814 (Cb - 128).
  expect_rgb(convert_one(128, 128, 178, M::bt2020, R::full), 202, 99, 128, 0, "2020 full reddish");
  expect_rgb(convert_one(100, 150, 128, M::bt2020, R::full), 100, 96, 141, 0, "2020 full bluish");
  expect_rgb(convert_one(235, 128, 128, M::bt709, R::limited), 255, 255, 255, 0, "709 limited white");
  // Out-of-range inputs clamp rather than wrap.
  // Out-of-range inputs clamp rather than wrap (Y above 235 / below 16, saturated chroma).
  expect_rgb(convert_one(255, 128, 128, M::bt601, R::limited), 255, 255, 255, 0, "clamp white");
  expect_rgb(convert_one(0, 128, 128, M::bt601, R::limited), 0, 0, 0, 0, "clamp black");
  expect_rgb(convert_one(255, 255, 255, M::bt601, R::limited), 255, 125, 255, 1, "clamp magenta");
  expect_rgb(convert_one(0, 0, 0, M::bt601, R::limited), 0, 136, 0, 1, "clamp green");
}

// Every sample of the rounded form against the exact conversion and against ffmpeg:
// tests/io/test_yuv_to_rgb.cpp (in mjpeg_tests, whose own loops are compiled optimised).

TEST(YuvToRgb, NearestChromaAndMonoAndStride) {
  // 4:2:0, 3x3: chroma 2x2; pixel (2,2) takes chroma sample (1,1).
  Y4mInfo info = parse_y4m_header("W3 H3 F25:1 C420jpeg XCOLORRANGE=FULL", "t");
  std::vector<std::uint8_t> frame(info.frame_bytes(), 128);
  Y4mPlanes p = planes_of(frame.data(), info);
  frame[info.luma_bytes() + info.chroma_bytes() + 3] = 255;  // Cr of the bottom-right block
  std::vector<std::uint8_t> rgb(3 * 16, 0xAB);              // stride 16, 1 byte of slack per row
  yuv_to_rgb24(p, info, rgb.data(), 16);
  EXPECT_EQ(rgb[0], 128);                                    // (0,0): grey
  EXPECT_GT(rgb[2 * 16 + 6], 250);                           // (2,2): red
  EXPECT_EQ(rgb[15], 0xAB) << "bytes past width*3 in a row are untouched";

  Y4mInfo mono = parse_y4m_header("W2 H1 Cmono", "t");
  const std::uint8_t y[2] = {16, 235};
  std::uint8_t out[6];
  yuv_to_rgb24(planes_of(y, mono), mono, out, 6);
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[5], 255);
  EXPECT_THROW(yuv_to_rgb24(planes_of(y, mono), mono, out, 5), mjpeg::UsageError);
}

/// Mean absolute difference of our conversion of `y4m` against ffmpeg's rgb24 of the same
/// file (with `ffmpeg_vf` as the conversion filter).
double mad_against_ffmpeg(const ScratchDir& dir, const std::string& y4m, YuvMatrix matrix,
                          const std::string& ffmpeg_vf) {
  const std::string rgb_path = dir.file("ref.rgb");
  EXPECT_EQ(io_test::run("ffmpeg -v error -y -i '" + y4m + "' " + ffmpeg_vf +
                         " -pix_fmt rgb24 -f rawvideo '" + rgb_path + "'"), 0);
  const std::vector<std::uint8_t> ref = io_test::read_bytes(rgb_path);
  Y4mReader r(y4m);
  Y4mInfo info = r.info();
  info.matrix = matrix;
  Y4mFrame f;
  const std::size_t frame_rgb = std::size_t(info.width) * info.height * 3;
  std::vector<std::uint8_t> rgb(frame_rgb);
  double sum = 0;
  std::size_t count = 0;
  for (std::size_t off = 0; r.read_frame(f); off += frame_rgb) {
    EXPECT_LE(off + frame_rgb, ref.size());
    if (off + frame_rgb > ref.size()) break;
    yuv_to_rgb24(f.planes(info), info, rgb.data(), std::size_t(info.width) * 3);
    for (std::size_t i = 0; i < frame_rgb; ++i) sum += std::abs(int(rgb[i]) - int(ref[off + i]));
    count += frame_rgb;
  }
  return count ? sum / double(count) : 1e9;
}

TEST(YuvToRgb, SmpteBarsCloseToFfmpeg) {
  if (!io_test::have_tool("ffmpeg")) GTEST_SKIP() << "ffmpeg not found on PATH";
  ScratchDir dir;
  struct Case { const char* pix; YuvMatrix m; const char* vf; };
  for (const Case& c : {Case{"yuv420p", YuvMatrix::bt601, ""},
                        Case{"yuv422p", YuvMatrix::bt601, ""},
                        Case{"yuv444p", YuvMatrix::bt601, ""},
                        Case{"yuvj420p", YuvMatrix::bt601, ""},
                        Case{"yuv420p", YuvMatrix::bt709, "-vf scale=in_color_matrix=bt709"}}) {
    const std::string y4m = dir.file(std::string(c.pix) + ".y4m");
    ASSERT_EQ(io_test::run("ffmpeg -v error -y -f lavfi -i smptebars=size=320x240:rate=25 "
                           "-frames:v 2 -pix_fmt " + std::string(c.pix) +
                           " -f yuv4mpegpipe -strict -1 '" + y4m + "'"), 0);
    const double mad = mad_against_ffmpeg(dir, y4m, c.m, c.vf);
    RecordProperty(std::string("mad_") + c.pix, std::to_string(mad));
    std::printf("  %s %s: mean abs difference to ffmpeg rgb24 = %.3f\n", c.pix, c.vf, mad);
    EXPECT_LT(mad, 1.0) << c.pix << " " << c.vf;
  }
}

}  // namespace
