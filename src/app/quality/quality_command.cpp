#include "quality_command.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <future>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "mjpeg/vocabulary.hpp"
#include "app/common/cli_options.hpp"
#include "app/input/frame_reader.hpp"
#include "mjpeg/files.hpp"
#include "mjpeg/error.hpp"
#include "app/common/paths.hpp"
#include "quality_pictures.hpp"
#include "quality_sweep.hpp"

namespace mjpeg::app {
namespace {

using quality::FrameMetrics;

/// A JSON value for a figure: the number, "inf" for +infinity (identical), null for NaN.
nlohmann::json json_figure(double v) {
  if (std::isinf(v) && v > 0) return "inf";
  if (std::isnan(v)) return nullptr;
  return v;
}

/// A CSV cell for a figure: "inf", "nan" or the value with enough digits.
std::string csv_figure(double v) {
  if (std::isinf(v) && v > 0) return "inf";
  if (std::isnan(v)) return "nan";
  return fmt::format("{:.6f}", v);
}

std::string frames_csv(const std::vector<FrameMetrics>& frames) {
  std::string csv = "frame,psnr_rgb,psnr_r,psnr_g,psnr_b,psnr_y,psnr_cb,psnr_cr,ssim_y,mse_rgb,mse_y\n";
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const FrameMetrics& f = frames[i];
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", i + 1, csv_figure(f.psnr_rgb()),
                       csv_figure(quality::psnr_from_mse(f.mse_r)),
                       csv_figure(quality::psnr_from_mse(f.mse_g)),
                       csv_figure(quality::psnr_from_mse(f.mse_b)), csv_figure(f.psnr_y()),
                       csv_figure(f.psnr_cb()), csv_figure(f.psnr_cr()), csv_figure(f.ssim_y),
                       csv_figure(f.mse_rgb()), csv_figure(f.mse_y));
  }
  return csv;
}

nlohmann::json range_json(const quality::Range& r) {
  return {{"min", json_figure(r.min)}, {"mean", json_figure(r.mean)}, {"max", json_figure(r.max)}};
}

std::string frames_json(const QualityArgs& args, int width, int height,
                        const std::vector<FrameMetrics>& frames, const quality::Summary& s) {
  nlohmann::json j;
  j["source"] = args.files[0];
  j["encoded"] = args.files[1];
  j["width"] = width;
  j["height"] = height;
  j["frames"] = s.frames;
  j["colour_spaces"] = {
      {"psnr_rgb", "8-bit RGB as decoded; PSNR of the mean of the R, G and B MSE"},
      {"psnr_y_cb_cr", "full-range BT.601 YCbCr (JPEG), 4:4:4, libjpeg's conversion of the RGB"},
      {"ssim_y", "that Y plane; 8x8 windows on a 4-pixel grid, as ffmpeg's ssim filter; null "
                 "for a picture under 8x8, which has no window (ffmpeg gives no figure either)"},
      {"summary_mean", "PSNR: of the mean MSE over frames; SSIM: mean of the frames"}};
  nlohmann::json summary;
  summary["psnr_rgb"] = range_json(s.psnr_rgb);
  summary["psnr_y"] = range_json(s.psnr_y);
  summary["psnr_cb"] = range_json(s.psnr_cb);
  summary["psnr_cr"] = range_json(s.psnr_cr);
  summary["ssim_y"] = range_json(s.ssim_y);
  nlohmann::json worst = nlohmann::json::array();
  for (std::int64_t w : s.worst) worst.push_back(w + 1);
  summary["worst_frames"] = worst;
  j["summary"] = summary;
  nlohmann::json per = nlohmann::json::array();
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const FrameMetrics& f = frames[i];
    per.push_back({{"frame", i + 1},
                   {"psnr_rgb", json_figure(f.psnr_rgb())},
                   {"psnr_r", json_figure(quality::psnr_from_mse(f.mse_r))},
                   {"psnr_g", json_figure(quality::psnr_from_mse(f.mse_g))},
                   {"psnr_b", json_figure(quality::psnr_from_mse(f.mse_b))},
                   {"psnr_y", json_figure(f.psnr_y())},
                   {"psnr_cb", json_figure(f.psnr_cb())},
                   {"psnr_cr", json_figure(f.psnr_cr())},
                   {"ssim_y", json_figure(f.ssim_y)},
                   {"mse_rgb", f.mse_rgb()},
                   {"mse_y", f.mse_y}});
  }
  j["per_frame"] = per;
  return j.dump(2) + "\n";
}

