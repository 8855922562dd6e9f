#include "cli_options.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "mjpeg/vocabulary.hpp"
#include "mjpeg/devices.hpp"
#include "mjpeg/encoder.hpp"
#include "mjpeg/error.hpp"
#include "mjpeg/video.hpp"

namespace mjpeg::app {

CLI::Validator decimal_integer() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const std::size_t digits_from = (!text.empty() && (text[0] == '-' || text[0] == '+'));
        if (digits_from == text.size() ||
            text.find_first_not_of("0123456789", digits_from) != std::string::npos)
          return "'" + text + "' is not an integer";
        const std::size_t first = text.find_first_not_of('0', digits_from);
        const std::string sign = text[0] == '-' ? "-" : "";
        text = first == std::string::npos ? "0" : sign + text.substr(first);
        return {};
      },
      "", "decimal integer");  // no description: the option's type name says it all
}

FrameSize parse_frame_size(const std::string& text, const std::string& option) {
  FrameSize z;
  char x = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &z.width, &x, &z.height, &extra) != 3 || x != 'x' ||
      z.width < 1 || z.height < 1 || z.width > kMaxDimension || z.height > kMaxDimension)
    throw UsageError(fmt::format("{}: '{}' is not WIDTHxHEIGHT (1..{} each)", option, text,
                                 kMaxDimension));
  return z;
}

void parse_frame_rate(const std::string& text, int& num, int& den) {
  const auto bad = [&] {
    return UsageError(fmt::format("--fps: '{}' is not a frame rate (N, N/D or a decimal such "
                                  "as 29.97, below 1000)",
                                  text));
  };
  const std::size_t slash = text.find('/');
  const std::size_t dot = text.find('.');
  const auto digits = [](const std::string& t) {
    return !t.empty() && t.size() <= 9 && t.find_first_not_of("0123456789") == std::string::npos;
  };
  long long n = 0, d = 1;
  if (slash != std::string::npos) {
    const std::string a = text.substr(0, slash), b = text.substr(slash + 1);
    if (!digits(a) || !digits(b)) throw bad();
    n = std::stoll(a);
    d = std::stoll(b);
  } else if (dot != std::string::npos) {
    const std::string a = text.substr(0, dot), b = text.substr(dot + 1);
    if (!digits(a) || !digits(b) || b.size() > 3) throw bad();
    d = b.size() == 1 ? 10 : b.size() == 2 ? 100 : 1000;
    n = std::stoll(a) * d + std::stoll(b);
  } else {
    if (!digits(text)) throw bad();
    n = std::stoll(text);
  }
  if (n <= 0 || d <= 0 || n >= 1000 * d) throw bad();
  for (long long g = n, h = d; h != 0;) {  // lowest terms
    const long long t = g % h;
    g = h;
    h = t;
    if (h == 0) {
      n /= g;
      d /= g;
    }
  }
  num = static_cast<int>(n);
  den = static_cast<int>(d);
}

std::vector<QuantTableValues> read_qtables_file(const std::string& path) {
  constexpr std::size_t kMaxBytes = 1 << 20;  // a table file is a few hundred bytes
  // Regular files only: a FIFO or a device (/dev/stdin) could block the parse.
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    throw UsageError(fmt::format("--qtables '{}': {}", path, std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    throw UsageError(fmt::format("--qtables '{}': not a regular file", path));
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw UsageError(fmt::format("--qtables '{}': {}", path, std::strerror(errno)));
  std::string text;
  char buf[4096];
  std::size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0 && text.size() <= kMaxBytes)
    text.append(buf, got);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) throw UsageError(fmt::format("--qtables '{}': cannot read it", path));
  if (text.size() > kMaxBytes)
    throw UsageError(fmt::format("--qtables '{}': larger than 1 MiB, not a table file", path));
  return parse_qtables(text, fmt::format("--qtables '{}'", path));
}

