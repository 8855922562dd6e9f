// nvJPEG as a peer of `mjpeg compare`, for the GPU machine (whose CUDA has nvJPEG; the CUDA
// here has not, so mjpeg itself is never built with it). It encodes the same frames compare
// encodes for `--size WxH` from a still image: WxH windows panning across the tiled picture,
// 8 pixels right and 3 down per frame. T host threads, each with its own CUDA stream, nvJPEG
// encoder state and pinned input frame, upload a frame, encode it on the GPU (nvJPEG does the
// Huffman coding there too) and copy the bitstream back; frame i goes to thread i % T.
//
//   nvcc -O2 -std=c++17 -o nvjpeg_peer tests/gpu/nvjpeg_peer.cpp -lnvjpeg
//   nvjpeg_peer PICTURE.ppm [--size 1920x1080] [--frames 300] [--threads 4] [--quality 90]
//              [--repeat 3]
// Prints one line: frames/s (median of the repeats, after a warm-up) and bytes per frame.
#include <cuda_runtime.h>
#include <nvjpeg.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e));
}
void check(nvjpegStatus_t s, const char* what) {
  if (s != NVJPEG_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": nvJPEG status " + std::to_string(int(s)));
}

struct Picture {
  int width = 0, height = 0;
  std::vector<unsigned char> rgb;
};

/// A binary PPM with maxval 255 (no comments), as tests/gpu/make_y4m_clip.py reads.
Picture read_ppm(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string magic;
  int maxval = 0;
  Picture p;
  in >> magic >> p.width >> p.height >> maxval;
  in.get();
  if (!in || magic != "P6" || maxval != 255 || p.width < 1 || p.height < 1)
    throw std::runtime_error(path + ": expected an 8-bit binary PPM");
  p.rgb.resize(std::size_t(p.width) * p.height * 3);
  in.read(reinterpret_cast<char*>(p.rgb.data()), std::streamsize(p.rgb.size()));
  if (!in) throw std::runtime_error(path + ": truncated");
  return p;
}

/// Frame i of width x height: the window at (8i, 3i) of the tiled picture (as mjpeg compare).
void panning_frame(const Picture& p, int i, int width, int height, unsigned char* out) {
  const int x0 = int((8LL * i) % p.width), y0 = int((3LL * i) % p.height);
  for (int y = 0; y < height; ++y) {
    const unsigned char* row = p.rgb.data() + std::size_t((y0 + y) % p.height) * p.width * 3;
    unsigned char* dst = out + std::size_t(y) * width * 3;
    for (int x = 0; x < width;) {
      const int sx = (x0 + x) % p.width;
      const int run = std::min(width - x, p.width - sx);
      std::memcpy(dst + std::size_t(x) * 3, row + std::size_t(sx) * 3, std::size_t(run) * 3);
      x += run;
    }
  }
}

