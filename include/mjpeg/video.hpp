// mjpeg video API: a streaming Motion-JPEG encoder configured once, fed frame by frame
// (VideoEncoder) or from a source into a sink (encode_all).
//
// Every JPEG frame it delivers is byte-identical to encode_jpeg() of the same pixels with the
// same EncodeOptions, whatever the offload mode, thread and slot counts: the modes differ only
// in where the transform runs and how the work is scheduled.
//
// Offload modes:
//   cpu         everything on the CPU; needs no GPU (works in a build machine without one)
//   sok         synchronous offload: blocking copies to and from the GPU, launch, wait
//   sok-pinned  sok with the host slots in page-locked memory
//   aok         asynchronous offload: uploads, kernels and downloads of different frames overlap
//               on dedicated CUDA streams
// The GPU modes need a CUDA device of compute capability 8.0 or newer; asking for one where
// none is usable throws mjpeg::Error when the encoder is created (nothing falls back silently).
//
// Errors: functions throw mjpeg::UsageError (a subclass of mjpeg::Error) when the caller asked
// for something invalid, and mjpeg::Error for runtime failures (device, I/O, a sink that threw).
// The message is a sentence for the user (what(); error.hpp). Destructors never throw.
//
// No CUDA, OpenCV or FFmpeg types appear here; link mjpeg::mjpeg (CMake) or `pkg-config mjpeg`.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mjpeg/error.hpp"
#include "mjpeg/options.hpp"
#include "mjpeg/profile.hpp"

