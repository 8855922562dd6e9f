#include "bench_command.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "mjpeg/vocabulary.hpp"
#include "bench_plots.hpp"
#include "bench_rows.hpp"
#include "app/common/cli_options.hpp"
#include "frame_store.hpp"
#include "mjpeg/files.hpp"
#include "mjpeg/error.hpp"
#include "mode_runner.hpp"
#include "peer_turbojpeg.hpp"
#include "mjpeg/video.hpp"
#include "app/input/video_input.hpp"

namespace mjpeg::app {
namespace {

std::vector<std::string> split_list(const std::string& text, const char* what) {
  std::vector<std::string> items;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) items.push_back(item);
  if (items.empty()) throw UsageError(fmt::format("{} lists nothing", what));
  return items;
}

std::vector<FrameSize> parse_sizes(const std::string& text) {
  std::vector<FrameSize> sizes;
  for (const std::string& s : split_list(text, "--sizes")) sizes.push_back(parse_frame_size(s, "--sizes"));
  return sizes;
}

std::vector<int> parse_ints(const std::string& text, const char* what, int lo, int hi) {
  std::vector<int> values;
  for (const std::string& s : split_list(text, what)) {
    char* end = nullptr;
    const long v = std::strtol(s.c_str(), &end, 10);
    if (*end != '\0' || v < lo || v > hi)
      throw UsageError(fmt::format("{}: '{}' is not an integer in {}..{}", what, s, lo, hi));
    values.push_back(static_cast<int>(v));
  }
  return values;
}

/// 1, 2, 4, ... up to and including `most`.
std::vector<int> doubling_up_to(int most) {
  std::vector<int> v;
  for (int m = 1; m < most; m *= 2) v.push_back(m);
  v.push_back(most);
  return v;
}

/// Frames per run at size `z`: `at_hd` scaled by the area relative to 1920x1080 (so every size
/// takes about as long), at most 4 x `at_hd` and 4 GB of pixels, but at least 40: twice the
/// default slots and more, so that slots are reused and the first touch of freshly allocated
/// (pageable SOK) slots does not dominate a large frame's run.
int frames_for(FrameSize z, std::int64_t at_hd) {
  const double frame_bytes = 3.0 * z.width * z.height;
  const double scaled = static_cast<double>(at_hd) * (1920.0 * 1080.0 * 3) / frame_bytes;
  const double most = std::min(4.0 * static_cast<double>(at_hd), 4e9 / frame_bytes);
  return static_cast<int>(std::max(40.0, std::min(std::round(scaled), most)));
}

/// A row from a timed run.
BenchRow make_row(const std::string& sweep, const ModeResult& r, const ImageView& frame) {
  const Stats& s = r.stats;
  const Profile& a = r.profile;
  const double frames = static_cast<double>(std::max<std::int64_t>(1, s.frames));
  auto per_frame = [&](double busy) { return 1e3 * busy / frames; };
  BenchRow row;
  row.sweep = sweep;
  row.mode = r.spec.name;  // without per_device_count's "-2dev": the devices column says it
  if (row.mode.size() > 3 && row.mode.compare(row.mode.size() - 3, 3, "dev") == 0)
    row.mode = row.mode.substr(0, row.mode.rfind('-'));
  row.width = frame.width;
  row.height = frame.height;
  row.frames = static_cast<int>(s.frames);
  row.producers = s.producers > 0 ? s.producers : r.options.producers;  // the split it ended with
  row.entropy_threads = s.entropy_threads > 0 ? s.entropy_threads : r.options.entropy_threads;
  row.slots = s.slots;
  row.stages = r.options.gpu.stages;
  row.variant = to_string(r.options.gpu.kernel);
  row.fps = a.fps;
  row.bound_stage = a.bound_by;
  row.bound_fps = a.bound_fps;
  row.produce_ms = per_frame(s.read_s);  // the upload issue of aok included
  if (a.gpu_timed) {
    row.upload_ms = per_frame(a.upload_gpu_s);
    row.kernel_ms = per_frame(a.kernel_gpu_s);
    row.download_ms = per_frame(a.download_gpu_s);
  } else if (!uses_gpu(r.spec.mode)) {
    row.kernel_ms = per_frame(s.transform_s);  // the CPU's transform in the kernel column
  }
  row.entropy_ms = per_frame(s.entropy_s);
  row.write_ms = per_frame(s.write_s);
  row.overlap = a.overlap;
  row.h2d_gbps = a.h2d_gbps;
  row.d2h_gbps = a.d2h_gbps;
  row.kb_per_frame = static_cast<double>(s.jpeg_bytes) / frames / 1e3;
  row.identical = r.identical;
  row.devices = !uses_gpu(r.spec.mode)
                    ? 1
                    : static_cast<int>(std::max<std::size_t>(1, r.options.devices.size()));
  return row;
}

/// Measures and collects rows; prints one line per row as it goes.
class Sweeper {
 public:
  Sweeper(const BenchArgs& args, std::vector<ModeSpec> modes, std::vector<int> devices)
      : args_(args), modes_(std::move(modes)), devices_(std::move(devices)) {}

