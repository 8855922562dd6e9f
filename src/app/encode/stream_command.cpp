#include "stream_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "app/common/cli_options.hpp"
#include "app/input/image_input.hpp"
#include "app/input/input_dump.hpp"
#include "app/common/interrupt.hpp"
#include "mjpeg/devices.hpp"
#include "mjpeg/error.hpp"
#include "mjpeg/video.hpp"
#include "app/common/paths.hpp"
#include "app/quality/quality_hook.hpp"
#include "app/input/video_input.hpp"
#include "app/common/wording.hpp"

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
  const std::vector<GpuDevice> gpus = gpu_devices(&reason);
  const int count = static_cast<int>(gpus.size());
  const bool all_of_none = args.devices == "all" && count == 0;
  if (!all_of_none) devices = resolve_devices(args.devices, args.device, count);
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
    if (d >= count || !gpus[static_cast<std::size_t>(d)].usable) {
      if (d < count) reason = gpus[static_cast<std::size_t>(d)].problem;
      for (char& c : reason)
        if (c == '\n') c = ' ';
      later = fmt::format("{}; encoding on the CPU", reason);
      return Offload::cpu;
    }
  }
  return Offload::aok;
}

/// The library's options for `args`: the frames' format (`format`), the JPEG parameters, the
/// mode and its devices, the counts, the GPU tuning.
VideoOptions video_options(const EncodeArgs& args, Offload mode, const std::vector<int>& devices,
                           const VideoOptions& format) {
  VideoOptions o = format;
  o.jpeg = args.options;
  o.offload = mode;
  o.device = args.device;
  if (mode != Offload::cpu) o.devices = devices;
  o.producers = args.producers;
  o.entropy_threads = args.entropy_threads;
  o.slots = args.slots;
  o.gpu.kernel = parse_kernel_variant(args.variant);
  o.gpu.stages = args.stages;
  o.gpu.output = parse_gpu_output(args.gpu_output);
  validate(o);
  return o;
}

/// sok/aok keep every slot's pixels and coefficients in device memory: a frame of hundreds of
/// megapixels may not fit. Asked for (--mode), that is an error before any work; chosen
/// automatically, the CPU encodes instead, with a notice. Returns the mode to run.
Offload fit_device_memory(const EncodeArgs& args, const VideoOptions& o, std::int64_t frames) {
  if (o.offload == Offload::cpu) return o.offload;
  const std::string need = gpu_memory_problem(o, slot_count(o, false, frames));
  if (need.empty()) return o.offload;
  if (!args.mode.empty())
    throw Error(fmt::format("--mode {}: {}; use fewer --slots or --mode cpu", args.mode, need));
  notice(args, need + "; encoding on the CPU");
  return Offload::cpu;
}

