// NVDEC decoding through the cuvid API (nvdec.hpp). The driver's libraries are loaded with the
// dynlink loader of FFmpeg's nv-codec-headers (no link-time dependency); this file sees the
// driver API only through those headers (never cuda.h or the runtime's headers, whose types
// they redefine) and calls the runtime through device_frames.hpp's plain entry points.
#include "nvdec.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

// The loader's own messages ("Cannot load libnvcuvid.so.1") stay quiet: nvdec_problem says
// why in mjpeg's words, once.
#define FFNV_LOG_FUNC(logctx, msg, ...) ((void)(logctx))
#define FFNV_DEBUG_LOG_FUNC(logctx, msg, ...) ((void)(logctx))
#include <ffnvcodec/dynlink_loader.h>

#include "device_frames.hpp"
#include "device_info.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg::gpu {
namespace {

// ---------------------------------------------------------------------------------------------
// The driver's libraries, loaded once
// ---------------------------------------------------------------------------------------------

struct Driver {
  CudaFunctions* cu = nullptr;
  CuvidFunctions* cuvid = nullptr;
  std::string problem;  // why NVDEC cannot be used here, or empty
};

const Driver& driver() {
  static Driver d = [] {
    Driver r;
    if (cuda_load_functions(&r.cu, nullptr) != 0 || r.cu == nullptr) {
      r.problem = "the CUDA driver library (libcuda.so.1) cannot be loaded";
      return r;
    }
    if (cuvid_load_functions(&r.cuvid, nullptr) != 0 || r.cuvid == nullptr) {
      r.problem = "NVDEC's library (libnvcuvid.so.1) cannot be loaded";
      return r;
    }
    if (r.cuvid->cuvidGetDecoderCaps == nullptr) {
      r.problem = "this driver's libnvcuvid.so.1 has no cuvidGetDecoderCaps";
      return r;
    }
    if (r.cu->cuInit(0) != CUDA_SUCCESS) r.problem = "the CUDA driver does not initialise";
    return r;
  }();
  return d;
}

std::string cu_text(CUresult r) {
  const char* name = nullptr;
  if (driver().cu && driver().cu->cuGetErrorName) driver().cu->cuGetErrorName(r, &name);
  return name ? name : "CUDA error " + std::to_string(static_cast<int>(r));
}

void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) throw Error(std::string("NVDEC: ") + what + " failed: " + cu_text(r));
}

const char* codec_name(NvdecCodec c) {
  switch (c) {
    case NvdecCodec::h264: return "H.264";
    case NvdecCodec::hevc: return "HEVC";
    case NvdecCodec::vp9: return "VP9";
    case NvdecCodec::mpeg2: return "MPEG-2";
  }
  return "?";
}