  /// Returns the row's frames/s. The GPU modes use every device of --devices unless the spec
  /// names its own (the devices sweep).
  double run(const std::string& sweep, const ModeSpec& mode, const FrameStore& store,
             int entropy_threads, int slots, int stages,
             std::vector<std::vector<std::uint8_t>>& reference) {
    VideoOptions o = store.format;
    o.jpeg = args_.options;
    o.offload = mode.mode;
    o.producers = args_.producers;
    o.entropy_threads = entropy_threads;
    o.slots = slots;
    o.device = args_.device;
    o.devices = devices_;
    o.gpu.kernel = parse_kernel_variant(args_.variant);
    o.gpu.stages = stages;
    validate(o);
    const ModeResult r = run_mode(mode, o, store, args_.repeat, reference);
    rows_.push_back(make_row(sweep, r, store.frames[0].view()));
    print(rows_.back());
    return rows_.back().fps;
  }

  /// libjpeg-turbo on N + M threads (the pipeline's producers and entropy workers); the row
  /// keeps N and M apart so that it plots against M like the modes.
  /// Returns the row's frames/s (0 when TurboJPEG is absent).
  double run_turbojpeg_row(const std::string& sweep, const FrameStore& store, int producers,
                           int entropy_threads,
                           const std::vector<std::vector<std::uint8_t>>& reference) {
    const int threads = producers + entropy_threads;
    const PeerResult p =
        run_turbojpeg_median(store.views(), args_.options, threads, reference, args_.repeat);
    if (!p.available) return 0;  // said once at the start
    BenchRow row;
    row.sweep = sweep;
    row.mode = "libjpeg-turbo";
    row.width = store.frames[0].width;
    row.height = store.frames[0].height;
    row.frames = static_cast<int>(p.frames);
    row.producers = producers;
    row.entropy_threads = entropy_threads;
    row.fps = p.wall_s > 0 ? p.frames / p.wall_s : 0;
    row.kb_per_frame = static_cast<double>(p.jpeg_bytes) / std::max<std::int64_t>(1, p.frames) / 1e3;
    row.identical = p.identical;
    rows_.push_back(row);
    print(row);
    return row.fps;
  }

  const std::vector<BenchRow>& rows() const { return rows_; }

 private:
  void print(const BenchRow& r) const {
    if (args_.quiet) return;
    std::fprintf(stderr, "%s\n",
                 fmt::format("mjpeg: bench {:<10} {:<13} {:>5}x{:<5} M={:<3} K={:<2} S={} "
                             "D={} {:8.1f} fps{}{}",
                             r.sweep, r.mode, r.width, r.height, r.entropy_threads, r.slots,
                             r.stages, r.devices, r.fps,
                             r.bound_stage.empty() ? "" : "  bound by " + r.bound_stage,
                             r.identical ? "" : "  (output differs!)")
                     .c_str());
  }

