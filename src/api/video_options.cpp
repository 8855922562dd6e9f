// VideoOptions: validation, and their translation into the pipeline's options (one call of
// pipeline::apply_default_counts for the thread and slot counts), the device check and the
// device-memory check.
#include "mjpeg/video.hpp"
#include "mjpeg/vocabulary.hpp"

#include "mjpeg/encoder.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>

#include "gpu_transform.hpp"
#include "core/geometry.hpp"
#include "device_info.hpp"
#include "internal.hpp"
#include "pipeline/pipeline.hpp"

namespace mjpeg {

using namespace api;

namespace api {

/// The pipeline's options for `o`. `push`: VideoEncoder (one producer unless asked for more:
/// it only copies what encode() hands over); otherwise encode_all (the pipeline's defaults,
/// a self-balancing split when neither count is given).
pipeline::PipelineOptions pipeline_options(const VideoOptions& o, bool push,
                                           std::int64_t frames, bool in_memory) {
  pipeline::PipelineOptions p;
  p.mode = o.offload;
  p.device = o.device;
  if (uses_gpu(o.offload)) p.devices = o.devices;
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  int producers = o.producers, workers = o.entropy_threads;
  if (push) {
    if (producers == 0) producers = 1;
    if (workers == 0) workers = uses_gpu(o.offload) ? std::max(1, cores - 1) : cores;
  }
  // o.threads: a total that balances itself (pushed frames have their fixed split).
  pipeline::apply_default_counts(p, cores, producers, workers, o.slots, in_memory,
                                 push ? 0 : o.threads);
  // A short stream (a still picture) needs no more slots than frames.
  if (o.slots == 0 && frames > 0 && frames < p.slots) p.slots = static_cast<int>(frames);
  p.variant = o.gpu.kernel;
  p.stages = o.gpu.stages;
  p.gpu_output = o.gpu.output;
  if (o.on_jpeg) {
    p.on_jpeg = [observer = o.on_jpeg](std::int64_t index, const std::vector<std::uint8_t>& jpeg) {
      observer(EncodedFrame{index, jpeg.data(), jpeg.size()});
    };
  }
  if (o.profile) p.gpu_timing = true;
  if (o.on_frame) {
    p.on_frame = [observer = o.on_frame](std::int64_t index, const ImageView& pixels,
                                         const std::vector<std::uint8_t>& jpeg) {
      observer(pixels, EncodedFrame{index, jpeg.data(), jpeg.size()});
    };
  }
  pipeline::validate(p);
  return p;
}

/// A GPU mode needs its devices: a clear error now rather than from a thread later.
void check_device(const VideoOptions& o) {
  if (!uses_gpu(o.offload)) return;
  std::string reason;
  const int devices = gpu::device_count(&reason);
  std::vector<int> wanted = o.devices.empty() ? std::vector<int>{o.device} : o.devices;
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  for (int device : wanted) {
    const std::string what = std::string("offload mode '") + to_string(o.offload) +
                             "' needs CUDA device " + std::to_string(device);
    if (devices == 0)
      throw Error(what + ": " + (reason.empty() ? "no CUDA device was found" : reason) +
                  " (use Offload::cpu to encode without a GPU)");
    if (device >= devices)
      throw Error(what + ", but there " + (devices == 1 ? "is 1 device" : "are " +
                  std::to_string(devices) + " devices"));
    if (!gpu::usable_device(device, &reason)) throw Error(what + ": " + reason);
  }
}

}  // namespace api

void validate(const VideoOptions& o) {
  if (!vocab::is_known(o.format)) throw UsageError("VideoOptions: unknown frame format");
  if (o.device_frames && !is_planar(o.format))
    throw UsageError("VideoOptions: device_frames needs a planar format, not " +
                     std::string(to_string(o.format)));
  if (o.device_frames && !gpu::built_with_cuda())
    throw UsageError("VideoOptions: device_frames needs a build with CUDA");
  check_range(o.width, 1, kMaxDimension, "width");
  check_range(o.height, 1, kMaxDimension, "height");
  if (!vocab::is_known(o.matrix)) throw UsageError("VideoOptions: unknown colour matrix");
  if (!vocab::is_known(o.range)) throw UsageError("VideoOptions: unknown colour range");
  if (!vocab::is_known(o.offload)) throw UsageError("VideoOptions: unknown offload mode");
  check_range(o.device, 0, 1023, "device");
  if (o.devices.size() > static_cast<std::size_t>(kMaxStreamBuffers))
    throw UsageError("VideoOptions: " + std::to_string(o.devices.size()) +
                     " devices listed, at most " + std::to_string(kMaxStreamBuffers));
  for (int d : o.devices) check_range(d, 0, 1023, "device (in devices)");
  check_range(o.producers, 0, 256, "producers");
  check_range(o.entropy_threads, 0, 1024, "entropy_threads");
  check_range(o.slots, 0, 4096, "slots");
  check_range(o.threads, 0, 1024, "threads");
  if (!vocab::is_known(o.gpu.kernel)) throw UsageError("VideoOptions: unknown kernel variant");
  check_range(o.gpu.stages, 1, gpu::kMaxStages, "gpu.stages");
  if (!vocab::is_known(o.gpu.output)) throw UsageError("VideoOptions: unknown GPU output");
  validate(o.jpeg);
  const Subsampling sampling = o.format == FrameFormat::gray8 ? Subsampling::gray : o.jpeg.subsampling;
  if (o.jpeg.optimize && !o.jpeg.progressive && !optimize_fits(o.width, o.height, sampling))
    throw UsageError("VideoOptions: optimize: a " + std::to_string(o.width) + "x" +
                     std::to_string(o.height) + " frame at " + to_string(sampling) +
                     " can hold more of one Huffman symbol than 32-bit counts allow");
}

int slot_count(const VideoOptions& o, bool push, std::int64_t frames) {
  validate(o);
  return pipeline_options(o, push, frames).slots;
}

std::string gpu_memory_problem(const VideoOptions& o, int slots) {
  try {
    if (o.width < 1 || o.height < 1 || !vocab::is_known(o.format) || slots < 1) return "";
    const Subsampling sub = o.format == FrameFormat::gray8 ? Subsampling::gray : o.jpeg.subsampling;
    const FrameGeometry g = make_geometry(o.width, o.height, sub);
    // What a slot takes on the device (tokens unless coefficients are asked for: the larger).
    const double per_slot = static_cast<double>(pipeline::device_bytes_per_slot(
        frame_bytes(o), g,
        o.gpu.output == GpuOutput::coefficients ? GpuOutput::coefficients : GpuOutput::tokens));
    std::string reason;
    const std::vector<gpu::DeviceInfo> found = gpu::list_devices(&reason);
    const std::vector<int> devices = o.devices.empty() ? std::vector<int>{o.device} : o.devices;
    for (int device : devices) {
      // Stream buffers that share a device share its memory.
      const double buffers =
          static_cast<double>(std::count(devices.begin(), devices.end(), device));
      double device_bytes = 0;
      for (const gpu::DeviceInfo& d : found)
        if (d.index == device) device_bytes = static_cast<double>(d.memory_bytes);
      if (device_bytes <= 0 || per_slot * slots * buffers <= 0.9 * device_bytes) continue;
      char text[256];
      std::snprintf(text, sizeof text,
                    "a %dx%d frame needs %.1f GiB of device memory for %.0f slots (the frame, "
                    "its coefficients and what comes back), device %d has %.1f GiB",
                    o.width, o.height, per_slot * slots * buffers / (1 << 30), slots * buffers,
                    device, device_bytes / (1 << 30));
      return text;
    }
  } catch (...) {
  }
  return "";
}

}  // namespace mjpeg
