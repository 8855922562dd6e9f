// mjpeg NVDEC input: compressed video decoded by the GPU's video decoders (NVDEC) straight into
// device memory, as a FrameSource for encode_all. The caller demuxes (e.g. with libavformat)
// and hands over packets; the library cuts the stream at its keyframes, decodes runs of GOPs on
// several decoders at once (every NVDEC engine on one file) and gives the encoder the frames in
// stream order. In aok the transform kernels read the decoded frames where they lie on the GPU
// (a device-to-device copy into the slot; no host copy, no upload); sok and cpu copy them to
// the host.
//
// The frames are 8-bit planar 4:2:0 (VideoOptions::format yuv420p): NVDEC's NV12 surfaces as
// planes, its 10- and 12-bit (P016) surfaces reduced to 8 bits as libswscale reduces yuv420p10
// and yuv420p12 to yuv420p (ordered dither), so that a CPU decoder followed by that libswscale
// conversion gives the same planes. H.264, HEVC and VP9 specify every output sample, so their
// JPEGs are those of the same frames decoded on the CPU; MPEG-2's inverse DCT is not specified
// to the bit (NVDEC's frames were measured up to 5 levels off libavcodec's), so MPEG-2 frames may
// differ slightly from another decoder's (the CLI decodes MPEG-2 on the CPU).
//
// Needs a CUDA build and, at run time, the NVIDIA driver's libcuda.so.1 and libnvcuvid.so.1
// (loaded when first needed; nothing is linked against them).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mjpeg/video.hpp"

namespace mjpeg {

enum class VideoCodec { h264, hevc, vp9, mpeg2 };
/// "H.264", "HEVC", "VP9", "MPEG-2".
const char* to_string(VideoCodec codec);

/// What a compressed stream is, as its container and headers say.
struct CompressedVideo {
  VideoCodec codec = VideoCodec::h264;
  int width = 0, height = 0;  ///< the displayed (cropped) size of its frames
  int bit_depth = 8;          ///< 8, 10 or 12
  /// The chroma of its samples: yuv420p, yuv422p, yuv444p or yuv400p (only 4:2:0 is decoded).
  FrameFormat chroma = FrameFormat::yuv420p;
  /// Above 8 bits: full-range luma is reduced to 8 bits with libswscale's full-range rounding.
  bool full_range = false;
};

/// Empty when NVDEC of CUDA device `device` decodes such a stream (asks the driver:
/// cuvidGetDecoderCaps for the codec, bit depth, chroma and size); otherwise why not, a phrase
/// for the user ("NVDEC of CUDA device 0 does not decode 10-bit 4:2:0 H.264"). Never throws.
std::string nvdec_problem(const CompressedVideo& video, int device = 0);

/// One compressed packet in decoding order: H.264 and HEVC as Annex B (start codes, with the
/// parameter sets in the stream: FFmpeg's h264_mp4toannexb / hevc_mp4toannexb make them so
/// from MP4 and MKV), VP9 frames (or superframes), MPEG-2 elementary stream pictures.
struct CompressedPacket {
  std::vector<std::uint8_t> data;
  bool key = false;      ///< the container marks it a keyframe (where a decoder may start)
  bool discard = false;  ///< decoded, but its frame is left out (an edit list's start)
};

/// What an NvdecSource's decoders did so far (see NvdecSource::activity).
struct NvdecActivity {
  int decoders = 0;             ///< the most that decode at once (the source's `decoders`)
  int decoders_made = 0;        ///< made so far: one at a time, while parts wait for one
  std::int64_t parts = 0;       ///< runs of GOPs decoded (each by one decoder)
  std::int64_t frames = 0;      ///< frames decoded
  int decoders_remade = 0;      ///< decoders made again (the stream's coded size was not the expected one)
  double create_s = 0;          ///< seconds spent making decoders, summed over the decoders
  double decode_s = 0;          ///< seconds the decoders were busy with parts, summed
  double pool_wait_s = 0;       ///< of it, seconds waiting for the reader to take frames
  double first_frame_s = 0;     ///< seconds from the source's construction to its first frame
  double elapsed_s = 0;         ///< seconds from the source's construction to the call
  double alive_s = 0;           ///< seconds the decoders existed, summed (each from its
                                ///< making to its thread's end or to the call)
};

/// Frames decoded by NVDEC, for encode_all (which reads them on the GPU) or read() (host).
class NvdecSource final : public FrameSource {
 public:
  /// Fills the packet and returns true, or false at the end of the stream. Called on a thread
  /// of the source's own, one call at a time, from the constructor until the end or the
  /// source's destruction; an exception it throws ends the stream and is rethrown by read()
  /// or encode_all.
  using NextPacket = std::function<bool(CompressedPacket& packet)>;

  /// `format`: the frames as the encoder takes them (width and height those of `video`, format
  /// yuv420p, the matrix and range or coefficients that convert them to RGB). `decoders`:
  /// decoders working at once on different parts of the stream (0: 7, the engines of an
  /// H100 / H200). `frames_hint`: the frames the container announces (-1: unknown), to cut the
  /// stream into parts small enough for every decoder. Throws Error when NVDEC cannot decode
  /// the stream (nvdec_problem), UsageError for a format that does not fit `video`.
  NvdecSource(const CompressedVideo& video, const VideoOptions& format, NextPacket next,
              int device = 0, int decoders = 0, std::int64_t frames_hint = -1);
  ~NvdecSource() override;
  NvdecSource(const NvdecSource&) = delete;
  NvdecSource& operator=(const NvdecSource&) = delete;

  /// Copies the next frame to host memory (the modes that read frames on the host). Frames
  /// come in order: `index` must be the next one.
  bool read(std::int64_t index, std::uint8_t* dst) override;
  /// A frame range: the `first` frames are decoded and dropped, then at most `count` (-1:
  /// all) are delivered, numbered from 0. Before the first frame is read.
  void set_range(std::int64_t first, std::int64_t count);
  /// Decodes the next frame and drops it (the decoder's own rate, e.g. for a benchmark);
  /// false at the end.
  bool skip();
  int decoders() const;
  /// What the decoders did so far (complete for the parts decoded: at the end of the stream,
  /// for all of it). Thread-safe.
  NvdecActivity activity() const;

 private:
  pipeline::FrameSource* library_reader(const VideoOptions& options) override;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mjpeg