  const BenchArgs& args_;
  std::vector<ModeSpec> modes_;
  std::vector<int> devices_;
  std::vector<BenchRow> rows_;
};

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot read '{}'", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<BenchRow> measure(BenchArgs& args) {
  auto notice = [&](const std::string& text) {
    if (!args.quiet) std::fprintf(stderr, "mjpeg: note: %s\n", text.c_str());
  };
  Input input = open_input(args.input);
  if (input.kind != InputKind::image)
    throw UsageError("bench cuts its frames from a still image (e.g. a PPM or PNG)");
  const std::vector<FrameSize> sizes = parse_sizes(args.sizes);
  const std::set<std::string> sweeps = [&] {
    std::set<std::string> s;
    for (const std::string& w : split_list(args.sweeps, "--sweeps")) {
      if (w != "resolution" && w != "threads" && w != "cpu" && w != "slots" && w != "stages" &&
          w != "devices")
        throw UsageError(fmt::format("--sweeps: unknown sweep '{}' (resolution, threads, cpu, "
                                     "slots, stages, devices)", w));
      s.insert(w);
    }
    return s;
  }();
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const std::vector<int> slot_list = parse_ints(args.slots, "--slots", 1, 256);
  const std::vector<int> stage_list = parse_ints(args.stages, "--stages", 1, 4);
  std::vector<int> thread_list =
      args.threads.empty() ? doubling_up_to(cores) : parse_ints(args.threads, "--threads", 1, 256);

  const std::vector<int> devices = resolve_devices(args.devices, args.device);
  const std::vector<ModeSpec> modes =
      choose_modes(args.modes, notice, "measuring the cpu mode and libjpeg-turbo only", devices);
  {
    const PeerResult probe = run_turbojpeg({}, args.options, 1, {});
    if (!probe.available) notice("no libjpeg-turbo rows: " + probe.why_not);
  }

  const Image picture = read_input_image(*input.file, notice);
  Sweeper sweeper(args, modes, devices);
  for (std::size_t si = 0; si < sizes.size(); ++si) {
    const FrameSize z = sizes[si];
    const bool first = si == 0;
    if (!first && !sweeps.count("resolution")) break;
    FrameStore store = panning_frames(picture, z.width, z.height, frames_for(z, args.frames));
    pin_for_gpu_modes(store, modes, notice);
    if (!args.quiet)
      std::fprintf(stderr, "mjpeg: bench: %s, %.0f MB in memory\n", store.description.c_str(),
                   store.bytes() / 1e6);
    std::vector<std::vector<std::uint8_t>> reference;
    if (sweeps.count("resolution")) {
      for (const ModeSpec& m : modes) sweeper.run("resolution", m, store, 0, 0, 2, reference);
    }
    if (!first) continue;
    if (sweeps.count("threads")) {
      for (const ModeSpec& m : modes)
        for (int t : thread_list) sweeper.run("threads", m, store, t, 0, 2, reference);
      // libjpeg-turbo on as many threads as the pipeline's producers + entropy workers.
      // (the producers the pipeline starts with: --producers, else 2, 1 on one core)
      const int producers = args.producers > 0 ? args.producers : std::min(2, std::max(2, cores) - 1);
      for (int t : thread_list) sweeper.run_turbojpeg_row("threads", store, producers, t, reference);
    }
    if (sweeps.count("cpu")) {
      // The cpu mode on T threads (workers; its one producer only hands out the in-memory
      // frames) beside libjpeg-turbo on T threads, whatever --modes says.
      const ModeSpec cpu = parse_mode_spec("cpu");
      for (int t : thread_list) {
        const double ours = sweeper.run("cpu", cpu, store, t, 0, 2, reference);
        const double turbo = sweeper.run_turbojpeg_row("cpu", store, 0, t, reference);
        if (turbo > 0 && !args.quiet)
          std::fprintf(stderr, "mjpeg: bench cpu        %d threads: cpu %.1f fps, libjpeg-turbo "
                               "%.1f fps: %.2fx\n", t, ours, turbo, ours / turbo);
      }
    }
    if (sweeps.count("slots")) {
      for (const ModeSpec& m : modes)
        for (int k : slot_list) sweeper.run("slots", m, store, 0, k, 2, reference);
    }
    if (sweeps.count("stages")) {
      for (const ModeSpec& m : modes) {
        if (!traits_of(m.mode).asynchronous) continue;  // stages overlap frames
        for (int s : stage_list) sweeper.run("stages", m, store, 0, 0, s, reference);
      }
    }
    if (sweeps.count("devices") && devices.size() > 1) {
      // fps per device count: each GPU mode on the list's first 1, 2, 4, ... and all entries.
      for (const ModeSpec& m : per_device_count(modes, devices))
        if (uses_gpu(m.mode))
          sweeper.run("devices", m, store, 0, 0, 2, reference);
    }
  }
  return sweeper.rows();
}

}  // namespace