void add_jpeg_options(CLI::App* cmd, EncodeOptions& options, std::string& subsampling) {
  cmd->add_option("-q,--quality", options.quality, "JPEG quality 1..100 (never clamped)")
      ->transform(decimal_integer())
      ->check(CLI::Range(1, 100).description(""))
      ->type_name("1..100")
      ->capture_default_str();
  cmd->add_option("-s,--subsampling", subsampling,
                  "Chroma subsampling: " + vocab::choices_of<Subsampling>())
      ->check(CLI::IsMember(vocab::names_of<Subsampling>()).description(""))
      ->type_name(vocab::alternatives_of<Subsampling>())
      ->capture_default_str();
  cmd->add_option("-r,--restart", options.restart_interval,
                  fmt::format("Restart interval in MCUs, 0..{} (0 = none)", kMaxRestartInterval))
      ->transform(decimal_integer())
      ->check(CLI::Range(0, kMaxRestartInterval).description(""))
      ->type_name(fmt::format("0..{}", kMaxRestartInterval))
      ->capture_default_str();
  cmd->add_flag("--optimize", options.optimize,
                "Optimal Huffman tables (like cjpeg -optimize)");
  cmd->add_flag("--progressive", options.progressive,
                "Progressive JPEG (SOF2): a DC scan, then AC bands per component, each with its "
                "own optimal tables (on average 2% smaller than --optimize, larger on some "
                "content; slower to code; like cjpeg -optimize -scans with the script of "
                "docs/tuning/scans.md)");
  CLI::Option* qtables = cmd->add_option_function<std::string>(
      "--qtables",
      [cmd, &options](const std::string& path) {
        options.qtables = read_qtables_file(path);
        // cjpeg uses the file's values as they are unless -quality scales them, and its
        // other slots keep the tables of its default quality, 75 (jpeg_set_defaults).
        if (cmd->count("--quality") == 0) {
          options.quality = 50;
          const std::vector<QuantTableValues> defaults = default_qtables(75);
          for (std::size_t i = options.qtables.size(); i < defaults.size(); ++i)
            options.qtables.push_back(defaults[i]);
        }
      },
      "Quantization tables from a cjpeg -qtables file (1-4 tables of 64 values, natural "
      "order, '#' comments), scaled by -q as cjpeg -quality scales them; without -q used as "
      "they are, and a slot the file does not give keeps cjpeg's default table (quality 75), "
      "as cjpeg does")
      ->type_name("FILE");
  cmd->add_option_function<std::string>(
         "--qslots", [&options](const std::string& text) { options.qslots = parse_qslots(text); },
         "Table slot of each component, like cjpeg -qslots (default 0,1,1; the last repeats)")
      ->type_name("N[,N...]");
  cmd->add_option_function<std::string>(
         "--tune", [&options](const std::string& text) { options.tune = parse_tune(text); },
         "Quantization tables: none (cjpeg's Annex K, the default), psnr or ssim (tuned for "
         "the smallest files at a given PSNR / SSIM); see README")
      ->check(CLI::IsMember(vocab::names_of<Tune>()).description(""))
      ->type_name(vocab::alternatives_of<Tune>())
      ->excludes(qtables);
  cmd->add_option_function<std::string>(
         "--rdo", [&options](const std::string& text) { options.rdo = parse_rdo(text); },
         "Rounding to quantization levels: off (cjpeg's, byte-identical; the default), "
         "deadzone (AC rounds up from 5/8 of a step: smaller files, as fast) or trellis "
         "(levels chosen per block for the least distortion + lambda x bits: smaller still, "
         "slower); the same bytes in every mode; see README")
      ->check(CLI::IsMember(vocab::names_of<Rdo>()).description(""))
      ->type_name(vocab::alternatives_of<Rdo>());
}

void add_pipeline_options(CLI::App* cmd, const char* group, int& producers, int& slots,
                          int& entropy_threads, int& device, std::string& variant, int& stages) {
  cmd->add_option("--producers", producers, "Producer (decode) threads (default 2)")
      ->transform(decimal_integer())
      ->check(CLI::Range(1, 64).description(""))
      ->type_name("N")
      ->group(group);
  cmd->add_option("--slots", slots, "Stream-buffer slots (default: threads + 2, at least 8, and 8 more in "
                  "aok where frames are uploaded from where they lie or decoded on the GPU; "
                  "fewer where memory is short)")
      ->transform(decimal_integer())
      ->check(CLI::Range(1, 256).description(""))
      ->type_name("K")
      ->group(group);
  cmd->add_option("--entropy-threads", entropy_threads,
                  "Huffman coding threads (default: the cores left over)")
      ->transform(decimal_integer())
      ->check(CLI::Range(1, 256).description(""))
      ->type_name("M")
      ->group(group);
  cmd->add_option("--device", device, "CUDA device index")
      ->transform(decimal_integer())
      ->check(CLI::Range(0, 1023).description(""))
      ->type_name("N")
      ->capture_default_str()
      ->group(group);
  cmd->add_option("--variant", variant,
                  "GPU kernel variant: " + vocab::choices_of<KernelVariant>())
      ->check(CLI::IsMember(vocab::names_of<KernelVariant>()).description(""))
      ->type_name("VARIANT")
      ->capture_default_str()
      ->group(group);
  cmd->add_option("--stages", stages, "cuda::pipeline stages of the kernel, 1..4")
      ->transform(decimal_integer())
      ->check(CLI::Range(1, 4).description(""))
      ->type_name("1..4")
      ->capture_default_str()
      ->group(group);
}

