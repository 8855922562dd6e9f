// What a run reports through the public API: Stats, VideoOptions::profile (the GPU's times,
// the stage loads and bounds, the timeline) and the progress callback, from the pipeline's.
#include "mjpeg/video.hpp"

#include "mjpeg/encoder.hpp"

#include <utility>

#include "internal.hpp"
#include "pipeline/analysis.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/trace.hpp"

namespace mjpeg {

using namespace api;

namespace api {

/// VideoOptions::profile from a run's statistics and trace.
void fill_profile(Profile& out, const pipeline::Stats& s, const pipeline::PipelineOptions& p,
                  const EncodeOptions& jpeg, const pipeline::Trace& trace) {
  Profile r;
  const pipeline::RunAnalysis a = pipeline::analyse(s, p);
  const double stage_time = s.wall_s - s.setup_s;
  r.fps = stage_time > 0 ? static_cast<double>(s.frames) / stage_time : 0;
  for (const pipeline::StageLoad& l : a.stages) r.stages.push_back({l.name, l.busy_s, l.lanes, l.bound_fps});
  r.bound_by = a.binding;
  r.bound_fps = a.bound_fps;
  r.of_bound = a.bound_fps > 0 ? r.fps / a.bound_fps : 0;
  r.gpu_timed = s.gpu_timed;
  r.upload_gpu_s = s.upload_gpu_s;
  r.kernel_gpu_s = s.kernel_gpu_s;
  r.download_gpu_s = s.download_gpu_s;
  r.gpu_union_s = s.gpu_union_s;
  r.overlap = a.overlap;
  r.h2d_gbps = a.h2d_gbps;
  r.d2h_gbps = a.d2h_gbps;
  r.token_frames = s.token_frames;
  if (uses_gpu(p.mode)) r.gpu_output = to_string(pipeline::gpu_output_for(p, jpeg));
  for (const pipeline::BufferStats& b : s.buffers)
    r.buffers.push_back({b.device, b.frames, b.gpu_s, b.upload_gpu_s, b.kernel_gpu_s, b.download_gpu_s});
  for (const pipeline::Track& t : trace.tracks()) r.tracks.push_back({t.name, t.gpu});
  for (const pipeline::Span& sp : trace.spans())
    r.spans.push_back({sp.track, pipeline::to_string(sp.kind), sp.frame, sp.start_s, sp.end_s});
  out = std::move(r);
}

Stats public_stats(const pipeline::Stats& s, const pipeline::PipelineOptions& p, Offload mode) {
  // A cpu start whose GPU never took over ran in the cpu mode alone, with its options.
  const bool cpu_alone = p.cpu_start && s.handover_s == 0;
  const pipeline::PipelineOptions& ran = cpu_alone ? *p.cpu_start : p;
  Stats r;
  r.frames = s.frames;
  r.jpeg_bytes = s.jpeg_bytes;
  r.wall_s = s.wall_s;
  r.read_s = s.read_s + s.upload_issue_s;
  r.transform_s = s.transform_cpu_s;
  r.gpu_s = s.gpu_s + s.download_issue_s + s.coeff_wait_s;
  r.entropy_s = s.entropy_s;
  r.write_s = s.write_s;
  r.upload_bytes = s.upload_bytes;
  r.download_bytes = s.download_bytes;
  r.offload = cpu_alone ? Offload::cpu : mode;
  r.producers = s.producers;
  r.entropy_threads = s.entropy_threads;
  r.slots = s.slots;
  r.setup_s = s.setup_s;
  r.first_frame_s = s.first_frame_s;
  r.upload_issue_s = s.upload_issue_s;
  r.download_issue_s = s.download_issue_s;
  r.result_wait_s = s.coeff_wait_s;
  r.self_balancing = ran.balance_threads > 0;
  r.rebalances = s.rebalances;
  r.split_frames = s.split_frames;
  for (const pipeline::BufferStats& b : s.buffers) r.frames_per_buffer.push_back(b.frames);
  if (s.frames > 0) {
    const pipeline::RunAnalysis a = pipeline::analyse(s, ran);
    r.bound_by = a.binding;
    r.bound_fps = a.bound_fps;
  }
  r.cpu_start_frames = s.cpu_start_frames;
  r.gpu_ready_s = s.gpu_ready_s;
  r.handover_s = s.handover_s;
  r.gpu_problem = s.gpu_problem;
  return r;
}

}  // namespace api

}  // namespace mjpeg
