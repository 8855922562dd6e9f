#include "pipeline/analysis.hpp"

#include <algorithm>

namespace mjpeg::pipeline {

RunAnalysis analyse(const Stats& st, const PipelineOptions& options) {
  RunAnalysis a;
  const double frames = static_cast<double>(st.frames);
  a.fps = st.wall_s > 0 ? frames / st.wall_s : 0;
  // The split the run ended with (a self-balancing split may have moved threads).
  PipelineOptions o = options;
  if (st.producers > 0) o.producers = st.producers;
  if (st.entropy_threads > 0) o.entropy_threads = st.entropy_threads;
  auto stage = [&](std::string name, double busy, int lanes) {
    StageLoad s{std::move(name), busy, lanes, busy > 0 ? lanes * frames / busy : 0};
    a.stages.push_back(s);
  };
  // One dispatcher (and one set of copy engines and kernel streams) per stream buffer.
  const int buffers = st.buffers.empty() ? 1 : static_cast<int>(st.buffers.size());
  const OffloadTraits mode = traits_of(o.mode);
  if (!mode.gpu) {
    stage("produce", st.read_s, o.producers);
    stage("transform+entropy", st.transform_cpu_s + st.entropy_s, o.entropy_threads);
  } else if (!mode.asynchronous) {
    stage("produce", st.read_s, o.producers);
    stage("gpu offload", st.gpu_s, buffers);
    stage("entropy", st.entropy_s, o.entropy_threads);
  } else {
    stage("produce", st.read_s + st.upload_issue_s, o.producers);
    stage("dispatch", st.gpu_s, buffers);
    if (st.download_issue_s > 0) stage("download issue", st.download_issue_s, buffers);
    if (st.gpu_timed) {
      stage("upload", st.upload_gpu_s, buffers);
      // Each buffer's kernel streams run frames side by side.
      stage("kernel", st.kernel_gpu_s, buffers * std::max(1, st.kernel_streams));
      stage("download", st.download_gpu_s, buffers);
    }
    stage("entropy", st.entropy_s, o.entropy_threads);
  }
  stage("write", st.write_s, 1);

  for (const StageLoad& s : a.stages) {
    if (s.bound_fps <= 0) continue;
    if (a.binding.empty() || s.bound_fps < a.bound_fps) {
      a.binding = s.name;
      a.bound_fps = s.bound_fps;
    }
  }
  a.of_bound = a.bound_fps > 0 ? a.fps / a.bound_fps : 0;

  if (st.gpu_timed) {
    a.gpu_work_s = st.upload_gpu_s + st.kernel_gpu_s + st.download_gpu_s;
    a.overlap = a.gpu_work_s > 0 ? 1.0 - st.gpu_union_s / a.gpu_work_s : 0;
    if (a.overlap < 0) a.overlap = 0;
    a.h2d_gbps = st.upload_gpu_s > 0 ? st.upload_bytes / st.upload_gpu_s * 1e-9 : 0;
    a.d2h_gbps = st.download_gpu_s > 0 ? st.download_bytes / st.download_gpu_s * 1e-9 : 0;
  }
  return a;
}

}  // namespace mjpeg::pipeline
