#include "mode_runner.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cctype>
#include <cstring>

#include <fmt/format.h>

#include "mjpeg/devices.hpp"
#include "mjpeg/error.hpp"
#include "mjpeg/vocabulary.hpp"

namespace mjpeg::app {
namespace {

/// Keeps the first run's frames and checks every later run against them, frame by frame. The
/// check runs on the entropy workers (VideoOptions::on_jpeg, attached by `attach`), in
/// parallel, not on the writer: a memcmp of every frame against a reference long out of the
/// caches costs the single writer 0.1-0.17 ms per 1080p frame, a bound near 6000 fps of the
/// harness, not of the pipeline.
class CheckingSink final : public FrameSink {
 public:
  explicit CheckingSink(std::vector<std::vector<std::uint8_t>>* reference, bool record)
      : reference_(reference), record_(record) {}
  /// Timed runs: the byte check goes to the workers through `options`.
  void attach(VideoOptions& options) {
    if (record_) return;
    options.on_jpeg = [this](const EncodedFrame& f) {
      const std::size_t i = static_cast<std::size_t>(f.index);
      if (i >= reference_->size() || (*reference_)[i].size() != f.size ||
          std::memcmp((*reference_)[i].data(), f.data, f.size) != 0)
        note_difference(f.index);
    };
  }
  void write(const EncodedFrame& f) override {
    if (record_) reference_->emplace_back(f.data, f.data + f.size);
  }
  /// The first frame that differed, -1 when none did (or the run only recorded).
  std::int64_t first_difference() const {
    const std::int64_t d = first_difference_.load();
    return d == kNone ? -1 : d;
  }

 private:
  static constexpr std::int64_t kNone = INT64_MAX;
  void note_difference(std::int64_t index) {
    std::int64_t d = first_difference_.load();
    while (index < d && !first_difference_.compare_exchange_weak(d, index)) {
    }
  }
  std::vector<std::vector<std::uint8_t>>* reference_;
  bool record_;
  std::atomic<std::int64_t> first_difference_{kNone};
};

}  // namespace

ModeSpec parse_mode_spec(const std::string& text) {
  for (const vocab::Word<Offload>& w : vocab::Vocabulary<Offload>::words)
    if (text == w.name) return {text, w.value};
  throw UsageError(
      fmt::format("unknown mode '{}' in --modes ({})", text, vocab::choices_of<Offload>()));
}

std::vector<ModeSpec> parse_mode_list(const std::string& text) {
  std::vector<ModeSpec> modes;
  std::string rest = text;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string item = rest.substr(0, comma);
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    ModeSpec m = parse_mode_spec(item);
    for (const ModeSpec& seen : modes)
      if (seen.name == m.name) throw UsageError(fmt::format("mode '{}' is listed twice", item));
    modes.push_back(m);
  }
  if (modes.empty()) throw UsageError("no mode listed");
  return modes;
}

std::vector<ModeSpec> choose_modes(const std::string& list,
                                   const std::function<void(const std::string&)>& notice,
                                   const std::string& without_gpu,
                                   const std::vector<int>& devices) {
  std::string reason;
  const std::vector<GpuDevice> gpus = gpu_devices(&reason);
  bool gpu = true;
  for (int d : devices) {
    if (d >= static_cast<int>(gpus.size())) {
      if (!gpus.empty()) reason = fmt::format("CUDA device {} does not exist ({} found)", d, gpus.size());
      gpu = false;
      break;
    }
    if (!gpus[static_cast<std::size_t>(d)].usable) {
      reason = gpus[static_cast<std::size_t>(d)].problem;
      gpu = false;
      break;
    }
  }
  if (!list.empty()) {
    std::vector<ModeSpec> modes = parse_mode_list(list);
    for (const ModeSpec& m : modes)
      if (uses_gpu(m.mode) && !gpu)
        throw Error(fmt::format("mode {} needs a CUDA device: {}", m.name, reason));
    return modes;
  }
  if (gpu) return parse_mode_list("cpu,sok,aok");
  notice(fmt::format("{}: {}", reason, without_gpu));
  return parse_mode_list("cpu");
}

void pin_for_gpu_modes(FrameStore& store, const std::vector<ModeSpec>& modes,
                       const std::function<void(const std::string&)>& notice) {
  bool gpu_modes = false;
  for (const ModeSpec& m : modes) gpu_modes = gpu_modes || uses_gpu(m.mode);
  if (!gpu_modes) return;
  try {
    store.pin();
  } catch (const Error& e) {
    notice(std::string("the frames could not be page-locked, so uploads copy them from pageable "
                       "memory: ") + e.what());
  }
}

