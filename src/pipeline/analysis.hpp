// What a run's statistics say: per stage, how busy it was and the frame rate it alone would
// allow (its bound); the slowest stage bounds the pipeline. Also how much of the GPU work
// overlapped and the PCIe rates. Used by `mjpeg compare`, `mjpeg bench` and `encode --stats`.
//
// A stage with L lanes (threads, or one GPU engine) that was busy B seconds for F frames can
// sustain at most L * F / B frames per second. Stages per mode:
//   cpu: produce (N producers), transform + entropy (M workers), write (1)
//   sok: produce (N), GPU offload (1: the blocking copy in, kernel, wait, copy out), entropy
//        (M), write (1)
//   aok: produce incl. the upload issue (N), dispatch (1), upload copy engine (1), kernel (1),
//        download copy engine (1), entropy (M), write (1)
// With D stream buffers (several devices) the GPU stages have D lanes each (one dispatcher,
// kernel stream and pair of copy engines per buffer; two buffers on one device share that
// device's engines, so there the bound is optimistic).
#pragma once

#include <string>
#include <vector>

#include "pipeline/pipeline.hpp"

namespace mjpeg::pipeline {

struct StageLoad {
  std::string name;
  double busy_s = 0;   ///< summed over the lanes
  int lanes = 1;
  double bound_fps = 0;  ///< lanes * frames / busy_s; 0 when the stage did no measurable work
};

struct RunAnalysis {
  double fps = 0;
  std::vector<StageLoad> stages;
  std::string binding;     ///< the stage with the lowest bound
  double bound_fps = 0;    ///< its bound
  double of_bound = 0;     ///< fps / bound_fps
  // GPU (timed runs only; else 0)
  double gpu_work_s = 0;   ///< upload + kernel + download, summed
  double overlap = 0;      ///< share of gpu_work_s that ran concurrently with other GPU work:
                           ///< 1 - union / sum (0: strictly one after another)
  double h2d_gbps = 0;     ///< bytes uploaded / time the uploads took
  double d2h_gbps = 0;
};

RunAnalysis analyse(const Stats& stats, const PipelineOptions& options);

}  // namespace mjpeg::pipeline