namespace mjpeg {

namespace pipeline {
class FrameSource;  // the encoder's own reading side (not part of the API)
}

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

/// How the pixels of each input frame lie in memory.
enum class FrameFormat {
  rgb24,    ///< packed 8-bit R, G, B
  bgr24,    ///< packed 8-bit B, G, R (OpenCV's order); reordered to RGB while it is copied
  gray8,    ///< one 8-bit luma sample per pixel; always gives a grayscale (1-component) JPEG
  yuv420p,  ///< planar Y, Cb, Cr; chroma planes ceil(W/2) x ceil(H/2) (I420, Y4M "420jpeg")
  yuv422p,  ///< planar Y, Cb, Cr; chroma planes ceil(W/2) x H
  yuv444p,  ///< planar Y, Cb, Cr; chroma planes W x H
  /// planar Y only (a Y4M "mono" stream, FFmpeg's gray as planes): converted to RGB as YCbCr
  /// with Cb = Cr = 128 (R = G = B), so it gives a 3-component JPEG, or with jpeg.subsampling
  /// gray a 1-component one of that grey (gray8 always gives a 1-component one)
  yuv400p,
};

/// "rgb24", "bgr24", "gray8", "yuv420p", "yuv422p", "yuv444p", "yuv400p".
const char* to_string(FrameFormat format);
/// Parses the names of to_string(FrameFormat). Throws UsageError for any other text.
FrameFormat parse_frame_format(const std::string& text);
/// True for yuv420p, yuv422p, yuv444p and yuv400p.
bool is_planar(FrameFormat format);

/// Colour matrix of planar YCbCr input (ignored for packed formats).
enum class YuvMatrix { bt601, bt709, bt2020 };
/// Sample range of planar YCbCr input: limited (Y 16..235, C 16..240, "TV") or full (0..255).
enum class YuvRange { limited, full };

/// An exact integer YCbCr -> RGB conversion given by its coefficients, for input that must be
/// converted as another converter does it (e.g. `mjpeg encode` matches libswscale, and so
/// `ffmpeg -pix_fmt rgb24`, this way). With u = Cb - 128, v = Cr - 128 (rounded form) each
/// channel is clamp((cy * (Y - y0) + k * u|v + 32768) >> 16) with k = cr_r for R, cb_g and cr_g
/// for G, cb_b for B. Truncated form (libswscale's): u = 8 Cb - 1024, v = 8 Cr - 1024 and each
/// term is shifted on its own: clamp(((8 Y - y0) * cy >> 16) + (k * u|v >> 16)).
struct YuvCoefficients {
  bool truncated = false;
  std::int32_t y0 = 0, cy = 0;
  std::int32_t cr_r = 0, cb_g = 0, cr_g = 0, cb_b = 0;
};

/// The rounded-form coefficients of the matrix with luma weights `kr`, `kb` (Kg = 1 - Kr - Kb;
/// BT.601: 0.299, 0.114, BT.709: 0.2126, 0.0722, BT.2020: 0.2627, 0.0593) in `range`: each
/// factor of the matrix (cr_r = 2(1 - Kr), cb_b = 2(1 - Kb), cb_g = -2 Kb(1 - Kb) / Kg,
/// cr_g = -2 Kr(1 - Kr) / Kg, cy = 1; limited range scales Y by 255/219 and chroma by 255/224)
/// times 2^16, rounded. The matrices of YuvMatrix give the same conversion as these
/// coefficients of their weights.
YuvCoefficients rounded_coefficients(double kr, double kb, YuvRange range);
/// The truncated-form coefficients of libswscale's unscaled x86 YCbCr -> RGB converter, from
/// its table for a matrix (what `sws_getCoefficients()` returns: Cr->R, Cb->B, Cb->G, Cr->G in
/// 16 fractional bits), derived as libswscale derives them (13 fractional bits), so that
/// frames are converted to the RGB that `ffmpeg -pix_fmt rgb24` gives for 4:2:0 and 4:2:2
/// frames of even height.
YuvCoefficients swscale_coefficients(const int table[4], YuvRange range);

// Offload (cpu, sok, sok_pinned, aok), to_string(Offload) and parse_offload: options.hpp.

/// At most this many entries in VideoOptions::devices (stream buffers).
inline constexpr int kMaxStreamBuffers = 16;

/// GPU modes: the form of the transform kernel. Every form writes the same bytes; they differ in
/// how a block of pixels reaches shared memory (the mission compares them: `mjpeg compare`).
enum class KernelVariant {
  direct,       ///< no staging: each thread reads its pixels from global memory
  pipeline,     ///< a block-scoped copy pipeline of `stages` stages, every thread copies (default)
  partitioned,  ///< a block-scoped copy pipeline, one producer warp and consumer warps
  primitives,   ///< the __pipeline_memcpy_async / commit / wait_prior primitives
};
/// "direct", "pipeline", "partitioned", "primitives".
const char* to_string(KernelVariant variant);
/// Parses the names of to_string(KernelVariant). Throws UsageError for any other text.
KernelVariant parse_kernel_variant(const std::string& text);

/// GPU modes: what the GPU hands back for the CPU to finish. The same bytes either way.
enum class GpuOutput {
  automatic,     ///< tokens, but coefficients for progressive JPEG (the faster of the two)
  tokens,        ///< the Huffman symbols of each block: the CPU only packs bits
  coefficients,  ///< the quantized int16 coefficients: the CPU scans and codes them
};
/// "auto", "tokens", "coefficients".
const char* to_string(GpuOutput output);
/// Parses the names of to_string(GpuOutput). Throws UsageError for any other text.
GpuOutput parse_gpu_output(const std::string& text);

/// How the GPU modes run their kernels; the defaults are the fastest measured.
struct GpuTuning {
  KernelVariant kernel = KernelVariant::pipeline;
  int stages = 2;  ///< stages of the staged kernels' copy pipeline, 1..4
  GpuOutput output = GpuOutput::automatic;
};

/// How far an encode is, as the `on_progress` callback sees it.
struct Progress {
  std::int64_t frames = 0;       ///< delivered so far
  std::uint64_t jpeg_bytes = 0;  ///< their bytes
  double elapsed_s = 0;          ///< since the encode started
};

struct EncodedFrame;

/// Everything a VideoEncoder is configured with. Fixed for the encoder's lifetime: every frame
/// has this size and format.
struct VideoOptions {
  int width = 0;   ///< pixels, 1..kMaxDimension
  int height = 0;  ///< pixels, 1..kMaxDimension
  FrameFormat format = FrameFormat::rgb24;
  /// Planar formats only: how the YCbCr samples become the RGB that is encoded (the same
  /// integer conversion as the CLI applies to Y4M input).
  YuvMatrix matrix = YuvMatrix::bt601;
  YuvRange range = YuvRange::limited;
  /// Planar formats: when set, the conversion these coefficients give instead of the one of
  /// `matrix` and `range`.
  std::optional<YuvCoefficients> coefficients;
  /// The JPEG parameters, exactly as for encode_jpeg(): quality, subsampling (of the output),
  /// restart interval, optimized Huffman tables, quantization table presets or own tables.
  EncodeOptions jpeg;
  Offload offload = Offload::cpu;
  int device = 0;           ///< CUDA device (GPU modes only), 0..1023; see `devices`
  /// GPU modes: several CUDA devices (each 0..1023), one stream buffer (its own streams,
  /// events and `slots` slots) per entry; a frame goes to whichever buffer has a free slot
  /// first, and the bytes are the same as with one device. Empty: {device}. An index may
  /// repeat ({0, 0}: two buffers on device 0); at most 16 entries. gpu_devices() (devices.hpp)
  /// lists the devices.
  std::vector<int> devices;
  /// Producer threads (copy or read frames into slots). 0: 1 for VideoEncoder; for
  /// encode_all, together with entropy_threads = 0, a split that balances itself.
  int producers = 0;
  /// Threads that Huffman-code (and, in cpu mode, transform) frames. 0: one per core (cpu
  /// mode), one per core less one (GPU modes); for encode_all see `producers`.
  int entropy_threads = 0;
  /// encode_all with neither count given: the total of the split that balances itself (0:
  /// one per core, one fewer in the GPU modes). Several encodes compared with each other (e.g.
  /// the offload modes) use one total so that they differ only in how they offload.
  int threads = 0;
  /// Frames in flight (stream-buffer slots, allocated once). 0: a default from the thread
  /// counts, 8 more in aok where the frames are uploaded from where they lie (in memory
  /// page-locked, a Y4M file) or decoded on the device (GPU modes: lowered where the device's
  /// or host's memory would not hold them).
  int slots = 0;
  GpuTuning gpu;  ///< ignored by the cpu mode
  /// Optional: called after each frame was delivered (on the thread that delivers frames, in
  /// order). Must not throw; keep it short (it delays the next frame's delivery).
  std::function<void(const Progress&)> on_progress;
  /// Optional: sees each frame right after it was encoded, with the pixels it was encoded
  /// from (ImageView, options.hpp): rgb24 (planar and bgr24 input: converted, exactly as the
  /// encoder converted them) or gray8 for gray8 input; `jpeg` is the frame that will be
  /// delivered. Called by the encoder's worker threads, concurrently and in any order (see
  /// jpeg.index): it must be thread-safe and must not keep the pointers. An exception stops
  /// the encode like a sink's. Costs a conversion per planar frame; leave it empty otherwise.
  std::function<void(const ImageView& pixels, const EncodedFrame& jpeg)> on_frame;
  /// Optional, lighter than on_frame (no pixels are prepared): sees each encoded frame, called
  /// like on_frame (worker threads, concurrently, any order). E.g. a check of the bytes.
  std::function<void(const EncodedFrame& jpeg)> on_jpeg;
  /// VideoEncoder: frames come to encode(const DeviceFrame&) in CUDA device memory of
  /// `device` (a planar `format`; nv12 frames as yuv420p) instead of encode(const FrameView&).
  /// aok copies each one device to device into its slot (no host copy, no upload); sok and
  /// cpu copy it to the host first. Needs a CUDA build.
  bool device_frames = false;
  /// Optional: when set, the encode times its GPU work with CUDA events, records a timeline
  /// and fills *profile (profile.hpp) when encode_all returns (VideoEncoder: after finish()).
  /// Costs a little; must outlive the encode.
  Profile* profile = nullptr;
  /// encode_all in a GPU mode: the CPU encodes the first frames (as Offload::cpu would)
  /// while the GPU's set-up (device check, a context per device, slots, plans) is made on
  /// another thread, and hands the rest of the stream to the GPU once it is ready, so that
  /// the GPU's start (0.2-0.4 s) costs no time in which nothing is encoded. A stream that ends
  /// before the GPU is ready is encoded on the CPU alone (encode_all still waits for the
  /// set-up to end), and so is the whole stream when the GPU cannot be used: no error then,
  /// Stats::gpu_problem says why. The same bytes either way. Ignored by VideoEncoder and by
  /// the cpu mode.
  bool cpu_start = false;
};

/// Throws UsageError naming the first field that is out of range: size 0 or above
/// kMaxDimension, negative counts, a bad EncodeOptions field (see validate(EncodeOptions)),
/// a device (or an entry of devices) outside 0..1023, more than 16 entries in devices. Does
/// not look for a GPU (the encoder does that).
void validate(const VideoOptions& options);

/// Bytes of one frame of `options` in the contiguous layout: packed formats rows packed
/// (width * 3 or width bytes each), planar formats Y then Cb then Cr, each plane's rows packed
/// (the layout of a Y4M frame). Throws UsageError for an invalid size.
std::size_t frame_bytes(const VideoOptions& options);

// ---------------------------------------------------------------------------------------------
// Frames in and out
// ---------------------------------------------------------------------------------------------

/// A read-only view of one input frame. Packed formats use plane[0] only; planar formats use
/// plane[0..2] (Y, Cb, Cr). stride[i] = bytes from one row of plane i to the next, 0 meaning
/// rows packed. The view does not own the pixels.
struct FrameView {
  int width = 0;
  int height = 0;
  const std::uint8_t* plane[3] = {nullptr, nullptr, nullptr};
  std::size_t stride[3] = {0, 0, 0};

