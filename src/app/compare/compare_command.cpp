#include "compare_command.hpp"

// The nvJPEG row: a peer of the GPU side (cuda/), not part of the library.

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/common/cli_options.hpp"
#include "frame_store.hpp"
#if MJPEG_HAVE_OPENCV
#include "app/trace/gantt.hpp"
#endif
#include "mjpeg/files.hpp"
#include "mjpeg/encoder.hpp"
#include "mjpeg/error.hpp"
#include "app/common/wording.hpp"
#include "mode_runner.hpp"
#include "peer_nvjpeg.hpp"
#include "peer_turbojpeg.hpp"
#include "trace_json.hpp"
#include "app/trace/trace_model.hpp"
#include "app/input/video_input.hpp"

namespace mjpeg::app {
namespace {

// ---------------------------------------------------------------------------------------------
// Reporting
// ---------------------------------------------------------------------------------------------

/// The busy time of one displayed stage (summed over its lanes), or < 0 when the mode has none.
struct StageColumn {
  const char* title;
  double (*busy)(const ModeResult&);
};
const StageColumn kStageColumns[] = {
    // Stats::read_s includes aok's upload issue, shown with the upload.
    {"produce", [](const ModeResult& r) { return r.stats.read_s - r.stats.upload_issue_s; }},
    {"upload", [](const ModeResult& r) {
       return r.profile.gpu_timed ? r.profile.upload_gpu_s : -1.0;
     }},
    {"kernel", [](const ModeResult& r) {
       return !uses_gpu(r.spec.mode) ? r.stats.transform_s
              : r.profile.gpu_timed       ? r.profile.kernel_gpu_s
                                          : -1.0;
     }},
    {"download", [](const ModeResult& r) {
       return r.profile.gpu_timed ? r.profile.download_gpu_s : -1.0;
     }},
    {"entropy", [](const ModeResult& r) { return r.stats.entropy_s; }},
    {"write", [](const ModeResult& r) { return r.stats.write_s; }},
};

void print_tables(std::FILE* out, const std::vector<ModeResult>& results, const PeerResult& turbo,
                  int turbo_threads, const NvjpegResult& nvjpeg, const FrameStore& store,
                  double sok_fps) {
  const double frames = static_cast<double>(store.count());
  const double pixels = static_cast<double>(store.width()) * store.height();

  std::fprintf(out, "\n%-11s %9s %7s %10s %11s %9s  %-18s %9s %6s %6s\n", "mode", "fps", "x SOK",
               "ms/frame", "KB/frame", "bits/px", "bound by", "bound fps", "of it", "N+M");
  for (const ModeResult& r : results) {
    const Profile& a = r.profile;
    const double bytes = static_cast<double>(r.stats.jpeg_bytes) / std::max<double>(1, r.stats.frames);
    std::fprintf(out, "%-11s %9.1f %7s %10.3f %11.1f %9.3f  %-18s %9.1f %5.0f%% %6s\n",
                 display_name(r.spec).c_str(), a.fps,
                 sok_fps > 0 ? fmt::format("{:.2f}", a.fps / sok_fps).c_str() : "-",
                 a.fps > 0 ? 1e3 / a.fps : 0.0, bytes / 1e3, 8 * bytes / pixels,
                 a.bound_by.c_str(), a.bound_fps, 100 * a.of_bound,
                 fmt::format("{}+{}", r.stats.producers, r.stats.entropy_threads).c_str());
  }
  if (turbo.available) {
    const double fps = turbo.wall_s > 0 ? frames / turbo.wall_s : 0;
    const double bytes = static_cast<double>(turbo.jpeg_bytes) / frames;
    std::fprintf(out, "%-11s %9.1f %7s %10.3f %11.1f %9.3f  %-18s\n",
                 fmt::format("libjpeg-t.").c_str(), fps,
                 sok_fps > 0 ? fmt::format("{:.2f}", fps / sok_fps).c_str() : "-",
                 fps > 0 ? 1e3 / fps : 0.0, bytes / 1e3, 8 * bytes / pixels,
                 count_of(turbo_threads, "thread", "threads").c_str());
  }
  if (nvjpeg.available) {
    const double fps = nvjpeg.wall_s > 0 ? frames / nvjpeg.wall_s : 0;
    const double bytes = static_cast<double>(nvjpeg.jpeg_bytes) / frames;
    double aok_fps = 0;
    for (const ModeResult& r : results)
      if (r.spec.name == "aok") aok_fps = r.profile.fps;
    std::fprintf(out, "%-11s %9.1f %7s %10.3f %11.1f %9.3f  %-18s%s\n", "nvJPEG", fps,
                 sok_fps > 0 ? fmt::format("{:.2f}", fps / sok_fps).c_str() : "-",
                 fps > 0 ? 1e3 / fps : 0.0, bytes / 1e3, 8 * bytes / pixels,
                 fmt::format("{} threads/streams", nvjpeg.threads).c_str(),
                 aok_fps > 0 && fps > 0 ? fmt::format("  AOK = {:.2f}x nvJPEG", aok_fps / fps).c_str()
                                        : "");
  }

  std::fprintf(out, "\nstage busy time, ms per frame (share of wall time; over 100%% = several "
                    "threads at once)\n%-11s", "mode");
  for (const StageColumn& c : kStageColumns) std::fprintf(out, " %17s", c.title);
  std::fprintf(out, "\n");
  for (const ModeResult& r : results) {
    const double wall = r.stats.wall_s - r.stats.setup_s;
    std::fprintf(out, "%-11s", display_name(r.spec).c_str());
    for (const StageColumn& c : kStageColumns) {
      const double busy = c.busy(r);
      if (busy < 0 || (busy == 0 && !uses_gpu(r.spec.mode) &&
                       (std::strcmp(c.title, "upload") == 0 || std::strcmp(c.title, "download") == 0)))
        std::fprintf(out, " %17s", "-");
      else
        std::fprintf(out, " %17s",
                     fmt::format("{:.3f} ({:.0f}%)", 1e3 * busy / frames, 100 * busy / wall).c_str());
    }
    std::fprintf(out, "\n");
  }

  bool any_gpu = false;
  for (const ModeResult& r : results) any_gpu = any_gpu || r.profile.gpu_timed;
  if (!any_gpu) return;
  std::fprintf(out, "\n%-11s %9s %10s %10s %13s %13s  %s\n", "GPU", "overlap", "H2D GB/s",
               "D2H GB/s", "H2D KB/frame", "D2H KB/frame", "output");
  for (const ModeResult& r : results) {
    if (!r.profile.gpu_timed) continue;
    const Profile& a = r.profile;
    const std::string output =
        a.gpu_output == "coefficients"
            ? "coefficients"
            : fmt::format("tokens ({} of {} frames)", a.token_frames, r.stats.frames);
    std::fprintf(out, "%-11s %8.0f%% %10.2f %10.2f %13.1f %13.1f  %s\n",
                 display_name(r.spec).c_str(), 100 * a.overlap, a.h2d_gbps, a.d2h_gbps,
                 r.stats.upload_bytes / frames / 1e3, r.stats.download_bytes / frames / 1e3,
                 output.c_str());
  }
}

nlohmann::json to_json(const ModeResult& r, double sok_fps) {
  const Stats& s = r.stats;
  const Profile& a = r.profile;
  nlohmann::json stages = nlohmann::json::array();
  for (const StageLoad& l : a.stages)
    stages.push_back({{"name", l.name}, {"busy_s", l.busy_s}, {"lanes", l.lanes},
                      {"bound_fps", l.bound_fps}});
  nlohmann::json j = {
      {"mode", r.spec.name},
      {"producers", s.producers},  // the split the median run ended with
      {"entropy_threads", s.entropy_threads},
      {"self_balancing", s.self_balancing},
      {"upload_bytes_per_frame", s.frames > 0 ? s.upload_bytes / s.frames : 0},
      {"slots", s.slots},  // per stream buffer
      {"devices", !uses_gpu(r.spec.mode) ? std::vector<int>{}
                  : r.options.devices.empty() ? std::vector<int>{r.options.device}
                                              : r.options.devices},
      {"fps", a.fps},
      {"fps_of_runs", r.fps_of_runs},
      {"speedup_over_sok", sok_fps > 0 ? a.fps / sok_fps : 0.0},
      {"frames", s.frames},
      {"jpeg_bytes", s.jpeg_bytes},
      {"wall_s", s.wall_s},
      {"setup_s", s.setup_s},
      {"busy_s",
       {{"read", s.read_s - s.upload_issue_s}, {"upload_issue", s.upload_issue_s},
        {"gpu_dispatch", s.gpu_s - s.download_issue_s - s.result_wait_s},
        {"transform_cpu", s.transform_s}, {"coeff_wait", s.result_wait_s},
        {"entropy", s.entropy_s}, {"write", s.write_s}}},
      {"stages", stages},
      {"bound", {{"stage", a.bound_by}, {"fps", a.bound_fps}, {"of_bound", a.of_bound}}},
      {"identical", r.identical},
  };
  if (a.gpu_timed)
    j["gpu"] = {{"upload_s", a.upload_gpu_s},     {"kernel_s", a.kernel_gpu_s},
                {"download_s", a.download_gpu_s}, {"union_s", a.gpu_union_s},
                {"overlap", a.overlap},           {"h2d_gbps", a.h2d_gbps},
                {"d2h_gbps", a.d2h_gbps},         {"upload_bytes", s.upload_bytes},
                {"download_bytes", s.download_bytes},
                {"gpu_output", a.gpu_output},
                {"token_frames", a.token_frames}};
  return j;
}

}  // namespace

CLI::App* add_compare_command(CLI::App& app, CompareArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Encode the same frames (decoded once into memory) with each mode and with libjpeg-turbo; "
      "check the outputs are identical and show what asynchronous offload buys");
  cmd->add_option("input", args.input,
                  "Input: a video, Y4M, image sequence, or a still image (panning frames)")
      ->type_name("INPUT")
      ->required();
  cmd->add_option("--modes", args.modes,
                  "Comma list of cpu, sok, sok-pinned, aok (default: cpu,sok,aok; cpu without a "
                  "GPU)")
      ->type_name("LIST");
  cmd->add_option("--frames", args.frames, "Frames to load and encode per run")
      ->transform(decimal_integer())
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{100000}).description(""))
      ->type_name("N")
      ->capture_default_str();
  cmd->add_option("--repeat", args.repeat, "Timed runs per mode (after a warm-up); the median is shown")
      ->transform(decimal_integer())
      ->check(CLI::Range(1, 100).description(""))
      ->type_name("R")
      ->capture_default_str();
  cmd->add_option("--size", args.size, "Frame size WxH cut from a still-image input")
      ->type_name("WxH");
  add_jpeg_options(cmd, args.options, args.subsampling);
  const char* threads = "Pipeline options";
  add_pipeline_options(cmd, threads, args.producers, args.slots, args.entropy_threads,
                       args.device, args.variant, args.stages);
  add_devices_option(cmd, threads, args.devices);
  add_gpu_output_option(cmd, threads, args.gpu_output);
  const char* outputs = "Outputs (replaced if they exist)";
  cmd->add_option("--json", args.json, "Write the figures as JSON")->type_name("F")->group(outputs);
  cmd->add_option("--trace", args.trace,
                  "Write the timeline as Chrome trace-event JSON (Perfetto, chrome://tracing)")
      ->type_name("F")
      ->group(outputs);
  cmd->add_option("--gantt", args.gantt, "Draw the timeline as a PNG, SOK above AOK")
      ->type_name("F.png")
      ->group(outputs);
  cmd->add_option("--nvjpeg-threads", args.nvjpeg_threads,
                  "Threads (each with its own stream) of the nvJPEG row, 0 = leave it out; the "
                  "row is shown where the CUDA installation has libnvjpeg and a GPU mode ran")
      ->transform(decimal_integer())
      ->check(CLI::Range(0, 64).description(""))
      ->type_name("T")
      ->capture_default_str()
      ->group(threads);
  cmd->add_flag("--quiet", args.quiet, "No notices or progress on stderr");
  return cmd;
}

