// The Y4M reader's conversion of planar YCbCr to RGB (io::yuv_to_rgb24, the "rounded form" of
// src/core/jpeg_math.hpp: 16 fractional bits, rounded, clamped), at every (Y, Cb, Cr) in each
// matrix and range, against references of its own: the exact conversion of the standards'
// definitions, and the ffmpeg program's rgb24. (The known colours and the chroma positions are
// tested in tests/io/test_y4m.cpp.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "io/y4m.hpp"

namespace mjpeg::io {
namespace {

void write_file(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(f.good()) << "cannot write " << path;
}

std::vector<std::uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// Every (Y, Cb, Cr) of a 4:4:4 frame of 4096x4096 (pixel k = (k, k >> 8, k >> 16) & 255) in
// each matrix and range, converted by yuv_to_rgb24 (the rounded form: 16 fractional bits,
// rounded, clamped), against two references of its own:
//  - the exact conversion of the matrix's definition (Kr, Kb; limited range: Y in 219 steps
//    from 16, chroma in 224 from 128), in double precision, rounded and clamped. The fixed-point
//    coefficients are within 2^-17 of theirs, so over |Y - 16| + |Cb - 128| + |Cr - 128| <= 511
//    the conversion is within 0.004 of the exact value: equal to its rounding except where that
//    lies within 0.004 of a half, and there one of its two neighbours;
//  - ffmpeg's own rgb24 of the same samples (libswscale, the ffmpeg program): within 1 of it
//    at every sample inside the legal range (ffmpeg clips chroma beyond it its own way), in
//    under 2% of them different, and on average less than 0.02 off in each channel (so a
//    consistent error in one channel cannot hide).
struct Rgb {
  std::vector<std::uint8_t> bytes;
};

Rgb every_sample_converted(YuvMatrix m, YuvRange r, std::vector<std::uint8_t>* frame_out) {
  Y4mInfo info;
  info.width = 4096;
  info.height = 4096;
  info.chroma = PlanarChroma::c444;
  info.matrix = m;
  info.range = r;
  std::vector<std::uint8_t> frame(info.frame_bytes());
  const std::size_t n = std::size_t(4096) * 4096;
  std::uint8_t* yp = frame.data();
  std::uint8_t* cb = yp + n;
  std::uint8_t* cr = cb + n;
  for (std::size_t k = 0; k < n; ++k) {
    yp[k] = std::uint8_t(k);
    cb[k] = std::uint8_t(k >> 8);
    cr[k] = std::uint8_t(k >> 16);
  }
  Rgb rgb;
  rgb.bytes.resize(n * 3);
  yuv_to_rgb24(planes_of(frame.data(), info), info, rgb.bytes.data(), std::size_t(4096) * 3);
  if (frame_out) *frame_out = std::move(frame);
  return rgb;
}

/// One channel's exact value, rounded and clamped: `value`, or, where the exact value lies
/// within the fixed point's error of a half, `value` or `value + 1` (both clamped).
struct Expected {
  std::uint8_t value = 0, other = 0;
};
Expected expected(double exact) {
  const double f = std::floor(exact);
  const auto clamp = [](double x) { return std::uint8_t(std::clamp(x, 0.0, 255.0)); };
  if (std::fabs(exact - f - 0.5) < 0.004) return {clamp(f), clamp(f + 1)};
  const std::uint8_t v = clamp(std::round(exact));
  return {v, v};
}

TEST(YuvToRgb, EverySampleIsTheExactConversionRounded) {
  for (YuvMatrix m : {YuvMatrix::bt601, YuvMatrix::bt709, YuvMatrix::bt2020})
    for (YuvRange r : {YuvRange::limited, YuvRange::full}) {
      const Rgb rgb = every_sample_converted(m, r, nullptr);
      const double kr = m == YuvMatrix::bt709 ? 0.2126 : m == YuvMatrix::bt2020 ? 0.2627 : 0.299;
      const double kb = m == YuvMatrix::bt709 ? 0.0722 : m == YuvMatrix::bt2020 ? 0.0593 : 0.114;
      const double kg = 1 - kr - kb;
      const bool lim = r == YuvRange::limited;
      const double ys = lim ? 255.0 / 219 : 1, cs = lim ? 255.0 / 224 : 1;
      // R = y + rv[Cr], G = y + gu[Cb] + gv[Cr], B = y + bu[Cb]: R and B as tables over their
      // two inputs, G summed per sample.
      double y[256], rv[256], gu[256], gv[256], bu[256];
      for (int i = 0; i < 256; ++i) {
        y[i] = ys * (i - (lim ? 16 : 0));
        const double c = cs * (i - 128);
        rv[i] = 2 * (1 - kr) * c;
        gu[i] = -2 * kb * (1 - kb) / kg * c;
        gv[i] = -2 * kr * (1 - kr) / kg * c;
        bu[i] = 2 * (1 - kb) * c;
      }
      std::vector<Expected> red(65536), blue(65536);  // [chroma << 8 | Y]
      for (int c = 0; c < 256; ++c)
        for (int l = 0; l < 256; ++l) {
          red[c << 8 | l] = expected(y[l] + rv[c]);
          blue[c << 8 | l] = expected(y[l] + bu[c]);
        }
      std::size_t bad = 0, ties = 0;
      std::string first;
      const std::uint8_t* p = rgb.bytes.data();
      for (int cr = 0; cr < 256; ++cr)
        for (int cb = 0; cb < 256; ++cb)
          for (int l = 0; l < 256; ++l, p += 3) {
            const Expected e[3] = {red[cr << 8 | l], expected(y[l] + gu[cb] + gv[cr]), blue[cb << 8 | l]};
            for (int ch = 0; ch < 3; ++ch) {
              ties += e[ch].value != e[ch].other;
              if ((p[ch] == e[ch].value || p[ch] == e[ch].other) || bad++) continue;
              first = "(Y, Cb, Cr) = (" + std::to_string(l) + ", " + std::to_string(cb) + ", " +
                      std::to_string(cr) + ") channel " + std::to_string(ch) + ": " +
                      std::to_string(p[ch]) + ", expected " + std::to_string(e[ch].value);
            }
          }
      const std::string what =
          std::string(m == YuvMatrix::bt709 ? "BT.709 " : m == YuvMatrix::bt2020 ? "BT.2020 " : "BT.601 ") +
          (lim ? "limited" : "full");
      EXPECT_EQ(bad, 0u) << what << ", first at " << first;
      // The allowance near a half is 0.8% of all values: it cannot hide a systematic error.
      EXPECT_LT(ties, std::size_t(4096) * 4096 * 3 / 100) << what;
    }
}

TEST(YuvToRgb, EverySampleWithinOneOfFfmpeg) {
  if (std::system("command -v ffmpeg >/dev/null 2>&1") != 0) GTEST_SKIP() << "ffmpeg not found on PATH";
  char dir_template[] = "/tmp/mjpeg-yuv-XXXXXX";
  const char* made = ::mkdtemp(dir_template);
  ASSERT_NE(made, nullptr);
  const std::string dir = made;
  struct Case { YuvMatrix m; YuvRange r; const char* pix; const char* vf; };
  for (const Case& c : {Case{YuvMatrix::bt601, YuvRange::limited, "yuv444p", "in_color_matrix=bt601:in_range=tv"},
                        Case{YuvMatrix::bt709, YuvRange::limited, "yuv444p", "in_color_matrix=bt709:in_range=tv"},
                        Case{YuvMatrix::bt601, YuvRange::full, "yuvj444p", "in_color_matrix=bt601:in_range=pc"},
                        Case{YuvMatrix::bt709, YuvRange::full, "yuvj444p", "in_color_matrix=bt709:in_range=pc"}}) {
    SCOPED_TRACE(std::string(c.pix) + " " + c.vf);
    std::vector<std::uint8_t> frame;
    const Rgb ours = every_sample_converted(c.m, c.r, &frame);
    const std::string in = dir + "/in.yuv", out = dir + "/out.rgb";
    write_file(in, frame);
    ASSERT_EQ(std::system(("ffmpeg -nostdin -v error -y -f rawvideo -pix_fmt " + std::string(c.pix) +
                           " -s 4096x4096 -i '" + in + "' -vf scale=" + c.vf +
                           " -pix_fmt rgb24 -f rawvideo '" + out + "'").c_str()), 0);
    const std::vector<std::uint8_t> theirs = read_file(out);
    std::remove(in.c_str());
    std::remove(out.c_str());
    ASSERT_EQ(theirs.size(), ours.bytes.size());
    const bool lim = c.r == YuvRange::limited;
    const int y0 = lim ? 16 : 0, y1 = lim ? 235 : 255, c0 = lim ? 16 : 0, c1 = lim ? 240 : 255;
    std::size_t samples = 0, differ = 0, far = 0;
    long long sum[3] = {};
    std::string first;
    for (int cr = c0; cr <= c1; ++cr)
      for (int cb = c0; cb <= c1; ++cb) {
        const std::size_t row = (std::size_t(cr) << 16 | std::size_t(cb) << 8) * 3;
        for (int y = y0; y <= y1; ++y) {
          ++samples;
          const std::uint8_t* a = &ours.bytes[row + 3 * std::size_t(y)];
          const std::uint8_t* b = &theirs[row + 3 * std::size_t(y)];
          for (int ch = 0; ch < 3; ++ch) {
            const int d = int(a[ch]) - int(b[ch]);
            sum[ch] += d;
            differ += d != 0;
            if ((d > 1 || d < -1) && far++ == 0)
              first = "(" + std::to_string(y) + ", " + std::to_string(cb) + ", " + std::to_string(cr) +
                      ") channel " + std::to_string(ch) + ": ours " + std::to_string(a[ch]) +
                      ", ffmpeg " + std::to_string(b[ch]);
          }
        }
      }
    EXPECT_EQ(far, 0u) << "first: " << first;
    EXPECT_LT(double(differ), 0.02 * 3 * double(samples));
    for (int ch = 0; ch < 3; ++ch)
      EXPECT_LT(std::fabs(double(sum[ch]) / double(samples)), 0.02) << "channel " << ch;
  }
  ::rmdir(dir.c_str());
}

}  // namespace
}  // namespace mjpeg::io