  /// A packed frame (rgb24, bgr24, gray8) at `data`, rows `stride` bytes apart (0: packed).
  static FrameView packed(const std::uint8_t* data, int width, int height,
                          std::size_t stride = 0);
  /// A planar frame from three plane pointers and their row strides (0: packed rows), e.g.
  /// an FFmpeg AVFrame's data[] and linesize[].
  static FrameView planar(const std::uint8_t* y, const std::uint8_t* cb, const std::uint8_t* cr,
                          int width, int height, std::size_t y_stride = 0,
                          std::size_t c_stride = 0);
  /// A frame of `options` stored in the contiguous layout of frame_bytes() at `data`; for a
  /// planar format stride[] holds that layout's row pitches (the plane widths).
  static FrameView contiguous(const std::uint8_t* data, const VideoOptions& options);
};

/// One input frame in CUDA device memory, for VideoEncoder::encode(const DeviceFrame&) (an
/// encoder made with VideoOptions::device_frames): the output of a renderer, an inference
/// pipeline or a hardware decoder, encoded without a trip through host memory. The view does
/// not own the memory.
struct DeviceFrame {
  enum class Layout {
    planar,  ///< plane[0..2]: Y, Cb, Cr of VideoOptions::format (yuv400p: Y only)
    nv12,    ///< plane[0]: Y, plane[1]: interleaved Cb, Cr pairs (4:2:0; format yuv420p)
  };
  Layout layout = Layout::planar;
  int width = 0;
  int height = 0;
  const void* plane[3] = {nullptr, nullptr, nullptr};  ///< device pointers
  std::size_t pitch[3] = {0, 0, 0};  ///< bytes from one row to the next, at least a row's bytes
  /// The cudaStream_t (as void*) whose work writes the frame; null: the legacy default stream.
  /// The encoder's copy runs after the work issued on it before encode(), and work issued on
  /// it after encode() returns runs after the copy.
  void* stream = nullptr;
};

/// One encoded frame, seen by a FrameSink: a complete JFIF file (SOI..EOI). `data` is valid
/// only during the write() call that receives it.
struct EncodedFrame {
  std::int64_t index = 0;  ///< 0-based position in the stream
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
};

/// One encoded frame returned by VideoEncoder::encode() / finish(); owns its bytes.
struct JpegFrame {
  std::int64_t index = 0;           ///< 0-based position in the stream
  std::vector<std::uint8_t> bytes;  ///< a complete JFIF file (SOI..EOI)
};

/// Receives encoded frames, strictly in stream order (index 0, 1, 2, ...), one call at a time
/// on one of the encoder's threads (not necessarily the caller's). An exception thrown by
/// write() stops the encode; the encoder rethrows it to its caller.
class FrameSink {
 public:
  virtual ~FrameSink() = default;
  virtual void write(const EncodedFrame& frame) = 0;
};

/// Where encode_all() reads frames from.
class FrameSource {
 public:
  virtual ~FrameSource() = default;
  /// Writes frame `index` into `dst` (frame_bytes(options) bytes, the contiguous layout) and
  /// returns true, or returns false when the stream has no frame `index` (and then none
  /// after it). Indices come in increasing order 0, 1, 2, ...; without concurrent_reads() one
  /// call at a time, otherwise up to VideoOptions::producers calls at once (for different
  /// indices, finishing in any order). `dst` is the encoder's own slot memory (page-locked in
  /// the GPU modes): reading straight into it avoids a copy. An exception stops the encode and
  /// is rethrown by encode_all().
  virtual bool read(std::int64_t index, std::uint8_t* dst) = 0;
  /// True when read() may run on several threads at once (e.g. positional reads of a file).
  virtual bool concurrent_reads() const { return false; }
  /// With concurrent_reads(): how many read() calls at once still gain anything (0: no
  /// limit), e.g. 2 for a decoder that decodes one frame at a time and copies the previous
  /// one out meanwhile. The encoder gives the reading no more threads than that.
  virtual int max_concurrent_reads() const { return 0; }
  /// How many frames read() will deliver, when known (-1: unknown). A short stream (a still
  /// picture) then gets no more slots than it has frames, which matters for huge pictures.
  virtual std::int64_t frame_count() const { return -1; }

