// nvJPEG as an in-process peer (see peer_nvjpeg.hpp). The few nvJPEG entry points used are
// declared here from the library's documented C API and looked up with dlsym, so the build
// needs no nvjpeg.h (this machine's CUDA has none) and the binary no libnvjpeg.
#include "peer_nvjpeg.hpp"

#include "mjpeg/error.hpp"

#if !MJPEG_WITH_CUDA

namespace mjpeg::app {

NvjpegResult run_nvjpeg(const std::vector<ImageView>&, const EncodeOptions&, int threads, int,
                        int) {
  NvjpegResult r;
  r.why_not = kBuiltWithoutCuda;
  r.threads = threads;
  return r;
}

}  // namespace mjpeg::app

#else

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace mjpeg::app {
namespace {

// The C API's types (opaque handles, status and enums as the nvJPEG documentation gives them).
using Status = int;  // nvjpegStatus_t; 0 = NVJPEG_STATUS_SUCCESS
using Handle = struct NvjpegHandleOpaque*;
using EncoderState = struct NvjpegEncoderStateOpaque*;
using EncoderParams = struct NvjpegEncoderParamsOpaque*;
struct Image {  // nvjpegImage_t
  unsigned char* channel[4];
  std::size_t pitch[4];
};
constexpr int kInputRgbInterleaved = 5;  // NVJPEG_INPUT_RGBI
constexpr int kCss444 = 0, kCss422 = 1, kCss420 = 2;  // nvjpegChromaSubsampling_t

/// The entry points, from one dlopen'd library.
struct Api {
  void* lib = nullptr;
  std::string name;
  Status (*create_simple)(Handle*) = nullptr;
  Status (*destroy)(Handle) = nullptr;
  Status (*state_create)(Handle, EncoderState*, cudaStream_t) = nullptr;
  Status (*state_destroy)(EncoderState) = nullptr;
  Status (*params_create)(Handle, EncoderParams*, cudaStream_t) = nullptr;
  Status (*params_destroy)(EncoderParams) = nullptr;
  Status (*set_quality)(EncoderParams, int, cudaStream_t) = nullptr;
  Status (*set_optimized_huffman)(EncoderParams, int, cudaStream_t) = nullptr;
  Status (*set_sampling)(EncoderParams, int, cudaStream_t) = nullptr;
  Status (*encode_image)(Handle, EncoderState, EncoderParams, const Image*, int, int, int,
                         cudaStream_t) = nullptr;
  Status (*retrieve)(Handle, EncoderState, unsigned char*, std::size_t*, cudaStream_t) = nullptr;

  ~Api() {
    if (lib) dlclose(lib);
  }
  /// Loads the library and every symbol; returns "" or why not.
  std::string load() {
    for (const char* n : {"libnvjpeg.so.13", "libnvjpeg.so.12", "libnvjpeg.so"}) {
      lib = dlopen(n, RTLD_NOW | RTLD_LOCAL);
      if (lib) {
        name = n;
        break;
      }
    }
    if (!lib) return "libnvjpeg not found (dlopen libnvjpeg.so.13/.12/.so failed)";
    auto sym = [&](auto& fn, const char* s) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, s));
      if (!fn) throw std::runtime_error(name + " has no " + s);
    };
    try {
      sym(create_simple, "nvjpegCreateSimple");
      sym(destroy, "nvjpegDestroy");
      sym(state_create, "nvjpegEncoderStateCreate");
      sym(state_destroy, "nvjpegEncoderStateDestroy");
      sym(params_create, "nvjpegEncoderParamsCreate");
      sym(params_destroy, "nvjpegEncoderParamsDestroy");
      sym(set_quality, "nvjpegEncoderParamsSetQuality");
      sym(set_optimized_huffman, "nvjpegEncoderParamsSetOptimizedHuffman");
      sym(set_sampling, "nvjpegEncoderParamsSetSamplingFactors");
      sym(encode_image, "nvjpegEncodeImage");
      sym(retrieve, "nvjpegEncodeRetrieveBitstream");
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  }
};

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e));
}
void check(Status s, const char* what) {
  if (s != 0) throw std::runtime_error(std::string(what) + ": nvJPEG status " + std::to_string(s));
}

