// Timed runs of the streaming pipeline on frames held in memory, shared by `mjpeg compare` and
// `mjpeg bench`: one warm-up, then R timed runs of a mode, the median kept with its trace; every
// run's output is checked byte for byte against a reference (the first run's frames).
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "frame_store.hpp"
#include "mjpeg/options.hpp"
#include "mjpeg/profile.hpp"
#include "mjpeg/video.hpp"

namespace mjpeg::app {

struct ModeSpec {
  std::string name;  ///< as on the command line: cpu, sok, sok-pinned, aok
  Offload mode = Offload::cpu;
  /// The stream buffers' devices for this run (empty: the options' list). Set by
  /// per_device_count, which also names the spec ("aok-2dev").
  std::vector<int> devices = {};
};

/// "cpu", "sok", "sok-pinned" or "aok"; throws UsageError otherwise.
ModeSpec parse_mode_spec(const std::string& text);
/// A comma list of mode names (no repeats); throws UsageError.
std::vector<ModeSpec> parse_mode_list(const std::string& text);
/// The modes to run: `list` (a comma list; a GPU mode without a usable device is an Error),
/// or, when it is empty, cpu,sok,aok with a usable device and cpu alone otherwise, after
/// telling `notice` why (its text ends with `without_gpu`, e.g. "comparing the cpu mode ...").
/// `devices`: the devices the GPU modes would use; each must be usable.
std::vector<ModeSpec> choose_modes(const std::string& list,
                                   const std::function<void(const std::string&)>& notice,
                                   const std::string& without_gpu,
                                   const std::vector<int>& devices = {0});
/// With a device list of D > 1 entries: each GPU mode of `modes` once per device count
/// 1, 2, 4, ... and D (the list's first entries), so that a table shows fps per device count;
/// a count above 1 is named in the spec ("aok-2dev", shown as AOK 2DEV). The cpu mode once.
/// With D = 1: `modes` as they are.
std::vector<ModeSpec> per_device_count(const std::vector<ModeSpec>& modes,
                                       const std::vector<int>& devices);
/// The name in capitals for tables and traces ("SOK PINNED").
std::string display_name(const ModeSpec& spec);
/// Page-locks `store` when one of `modes` offloads to a GPU, so that uploads go from the frames
/// without a copy into a slot; if that fails, tells `notice` (the uploads then copy from pageable
/// memory) and goes on.
void pin_for_gpu_modes(FrameStore& store, const std::vector<ModeSpec>& modes,
                       const std::function<void(const std::string&)>& notice);

/// The median run of one mode (by frames/s), with its trace.
struct ModeResult {
  ModeSpec spec;
  VideoOptions options;  ///< as run (mode and devices of `spec`)
  Stats stats;
  Profile profile;       ///< fps over the stages' time (allocation excluded), GPU times, timeline
  std::vector<double> fps_of_runs;
  bool identical = true;            ///< every run equal to the reference
  std::int64_t first_difference = -1;
};

/// Where a result used several stream buffers: per buffer its device, frames (the share the
/// availability-driven hand-out gave it) and GPU time per frame. Prints nothing otherwise.
void print_buffer_table(std::FILE* out, const std::vector<ModeResult>& results);

/// Frames per second over the stages' time: the allocation before the first frame is excluded
/// (it is paid once per geometry, not per frame).
double stage_fps(const Stats& stats);

/// Runs `spec` once untimed (warm-up: CUDA context, page faults, thread start) on up to 16
/// frames, then `repeat` times on all frames of `store` (with `options`' JPEG parameters,
/// counts and GPU tuning; its size and format are the store's), with GPU timing and a trace. The
/// frames are used where they lie (uploaded from there when the store is pinned; the pageable
/// SOK baseline copies them into its slots). `reference`: when empty, the first timed run's
/// JPEGs are stored in it; otherwise every run is compared to it.
ModeResult run_mode(const ModeSpec& spec, VideoOptions options, const FrameStore& store,
                    int repeat, std::vector<std::vector<std::uint8_t>>& reference);

}  // namespace mjpeg::app