 private:
  /// The library's own sources (Y4mSource, MemorySource, NvdecSource) answer with the reader
  /// encode_all runs instead of read(): positional and mapped reads, lent frames, frames in
  /// device memory; they throw UsageError when `options` do not describe their frames. Any
  /// other source has none, and its frames come through read().
  virtual pipeline::FrameSource* library_reader(const VideoOptions& options) {
    (void)options;
    return nullptr;
  }
  friend pipeline::FrameSource* library_reader(FrameSource& source, const VideoOptions& options);
};

/// Frames that already lie in memory for the whole encode (a clip decoded once, frames mapped
/// from a file): encode_all encodes them where they lie, without copying them into its slots
/// (the cpu mode transforms them in place; the GPU modes upload from there, without a staging
/// copy once pin()ned). bgr24 frames are copied (and reordered) like any source's.
class MemorySource final : public FrameSource {
 public:
  /// `frames`: one pointer per frame to frame_bytes(format) bytes in the contiguous layout,
  /// valid and unchanged until the source is destroyed; `format`: their width, height, format,
  /// matrix, range and coefficients (the rest of it is ignored). Throws UsageError for an
  /// invalid format, no frames, or a null frame.
  MemorySource(std::vector<const std::uint8_t*> frames, const VideoOptions& format);
  ~MemorySource() override;
  MemorySource(const MemorySource&) = delete;
  MemorySource& operator=(const MemorySource&) = delete;

