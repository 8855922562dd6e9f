#include "quality_sweep.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "app/input/frame_reader.hpp"
#include "mjpeg/files.hpp"
#include "app/input/jpeg_decoder.hpp"
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

std::vector<Tune> parse_tunes(const std::string& text) {
  std::vector<Tune> tunes;
  std::size_t from = 0;
  for (;;) {
    const std::size_t comma = text.find(',', from);
    const Tune t = parse_tune(text.substr(from, comma == std::string::npos ? comma : comma - from));
    if (std::find(tunes.begin(), tunes.end(), t) != tunes.end())
      throw UsageError(fmt::format("--tunes '{}': {} appears twice", text, to_string(t)));
    tunes.push_back(t);
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return tunes;
}

std::vector<std::vector<std::uint8_t>> split_mjpeg(const std::vector<std::uint8_t>& s) {
  std::vector<std::vector<std::uint8_t>> out;
  std::size_t pos = 0;
  const std::size_t n = s.size();
  const auto bad = [&](const char* what) {
    return Error(fmt::format("not an M-JPEG stream: {} at byte {}", what, pos));
  };
  while (pos < n) {
    if (pos + 2 > n || s[pos] != 0xFF || s[pos + 1] != 0xD8) throw bad("no SOI");
    const std::size_t start = pos;
    pos += 2;
    for (;;) {  // marker segments up to SOS (or EOI)
      while (pos < n && s[pos] == 0xFF && pos + 1 < n && s[pos + 1] == 0xFF) ++pos;  // fill
      if (pos + 2 > n || s[pos] != 0xFF) throw bad("truncated header");
      const int m = s[pos + 1];
      if (m == 0xD9) break;
      if (pos + 4 > n) throw bad("truncated header");
      const std::size_t len = (static_cast<std::size_t>(s[pos + 2]) << 8) | s[pos + 3];
      if (len < 2 || pos + 2 + len > n) throw bad("bad segment length");
      pos += 2 + len;
      if (m != 0xDA) continue;
      // Entropy-coded data: 0xFF is followed by 0x00 (stuffing) or RST0..7; anything else is
      // the next marker (EOI, or a DHT/DQT/SOS of a multi-scan picture).
      while (pos + 1 < n && !(s[pos] == 0xFF && s[pos + 1] != 0x00 &&
                              (s[pos + 1] < 0xD0 || s[pos + 1] > 0xD7)))
        ++pos;
      if (pos + 1 >= n) throw bad("no EOI");
    }
    pos += 2;  // EOI
    out.emplace_back(s.begin() + static_cast<std::ptrdiff_t>(start),
                     s.begin() + static_cast<std::ptrdiff_t>(pos));
  }
  return out;
}

namespace {

constexpr const char* kFfmpegName = "ffmpeg -c:v mjpeg";

/// What one encoder produced at one quality over the sweep's frames.
struct Encoded {
  std::vector<std::vector<std::uint8_t>> jpegs;  // one per frame
};

/// Sizes and figures of a set of JPEGs of `frames`.
RdPoint measure(const std::string& encoder, int q, const std::vector<Image>& frames,
                const Encoded& enc, JpegDecoder& decoder, int threads) {
  std::uint64_t bytes = 0;
  std::vector<quality::FrameMetrics> metrics;
  Image decoded;
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
  p.bytes = bytes;
  p.bits_per_pixel = 8.0 * static_cast<double>(bytes) / pixels;
  p.psnr_rgb = s.psnr_rgb.mean;
  p.ssim_y = s.ssim_y.mean;
  return p;
}

#if MJPEG_HAVE_TURBOJPEG
/// libjpeg-turbo's JPEG of `image` through TurboJPEG (accurate islow DCT, as our encoder).
std::vector<std::uint8_t> turbojpeg_encode(tjhandle tj, const Image& image, int q,
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

std::optional<std::string> find_on_path(const char* name) {
  const char* path = std::getenv("PATH");
  const std::string dirs = path ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

/// A temporary file (mkstemp) removed when it goes out of scope.
struct TempFile {
  std::string path;
  TempFile() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/mjpeg-sweep-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    const int fd = ::mkstemp(buf.data());
    if (fd < 0) throw Error(fmt::format("cannot make a temporary file: {}", std::strerror(errno)));
    ::close(fd);
    path = buf.data();
  }
  ~TempFile() { ::unlink(path.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
};

std::vector<std::uint8_t> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Runs `args` (args[0] a full path), stdin from /dev/null, stdout and stderr into `log`;
/// returns true when it exited with status 0.
bool run_quietly(const std::vector<std::string>& args, const std::string& log) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw Error(fmt::format("fork failed: {}", std::strerror(errno)));
  if (pid == 0) {
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(log.c_str(), O_WRONLY | O_TRUNC);
    if (in >= 0) ::dup2(in, 0);
    if (out >= 0) {
      ::dup2(out, 1);
      ::dup2(out, 2);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw Error("waitpid failed");
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/// ffmpeg's MJPEG encoder on `input` (its first `frames` frames) at -q:v `qv`: the JPEGs, or
/// the reason there are none in `why`.
std::vector<std::vector<std::uint8_t>> ffmpeg_encode(const std::string& ffmpeg,
                                                     const std::string& input, std::size_t frames,
                                                     Subsampling sub, int qv, std::string& why) {
  const char* pix = sub == Subsampling::s420   ? "yuvj420p"
                    : sub == Subsampling::s422 ? "yuvj422p"
                    : sub == Subsampling::s444 ? "yuvj444p"
                                               : "gray";
  TempFile out, log;
  // -fps_mode passthrough (ffmpeg >= 5.1; older ones take -vsync passthrough): every decoded
  // frame once, none duplicated or dropped, so frame i pairs with our frame i.
  for (const char* sync : {"-fps_mode", "-vsync"}) {
    const std::vector<std::string> cmd = {
        ffmpeg, "-nostdin", "-v", "error", "-y", "-i", input, "-an", "-frames:v",
        std::to_string(frames), sync, "passthrough", "-c:v", "mjpeg", "-pix_fmt", pix, "-q:v",
        std::to_string(qv), "-f", "mjpeg", out.path};
    if (run_quietly(cmd, log.path)) {
      std::vector<std::vector<std::uint8_t>> jpegs = split_mjpeg(slurp(out.path));
      if (jpegs.size() != frames) {
        why = fmt::format("ffmpeg wrote {} frames, expected {}", jpegs.size(), frames);
        return {};
      }
      return jpegs;
    }
  }
  const std::vector<std::uint8_t> text = slurp(log.path);
  std::string last(text.begin(), text.end());
  while (!last.empty() && (last.back() == '\n' || last.back() == '\r')) last.pop_back();
  const std::size_t nl = last.rfind('\n');
  why = "ffmpeg failed: " + (nl == std::string::npos ? last : last.substr(nl + 1));
  return {};
}

// The Huffman coding of a curve: 0 Annex K tables, 1 --optimize, 2 --progressive.
std::string encoder_name(Tune tune, int coding) {
  std::string name = "mjpeg";
  if (tune != Tune::none) name += " --tune " + to_string(tune);
  if (coding == 1) name += " --optimize";
  if (coding == 2) name += " --progressive";
  return name;
}

std::string points_csv(const std::vector<RdPoint>& points, const std::vector<int>& identical) {
  std::string csv = "encoder,quality,bits_per_pixel,psnr_rgb,ssim_y,identical_to_mjpeg,bytes\n";
  for (std::size_t i = 0; i < points.size(); ++i) {
    const RdPoint& p = points[i];
    csv += fmt::format("{},{},{:.6f},{:.6f},{:.6f},{},{}\n", p.encoder, p.quality,
                       p.bits_per_pixel, p.psnr_rgb, p.ssim_y,
                       identical[i] < 0 ? "" : identical[i] ? "yes" : "no", p.bytes);
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
  std::vector<Image> frames;
  for (Image f; reader.next(f);) frames.push_back(f);
  if (frames.empty()) throw Error(fmt::format("'{}' has no frames", args.sweep));
  std::printf("sweep of %s: %zu frame%s of %s, subsampling %s, decoded by %s\n",
              args.sweep.c_str(), frames.size(), frames.size() == 1 ? "" : "s",
              reader.description().c_str(), args.subsampling.c_str(),
              JpegDecoder::backend().c_str());
  std::printf("%-30s %4s %8s %9s %8s\n", "encoder", "q", "bpp", "PSNR-RGB", "SSIM-Y");

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
  const std::vector<Tune> tunes = parse_tunes(args.tunes);
  const auto print_point = [&](std::size_t i) {
    std::printf("%-30s %4d %8.3f %9s %8.4f%s\n", points[i].encoder.c_str(), points[i].quality,
                points[i].bits_per_pixel, quality::format_db(points[i].psnr_rgb).c_str(),
                points[i].ssim_y,
                identical[i] == 1   ? "  (bytes identical to mjpeg)"
                : identical[i] == 0 ? "  (bytes DIFFER from mjpeg)"
                                    : "");
  };
  for (int q : qualities) {
    options.quality = q;
    const std::size_t first_point = points.size();
    for (Tune tune : tunes) {
      options.tune = tune;
      for (int coding = 0; coding < (args.progressive ? 3 : 2); ++coding) {
        const bool optimize = coding == 1;
        options.optimize = optimize;
        options.progressive = coding == 2;
        Encoded ours;
        for (const Image& f : frames) ours.jpegs.push_back(encode_jpeg(f.view(), options));
        points.push_back(measure(encoder_name(tune, coding), q, frames, ours, decoder, threads));
        identical.push_back(-1);
#if MJPEG_HAVE_TURBOJPEG
        if (coding == 0 && tune == Tune::none) {
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
    }
    for (std::size_t i = first_point; i < points.size(); ++i) print_point(i);
  }

  // ffmpeg's MJPEG encoder on the input itself, -q:v 2..31.
  const std::optional<std::string> ffmpeg = find_on_path("ffmpeg");
  std::string ffmpeg_note;
  if (!ffmpeg) {
    ffmpeg_note = "not on PATH";
  } else if (args.sweep == "-") {
    ffmpeg_note = "the input is standard input";
  } else {
    for (int qv = 2; qv <= 31 && ffmpeg_note.empty(); ++qv) {
      Encoded theirs;
      theirs.jpegs = ffmpeg_encode(*ffmpeg, args.sweep, frames.size(), options.subsampling, qv,
                                   ffmpeg_note);
      if (!ffmpeg_note.empty()) break;
      points.push_back(measure(kFfmpegName, qv, frames, theirs, decoder, threads));
      identical.push_back(-1);
      print_point(points.size() - 1);
    }
  }
  std::printf("ffmpeg: %s\n", ffmpeg_note.empty()
                                  ? "ffmpeg -c:v mjpeg -q:v 2..31 on the input (its -q:v in the "
                                    "quality column)"
                                  : ("no points: " + ffmpeg_note).c_str());
#if MJPEG_HAVE_TURBOJPEG
  const bool any_low = qualities.front() < 24;
  std::string tj_label = "libjpeg-turbo (byte-identical to mjpeg)";
  if (!all_identical)
    tj_label = "libjpeg-turbo (DIFFERS from mjpeg)";
  else if (any_low && !low_identical)
    tj_label = "libjpeg-turbo (identical to mjpeg at q>=24)";
  const bool tj_ran = std::find(tunes.begin(), tunes.end(), Tune::none) != tunes.end();
  std::printf("libjpeg-turbo: %s\n",
              !tj_ran          ? "no points (its tables are the default ones: --tunes has no none)"
              : !all_identical ? "NOT byte-identical to mjpeg"
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
    write_file(args.csv, csv, args.overwrite);
  }
  if (!args.plot.empty()) {
    std::vector<std::pair<std::string, std::string>> labels;
    for (Tune tune : tunes)
      for (int coding = 0; coding < (args.progressive ? 3 : 2); ++coding)
        labels.push_back({encoder_name(tune, coding), encoder_name(tune, coding)});
#if MJPEG_HAVE_TURBOJPEG
    if (tj_ran) labels.push_back({"libjpeg-turbo", tj_label});
#endif
    if (ffmpeg_note.empty()) labels.push_back({kFfmpegName, "ffmpeg -c:v mjpeg (-q:v 2..31)"});
    write_rd_plot(points, labels,
                  fmt::format("rate-distortion of {} ({}, q {})", args.sweep, args.subsampling,
                              args.qualities),
                  args.plot, args.overwrite);
  }
  return 0;
}

}  // namespace mjpeg::app
