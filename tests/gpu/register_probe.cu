// What page-locking a page-cached file costs, against reading it into pinned memory: the
// measurement behind the GPU modes reading Y4M files with pread instead of uploading from a
// registered mapping (README, "Planar input").
//   register_probe FILE        (FILE: a few GB in the page cache)
// For windows of 64, 8 and 2 MB and 1..8 threads registering disjoint windows at once
// (cudaHostRegister, read-only, portable; the mapping populated first or not): GB/s of
// registration and of unregistration. Then pread of 1080p 4:2:0 frames (3110400 bytes) into
// pinned buffers by 1..8 threads. Env LOAD=N: N threads copying 64 MB buffers meanwhile (the
// memory traffic of the entropy workers). Built and run by tests/gpu/check.sh (part register).
#include <cuda_runtime.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs job(i) for i in [0, n) on `threads` threads; returns the wall time.
template <typename Job>
double spread(int threads, std::size_t n, Job job) {
  std::atomic<std::size_t> next{0};
  const double t0 = seconds();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (std::size_t i; (i = next++) < n;) job(t, i);
    });
  for (auto& p : pool) p.join();
  return seconds() - t0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: register_probe FILE\n");
    return 2;
  }
  const int fd = open(argv[1], O_RDONLY);
  if (fd < 0) {
    std::perror(argv[1]);
    return 1;
  }
  const auto size = static_cast<std::size_t>(lseek(fd, 0, SEEK_END));
  if (cudaFree(nullptr) != cudaSuccess) {
    std::fprintf(stderr, "register_probe: no usable CUDA device\n");
    return 1;
  }
  const int load = std::getenv("LOAD") ? std::atoi(std::getenv("LOAD")) : 0;
  std::atomic<bool> stop{false};
  std::vector<std::thread> loaders;
  for (int i = 0; i < load; ++i)
    loaders.emplace_back([&] {
      std::vector<char> a(std::size_t(64) << 20, 1), b(a.size());
      while (!stop) std::memcpy(b.data(), a.data(), a.size());
    });
  std::printf("file %zu MB, %d copy threads as load\n", size >> 20, load);
  for (const bool populate : {false, true}) {
    for (const std::size_t mb : {64, 8, 2}) {
      for (const int threads : {1, 2, 4, 8}) {
        void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED | (populate ? MAP_POPULATE : 0), fd, 0);
        if (map == MAP_FAILED) {
          std::perror("mmap");
          return 1;
        }
        auto* base = static_cast<char*>(map);
        const std::size_t window = mb << 20;
        const std::size_t windows = std::min<std::size_t>(size, std::size_t(2) << 30) / window;
        std::atomic<int> failed{0};
        const double reg = spread(threads, windows, [&](int, std::size_t w) {
          if (cudaHostRegister(base + w * window, window,
                               cudaHostRegisterPortable | cudaHostRegisterReadOnly) != cudaSuccess)
            ++failed;
        });
        const double unreg = spread(threads, windows, [&](int, std::size_t w) {
          (void)cudaHostUnregister(base + w * window);
        });
        const double gb = static_cast<double>(windows * window) / 1e9;
        std::printf("register: populated %d, %3zu MB windows, %d threads: %5.1f GB/s (%zu windows, "
                    "%d failed); unregister %5.1f GB/s\n",
                    populate, mb, threads, gb / reg, windows, failed.load(), gb / unreg);
        munmap(map, size);
      }
    }
  }
  const std::size_t frame = 3110400;
  const std::size_t frames = std::min<std::size_t>(size / frame, 1200);
  for (const int threads : {1, 2, 4, 6, 8}) {
    std::vector<void*> buffers(static_cast<std::size_t>(threads));
    for (void*& b : buffers)
      if (cudaHostAlloc(&b, frame, cudaHostAllocPortable) != cudaSuccess) return 1;
    std::atomic<bool> short_read{false};  // set by any of the reading threads
    const double t = spread(threads, frames, [&](int th, std::size_t f) {
      if (pread(fd, buffers[static_cast<std::size_t>(th)], frame, static_cast<off_t>(f * frame)) !=
          static_cast<ssize_t>(frame))
        short_read = true;
    });
    std::printf("pread into pinned buffers, %d threads: %5.1f GB/s, %6.0f frames/s, %.3f ms per "
                "frame per thread%s\n",
                threads, static_cast<double>(frames * frame) / 1e9 / t, frames / t,
                t * 1e3 * threads / frames, short_read.load() ? " (SHORT READS)" : "");
    for (void* b : buffers) cudaFreeHost(b);
  }
  stop = true;
  for (auto& l : loaders) l.join();
  return 0;
}