/// Progress: frames, fps, ETA when the length is known. On a terminal one line updated in
/// place ("\r"); elsewhere (--progress) one line each, so a script can follow it.
class ProgressLine {
 public:
  ProgressLine(bool enabled, bool terminal, std::int64_t total)
      : enabled_(enabled), terminal_(terminal), total_(total) {}
  void update(const Progress& p) {
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

/// One still picture as a one-frame stream.
class StillSource final : public mjpeg::FrameSource {
 public:
  explicit StillSource(Image image) : image_(std::move(image)) {}
  bool read(std::int64_t index, std::uint8_t* dst) override {
    if (index > 0) return false;
    const std::size_t row = static_cast<std::size_t>(image_.width) * channels(image_.format);
    for (int y = 0; y < image_.height; ++y)
      std::memcpy(dst + static_cast<std::size_t>(y) * row,
                  image_.pixels.data() + static_cast<std::size_t>(y) * image_.stride(), row);
    return true;
  }
  std::int64_t frame_count() const override { return 1; }

 private:
  const Image image_;
};

VideoInput open_input(const EncodeArgs& args, Offload mode, InputKind kind) {
  if (args.input_options.stream > 0 && kind != InputKind::video)
    throw Error(fmt::format("--stream {}: '{}' has one video stream (0)",
                            args.input_options.stream, args.input));
  if (kind != InputKind::image) {
    InputOptions options = args.input_options;
    // A frame range (--start): the frames before it are read and dropped.
    options.start = args.start;
    options.max_frames = args.frames;
    options.rgb_swscale = args.rgb_decode == "swscale";
    // The cpu mode transforms a mapped Y4M file's frames where they lie; the GPU modes read
    // them into their pinned slots (measured on the H200 at 1080p: 1.4x the frame rate of
    // uploading from the page-locked mapping, whose locking stalls the other CUDA calls).
    options.map_y4m = mode == Offload::cpu;
    return open_video_input(args.input, kind, options);
  }
  Image still = read_input_image(args.input, [&](const std::string& t) { notice(args, t); },
                                     args.input_options.autorotate);
  VideoInput in;
  in.format.width = still.width;
  in.format.height = still.height;
  in.format.format = still.format == PixelFormat::gray8 ? FrameFormat::gray8 : FrameFormat::rgb24;
  in.frame_count = 1;
  in.description = fmt::format("{}x{} still image", still.width, still.height);
  in.source = std::make_unique<StillSource>(std::move(still));
  return in;
}

/// One line per stage: busy seconds summed over its threads, that over the wall time (how many
/// cores the stage kept busy on average) and per frame (e.g. the dispatcher's launches, against
/// the time a frame has at the frame rate); then the split of producers and entropy workers,
/// the stage that bounds the frame rate and the bytes uploaded per frame.
void print_stage_stats(const Stats& s, const std::vector<int>& devices) {
  const double wall = s.wall_s > 0 ? s.wall_s : 1;
  // Stats' read_s and gpu_s include their parts (the upload issue; the download issue and the
  // wait for results): each line here is one part.
  const std::pair<const char*, double> stages[] = {
      {"setup (allocation)", s.setup_s},
      {"read/decode (producers)", std::max(0.0, s.read_s - s.upload_issue_s)},
      {"upload issue (aok)", s.upload_issue_s},
      {"gpu offload (sok/aok dispatch)",
       std::max(0.0, s.gpu_s - s.download_issue_s - s.result_wait_s)},
      {"transform (cpu)", s.transform_s},
      {"wait for coefficients", s.result_wait_s},
      {"entropy coding", s.entropy_s},
      {"write", s.write_s}};
  std::fprintf(stderr, "mjpeg: stages over %.3f s wall (busy s, cores, us per frame):\n", s.wall_s);
  const double frames = s.frames > 0 ? static_cast<double>(s.frames) : 1;
  for (const auto& [name, busy] : stages)
    if (busy > 0)
      std::fprintf(stderr, "  %-32s %8.3f  %5.2f  %9.1f\n", name, busy, busy / wall,
                   1e6 * busy / frames);
  std::fprintf(stderr, "%s\n",
               fmt::format("mjpeg: {} + {}{}; bound by {} ({:.1f} fps alone){}",
                           count_of(s.producers, "producer", "producers"),
                           count_of(s.entropy_threads, "entropy thread", "entropy threads"),
                           s.self_balancing
                               ? fmt::format(" (self-balancing, {} change{})", s.rebalances,
                                             s.rebalances == 1 ? "" : "s")
                               : "",
                           s.bound_by.empty() ? "-" : s.bound_by, s.bound_fps,
                           s.upload_bytes > 0 && s.frames > 0
                               ? fmt::format("; {} bytes uploaded per frame",
                                             s.upload_bytes / static_cast<std::uint64_t>(s.frames))
                               : "")
                   .c_str());
  if (s.split_frames > 0)
    std::fprintf(stderr, "mjpeg: %s coded on several threads (the last, while workers idled)\n",
                 count_of(s.split_frames, "frame", "frames").c_str());
  if (s.frames_per_buffer.size() > 1) {  // how the frames were spread over the devices
    std::string line = "mjpeg: frames per stream buffer:";
    for (std::size_t b = 0; b < s.frames_per_buffer.size(); ++b)
      line += fmt::format("{} GPU {}: {}", b ? "," : "", devices.at(b), s.frames_per_buffer[b]);
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
    FileSink::check_name(args.output);  // UsageError if unknown
  }
  if (args.output == "-" && isatty(STDOUT_FILENO))
    throw UsageError("-o - writes an M-JPEG stream to standard output, which is a terminal: "
                     "redirect it to a file or a pipe");
  if (args.input != "-" && same_file(args.input, args.output))
    throw UsageError(fmt::format("output '{}' is the input file", args.output));
  FileSink::check_target(args.output, args.overwrite);  // (a pattern: its first file)

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
  {  // usage errors (counts, variant) before the input is opened
    VideoOptions probe;
    probe.width = probe.height = 16;
    video_options(args, mode, devices, probe);
  }

  const InputKind kind = input_kind(args.input);
  VideoInput in = open_input(args, mode, kind);
  if (!mode_notice.empty()) notice(args, mode_notice);
  if (one_picture_of_gif)
    notice(args, fmt::format("'{}' holds one picture: the first frame of '{}' is encoded (a "
                             "pattern, .avi or .mjpeg takes them all)",
                             args.output, args.input));
  for (const std::string& n : in.notices) notice(args, n);
  const int width = in.format.width, height = in.format.height;
  const bool gray = in.format.format == FrameFormat::gray8;
  check_jpeg_size(args.input, width, height);
  check_optimize_size(width, height, gray ? Subsampling::gray : args.options.subsampling,
                      args.options.optimize && !args.options.progressive);
  if (!args.quiet)
    std::fprintf(stderr, "mjpeg: input %s: %s\n", args.input.c_str(), in.description.c_str());

  VideoOptions o = video_options(args, mode, devices, in.format);
  o.offload = fit_device_memory(args, o, in.frame_count);
  if (o.offload == Offload::cpu) o.devices.clear();
  // --psnr: each written frame is decoded and compared with its source pixels in the workers;
  // --dump-input: those pixels are written as PPM/PGM.
  std::unique_ptr<WrittenQuality> written_quality;
  if (args.psnr) written_quality = std::make_unique<WrittenQuality>();
  std::unique_ptr<InputDump> dump;
  if (!args.dump_input.empty()) dump = std::make_unique<InputDump>(args.dump_input, args.overwrite);
  if (written_quality || dump) {
    o.on_frame = [q = written_quality.get(), d = dump.get()](const ImageView& pixels,
                                                             const EncodedFrame& jpeg) {
      if (d) d->add(jpeg.index, pixels);
      if (q) q->add(jpeg.index, pixels, std::vector<std::uint8_t>(jpeg.data, jpeg.data + jpeg.size));
    };
  }
  const bool terminal = isatty(STDERR_FILENO) != 0;
  ProgressLine progress(!args.quiet && (terminal || args.progress), terminal, in.frame_count);
  o.on_progress = [&](const Progress& p) { progress.update(p); };

  FileSink sink(args.output, width, height, in.fps_num, in.fps_den, args.overwrite);
  const Stats stats = encode_all(o, *in.source, sink, &interrupt_flag());
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
  sink.close();

  const std::vector<int> buffers = o.devices.empty() ? std::vector<int>{o.device} : o.devices;
  if (!args.quiet) {
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    const double pixels = static_cast<double>(width) * height * stats.frames;
    std::string device_text;
    for (std::size_t b = 0; b < buffers.size(); ++b)
      device_text += (b ? "," : "") + std::to_string(buffers[b]);
    std::fprintf(stderr, "%s\n",
                 fmt::format("mjpeg: wrote {}: {}{}, {:.1f} fps ({} mode{}), {:.1f} MB, "
                             "{:.2f} bits/pixel, {:.2f} s",
                             args.output, count_of(stats.frames, "frame", "frames"),
                             was_interrupted ? " (interrupted)" : "",
                             stats.wall_s > 0 ? stats.frames / stats.wall_s : 0.0,
                             // --mode's spelling: "sok" also with --pinned
                             o.offload == Offload::sok_pinned ? "sok" : to_string(o.offload),
                             o.devices.size() > 1 ? ", devices " + device_text : "",
                             sink.bytes_written() / 1e6,
                             8.0 * static_cast<double>(stats.jpeg_bytes) / pixels, wall)
                     .c_str());
  }
  if (args.stats) print_stage_stats(stats, buffers);
  if (written_quality) written_quality->print(stderr, args.output);
  return was_interrupted ? 130 : 0;
}

}  // namespace

}  // namespace mjpeg::app