/// Usage checks on every output path, before anything is read.
void check_outputs(const QualityArgs& args, const std::vector<std::string>& inputs) {
  const std::pair<const char*, const std::string*> outputs[] = {
      {"--csv", &args.csv},     {"--json", &args.json},   {"--plot", &args.plot},
      {"--worst", &args.worst}, {"--sheet", &args.sheet}};
  std::vector<std::string> seen;
  bool wants_pictures = false;
  for (const auto& [option, path] : outputs) {
    if (path->empty()) continue;
    const bool picture = std::string(option) == "--plot" || std::string(option) == "--worst" ||
                         std::string(option) == "--sheet";
    if (picture && lower_extension(*path) != ".png")
      throw UsageError(fmt::format("{} writes a PNG picture: '{}' does not end in .png", option,
                                   *path));
    for (const std::string& in : inputs)
      if (same_file(in, *path))
        throw UsageError(fmt::format("{} '{}' is an input file", option, *path));
    for (const std::string& other : seen)
      if (other == *path) throw UsageError(fmt::format("'{}' is named for two outputs", *path));
    seen.push_back(*path);
    wants_pictures = wants_pictures || picture;
  }
  if (wants_pictures && !pictures_available())
    throw Error("this build has no OpenCV, which pictures (--plot, --worst, --sheet) need");
  for (const std::string& path : seen) check_output_allowed(path, args.overwrite);
}