void add_devices_option(CLI::App* cmd, const char* group, std::string& devices) {
  CLI::Option* opt =
      cmd->add_option("--devices", devices,
                      "CUDA devices, one stream buffer (streams, events, slots) each: a list "
                      "such as 0,1, or all; frames go to whichever device has a free slot "
                      "first. An index may repeat: 0,0 runs two stream buffers on device 0 "
                      "(the multi-device paths on one GPU, for tests; not faster than one). "
                      "--device N is the same as --devices N")
          ->check(CLI::Validator(
              [](std::string& text) -> std::string {
                try {
                  parse_device_list(text, 1);  // syntax only; "all" is expanded later
                } catch (const UsageError& e) {
                  // CLI11 puts "--devices: " in front: say the list once.
                  std::string message = e.what();
                  const std::string head = "--devices '" + text + "': ";
                  if (message.rfind(head, 0) == 0)
                    message = "'" + text + "': " + message.substr(head.size());
                  return message;
                }
                return {};
              },
              "", "device list"))
          ->type_name("LIST|all")
          ->group(group);
  if (CLI::Option* device = cmd->get_option_no_throw("--device")) opt->excludes(device);
}

std::vector<int> parse_device_list(const std::string& text, int device_count) {
  if (text == "all") {
    if (device_count <= 0) throw Error("--devices all: no CUDA device found");
    std::vector<int> all;
    for (int d = 0; d < std::min(device_count, kMaxStreamBuffers); ++d) all.push_back(d);
    return all;
  }
  std::vector<int> list;
  std::size_t from = 0;
  for (;;) {
    const std::size_t comma = text.find(',', from);
    const std::string item = text.substr(from, comma == std::string::npos ? comma : comma - from);
    if (item == "all")
      throw UsageError("--devices '" + text + "': 'all' stands alone (not in a list)");
    if (item.empty() || item.size() > 9 || item.find_first_not_of("0123456789") != std::string::npos)
      throw UsageError("--devices '" + text + "': '" + item +
                       "' is not a device index (a list such as 0,1, or all)");
    const int d = std::stoi(item);
    if (d > 1023) throw UsageError("--devices '" + text + "': device " + item + " is outside 0..1023");
    list.push_back(d);
    if (static_cast<int>(list.size()) > kMaxStreamBuffers)
      throw UsageError("--devices '" + text + "': more than " + std::to_string(kMaxStreamBuffers) +
                       " entries");
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return list;
}

std::string device_list_text(const std::vector<int>& devices) {
  std::string s;
  for (std::size_t i = 0; i < devices.size(); ++i) s += (i ? "," : "") + std::to_string(devices[i]);
  return s;
}

std::vector<int> resolve_devices(const std::string& devices, int device, int present) {
  if (devices.empty()) return {device};
  std::string reason;
  const int count = devices != "all"  ? 0
                    : present >= 0    ? present
                                      : static_cast<int>(gpu_devices(&reason).size());
  if (devices == "all" && count == 0)
    throw Error("--devices all: " + (reason.empty() ? std::string("no CUDA device found") : reason));
  return parse_device_list(devices, count);
}

void add_gpu_output_option(CLI::App* cmd, const char* group, std::string& gpu_output) {
  cmd->add_option("--gpu-output", gpu_output,
                  "What the GPU hands back: tokens (the compact stream the CPU coder only packs "
                  "into bits) or coefficients (int16, as a plain offload would); same bytes. "
                  "auto: tokens, but coefficients with --progressive (whose scans need whole "
                  "blocks, which the CPU would rebuild from the tokens)")
      ->check(CLI::IsMember(vocab::names_of<GpuOutput>()).description(""))
      ->type_name(vocab::alternatives_of<GpuOutput>())
      ->capture_default_str()
      ->group(group);
}

}  // namespace mjpeg::app
