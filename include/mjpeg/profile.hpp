// mjpeg/profile.hpp: what an encode measured beyond Stats, for comparing offload modes: the
// GPU's own times (CUDA events), each stream buffer's share, the load of every stage and the
// rate it alone would allow, and a timeline of every stage's spans (one track per host thread
// and per CUDA stream) that a trace viewer or a Gantt chart can draw.
//
// Ask for it with VideoOptions::profile (video.hpp): the encode then times every copy and
// kernel with CUDA events and records the spans, which costs a little (a few percent in the
// GPU modes), so leave it unset for production encodes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mjpeg {

/// One stage of the pipeline: how busy it was and the frame rate it alone would allow.
struct StageLoad {
  std::string name;     ///< "produce", "transform+entropy", "gpu offload", "dispatch",
                        ///< "download issue", "upload", "kernel", "download", "entropy", "write"
  double busy_s = 0;    ///< summed over its lanes
  int lanes = 1;        ///< threads, or stream buffers for the GPU stages
  double bound_fps = 0; ///< lanes * frames / busy_s (0: no measurable work)
};

/// One stream buffer (a device, or an entry of VideoOptions::devices).
struct BufferProfile {
  int device = 0;
  std::int64_t frames = 0;   ///< frames it transformed
  double dispatch_s = 0;     ///< its dispatcher's busy time
  double upload_gpu_s = 0;   ///< its copies and kernels, from CUDA events
  double kernel_gpu_s = 0;
  double download_gpu_s = 0;
};

/// A span of the timeline: what a track did for a frame, in seconds since the stages started
/// (the allocation before them excluded).
struct TimelineSpan {
  int track = 0;            ///< index into Profile::tracks
  std::string kind;         ///< "read", "upload", "kernel", "download", "dispatch", "sync",
                            ///< "wait", "transform", "entropy", "write"
  std::int64_t frame = -1;
  double start_s = 0, end_s = 0;
};

struct TimelineTrack {
  std::string name;  ///< e.g. "producer 0", "entropy 3", "GPU 0 kernel"
  bool gpu = false;  ///< a CUDA stream (spans from events) rather than a host thread
};

struct Profile {
  /// Frames per second over the stages' time (the allocation excluded, unlike Stats::wall_s).
  double fps = 0;
  std::vector<StageLoad> stages;
  std::string bound_by;      ///< the stage with the lowest bound
  double bound_fps = 0;
  double of_bound = 0;       ///< fps / bound_fps
  // GPU modes (all 0 in the cpu mode):
  bool gpu_timed = false;    ///< the GPU times below were measured
  double upload_gpu_s = 0;   ///< sum of the host-to-device copies
  double kernel_gpu_s = 0;   ///< sum of the transform kernels
  double download_gpu_s = 0; ///< sum of the device-to-host copies
  double gpu_union_s = 0;    ///< time in which at least one of them ran
  double overlap = 0;        ///< share of the GPU work that overlapped other GPU work
  double h2d_gbps = 0;       ///< bytes uploaded over the time the uploads took
  double d2h_gbps = 0;
  std::int64_t token_frames = 0;  ///< frames coded from the GPU's tokens (else coefficients)
  std::string gpu_output;         ///< what the GPU handed back: "tokens" or "coefficients"
  std::vector<BufferProfile> buffers;
  std::vector<TimelineTrack> tracks;
  std::vector<TimelineSpan> spans;  ///< sorted by track, then start
};

}  // namespace mjpeg
