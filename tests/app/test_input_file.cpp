// The input opener (input_file.hpp): inputs recognised by their content whatever their names,
// a stream's bytes read once (what was looked at is handed on to the reader), the end of a JPEG
// picture; and the conversion of planar input to ffmpeg's RGB (ycbcr.hpp) against libswscale
// itself, at odd sizes, on real pictures.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "app/input/input_file.hpp"
#include "app/input/video_input.hpp"
#include "app/input/ycbcr.hpp"
#include "common/test_media.hpp"
#include "mjpeg/error.hpp"

#if MJPEG_TEST_LIBAV
extern "C" {
#include <libavutil/pixfmt.h>
#include <libswscale/swscale.h>
}
#endif

namespace mjpeg::app {
namespace {

/// A per-test temporary folder, removed with its files at the end.
class InputScratch {
 public:
  InputScratch() {
    char tmpl[] = "/tmp/mjpeg_test_input.XXXXXX";
    const char* made = mkdtemp(tmpl);
    if (made == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = made;
  }
  ~InputScratch() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  std::string write(const std::string& name, const std::string& bytes) const {
    std::ofstream(file(name), std::ios::binary) << bytes;
    return file(name);
  }

 private:
  std::string path_;
};

std::string bytes_of(std::initializer_list<int> values) {
  std::string s;
  for (int v : values) s.push_back(static_cast<char>(v));
  return s;
}

/// A minimal JPEG's markers: SOI, an APP1 segment holding an EXIF-like thumbnail (its own SOI
/// and EOI), SOS with entropy-coded data holding a stuffed 0xFF00 and a restart marker, EOI.
std::string jpeg_like() {
  std::string app1 = bytes_of({0xFF, 0xD8, 0x01, 0x02, 0xFF, 0xD9});  // a "thumbnail"
  std::string s = bytes_of({0xFF, 0xD8, 0xFF, 0xE1, 0x00, static_cast<int>(2 + app1.size())});
  s += app1;
  s += bytes_of({0xFF, 0xDA, 0x00, 0x04, 0x01, 0x02});  // SOS, 2 bytes of header
  s += bytes_of({0x12, 0xFF, 0x00, 0x34, 0xFF, 0xD0, 0x56, 0xFF, 0xFF, 0xD9});
  return s;
}

TEST(InputFile, JpegPictureEndStepsOverSegmentsStuffingAndRestarts) {
  const std::string j = jpeg_like();
  const auto* d = reinterpret_cast<const std::uint8_t*>(j.data());
  EXPECT_EQ(jpeg_picture_end(d, j.size()), j.size());
  const std::string two = j + j;
  EXPECT_EQ(jpeg_picture_end(reinterpret_cast<const std::uint8_t*>(two.data()), two.size()),
            j.size());
  EXPECT_EQ(jpeg_picture_end(d, j.size() - 1), 0u);  // cut before its EOI
  EXPECT_EQ(jpeg_picture_end(d, 12), 0u);             // inside the APP1 segment
  const std::string text = "not a jpeg at all";
  EXPECT_EQ(jpeg_picture_end(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()), 0u);
}

TEST(InputFile, KindsComeFromTheContentNotTheName) {
  InputScratch dir;
  const std::string y4m = "YUV4MPEG2 W2 H2 F25:1 C444\nFRAME\n" + std::string(12, '\x80');
  const std::string ppm = "P6\n1 1\n255\n" + std::string(3, '\x10');
  const std::string png = bytes_of({0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A}) + std::string(40, '\0');
  const std::string jpeg = jpeg_like();
  const std::string gif = "GIF89a" + std::string(40, '\0');
  const std::string mp4 = bytes_of({0, 0, 0, 0x20}) + "ftypisom" + std::string(40, '\0');
  // A camera's Multi-Picture JPEG (an APP2 "MPF" segment, then its second picture): a picture.
  const std::string mpf = jpeg.substr(0, 2) + bytes_of({0xFF, 0xE2, 0x00, 0x08, 'M', 'P', 'F', 0, 0, 0}) +
                          jpeg.substr(2) + jpeg;
  const struct {
    const char* name;
    std::string bytes;
    InputKind kind;
  } cases[] = {{"a.mp4", y4m, InputKind::y4m},        {"b.y4m", ppm, InputKind::image},
               {"c", png, InputKind::image},          {"d.avi", jpeg, InputKind::image},
               {"e.jpg", jpeg + jpeg, InputKind::video}, {"f.png", gif, InputKind::video},
               {"g.ppm", mp4, InputKind::video},        {"k.mjpeg", mpf, InputKind::image}};
  for (const auto& c : cases) {
    const Input in = open_input(dir.write(c.name, c.bytes));
    EXPECT_EQ(in.kind, c.kind) << c.name;
    EXPECT_EQ(in.gif, c.bytes == gif) << c.name;
  }
  // Raw frames: the command line says so, whatever the content; but not of a Y4M stream.
  EXPECT_EQ(open_input(dir.write("h.y4m", ppm), /*raw=*/true).kind, InputKind::raw);
  EXPECT_THROW(open_input(dir.write("i.raw", y4m), /*raw=*/true), UsageError);
  // A pattern that names no file is an image sequence; a file of that name is read.
  EXPECT_EQ(open_input(dir.file("f%03d.png")).kind, InputKind::image_sequence);
  EXPECT_EQ(open_input(dir.write("j%d.png", ppm)).kind, InputKind::image);
  // Empty, missing, a folder: one error naming the input.
  for (const std::string& bad : {dir.write("empty.mp4", ""), dir.file("missing.y4m"),
                                 dir.file("")}) {
    try {
      open_input(bad);
      ADD_FAILURE() << bad << ": no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(bad.empty() ? "/" : bad), std::string::npos)
          << e.what();
    }
  }
}

// A FIFO is read once: what was looked at to recognise it reaches the reader first, then the
// rest, each byte once and in order.
TEST(InputFile, AStreamsPeekedBytesAreHandedOn) {
  InputScratch dir;
  const std::string fifo = dir.file("feed");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string content = "YUV4MPEG2 W4 H2 F25:1 Cmono\n";
  for (int i = 0; i < 20000; ++i) content += "FRAME\n" + std::string(8, static_cast<char>(i));
  std::thread writer([&] {
    std::ofstream out(fifo, std::ios::binary);
    out << content;
  });
  Input in = open_input(fifo);
  EXPECT_EQ(in.kind, InputKind::y4m);
  ASSERT_TRUE(in.file != nullptr);
  EXPECT_FALSE(in.file->regular());
  EXPECT_EQ(in.file->peek(9), std::vector<std::uint8_t>(content.begin(), content.begin() + 9));
  std::vector<std::uint8_t> got;
  std::FILE* f = in.file->stdio();
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) got.insert(got.end(), buf, buf + n);
  writer.join();
  EXPECT_EQ(got.size(), content.size());
  EXPECT_TRUE(got == std::vector<std::uint8_t>(content.begin(), content.end()));
}

TEST(Ycbcr, SwscaleTablesAreLibswscales) {
#if !MJPEG_TEST_LIBAV
  GTEST_SKIP() << "built without FFmpeg's libraries";
#else
  const struct {
    YuvMatrix matrix;
    int sws;
  } cases[] = {{YuvMatrix::bt601, SWS_CS_ITU601},
               {YuvMatrix::bt709, SWS_CS_ITU709},
               {YuvMatrix::bt2020, SWS_CS_BT2020}};
  for (const auto& c : cases)
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(swscale_table(c.matrix)[i], sws_getCoefficients(c.sws)[i]) << c.sws << " " << i;
#endif
}

#if MJPEG_TEST_LIBAV
/// libswscale's rgb24 of planar frame `planes` (contiguous) as the ffmpeg program converts it:
/// SWS_BICUBIC, the matrix's table and the range, into rows with room to spare.
std::vector<std::uint8_t> libswscale_rgb(const std::vector<std::uint8_t>& planes, int w, int h,
                                         AVPixelFormat format, int sws_matrix, bool full) {
  SwsContext* sws = sws_getContext(w, h, format, w, h, AV_PIX_FMT_RGB24, SWS_BICUBIC, nullptr,
                                   nullptr, nullptr);
  if (sws == nullptr) throw std::runtime_error("sws_getContext failed");
  int* inv = nullptr;
  int* tab = nullptr;
  int src_range = 0, dst_range = 0, brightness = 0, contrast = 0, saturation = 0;
  sws_getColorspaceDetails(sws, &inv, &src_range, &tab, &dst_range, &brightness, &contrast,
                           &saturation);
  sws_setColorspaceDetails(sws, sws_getCoefficients(sws_matrix), full ? 1 : 0, tab, dst_range,
                           brightness, contrast, saturation);
  const int sx = format == AV_PIX_FMT_YUV444P ? 0 : 1, sy = format == AV_PIX_FMT_YUV420P ? 1 : 0;
  const int cw = format == AV_PIX_FMT_GRAY8 ? 0 : (w + sx) >> sx;
  const int ch = format == AV_PIX_FMT_GRAY8 ? 0 : (h + sy) >> sy;
  const std::uint8_t* src[4] = {planes.data(), planes.data() + std::size_t(w) * h,
                                planes.data() + std::size_t(w) * h + std::size_t(cw) * ch,
                                nullptr};
  const int src_stride[4] = {w, cw, cw, 0};
  const int stride = (w * 3 + 127) / 64 * 64;
  std::vector<std::uint8_t> padded(std::size_t(stride) * (h + 2) + 64);
  std::uint8_t* dst[4] = {padded.data(), nullptr, nullptr, nullptr};
  const int dst_stride[4] = {stride, 0, 0, 0};
  sws_scale(sws, src, src_stride, 0, h, dst, dst_stride);
  sws_freeContext(sws);
  std::vector<std::uint8_t> rgb(std::size_t(w) * h * 3);
  for (int y = 0; y < h; ++y)
    std::memcpy(rgb.data() + std::size_t(y) * w * 3, padded.data() + std::size_t(y) * stride,
                std::size_t(w) * 3);
  return rgb;
}
#endif

// Planar frames read as raw frames (the path of Y4M's planes too) are encoded from exactly
// libswscale's rgb24 of them, every pixel, at even and odd sizes, each format, both ranges, on
// a real picture: planes where the transforms repeat libswscale's arithmetic, libswscale's own
// conversion where they cannot (odd heights, 4:4:4).
TEST(Ycbcr, PlanarInputIsLibswscalesRgbAtEverySize) {
#if !MJPEG_TEST_LIBAV
  GTEST_SKIP() << "built without FFmpeg's libraries";
#else
  MJPEG_REQUIRE_MEDIA();
  const test::Image& photo = test::kodak(23);
  InputScratch dir;
  const struct {
    const char* pix;
    AVPixelFormat av;
    FrameFormat planes;
  } formats[] = {{"yuv420p", AV_PIX_FMT_YUV420P, FrameFormat::yuv420p},
                 {"yuv422p", AV_PIX_FMT_YUV422P, FrameFormat::yuv422p},
                 {"yuv444p", AV_PIX_FMT_YUV444P, FrameFormat::yuv444p},
                 {"gray", AV_PIX_FMT_GRAY8, FrameFormat::yuv400p}};
  for (const auto& f : formats) {
    for (const auto& [w, h] : {std::pair{320, 240}, std::pair{321, 241}, std::pair{640, 361},
                               std::pair{333, 90}}) {
      for (const bool full : {false, true}) {
        // The photograph's samples as the planes: its R as Y, G and B as Cb and Cr.
        const int sx = f.planes == FrameFormat::yuv444p ? 0 : 1;
        const int sy = f.planes == FrameFormat::yuv420p ? 1 : 0;
        const int cw = (w + sx) >> sx, ch = (h + sy) >> sy;
        std::string raw;
        for (int y = 0; y < h; ++y)
          for (int x = 0; x < w; ++x) raw.push_back(static_cast<char>(photo.pixels[(std::size_t(y) * photo.width + x) * 3]));
        if (f.planes != FrameFormat::yuv400p)
          for (int c = 1; c <= 2; ++c)
            for (int y = 0; y < ch; ++y)
              for (int x = 0; x < cw; ++x)
                raw.push_back(static_cast<char>(
                    photo.pixels[(std::size_t(y << sy) * photo.width + (x << sx)) * 3 + c]));
        const std::string path = dir.write("frame.raw", raw);
        InputOptions o;
        o.raw.pix_fmt = f.pix;
        o.raw.width = w;
        o.raw.height = h;
        o.range = full ? "full" : "limited";
        o.colorspace = "bt709";
        VideoInput in = open_video_input(path, o);
        std::vector<std::uint8_t> frame(frame_bytes(in.format));
        ASSERT_TRUE(in.source->read(0, frame.data()));
        std::vector<std::uint8_t> ours(std::size_t(w) * h * 3);
        if (is_planar(in.format.format))
          to_pixels(FrameView::contiguous(frame.data(), in.format), in.format, ours.data(),
                    std::size_t(w) * 3);
        else
          ours = frame;
        const std::vector<std::uint8_t> planes(raw.begin(), raw.end());
        const std::vector<std::uint8_t> theirs =
            libswscale_rgb(planes, w, h, f.av, SWS_CS_ITU709, full);
        std::size_t differ = 0;
        for (std::size_t i = 0; i < ours.size(); ++i) differ += ours[i] != theirs[i];
        EXPECT_EQ(differ, 0u) << f.pix << " " << w << "x" << h << (full ? " full" : " limited")
                              << " (" << in.description << ")";
      }
    }
  }
#endif
}

}  // namespace
}  // namespace mjpeg::app