cudaVideoCodec cuvid_codec(NvdecCodec c) {
  switch (c) {
    case NvdecCodec::h264: return cudaVideoCodec_H264;
    case NvdecCodec::hevc: return cudaVideoCodec_HEVC;
    case NvdecCodec::vp9: return cudaVideoCodec_VP9;
    case NvdecCodec::mpeg2: return cudaVideoCodec_MPEG2;
  }
  return cudaVideoCodec_H264;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// The device's primary context (the one the CUDA runtime uses), retained while alive.
class PrimaryContext {
 public:
  explicit PrimaryContext(int device) {
    const Driver& d = driver();
    if (!d.problem.empty()) throw Error("NVDEC: " + d.problem);
    check(d.cu->cuDeviceGet(&dev_, device), "cuDeviceGet");
    check(d.cu->cuDevicePrimaryCtxRetain(&ctx_, dev_), "cuDevicePrimaryCtxRetain");
  }
  ~PrimaryContext() { driver().cu->cuDevicePrimaryCtxRelease(dev_); }
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;
  CUcontext get() const { return ctx_; }

 private:
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
};

/// Makes a context current in this thread for a scope.
class Push {
 public:
  explicit Push(CUcontext ctx) { check(driver().cu->cuCtxPushCurrent(ctx), "cuCtxPushCurrent"); }
  ~Push() {
    CUcontext popped = nullptr;
    driver().cu->cuCtxPopCurrent(&popped);
  }
  Push(const Push&) = delete;
  Push& operator=(const Push&) = delete;
};

/// A cuvid parser of `codec` that calls `user`'s callbacks (inside parse), destroyed with the
/// object. ulMaxNumDecodeSurfaces is 1: the sequence callback says how many.
class Parser {
 public:
  Parser(NvdecCodec codec, void* user, PFNVIDSEQUENCECALLBACK sequence, PFNVIDDECODECALLBACK decode,
         PFNVIDDISPLAYCALLBACK display, unsigned display_delay) {
    CUVIDPARSERPARAMS pp{};
    pp.CodecType = cuvid_codec(codec);
    pp.ulMaxNumDecodeSurfaces = 1;
    pp.ulMaxDisplayDelay = display_delay;
    pp.ulErrorThreshold = 0;
    pp.pUserData = user;
    pp.pfnSequenceCallback = sequence;
    pp.pfnDecodePicture = decode;
    pp.pfnDisplayPicture = display;
    check(driver().cuvid->cuvidCreateVideoParser(&parser_, &pp), "cuvidCreateVideoParser");
  }
  ~Parser() { driver().cuvid->cuvidDestroyVideoParser(parser_); }
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;

  CUresult parse(const std::uint8_t* data, std::size_t size, unsigned long flags = 0,
                 std::int64_t timestamp = 0) {
    CUVIDSOURCEDATAPACKET sp{};
    sp.flags = flags;
    sp.payload = data;
    sp.payload_size = static_cast<tcu_ulong>(size);
    sp.timestamp = timestamp;
    return driver().cuvid->cuvidParseVideoData(parser_, &sp);
  }

 private:
  CUvideoparser parser_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// Where a decoder can start: keyframes, closed (nothing after them refers to frames before) or
// open (leading frames do)
// ---------------------------------------------------------------------------------------------

enum class Entry { none, closed, open };

/// Calls fn(offset of the NAL unit's first byte after the start code, its end) for every NAL
/// unit of an Annex B packet.
template <class Fn>
void for_each_nal(const std::vector<std::uint8_t>& p, Fn&& fn) {
  const std::size_t n = p.size();
  std::size_t i = 0, start = SIZE_MAX;
  while (i + 2 < n) {
    if (p[i] == 0 && p[i + 1] == 0 && p[i + 2] == 1) {
      if (start != SIZE_MAX) {
        std::size_t end = i;
        while (end > start && p[end - 1] == 0) --end;  // trailing zeros of a 4-byte start code
        if (!fn(start, end)) return;
      }
      start = i + 3;
      i += 3;
      continue;
    }
    ++i;
  }
  if (start != SIZE_MAX && start < n) fn(start, n);
}

/// Reads an unsigned Exp-Golomb number at bit `pos` of `b` (emulation prevention ignored: the
/// first fields of a slice header are too short to contain it).
unsigned read_ue(const std::uint8_t* b, std::size_t size, std::size_t& pos) {
  int zeros = 0;
  auto bit = [&](std::size_t k) -> unsigned {
    return k / 8 < size ? (b[k / 8] >> (7 - k % 8)) & 1u : 1u;
  };
  while (bit(pos) == 0 && zeros < 31) {
    ++zeros;
    ++pos;
  }
  ++pos;
  unsigned v = 0;
  for (int k = 0; k < zeros; ++k) v = (v << 1) | bit(pos++);
  return (1u << zeros) - 1 + v;
}

/// Where the packet lets a decoder start, and the parameter sets it carries (appended to
/// `params` with their start codes). `rasl`: an HEVC picture that refers to frames before the
/// CRA it follows (RASL_N, RASL_R); `radl`: a leading HEVC picture that does not (RADL_N,
/// RADL_R).
Entry classify(NvdecCodec codec, const NvdecPacket& pkt, std::vector<std::vector<std::uint8_t>>& params,
               bool& rasl, bool& radl) {
  const std::vector<std::uint8_t>& p = pkt.data;
  Entry entry = Entry::none;
  rasl = radl = false;
  auto keep = [&](std::size_t s, std::size_t e) {
    std::vector<std::uint8_t> nal = {0, 0, 0, 1};
    nal.insert(nal.end(), p.begin() + static_cast<std::ptrdiff_t>(s),
               p.begin() + static_cast<std::ptrdiff_t>(e));
    if (std::find(params.begin(), params.end(), nal) != params.end()) return;
    params.push_back(std::move(nal));
    if (params.size() > 64) params.erase(params.begin());
  };
  switch (codec) {
    case NvdecCodec::h264: {
      bool first_slice = true;
      for_each_nal(p, [&](std::size_t s, std::size_t e) {
        if (e <= s) return true;
        const int type = p[s] & 0x1f;
        if (type == 7 || type == 8) keep(s, e);
        if ((type == 1 || type == 5) && first_slice) {
          first_slice = false;
          if (type == 5) {
            entry = Entry::closed;
          } else if (pkt.key) {
            std::size_t pos = 8;  // after the NAL header byte
            read_ue(p.data() + s, e - s, pos);  // first_mb_in_slice
            const unsigned slice_type = read_ue(p.data() + s, e - s, pos);
            if (slice_type % 5 == 2) entry = Entry::open;  // an I slice the stream marks key
          }
        }
        return true;
      });
      break;
    }
    case NvdecCodec::hevc: {
      bool first_slice = true;
      for_each_nal(p, [&](std::size_t s, std::size_t e) {
        if (e <= s) return true;
        const int type = (p[s] >> 1) & 0x3f;
        if (type >= 32 && type <= 34) keep(s, e);
        if (type < 32 && first_slice) {
          first_slice = false;
          // BLA and IDR: closed (the leading frames of a BLA are never output); CRA: open.
          if (type >= 16 && type <= 20) entry = Entry::closed;
          else if (type == 21) entry = Entry::open;
          rasl = type == 8 || type == 9;
          radl = type == 6 || type == 7;
        }
        return true;
      });
      break;
    }
    case NvdecCodec::vp9:
      // A key frame resets every reference.
      if (pkt.key && !p.empty() && (p[0] >> 6) == 2) {
        const int profile = ((p[0] >> 5) & 1) | (((p[0] >> 4) & 1) << 1);
        int bit = 4;
        if (profile == 3) --bit;  // a reserved zero bit
        const bool show_existing = (p[0] >> (bit - 1)) & 1;
        const bool key = !show_existing && ((p[0] >> (bit - 2)) & 1) == 0;
        if (key) entry = Entry::closed;
      }
      break;
    case NvdecCodec::mpeg2: {
      // Only where a sequence header comes first: a decoder needs it to start. Closed when
      // the GOP header says so.
      bool seq = false, gop_closed = false, gop = false;
      for_each_nal(p, [&](std::size_t s, std::size_t e) {
        if (e <= s) return true;
        if (p[s] == 0xb3) seq = true;
        if (p[s] == 0xb8 && e - s >= 5) {
          gop = true;
          gop_closed = ((p[s + 4] >> 6) & 1) != 0;
        }
        return p[s] != 0x00;  // stop at the first picture
      });
      if (pkt.key && seq && gop) entry = gop_closed ? Entry::closed : Entry::open;
      break;
    }
  }
  return entry;
}

// ---------------------------------------------------------------------------------------------
// Chunks and the frame pool
// ---------------------------------------------------------------------------------------------

/// A run of packets one decoder decodes from a keyframe on. It delivers its frames in display
/// order except the first ones of a lead-in (decoded only as references for the owned ones)
/// and, where it ends at an HEVC CRA whose RASL frames it decodes and delivers (they refer to
/// its frames; the next chunk starts at the CRA without them), the CRA itself, which it shows
/// last. NVDEC's parser hands the timestamps it was given to the displayed frames in the
/// order it got them (measured: the n-th frame shown carries the n-th packet's timestamp,
/// whatever the frame's own packet), so `owned` is indexed by display rank: the parser's
/// timestamp of the n-th packet is n.
struct Chunk {
  std::int64_t number = 0;
  std::vector<std::vector<std::uint8_t>> params;  // parameter sets to feed first
  std::vector<NvdecPacket> packets;
  std::vector<char> owned;  // per packet
  // Decoded frames in display order (pool buffer indices), the ones not delivered yet.
  std::deque<int> frames;
  bool decoded = false;
};

}  // namespace

struct NvdecDecoder::Impl {
  Impl(const NvdecVideo& v, int device, int count, std::int64_t hint, NextPacket n)
      : video(v), device_index(device), ctx(device), next(std::move(n)),
        layout(planar_layout(v.width, v.height, PlanarChroma::c420)) {
    const std::string problem = nvdec_problem(v, device);
    if (!problem.empty()) throw Error(problem);
    decoders = count > 0 ? count : 7;
    // Chunks small enough that every decoder gets several, large enough that the per-chunk
    // start (a new parser; at open keyframes a lead-in) stays small.
    min_chunk = hint > 0 ? std::clamp<std::int64_t>(hint / (3 * decoders), 24, 300) : 120;
    // One decoder gains nothing from cutting the stream: it decodes it in one pass.
    if (decoders == 1) min_chunk = INT64_MAX;
    // The pool: decoded frames waiting for their turn. Bounded by memory (a quarter of the
    // free device memory) and to 512 frames; the chunk being delivered may always take one.
    const std::size_t free_mem = free_device_memory(device);
    std::size_t cap = 512;
    if (free_mem > 0) cap = std::min(cap, free_mem / 4 / layout.bytes);
    cap = std::max<std::size_t>(cap, static_cast<std::size_t>(decoders) * 2 + 4);
    pool_size = static_cast<int>(cap);
    buffers.assign(pool_size, 0);
    reuse.assign(pool_size, nullptr);
    reserve = std::max(2, pool_size / 8);
    alive_from.assign(static_cast<std::size_t>(decoders), -1);
    alive_until.assign(static_cast<std::size_t>(decoders), -1);
    threads.emplace_back([this] { demux(); });
    for (int d = 0; d < decoders; ++d) threads.emplace_back([this, d] { decode_loop(d); });
  }

  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    cv.notify_all();
    for (std::thread& t : threads) t.join();
    try {
      Push push(ctx.get());
      for (CUdeviceptr b : slabs) driver().cu->cuMemFree(b);
      for (CUevent e : reuse)
        if (e) driver().cu->cuEventDestroy(e);
    } catch (...) {
    }
  }

  // --- packets into chunks (one thread) -----------------------------------------------------

  void demux() {
    try {
      std::vector<std::vector<std::uint8_t>> params;
      auto chunk = std::make_unique<Chunk>();
      // An HEVC chunk that goes on through the RASL frames after the CRA that began the next.
      std::unique_ptr<Chunk> ending;
      std::size_t last_key = 0;  // index in chunk->packets of its latest keyframe
      std::int64_t owned = 0;
      NvdecPacket pkt;
      for (;;) {
        {
          std::unique_lock<std::mutex> lock(mutex);
          // Bounded read-ahead: at most two chunks per decoder waiting to be decoded.
          cv.wait(lock, [&] { return stopping || queued.size() < 2 * std::size_t(decoders); });
          if (stopping) return;
        }
        pkt = NvdecPacket{};
        if (!next(pkt)) break;
        bool rasl = false, radl = false;
        const Entry entry = classify(video.codec, pkt, params, rasl, radl);
        if (ending) {
          if (rasl) {  // the chunk before decodes and delivers it; the new one leaves it out
            ending->packets.push_back(std::move(pkt));
            ending->owned.push_back(1);
            continue;
          }
          // Leading frames end at the first trailing one (RADL ones, which may come between
          // RASL ones, decode from the CRA: the new chunk's). The CRA, last in display order,
          // is the frame this chunk leaves out.
          if (!radl) {
            ending->owned.assign(ending->packets.size(), 1);
            ending->owned.back() = 0;
            publish(std::move(ending));
          }
        }
        if (entry != Entry::none && owned >= min_chunk) {
          auto fresh = std::make_unique<Chunk>();
          fresh->number = chunk->number + 1;
          fresh->params = params;
          if (entry == Entry::open && video.codec == NvdecCodec::hevc) {
            // The CRA's RASL frames need the frames before it: this chunk decodes the CRA
            // too (not delivering it) and then them, while the next starts at the CRA.
            chunk->packets.push_back(pkt);
            chunk->owned.push_back(0);
            ending = std::move(chunk);
          } else if (entry == Entry::open) {
            // Decode from the keyframe before: the leading frames refer to its frames.
            fresh->packets.assign(chunk->packets.begin() + static_cast<std::ptrdiff_t>(last_key),
                                  chunk->packets.end());
            fresh->owned.assign(fresh->packets.size(), 0);
            publish(std::move(chunk));
          } else {
            publish(std::move(chunk));
          }
          chunk = std::move(fresh);
          owned = 0;
        }
        if (entry != Entry::none) last_key = chunk->packets.size();
        chunk->packets.push_back(std::move(pkt));
        chunk->owned.push_back(1);
        ++owned;
      }
      if (ending) {
        ending->owned.assign(ending->packets.size(), 1);
        ending->owned.back() = 0;
        publish(std::move(ending));
      }
      if (!chunk->packets.empty()) publish(std::move(chunk));
    } catch (...) {
      fail(std::current_exception());
    }
    std::lock_guard<std::mutex> lock(mutex);
    demuxed = true;
    cv.notify_all();
  }

  void publish(std::unique_ptr<Chunk> c) {
    if (!probed) {  // (only this thread sets it)
      std::optional<CUVIDEOFORMAT> f = probe_format(*c);
      std::lock_guard<std::mutex> lock(mutex);
      probed_format = f;
      probed = true;
    }
    std::lock_guard<std::mutex> lock(mutex);
    chunks.push_back(std::move(c));
    queued.push_back(chunks.back().get());
    cv.notify_all();
  }

  // --- the stream's format, before any decoder ----------------------------------------------

  static int CUDAAPI on_probe_sequence(void* user, CUVIDEOFORMAT* f) {
    auto* out = static_cast<std::optional<CUVIDEOFORMAT>*>(user);
    if (!*out) *out = *f;
    return 0;  // nothing is decoded
  }
  static int CUDAAPI on_probe_decode(void*, CUVIDPICPARAMS*) { return 0; }
  static int CUDAAPI on_probe_display(void*, CUVIDPARSERDISPINFO*) { return 1; }

  /// The format NVDEC's parser finds at the start of chunk `c` (its sequence callback, from
  /// the parameter sets and the first picture; nothing decoded), so that decoders can be made
  /// before their first part with the coded size and surfaces their sequence callback will
  /// ask for. Empty if the parser finds none in the first packets (each decoder is then made
  /// at its first part's sequence callback).
  std::optional<CUVIDEOFORMAT> probe_format(const Chunk& c) const {
    std::optional<CUVIDEOFORMAT> f;
    try {
      Parser parser(video.codec, &f, on_probe_sequence, on_probe_decode, on_probe_display, 0);
      if (video.codec == NvdecCodec::h264 || video.codec == NvdecCodec::hevc)
        for (const auto& ps : c.params) parser.parse(ps.data(), ps.size());
      for (std::size_t i = 0; i < c.packets.size() && i < 8 && !f; ++i)
        if (!c.packets[i].data.empty()) parser.parse(c.packets[i].data.data(), c.packets[i].data.size());
    } catch (const std::exception&) {
      // No parser: the decoders are made at their first part, which says what is wrong.
    }
    return f;
  }

  // --- decoder threads ----------------------------------------------------------------------

  struct Worker {
    Impl* impl = nullptr;
    CUvideodecoder decoder = nullptr;
    CUvideoctxlock lock = nullptr;
    CUstream stream = nullptr;
    CUVIDEOFORMAT format{};
    unsigned surfaces = 0;
    Chunk* chunk = nullptr;
    std::exception_ptr error;  // from a callback (they must not throw through the parser)
    // What it did (NvdecActivity) since fold() last added it to the decoder's totals.
    int remade = 0, made = 0;
    bool early_failed = false;  // making it from the probed format failed
    double create_s = 0, decode_s = 0, pool_wait_s = 0;
    std::int64_t parts = 0;
    int id = 0;  // its index in Impl::alive_from / alive_until
  };

  static int CUDAAPI on_sequence(void* user, CUVIDEOFORMAT* f) {
    auto* w = static_cast<Worker*>(user);
    try {
      return w->impl->sequence(*w, *f);
    } catch (...) {
      if (!w->error) w->error = std::current_exception();
      return 0;
    }
  }
  static int CUDAAPI on_decode(void* user, CUVIDPICPARAMS* pic) {
    auto* w = static_cast<Worker*>(user);
    if (w->error || w->decoder == nullptr) return 0;
    const CUresult r = driver().cuvid->cuvidDecodePicture(w->decoder, pic);
    if (r != CUDA_SUCCESS) {
      w->error = std::make_exception_ptr(Error("NVDEC: cuvidDecodePicture failed: " + cu_text(r)));
      return 0;
    }
    return 1;
  }
  static int CUDAAPI on_display(void* user, CUVIDPARSERDISPINFO* d) {
    auto* w = static_cast<Worker*>(user);
    if (d == nullptr || w->error) return 1;
    try {
      w->impl->display(*w, *d);
      return 1;
    } catch (...) {
      if (!w->error) w->error = std::current_exception();
      return 0;
    }
  }

  int sequence(Worker& w, const CUVIDEOFORMAT& f) {
    const int width = f.display_area.right - f.display_area.left;
    const int height = f.display_area.bottom - f.display_area.top;
    if (width != video.width || height != video.height)
      throw Error("NVDEC: the stream changes its size from " + std::to_string(video.width) + "x" +
                  std::to_string(video.height) + " to " + std::to_string(width) + "x" +
                  std::to_string(height) + " (resolution changes are not supported)");
    if (f.chroma_format != cudaVideoChromaFormat_420 ||
        f.bit_depth_luma_minus8 + 8 != video.bit_depth)
      throw Error("NVDEC: the stream changes its pixel format");
    if (w.decoder != nullptr && f.coded_width == w.format.coded_width &&
        f.coded_height == w.format.coded_height && surfaces_for(f) <= w.surfaces) {
      w.format = f;
      return static_cast<int>(w.surfaces);
    }
    if (w.decoder != nullptr) {
      driver().cuvid->cuvidDestroyDecoder(w.decoder);
      w.decoder = nullptr;
      ++w.remade;
    }
    create_decoder(w, f, surfaces_for(f));
    return static_cast<int>(w.surfaces);
  }

  static unsigned surfaces_for(const CUVIDEOFORMAT& f) {
    return std::min<unsigned>(std::max<unsigned>(f.min_num_decode_surfaces + 4, 8), 32);
  }

  void create_decoder(Worker& w, const CUVIDEOFORMAT& f, unsigned surfaces) {
    const auto t0 = std::chrono::steady_clock::now();
    CUVIDDECODECREATEINFO ci{};
    ci.ulWidth = f.coded_width;
    ci.ulHeight = f.coded_height;
    ci.ulMaxWidth = f.coded_width;
    ci.ulMaxHeight = f.coded_height;
    ci.ulNumDecodeSurfaces = surfaces;
    ci.CodecType = f.codec;
    ci.ChromaFormat = f.chroma_format;
    ci.ulCreationFlags = cudaVideoCreate_PreferCUVID;
    ci.bitDepthMinus8 = f.bit_depth_luma_minus8;
    ci.OutputFormat = f.bit_depth_luma_minus8 > 0 ? cudaVideoSurfaceFormat_P016
                                                  : cudaVideoSurfaceFormat_NV12;
    ci.DeinterlaceMode = cudaVideoDeinterlaceMode_Weave;  // both fields as one frame, as libavcodec
    // The whole coded picture, unscaled: the display area is cut out when the frame is copied.
    // Odd coded sizes (VP9) are rounded up to even on both sides, so that the output surface
    // (whose size NVDEC wants even) takes the picture 1:1.
    const unsigned out_w = (f.coded_width + 1) & ~1u, out_h = (f.coded_height + 1) & ~1u;
    ci.display_area.left = 0;
    ci.display_area.top = 0;
    ci.display_area.right = static_cast<short>(out_w);
    ci.display_area.bottom = static_cast<short>(out_h);
    ci.ulTargetWidth = out_w;
    ci.ulTargetHeight = out_h;
    ci.ulNumOutputSurfaces = 2;
    ci.vidLock = w.lock;
    check(driver().cuvid->cuvidCreateDecoder(&w.decoder, &ci), "cuvidCreateDecoder");
    {
      std::lock_guard<std::mutex> lock(mutex);
      double& from = alive_from[static_cast<std::size_t>(w.id)];
      if (from < 0) from = seconds_since(started);  // its first decoder (not one made again)
    }
    w.format = f;
    w.surfaces = static_cast<unsigned>(ci.ulNumDecodeSurfaces);
    w.create_s += seconds_since(t0);
    ++w.made;
  }

  void display(Worker& w, const CUVIDPARSERDISPINFO& d) {
    Chunk& c = *w.chunk;
    const std::int64_t at = d.timestamp;
    // Not owned (a lead-in frame, or the CRA that begins the next chunk: another chunk
    // delivers it) or to be discarded: decoded, not delivered. `at` is the frame's display
    // rank in the chunk (see Chunk).
    const auto local = static_cast<std::size_t>(at);
    if (at < 0 || local >= c.packets.size() || !c.owned[local] || c.packets[local].discard)
      return;
    const auto asked = std::chrono::steady_clock::now();
    const int buffer = take_buffer(c);
    w.pool_wait_s += seconds_since(asked);
    if (buffer < 0) return;  // stopping
    CUVIDPROCPARAMS pp{};
    pp.progressive_frame = d.progressive_frame;
    pp.top_field_first = d.top_field_first;
    pp.second_field = d.repeat_first_field + 1;
    pp.unpaired_field = d.repeat_first_field < 0;
    pp.output_stream = w.stream;
    CUdeviceptr surface = 0;
    unsigned pitch = 0;
    check(driver().cuvid->cuvidMapVideoFrame(w.decoder, d.picture_index, &surface, &pitch, &pp),
          "cuvidMapVideoFrame");
    std::exception_ptr failed;
    try {
      CUVIDGETDECODESTATUS status{};
      if (driver().cuvid->cuvidGetDecodeStatus &&
          driver().cuvid->cuvidGetDecodeStatus(w.decoder, d.picture_index, &status) ==
              CUDA_SUCCESS &&
          (status.decodeStatus == cuvidDecodeStatus_Error ||
           status.decodeStatus == cuvidDecodeStatus_Error_Concealed))
        throw Error("NVDEC: damaged video data in a frame of part " + std::to_string(c.number + 1) +
                    " of the stream");
      const CUVIDEOFORMAT& f = w.format;
      const std::size_t bps = video.bit_depth > 8 ? 2 : 1;
      const std::size_t chroma_row0 = static_cast<std::size_t>((f.coded_height + 1) & ~1u);
      DeviceFrameIn in;
      in.layout = video.bit_depth > 8 ? DeviceLayout::p016 : DeviceLayout::nv12;
      in.chroma = PlanarChroma::c420;
      in.width = video.width;
      in.height = video.height;
      in.bit_depth = video.bit_depth;
      in.full_range = video.full_range;
      const auto left = static_cast<std::size_t>(f.display_area.left);
      const auto top = static_cast<std::size_t>(f.display_area.top);
      const auto base = static_cast<std::uintptr_t>(surface);
      in.plane[0] = reinterpret_cast<const void*>(base + top * pitch + left * bps);
      in.plane[1] = reinterpret_cast<const void*>(base + chroma_row0 * pitch + (top / 2) * pitch +
                                                  (left / 2) * 2 * bps);
      in.pitch[0] = in.pitch[1] = pitch;
      // The buffer's last frame was copied out on the consumer's stream.
      check(driver().cu->cuEventSynchronize(reuse[buffer]), "cuEventSynchronize");
      write_planar(in, reinterpret_cast<std::uint8_t*>(static_cast<std::uintptr_t>(buffers[buffer])),
                   w.stream);
      // The surface goes back to the decoder at the unmap: the copy must be done by then.
      check(driver().cu->cuStreamSynchronize(w.stream), "cuStreamSynchronize");
    } catch (...) {
      failed = std::current_exception();
    }
    driver().cuvid->cuvidUnmapVideoFrame(w.decoder, surface);
    if (failed) {
      give_back(buffer);
      std::rethrow_exception(failed);
    }
    std::lock_guard<std::mutex> lock(mutex);
    if (activity.frames++ == 0) activity.first_frame_s = seconds_since(started);
    c.frames.push_back(buffer);
    cv.notify_all();
  }

  /// A free pool buffer for a frame of chunk `c` (allocated at first use); -1 when stopping.
  /// Only the chunk being delivered may take the last `reserve` buffers, so that it always
  /// progresses however far the others ran ahead.
  int take_buffer(const Chunk& c) {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] {
      if (stopping || failed) return true;
      const int left = pool_size - in_use;
      return left > reserve || (left > 0 && is_head(c));
    });
    if (stopping || failed) return -1;
    int b = 0;
    if (!free_list.empty()) {
      b = free_list.back();
      free_list.pop_back();
    } else {
      b = allocated++;
    }
    ++in_use;
    lock.unlock();
    allocate(b);
    return b;
  }

  /// Buffer `b`'s memory, allocated with the others of its slab at its first use (one
  /// cuMemAlloc per kSlab frames: the driver serialises allocations, which a call per frame
  /// would make a cost of every frame of the first pass).
  void allocate(int b) {
    std::lock_guard<std::mutex> lock(alloc_mutex);
    if (buffers[b] != 0) return;
    const std::size_t stride = (layout.bytes + 255) & ~std::size_t(255);
    const int first = b / kSlab * kSlab, count = std::min(kSlab, pool_size - first);
    CUdeviceptr base = 0;
    check(driver().cu->cuMemAlloc(&base, stride * static_cast<std::size_t>(count)),
          "cuMemAlloc (frame pool)");
    slabs.push_back(base);
    for (int i = 0; i < count; ++i) {
      buffers[first + i] = base + stride * static_cast<std::size_t>(i);
      check(driver().cu->cuEventCreate(&reuse[first + i], CU_EVENT_DISABLE_TIMING),
            "cuEventCreate");
    }
  }

  void give_back(int b) {
    std::lock_guard<std::mutex> lock(mutex);
    free_list.push_back(b);
    --in_use;
    cv.notify_all();
  }

  /// The caller holds the lock.
  bool is_head(const Chunk& c) const {
    return head < chunks.size() && chunks[head].get() == &c;
  }

  /// Waits for what worker `w` does next: false when there is nothing left (or the decoder
  /// stops); else `c`, the next part to decode, or null where the worker is to make its
  /// decoder first. Decoders are made one at a time (the driver serialises making them, at
  /// tens of milliseconds each: made all at once, the first part's decoder might be the
  /// last ready) and only while more parts wait than decoders are idle: a stream of three
  /// parts makes three, and a decoder ready early decodes the parts that would otherwise wait
  /// for the later ones to be made.
  bool take_part(Worker& w, Chunk*& c) {
    std::unique_lock<std::mutex> lock(mutex);
    const bool ready = w.decoder != nullptr || w.early_failed;
    if (ready) ++idle;
    cv.wait(lock, [&] {
      if (stopping || failed || (demuxed && queued.empty())) return true;
      if (ready || (probed && !probed_format)) return !queued.empty();
      return probed && !making && queued.size() > static_cast<std::size_t>(idle);
    });
    if (ready) --idle;
    if (stopping || failed || (demuxed && queued.empty())) return false;
    if (!ready && probed_format) {
      making = true;
      c = nullptr;
      return true;
    }
    c = queued.front();
    queued.pop_front();
    cv.notify_all();  // the demuxer may read on
    return true;
  }

  void decode_loop(int id) {
    Worker w;
    w.impl = this;
    w.id = id;
    try {
      Push push(ctx.get());
      check(driver().cuvid->cuvidCtxLockCreate(&w.lock, ctx.get()), "cuvidCtxLockCreate");
      check(driver().cu->cuStreamCreate(&w.stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
      for (;;) {
        Chunk* c = nullptr;
        if (!take_part(w, c)) break;
        if (c == nullptr) {  // this worker's turn to make its decoder, from the probed format
          try {
            create_decoder(w, *probed_format, surfaces_for(*probed_format));
          } catch (const std::exception&) {
            w.decoder = nullptr;  // its first part's sequence callback says why
            w.early_failed = true;
          }
          std::lock_guard<std::mutex> lock(mutex);
          making = false;
          cv.notify_all();
          continue;
        }
        const auto t0 = std::chrono::steady_clock::now();
        decode_chunk(w, *c);
        w.decode_s += seconds_since(t0);
        ++w.parts;
        std::lock_guard<std::mutex> lock(mutex);
        fold(w);  // before the chunk counts as decoded: the reader sees it at the stream's end
        c->decoded = true;
        c->packets = {};
        c->owned = {};
        cv.notify_all();
      }
    } catch (...) {
      fail(std::current_exception());
    }
    {
      std::lock_guard<std::mutex> lock(mutex);
      fold(w);
      const auto d = static_cast<std::size_t>(id);
      if (alive_from[d] >= 0) alive_until[d] = seconds_since(started);
    }
    if (w.decoder) driver().cuvid->cuvidDestroyDecoder(w.decoder);
    if (w.stream) driver().cu->cuStreamDestroy(w.stream);
    if (w.lock) driver().cuvid->cuvidCtxLockDestroy(w.lock);
  }

  /// Adds what worker `w` did since the last call to the decoder's activity. The caller holds
  /// the lock.
  void fold(Worker& w) {
    activity.parts += w.parts;
    activity.decoders_remade += w.remade;
    activity.decoders_made += w.made;
    activity.create_s += w.create_s;
    activity.decode_s += w.decode_s;
    activity.pool_wait_s += w.pool_wait_s;
    w.parts = w.remade = w.made = 0;
    w.create_s = w.decode_s = w.pool_wait_s = 0;
  }

  void decode_chunk(Worker& w, Chunk& c) {
    w.chunk = &c;
    // A display delay of 4 lets decoding run ahead of the mapping.
    Parser parser(video.codec, &w, on_sequence, on_decode, on_display, 4);
    auto feed = [&](const std::uint8_t* data, std::size_t size, unsigned long flags,
                    std::int64_t ts) {
      const CUresult r = parser.parse(data, size, flags, ts);
      if (w.error) std::rethrow_exception(w.error);
      check(r, "cuvidParseVideoData");
    };
    if (video.codec == NvdecCodec::h264 || video.codec == NvdecCodec::hevc)
      for (const auto& ps : c.params) feed(ps.data(), ps.size(), 0, 0);
    for (std::size_t i = 0; i < c.packets.size(); ++i) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (stopping || failed) return;
      }
      const NvdecPacket& p = c.packets[i];
      if (p.data.empty()) continue;
      feed(p.data.data(), p.data.size(), CUVID_PKT_TIMESTAMP, static_cast<std::int64_t>(i));
    }
    feed(nullptr, 0, CUVID_PKT_ENDOFSTREAM, 0);
  }

  // --- delivery -----------------------------------------------------------------------------

  /// The next frame's pool buffer and index; -1 at the end. Throws the decoders' error.
  int take_frame(std::int64_t& index) {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      if (failed) std::rethrow_exception(error);
      if (head < chunks.size()) {
        Chunk& c = *chunks[head];
        if (!c.frames.empty()) {
          const int b = c.frames.front();
          c.frames.pop_front();
          index = delivered++;
          return b;
        }
        if (c.decoded) {
          ++head;
          cv.notify_all();  // the next chunk is the head now
          continue;
        }
      } else if (demuxed) {
        return -1;
      }
      cv.wait(lock);
    }
  }

  void fail(std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!failed) {
      failed = true;
      error = e;
    }
    cv.notify_all();
  }

  const std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  const NvdecVideo video;
  const int device_index;
  PrimaryContext ctx;
  NextPacket next;
  const PlanarLayout layout;
  int decoders = 7;
  std::int64_t min_chunk = 120;

  std::mutex mutex;
  std::condition_variable cv;
  bool stopping = false, failed = false, demuxed = false;
  std::exception_ptr error;
  std::deque<std::unique_ptr<Chunk>> chunks;  // in stream order; chunks[head] is delivered next
  std::size_t head = 0;
  std::deque<Chunk*> queued;                  // waiting for a decoder
  // The stream's format as the parser found it at the start (probe_format), once probed.
  std::optional<CUVIDEOFORMAT> probed_format;
  bool probed = false;
  int idle = 0;         // workers with a decoder waiting for a part
  bool making = false;  // a worker is making its decoder
  std::int64_t delivered = 0;
  NvdecActivity activity;  // frames and first_frame_s as they come; the rest after each part
  // Per decoder thread: seconds from `started` to its decoder's first making and to its end
  // (-1: not yet), for NvdecActivity::alive_s.
  std::vector<double> alive_from, alive_until;

  int pool_size = 0, reserve = 2, in_use = 0, allocated = 0;
  static constexpr int kSlab = 32;
  std::mutex alloc_mutex;
  std::vector<CUdeviceptr> slabs;
  std::vector<CUdeviceptr> buffers;  // buffers[b]: inside a slab; 0 until allocated
  std::vector<CUevent> reuse;  // recorded after a buffer's frame was copied out
  std::vector<int> free_list;

  std::vector<std::thread> threads;
};