/// One thread's encoder: stream, state, parameters, device frame, output buffer.
class Worker {
 public:
  Worker(const Api& api, Handle handle, int width, int height, const EncodeOptions& o)
      : api_(api), handle_(handle), width_(width), height_(height) {
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(api_.state_create(handle_, &state_, stream_), "nvjpegEncoderStateCreate");
    check(api_.params_create(handle_, &params_, stream_), "nvjpegEncoderParamsCreate");
    check(api_.set_quality(params_, o.quality, stream_), "nvjpegEncoderParamsSetQuality");
    const int css = o.subsampling == Subsampling::s420   ? kCss420
                    : o.subsampling == Subsampling::s422 ? kCss422
                                                         : kCss444;
    check(api_.set_sampling(params_, css, stream_), "nvjpegEncoderParamsSetSamplingFactors");
    check(api_.set_optimized_huffman(params_, o.optimize ? 1 : 0, stream_),
          "nvjpegEncoderParamsSetOptimizedHuffman");
    check(cudaMalloc(&device_rgb_, std::size_t(width) * height * 3), "cudaMalloc");
    output_.resize(std::size_t(width) * height * 3);
  }
  ~Worker() {
    if (device_rgb_) cudaFree(device_rgb_);
    if (params_) api_.params_destroy(params_);
    if (state_) api_.state_destroy(state_);
    if (stream_) cudaStreamDestroy(stream_);
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  std::size_t encode(const unsigned char* pinned_rgb) {
    check(cudaMemcpyAsync(device_rgb_, pinned_rgb, std::size_t(width_) * height_ * 3,
                          cudaMemcpyHostToDevice, stream_),
          "upload");
    Image image{};
    image.channel[0] = static_cast<unsigned char*>(device_rgb_);
    image.pitch[0] = std::size_t(width_) * 3;
    check(api_.encode_image(handle_, state_, params_, &image, kInputRgbInterleaved, width_,
                            height_, stream_),
          "nvjpegEncodeImage");
    std::size_t length = 0;
    check(api_.retrieve(handle_, state_, nullptr, &length, stream_), "nvjpegEncodeRetrieveBitstream");
    if (length > output_.size()) output_.resize(length);
    check(api_.retrieve(handle_, state_, output_.data(), &length, stream_),
          "nvjpegEncodeRetrieveBitstream");
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    return length;
  }

 private:
  const Api& api_;
  Handle handle_;
  int width_, height_;
  cudaStream_t stream_ = nullptr;
  EncoderState state_ = nullptr;
  EncoderParams params_ = nullptr;
  void* device_rgb_ = nullptr;
  std::vector<unsigned char> output_;
};

/// Pinned host copy of every frame (freed on scope exit).
struct PinnedFrames {
  unsigned char* data = nullptr;
  ~PinnedFrames() {
    if (data) cudaFreeHost(data);
  }
};

}  // namespace

NvjpegResult run_nvjpeg(const std::vector<ImageView>& frames, const EncodeOptions& options,
                        int threads, int repeat, int device) {
  NvjpegResult r;
  r.threads = threads;
  if (frames.empty() || threads < 1 || repeat < 1) {
    r.why_not = "nothing to encode";
    return r;
  }
  if (options.subsampling == Subsampling::gray || frames[0].format != PixelFormat::rgb24) {
    r.why_not = "compared on RGB input with chroma only";
    return r;
  }
  if (options.restart_interval != 0) {
    r.why_not = "nvJPEG's encoder has no restart-interval setting";
    return r;
  }
  Api api;
  r.why_not = api.load();
  if (!r.why_not.empty()) return r;
  r.library = api.name;
  try {
    check(cudaSetDevice(device), "cudaSetDevice");
    const int width = frames[0].width, height = frames[0].height;
    const std::size_t frame_bytes = std::size_t(width) * height * 3;
    PinnedFrames pinned;
    check(cudaMallocHost(reinterpret_cast<void**>(&pinned.data), frame_bytes * frames.size()),
          "cudaMallocHost");
    for (std::size_t i = 0; i < frames.size(); ++i)
      for (int y = 0; y < height; ++y)
        std::memcpy(pinned.data + i * frame_bytes + std::size_t(y) * width * 3,
                    frames[i].data + std::size_t(y) * frames[i].stride, std::size_t(width) * 3);
    struct HandleGuard {  // destroyed after the workers below
      const Api& api;
      Handle handle = nullptr;
      ~HandleGuard() {
        if (handle) api.destroy(handle);
      }
    } guard{api};
    check(api.create_simple(&guard.handle), "nvjpegCreateSimple");
    const Handle handle = guard.handle;
    std::vector<std::unique_ptr<Worker>> workers;
    for (int t = 0; t < threads; ++t)
      workers.push_back(std::make_unique<Worker>(api, handle, width, height, options));

    auto pass = [&](std::size_t count, std::uint64_t& bytes) {
      std::vector<std::uint64_t> sizes(static_cast<std::size_t>(threads), 0);
      std::vector<std::string> errors(static_cast<std::size_t>(threads));
      std::vector<std::thread> pool;
      const auto t0 = std::chrono::steady_clock::now();
      for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
          try {
            check(cudaSetDevice(device), "cudaSetDevice");
            for (std::size_t i = static_cast<std::size_t>(t); i < count;
                 i += static_cast<std::size_t>(threads))
              sizes[static_cast<std::size_t>(t)] +=
                  workers[static_cast<std::size_t>(t)]->encode(pinned.data + frame_bytes * i);
          } catch (const std::exception& e) {
            errors[static_cast<std::size_t>(t)] = e.what();
          }
        });
      for (std::thread& th : pool) th.join();
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      for (const std::string& e : errors)
        if (!e.empty()) throw std::runtime_error(e);
      bytes = 0;
      for (std::uint64_t v : sizes) bytes += v;
      return s;
    };
    std::uint64_t bytes = 0;
    pass(std::min<std::size_t>(frames.size(), 16), bytes);  // warm-up
    std::vector<double> times;
    for (int i = 0; i < repeat; ++i) times.push_back(pass(frames.size(), bytes));
    std::sort(times.begin(), times.end());
    r.wall_s = times[times.size() / 2];
    r.frames = static_cast<std::int64_t>(frames.size());
    r.jpeg_bytes = bytes;
    r.available = true;
  } catch (const std::exception& e) {
    r.available = false;
    r.why_not = e.what();
  }
  return r;
}

}  // namespace mjpeg::app

#endif  // MJPEG_WITH_CUDA
