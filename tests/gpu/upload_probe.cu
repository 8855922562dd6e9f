// How fast can frames cross PCIe to the GPU, and does the way they are issued matter? The
// question behind AOK's RGB rows: compare's upload stage is what bounds them (one
// cudaMemcpyAsync per frame on one upload stream), so the upload's own ceiling is the ceiling
// of every RGB row, and a way of issuing copies that moves more bytes per second would lift it.
//   upload_probe [FRAME_BYTES] [FRAMES]   (default 6220800 = one 1920x1080 RGB frame, 64)
// Each way copies FRAMES page-locked frames to FRAMES device buffers, three passes, and prints
// the best pass's GB/s and frames per second:
//   one stream          one copy per frame on one stream (what AOK does today)
//   2|3 streams         frames dealt round-robin to 2 or 3 streams (several copy engines)
//   halves on 2 streams each frame's two halves on two streams at once
//   one stream + down   one stream up while another stream copies a tenth of each frame down
//                       (the token streams' downloads that run beside the uploads in AOK)
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "upload_probe: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t frame = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 6220800;
  const int frames = argc > 2 ? std::atoi(argv[2]) : 64;
  if (frame == 0 || frames < 2) {
    std::fprintf(stderr, "usage: upload_probe [FRAME_BYTES] [FRAMES >= 2]\n");
    return 2;
  }
  unsigned char* host = nullptr;
  check(cudaMallocHost(&host, frame * frames), "cudaMallocHost");
  for (std::size_t i = 0; i < frame * frames; i += 4096) host[i] = static_cast<unsigned char>(i);
  unsigned char* dev = nullptr;
  check(cudaMalloc(&dev, frame * frames), "cudaMalloc");
  unsigned char* down_host = nullptr;
  unsigned char* down_dev = nullptr;
  const std::size_t down = frame / 10;
  check(cudaMallocHost(&down_host, down * frames), "cudaMallocHost (down)");
  check(cudaMalloc(&down_dev, down * frames), "cudaMalloc (down)");
  cudaStream_t s[4];
  for (cudaStream_t& x : s) check(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking), "stream");

  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("device %s, %d async engines; %d frames of %zu bytes, best of 3 passes\n", prop.name,
              prop.asyncEngineCount, frames, frame);

  auto run = [&](const char* name, auto issue) {
    double best = 1e30;
    for (int pass = 0; pass < 3; ++pass) {
      check(cudaDeviceSynchronize(), "sync");
      const double t0 = seconds();
      issue();
      check(cudaDeviceSynchronize(), name);
      best = std::min(best, seconds() - t0);
    }
    std::printf("%-20s %6.2f GB/s  %8.1f frames/s\n", name, frame * frames / best / 1e9,
                frames / best);
  };
  auto up = [&](int f, cudaStream_t st) {
    check(cudaMemcpyAsync(dev + frame * f, host + frame * f, frame, cudaMemcpyHostToDevice, st),
          "copy");
  };
  run("one stream", [&] {
    for (int f = 0; f < frames; ++f) up(f, s[0]);
  });
  run("2 streams", [&] {
    for (int f = 0; f < frames; ++f) up(f, s[f % 2]);
  });
  run("3 streams", [&] {
    for (int f = 0; f < frames; ++f) up(f, s[f % 3]);
  });
  run("halves on 2 streams", [&] {
    const std::size_t half = frame / 2;
    for (int f = 0; f < frames; ++f) {
      check(cudaMemcpyAsync(dev + frame * f, host + frame * f, half, cudaMemcpyHostToDevice, s[0]),
            "copy");
      check(cudaMemcpyAsync(dev + frame * f + half, host + frame * f + half, frame - half,
                            cudaMemcpyHostToDevice, s[1]),
            "copy");
    }
  });
  run("one stream + down", [&] {
    for (int f = 0; f < frames; ++f) {
      up(f, s[0]);
      check(cudaMemcpyAsync(down_host + down * f, down_dev + down * f, down,
                            cudaMemcpyDeviceToHost, s[2]),
            "copy down");
    }
  });
  for (cudaStream_t& x : s) cudaStreamDestroy(x);
  cudaFree(down_dev);
  cudaFreeHost(down_host);
  cudaFree(dev);
  cudaFreeHost(host);
  return 0;
}
