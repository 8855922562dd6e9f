// mjpeg_bench_kernels: time the GPU transform kernels (4:2:0, q90) at HD, 4K and 8K for every
// variant and stage count, for packed RGB input and for planar 4:2:0 YCbCr input (Y4M / decoded
// video: 1.5 bytes per pixel, converted to RGB in the kernel). Per configuration: median ms per
// frame from CUDA events around each launch (after a warm-up), rotating among enough
// input/output buffers that the L2 cache (~60 MB) cannot hold a frame between its uses;
// effective bandwidth = (input bytes read + coefficient bytes written) / time, against a large
// device-to-device cudaMemcpy timed in the same run (bytes read + written); registers and
// shared memory from cudaFuncGetAttributes. Each configuration's last output is compared with
// transform_cpu of the same frame (of its RGB, for planar input), coefficient for coefficient:
// a row says "exact", and a difference (named on stderr) makes the exit status 3, so that a
// speed is never reported for wrong output.
//
// Usage: mjpeg_bench_kernels [--csv] [--quick] [--sizes hd,4k,8k] [--inputs rgb24,yuv420p]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "cuda_raii.hpp"
#include "gpu_test_util.hpp"
#include "device_info.hpp"
#include "gpu_transform.hpp"
#include "core/geometry.hpp"
#include "jpeg/planar.hpp"
#include "jpeg/transform_cpu.hpp"
#include "core/quant.hpp"

using namespace mjpeg;

namespace {

double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Device-to-device copy bandwidth (read + write), GB/s.
double copy_bandwidth(gpu::Stream& stream) {
  const std::size_t bytes = std::size_t{512} << 20;
  gpu::DeviceBuffer a(bytes), b(bytes);
  MJPEG_CUDA_CHECK(cudaMemset(a.get(), 1, bytes));
  MJPEG_CUDA_CHECK(cudaMemset(b.get(), 2, bytes));
  gpu::Event e0, e1;
  std::vector<float> t;
  for (int i = 0; i < 25; ++i) {
    e0.record(stream.get());
    MJPEG_CUDA_CHECK(cudaMemcpyAsync(i % 2 ? a.get() : b.get(), i % 2 ? b.get() : a.get(), bytes,
                                     cudaMemcpyDeviceToDevice, stream.get()));
    e1.record(stream.get());
    e1.synchronize();
    if (i >= 5) t.push_back(e1.elapsed_since(e0));
  }
  return 2.0 * bytes / (median(t) * 1e-3) / 1e9;
}

struct SizeCase {
  const char* name;
  int w, h;
};

}  // namespace

