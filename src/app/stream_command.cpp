#include "stream_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "cli_options.hpp"
#include "device_info.hpp"
#include "gpu_transform.hpp"
#include "image_input.hpp"
#include "input_dump.hpp"
#include "interrupt.hpp"
#include "io/atomic_file.hpp"
#include "io/frame_sink.hpp"
#include "core/geometry.hpp"
#include "mjpeg/error.hpp"
#include "paths.hpp"
#include "pipeline/analysis.hpp"
#include "pipeline/pipeline.hpp"
#include "quality_hook.hpp"
#include "video_input.hpp"
#include "wording.hpp"

namespace mjpeg::app {
namespace {

void notice(const EncodeArgs& args, const std::string& text) {
  if (!args.quiet) std::fprintf(stderr, "mjpeg: note: %s\n", text.c_str());
}

/// The mode to run: as asked, or aok when the GPUs are usable and cpu (with a notice)
/// otherwise; `devices` gets the stream buffers' devices (--devices, or {--device}). `later`:
/// a notice to print once the input is open (so that an input error stays the only line).
Offload choose_mode(const EncodeArgs& args, std::vector<int>& devices, std::string& later) {
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
    // --mode cpu|sok|aok, and --pinned makes sok sok_pinned (aok's slots are page-locked
    // anyway; the cpu mode has none to lock).
    Offload mode = parse_offload(args.mode);
    if (mode == Offload::sok && args.pinned) mode = Offload::sok_pinned;
    if (mode != Offload::cpu) {
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
    later = fmt::format("--devices all: no CUDA device ({}); encoding on the CPU", found);
    return Offload::cpu;
  }
  if ((args.device_given || !args.devices.empty()) && missing >= 0) {
    later = fmt::format("CUDA device {} does not exist ({}); encoding on the CPU", missing, found);
    return Offload::cpu;
  }
  for (int d : devices) {
    if (!gpu::usable_device(d, &reason)) {
      for (char& c : reason)
        if (c == '\n') c = ' ';
      later = fmt::format("{}; encoding on the CPU", reason);
      return Offload::cpu;
    }
  }
  return Offload::aok;
}

/// sok/aok keep every slot's pixels and coefficients in device memory: a frame of hundreds of
/// megapixels may not fit. Asked for (--mode), that is an error before any work; chosen
/// automatically, the CPU encodes instead, with a notice. Returns the mode to run.
Offload fit_device_memory(const EncodeArgs& args, Offload mode, int slots,
                                 const std::vector<int>& devices,
                                 const pipeline::SourceFormat& f) {
  if (mode == Offload::cpu) return mode;
  const FrameGeometry g = make_geometry(
      f.width, f.height, f.format == PixelFormat::gray8 ? Subsampling::gray : args.options.subsampling);
  const double per_slot = static_cast<double>(f.frame_bytes()) +
                          static_cast<double>(g.coefficient_count()) * sizeof(std::int16_t);
  std::string reason;
  const std::vector<gpu::DeviceInfo> found = gpu::list_devices(&reason);
  for (int device : devices.empty() ? std::vector<int>{args.device} : devices) {
    // Stream buffers that share a device share its memory.
    const double buffers =
        devices.empty() ? 1.0 : static_cast<double>(std::count(devices.begin(), devices.end(), device));
    double device_bytes = 0;
    for (const gpu::DeviceInfo& d : found)
      if (d.index == device) device_bytes = static_cast<double>(d.memory_bytes);
    if (device_bytes <= 0 || per_slot * slots * buffers <= 0.9 * device_bytes) continue;
    const std::string need = fmt::format(
        "a {}x{} frame needs {:.1f} GiB of device memory for {} slots (pixels and coefficients), "
        "device {} has {:.1f} GiB",
        f.width, f.height, per_slot * slots * buffers / (1 << 30), slots * buffers, device,
        device_bytes / (1 << 30));
    if (!args.mode.empty())
      throw Error(fmt::format("--mode {}: {}; use fewer --slots or --mode cpu", args.mode, need));
    notice(args, need + "; encoding on the CPU");
    return Offload::cpu;
  }
  return mode;
}

/// `frames`: how many the input has (-1 unknown): a short input (a still picture) needs no more
/// slots than frames, which matters for a picture of hundreds of megapixels.
pipeline::PipelineOptions pipeline_options(const EncodeArgs& args, Offload mode,
                                           const std::vector<int>& devices,
                                           std::int64_t frames = -1) {
  pipeline::PipelineOptions o;
  o.mode = mode;
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  pipeline::apply_default_counts(o, cores, args.producers, args.entropy_threads, args.slots);
  if (args.slots == 0 && frames > 0 && frames < o.slots) o.slots = static_cast<int>(frames);
  o.device = args.device;
  if (mode != Offload::cpu) o.devices = devices;
  o.variant = gpu::parse_variant(args.variant);
  o.stages = args.stages;
  if (args.gpu_output != "auto") o.gpu_output = gpu::parse_gpu_output(args.gpu_output);
  pipeline::validate(o);
  return o;
}

/// Progress: frames, fps, ETA when the length is known. On a terminal one line updated in
/// place ("\r"); elsewhere (--progress) one line each, so a script can follow it.
class ProgressLine {
 public:
  ProgressLine(bool enabled, bool terminal, std::int64_t total)
      : enabled_(enabled), terminal_(terminal), total_(total) {}
  void update(const pipeline::Progress& p) {
    if (!enabled_ || p.elapsed_s - last_ < 0.25) return;
    last_ = p.elapsed_s;
    const double fps = p.elapsed_s > 0 ? p.frames / p.elapsed_s : 0;
    std::string line =
        fmt::format("mjpeg: {}{}", terminal_ ? "" : "progress: ",
                    total_ > 0 ? fmt::format("{} of {} frames", p.frames, total_)
                               : count_of(p.frames, "frame", "frames"));
    line += fmt::format(", {:.1f} fps", fps);
    if (total_ > 0 && fps > 0)
      line += fmt::format(", ETA {:.0f} s", std::max(0.0, (total_ - p.frames) / fps));
    if (terminal_) {
      std::fprintf(stderr, "\r%-70s", line.c_str());
      shown_ = true;
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  }
  void finish() {
    if (shown_) std::fprintf(stderr, "\r%-70s\r", "");
  }

 private:
  bool enabled_, terminal_;
  std::int64_t total_;
  double last_ = -1;
  bool shown_ = false;
};

VideoInput open_input(const EncodeArgs& args, Offload mode, InputKind kind,
                      std::vector<io::Image>& stills, std::vector<ImageView>& views) {
  if (args.input_options.stream > 0 && kind != InputKind::video)
    throw Error(fmt::format("--stream {}: '{}' has one video stream (0)",
                            args.input_options.stream, args.input));
  if (kind != InputKind::image) {
    InputOptions options = args.input_options;
    // A frame range (--start): the frames before it are read and dropped.
    options.max_frames = args.frames < 0 ? -1 : args.start + args.frames;
    options.rgb_swscale = args.rgb_decode == "swscale";
    // The cpu mode transforms a mapped Y4M file's frames where they lie; the GPU modes read
    // them into their pinned slots (measured on the H200 at 1080p: 1.4x the frame rate of
    // uploading from the page-locked mapping, whose locking stalls the other CUDA calls).
    options.map_y4m = mode == Offload::cpu;
    VideoInput in = open_video_input(args.input, kind, options);
    if (args.start > 0) {
      in.source = std::make_unique<pipeline::SkipFrameSource>(std::move(in.source), args.start);
      if (in.frame_count >= 0) in.frame_count = std::max<std::int64_t>(0, in.frame_count - args.start);
    }
    return in;
  }
  // One still image as a one-frame stream.
  stills.push_back(read_input_image(args.input, [&](const std::string& t) { notice(args, t); },
                                    args.input_options.autorotate));
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
               fmt::format("mjpeg: {} + {}{}; bound by {} ({:.1f} fps alone){}",
                           count_of(s.producers, "producer", "producers"),
                           count_of(s.entropy_threads, "entropy thread", "entropy threads"),
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
  if (s.split_frames > 0)
    std::fprintf(stderr, "mjpeg: %s coded on several threads (the last, while workers idled)\n",
                 count_of(s.split_frames, "frame", "frames").c_str());
  if (s.buffers.size() > 1) {  // how the frames were spread over the devices
    std::string line = "mjpeg: frames per stream buffer:";
    for (std::size_t b = 0; b < s.buffers.size(); ++b)
      line += fmt::format("{} GPU {}: {}", b ? "," : "", s.buffers[b].device, s.buffers[b].frames);
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

int encode_stream_stoppable(const EncodeArgs& args, std::chrono::steady_clock::time_point t0);

}  // namespace

namespace {

bool is_single_jpeg(const std::string& output) {
  const std::string ext = lower_extension(output);
  return (ext == ".jpg" || ext == ".jpeg") && output.find('%') == std::string::npos;
}

/// A GIF (by name or signature): OpenCV reads none, FFmpeg reads them as videos.
bool is_gif(const std::string& path) {
  if (lower_extension(path) == ".gif") return true;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  char head[4] = {};
  const bool gif = std::fread(head, 1, 4, f) == 4 && std::memcmp(head, "GIF8", 4) == 0;
  std::fclose(f);
  return gif;
}

}  // namespace

bool is_stream_request(const EncodeArgs& args) {
  if (!is_single_jpeg(args.output)) return true;
  // One picture out of a stream input (with --frames 1, or a GIF's first frame) goes through
  // the stream path too, which refuses more frames with a clear message; anything else (an
  // image, or a file of unknown type) is read as an image.
  const InputKind kind = input_kind(args.input);
  return kind == InputKind::y4m || kind == InputKind::image_sequence ||
         is_video_name(args.input) || (kind != InputKind::image && is_gif(args.input));
}

int run_encode_stream(const EncodeArgs& args_in) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  EncodeArgs args = args_in;
  validate(args.options);
  if (args.frames == 0) throw UsageError("--frames 0 asks for nothing to encode");
  if (args.start > 0 && input_kind(args.input) == InputKind::image)
    throw UsageError("--start applies to a stream input (a still image has one frame)");
  if (is_single_jpeg(args.output)) {
    // One picture: the stream's first frame. A GIF is a still picture to most people.
    if (args.frames != 1 && args.input != "-" && is_gif(args.input)) {
      args.frames = 1;
      args.first_frame_of_gif = true;  // said once the input is open
    }
    if (args.frames != 1)
      throw UsageError(fmt::format("'{}' holds one picture: add --frames 1 for the first frame "
                                   "of the stream, or use a pattern such as out/%05d.jpg, or "
                                   ".avi / .mjpeg, for all of them",
                                   args.output));
  } else {
    io::output_kind(args.output);  // UsageError if unknown
  }
  if (args.output == "-" && isatty(STDOUT_FILENO))
    throw UsageError("-o - writes an M-JPEG stream to standard output, which is a terminal: "
                     "redirect it to a file or a pipe");
  if (args.input != "-" && same_file(args.input, args.output))
    throw UsageError(fmt::format("output '{}' is the input file", args.output));
  if (!is_single_jpeg(args.output) &&
      io::output_kind(args.output) == io::OutputKind::image_sequence)  // the first file
    io::check_output_allowed(io::ImageSequenceWriter(args.output).file_name(1), args.overwrite);
  else if (args.output != "-")
    io::check_output_allowed(args.output, args.overwrite);

  // From here to the end (device probing, opening the input, encoding, finalising the
  // output), the first Ctrl-C / SIGTERM stops the encode cleanly instead of ending the process
  // (the handlers themselves are installed first thing in main).
  GracefulStop graceful;
  try {
    return encode_stream_stoppable(args, t0);
  } catch (const std::exception&) {
    // An interrupted wait (a pipe that never delivers, a FIFO closed by the signalling script)
    // fails as a consequence of the stop that was asked for: that is what is reported.
    if (!interrupted()) throw;
    std::fprintf(stderr, "mjpeg: error: interrupted; nothing written\n");
    return 130;
  }
}

namespace {

int encode_stream_stoppable(const EncodeArgs& args, std::chrono::steady_clock::time_point t0) {
  using Clock = std::chrono::steady_clock;
  const bool one_picture_of_gif = args.first_frame_of_gif;
  std::string mode_notice;
  std::vector<int> devices;
  const Offload mode = choose_mode(args, devices, mode_notice);
  pipeline_options(args, mode, devices);  // usage errors (counts, variant) before the input is opened

  const InputKind kind = input_kind(args.input);
  std::vector<io::Image> stills;
  std::vector<ImageView> views;
  VideoInput in = open_input(args, mode, kind, stills, views);
  if (!mode_notice.empty()) notice(args, mode_notice);
  if (one_picture_of_gif)
    notice(args, fmt::format("'{}' holds one picture: the first frame of '{}' is encoded (a "
                             "pattern, .avi or .mjpeg takes them all)",
                             args.output, args.input));
  for (const std::string& n : in.notices) notice(args, n);
  const pipeline::SourceFormat fmt_in = in.source->format();
  check_jpeg_size(args.input, fmt_in.width, fmt_in.height);
  check_optimize_size(fmt_in.width, fmt_in.height,
                      fmt_in.format == PixelFormat::gray8 ? Subsampling::gray
                                                          : args.options.subsampling,
                      args.options.optimize && !args.options.progressive);
  if (!args.quiet)
    std::fprintf(stderr, "mjpeg: input %s: %s\n", args.input.c_str(), in.description.c_str());

  pipeline::PipelineOptions popt = pipeline_options(args, mode, devices, in.frame_count);
  const Offload fitted = fit_device_memory(args, mode, popt.slots, popt.devices, fmt_in);
  if (fitted != mode) popt = pipeline_options(args, fitted, devices, in.frame_count);
  const Offload run_mode = popt.mode;
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

  std::unique_ptr<io::FrameSink> sink =
      is_single_jpeg(args.output)
          ? std::make_unique<io::SingleJpegWriter>(args.output, args.overwrite)
          : io::make_frame_sink(args.output, fmt_in.width, fmt_in.height, in.fps_num,
                                in.fps_den, /*first_number=*/1,
                                /*replace_existing=*/args.overwrite);
  const bool terminal = isatty(STDERR_FILENO) != 0;
  ProgressLine progress(!args.quiet && (terminal || args.progress), terminal, in.frame_count);
  pipeline::Stats stats;
  stats = pipeline::encode_stream(
      *in.source, args.options, *sink, popt,
      [&](const pipeline::Progress& p) { progress.update(p); }, &interrupt_flag());
  progress.finish();
  const bool was_interrupted = interrupted();
  if (!was_interrupted && in.final_notices)
    for (const std::string& n : in.final_notices()) notice(args, n);
  if (stats.frames == 0 && was_interrupted) {  // the sink is abandoned: nothing is published
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
                 fmt::format("mjpeg: wrote {}: {}{}, {:.1f} fps ({} mode{}), {:.1f} MB, "
                             "{:.2f} bits/pixel, {:.2f} s",
                             args.output, count_of(stats.frames, "frame", "frames"),
                             was_interrupted ? " (interrupted)" : "",
                             stats.wall_s > 0 ? stats.frames / stats.wall_s : 0.0,
                             // --mode's spelling: "sok" also with --pinned
                             run_mode == Offload::sok_pinned ? "sok" : to_string(run_mode),
                             popt.devices.size() > 1
                                 ? ", devices " + pipeline::device_list_text(popt.devices)
                                 : "",
                             sink->bytes_written() / 1e6,
                             8.0 * static_cast<double>(stats.jpeg_bytes) / pixels, wall)
                     .c_str());
  }
  if (args.stats) print_stage_stats(stats, popt);
  if (written_quality) written_quality->print(stderr, args.output);
  return was_interrupted ? 130 : 0;
}

}  // namespace

}  // namespace mjpeg::app
