// Option definitions shared by several commands (CLI11): integer parsing, the JPEG settings,
// and the pipeline's thread and GPU options.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "mjpeg/options.hpp"

namespace mjpeg::app {

/// Accepts only plain decimal integers ("90", "-1", "+5") and strips leading zeros: CLI11
/// converts integers with strtoll base 0, which would read "010" as octal 8 and "0x5A" as 90.
CLI::Validator decimal_integer();

/// A frame size given on the command line.
struct FrameSize {
  int width = 0, height = 0;
};

/// Parses "WIDTHxHEIGHT" (each 1..kMaxDimension); throws UsageError naming `option`.
FrameSize parse_frame_size(const std::string& text, const std::string& option);

/// Parses a frame rate as --fps takes it: "N", "N/D" (30000/1001) or a decimal ("29.97", to
/// 1/1000), positive and below 1000 frames per second; throws UsageError naming --fps.
void parse_frame_rate(const std::string& text, int& num, int& den);

/// Reads and parses a cjpeg -qtables file (parse_qtables); throws UsageError naming the path.
std::vector<QuantTableValues> read_qtables_file(const std::string& path);

/// -q/--quality, -s/--subsampling (into `subsampling`, parsed later with parse_subsampling),
/// -r/--restart, --optimize, and the quantization tables: --qtables FILE (read while parsing;
/// without -q the quality becomes 50, i.e. the file's values unscaled, and the slots 0..1 the
/// file does not give hold cjpeg's defaults at quality 75, as cjpeg), --qslots,
/// --tune.
void add_jpeg_options(CLI::App* cmd, EncodeOptions& options, std::string& subsampling);

/// Pipeline threads and GPU choices, in the group `group`: --producers, --slots,
/// --entropy-threads, --device, --variant, --stages (0 = the default for the counts).
void add_pipeline_options(CLI::App* cmd, const char* group, int& producers, int& slots,
                          int& entropy_threads, int& device, std::string& variant, int& stages);

/// --devices LIST|all, in the group `group` (after add_pipeline_options: it excludes --device):
/// the CUDA devices, one stream buffer each. The syntax is checked while parsing
/// (parse_device_list; an error is a usage error naming the item).
void add_devices_option(CLI::App* cmd, const char* group, std::string& devices);

/// Parses a device list as --devices takes it: "all" (devices 0 .. device_count - 1, at most
/// kMaxStreamBuffers; Error when there is none) or decimal indices 0..1023 separated by commas.
/// An index may repeat: each entry is one more stream buffer on that device ("0,0": two buffers
/// on device 0). `device_count` is only consulted for "all". Throws UsageError, naming the item,
/// for an empty item, a non-number, an index outside 0..1023, more than kMaxStreamBuffers
/// entries or "all" mixed with indices.
std::vector<int> parse_device_list(const std::string& text, int device_count);

/// "0", "0,1", "0,0".
std::string device_list_text(const std::vector<int>& devices);

/// The stream buffers' devices: `devices` parsed ("all": every device present; Error when there
/// is none), or {device} when `devices` is empty. `present`: how many devices there are, when
/// the caller has listed them already (-1: the CUDA runtime is asked here, for "all" only).
std::vector<int> resolve_devices(const std::string& devices, int device, int present = -1);

/// --gpu-output auto|tokens|coefficients (what a GPU offload hands back), in the group `group`.
void add_gpu_output_option(CLI::App* cmd, const char* group, std::string& gpu_output);

}  // namespace mjpeg::app
