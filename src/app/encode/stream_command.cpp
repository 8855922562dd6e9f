#include "stream_command.hpp"

#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/common/cli_options.hpp"
#include "app/encode/libav_sink.hpp"
#include "app/input/image_input.hpp"
#include "app/input/input_dump.hpp"
#include "app/common/interrupt.hpp"
#include "app/common/part_record.hpp"
#include "mjpeg/devices.hpp"
#include "mjpeg/error.hpp"
#include "mjpeg/files.hpp"
#include "mjpeg/nvdec.hpp"
#include "mjpeg/video.hpp"
#include "app/common/paths.hpp"
#include "app/quality/quality_hook.hpp"
#include "app/input/video_input.hpp"
#include "app/common/wording.hpp"
#if MJPEG_HAVE_LIBAV
#include "app/input/libav_extras.hpp"
#include "app/input/nvdec_input.hpp"
#endif

namespace mjpeg::app {
namespace {

/// `text` with its line breaks as spaces (a CUDA or driver message in one notice line).
std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n') c = ' ';
  return text;
}

void notice(const EncodeArgs& args, const std::string& text) {
  if (!args.quiet) std::fprintf(stderr, "mjpeg: note: %s\n", text.c_str());
}

/// The mode to run: as asked, or aok when the GPUs are usable and cpu otherwise; `devices` gets
/// the stream buffers' devices (--devices, or {--device}). `later`: a notice to print once the
/// input is open (so that an input error stays the only line), saying why the CPU encodes when
/// that may surprise: a device was named, or the machine has an NVIDIA GPU (its driver is
/// loaded) that cannot be used. On a machine without one the CPU is simply the way it runs: no
/// notice on every run (the summary says "cpu mode"; `mjpeg info` says why).
Offload choose_mode(const EncodeArgs& args, std::vector<int>& devices, std::string& later) {
  // --mode cpu: no CUDA call at all (asking for the devices makes a context on each: 0.2 s on
  // the H200 host, longer than a short clip takes to encode).
  if (args.mode == "cpu" && args.devices.empty()) return Offload::cpu;
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
    // --mode cpu|sok|sok-pinned|aok; --pinned makes sok sok-pinned (aok's slots are
    // page-locked anyway; the cpu mode has none to lock).
    Offload mode = parse_offload(args.mode);
    if (mode == Offload::sok && args.pinned) mode = Offload::sok_pinned;
    if (uses_gpu(mode)) {
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
      if (count > 0 || nvidia_driver_loaded())
        later = fmt::format("{}; encoding on the CPU", one_line(reason));
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
  if (uses_gpu(mode)) o.devices = devices;
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
  if (!uses_gpu(o.offload)) return o.offload;
  const std::string need = gpu_memory_problem(o, slot_count(o, false, frames));
  if (need.empty()) return o.offload;
  if (!args.mode.empty())
    throw Error(fmt::format("--mode {}: {}; use fewer --slots or --mode cpu", args.mode, need));
  notice(args, need + "; encoding on the CPU");
  return Offload::cpu;
}

/// The width of the terminal on stderr (TIOCGWINSZ, asked each time: it may be resized), else
/// $COLUMNS, else 80.
int terminal_columns() {
  winsize ws{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char* c = std::getenv("COLUMNS")) {
    const int n = std::atoi(c);
    if (n > 0) return n;
  }
  return 80;
}

/// Progress: frames, fps, ETA when the length is known. On a terminal one line updated in
/// place ("\r"), never wider than the terminal less one column (a line that reaches the last
/// column wraps, and every later update would leave the wrapped part behind): the fields that
/// do not fit are left out, the last first. Elsewhere (--progress) one line each, so a script
/// can follow it.
class ProgressLine {
 public:
  ProgressLine(bool enabled, bool terminal, std::int64_t total)
      : enabled_(enabled), terminal_(terminal), total_(total) {}
  void update(const Progress& p) {
    if (!enabled_ || p.elapsed_s - last_ < 0.25) return;
    last_ = p.elapsed_s;
    const double fps = p.elapsed_s > 0 ? p.frames / p.elapsed_s : 0;
    std::vector<std::string> fields = {
        fmt::format("mjpeg: {}{}", terminal_ ? "" : "progress: ",
                    total_ > 0 ? fmt::format("{} of {} frames", p.frames, total_)
                               : count_of(p.frames, "frame", "frames")),
        fmt::format(", {:.1f} fps", fps)};
    if (total_ > 0 && fps > 0)
      fields.push_back(fmt::format(", ETA {:.0f} s", std::max(0.0, (total_ - p.frames) / fps)));
    if (!terminal_) {
      std::string line;
      for (const std::string& f : fields) line += f;
      std::fprintf(stderr, "%s\n", line.c_str());
      return;
    }
    const std::size_t room = static_cast<std::size_t>(std::max(1, terminal_columns() - 1));
    std::string line = fields[0].substr(0, room);
    for (std::size_t i = 1; i < fields.size() && line.size() + fields[i].size() <= room; ++i)
      line += fields[i];
    // Spaces over what is left of the previous, longer line (within the terminal's width).
    const std::size_t cover = std::min(room, shown_);
    const std::size_t pad = cover > line.size() ? cover - line.size() : 0;
    std::fprintf(stderr, "\r%s%*s", line.c_str(), static_cast<int>(pad), "");
    shown_ = line.size();
  }
  void finish() {
    const std::size_t cover =
        std::min(shown_, static_cast<std::size_t>(std::max(1, terminal_columns() - 1)));
    if (shown_ > 0) std::fprintf(stderr, "\r%*s\r", static_cast<int>(cover), "");
  }

 private:
  bool enabled_, terminal_;
  std::int64_t total_;
  double last_ = -1;
  std::size_t shown_ = 0;  ///< the length of the line on the terminal (0: none)
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

/// A grey source's gray8 frames as rgb24 (R = G = B): what -s 444|422|420 asks of a grey
/// picture or image sequence (the encoder makes grayscale JPEGs of gray8 frames).
class GrayAsRgbSource final : public mjpeg::FrameSource {
 public:
  GrayAsRgbSource(std::unique_ptr<mjpeg::FrameSource> inner, int width, int height)
      : inner_(std::move(inner)), pixels_(static_cast<std::size_t>(width) * height) {}
  bool read(std::int64_t index, std::uint8_t* dst) override {
    // The grey frame is read into the last third of the slot and spread forward in place:
    // pixel x is read (at 2N + x) before bytes 3x..3x+2 are written, which never reach
    // beyond 2N + x.
    std::uint8_t* grey = dst + 2 * pixels_;
    if (!inner_->read(index, grey)) return false;
    for (std::size_t x = 0; x < pixels_; ++x) {
      const std::uint8_t v = grey[x];
      dst[3 * x] = dst[3 * x + 1] = dst[3 * x + 2] = v;
    }
    return true;
  }
  bool concurrent_reads() const override { return inner_->concurrent_reads(); }
  int max_concurrent_reads() const override { return inner_->max_concurrent_reads(); }
  std::int64_t frame_count() const override { return inner_->frame_count(); }

 private:
  std::unique_ptr<mjpeg::FrameSource> inner_;
  const std::size_t pixels_;
};

/// Below this many pixels per core (frames x width x height) the cpu mode finishes before a
/// GPU mode has paid for its start (the device check, a context per device, the slots'
/// page-locked memory: 0.35-0.5 s on the H200 host). Compressed video: about 300 frames of
/// 1920x1080 on that host's 16 cores (the CPU decodes in the cpu mode on the cores that code;
/// NVDEC decodes for the GPU modes). Frames that need no decoding (Y4M, raw, pictures), which
/// above this start on the CPU and hand over to aok (the cpu start): on the H100 hosts the cpu
/// start overtakes the cpu mode near 1400 frames of 1080p and 460 of 4K (180 and 240 Mpixel
/// per core; its CPU part codes at 1300-1860 fps at 1080p while the GPU's set-up takes
/// 0.34-0.55 s, then aok at about 1.5x (1080p) and 1.25x (4K) the cpu mode's rate; measured
/// 300 frames of 4K: 928-955 ms against the cpu mode's 753-814; docs/BENCHMARKS.md, Short
/// clips and start-up). The larger of the two, so that the default is not slower than the cpu
/// mode below it.
constexpr double kLittleWorkPixelsPerCore = 40e6;
constexpr double kLittleWorkPixelsPerCoreUncompressed = 240e6;

/// No --mode and no option that asks for the GPU (devices, slots, the kernels, NVDEC): the
/// encode decides where it runs.
bool mode_is_automatic(const EncodeArgs& args) {
  return args.mode.empty() && !args.device_given && args.devices.empty() && args.slots <= 0 &&
         !args.pinned && args.variant == "pipeline" && args.stages == 2 &&
         args.gpu_output == "auto" && args.input_options.decoder != "gpu";
}

/// Whether an encode without --mode may turn out too little work for the GPU: the mode is
/// automatic, and the input can be opened again (a regular file, an image sequence, a picture)
/// should a GPU mode need it opened its own way.
bool may_be_little_work(const EncodeArgs& args, const Input& input) {
  if (!mode_is_automatic(args)) return false;
  if (input.kind == InputKind::image || input.kind == InputKind::image_sequence) return true;
  if (args.input == "-") return false;
  struct stat st {};
  return ::stat(args.input.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// Whether the automatic mode starts on the CPU and hands over to the GPU (aok) once its
/// context and slots are made (VideoOptions::cpu_start): frames that need no decoding (Y4M,
/// raw frames, image sequences; compressed video is opened for NVDEC before the encode, which
/// needs the GPU first), a build with CUDA and a machine with an NVIDIA driver. Elsewhere the
/// automatic mode asks for the devices first (choose_mode).
bool may_start_on_cpu(const EncodeArgs& args, InputKind kind) {
  return mode_is_automatic(args) && !args.decode_only && kind != InputKind::video &&
         kind != InputKind::image && built_with_gpu() && nvidia_driver_loaded();
}

/// The pixels per core below which input of kind `kind` is little work.
double little_work_per_core(InputKind kind) {
  // MJPEG_LITTLE_WORK=M (Mpixel per core, frames that need no decoding): where a machine's
  // break-even lies is measured with it (0: a cpu start for every length).
  if (const char* env = std::getenv("MJPEG_LITTLE_WORK"); env && *env && kind != InputKind::video)
    return std::max(0.0, std::atof(env)) * 1e6;
  return kind == InputKind::video ? kLittleWorkPixelsPerCore : kLittleWorkPixelsPerCoreUncompressed;
}

int core_count() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

/// Why `in` (of kind `kind`) is too little work for the GPU (its frames known and their pixels
/// below the threshold per core above), or "" when it is not.
std::string little_work_reason(const VideoInput& in, InputKind kind) {
  if (in.frame_count <= 0) return "";
  const int cores = core_count();
  const double per_core = little_work_per_core(kind);
  const double pixels =
      static_cast<double>(in.frame_count) * in.format.width * in.format.height;
  if (pixels >= per_core * cores) return "";
  return fmt::format("the cpu mode, chosen for little work ({} of {}x{}, {:.0f} Mpixel, below "
                     "{} cores x {:.0f} Mpixel; --mode aok uses the GPU)",
                     count_of(in.frame_count, "frame", "frames"), in.format.width,
                     in.format.height, pixels / 1e6, cores, per_core / 1e6);
}

/// A video file whose container announces frames x pixels at or above the little-work
/// threshold: it is not little work, so it need not be opened the cpu mode's way to be counted
/// before it is opened for the GPU (each opening runs FFmpeg's probe, which decodes several
/// frames of H.264 on one core: 0.3-0.4 s at 4K on the GPU host). The count is the one the full
/// opening takes (the container's); a part (--part) plans its range there.
bool announced_as_much_work(const EncodeArgs& args, InputKind kind) {
  if (kind != InputKind::video || !args.part.empty()) return false;
  InputOptions options = args.input_options;
  options.start = args.start;
  options.max_frames = args.frames;
  const std::optional<double> pixels = video_header_pixels(args.input, options);
  return pixels && *pixels >= little_work_per_core(kind) * core_count();
}

VideoInput open_stream(const EncodeArgs& args, Offload mode, const std::vector<int>& devices,
                       Input input) {
  if (args.input_options.stream > 0 && input.kind != InputKind::video)
    throw Error(fmt::format("--stream {}: '{}' has one video stream (0)",
                            args.input_options.stream, args.input));
  if (input.kind != InputKind::image) {
    InputOptions options = args.input_options;
    // A frame range (--start): the frames before it are read and dropped.
    options.start = args.start;
    options.max_frames = args.frames;
    if (!args.part.empty()) options.part = parse_part(args.part);
    options.rgb_swscale = args.rgb_decode == "swscale";
    // The cpu mode transforms a mapped Y4M file's frames where they lie; the GPU modes read
    // them into their pinned slots (faster than uploading from the page-locked mapping, whose
    // locking stalls the other CUDA calls: docs/BENCHMARKS.md, End to end).
    options.map_y4m = !uses_gpu(mode);
    // Compressed video: the encode's (first) GPU decodes it where it can (--decoder auto).
    options.gpu_device = !uses_gpu(mode) ? -1 : (devices.empty() ? args.device : devices[0]);
    return open_video_input(std::move(input), options);
  }
  Image still = read_input_image(*input.file, [&](const std::string& t) { notice(args, t); },
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

/// How many frames the whole input has, for the error of a --start past its end: the input
/// opened again from its first frame (a regular file or an image sequence; a pipe cannot be
/// read twice) and its count as it says it (a Y4M file's size, an image sequence's files, a
/// video's container); -1 when unknown.
std::int64_t whole_input_frames(const EncodeArgs& args, InputKind kind) {
  if (args.input == "-" || args.input_options.raw.given()) return -1;
  struct stat st {};
  if (kind != InputKind::image_sequence &&
      (::stat(args.input.c_str(), &st) != 0 || !S_ISREG(st.st_mode)))
    return -1;
  try {
    InputOptions options = args.input_options;
    options.start = 0;
    options.max_frames = -1;
    options.map_y4m = false;
    return open_video_input(args.input, options).frame_count;
  } catch (const std::exception&) {
    return -1;
  }
}

/// The command's set-up before the encode starts (seconds): the device check (CUDA, each
/// device's context), opening and probing the input, and from the command's start to the
/// encode's.
struct SetUpTimes {
  double device_check_s = 0, input_open_s = 0, before_encode_s = 0;
  std::string little_work;  ///< why the automatic mode chose the cpu mode (little_work_reason)
};

/// The mode of the summary line: "aok mode" (or any mode asked for), "cpu mode", or after a
/// cpu start "aok mode, the first N frames on the CPU".
std::string mode_text(const Stats& s) {
  if (s.handover_s > 0 && s.cpu_start_frames > 0)
    return fmt::format("{} mode, the first {} on the CPU", to_string(s.offload),
                       count_of(s.cpu_start_frames, "frame", "frames"));
  return fmt::format("{} mode", to_string(s.offload));
}

/// --stats' line after a cpu start (empty without one): where the frames went and why.
std::string cpu_start_text(const Stats& s) {
  if (s.cpu_start_frames == 0 && s.gpu_ready_s == 0 && s.gpu_problem.empty()) return "";
  if (s.handover_s > 0)
    return fmt::format("aok after a cpu start: the CPU encoded {} while the GPU started (ready "
                       "at {:.3f} s), the GPU the rest from {:.3f} s",
                       count_of(s.cpu_start_frames, "frame", "frames"), s.gpu_ready_s,
                       s.handover_s);
  std::string why = "stopped before the GPU was ready";
  if (!s.gpu_problem.empty())
    why = "the GPU could not be used";
  else if (s.gpu_ready_s > 0)
    why = fmt::format("the GPU was ready at {:.3f} s", s.gpu_ready_s);
  return "the cpu mode after a cpu start: the CPU encoded every frame (" + why + ")";
}

double seconds_between(std::chrono::steady_clock::time_point a,
                       std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

/// One line per stage: busy seconds summed over its threads, that over the wall time (how many
/// cores the stage kept busy on average) and per frame (e.g. the dispatcher's launches, against
/// the time a frame has at the frame rate); then the split of producers and entropy workers,
/// the stage that bounds the frame rate and the bytes uploaded per frame.
void print_stage_stats(const Stats& s, const std::vector<int>& devices, const SetUpTimes& t) {
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
  if (!t.little_work.empty()) std::fprintf(stderr, "mjpeg: mode: %s\n", t.little_work.c_str());
  const std::string cpu_start = cpu_start_text(s);
  if (!cpu_start.empty()) std::fprintf(stderr, "mjpeg: mode: %s\n", cpu_start.c_str());
  // Where the time before the first frame went: the command's own set-up, then the pipeline's.
  std::fprintf(stderr, "%s\n",
               fmt::format("mjpeg: set-up: devices checked {:.3f} s, input opened {:.3f} s, "
                           "encode started at {:.3f} s; pipeline set-up {:.3f} s; first frame "
                           "written at {:.3f} s",
                           t.device_check_s, t.input_open_s, t.before_encode_s, s.setup_s,
                           t.before_encode_s + s.first_frame_s)
                   .c_str());
  std::fprintf(stderr, "mjpeg: stages over %.3f s wall (busy s, cores, us per frame):\n", s.wall_s);
  const double frames = s.frames > 0 ? static_cast<double>(s.frames) : 1;
  for (const auto& [name, busy] : stages)
    if (busy > 0)
      std::fprintf(stderr, "  %-32s %8.3f  %5.2f  %9.1f\n", name, busy, busy / wall,
                   1e6 * busy / frames);
  // The frames the GPU did (after a cpu start, not the CPU's first ones).
  const std::int64_t gpu_frames = s.handover_s > 0 ? s.frames - s.cpu_start_frames : s.frames;
  std::fprintf(stderr, "%s\n",
               fmt::format("mjpeg: {} + {}{}; bound by {} ({:.1f} fps alone){}",
                           count_of(s.producers, "producer", "producers"),
                           count_of(s.entropy_threads, "entropy thread", "entropy threads"),
                           s.self_balancing
                               ? fmt::format(" (self-balancing, {} change{})", s.rebalances,
                                             s.rebalances == 1 ? "" : "s")
                               : "",
                           s.bound_by.empty() ? "-" : s.bound_by, s.bound_fps,
                           s.upload_bytes > 0 && gpu_frames > 0
                               ? fmt::format("; {} bytes uploaded per frame",
                                             s.upload_bytes / static_cast<std::uint64_t>(gpu_frames))
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

int encode_stream_stoppable(const EncodeArgs& args, Input input,
                            std::chrono::steady_clock::time_point t0);

/// --decode-only: every frame read as the encoder would read it (into host memory; frames
/// NVDEC decodes stay on the GPU, converted into its pool and dropped), nothing encoded.
int decode_only(const EncodeArgs& args, VideoInput& in) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  std::vector<std::uint8_t> frame(frame_bytes(in.format));
  auto* gpu = dynamic_cast<NvdecSource*>(in.source.get());
  std::int64_t n = 0;
  while (!interrupted() && (gpu ? gpu->skip() : in.source->read(n, frame.data()))) ++n;
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::fprintf(stderr, "%s\n",
               fmt::format("mjpeg: decoded {} in {:.3f} s: {:.1f} fps ({}), nothing encoded",
                           count_of(n, "frame", "frames"), s, s > 0 ? n / s : 0.0,
                           gpu ? fmt::format("NVDEC, {} decoders", gpu->decoders())
                               : std::string("CPU"))
                   .c_str());
  if (in.decoder_activity) std::fprintf(stderr, "mjpeg: %s\n", in.decoder_activity().c_str());
  if (n == 0) throw Error(fmt::format("'{}' has no frames to decode", args.input));
  return interrupted() ? 130 : 0;
}

/// How the input's pixels were read beyond their format, for a part's record: what differs
/// between two parts' frames if a host read them otherwise.
std::string reading_text(const EncodeArgs& args) {
  const InputOptions& in = args.input_options;
  return fmt::format("stream {}, autorotate {}, rgb-decode {}", in.stream < 0 ? "best" : std::to_string(in.stream),
                     in.autorotate ? "yes" : "no", args.rgb_decode);
}

/// Where the frames go: the library's FileSink, or FFmpeg's muxers for .mkv / .mov.
struct EncodeOutput {
  std::unique_ptr<FileSink> file;
  std::unique_ptr<LibavSink> muxed;
  mjpeg::FrameSink& sink() { return file ? static_cast<mjpeg::FrameSink&>(*file) : *muxed; }
  void close() { file ? file->close() : muxed->close(); }
  std::uint64_t bytes() const { return file ? file->bytes_written() : muxed->bytes_written(); }
};

/// What an output carries beside the frames, from the input: metadata and audio.
struct Carried {
  std::vector<std::pair<std::string, std::string>> metadata;
  std::vector<std::string> tags_kept;  ///< the metadata keys the output keeps
#if MJPEG_HAVE_LIBAV
  std::unique_ptr<SourceAudio> audio;
#endif
  mjpeg::AudioSource* audio_source() {
#if MJPEG_HAVE_LIBAV
    return audio.get();
#else
    return nullptr;
#endif
  }
};

bool is_regular_file(const std::string& path) {
  struct stat st;
  return path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// The input's metadata and audio that `args.output` can carry, with a notice for what it
/// cannot (`later`: notices to print once the input is open).
Carried carried_extras(const EncodeArgs& args, const VideoInput& in,
                       std::vector<std::string>& later) {
  Carried c;
  if (in.video_stream < 0) return c;  // not a video read by FFmpeg's libraries
  const bool muxed = is_muxer_output(args.output);
  // Whether the output holds audio at all.
  const std::string video_only = muxed ? std::string() : why_no_audio(args.output);
  const bool holds_audio = video_only.empty();
  if (in.has_audio && !args.no_audio && !holds_audio) {
    later.push_back(fmt::format("the input's audio is not carried: {} (.avi, .mkv or .mov carry "
                                "it; --no-audio drops it without this note)",
                                video_only));
  }
  if (!is_regular_file(args.input)) {
    if (in.has_audio && !args.no_audio && holds_audio)
      later.push_back("the audio of a pipe is not carried (read from a file, it is)");
    return c;
  }
#if MJPEG_HAVE_LIBAV
  const bool want_audio = in.has_audio && !args.no_audio && holds_audio;
  // A part (--part) carries the audio of its range, as --start and --frames would select it;
  // the last part of a split without --frames keeps it to the end, as one pass does.
  const std::int64_t first = in.plan ? in.plan->range.first : args.start;
  std::int64_t frames = args.frames;
  if (in.plan && (args.frames > 0 || in.plan->range.end() < in.plan->whole.end()))
    frames = in.plan->range.count;
  const double start = in.start_seconds + static_cast<double>(first) * in.fps_den / in.fps_num;
  SourceExtras extras = read_source_extras(args.input, in.video_stream, start, want_audio);
  for (std::string& n : extras.notices) later.push_back(std::move(n));
  c.metadata = std::move(extras.metadata);
  if (muxed) {
    for (const auto& [key, text] : c.metadata) c.tags_kept.push_back(key);
  } else {
    const std::vector<std::string> keys = FileSink::metadata_keys(args.output);
    for (const auto& [key, text] : c.metadata)
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) c.tags_kept.push_back(key);
  }
  if (extras.audio) {
    const std::string problem = muxed ? muxer_audio_problem(args.output, *extras.audio)
                                      : FileSink::audio_problem(args.output, extras.audio->format());
    if (!problem.empty()) {
      later.push_back(fmt::format("the input's {} audio is not carried: {}{} (--no-audio drops "
                                  "it without this note)",
                                  extras.audio->format().codec, problem,
                                  muxed ? "" : "; .mkv carries it"));
    } else {
      if (frames > 0)
        extras.audio->end_at(static_cast<double>(frames) * in.fps_den / in.fps_num);
      c.audio = std::move(extras.audio);
    }
  }
#endif
  return c;
}

/// What one pass over the whole input would carry beside the frames, for a part's record
/// (PartRecord's "aspect", "tags", "audio" and "audio timing"): what mjpeg join needs to write
/// it too.
std::vector<std::pair<std::string, std::string>> carried_record(const EncodeArgs& args,
                                                                const VideoInput& in,
                                                                Carried& c) {
  std::vector<std::pair<std::string, std::string>> out = {
      {"aspect", fmt::format("{}:{}", in.aspect_num, in.aspect_den)},
      {"tags", tags_text(c.metadata)},
      {"audio", "none"}};
#if MJPEG_HAVE_LIBAV
  if (c.audio) {
    out.back().second = c.audio->describe();
    // One pass starts the audio at the frame --start names and ends it with --frames.
    out.emplace_back("audio timing",
                     fmt::format("video stream {}, frame 0 at {:.17g} s, {}", in.video_stream,
                                 in.start_seconds,
                                 args.frames > 0 ? fmt::format("for {} frames", args.frames)
                                                 : std::string("to its end")));
    out.emplace_back("source path", source_path(args.input));
  }
#endif
  // A part whose output holds no audio at all (.mjpeg, numbered JPEGs) of a source with audio:
  // one pass into an AVI would carry it, so a join into an AVI cannot equal that pass.
  if (out.back().first == "audio" && in.has_audio && !args.no_audio &&
      !why_no_audio(args.output).empty())
    out.back().second = kAudioNotHeld;
  return out;
}

/// "; carried: aac 48000 Hz stereo audio (5.06 s), tags title, artist, pixel aspect 4:3", or
/// "" when nothing but the frames was written.
std::string carried_summary(Carried& c, int aspect_num, int aspect_den) {
  std::vector<std::string> parts;
#if MJPEG_HAVE_LIBAV
  if (c.audio)
    parts.push_back(fmt::format("{} audio ({:.2f} s)", c.audio->describe(), c.audio->seconds()));
#endif
  if (!c.tags_kept.empty()) {
    std::string tags = c.tags_kept.size() == 1 ? "tag" : "tags";
    for (std::size_t i = 0; i < c.tags_kept.size(); ++i) tags += (i ? ", " : " ") + c.tags_kept[i];
    parts.push_back(tags);
  }
  if (aspect_num != aspect_den)
    parts.push_back(fmt::format("pixel aspect {}:{}", aspect_num, aspect_den));
  std::string text;
  for (std::size_t i = 0; i < parts.size(); ++i) text += (i ? ", " : "; carried: ") + parts[i];
  return text;
}

}  // namespace

void check_output_name(const std::string& output) {
  if (is_muxer_output(output)) {
    const std::string problem = muxer_output_problem(output);
    if (!problem.empty()) throw UsageError(problem);
    return;
  }
  // FileSink decides what is an output: besides the extensions, "-" and patterns, an existing
  // device or FIFO (/dev/null, a named pipe, >(ffplay -f mjpeg -)) takes the JPEGs back to back.
  try {
    FileSink::check_name(output);
  } catch (const UsageError&) {
    const std::string ext = lower_extension(output);
    if (output == "-" || output.find('%') != std::string::npos || ext == ".avi" ||
        ext == ".mjpeg" || ext == ".mjpg")
      throw;  // a pattern's own errors
    struct stat st;
    if (::stat(output.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      const std::string folder = output.back() == '/' ? output : output + "/";
      throw UsageError(fmt::format("'{}' is a folder; name a file in it (such as {}out.avi) or a "
                                   "pattern ({}%05d.jpg)",
                                   output, folder, folder));
    }
    throw UsageError(fmt::format("unsupported output type {} of '{}'; supported: {}",
                                 ext.empty() ? std::string("(no extension)") : "'" + ext + "'",
                                 output, supported_output_extensions()));
  }
}

void check_stream_options(const EncodeArgs& args) {
  VideoOptions probe;
  probe.width = probe.height = 16;
  video_options(args, Offload::cpu, {}, probe);
}

bool is_single_jpeg(const std::string& output) {
  const std::string ext = lower_extension(output);
  return (ext == ".jpg" || ext == ".jpeg") && output.find('%') == std::string::npos;
}

int run_encode_stream(const EncodeArgs& args_in, Input input,
                      std::chrono::steady_clock::time_point t0) {
  EncodeArgs args = args_in;
  if (args.start > 0 && input.kind == InputKind::image)
    throw UsageError("--start applies to a stream input (a still image has one frame)");
  if (!args.part.empty() && input.kind == InputKind::image)
    throw UsageError("--part splits a stream input (a still image has one frame)");
  // One picture out of a stream: its first frame. A GIF is a still picture to most people.
  if (is_single_jpeg(args.output) && args.frames != 1 && input.gif) {
    args.frames = 1;
    args.first_frame_of_gif = true;  // said once the input is open
  }
  // From here to the end (device probing, opening the input, encoding, finalising the
  // output), the first Ctrl-C / SIGTERM stops the encode cleanly instead of ending the process
  // (the handlers themselves are installed first thing in main).
  GracefulStop graceful;
  try {
    return encode_stream_stoppable(args, std::move(input), t0);
  } catch (const std::exception&) {
    // An interrupted wait (a pipe that never delivers, a FIFO closed by the signalling script)
    // fails as a consequence of the stop that was asked for: that is what is reported.
    if (!interrupted()) throw;
    std::fprintf(stderr, "mjpeg: error: interrupted; nothing written\n");
    return 130;
  }
}

namespace {

int encode_stream_stoppable(const EncodeArgs& args_in, Input input,
                            std::chrono::steady_clock::time_point t0) {
  using Clock = std::chrono::steady_clock;
  EncodeArgs args = args_in;  // (a grey source changes the default subsampling below)
  const bool one_picture_of_gif = args.first_frame_of_gif;
  std::string mode_notice;
  std::vector<int> devices;
  SetUpTimes times;
  const InputKind in_kind = input.kind;
  // Without --mode, an input whose length is known may be too little work for the GPU to pay
  // for its start: it is opened first, as for the cpu mode, and counted before any CUDA call.
  // Usage errors (counts, variant) before the input is opened.
  const auto check_usage = [&](Offload m) {
    VideoOptions probe;
    probe.width = probe.height = 16;
    video_options(args, m, devices, probe);
  };
  std::optional<VideoInput> opened;
  if (may_be_little_work(args, input) && !announced_as_much_work(args, in_kind)) {
    check_usage(Offload::cpu);
    const Clock::time_point t_open = Clock::now();
    opened.emplace(open_stream(args, Offload::cpu, devices, std::move(input)));
    times.input_open_s = seconds_between(t_open, Clock::now());
    times.little_work = little_work_reason(*opened, in_kind);
  }
  Offload mode = Offload::cpu;
  // Enough work for the GPU, whose start the CPU may cover: the devices are checked on the
  // cpu start's set-up thread, not here.
  const bool cpu_start = times.little_work.empty() && may_start_on_cpu(args, in_kind);
  if (cpu_start) {
    mode = Offload::aok;
    devices = {args.device};
  }
  if (times.little_work.empty()) {
#if MJPEG_HAVE_LIBAV
    // A video file that NVDEC may decode: its opening for the decoders (FFmpeg's probe of the
    // streams) runs while the devices are asked for, instead of after.
    if (!opened && in_kind == InputKind::video && args.mode != "cpu" &&
        args.input_options.decoder != "cpu" && args.part.empty() && is_regular_file(args.input) &&
        built_with_gpu() && nvidia_driver_loaded())
      args.input_options.nvdec_opening = begin_nvdec_opening(args.input);
#endif
    const Clock::time_point t_check = Clock::now();
    if (!cpu_start) mode = choose_mode(args, devices, mode_notice);
    times.device_check_s = seconds_between(t_check, Clock::now());
    check_usage(mode);
    // Opened for the cpu mode above; a GPU mode reads a Y4M file into its slots and has NVDEC
    // decode video: opened again for it. A cpu start keeps the mapped file: its CPU part codes
    // the frames where they lie (1860 against 1340 fps read into slots, 1080p on the H100
    // host), and aok uploads the rest from page-locked windows of the mapping.
    if (opened && uses_gpu(mode) && !cpu_start &&
        (in_kind == InputKind::y4m || in_kind == InputKind::video)) {
      opened.reset();
      input = open_input(args.input, args.input_options.raw.given());
    }
    if (!opened) {
      const Clock::time_point t_open = Clock::now();
      opened.emplace(open_stream(args, mode, devices, std::move(input)));
      times.input_open_s += seconds_between(t_open, Clock::now());
    }
  }
  VideoInput in = std::move(*opened);
  opened.reset();
  // One picture out of a stream needs --frames 1 (said once the input is known to be readable:
  // an input that is none is the first thing to hear about).
  if (is_single_jpeg(args.output) && args.frames != 1)
    throw UsageError(fmt::format("'{}' holds one picture: add --frames 1 for the first frame "
                                 "of the stream, or use a pattern such as out/%05d.jpg, or "
                                 ".avi / .mjpeg, for all of them",
                                 args.output));
  if (!mode_notice.empty()) notice(args, mode_notice);
  if (one_picture_of_gif)
    notice(args, fmt::format("'{}' holds one picture: the first frame of '{}' is encoded (a "
                             "pattern, .avi or .mjpeg takes them all)",
                             args.output, args.input));
  for (const std::string& n : in.notices) notice(args, n);
  Carried carried;  // (--decode-only writes nothing)
  if (!args.decode_only) {
    std::vector<std::string> carried_notices;
    carried = carried_extras(args, in, carried_notices);
    for (const std::string& n : carried_notices) notice(args, n);
  }
  const int width = in.format.width, height = in.format.height;
  // A grey source makes grayscale JPEGs, as cjpeg makes of a PGM, unless -s asks for other
  // frames (a player or decoder that takes only YCbCr); then gray8 frames go in as R = G = B.
  const bool grey_source = in.gray || in.format.format == FrameFormat::gray8 ||
                           in.format.format == FrameFormat::yuv400p;
  if (grey_source && !args.subsampling_given) args.options.subsampling = Subsampling::gray;
  if (in.format.format == FrameFormat::gray8 && args.options.subsampling != Subsampling::gray) {
    in.source = std::make_unique<GrayAsRgbSource>(std::move(in.source), width, height);
    in.format.format = FrameFormat::rgb24;
  }
  const bool gray = in.format.format == FrameFormat::gray8;
  check_jpeg_size(args.input, width, height);
  check_optimize_size(width, height, gray ? Subsampling::gray : args.options.subsampling,
                      args.options.optimize && !args.options.progressive);
  if (!args.quiet)
    std::fprintf(stderr, "mjpeg: input %s: %s\n", args.input.c_str(), in.description.c_str());

  if (args.decode_only) return decode_only(args, in);

  VideoOptions o = video_options(args, mode, devices, in.format);
  // The source's pixel aspect ratio, in each frame's JFIF header (and the container's below).
  o.jpeg.density = JfifDensity::pixel_aspect(in.aspect_num, in.aspect_den);
  // (A cpu start checks the device's memory on its set-up thread.)
  if (!cpu_start) o.offload = fit_device_memory(args, o, in.frame_count);
  if (!uses_gpu(o.offload)) o.devices.clear();
  o.cpu_start = cpu_start;
  // --psnr: each written frame is decoded and compared with its source pixels in the workers;
  // --dump-input: those pixels are written as PPM/PGM.
  std::unique_ptr<WrittenQuality> written_quality;
  if (args.psnr) written_quality = std::make_unique<WrittenQuality>();
  std::unique_ptr<InputDump> dump;
  if (!args.dump_input.empty()) {
    dump = std::make_unique<InputDump>(args.dump_input, args.overwrite);
    // A grey source's grayscale frames: PGM, though planar mono comes as R = G = B.
    if (grey_source && args.options.subsampling == Subsampling::gray) dump->grey_frames();
  }
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

  // A part of a split keeps its record inside its file (and what the one pass over the whole
  // would carry beside the frames, so that mjpeg join writes it); its numbered JPEGs get the
  // names they have in one pass over the whole.
  std::optional<PartRecord> record;
  int first_number = 1;
  if (in.plan && !args.part.empty()) {
    const PartPlan& plan = *in.plan;
    record = make_part_record(plan, args.input, in.format, in.fps_num, in.fps_den, args.options,
                              reading_text(args), carried_record(args, in, carried));
    first_number = static_cast<int>(1 + plan.range.first - plan.whole.first);
    FileSink::check_target(args.output, args.overwrite, first_number);
    notice(args, fmt::format("part {}/{}: frames {} of {}'s {} ({}; the parts share {})",
                             plan.part.index, plan.part.count, range_text(plan.range),
                             args.input, count_of(plan.total, "frame", "frames"), plan.counted,
                             range_text(plan.whole)));
  }
  EncodeOutput output;
  // What either kind of sink is told alike: the rate, -y, the pixel aspect ratio, the tags.
  const auto common = [&](auto& so) {
    so.fps_num = in.fps_num;
    so.fps_den = in.fps_den;
    so.overwrite = args.overwrite;
    so.aspect_num = in.aspect_num;
    so.aspect_den = in.aspect_den;
    so.metadata = carried.metadata;
  };
  if (is_muxer_output(args.output)) {
    LibavSink::Options so;
    common(so);
#if MJPEG_HAVE_LIBAV
    so.audio = carried.audio.get();
#endif
    output.muxed = std::make_unique<LibavSink>(args.output, width, height, so);
  } else {
    FileSinkOptions so;
    common(so);
    so.audio = carried.audio_source();
    so.first_number = first_number;
    if (record) so.note = record->text();
    output.file = std::make_unique<FileSink>(args.output, width, height, so);
  }
  times.before_encode_s = seconds_between(t0, Clock::now());
  const Stats stats = encode_all(o, *in.source, output.sink(), &interrupt_flag());
  progress.finish();
  const bool was_interrupted = interrupted();
#if MJPEG_HAVE_LIBAV
  // Stopped early: the audio ends with the last frame written.
  if (carried.audio && was_interrupted)
    carried.audio->end_at(static_cast<double>(stats.frames) * in.fps_den / in.fps_num);
#endif
  if (!was_interrupted && in.final_notices)
    for (const std::string& n : in.final_notices()) notice(args, n);
  if (stats.frames == 0 && was_interrupted) {  // the sink is abandoned: nothing is published
    std::fprintf(stderr, "mjpeg: error: interrupted before the first frame; nothing written\n");
    return 130;
  }
  if (stats.frames == 0 && args.start > 0) {
    const std::int64_t whole = whole_input_frames(args, in_kind);
    if (whole >= 0)
      throw Error(fmt::format("'{}' has {}, all before --start {} (frames count from 0: its "
                              "last is --start {})",
                              args.input, count_of(whole, "frame", "frames"), args.start,
                              std::max<std::int64_t>(0, whole - 1)));
    throw Error(fmt::format("{} ends before frame {}: --start {} skips every frame it has",
                            args.input == "-" ? "standard input" : "'" + args.input + "'",
                            args.start, args.start));
  }
  if (stats.frames == 0)
    throw Error(fmt::format("'{}' has no frames to encode", args.input));
  if (record && !was_interrupted && stats.frames != record->range.count)
    throw Error(fmt::format("'{}' ended after {} of the {} frames {} of part {}; nothing written",
                            args.input, stats.frames, record->range.count,
                            range_text(record->range), args.part));
  output.close();
#if MJPEG_HAVE_LIBAV
  if (carried.audio && !carried.audio->problem().empty()) notice(args, carried.audio->problem());
#endif
  if (!stats.gpu_problem.empty()) notice(args, one_line(stats.gpu_problem) + "; encoded on the CPU");

  const std::vector<int> buffers = o.devices.empty() ? std::vector<int>{o.device} : o.devices;
  if (!args.quiet) {
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    const double pixels = static_cast<double>(width) * height * stats.frames;
    std::string device_text;
    for (std::size_t b = 0; b < buffers.size(); ++b)
      device_text += (b ? "," : "") + std::to_string(buffers[b]);
    std::fprintf(stderr, "%s\n",
                 fmt::format("mjpeg: wrote {}: {}{}, {:.1f} fps ({}{}), {:.1f} MB, "
                             "{:.2f} bits/pixel, {:.2f} s{}",
                             args.output, count_of(stats.frames, "frame", "frames"),
                             was_interrupted ? " (interrupted)" : "",
                             stats.wall_s > 0 ? stats.frames / stats.wall_s : 0.0,
                             mode_text(stats),
                             o.devices.size() > 1 ? ", devices " + device_text : "",
                             output.bytes() / 1e6,
                             8.0 * static_cast<double>(stats.jpeg_bytes) / pixels, wall,
                             carried_summary(carried, in.aspect_num, in.aspect_den))
                     .c_str());
  }
  if (args.stats) print_stage_stats(stats, buffers, times);
  const std::int64_t decoded = in.frames_decoded ? in.frames_decoded() : -1;
  if (args.stats && decoded >= 0)
    std::fprintf(stderr, "mjpeg: %s decoded for %s encoded\n",
                 count_of(decoded, "frame", "frames").c_str(),
                 count_of(stats.frames, "frame", "frames").c_str());
  if (args.stats && in.decoder_activity)
    std::fprintf(stderr, "mjpeg: %s\n", in.decoder_activity().c_str());
  if (written_quality) written_quality->print(stderr, args.output);
  if (!args.json.empty()) {
    nlohmann::json j;
    j["input"] = args.input;
    j["output"] = args.output;
    j["frames"] = stats.frames;
    j["frames_decoded"] = decoded >= 0 ? nlohmann::json(decoded) : nlohmann::json(nullptr);
    j["interrupted"] = was_interrupted;
    j["bytes"] = output.bytes();
    j["seconds"] = std::chrono::duration<double>(Clock::now() - t0).count();
    j["mode"] = to_string(stats.offload);
    j["cpu_start_frames"] = o.cpu_start ? nlohmann::json(stats.cpu_start_frames)
                                        : nlohmann::json(nullptr);
    nlohmann::json part(nullptr);
    if (record) {
      part = nlohmann::json::object();
      for (const auto& [key, value] : record->fields) part[key] = value;
      part["first"] = record->range.first;
      part["count"] = record->range.count;
    }
    j["part"] = part;
    // (A name that is no UTF-8 gets U+FFFD where its bytes are not: JSON holds only text.)
    write_file(args.json,
               j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
               args.overwrite);
  }
  return was_interrupted ? 130 : 0;
}

}  // namespace

}  // namespace mjpeg::app
