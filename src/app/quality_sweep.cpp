#include "quality_sweep.hpp"

#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "frame_reader.hpp"
#include "io/atomic_file.hpp"
#include "jpeg_decoder.hpp"
#include "mjpeg/encoder.hpp"
#include "mjpeg/error.hpp"
#include "quality_pictures.hpp"

#if MJPEG_HAVE_TURBOJPEG
#include <turbojpeg.h>
#endif

namespace mjpeg::app {

std::vector<int> parse_qualities(const std::string& text) {
  const auto bad = [&] {
    return UsageError(fmt::format("--qualities '{}': expected FIRST:LAST:STEP (e.g. 10:100:10) "
                                  "or one quality, within 1..100", text));
  };
  std::vector<int> parts;
  std::size_t from = 0;
  for (;;) {
    const std::size_t colon = text.find(':', from);
    const std::string part = text.substr(from, colon == std::string::npos ? std::string::npos : colon - from);
    if (part.empty() || part.size() > 3 || part.find_first_not_of("0123456789") != std::string::npos)
      throw bad();
    parts.push_back(std::stoi(part));
    if (colon == std::string::npos) break;
    from = colon + 1;
  }
  if (parts.size() == 1) parts = {parts[0], parts[0], 1};
  if (parts.size() != 3 || parts[2] < 1 || parts[0] < 1 || parts[1] > 100 || parts[0] > parts[1])
    throw bad();
  std::vector<int> q;
  for (int v = parts[0]; v <= parts[1]; v += parts[2]) q.push_back(v);
  if (q.back() != parts[1]) q.push_back(parts[1]);  // the last quality is always included
  return q;
}

namespace {

/// What one encoder produced at one quality over the sweep's frames.
struct Encoded {
  std::vector<std::vector<std::uint8_t>> jpegs;  // one per frame
};

/// Sizes and figures of a set of JPEGs of `frames`.
RdPoint measure(const std::string& encoder, int q, const std::vector<io::Image>& frames,
                const Encoded& enc, JpegDecoder& decoder, int threads) {
  std::uint64_t bytes = 0;
  std::vector<quality::FrameMetrics> metrics;
  io::Image decoded;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    bytes += enc.jpegs[i].size();
    decoder.decode(enc.jpegs[i], decoded);
    metrics.push_back(quality::compare(frames[i].view(), decoded.view(), threads));
  }
  const quality::Summary s = quality::summarize(metrics, 0);
  const double pixels = static_cast<double>(frames[0].width) * frames[0].height * frames.size();
  RdPoint p;
  p.encoder = encoder;
  p.quality = q;
  p.bits_per_pixel = 8.0 * static_cast<double>(bytes) / pixels;
  p.psnr_rgb = s.psnr_rgb.mean;
  p.ssim_y = s.ssim_y.mean;
  return p;
}

#if MJPEG_HAVE_TURBOJPEG
/// libjpeg-turbo's JPEG of `image` through TurboJPEG (accurate islow DCT, as our encoder).
std::vector<std::uint8_t> turbojpeg_encode(tjhandle tj, const io::Image& image, int q,
                                           Subsampling sub) {
  const int tjsamp = sub == Subsampling::s444   ? TJSAMP_444
                     : sub == Subsampling::s422 ? TJSAMP_422
                     : sub == Subsampling::s420 ? TJSAMP_420
                                                : TJSAMP_GRAY;
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  if (tjCompress2(tj, image.pixels.data(), image.width, static_cast<int>(image.stride()),
                  image.height, TJPF_RGB, &buf, &size, tjsamp, q, TJFLAG_ACCURATEDCT) != 0)
    throw Error(fmt::format("libjpeg-turbo could not encode: {}", tjGetErrorStr2(tj)));
  std::vector<std::uint8_t> out(buf, buf + size);
  tjFree(buf);
  return out;
}
#endif

std::string points_csv(const std::vector<RdPoint>& points, const std::vector<int>& identical) {
  std::string csv = "encoder,quality,bits_per_pixel,psnr_rgb,ssim_y,identical_to_mjpeg\n";
  for (std::size_t i = 0; i < points.size(); ++i) {
    const RdPoint& p = points[i];
    csv += fmt::format("{},{},{:.6f},{:.6f},{:.6f},{}\n", p.encoder, p.quality,
                       p.bits_per_pixel, p.psnr_rgb, p.ssim_y,
                       identical[i] < 0 ? "" : identical[i] ? "yes" : "no");
  }
  return csv;
}

}  // namespace