  /// Page-locks every frame (until the source is destroyed), so that the GPU modes upload them
  /// at full PCIe speed straight from where they lie. Throws Error when there is no usable CUDA
  /// device or the memory cannot be locked (the frames are then uploaded through a copy, which
  /// is slower but equally correct). A second call does nothing.
  void pin();
  bool pinned() const;

  /// Copies frame `index` (used when encode_all does not read the frames where they lie: a
  /// wrapped source, bgr24 frames).
  bool read(std::int64_t index, std::uint8_t* dst) override;
  bool concurrent_reads() const override { return true; }
  std::int64_t frame_count() const override;

 private:
  pipeline::FrameSource* library_reader(const VideoOptions& options) override;
  struct Impl;  ///< the pipeline's own in-memory source (src/api)
  std::unique_ptr<Impl> impl_;
};

// ---------------------------------------------------------------------------------------------
// Audio carried beside the video
// ---------------------------------------------------------------------------------------------

/// An audio stream that an output carries beside the frames, copied packet by packet as the
/// source holds it (what `ffmpeg -c:a copy` does): never decoded or re-encoded.
struct AudioFormat {
  /// The codec, by FFmpeg's name for it. An AVI carries little-endian PCM ("pcm_u8",
  /// "pcm_s16le", "pcm_s24le", "pcm_s32le", "pcm_f32le", "pcm_f64le", "pcm_alaw",
  /// "pcm_mulaw"), "mp2", "mp3", "ac3" and "aac" (FileSink::audio_problem says so for a name).
  std::string codec;
  int sample_rate = 0;  ///< Hz
  int channels = 0;
  /// Samples per packet of a frame-based codec (AAC 1024, MP2 and MP3 1152, AC-3 1536); 0 for
  /// PCM, whose packets hold any whole number of samples.
  int frame_samples = 0;
  std::int64_t bit_rate = 0;  ///< bits per second where known (0: unknown)
  /// The codec's configuration where it has one out of band (AAC from MP4: its
  /// AudioSpecificConfig; empty for AAC in ADTS frames, whose packets carry it).
  std::vector<std::uint8_t> extradata;
};

/// One audio packet, as the source holds it.
struct AudioPacket {
  std::vector<std::uint8_t> data;
  /// Its start, in seconds after the start of the first video frame (slightly negative for a
  /// packet that begins before it: it goes first).
  double time = 0;
};

/// Where a FileSink takes the audio it carries from: one stream's packets in time order.
class AudioSource {
 public:
  virtual ~AudioSource() = default;
  virtual const AudioFormat& format() const = 0;
  /// Fills `packet` with the next packet and returns true, or returns false at the end of the
  /// stream. Called by the sink as it writes (the thread that calls FileSink::write, then
  /// close()), one call at a time. An exception stops the encode like a sink's.
  virtual bool read(AudioPacket& packet) = 0;
};

/// What a FileSink writes beside the frames, where its container has room for it.
struct FileSinkOptions {
  int fps_num = 25;  ///< the frame rate fps_num / fps_den (AVI)
  int fps_den = 1;
  /// false: the output must not exist, neither when the sink is created (Error) nor when it is
  /// published at close(), where its name is claimed without replacing anything that appeared
  /// meanwhile (Error, nothing of the other file touched, no temporary file left).
  bool overwrite = true;
  /// The pixels' aspect ratio, width over height of one pixel (1:1: square pixels; 4:3 for
  /// 1440x1080 HDV shown 16:9). AVI: its 'vprp' header states the display aspect ratio it
  /// gives, where players read it. The frames carry it in their JFIF headers when they are
  /// encoded with EncodeOptions::density = JfifDensity::pixel_aspect(num, den).
  int aspect_num = 1;
  int aspect_den = 1;
  /// Tags as (key, text), keyed as FFmpeg keys them. AVI keeps title, artist, comment, date,
  /// genre, copyright, album, language, track and encoded_by (its RIFF INFO chunks INAM,
  /// IART, ICMT, ICRD, IGNR, ICOP, IPRD, ILNG, IPRT, ITCH) and leaves other keys out.
  std::vector<std::pair<std::string, std::string>> metadata;
  /// Audio to copy into the output (AVI only; audio_problem() says whether it can), or null.
  /// Before each frame the sink writes the packets that start before that frame ends, so the
  /// two are interleaved; close() writes the rest. Must outlive close().
  AudioSource* audio = nullptr;
  /// Numbered JPEG outputs: the number of the first frame's file (default 1, as ffmpeg's).
  int first_number = 1;
  /// Text kept with an AVI or .mjpeg output where players ignore it, written by close(): an
  /// AVI's 'JUNK' chunk after its last index, after a .mjpeg stream's last frame (what a cat
  /// of such streams gives plays, but is no longer only JPEGs); StoredFrames
  /// (stored_frames.hpp) reads it back. "" (default): none, and the file is the same as
  /// without it. Other outputs ignore it. `mjpeg encode --part` keeps its part record there.
  std::string note;
};

/// Writes the frames to a file, chosen by the name: "*.avi" a RIFF AVI with the MJPG codec
/// (OpenDML, so beyond 4 GiB; with audio, metadata and the pixel aspect ratio of
/// FileSinkOptions), "*.mjpeg" / "*.mjpg" / "-" the JPEGs back to back (what `ffmpeg -f mjpeg`
/// reads; "-" is standard output; so is an existing character device or FIFO of another name,
/// such as /dev/null or a named pipe, written in place), or a printf pattern with one integer conversion such as
/// "out/%05d.jpg": one JPEG file per frame, numbered from 1, or "*.jpg" / "*.jpeg" without a
/// conversion: one picture (a second frame is an error).
/// Every frame must be a JPEG of the size the sink was made for, all of one layout (the
/// components and sampling of the first): another is refused with an Error, and then nothing
/// is published (close() throws too).
/// The file is written under a temporary name and appears under its own name only at
/// close(); a FileSink destroyed without close() (an error) removes what it wrote.
/// Not thread-safe: write() comes from one encoder thread at a time, close() after finish().
class FileSink final : public FrameSink {
 public:
  /// fps = fps_num / fps_den (AVI only). `overwrite` false: throws Error if the file (for a
  /// pattern: a frame's file) already exists, and close() never replaces one (see
  /// FileSinkOptions::overwrite). Throws UsageError for an unknown extension or bad arguments,
  /// Error when the file cannot be created.
  FileSink(const std::string& path, int width, int height, int fps_num = 25, int fps_den = 1,
           bool overwrite = true);
  /// The same with everything of FileSinkOptions. Throws UsageError also for audio given to
  /// an output that cannot carry it (audio_problem()).
  FileSink(const std::string& path, int width, int height, const FileSinkOptions& options);
  ~FileSink() override;
  FileSink(const FileSink&) = delete;