int main(int argc, char** argv) {
  bool csv = false, quick = false;
  std::string sizes = "hd,4k,8k", inputs = "rgb24,yuv420p";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--csv")) csv = true;
    else if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--sizes") && i + 1 < argc) sizes = argv[++i];
    else if (!std::strcmp(argv[i], "--inputs") && i + 1 < argc) inputs = argv[++i];
    else {
      std::fprintf(stderr,
                   "usage: %s [--csv] [--quick] [--sizes hd,4k,8k] [--inputs rgb24,yuv420p]\n",
                   argv[0]);
      return 2;
    }
  }
  bool differs = false;  // some configuration's output is not the CPU transform's
  std::string reason;
  if (!gpu::usable_device(&reason)) {
    std::fprintf(stderr, "mjpeg_bench_kernels: %s\n", reason.c_str());
    return 1;
  }
  try {
    cudaDeviceProp prop{};
    MJPEG_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    gpu::Stream stream;
    const double copy_gbs = copy_bandwidth(stream);
    std::fprintf(csv ? stderr : stdout,
                 "device: %s, %d SMs, L2 %d MB; D2D copy %.0f GB/s (read + write)\n", prop.name,
                prop.multiProcessorCount, prop.l2CacheSize >> 20, copy_gbs);
    if (csv)
      std::printf("size,input,variant,stages,ms,gbs,pct_copy,regs,smem,threads,blocks_per_sm,"
                  "exact\n");
    else
      std::printf("%-5s %-8s %-12s %2s %9s %8s %7s %5s %7s %4s %3s %5s\n", "size", "input",
                  "variant", "S", "ms/frame", "GB/s", "%copy", "regs", "smem", "thr", "b/SM",
                  "exact");
    const SizeCase all[] = {{"hd", 1920, 1080}, {"4k", 3840, 2160}, {"8k", 7680, 4320}};
    for (const SizeCase& sc : all) {
      if (sizes.find(sc.name) == std::string::npos) continue;
      for (const char* input : {"rgb24", "yuv420p"}) {
        if (inputs.find(input) == std::string::npos) continue;
        const bool planar = std::strcmp(input, "yuv420p") == 0;
        const FrameGeometry g = make_geometry(sc.w, sc.h, Subsampling::s420);
        const QuantTables t = make_quant_tables(90, 2);
        const gputest::HostFrame f = gputest::synthetic_frame(sc.w, sc.h, 3, 7u);
        PlanarFormat pf;
        pf.chroma = PlanarChroma::c420;
        pf.ycc = math::make_rounded_ycc(0.299, 0.114, true);
        const gputest::PlanarFrame pfr =
            planar ? gputest::synthetic_planar(sc.w, sc.h, pf, 7u) : gputest::PlanarFrame{};
        const std::size_t in_bytes =
            planar ? pfr.bytes.size() : static_cast<std::size_t>(sc.w) * sc.h * 3;
        const std::size_t out_bytes = g.coefficient_count() * sizeof(std::int16_t);
        const int nbuf = static_cast<int>(
            std::max<std::size_t>(2, (std::size_t{256} << 20) / (in_bytes + out_bytes) + 1));
        std::vector<gputest::DeviceFrame> in;
        std::vector<gputest::DevicePlanar> in_planar;
        std::vector<gpu::DeviceBuffer> out;
        for (int i = 0; i < nbuf; ++i) {
          if (planar) {
            const PlanarLayout l = pfr.layout();
            const std::size_t pitches[3] = {l.pitch[0], l.pitch[1], l.pitch[2]};
            const std::size_t zero[3] = {0, 0, 0};
            in_planar.emplace_back(pfr, pitches, zero);
          } else {
            in.emplace_back(f, f.stride);
          }
          out.emplace_back(out_bytes);
        }
        const gpu::TransformPlan plan = planar ? gpu::TransformPlan(g, t, pf)
                                               : gpu::TransformPlan(g, t, PixelFormat::rgb24);
        // The CPU transform of the same pixels (planar: of their RGB), the reference of every
        // configuration's output.
        std::vector<std::int16_t> reference(g.coefficient_count());
        if (planar) {
          std::vector<std::uint8_t> rgb(static_cast<std::size_t>(sc.w) * sc.h * 3);
          planar_to_rgb(pfr.view(), rgb.data(), static_cast<std::size_t>(sc.w) * 3);
          transform_cpu(ImageView{rgb.data(), sc.w, sc.h, PixelFormat::rgb24,
                                  static_cast<std::size_t>(sc.w) * 3},
                        g, t, reference.data());
        } else {
          transform_cpu(f.view(), g, t, reference.data());
        }
        std::vector<std::int16_t> got(reference.size());
        auto launch = [&](int b, KernelVariant v, int st) {
          if (planar)
            gpu::launch_transform_planar(plan, in_planar[b].plane, in_planar[b].pitch,
                                         out[b].as<std::int16_t>(), v, st, stream.get());
          else
            gpu::launch_transform(plan, in[b].data, in[b].pitch, out[b].as<std::int16_t>(), v, st,
                                  stream.get());
        };
        const int reps = quick ? 30 : (sc.w <= 1920 ? 400 : sc.w <= 3840 ? 200 : 100);
        for (KernelVariant v : gpu::kAllVariants) {
          for (int st = 1; st <= (v == KernelVariant::direct ? 1 : gpu::kMaxStages); ++st) {
            std::vector<gpu::Event> ev(2 * reps);
            for (int i = 0; i < 10; ++i) launch(i % nbuf, v, st);
            for (int i = 0; i < reps; ++i) {
              const int b = i % nbuf;
              ev[2 * i].record(stream.get());
              launch(b, v, st);
              ev[2 * i + 1].record(stream.get());
            }
            stream.synchronize();
            // The last launch's output (buffer (reps - 1) % nbuf) against the reference.
            MJPEG_CUDA_CHECK(cudaMemcpy(got.data(), out[(reps - 1) % nbuf].get(),
                                        got.size() * sizeof(std::int16_t), cudaMemcpyDeviceToHost));
            const auto diff = std::mismatch(got.begin(), got.end(), reference.begin());
            const bool exact = diff.first == got.end();
            if (!exact) {
              const std::size_t at = static_cast<std::size_t>(diff.first - got.begin());
              std::fprintf(stderr,
                           "mjpeg_bench_kernels: %s %s %s stages %d DIFFERS from transform_cpu: "
                           "coefficient %zu (block %zu) is %d, expected %d\n",
                           sc.name, input, to_string(v), st, at, at / 64, *diff.first,
                           *diff.second);
              differs = true;
            }
            std::vector<float> ms(reps);
            for (int i = 0; i < reps; ++i) ms[i] = ev[2 * i + 1].elapsed_since(ev[2 * i]);
            const double med = median(ms);
            const double gbs = (in_bytes + out_bytes) / (med * 1e-3) / 1e9;
            const gpu::KernelInfo k = plan.kernel_info(v, st);
            const std::size_t smem = k.static_smem + k.dynamic_smem;
            if (csv)
              std::printf("%s,%s,%s,%d,%.4f,%.1f,%.1f,%d,%zu,%d,%d,%s\n", sc.name, input,
                          to_string(v), st, med, gbs, 100.0 * gbs / copy_gbs, k.registers,
                          smem, k.threads, k.blocks_per_sm, exact ? "yes" : "NO");
            else
              std::printf("%-5s %-8s %-12s %2d %9.4f %8.1f %6.1f%% %5d %7zu %4d %3d %5s\n",
                          sc.name, input, to_string(v), st, med, gbs,
                          100.0 * gbs / copy_gbs, k.registers, smem, k.threads, k.blocks_per_sm,
                          exact ? "yes" : "NO");
            std::fflush(stdout);
          }
        }
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mjpeg_bench_kernels: %s\n", e.what());
    return 1;
  }
  return differs ? 3 : 0;
}