int run_compare(CompareArgs& args) {
  args.options.subsampling = parse_subsampling(args.subsampling);
  validate(args.options);
  auto notice = [&](const std::string& text) {
    if (!args.quiet) std::fprintf(stderr, "mjpeg: note: %s\n", text.c_str());
  };
  const FrameSize size = args.size.empty() ? FrameSize{} : parse_frame_size(args.size, "--size");
  const int width = size.width, height = size.height;
  Input input = open_input(args.input);  // a pipe's first bytes are awaited here
  if (width > 0 && input.kind != InputKind::image)
    throw UsageError("--size applies to a still-image input (video frames keep their size)");
#if !MJPEG_HAVE_OPENCV
  if (!args.gantt.empty())  // before any work: this build cannot draw
    throw Error("--gantt needs a build with OpenCV; write --trace F.json and draw it with "
                "`mjpeg gantt F.json -o G.png` where OpenCV is available");
#endif
  // The outputs' folders before the runs (a long compare should not fail at its end).
  for (const std::string* out : {&args.json, &args.trace, &args.gantt})
    if (!out->empty()) check_output_allowed(*out, /*overwrite=*/true);
  // Several devices: each GPU mode runs on 1, 2, 4, ... and all of them (fps per count).
  const std::vector<int> devices = resolve_devices(args.devices, args.device);
  const std::vector<ModeSpec> modes = per_device_count(
      choose_modes(args.modes, notice, "comparing the cpu mode with libjpeg-turbo only", devices),
      devices);

  FrameStore store = load_frames(std::move(input), args.frames, width, height, notice);
  pin_for_gpu_modes(store, modes, notice);
  if (!args.quiet)
    std::fprintf(stderr, "mjpeg: compare: %s, %.0f MB in memory%s\n", store.description.c_str(),
                 store.bytes() / 1e6, store.pinned() ? " (page-locked)" : "");

  // One set of counts for every mode, so that the modes differ only in how they offload: with
  // a GPU mode, the split of every mode balances itself over the cores the GPU modes leave.
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  bool any_gpu_mode = false;
  for (const ModeSpec& m : modes) any_gpu_mode = any_gpu_mode || uses_gpu(m.mode);
  VideoOptions base = store.format;
  base.jpeg = args.options;
  base.offload = any_gpu_mode ? Offload::aok : Offload::cpu;
  base.producers = args.producers;
  base.entropy_threads = args.entropy_threads;
  // 0: each mode's default (aok has more where it uploads the frames from where they lie).
  base.slots = args.slots;
  if (any_gpu_mode && args.producers == 0 && args.entropy_threads == 0)
    base.threads = std::max(2, cores - 1);
  base.device = args.device;
  base.devices = devices;
  base.gpu.kernel = parse_kernel_variant(args.variant);
  base.gpu.stages = args.stages;
  base.gpu.output = parse_gpu_output(args.gpu_output);
  validate(base);

  std::vector<std::vector<std::uint8_t>> reference;
  std::vector<ModeResult> results;
  for (const ModeSpec& m : modes) {
    if (!args.quiet)
      std::fprintf(stderr, "mjpeg: compare: %s, %s of %s...\n", m.name.c_str(),
                   count_of(args.repeat, "run", "runs").c_str(),
                   count_of(static_cast<std::int64_t>(store.count()), "frame", "frames").c_str());
    results.push_back(run_mode(m, base, store, args.repeat, reference));
  }
  const Stats& first = results.front().stats;
  const int turbo_threads = first.producers + first.entropy_threads;
  if (!args.quiet)
    std::fprintf(stderr, "mjpeg: compare: libjpeg-turbo, %s...\n",
                 count_of(turbo_threads, "thread", "threads").c_str());
  // libjpeg-turbo compresses pixels: planar frames go to it as the RGB we encode (converted
  // here, outside its timing).
  PeerResult turbo;
  {
    std::vector<Image> rgb;
    turbo = run_turbojpeg_median(store.pixel_views(rgb), args.options, turbo_threads, reference,
                                 args.repeat);
  }
  if (!turbo.available) notice("libjpeg-turbo row left out: " + turbo.why_not);
  // nvJPEG (loaded at run time where the CUDA installation has it) when a GPU mode ran.
  NvjpegResult nvjpeg;
  bool gpu_ran = false;
  for (const ModeSpec& m : modes) gpu_ran = gpu_ran || uses_gpu(m.mode);
  if (gpu_ran && args.nvjpeg_threads > 0) {
    if (!args.quiet)
      std::fprintf(stderr, "mjpeg: compare: nvJPEG, %d threads...\n", args.nvjpeg_threads);
    std::vector<Image> rgb;  // planar frames: the RGB we encode (converted here)
    nvjpeg = run_nvjpeg(store.pixel_views(rgb), args.options, args.nvjpeg_threads,
                             args.repeat, devices[0]);
    if (!nvjpeg.available) notice("nvJPEG row left out: not available: " + nvjpeg.why_not);
  }

  double sok_fps = 0;
  for (const ModeResult& r : results)
    if (r.spec.name == "sok") sok_fps = r.profile.fps;

  const int first_width = store.width(), first_height = store.height();
  // One count, or each mode's own where their defaults differ.
  std::string slots = count_of(first.slots, "slot", "slots");
  if (!std::all_of(results.begin(), results.end(),
                   [&](const ModeResult& r) { return r.stats.slots == first.slots; })) {
    slots = "slots";
    for (const ModeResult& m : results)
      slots += fmt::format("{} {} {}", &m == &results.front() ? ":" : ",", m.spec.name,
                           m.stats.slots);
  }
  const std::string split =
      first.self_balancing
          ? fmt::format("a self-balancing split of {} producer + entropy threads", turbo_threads)
          : fmt::format("{}, {}", count_of(first.producers, "producer", "producers"),
                        count_of(first.entropy_threads, "entropy thread", "entropy threads"));
  std::printf("%s", fmt::format("mjpeg compare: {}\n{}x{}, q{} {}{}{}{}{}, {}, {}, {}, {}, "
                                "median of {} (fps over the stages' time, allocation excluded)\n",
                                store.description, first_width, first_height,
                                args.options.quality, to_string(args.options.subsampling),
                                args.options.restart_interval
                                    ? fmt::format(" r{}", args.options.restart_interval)
                                    : "",
                                args.options.optimize ? " optimize" : "",
                                args.options.progressive ? " progressive" : "",
                                args.options.rdo != Rdo::off
                                    ? " rdo " + to_string(args.options.rdo)
                                    : std::string(),
                                count_of(static_cast<std::int64_t>(store.count()), "frame", "frames"),
                                split, slots,
                                count_of(cores, "core", "cores"),
                                count_of(args.repeat, "run", "runs"))
                        .c_str());
  print_tables(stdout, results, turbo, turbo_threads, nvjpeg, store, sok_fps);
  print_buffer_table(stdout, results);

  bool all_identical = true;
  std::string identity = "outputs: ";
  for (const ModeResult& r : results) {
    all_identical = all_identical && r.identical;
    identity += fmt::format("{} {}; ", r.spec.name,
                            &r == &results[0] ? "reference"
                            : r.identical     ? "identical"
                                              : fmt::format("DIFFERENT from frame {}", r.first_difference));
  }
  if (turbo.available)
    identity += fmt::format("libjpeg-turbo {}",
                            turbo.identical ? "identical" : "not identical (" + turbo.identity_note + ")");
  std::printf("\n%s\n", identity.c_str());
  std::fflush(stdout);

  if (!args.json.empty()) {
    nlohmann::json j = {{"input", args.input},
                        {"frames", store.count()},
                        {"width", first_width},
                        {"height", first_height},
                        {"quality", args.options.quality},
                        {"subsampling", to_string(args.options.subsampling)},
                        {"restart_interval", args.options.restart_interval},
                        {"optimize", args.options.optimize},
                        {"progressive", args.options.progressive},
                        {"tune", to_string(args.options.tune)},
                        {"rdo", to_string(args.options.rdo)},
                        {"repeat", args.repeat},
                        {"cores", cores},
                        {"identical", all_identical}};
    for (const ModeResult& r : results) j["modes"].push_back(to_json(r, sok_fps));
    if (turbo.available)
      j["libjpeg_turbo"] = {{"threads", turbo_threads},
                            {"fps", turbo.wall_s > 0 ? store.count() / turbo.wall_s : 0.0},
                            {"wall_s", turbo.wall_s},
                            {"jpeg_bytes", turbo.jpeg_bytes},
                            {"identical", turbo.identical},
                            {"note", turbo.identity_note}};
    if (nvjpeg.available)
      j["nvjpeg"] = {{"threads", nvjpeg.threads},
                     {"library", nvjpeg.library},
                     {"fps", nvjpeg.wall_s > 0 ? store.count() / nvjpeg.wall_s : 0.0},
                     {"wall_s", nvjpeg.wall_s},
                     {"jpeg_bytes", nvjpeg.jpeg_bytes}};
    write_file(args.json, j.dump(2) + "\n");
  }
  std::vector<TraceRun> trace_runs;
  for (const ModeResult& r : results)
    trace_runs.push_back(
        {display_name(r.spec), &r.profile, r.stats.frames, r.stats.wall_s - r.stats.setup_s});
  if (!args.trace.empty()) write_file(args.trace, chrome_trace_json(trace_runs));
  if (!args.gantt.empty()) {
#if MJPEG_HAVE_OPENCV
    // Through the JSON, so that the picture is exactly what `mjpeg gantt` draws from --trace.
    write_gantt_png(parse_trace_json(chrome_trace_json(trace_runs), "the compare trace"),
                    GanttOptions{}, args.gantt, /*overwrite=*/true);
#endif
  }

  if (!all_identical) throw Error("the modes wrote different bytes (see the outputs line)");
  return 0;
}

}  // namespace mjpeg::app