  /// The constructor's checks of `path`, without creating anything (so that a program can
  /// refuse a bad output before it reads any input): check_name throws UsageError for a name
  /// of no output kind above; check_target throws Error when the folder the file (a pattern:
  /// its file numbered `first_number`) would go to is missing, or, with `overwrite` false, the
  /// file exists.
  static void check_name(const std::string& path);
  static void check_target(const std::string& path, bool overwrite, int first_number = 1);
  /// Empty when an output named `path` carries audio of `format`; otherwise why not, a phrase
  /// such as "AVI has no place for opus audio" or ".mjpeg holds only the video".
  static std::string audio_problem(const std::string& path, const AudioFormat& format);
  /// The metadata keys an output named `path` keeps (see FileSinkOptions::metadata; none but
  /// for an AVI).
  static std::vector<std::string> metadata_keys(const std::string& path);
  FileSink& operator=(const FileSink&) = delete;

  /// Appends one frame (after the audio that starts before it ends). Throws Error on an I/O
  /// failure (disk full: with the system's message) or a frame that does not fit the sink
  /// (not a JPEG, another size or layout), and then removes what was written.
  void write(const EncodedFrame& frame) override;
  /// Writes the rest of the audio, finalizes the file (AVI indexes and counts) and publishes
  /// it. Throws Error on failure, or after a refused frame.
  void close();
  std::int64_t frames_written() const;
  std::uint64_t bytes_written() const;  ///< container overhead included

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---------------------------------------------------------------------------------------------
// Statistics
// ---------------------------------------------------------------------------------------------

/// What an encode did. Busy times are summed over the threads of a stage (seconds), so they
/// can exceed wall_s.
struct Stats {
  std::int64_t frames = 0;       ///< frames delivered
  std::uint64_t jpeg_bytes = 0;  ///< their bytes (no container overhead)
  double wall_s = 0;             ///< from the start of the encode to its end
  double read_s = 0;             ///< producers copying (VideoEncoder) or reading (FrameSource)
  double transform_s = 0;        ///< cpu mode: colour conversion, DCT, quantization
  double gpu_s = 0;              ///< GPU modes: host time issuing or waiting for GPU work
  double entropy_s = 0;          ///< Huffman coding
  double write_s = 0;            ///< delivering frames (FrameSink::write, or collecting them)
  std::uint64_t upload_bytes = 0;    ///< host to device (GPU modes)
  std::uint64_t download_bytes = 0;  ///< device to host (GPU modes)
  Offload offload = Offload::cpu;
  int producers = 0;        ///< the thread split the encode ended with
  int entropy_threads = 0;
  int slots = 0;            ///< frames in flight at most

