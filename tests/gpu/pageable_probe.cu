// Can the GPU read a page-cached file's mapping directly (HMM / pageable memory access), and
// what does it cost the CPU? The question behind issue-free zero-copy input: today the GPU
// modes pread each Y4M frame into a pinned slot, a CPU copy that bounds `mjpeg encode`.
//   pageable_probe FILE [FRAME_BYTES]   (FILE: a few GB, in the page cache)
// Prints the device's pageable-memory attributes; then, frame by frame over the file
// (FRAME_BYTES each, default 3110400 = one 1080p 4:2:0 frame):
//   pread      pread into a pinned buffer + cudaMemcpyAsync (what the GPU modes do today)
//   kernel     a kernel reading the mmap()ed file directly (only with pageable access)
//   memcpy     cudaMemcpyAsync from the mapping (pageable: the driver stages it)
// each with GB/s of wall time and the process's CPU seconds per GB (getrusage), two passes.
#include <cuda_runtime.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

#define CHECK(x)                                                                   \
  do {                                                                             \
    cudaError_t e_ = (x);                                                          \
    if (e_ != cudaSuccess) {                                                       \
      std::printf("%s failed: %s\n", #x, cudaGetErrorString(e_));                  \
      return false;                                                                \
    }                                                                              \
  } while (0)

// Copies n bytes (a multiple of 16) from src (host mapping) to dst (device), 16 bytes a load.
__global__ void read_mapping(const uint4* src, uint4* dst, size_t n16) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n16;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

struct Result {
  double wall = 0, cpu = 0;
};

void report(const char* name, int pass, size_t bytes, Result r) {
  std::printf("%-7s pass %d: %7.2f GB/s, %6.3f CPU s per GB\n", name, pass, bytes / r.wall / 1e9,
              r.cpu / (bytes / 1e9));
}

bool run(const char* path, size_t frame) {
  int attr = 0, host_tables = 0, reg = 0, concurrent = 0;
  CHECK(cudaDeviceGetAttribute(&attr, cudaDevAttrPageableMemoryAccess, 0));
  CHECK(cudaDeviceGetAttribute(&host_tables, cudaDevAttrPageableMemoryAccessUsesHostPageTables, 0));
  CHECK(cudaDeviceGetAttribute(&reg, cudaDevAttrHostRegisterSupported, 0));
  CHECK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, 0));
  std::printf("pageableMemoryAccess %d, usesHostPageTables %d, hostRegisterSupported %d, "
              "concurrentManagedAccess %d\n", attr, host_tables, reg, concurrent);

  const int fd = open(path, O_RDONLY);
  struct stat st{};
  if (fd < 0 || fstat(fd, &st) != 0) {
    std::printf("cannot open %s\n", path);
    return false;
  }
  frame = frame / 16 * 16;
  const size_t frames = static_cast<size_t>(st.st_size) / frame;
  const size_t bytes = frames * frame;
  const auto* map = static_cast<const unsigned char*>(mmap(nullptr, st.st_size, PROT_READ, MAP_SHARED, fd, 0));
  if (map == MAP_FAILED) {
    std::printf("mmap failed\n");
    return false;
  }
  std::printf("%zu frames of %zu bytes (%.2f GB)\n", frames, frame, bytes / 1e9);
  unsigned char *pinned[2], *dev[2];
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (int i = 0; i < 2; ++i) {
    CHECK(cudaMallocHost(&pinned[i], frame));
    CHECK(cudaMalloc(&dev[i], frame));
  }
  cudaEvent_t done[2];
  for (auto& e : done) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));

  auto timed = [&](auto body) {
    const double w0 = seconds(), c0 = cpu_seconds();
    body();
    cudaStreamSynchronize(stream);
    return Result{seconds() - w0, cpu_seconds() - c0};
  };
  for (int pass = 1; pass <= 2; ++pass) {
    // Today's path: pread into one of two pinned buffers while the other uploads.
    report("pread", pass, bytes, timed([&] {
             for (size_t f = 0; f < frames; ++f) {
               const int b = f & 1;
               cudaEventSynchronize(done[b]);
               size_t got = 0;
               while (got < frame) {
                 const ssize_t r = pread(fd, pinned[b] + got, frame - got, static_cast<off_t>(f * frame + got));
                 if (r <= 0) break;
                 got += r;
               }
               cudaMemcpyAsync(dev[b], pinned[b], frame, cudaMemcpyHostToDevice, stream);
               cudaEventRecord(done[b], stream);
             }
           }));
    report("memcpy", pass, bytes, timed([&] {
             for (size_t f = 0; f < frames; ++f)
               cudaMemcpyAsync(dev[f & 1], map + f * frame, frame, cudaMemcpyHostToDevice, stream);
           }));
    if (attr) {
      const Result r = timed([&] {
        for (size_t f = 0; f < frames; ++f)
          read_mapping<<<264, 512, 0, stream>>>(reinterpret_cast<const uint4*>(map + f * frame),
                                                reinterpret_cast<uint4*>(dev[f & 1]), frame / 16);
      });
      const cudaError_t e = cudaGetLastError();
      if (e != cudaSuccess) std::printf("kernel: %s\n", cudaGetErrorString(e));
      report("kernel", pass, bytes, r);
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: pageable_probe FILE [FRAME_BYTES]\n");
    return 2;
  }
  return run(argv[1], argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 3110400) ? 0 : 1;
}
