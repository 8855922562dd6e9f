// PPM/PGM reader and writer (src/io/pnm).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "app/input/pnm.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg::app {
namespace {

std::vector<std::uint8_t> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }

Image decode(const std::string& s, const std::string& name = "mem.ppm") {
  return decode_pnm(reinterpret_cast<const std::uint8_t*>(s.data()), s.size(), name);
}

/// The message of the mjpeg::Error that decoding `s` throws ("" if none).
std::string decode_error(const std::string& s, const std::string& name = "mem.ppm") {
  try {
    decode(s, name);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

Image make_pattern(int w, int h, PixelFormat f) {
  Image img(w, h, f);
  for (std::size_t i = 0; i < img.pixels.size(); ++i)
    img.pixels[i] = static_cast<std::uint8_t>((i * 37 + i / 7) & 0xff);
  return img;
}

/// A per-test temporary directory, removed with its files at the end.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/mjpeg_test_pnm.XXXXXX";
    const char* made = mkdtemp(tmpl);
    if (made == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = made;
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

TEST(Pnm, RescaleMatchesCjpegFormula) {
  // (v * 255 + maxval / 2) / maxval, worked out by hand for a few maxvals.
  EXPECT_EQ(rescale_sample(0, 1), 0);
  EXPECT_EQ(rescale_sample(1, 1), 255);
  EXPECT_EQ(rescale_sample(1, 3), 85);
  EXPECT_EQ(rescale_sample(2, 3), 170);
  EXPECT_EQ(rescale_sample(500, 1000), 128);  // (127500 + 500) / 1000
  EXPECT_EQ(rescale_sample(499, 1000), 127);  // (127245 + 500) / 1000
  EXPECT_EQ(rescale_sample(128, 256), 128);   // (32640 + 128) / 256 = 128 exactly
  EXPECT_EQ(rescale_sample(65535, 65535), 255);
  EXPECT_EQ(rescale_sample(32767, 65535), 127);  // (8355585 + 32767) / 65535 = 127.99..
  EXPECT_EQ(rescale_sample(32768, 65535), 128);
  for (unsigned v = 0; v <= 255; ++v) EXPECT_EQ(rescale_sample(v, 255), v);
}

TEST(Pnm, RoundTripRgbAndGray) {
  for (PixelFormat f : {PixelFormat::rgb24, PixelFormat::gray8}) {
    const Image src = make_pattern(7, 5, f);
    const Image back = decode(encode_pnm(src.view()));
    EXPECT_EQ(back.width, 7);
    EXPECT_EQ(back.height, 5);
    EXPECT_EQ(back.format, f);
    EXPECT_EQ(back.pixels, src.pixels);
  }
}

TEST(Pnm, RoundTripThroughFile) {
  TempDir dir;
  const Image src = make_pattern(33, 17, PixelFormat::rgb24);
  write_pnm(dir.file("a.ppm"), src.view());
  const Image back = read_pnm(dir.file("a.ppm"));
  EXPECT_EQ(back.pixels, src.pixels);
  EXPECT_EQ(back.format, PixelFormat::rgb24);
}

TEST(Pnm, WriterHonoursStride) {
  // A 2x2 view into a 3-pixel-wide buffer: the padding column must not be written.
  const std::vector<std::uint8_t> buf = {1, 2, 99, 3, 4, 99};
  const ImageView v{buf.data(), 2, 2, PixelFormat::gray8, 3};
  EXPECT_EQ(encode_pnm(v), std::string("P5\n2 2\n255\n\x01\x02\x03\x04", 15));
}

TEST(Pnm, HeaderCommentsAndWhitespace) {
  const std::string s = std::string("P6 # a comment\n#another\n 2\t# w\r\n1\n# before maxval\n255\n") +
                        "abcdef";
  const Image img = decode(s);
  EXPECT_EQ(img.width, 2);
  EXPECT_EQ(img.height, 1);
  EXPECT_EQ(img.pixels, bytes_of("abcdef"));
}

TEST(Pnm, CommentRightAfterMaxvalIsSkippedLikeCjpeg) {
  const Image img = decode("P5 1 2 255#comment\nxy");
  EXPECT_EQ(img.pixels, bytes_of("xy"));
}

TEST(Pnm, RasterMayStartWithWhitespaceByte) {
  // Only one separator byte follows maxval; the next byte (a space, 0x20) is a sample.
  const Image img = decode("P5 2 1 255\n  ");
  EXPECT_EQ(img.pixels, (std::vector<std::uint8_t>{0x20, 0x20}));
}

TEST(Pnm, TrailingBytesAreIgnored) {
  const Image img = decode("P5 1 1 255\nzP5 1 1 255\nq");
  EXPECT_EQ(img.pixels, bytes_of("z"));
}

TEST(Pnm, MaxvalBelow255IsRescaled) {
  const Image img = decode(std::string("P5 4 1 3\n\x00\x01\x02\x03", 13));
  EXPECT_EQ(img.pixels, (std::vector<std::uint8_t>{0, 85, 170, 255}));
}

TEST(Pnm, SixteenBitBigEndianIsRescaled) {
  // maxval 1000: samples 0, 500, 999, 1000 (big-endian words).
  const std::string raster("\x00\x00\x01\xf4\x03\xe7\x03\xe8", 8);
  const Image img = decode("P5 4 1 1000\n" + raster);
  EXPECT_EQ(img.pixels, (std::vector<std::uint8_t>{0, 128, 255, 255}));  // 999 -> 255245/1000
  // maxval 65535, RGB.
  const Image rgb = decode(std::string("P6 1 1 65535\n\xff\xff\x80\x00\x00\x00", 19));
  EXPECT_EQ(rgb.pixels, (std::vector<std::uint8_t>{255, 128, 0}));
}

TEST(Pnm, AsciiFormats) {
  const Image gray = decode("P2\n# c\n3 1\n15\n0 15\n 8\n");
  EXPECT_EQ(gray.format, PixelFormat::gray8);
  EXPECT_EQ(gray.pixels, (std::vector<std::uint8_t>{0, 255, rescale_sample(8, 15)}));
  const Image rgb = decode("P3 2 1 255 1 2 3 4 5 6");
  EXPECT_EQ(rgb.format, PixelFormat::rgb24);
  EXPECT_EQ(rgb.pixels, (std::vector<std::uint8_t>{1, 2, 3, 4, 5, 6}));
}

TEST(Pnm, TruncatedFilesFailWithTheName) {
  EXPECT_NE(decode_error("", "x.ppm").find("x.ppm: file is empty"), std::string::npos);
  EXPECT_NE(decode_error("P6", "x.ppm").find("x.ppm: truncated header"), std::string::npos);
  EXPECT_NE(decode_error("P6 2 2").find("truncated header"), std::string::npos);
  EXPECT_NE(decode_error("P6 2 2 255").find("truncated"), std::string::npos);
  const std::string msg = decode_error("P6 2 2 255\nabcdefghijk", "short.ppm");
  EXPECT_NE(msg.find("short.ppm: truncated pixel data"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected 12 bytes"), std::string::npos) << msg;
  EXPECT_NE(decode_error(std::string("P5 2 1 1000\n\x00\x01\x02", 15)).find("expected 4 bytes"),
            std::string::npos);
  EXPECT_NE(decode_error("P2 2 1 255 7").find("truncated pixel data"), std::string::npos);
}

TEST(Pnm, CorruptOrUnsupportedFilesFail) {
  EXPECT_NE(decode_error("hello world").find("not a PPM/PGM file"), std::string::npos);
  EXPECT_NE(decode_error("P4 1 1\n\x00").find("PBM"), std::string::npos);
  EXPECT_NE(decode_error("P1 1 1 0").find("PBM"), std::string::npos);
  EXPECT_NE(decode_error("P7\nWIDTH 1\n").find("PAM"), std::string::npos);
  EXPECT_NE(decode_error("P9 1 1 255\n").find("unknown type P9"), std::string::npos);
  EXPECT_NE(decode_error("P6 a 1 255\n").find("expected width"), std::string::npos);
  EXPECT_NE(decode_error("P6 640x360 255\n").find("after width"), std::string::npos);
  EXPECT_NE(decode_error("P6 0 1 255\n").find("empty"), std::string::npos);
  EXPECT_NE(decode_error("P6 1 1 0\n").find("maxval 0"), std::string::npos);
  EXPECT_NE(decode_error("P6 1 1 65536\n").find("maxval is above 65535"), std::string::npos);
  EXPECT_NE(decode_error("P6 65501 1 255\n").find("65501x1 is above 65500 per side, libjpeg's limit"),
            std::string::npos);
  // Samples above maxval: binary 8-bit, binary 16-bit, ASCII.
  EXPECT_NE(decode_error("P5 1 1 100\n\x65").find("sample 101 is above maxval 100"),
            std::string::npos);
  EXPECT_NE(decode_error(std::string("P5 1 1 300\n\x01\x2d", 13)).find("sample 301"),
            std::string::npos);
  EXPECT_NE(decode_error("P2 1 1 9 10").find("above 9"), std::string::npos);
}

TEST(Pnm, FileErrorsNameThePath) {
  TempDir dir;
  auto message_of = [](const std::string& path) {
    try {
      read_pnm(path);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string missing = dir.file("missing.ppm");
  EXPECT_NE(message_of(missing).find(missing + ": cannot open"), std::string::npos);
  EXPECT_NE(message_of(dir.file("")).find("is a directory"), std::string::npos);
  std::ofstream(dir.file("text.ppm")) << "just some text\n";
  EXPECT_NE(message_of(dir.file("text.ppm")).find(dir.file("text.ppm") + ": not a PPM/PGM"),
            std::string::npos);
}

}  // namespace
}  // namespace mjpeg::app