  // The finer split, as `mjpeg encode --stats` prints it (after the encode; 0 where a stage did
  // not run):
  double setup_s = 0;            ///< allocating slots, plans and streams (inside wall_s)
  double first_frame_s = 0;      ///< from the start of the encode to its first frame delivered
  double upload_issue_s = 0;     ///< aok: producers issuing uploads (inside read_s)
  double download_issue_s = 0;   ///< aok with tokens: issuing the downloads (inside gpu_s)
  double result_wait_s = 0;      ///< GPU modes: workers waiting for a frame's GPU results
                                 ///< (inside gpu_s)
  bool self_balancing = false;   ///< the producer / entropy split balanced itself
  int rebalances = 0;            ///< times it moved a thread
  std::int64_t split_frames = 0; ///< frames coded on several threads (the last ones)
  /// GPU modes: frames per stream buffer, in the order of VideoOptions::devices.
  std::vector<std::int64_t> frames_per_buffer;
  /// The stage that bounds the frame rate (e.g. "entropy", "kernel") and the rate it alone
  /// would allow (its threads times frames over its busy time); empty / 0 when unmeasured.
  std::string bound_by;
  double bound_fps = 0;
  /// VideoOptions::cpu_start: frames the CPU encoded before the GPU took over (all of them
  /// when it never did), when the GPU was ready and when it took over (seconds from the start
  /// of the encode; 0: never), and why it never did when its set-up failed (else empty).
  std::int64_t cpu_start_frames = 0;
  double gpu_ready_s = 0;
  double handover_s = 0;
  std::string gpu_problem;
};

// ---------------------------------------------------------------------------------------------
// VideoEncoder: the push interface
// ---------------------------------------------------------------------------------------------

/// A streaming encoder: encode() one frame after another, then finish().
///
/// Ordering: frames are numbered in the order encode() is called and delivered strictly in
/// that order, whatever the threads.
/// Input lifetime: encode() copies the frame into the encoder's own memory before it returns;
/// the caller may reuse or free the pixels as soon as encode() returns.
/// Delivery: without a sink, encode() and finish() return the frames finished so far; with a
/// FrameSink, the sink's write() receives each frame on an encoder thread as soon as it is
/// finished (and encode() / finish() return empty vectors).
/// Threading: one VideoEncoder must not be used by several threads at once (calls may come
/// from different threads one after another). Different encoders are independent.
/// Errors: an error on an encoder thread (GPU failure, a sink that threw) is rethrown by a
/// later encode() or finish() (at the latest by finish()); from then on every call throws it.
class VideoEncoder {
 public:
  /// Validates `options`, allocates every slot and buffer, starts the threads. Frames are
  /// collected and returned by encode() / finish().
  /// Throws UsageError for invalid options (validate()), Error when a GPU mode is asked for
  /// and CUDA device `options.device` (or one of `options.devices`) is not there or not
  /// usable, or allocation fails.
  explicit VideoEncoder(const VideoOptions& options);
  /// As above, but each finished frame goes to `sink` (which must outlive the encoder or its
  /// finish()); write() is called on an encoder thread, in order, and must not call back into
  /// this encoder.
  VideoEncoder(const VideoOptions& options, FrameSink& sink);
  /// Without finish(): stops the threads, drops the frames in flight (a sink may have
  /// received some of them). Never throws.
  ~VideoEncoder();
  VideoEncoder(VideoEncoder&&) noexcept;
  VideoEncoder& operator=(VideoEncoder&&) noexcept;
  VideoEncoder(const VideoEncoder&) = delete;
  VideoEncoder& operator=(const VideoEncoder&) = delete;

