#include "stream_command.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "cli_options.hpp"
#include "gpu_transform.hpp"
#include "image_input.hpp"
#include "input_dump.hpp"
#include "io/atomic_file.hpp"
#include "io/frame_sink.hpp"
#include "mjpeg/error.hpp"
#include "paths.hpp"
#include "pipeline/analysis.hpp"
#include "pipeline/pipeline.hpp"
#include "quality_hook.hpp"
#include "video_input.hpp"

namespace mjpeg::app {
namespace {

// ---------------------------------------------------------------------------------------------
// Ctrl-C / SIGTERM: the first one asks the pipeline to stop reading and finish the frames in
// flight (the output is finalised and playable); a second one ends the process at once.
// ---------------------------------------------------------------------------------------------
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler needs a lock-free flag");

extern "C" void on_interrupt(int) {
  if (g_stop.exchange(true)) _exit(130);
}

class InterruptGuard {
 public:
  InterruptGuard() {
    g_stop = false;
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sa.sa_flags = SA_RESTART;  // a blocking read (e.g. of a pipe) goes on, it does not fail
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~InterruptGuard() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

void notice(const EncodeArgs& args, const std::string& text) {
  if (!args.quiet) std::fprintf(stderr, "mjpeg: note: %s\n", text.c_str());
}

/// The mode to run: as asked, or aok when the GPUs are usable and cpu (with a notice)
/// otherwise; `devices` gets the stream buffers' devices (--devices, or {--device}).
pipeline::Mode choose_mode(const EncodeArgs& args, std::vector<int>& devices) {
  std::string reason;
  const int count = gpu::device_count(&reason);
  const bool all_of_none = args.devices == "all" && count == 0;
  if (!all_of_none) devices = resolve_devices(args.devices, args.device);
  // The first listed device that does not exist, and what to say about it.
  int missing = -1;
  for (int d : devices)
    if (d >= count && missing < 0) missing = d;
  const std::string found = count > 0 ? fmt::format("{} found", count)
                                      : (reason.empty() ? "none found" : reason);
  if (!args.mode.empty()) {
    const pipeline::Mode mode = pipeline::parse_mode(args.mode);
    if (mode != pipeline::Mode::cpu) {
      if (all_of_none)
        throw Error(fmt::format("--mode {} --devices all: no CUDA device ({})", args.mode, found));
      if (missing >= 0)
        throw Error(fmt::format("--mode {} needs CUDA device {}: {}", args.mode, missing,
                                reason.empty() ? "it does not exist (" + found + ")" : reason));
    }
    return mode;
  }
  // No mode asked for: a missing GPU (or a --device that does not exist) is not the user's
  // insistence on one, so the CPU encodes, with a notice saying why.
  if (all_of_none) {
    notice(args, fmt::format("--devices all: no CUDA device ({}); encoding on the CPU", found));
    return pipeline::Mode::cpu;
  }
  if ((args.device_given || !args.devices.empty()) && missing >= 0) {
    notice(args, fmt::format("CUDA device {} does not exist ({}); encoding on the CPU", missing,
                             found));
    return pipeline::Mode::cpu;
  }
  for (int d : devices) {
    if (!gpu::usable_device(d, &reason)) {
      notice(args, fmt::format("{}; encoding on the CPU", reason));
      return pipeline::Mode::cpu;
    }
  }
  return pipeline::Mode::aok;
}

pipeline::PipelineOptions pipeline_options(const EncodeArgs& args, pipeline::Mode mode,
                                           const std::vector<int>& devices) {
  pipeline::PipelineOptions o;
  o.mode = mode;
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  pipeline::apply_default_counts(o, cores, args.producers, args.entropy_threads, args.slots);
  o.device = args.device;
  if (mode != pipeline::Mode::cpu) o.devices = devices;
  o.variant = gpu::parse_variant(args.variant);
  o.stages = args.stages;
  o.pinned_sok = args.pinned;
  o.gpu_output = gpu::parse_gpu_output(args.gpu_output);
  pipeline::validate(o);
  return o;
}

/// "\r"-updated progress on a terminal: frames, fps, ETA when the length is known.
class ProgressLine {
 public:
  ProgressLine(bool enabled, std::int64_t total) : enabled_(enabled), total_(total) {}
  void update(const pipeline::Progress& p) {
    if (!enabled_ || p.elapsed_s - last_ < 0.25) return;
    last_ = p.elapsed_s;
    const double fps = p.elapsed_s > 0 ? p.frames / p.elapsed_s : 0;
    std::string line = fmt::format("mjpeg: {} frames", p.frames);
    if (total_ > 0) line += fmt::format(" of {}", total_);
    line += fmt::format(", {:.1f} fps", fps);
    if (total_ > 0 && fps > 0)
      line += fmt::format(", ETA {:.0f} s", std::max(0.0, (total_ - p.frames) / fps));
    std::fprintf(stderr, "\r%-70s", line.c_str());
    shown_ = true;
  }
  void finish() {
    if (shown_) std::fprintf(stderr, "\r%-70s\r", "");
  }

 private:
  bool enabled_;
  std::int64_t total_;
  double last_ = -1;
  bool shown_ = false;
};

VideoInput open_input(const EncodeArgs& args, InputKind kind, std::vector<io::Image>& stills,
                      std::vector<ImageView>& views) {
  if (kind != InputKind::image) {
    VideoOptions vo;
    vo.rgb_swscale = args.rgb_decode == "swscale";
    // A frame range (--start): the frames before it are read and dropped.
    VideoInput in = open_video_input(
        args.input, kind, args.frames < 0 ? -1 : args.start + args.frames, vo);
    if (args.start > 0) {
      in.source = std::make_unique<pipeline::SkipFrameSource>(std::move(in.source), args.start);
      if (in.frame_count >= 0) in.frame_count = std::max<std::int64_t>(0, in.frame_count - args.start);
    }
    return in;
  }
  // One still image as a one-frame stream.
  stills.push_back(read_input_image(args.input, [&](const std::string& t) { notice(args, t); }));
  views.push_back(stills.back().view());
  VideoInput in;
  in.source = std::make_unique<pipeline::MemoryFrameSource>(views);
  in.frame_count = 1;
  in.description = fmt::format("{}x{} still image", views[0].width, views[0].height);
  return in;
}

/// One line per stage: busy seconds summed over its threads, and that over the wall time,
/// i.e. how many cores the stage kept busy on average; then the split of producers and entropy
/// workers, the stage that bounds the frame rate and the bytes uploaded per frame.
void print_stage_stats(const pipeline::Stats& s, const pipeline::PipelineOptions& o) {
  const double wall = s.wall_s > 0 ? s.wall_s : 1;
  const std::pair<const char*, double> stages[] = {
      {"setup (allocation)", s.setup_s},        {"read/decode (producers)", s.read_s},
      {"upload issue (aok)", s.upload_issue_s}, {"gpu offload (sok/aok dispatch)", s.gpu_s},
      {"transform (cpu)", s.transform_cpu_s},   {"wait for coefficients", s.coeff_wait_s},
      {"entropy coding", s.entropy_s},          {"write", s.write_s}};
  std::fprintf(stderr, "mjpeg: stages over %.3f s wall (busy s, cores):\n", s.wall_s);
  for (const auto& [name, busy] : stages)
    if (busy > 0) std::fprintf(stderr, "  %-32s %8.3f  %5.2f\n", name, busy, busy / wall);
  const pipeline::RunAnalysis a = pipeline::analyse(s, o);
  std::fprintf(stderr, "%s\n",
               fmt::format("mjpeg: {} producers + {} entropy threads{}; bound by {} ({:.1f} fps "
                           "alone){}",
                           s.producers, s.entropy_threads,
                           o.balance_threads > 0
                               ? fmt::format(" (self-balancing, {} change{})", s.rebalances,
                                             s.rebalances == 1 ? "" : "s")
                               : "",
                           a.binding.empty() ? "-" : a.binding, a.bound_fps,
                           s.upload_bytes > 0 && s.frames > 0
                               ? fmt::format("; {} bytes uploaded per frame",
                                             s.upload_bytes / static_cast<std::uint64_t>(s.frames))
                               : "")
                   .c_str());
  if (s.buffers.size() > 1) {  // how the frames were spread over the devices
    std::string line = "mjpeg: frames per stream buffer:";
    for (std::size_t b = 0; b < s.buffers.size(); ++b)
      line += fmt::format("{} GPU {}: {}", b ? "," : "", s.buffers[b].device, s.buffers[b].frames);
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

}  // namespace

bool is_stream_request(const EncodeArgs& args) {
  const std::string ext = lower_extension(args.output);
  const bool single_jpeg =
      (ext == ".jpg" || ext == ".jpeg") && args.output.find('%') == std::string::npos;
  if (!single_jpeg) return true;
  // One picture out: a stream input is refused by the stream path with a clear message;
  // anything else (an image, or a file of unknown type) is read as an image.
  const InputKind kind = input_kind(args.input);
  return kind == InputKind::y4m || kind == InputKind::image_sequence || is_video_name(args.input);
}

int run_encode_stream(const EncodeArgs& args) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  validate(args.options);
  if (args.frames == 0) throw UsageError("--frames 0 asks for nothing to encode");
  if (args.start > 0 && input_kind(args.input) == InputKind::image)
    throw UsageError("--start applies to a stream input (a still image has one frame)");
  const std::string ext = lower_extension(args.output);
  if ((ext == ".jpg" || ext == ".jpeg") && args.output.find('%') == std::string::npos)
    throw UsageError(fmt::format("'{}' holds one picture; for the frames of a stream use a "
                                 "pattern such as out/%05d.jpg, or .avi / .mjpeg",
                                 args.output));
  const io::OutputKind out_kind = io::output_kind(args.output);  // UsageError if unknown
  if (args.input != "-" && same_file(args.input, args.output))
    throw UsageError(fmt::format("output '{}' is the input file", args.output));
  if (out_kind == io::OutputKind::image_sequence)  // the first file; each later one at commit
    io::check_output_allowed(io::ImageSequenceWriter(args.output).file_name(1), args.overwrite);
  else if (args.output != "-")
    io::check_output_allowed(args.output, args.overwrite);

  // From here to the end (device probing, opening the input, encoding, finalising the
  // output), Ctrl-C / SIGTERM stop the encode cleanly: the default action would kill the
  // process mid-way, and a background job of a script even starts with SIGINT ignored.
  InterruptGuard guard;
  std::vector<int> devices;
  const pipeline::Mode mode = choose_mode(args, devices);
  pipeline::PipelineOptions popt = pipeline_options(args, mode, devices);
  // --psnr: each written frame is decoded and compared with its source pixels in the workers;
  // --dump-input: those pixels are written as PPM/PGM.
  std::unique_ptr<WrittenQuality> written_quality;
  if (args.psnr) written_quality = std::make_unique<WrittenQuality>();
  std::unique_ptr<InputDump> dump;
  if (!args.dump_input.empty()) dump = std::make_unique<InputDump>(args.dump_input, args.overwrite);
  if (written_quality || dump) {
    popt.on_frame = [q = written_quality.get(), d = dump.get()](
                        std::int64_t index, const ImageView& pixels,
                        const std::vector<std::uint8_t>& jpeg) {
      if (d) d->add(index, pixels);
      if (q) q->add(index, pixels, jpeg);
    };
  }

  const InputKind kind = input_kind(args.input);
  std::vector<io::Image> stills;
  std::vector<ImageView> views;
  VideoInput in = open_input(args, kind, stills, views);
  for (const std::string& n : in.notices) notice(args, n);
  const pipeline::SourceFormat fmt_in = in.source->format();
  if (!args.quiet)
    std::fprintf(stderr, "mjpeg: input %s: %s\n", args.input.c_str(), in.description.c_str());

  std::unique_ptr<io::FrameSink> sink =
      io::make_frame_sink(args.output, fmt_in.width, fmt_in.height, in.fps_num, in.fps_den,
                          /*first_number=*/1, /*replace_existing=*/args.overwrite);
  ProgressLine progress(!args.quiet && isatty(STDERR_FILENO), in.frame_count);
  pipeline::Stats stats;
  stats = pipeline::encode_stream(
      *in.source, args.options, *sink, popt,
      [&](const pipeline::Progress& p) { progress.update(p); }, &g_stop);
  progress.finish();
  const bool interrupted = g_stop.load();
  if (stats.frames == 0 && interrupted) {  // the sink is abandoned: nothing is published
    std::fprintf(stderr, "mjpeg: error: interrupted before the first frame; nothing written\n");
    return 130;
  }
  if (stats.frames == 0 && args.start > 0)
    throw Error(fmt::format("'{}' has no frames after the first {} (--start)", args.input,
                            args.start));
  if (stats.frames == 0)
    throw Error(fmt::format("'{}' has no frames to encode", args.input));
  sink->close();

  if (!args.quiet) {
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    const double pixels = static_cast<double>(fmt_in.width) * fmt_in.height * stats.frames;
    std::fprintf(stderr, "%s\n",
                 fmt::format("mjpeg: wrote {}: {} frames{}, {:.1f} fps ({} mode{}), {:.1f} MB, "
                             "{:.2f} bits/pixel, {:.2f} s",
                             args.output, stats.frames, interrupted ? " (interrupted)" : "",
                             stats.wall_s > 0 ? stats.frames / stats.wall_s : 0.0,
                             pipeline::to_string(mode),
                             popt.devices.size() > 1
                                 ? ", devices " + pipeline::device_list_text(popt.devices)
                                 : "",
                             sink->bytes_written() / 1e6,
                             8.0 * static_cast<double>(stats.jpeg_bytes) / pixels, wall)
                     .c_str());
  }
  if (args.stats) print_stage_stats(stats, popt);
  if (written_quality) written_quality->print(stderr, args.output);
  return interrupted ? 130 : 0;
}

}  // namespace mjpeg::app