int metric_threads(const QualityArgs& args) {
  return args.threads > 0 ? args.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

/// Keeps about 2N evenly spaced thumbnails of a stream of unknown length: every `stride`-th
/// frame, halving the kept set (and doubling the stride) whenever it passes 2N.
class SheetSampler {
 public:
  explicit SheetSampler(int n) : n_(std::max(1, n)) {}
  bool wants(std::int64_t frame) const { return frame % stride_ == 0; }
  void add(Thumbnail t) {
    kept_.push_back(std::move(t));
    if (static_cast<int>(kept_.size()) > 2 * n_) {
      stride_ *= 2;
      kept_.erase(std::remove_if(kept_.begin(), kept_.end(),
                                 [&](const Thumbnail& k) { return k.frame % stride_ != 0; }),
                  kept_.end());
    }
  }
  /// N of the kept thumbnails, evenly spaced, first and last included.
  std::vector<Thumbnail> pick() const {
    if (static_cast<int>(kept_.size()) <= n_) return kept_;
    std::vector<Thumbnail> out;
    for (int i = 0; i < n_; ++i) {
      const std::size_t k = n_ == 1 ? 0
                                    : static_cast<std::size_t>(std::lround(
                                          double(i) * (kept_.size() - 1) / (n_ - 1)));
      out.push_back(kept_[k]);
    }
    return out;
  }

 private:
  int n_;
  std::int64_t stride_ = 1;
  std::vector<Thumbnail> kept_;
};

/// True when `a` is a worse frame than `b` (the order of Summary::worst).
bool worse(const FrameMetrics& a, const FrameMetrics& b) {
  if (a.mse_rgb() != b.mse_rgb()) return a.mse_rgb() > b.mse_rgb();
  return a.ssim_y < b.ssim_y;
}

void print_frame_header() {
  std::printf("%6s %9s %9s %9s %9s %8s\n", "frame", "PSNR-RGB", "PSNR-Y", "PSNR-Cb", "PSNR-Cr",
              "SSIM-Y");
}

void print_frame(std::int64_t index, const FrameMetrics& m) {
  std::printf("%6lld %9s %9s %9s %9s %8s\n", static_cast<long long>(index + 1),
              quality::format_db(m.psnr_rgb()).c_str(), quality::format_db(m.psnr_y()).c_str(),
              quality::format_db(m.psnr_cb()).c_str(), quality::format_db(m.psnr_cr()).c_str(),
              quality::format_db(m.ssim_y, 4).c_str());
}

int run_compare(const QualityArgs& args) {
  const std::string& src_path = args.files[0];
  const std::string& enc_path = args.files[1];
  check_outputs(args, args.files);
  const auto t0 = std::chrono::steady_clock::now();

  // One frame more than --frames asks for is read (not compared), to tell which input --frames
  // cut short: SOURCE cut where ENCODED ends may be a segment paired at the wrong offset.
  const std::int64_t limit = args.frames > 0 ? args.frames + 1 : -1;
  FrameReader source(src_path, limit, args.start);
  FrameReader encoded(enc_path, limit);
  if (source.width() != encoded.width() || source.height() != encoded.height())
    throw Error(fmt::format("sizes differ: '{}' is {}x{}, '{}' is {}x{}", src_path,
                            source.width(), source.height(), enc_path, encoded.width(),
                            encoded.height()));
  if (!args.quiet) {
    if (args.start > 0)
      std::printf("source  %s: %s; from frame %lld on (--start; frame 1 below is its frame "
                  "%lld)\n",
                  src_path.c_str(), source.description().c_str(),
                  static_cast<long long>(args.start), static_cast<long long>(args.start + 1));
    else
      std::printf("source  %s: %s\n", src_path.c_str(), source.description().c_str());
    std::printf("encoded %s: %s\n", enc_path.c_str(), encoded.description().c_str());
    print_frame_header();
  }

  const int threads = metric_threads(args);
  const bool keep_worst = !args.worst.empty();
  std::vector<FrameMetrics> frames;
  Image a, b, worst_a, worst_b;
  FrameMetrics worst_m;  // of the frame in worst_a/worst_b
  SheetSampler sheet(args.sheet_frames);
  std::vector<Thumbnail> thumbs;
  double read_s = 0, metrics_s = 0;
  bool source_cut = false, encoded_cut = false;  // by --frames
  for (std::int64_t index = 0;; ++index) {
    if (args.frames > 0 && index == args.frames) {
      source_cut = source.next(a);
      encoded_cut = encoded.next(b);
      break;
    }
    auto t_read = std::chrono::steady_clock::now();
    // The two inputs decode at the same time (each decoder also uses its own threads).
    std::future<bool> got_b = std::async(std::launch::async, [&] { return encoded.next(b); });
    const bool got_a = source.next(a);
    const bool have_b = got_b.get();
    read_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t_read).count();
    if (!got_a && !have_b) break;
    if (got_a != have_b) {
      const std::string& longer = got_a ? src_path : enc_path;
      const std::string& shorter = got_a ? enc_path : src_path;
      throw Error(fmt::format(
          "frame counts differ: '{}' has more frames{} than '{}', which ends after {} ({}use "
          "--frames {} to compare only the first {})",
          longer, args.start > 0 && got_a ? fmt::format(" from frame {} on", args.start) : "",
          shorter, index,
          got_a && args.start == 0
              ? fmt::format("if '{}' is a segment made with encode --start N, compare it with "
                            "--start N; else ",
                            enc_path)
              : "",
          index, index));
    }
    const auto t_metrics = std::chrono::steady_clock::now();
    const FrameMetrics m = quality::compare(a.view(), b.view(), threads);
    metrics_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t_metrics).count();
    if (keep_worst && (frames.empty() || worse(m, worst_m))) {
      worst_m = m;
      worst_a = a;
      worst_b = b;
    }
    if (!args.sheet.empty() && sheet.wants(index))
      sheet.add({index, make_thumbnail(b, 320), m.psnr_rgb(), m.ssim_y});
    frames.push_back(m);
    if (!args.quiet) print_frame(index, m);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (source_cut && !encoded_cut)  // ENCODED has exactly --frames frames, SOURCE more
    std::fprintf(stderr, "%s\n",
                 fmt::format("mjpeg: note: --frames {0} compared {1} of '{2}' (it has more) with "
                             "all {0} of '{3}'; if '{3}' is a segment made with encode --start "
                             "N, compare it with --start N",
                             args.frames,
                             args.start > 0 ? fmt::format("{} frames from frame {} on",
                                                          args.frames, args.start)
                                            : fmt::format("the first {} frames", args.frames),
                             src_path, enc_path)
                     .c_str());

  const quality::Summary s = quality::summarize(frames);
  if (!args.quiet) std::printf("\n");
  for (const std::string& line : summary_lines(s)) std::printf("%s\n", line.c_str());
  std::printf("time: %.1f ms per frame (decode both %.1f ms, metrics %.1f ms; %d threads)\n",
              1e3 * wall / static_cast<double>(s.frames), 1e3 * read_s / s.frames,
              1e3 * metrics_s / s.frames, threads);
  std::fflush(stdout);

  const std::string title = fmt::format("{} vs {}", enc_path, src_path);
  if (!args.csv.empty()) write_file(args.csv, frames_csv(frames), args.overwrite);
  if (!args.json.empty())
    write_file(args.json, frames_json(args, source.width(), source.height(), frames, s),
                    args.overwrite);
  if (!args.plot.empty()) write_frames_plot(frames, title, args.plot, args.overwrite);
  if (!args.worst.empty())
    write_worst_picture(worst_a, worst_b, s.worst[0],
                        frames[static_cast<std::size_t>(s.worst[0])], args.worst, args.overwrite);
  if (!args.sheet.empty())
    write_contact_sheet(sheet.pick(), title + ": encoded frames, RGB PSNR", args.sheet,
                        args.overwrite);
  return 0;
}

}  // namespace