int run_quality_sweep(const QualityArgs& args) {
  const std::vector<int> qualities = parse_qualities(args.qualities);
  EncodeOptions options;
  options.subsampling = parse_subsampling(args.subsampling);
  JpegDecoder decoder;  // throws when the build cannot decode JPEGs
  const int threads = args.threads > 0
                          ? args.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  FrameReader reader(args.sweep, args.frames > 0 ? args.frames : 1);
  std::vector<io::Image> frames;
  for (io::Image f; reader.next(f);) frames.push_back(f);
  if (frames.empty()) throw Error(fmt::format("'{}' has no frames", args.sweep));
  std::printf("sweep of %s: %zu frame%s of %s, subsampling %s, decoded by %s\n",
              args.sweep.c_str(), frames.size(), frames.size() == 1 ? "" : "s",
              reader.description().c_str(), args.subsampling.c_str(),
              JpegDecoder::backend().c_str());
  std::printf("%-18s %4s %8s %9s %8s\n", "encoder", "q", "bpp", "PSNR-RGB", "SSIM-Y");

  std::vector<RdPoint> points;
  std::vector<int> identical;  // per point: 1/0 for libjpeg-turbo, -1 for ours
  bool all_identical = true;  // libjpeg-turbo gave our bytes at every quality >= 24
  bool low_identical = true;  // ... and below 24
#if MJPEG_HAVE_TURBOJPEG
  tjhandle tj = tjInitCompress();
  if (!tj) throw Error("cannot start libjpeg-turbo's encoder");
  struct TjCloser {
    tjhandle h;
    ~TjCloser() { tjDestroy(h); }
  } tj_closer{tj};
#endif
  for (int q : qualities) {
    options.quality = q;
    const std::size_t first_point = points.size();
    for (bool optimize : {false, true}) {
      options.optimize = optimize;
      Encoded ours;
      for (const io::Image& f : frames) ours.jpegs.push_back(encode_jpeg(f.view(), options));
      points.push_back(measure(optimize ? "mjpeg --optimize" : "mjpeg", q, frames, ours,
                               decoder, threads));
      identical.push_back(-1);
#if MJPEG_HAVE_TURBOJPEG
      if (!optimize) {
        Encoded theirs;
        bool same = true;
        for (std::size_t i = 0; i < frames.size(); ++i) {
          theirs.jpegs.push_back(turbojpeg_encode(tj, frames[i], q, options.subsampling));
          same = same && theirs.jpegs[i] == ours.jpegs[i];
        }
        // TurboJPEG always asks libjpeg for baseline (8-bit) tables; cjpeg and mjpeg give
        // 16-bit tables below quality 24, so only q >= 24 can match there.
        (q >= 24 ? all_identical : low_identical) &= same;
        points.push_back(measure("libjpeg-turbo", q, frames, theirs, decoder, threads));
        identical.push_back(same ? 1 : 0);
      }
#endif
    }
    for (std::size_t i = first_point; i < points.size(); ++i)
      std::printf("%-18s %4d %8.3f %9s %8.4f%s\n", points[i].encoder.c_str(), points[i].quality,
                  points[i].bits_per_pixel, quality::format_db(points[i].psnr_rgb).c_str(),
                  points[i].ssim_y,
                  identical[i] == 1 ? "  (bytes identical to mjpeg)"
                  : identical[i] == 0 ? "  (bytes DIFFER from mjpeg)" : "");
  }
#if MJPEG_HAVE_TURBOJPEG
  const bool any_low = qualities.front() < 24;
  std::string tj_label = "libjpeg-turbo (byte-identical to mjpeg)";
  if (!all_identical)
    tj_label = "libjpeg-turbo (DIFFERS from mjpeg)";
  else if (any_low && !low_identical)
    tj_label = "libjpeg-turbo (identical to mjpeg at q>=24)";
  std::printf("libjpeg-turbo: %s\n",
              !all_identical ? "NOT byte-identical to mjpeg"
              : any_low && !low_identical
                  ? "byte-identical to mjpeg at every quality >= 24; below 24 TurboJPEG forces "
                    "baseline 8-bit tables, while mjpeg (like cjpeg) writes 16-bit ones"
                  : "byte-identical to mjpeg at every quality");
#else
  std::printf("libjpeg-turbo: not in this build (no TurboJPEG): no reference points\n");
#endif
  std::fflush(stdout);

  if (!args.csv.empty()) {
    const std::string csv = points_csv(points, identical);
    io::write_file(args.csv, csv, args.overwrite);
  }
  if (!args.plot.empty()) {
    std::vector<std::pair<std::string, std::string>> labels = {
        {"mjpeg", "mjpeg"}, {"mjpeg --optimize", "mjpeg --optimize"}};
#if MJPEG_HAVE_TURBOJPEG
    labels.push_back({"libjpeg-turbo", tj_label});
#endif
    write_rd_plot(points, labels,
                  fmt::format("rate-distortion of {} ({}, q {})", args.sweep, args.subsampling,
                              args.qualities),
                  args.plot, args.overwrite);
  }
  return 0;
}

}  // namespace mjpeg::app