  /// Hands one frame to the encoder. Blocks while every slot is busy (back-pressure) and
  /// until the frame is copied.
  /// Returns: the frames finished since the previous call, in order (always empty with a sink).
  /// Throws UsageError when the frame's size differs from the options, a plane the format needs
  /// is null, a stride is smaller than a row, or finish() was called (the encoder stays usable
  /// after a rejected frame). Throws the encoder's error (see the class comment).
  std::vector<JpegFrame> encode(const FrameView& frame);

  /// Hands one frame in device memory to an encoder made with VideoOptions::device_frames.
  /// Returns (with the frames finished, as above) once the frame's copy into the encoder's own
  /// memory is enqueued behind the work on `frame.stream`; that stream then waits for the
  /// copy. So the caller may rewrite the buffer with work on `frame.stream` at once, and
  /// from the host or another stream once `frame.stream` has been synchronized after the
  /// call. Throws UsageError as encode(const FrameView&) does, and when the encoder was not
  /// made for device frames or the layout does not fit the format.
  std::vector<JpegFrame> encode(const DeviceFrame& frame);

  /// Ends the stream: waits until every frame is encoded and delivered, stops the threads.
  /// Returns: the frames not returned yet, in order (empty with a sink). A second call
  /// returns an empty vector. Throws the encoder's error, if there was one.
  /// A FileSink given to the encoder is not closed: close it after finish().
  std::vector<JpegFrame> finish();

  /// Before finish(): frames and jpeg_bytes delivered so far (the rest zero). After finish():
  /// the whole encode's statistics. Never throws.
  Stats stats() const;

  /// The options as given (counts of 0 not resolved).
  const VideoOptions& options() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---------------------------------------------------------------------------------------------
// encode_all: the pull interface
// ---------------------------------------------------------------------------------------------

/// Encodes every frame of `source` into `sink`, in order, on the calling thread and the
/// encoder's threads; returns when the source has ended (or `stop` became true) and every
/// frame read was delivered.
/// `stop` (may be null): once it becomes true no new frame is read; frames already read are
/// still encoded and delivered; then encode_all returns normally.
/// Does not close the sink. Throws UsageError for invalid options, Error for a missing GPU (as
/// VideoEncoder), and the first exception of the source, the sink or the GPU (all threads are
/// stopped and joined first).
Stats encode_all(const VideoOptions& options, FrameSource& source, FrameSink& sink,
                 const std::atomic<bool>* stop = nullptr);

/// Converts one frame of `options` to the pixels the encoder encodes from it: rgb24 rows
/// (`stride` bytes apart, at least width * 3) for rgb24, bgr24 and the planar formats, gray8
/// rows (at least width) for gray8; exactly the conversion of the encoder (and of on_frame).
/// Throws UsageError as VideoEncoder::encode() does for a frame that does not fit `options`.
void to_pixels(const FrameView& frame, const VideoOptions& options, std::uint8_t* dst,
               std::size_t stride);

/// Empty when the GPU modes can hold `slots` slots of frames of `options` on each of its
/// devices (several stream buffers on one device share it); otherwise the reason, a phrase
/// such as "a 30000x20000 frame needs 160.9 GiB of device memory for 48 slots (pixels and
/// coefficients), device 0 has 139.8 GiB". Devices that are not there are not judged here.
/// Never throws.
std::string gpu_memory_problem(const VideoOptions& options, int slots);

/// The slots an encode of `options` will use: options.slots, or the default that VideoEncoder
/// (`push`) or encode_all (not push) choose for it, for a source of `frames` frames (-1:
/// unknown). Throws UsageError for invalid options.
int slot_count(const VideoOptions& options, bool push, std::int64_t frames = -1);

}  // namespace mjpeg