std::vector<std::string> summary_lines(const quality::Summary& s) {
  std::vector<std::string> lines;
  lines.push_back(fmt::format("summary over {} frame{} (PSNR mean = PSNR of the mean MSE):",
                              s.frames, s.frames == 1 ? "" : "s"));
  const auto db = [](const char* name, const quality::Range& r) {
    return fmt::format("  PSNR {:<4} min {:>7}  mean {:>7}  max {:>7} dB", name,
                       quality::format_db(r.min), quality::format_db(r.mean),
                       quality::format_db(r.max));
  };
  lines.push_back(db("RGB", s.psnr_rgb));
  lines.push_back(db("Y", s.psnr_y));
  lines.push_back(db("Cb", s.psnr_cb));
  lines.push_back(db("Cr", s.psnr_cr));
  if (std::isnan(s.ssim_y.mean))
    lines.push_back("  SSIM Y    n/a (a picture under 8x8 has no 8x8 window to measure)");
  else
    lines.push_back(fmt::format("  SSIM Y    min {:>7}  mean {:>7}  max {:>7}",
                                quality::format_db(s.ssim_y.min, 4),
                                quality::format_db(s.ssim_y.mean, 4),
                                quality::format_db(s.ssim_y.max, 4)));
  std::string worst = "  worst frames (RGB PSNR):";
  for (std::int64_t w : s.worst) worst += fmt::format(" {}", w + 1);
  lines.push_back(worst);
  return lines;
}