CLI::App* add_bench_command(CLI::App& app, BenchArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Sweep resolution, entropy threads, slots and kernel stages on frames cut from a still "
      "image; write CSV and PNG plots");
  cmd->add_option("input", args.input,
                  "A still image to cut the frames from (they pan across it, tiled)")
      ->type_name("IMAGE");
  cmd->add_option("--sizes", args.sizes, "Frame sizes for the resolution sweep; the first one "
                                         "is used by the other sweeps")
      ->type_name("WxH,...")
      ->capture_default_str();
  cmd->add_option("--modes", args.modes,
                  "Comma list of cpu, sok, sok-pinned, aok (default: cpu,sok,aok; cpu without a GPU)")
      ->type_name("LIST");
  cmd->add_option("--sweeps", args.sweeps, "Which sweeps to run")
      ->type_name("LIST")
      ->capture_default_str();
  cmd->add_option("--threads", args.threads,
                  "Entropy threads of the threads sweep, worker threads of the cpu sweep (default: 1, "
                  "2, 4, ... up to the cores)")
      ->type_name("LIST");
  cmd->add_option("--slots", args.slots, "Slots of the slots sweep")
      ->type_name("LIST")
      ->capture_default_str();
  cmd->add_option("--stages", args.stages, "cuda::pipeline stages of the stages sweep (aok)")
      ->type_name("LIST")
      ->capture_default_str();
  cmd->add_option("--frames", args.frames,
                  "Frames per run at 1920x1080 (scaled by the frame area, at least 40)")
      ->transform(decimal_integer())
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{100000}).description(""))
      ->type_name("N")
      ->capture_default_str();
  cmd->add_option("--repeat", args.repeat, "Timed runs per point (after a warm-up); the median counts")
      ->transform(decimal_integer())
      ->check(CLI::Range(1, 100).description(""))
      ->type_name("R")
      ->capture_default_str();
  add_jpeg_options(cmd, args.options, args.subsampling);
  cmd->add_option("--producers", args.producers, "Producer threads (default 2)")
      ->transform(decimal_integer())
      ->check(CLI::Range(1, 64).description(""))
      ->type_name("N");
  cmd->add_option("--device", args.device, "CUDA device index")
      ->transform(decimal_integer())
      ->check(CLI::Range(0, 1023).description(""))
      ->type_name("N");
  add_devices_option(cmd, "Options", args.devices);
  cmd->add_option("--variant", args.variant, "GPU kernel variant")
      ->check(CLI::IsMember(vocab::names_of<KernelVariant>()).description(""))
      ->type_name("VARIANT")
      ->capture_default_str();
  cmd->add_option("--csv", args.csv, "The CSV of every point (replaced if it exists)")
      ->type_name("F")
      ->capture_default_str();
  cmd->add_option("--plots", args.plots,
                  "Directory for the PNG plots (fps vs threads, fps vs slots, stage time vs "
                  "resolution)")
      ->type_name("DIR");
  cmd->add_option("--from", args.from, "Draw the plots from this bench CSV instead of measuring")
      ->type_name("F.csv");
  cmd->add_flag("--quiet", args.quiet, "No notices or progress on stderr");
  return cmd;
}

int run_bench(BenchArgs& args) {
  args.options.subsampling = parse_subsampling(args.subsampling);
  validate(args.options);
  if (!args.from.empty()) {
    if (!args.input.empty()) throw UsageError("--from draws from a CSV; give no input image");
    if (args.plots.empty()) throw UsageError("--from needs --plots DIR");
    write_bench_plots(parse_bench_csv(read_text_file(args.from)), args.plots);
    return 0;
  }
  if (args.input.empty()) throw UsageError("bench needs an input image (or --from F.csv)");
  if (!args.plots.empty()) check_bench_plots_possible();
  check_output_allowed(args.csv, /*overwrite=*/true);  // its folder, before the sweep
  const std::vector<BenchRow> rows = measure(args);
  write_file(args.csv, bench_csv(rows));
  if (!args.quiet) std::fprintf(stderr, "mjpeg: bench: %zu points in %s\n", rows.size(), args.csv.c_str());
  if (!args.plots.empty()) write_bench_plots(rows, args.plots);
  for (const BenchRow& r : rows)
    if (!r.identical && r.mode != "libjpeg-turbo")
      throw Error("some runs wrote different bytes (see the CSV's identical column)");
  return 0;
}

}  // namespace mjpeg::app
