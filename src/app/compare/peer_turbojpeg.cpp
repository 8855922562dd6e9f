#include "peer_turbojpeg.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#if MJPEG_HAVE_TURBOJPEG
#include <turbojpeg.h>
#endif

#include "mjpeg/error.hpp"

namespace mjpeg::app {

#if MJPEG_HAVE_TURBOJPEG
namespace {

int tj_subsampling(Subsampling s) {
  switch (s) {
    case Subsampling::s444: return TJSAMP_444;
    case Subsampling::s422: return TJSAMP_422;
    case Subsampling::s420: return TJSAMP_420;
    case Subsampling::gray: return TJSAMP_GRAY;
  }
  return TJSAMP_420;
}

/// One thread's compressor: a handle and an output buffer sized once for the worst case.
class Compressor {
 public:
  Compressor(int width, int height, int sampling) : handle_(tjInitCompress()) {
    if (!handle_) throw Error("TurboJPEG: cannot create a compressor");
    size_ = tjBufSize(width, height, sampling);
    buffer_ = tjAlloc(static_cast<int>(size_));
    if (!buffer_) throw Error("TurboJPEG: out of memory");
  }
  ~Compressor() {
    tjFree(buffer_);
    tjDestroy(handle_);
  }
  Compressor(const Compressor&) = delete;
  Compressor& operator=(const Compressor&) = delete;

  /// Compresses into the buffer; returns the JPEG's size.
  unsigned long compress(const ImageView& f, int sampling, int quality, int flags) {
    unsigned long size = size_;
    const int pf = f.format == PixelFormat::gray8 ? TJPF_GRAY : TJPF_RGB;
    if (tjCompress2(handle_, f.data, f.width, static_cast<int>(f.stride), f.height, pf, &buffer_,
                    &size, sampling, quality, flags | TJFLAG_NOREALLOC) != 0)
      throw Error(std::string("TurboJPEG: ") + tjGetErrorStr2(handle_));
    return size;
  }
  const unsigned char* data() const { return buffer_; }

 private:
  tjhandle handle_;
  unsigned char* buffer_ = nullptr;
  unsigned long size_ = 0;
};

}  // namespace

PeerResult run_turbojpeg(const std::vector<ImageView>& frames, const EncodeOptions& options,
                         int threads, const std::vector<std::vector<std::uint8_t>>& reference) {
  PeerResult r;
  r.available = true;
  if (frames.empty()) return r;
  // Gray input is always coded as gray (as ours does).
  const int sampling = frames[0].format == PixelFormat::gray8
                           ? TJSAMP_GRAY
                           : tj_subsampling(options.subsampling);
  // islow DCT like ours and cjpeg; flags = 0 would pick the faster, less exact ifast DCT.
  int flags = TJFLAG_ACCURATEDCT;
  std::string unsupported;
  if (options.restart_interval != 0) unsupported = "a restart interval";
  if (options.progressive) unsupported = "spectral-selection scan scripts (--progressive)";
  if (options.tune != Tune::none || !options.qtables.empty() || !options.qslots.empty())
    unsupported = "custom quantization tables (it encodes with Annex K)";
  if (options.rdo != Rdo::off) unsupported = "rate-distortion quantization (--rdo)";
#ifdef TJFLAG_OPTIMIZE
  if (options.optimize) flags |= TJFLAG_OPTIMIZE;
#else
  if (options.optimize) unsupported = "optimized Huffman tables";
#endif
  const bool check = reference.size() == frames.size() && unsupported.empty();
  r.identity_note = !unsupported.empty() ? "not compared: this TurboJPEG API has no " + unsupported
                    : !check             ? "not compared"
                                         : "";

  std::vector<std::thread> pool;
  std::mutex mutex;
  std::exception_ptr error;
  std::uint64_t bytes = 0;
  std::int64_t first_difference = -1;
  const auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      try {
        Compressor c(frames[0].width, frames[0].height, sampling);
        std::uint64_t my_bytes = 0;
        std::int64_t my_diff = -1;
        for (std::size_t i = static_cast<std::size_t>(t); i < frames.size();
             i += static_cast<std::size_t>(threads)) {
          const unsigned long size = c.compress(frames[i], sampling, options.quality, flags);
          my_bytes += size;
          if (check && my_diff < 0 &&
              (reference[i].size() != size ||
               !std::equal(reference[i].begin(), reference[i].end(), c.data())))
            my_diff = static_cast<std::int64_t>(i);
        }
        std::lock_guard<std::mutex> lock(mutex);
        bytes += my_bytes;
        if (my_diff >= 0 && (first_difference < 0 || my_diff < first_difference))
          first_difference = my_diff;
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!error) error = std::current_exception();
      }
    });
  }
  for (std::thread& th : pool) th.join();
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (error) std::rethrow_exception(error);
  r.frames = static_cast<std::int64_t>(frames.size());
  r.jpeg_bytes = bytes;
  r.identical = check && first_difference < 0;
  if (check && first_difference >= 0)
    r.identity_note = fmt::format("frame {} differs from mjpeg's", first_difference);
  return r;
}

#else

PeerResult run_turbojpeg(const std::vector<ImageView>&, const EncodeOptions&, int,
                         const std::vector<std::vector<std::uint8_t>>&) {
  PeerResult r;
  r.why_not = "this build has no TurboJPEG (turbojpeg.h was not found)";
  return r;
}

#endif

PeerResult run_turbojpeg_median(const std::vector<ImageView>& frames, const EncodeOptions& options,
                                int threads, const std::vector<std::vector<std::uint8_t>>& reference,
                                int repeat) {
  std::vector<PeerResult> runs;
  for (int i = 0; i < std::max(1, repeat); ++i) {
    runs.push_back(run_turbojpeg(frames, options, threads, reference));
    if (!runs.back().available) break;
  }
  std::sort(runs.begin(), runs.end(),
            [](const PeerResult& a, const PeerResult& b) { return a.wall_s > b.wall_s; });
  return runs[runs.size() / 2];
}

}  // namespace mjpeg::app