CLI::App* add_quality_command(CLI::App& app, QualityArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "quality",
      "Compare an encoded video or image with its source: PSNR (RGB, Y, Cb, Cr) and SSIM (Y) "
      "per frame and in summary, with CSV/JSON and pictures; or, with --sweep, size against "
      "quality over a range of JPEG qualities");
  cmd->add_option("files", args.files, "SOURCE ENCODED: any readable video, image sequence "
                                        "or image (the encoded one usually an M-JPEG AVI)")
      ->type_name("SOURCE ENCODED")
      ->expected(0, 2);
  cmd->add_option("--frames", args.frames, "Compare (or sweep) at most the first N frames")
      ->transform(decimal_integer())
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40).description(""))
      ->type_name("N");
  cmd->add_option("--start", args.start,
                  "Skip SOURCE's first N frames: ENCODED's frame 1 is paired with SOURCE's frame "
                  "N + 1 (ENCODED is a segment made with encode --start N)")
      ->transform(decimal_integer())
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40).description(""))
      ->type_name("N");
  cmd->add_option("--csv", args.csv, "Write the figures as CSV (per frame; --sweep: per point)")
      ->type_name("FILE");
  cmd->add_option("--json", args.json, "Write per-frame and summary figures as JSON")
      ->type_name("FILE");
  cmd->add_option("--plot", args.plot,
                  "PNG: PSNR and SSIM over frames (--sweep: size against PSNR and SSIM)")
      ->type_name("FILE.png");
  cmd->add_option("--worst", args.worst,
                  "PNG: source, encoded and magnified difference of the worst frame")
      ->type_name("FILE.png");
  cmd->add_option("--sheet", args.sheet, "PNG: contact sheet of evenly spaced frames with PSNR")
      ->type_name("FILE.png");
  cmd->add_option("--sheet-frames", args.sheet_frames, "Frames on the contact sheet")
      ->transform(decimal_integer())
      ->check(CLI::Range(1, 64).description(""))
      ->type_name("N")
      ->capture_default_str();
  cmd->add_option("--threads", args.threads, "Threads for the metrics (default: all cores)")
      ->transform(decimal_integer())
      ->check(CLI::Range(1, 256).description(""))
      ->type_name("N");
  cmd->add_flag("-y,--overwrite", args.overwrite, "Replace output files that exist");
  cmd->add_flag("--quiet", args.quiet, "Print only the summary (no per-frame lines)");
  const char* sweep = "Rate-distortion sweep";
  cmd->add_option("--sweep", args.sweep,
                  "Encode INPUT (its first frame, or --frames N) at each quality and table "
                  "preset, with and without --optimize, beside libjpeg-turbo and (when "
                  "ffmpeg is on PATH) ffmpeg's MJPEG encoder at -q:v 2..31")
      ->type_name("INPUT")
      ->group(sweep);
  cmd->add_option("--qualities", args.qualities, "Qualities of the sweep: FIRST:LAST:STEP or Q")
      ->type_name("A:B:S")
      ->capture_default_str()
      ->group(sweep);
  cmd->add_option("-s,--subsampling", args.subsampling, "Chroma subsampling of the sweep")
      ->check(CLI::IsMember(vocab::names_of<Subsampling>()).description(""))
      ->type_name(vocab::alternatives_of<Subsampling>())
      ->capture_default_str()
      ->group(sweep);
  cmd->add_option("--tunes", args.tunes,
                  "Table presets of the sweep (--tune), each with and without --optimize, "
                  "comma-separated: none, psnr, ssim")
      ->type_name("LIST")
      ->capture_default_str()
      ->group(sweep);
  cmd->add_flag("--progressive", args.progressive,
                "Sweep each preset also with --progressive (a third curve per preset)")
      ->group(sweep);
  return cmd;
}

int run_quality(const QualityArgs& args) {
  if (!args.sweep.empty()) {
    if (!args.files.empty())
      throw UsageError("--sweep takes one INPUT and no SOURCE ENCODED pair");
    if (!args.worst.empty() || !args.sheet.empty() || !args.json.empty())
      throw UsageError("--sweep writes only --plot and --csv");
    if (args.start > 0)
      throw UsageError("--start pairs SOURCE's frames with a segment's; --sweep takes none");
    check_outputs(args, {args.sweep});
    return run_quality_sweep(args);
  }
  if (args.progressive)
    throw UsageError("--progressive adds curves to a --sweep; comparing SOURCE with ENCODED "
                     "encodes nothing");

  if (args.files.size() != 2)
    throw UsageError("quality needs SOURCE and ENCODED (or --sweep INPUT)");
  return run_compare(args);
}

}  // namespace mjpeg::app