std::string nvdec_problem(const NvdecVideo& v, int device) {
  try {
    const Driver& d = driver();
    if (!d.problem.empty()) return d.problem;
    const std::string gpu = "NVDEC of CUDA device " + std::to_string(device);
    if (v.chroma != PlanarChroma::c420)
      return gpu + ": only 4:2:0 video is decoded on the GPU here";
    if (v.bit_depth != 8 && v.bit_depth != 10 && v.bit_depth != 12)
      return gpu + ": " + std::to_string(v.bit_depth) + "-bit video is not decoded on the GPU";
    PrimaryContext ctx(device);
    Push push(ctx.get());
    CUVIDDECODECAPS caps{};
    caps.eCodecType = cuvid_codec(v.codec);
    caps.eChromaFormat = cudaVideoChromaFormat_420;
    caps.nBitDepthMinus8 = static_cast<unsigned>(v.bit_depth - 8);
    const CUresult r = d.cuvid->cuvidGetDecoderCaps(&caps);
    if (r != CUDA_SUCCESS) return gpu + ": cuvidGetDecoderCaps failed: " + cu_text(r);
    const std::string what = std::to_string(v.bit_depth) + "-bit 4:2:0 " + codec_name(v.codec);
    if (!caps.bIsSupported) return gpu + " does not decode " + what;
    const unsigned fmt = v.bit_depth > 8 ? cudaVideoSurfaceFormat_P016 : cudaVideoSurfaceFormat_NV12;
    if (!(caps.nOutputFormatMask & (1u << fmt)))
      return gpu + " cannot output " + what + " as " + (v.bit_depth > 8 ? "P016" : "NV12");
    const auto w = static_cast<unsigned>(v.width), h = static_cast<unsigned>(v.height);
    const unsigned mbs = ((w + 15) / 16) * ((h + 15) / 16);
    if (w > caps.nMaxWidth || h > caps.nMaxHeight || mbs > caps.nMaxMBCount ||
        w < caps.nMinWidth || h < caps.nMinHeight)
      return gpu + " decodes " + what + " from " + std::to_string(caps.nMinWidth) + "x" +
             std::to_string(caps.nMinHeight) + " to " + std::to_string(caps.nMaxWidth) + "x" +
             std::to_string(caps.nMaxHeight) + ", not " + std::to_string(w) + "x" +
             std::to_string(h);
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

NvdecDecoder::NvdecDecoder(const NvdecVideo& video, int device, int decoders,
                           std::int64_t frames_hint, NextPacket next)
    : impl_(std::make_unique<Impl>(video, device, decoders, frames_hint, std::move(next))) {}

NvdecDecoder::~NvdecDecoder() = default;

bool NvdecDecoder::next_frame(std::int64_t& index,
                              const std::function<StreamHandle(const std::uint8_t*)>& use) {
  Impl& m = *impl_;
  const int b = m.take_frame(index);
  if (b < 0) return false;
  try {
    const auto* frame = reinterpret_cast<const std::uint8_t*>(static_cast<std::uintptr_t>(m.buffers[b]));
    const StreamHandle stream = use(frame);
    if (stream != nullptr) {
      Push push(m.ctx.get());
      check(driver().cu->cuEventRecord(m.reuse[b], stream), "cuEventRecord");
    }
  } catch (...) {
    m.give_back(b);
    throw;
  }
  m.give_back(b);
  return true;
}

bool NvdecDecoder::next_frame_host(std::uint8_t* dst, std::int64_t& index) {
  Impl& m = *impl_;
  const int b = m.take_frame(index);
  if (b < 0) return false;
  try {
    Push push(m.ctx.get());
    check(driver().cu->cuMemcpyDtoH(dst, m.buffers[b], m.layout.bytes), "cuMemcpyDtoH");
  } catch (...) {
    m.give_back(b);
    throw;
  }
  m.give_back(b);
  return true;
}

int NvdecDecoder::decoders() const { return impl_->decoders; }

NvdecActivity NvdecDecoder::activity() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  NvdecActivity a = impl_->activity;
  a.decoders = impl_->decoders;
  a.elapsed_s = seconds_since(impl_->started);
  for (std::size_t d = 0; d < impl_->alive_from.size(); ++d)
    if (impl_->alive_from[d] >= 0)
      a.alive_s += (impl_->alive_until[d] >= 0 ? impl_->alive_until[d] : a.elapsed_s) -
                   impl_->alive_from[d];
  return a;
}

std::size_t NvdecDecoder::frame_bytes() const { return impl_->layout.bytes; }

}  // namespace mjpeg::gpu
