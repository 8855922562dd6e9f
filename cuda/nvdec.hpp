// Compressed video decoded by the GPU's NVDEC engines into device memory (NVIDIA's cuvid API,
// loaded at run time from the driver's libnvcuvid.so.1 and libcuda.so.1: a binary linked
// without them runs where they are missing and says so).
//
// One file on several decoders at once: the caller's packets (demuxed on the host: H.264 and
// HEVC as Annex B, VP9 frames, MPEG-2 elementary stream) are cut into chunks at keyframes, each
// chunk goes to whichever of `decoders` decoder threads is free (each with its own cuvid parser
// and decoder), and the frames come out in stream order. Decoders are made one at a time, from
// the format a parser finds at the stream's start, only while more chunks wait than decoders
// are idle (the driver serialises making them, at tens of milliseconds each). A chunk that
// starts at an open
// keyframe (H.264 I without IDR, MPEG-2 open GOP) is decoded from the keyframe before it, whose
// frames it drops; one that ends at an HEVC CRA decodes on through the CRA's RASL frames and
// delivers them (the next starts at the CRA without them): the leading frames that refer
// across the cut decode as in one pass. Frames of packets the container marks to be discarded
// (edit lists) are decoded but not delivered, as libavcodec does. One decoder decodes the
// stream in one pass.
// A decoded surface (NV12, or P016 above 8 bits) is converted at once, on the GPU, into 8-bit
// planes in the slot layout (device_frames.hpp) in a buffer of a bounded pool, then unmapped;
// next_frame copies it (device to device) where the caller wants it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/planar_format.hpp"
#include "mjpeg/nvdec.hpp"
#include "stream_handle.hpp"

namespace mjpeg::gpu {

enum class NvdecCodec { h264, hevc, vp9, mpeg2 };

/// What a stream is, as the container and its headers say.
struct NvdecVideo {
  NvdecCodec codec = NvdecCodec::h264;
  int width = 0, height = 0;  ///< the displayed (cropped) size
  int bit_depth = 8;
  PlanarChroma chroma = PlanarChroma::c420;
  /// Above 8 bits: the luma of a full-range source is reduced as libswscale reduces it.
  bool full_range = false;
};

/// Empty when NVDEC on CUDA device `device` decodes such video to frames this module delivers
/// (4:2:0, 8 to 12 bits, within the engine's size limits: cuvidGetDecoderCaps); otherwise why
/// not, a phrase ("NVDEC of CUDA device 0 does not decode 10-bit H.264"). Never throws.
std::string nvdec_problem(const NvdecVideo& video, int device);

/// One compressed packet, in stream (decoding) order.
struct NvdecPacket {
  std::vector<std::uint8_t> data;
  bool key = false;      ///< the container or parser says a decoder can start here
  bool discard = false;  ///< decoded, but its frame is not delivered (an edit list's start)
};

class NvdecDecoder {
 public:
  /// Fills `packet` with the next packet and returns true, or false at the end of the stream.
  /// Called on a thread of the decoder's own, one call at a time; may throw (the error reaches
  /// next_frame's caller).
  using NextPacket = std::function<bool(NvdecPacket& packet)>;

  /// Starts `decoders` decoder threads (0: 7, the NVDEC engines of an H100/H200) on CUDA device
  /// `device` and the thread that reads packets. `frames_hint`: the frames the container
  /// announces (-1: unknown), to cut chunks small enough for every decoder. Throws Error when
  /// NVDEC cannot be used (nvdec_problem's reason).
  NvdecDecoder(const NvdecVideo& video, int device, int decoders, std::int64_t frames_hint,
               NextPacket next);
  /// Stops and joins the threads. Never throws.
  ~NvdecDecoder();
  NvdecDecoder(const NvdecDecoder&) = delete;
  NvdecDecoder& operator=(const NvdecDecoder&) = delete;

  /// Thread-safe: waits for the next frame of the stream, sets `index` to its 0-based position
  /// and calls `use(frame)` with its 8-bit planes (device memory of the device, in
  /// planar_layout(width, height, c420)); `use` returns the cudaStream_t on which it read them
  /// (null: it is done with them when it returns), and the buffer is reused only once that
  /// stream's work before the return is done. Returns false at the end. Throws the first
  /// error of the decoding threads (a damaged stream, a resolution change, a CUDA error).
  bool next_frame(std::int64_t& index,
                  const std::function<StreamHandle(const std::uint8_t* frame)>& use);
  /// The same into host memory (blocking): for the modes that read frames on the host.
  bool next_frame_host(std::uint8_t* dst, std::int64_t& index);

  int decoders() const;
  std::size_t frame_bytes() const;
  /// What the decoders did so far (complete for every part decoded).
  NvdecActivity activity() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace mjpeg::gpu
