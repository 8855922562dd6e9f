// Decoded video as planes (video_input.hpp): the encoder's conversion of 4:2:0 / 4:2:2 frames is
// libswscale's own arithmetic, checked against libswscale itself (sws_scale to rgb24), for the
// matrices and ranges it knows, on frames that hold every (Cb, Cr) pair; and on the clips of the
// shared media, the planes path and the --rgb-decode swscale path give the same RGB.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "common/test_media.hpp"
#include "jpeg/planar.hpp"
#include "app/input/video_input.hpp"
#include "mjpeg/error.hpp"

#if MJPEG_TEST_LIBAV
#include <unistd.h>

#include <cstdlib>

#include "app/input/nvdec_input.hpp"

extern "C" {
#include <libavutil/pixdesc.h>
#include <libavutil/pixfmt.h>
#include <libswscale/swscale.h>
}
#endif

namespace mjpeg::app {
namespace {

#if MJPEG_TEST_LIBAV
struct SwsCase {
  AVPixelFormat format;
  int colorspace;  // SWS_CS_*
  bool full;
};

TEST(TruncatedYcc, EqualsLibswscaleForEveryChromaPair) {
  const int w = 1024, h = 1024;
  for (const SwsCase c : {SwsCase{AV_PIX_FMT_YUV420P, SWS_CS_ITU601, false},
                          SwsCase{AV_PIX_FMT_YUV420P, SWS_CS_ITU601, true},
                          SwsCase{AV_PIX_FMT_YUV420P, SWS_CS_ITU709, false},
                          SwsCase{AV_PIX_FMT_YUV420P, SWS_CS_ITU709, true},
                          SwsCase{AV_PIX_FMT_YUV420P, SWS_CS_BT2020, false},
                          SwsCase{AV_PIX_FMT_YUV422P, SWS_CS_ITU601, false},
                          SwsCase{AV_PIX_FMT_YUV422P, SWS_CS_FCC, true}}) {
    PlanarFormat pf;
    pf.chroma = c.format == AV_PIX_FMT_YUV420P ? PlanarChroma::c420 : PlanarChroma::c422;
    pf.ycc = math::make_truncated_ycc(sws_getCoefficients(c.colorspace), !c.full);
    const PlanarLayout l = planar_layout(w, h, pf.chroma);
    std::vector<std::uint8_t> frame(l.bytes);
    for (std::size_t k = 0; k < static_cast<std::size_t>(w) * h; ++k)
      frame[k] = static_cast<std::uint8_t>((k * 7 + (k >> 10) * 13) & 255);
    const std::size_t chroma = static_cast<std::size_t>(l.chroma_width) * l.chroma_height;
    for (std::size_t k = 0; k < chroma; ++k) {  // every (Cb, Cr) pair at least once
      frame[l.offset[1] + k] = static_cast<std::uint8_t>(k & 255);
      frame[l.offset[2] + k] = static_cast<std::uint8_t>((k >> 8) & 255);
    }
    std::vector<std::uint8_t> ours(static_cast<std::size_t>(w) * h * 3), theirs(ours.size());
    planar_to_rgb(planar_view(frame.data(), w, h, pf), ours.data(), static_cast<std::size_t>(w) * 3);

    SwsContext* sws = sws_getContext(w, h, c.format, w, h, AV_PIX_FMT_RGB24, SWS_BICUBIC, nullptr,
                                     nullptr, nullptr);
    ASSERT_NE(sws, nullptr);
    int* inv = nullptr;
    int* tab = nullptr;
    int src_range = 0, dst_range = 0, brightness = 0, contrast = 0, saturation = 0;
    sws_getColorspaceDetails(sws, &inv, &src_range, &tab, &dst_range, &brightness, &contrast,
                             &saturation);
    sws_setColorspaceDetails(sws, sws_getCoefficients(c.colorspace), c.full ? 1 : 0, tab,
                             dst_range, brightness, contrast, saturation);
    const std::uint8_t* src[4] = {frame.data() + l.offset[0], frame.data() + l.offset[1],
                                  frame.data() + l.offset[2], nullptr};
    const int src_stride[4] = {w, l.chroma_width, l.chroma_width, 0};
    std::uint8_t* dst[4] = {theirs.data(), nullptr, nullptr, nullptr};
    const int dst_stride[4] = {w * 3, 0, 0, 0};
    sws_scale(sws, src, src_stride, 0, h, dst, dst_stride);
    sws_freeContext(sws);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < ours.size(); ++i) differ += ours[i] != theirs[i];
    EXPECT_EQ(differ, 0u) << av_get_pix_fmt_name(c.format) << " colorspace " << c.colorspace
                          << (c.full ? " full" : " limited") << ": " << differ << " of "
                          << ours.size() << " samples differ";
  }
}
#endif

// The clips in ../shared/media: the planes path (default) gives the RGB of the libswscale path
// (--rgb-decode swscale), frame by frame, so it costs no quality against ffmpeg's RGB.
TEST(DecodedVideo, PlanesGiveLibswscalesRgbOnTheSharedClips) {
#if !MJPEG_TEST_LIBAV
  GTEST_SKIP() << "built without FFmpeg's libraries";
#else
  MJPEG_REQUIRE_MEDIA();
  const std::string dir = test::media_dir();
  for (const char* clip : {"flower.mp4", "friday.mp4", "bottle-detection.mp4",
                           "car-detection.mp4", "tears-of-steel-battle-clip-medium.webm"}) {
    const std::string path = dir + "/video/" + clip;
    InputOptions swscale;
    swscale.max_frames = 12;
    swscale.rgb_swscale = true;
    VideoInput planes = open_video_input(path, 12);
    VideoInput rgb = open_video_input(path, swscale);
    const VideoOptions& pf = planes.format;
    ASSERT_TRUE(is_planar(pf.format)) << clip << ": " << planes.description;
    ASSERT_EQ(rgb.format.format, FrameFormat::rgb24) << clip;
    std::vector<std::uint8_t> frame(frame_bytes(pf));
    const std::size_t stride = static_cast<std::size_t>(pf.width) * 3;
    std::vector<std::uint8_t> a(stride * pf.height), b(a.size());
    int frames = 0;
    for (std::int64_t i = 0; planes.source->read(i, frame.data()); ++i) {
      ASSERT_TRUE(rgb.source->read(i, b.data())) << clip;
      // The RGB the encoder encodes from the planes.
      to_pixels(FrameView::contiguous(frame.data(), pf), pf, a.data(), stride);
      std::size_t differ = 0;
      for (std::size_t k = 0; k < a.size(); ++k) differ += a[k] != b[k];
      EXPECT_EQ(differ, 0u) << clip << " frame " << i + 1;
      ++frames;
    }
    EXPECT_EQ(frames, 12) << clip;
  }
#endif
}

// The header's count (what lets a long video skip the cpu mode's opening) is the count the full
// opening takes: frames x pixels of every shared MP4 clip, with a range; Matroska / WebM
// headers announce no count, and a file FFmpeg cannot open gives none.
TEST(DecodedVideo, TheHeadersPixelsAreTheOpenedVideosFramesTimesPixels) {
#if !MJPEG_TEST_LIBAV
  GTEST_SKIP() << "built without FFmpeg's libraries";
#else
  MJPEG_REQUIRE_MEDIA();
  const std::string dir = test::media_dir();
  for (const char* clip : {"flower.mp4", "friday.mp4", "bottle-detection.mp4", "car-detection.mp4"}) {
    const std::string path = dir + "/video/" + clip;
    for (const auto& [start, frames] : {std::pair<std::int64_t, std::int64_t>{0, -1}, {5, 7}, {3, -1}}) {
      InputOptions o;
      o.start = start;
      o.max_frames = frames;
      const std::optional<double> header = video_header_pixels(path, o);
      const VideoInput in = open_video_input(path, o);
      ASSERT_GT(in.frame_count, 0) << clip;
      ASSERT_TRUE(header.has_value()) << clip;
      EXPECT_EQ(*header, static_cast<double>(in.frame_count) * in.format.width * in.format.height)
          << clip << " from " << start;
      if (frames > 0) {
        EXPECT_EQ(in.frame_count, frames) << clip;
      }
    }
  }
  EXPECT_FALSE(video_header_pixels(dir + "/video/tears-of-steel-battle-clip-medium.webm", {}));
  EXPECT_FALSE(video_header_pixels(dir + "/no-such-file.mp4", {}));
  InputOptions second;
  second.stream = 1;  // the clips have one video stream
  EXPECT_FALSE(video_header_pixels(dir + "/video/flower.mp4", second));
#endif
}

// A file's opening for NVDEC begun ahead (while the devices are asked for) is the one
// open_nvdec takes when it opens that file, error included, and only once; an opening begun for
// another file is left alone.
TEST(DecodedVideo, AnOpeningBegunAheadIsTakenForItsFileOnly) {
#if !MJPEG_TEST_LIBAV
  GTEST_SKIP() << "built without FFmpeg's libraries";
#else
  auto text_file = [](const char* pattern) {
    std::string name = pattern;
    const int fd = ::mkstemp(name.data());
    EXPECT_GE(fd, 0);
    const char text[] = "not a video\n";
    EXPECT_EQ(::write(fd, text, sizeof text - 1), static_cast<ssize_t>(sizeof text - 1));
    ::close(fd);
    return name;
  };
  const std::string first = text_file("/tmp/mjpeg_not_a_video_XXXXXX");
  const std::string second = text_file("/tmp/mjpeg_not_a_video_XXXXXX");
  InputOptions o;
  o.decoder = "gpu";  // where the GPU cannot decode: an error, not the CPU
  o.gpu_device = 0;
  auto error_of = [&](const std::string& path) -> std::string {
    std::string notice;
    try {
      open_nvdec(path, o, notice);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string direct = error_of(first);
  EXPECT_NE(direct.find("cannot read '" + first + "' as a video"), std::string::npos) << direct;
  o.nvdec_opening = begin_nvdec_opening(first);
  EXPECT_EQ(error_of(first), direct);
  EXPECT_EQ(error_of(first), direct);  // taken once; then opened anew
  o.nvdec_opening = begin_nvdec_opening(first);
  const std::string other = error_of(second);
  EXPECT_NE(other.find("cannot read '" + second + "' as a video"), std::string::npos) << other;
  ::unlink(first.c_str());
  ::unlink(second.c_str());
#endif
}

}  // namespace
}  // namespace mjpeg::app