std::vector<ModeSpec> per_device_count(const std::vector<ModeSpec>& modes,
                                       const std::vector<int>& devices) {
  if (devices.size() <= 1) return modes;
  std::vector<std::size_t> counts;
  for (std::size_t n = 1; n < devices.size(); n *= 2) counts.push_back(n);
  counts.push_back(devices.size());
  std::vector<ModeSpec> out;
  for (const ModeSpec& m : modes) {
    if (!uses_gpu(m.mode)) {
      out.push_back(m);
      continue;
    }
    for (std::size_t n : counts) {
      ModeSpec s = m;
      s.devices.assign(devices.begin(), devices.begin() + static_cast<std::ptrdiff_t>(n));
      if (n > 1) s.name += fmt::format("-{}dev", n);
      out.push_back(s);
    }
  }
  return out;
}

void print_buffer_table(std::FILE* out, const std::vector<ModeResult>& results) {
  bool any = false;
  for (const ModeResult& r : results) any = any || r.profile.buffers.size() > 1;
  if (!any) return;
  std::fprintf(out, "\n%-15s %-10s %8s %6s %12s %12s %12s\n", "stream buffers", "device",
               "frames", "share", "upload ms/f", "kernel ms/f", "download ms/f");
  for (const ModeResult& r : results) {
    if (r.profile.buffers.size() <= 1) continue;
    for (std::size_t b = 0; b < r.profile.buffers.size(); ++b) {
      const BufferProfile& s = r.profile.buffers[b];
      const double f = static_cast<double>(std::max<std::int64_t>(1, s.frames));
      auto ms = [&](double t) {
        return r.profile.gpu_timed ? fmt::format("{:.3f}", 1e3 * t / f) : std::string("-");
      };
      std::fprintf(out, "%-15s %-10s %8lld %5.0f%% %12s %12s %12s\n",
                   b == 0 ? display_name(r.spec).c_str() : "",
                   fmt::format("GPU {}", s.device).c_str(),
                   static_cast<long long>(s.frames),
                   100.0 * s.frames / std::max<double>(1, static_cast<double>(r.stats.frames)),
                   ms(s.upload_gpu_s).c_str(), ms(s.kernel_gpu_s).c_str(),
                   ms(s.download_gpu_s).c_str());
    }
  }
}

std::string display_name(const ModeSpec& spec) {
  std::string s = spec.name;
  for (char& c : s) c = c == '-' ? ' ' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

double stage_fps(const Stats& st) {
  const double t = st.wall_s - st.setup_s;
  return t > 0 ? st.frames / t : 0;
}

ModeResult run_mode(const ModeSpec& spec, VideoOptions options, const FrameStore& store,
                    int repeat, std::vector<std::vector<std::uint8_t>>& reference) {
  ModeResult r;
  r.spec = spec;
  const VideoOptions& f = store.format;
  options.width = f.width;
  options.height = f.height;
  options.format = f.format;
  options.matrix = f.matrix;
  options.range = f.range;
  options.coefficients = f.coefficients;
  options.offload = spec.mode;
  if (!spec.devices.empty()) options.devices = spec.devices;
  if (!uses_gpu(spec.mode)) options.devices.clear();
  r.options = options;

  // Warm-up: CUDA context, first-touch page faults, thread start-up; not measured.
  {
    const std::unique_ptr<MemorySource> source = store.first(16);
    std::vector<std::vector<std::uint8_t>> none;
    CheckingSink sink(&none, true);
    encode_all(options, *source, sink);
  }

  struct Run {
    Stats stats;
    Profile profile;
  };
  std::vector<Run> runs;
  for (int i = 0; i < repeat; ++i) {
    Run run;
    VideoOptions o = options;
    o.profile = &run.profile;
    const bool record = reference.empty();
    CheckingSink sink(&reference, record);
    sink.attach(o);
    run.stats = encode_all(o, store.source(), sink);
    if (sink.first_difference() >= 0 && r.first_difference < 0) {
      r.identical = false;
      r.first_difference = sink.first_difference();
    }
    r.fps_of_runs.push_back(stage_fps(run.stats));
    runs.push_back(std::move(run));
  }
  std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) {
    return stage_fps(a.stats) < stage_fps(b.stats);
  });
  Run& median = runs[runs.size() / 2];
  r.stats = median.stats;
  r.profile = std::move(median.profile);
  return r;
}

}  // namespace mjpeg::app