/// One thread's encoder: stream, nvJPEG state and parameters, device frame, output buffer.
class Worker {
 public:
  Worker(nvjpegHandle_t handle, int width, int height, int quality)
      : handle_(handle), width_(width), height_(height) {
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(nvjpegEncoderStateCreate(handle_, &state_, stream_), "nvjpegEncoderStateCreate");
    check(nvjpegEncoderParamsCreate(handle_, &params_, stream_), "nvjpegEncoderParamsCreate");
    check(nvjpegEncoderParamsSetQuality(params_, quality, stream_), "SetQuality");
    check(nvjpegEncoderParamsSetSamplingFactors(params_, NVJPEG_CSS_420, stream_), "SetSampling");
    check(nvjpegEncoderParamsSetOptimizedHuffman(params_, 0, stream_), "SetOptimizedHuffman");
    check(cudaMalloc(&device_rgb_, std::size_t(width) * height * 3), "cudaMalloc");
    output_.resize(std::size_t(width) * height * 3);
  }
  ~Worker() {
    cudaFree(device_rgb_);
    nvjpegEncoderParamsDestroy(params_);
    nvjpegEncoderStateDestroy(state_);
    cudaStreamDestroy(stream_);
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  /// Uploads `pinned_rgb`, encodes, retrieves the JPEG; returns its size.
  std::size_t encode(const unsigned char* pinned_rgb) {
    check(cudaMemcpyAsync(device_rgb_, pinned_rgb, std::size_t(width_) * height_ * 3,
                          cudaMemcpyHostToDevice, stream_),
          "upload");
    nvjpegImage_t image{};
    image.channel[0] = static_cast<unsigned char*>(device_rgb_);
    image.pitch[0] = std::size_t(width_) * 3;
    check(nvjpegEncodeImage(handle_, state_, params_, &image, NVJPEG_INPUT_RGBI, width_, height_,
                            stream_),
          "nvjpegEncodeImage");
    std::size_t length = 0;
    check(nvjpegEncodeRetrieveBitstream(handle_, state_, nullptr, &length, stream_), "length");
    if (length > output_.size()) output_.resize(length);
    check(nvjpegEncodeRetrieveBitstream(handle_, state_, output_.data(), &length, stream_),
          "retrieve");
    check(cudaStreamSynchronize(stream_), "sync");
    return length;
  }

 private:
  nvjpegHandle_t handle_;
  int width_, height_;
  cudaStream_t stream_{};
  nvjpegEncoderState_t state_{};
  nvjpegEncoderParams_t params_{};
  void* device_rgb_ = nullptr;
  std::vector<unsigned char> output_;
};

int arg_int(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  return fallback;
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2) {
    std::fprintf(stderr, "usage: nvjpeg_peer PICTURE.ppm [--size WxH] [--frames N] [--threads T] "
                         "[--quality Q] [--repeat R]\n");
    return 2;
  }
  int width = 1920, height = 1080;
  for (int i = 2; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--size") == 0 && std::sscanf(argv[i + 1], "%dx%d", &width, &height) != 2)
      throw std::runtime_error("--size expects WxH");
  const int frames = arg_int(argc, argv, "--frames", 300);
  const int threads = arg_int(argc, argv, "--threads", 4);
  const int quality = arg_int(argc, argv, "--quality", 90);
  const int repeat = arg_int(argc, argv, "--repeat", 3);
  if (frames < 1 || threads < 1 || repeat < 1 || quality < 1 || quality > 100)
    throw std::runtime_error("bad arguments");

  const Picture picture = read_ppm(argv[1]);
  const std::size_t frame_bytes = std::size_t(width) * height * 3;
  unsigned char* pinned = nullptr;  // every frame, in pinned host memory
  check(cudaMallocHost(reinterpret_cast<void**>(&pinned), frame_bytes * frames), "cudaMallocHost");
  for (int i = 0; i < frames; ++i) panning_frame(picture, i, width, height, pinned + frame_bytes * i);

  nvjpegHandle_t handle{};
  check(nvjpegCreateSimple(&handle), "nvjpegCreateSimple");
  std::vector<Worker*> workers;
  for (int t = 0; t < threads; ++t) workers.push_back(new Worker(handle, width, height, quality));

  // One pass over `count` frames with all threads; returns seconds and total bytes.
  auto pass = [&](int count, std::size_t& bytes) {
    std::vector<std::size_t> sizes(std::size_t(threads), 0);
    std::vector<std::thread> pool;
    std::vector<std::string> errors(static_cast<std::size_t>(threads));
    const auto t0 = std::chrono::steady_clock::now();
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        try {
          for (int i = t; i < count; i += threads)
            sizes[std::size_t(t)] += workers[std::size_t(t)]->encode(pinned + frame_bytes * i);
        } catch (const std::exception& e) {
          errors[std::size_t(t)] = e.what();
        }
      });
    for (std::thread& th : pool) th.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (const std::string& e : errors)
      if (!e.empty()) throw std::runtime_error(e);
    bytes = 0;
    for (std::size_t v : sizes) bytes += v;
    return s;
  };
  std::size_t bytes = 0;
  pass(std::min(frames, 16), bytes);  // warm-up
  std::vector<double> times;
  for (int r = 0; r < repeat; ++r) times.push_back(pass(frames, bytes));
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  std::printf("nvJPEG %dx%d q%d 4:2:0, %d frames, %d threads/streams, input in pinned host "
              "memory: %.1f fps, %.1f KB/frame, %.3f bits/pixel (median of %d)\n",
              width, height, quality, frames, threads, frames / median,
              double(bytes) / frames / 1e3, 8.0 * double(bytes) / frames / (double(width) * height),
              repeat);
  for (Worker* w : workers) delete w;
  nvjpegDestroy(handle);
  cudaFreeHost(pinned);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "nvjpeg_peer: error: %s\n", e.what());
  return 1;
}
