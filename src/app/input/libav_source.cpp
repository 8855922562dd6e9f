// Video files through FFmpeg's libraries (see libav_source.hpp).
//
// What it promises, each a test in tests/cli (or tests/app/test_video_input.cpp):
//  - Frames of 4:2:0 and 4:2:2 of even height and gray frames go to the encoder as planes
//    (set_planar_format), copied once from the decoder into the slot; the transforms convert
//    them with libswscale's own integer arithmetic (ycbcr.hpp), so that the RGB encoded is
//    `ffmpeg -i FILE -pix_fmt rgb24`'s. Odd heights, 4:4:4 and nv12, whose chroma libswscale
//    filters or interpolates for rgb24, go through libswscale itself.
//  - --rgb-decode swscale, and every other format: the RGB of every frame is what
//    `ffmpeg -i FILE -pix_fmt rgb24` gives (libswscale with the source's matrix and range,
//    SWS_BICUBIC, into padded rows: libav_rgb.hpp).
//  - A display matrix (phone clips) is applied as ffmpeg applies it (transpose / hflip / vflip
//    of the decoded planes before the conversion; planar frames stay planar, turned), unless
//    --no-autorotate.
//  - A file that ends before what its container announces, a demuxer error and damaged data are
//    errors (nothing is written); with --keep-going the frames that decode are encoded and a
//    notice says what was lost.
//  - Notices for interlaced video, a variable frame rate evened out, and video streams left out
//    (--stream N picks one).
#include "libav_source.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include <fmt/format.h>

#include "decode_turns.hpp"
#include "libav_rgb.hpp"
#include "video_index.hpp"
#include "ycbcr.hpp"
#include "mjpeg/error.hpp"
#include "mjpeg/vocabulary.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/display.h>
#include <libavutil/error.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <libavutil/rational.h>
#include <libswscale/swscale.h>
}

namespace mjpeg::app {
namespace {

// ---------------------------------------------------------------------------------------------
// What the demuxer says. libav* print nothing (mjpeg speaks in one-line errors and notices); but
// an error a demuxer logs while reading ("partial file", "File ended prematurely") is often its
// only sign of a truncated file, so a source registers its format context and collects them.
// ---------------------------------------------------------------------------------------------

struct LogTarget {
  const void* context;
  std::vector<std::string>* messages;
};
std::mutex g_log_mutex;
std::vector<LogTarget> g_log_targets;

extern "C" void log_callback(void* avcl, int level, const char* format, va_list args) {
  if (level > AV_LOG_ERROR || avcl == nullptr) return;
  std::lock_guard<std::mutex> lock(g_log_mutex);
  for (const LogTarget& t : g_log_targets) {
    if (t.context != avcl) continue;
    char text[256];
    std::vsnprintf(text, sizeof text, format, args);
    std::string line(text);
    while (!line.empty() && (line.back() == '\n' || line.back() == ' ' || line.back() == '.'))
      line.pop_back();
    if (!line.empty() && t.messages->size() < 16) t.messages->push_back(line);
    return;
  }
}

void install_log_callback() {
  static std::once_flag once;
  std::call_once(once, [] { av_log_set_callback(log_callback); });
}

/// Registers `context` for as long as it lives.
class LogCapture {
 public:
  LogCapture() = default;
  void attach(const void* context) {
    install_log_callback();
    std::lock_guard<std::mutex> lock(g_log_mutex);
    g_log_targets.push_back({context, &messages_});
    context_ = context;
  }
  ~LogCapture() {
    std::lock_guard<std::mutex> lock(g_log_mutex);
    g_log_targets.erase(std::remove_if(g_log_targets.begin(), g_log_targets.end(),
                                       [&](const LogTarget& t) { return t.context == context_; }),
                        g_log_targets.end());
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;
  /// Messages so far (read under the lock: decoder threads may log).
  std::vector<std::string> messages() const {
    std::lock_guard<std::mutex> lock(g_log_mutex);
    return messages_;
  }
  void clear() {
    std::lock_guard<std::mutex> lock(g_log_mutex);
    messages_.clear();
  }

 private:
  const void* context_ = nullptr;
  std::vector<std::string> messages_;
};

// ---------------------------------------------------------------------------------------------
// Colour
// ---------------------------------------------------------------------------------------------

std::string av_error_text(int err) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(err, buf, sizeof buf);
  return buf;
}

/// The swscale coefficient table for a stream's colour matrix, as ffmpeg's own scale filter
/// picks it (its in_color_matrix=auto): BT.709, FCC, SMPTE 240M and BT.2020 by their tags;
/// everything else, untagged sources of any size included, BT.601.
int sws_colorspace(AVColorSpace spc) {
  switch (spc) {
    case AVCOL_SPC_BT709: return SWS_CS_ITU709;
    case AVCOL_SPC_FCC: return SWS_CS_FCC;
    case AVCOL_SPC_SMPTE240M: return SWS_CS_SMPTE240M;
    case AVCOL_SPC_BT2020_NCL:
    case AVCOL_SPC_BT2020_CL: return SWS_CS_BT2020;
    default: return SWS_CS_ITU601;
  }
}

const char* matrix_name(AVColorSpace spc) {
  switch (spc) {
    case AVCOL_SPC_BT709: return "BT.709";
    case AVCOL_SPC_BT470BG:
    case AVCOL_SPC_SMPTE170M: return "BT.601";
    case AVCOL_SPC_FCC: return "FCC";
    case AVCOL_SPC_SMPTE240M: return "SMPTE 240M";
    case AVCOL_SPC_BT2020_NCL:
    case AVCOL_SPC_BT2020_CL: return "BT.2020";
    case AVCOL_SPC_RGB: return "RGB";
    case AVCOL_SPC_UNSPECIFIED: return "untagged, as BT.601";
    default: return "other, as BT.601";
  }
}

/// --colorspace as a swscale table (-1: none given).
int sws_colorspace_option(const std::string& name) {
  if (name.empty()) return -1;
  switch (vocab::parse_name<YuvMatrix>(name)) {
    case YuvMatrix::bt601: return SWS_CS_ITU601;
    case YuvMatrix::bt709: return SWS_CS_ITU709;
    case YuvMatrix::bt2020: return SWS_CS_BT2020;
  }
  return -1;
}

const char* sws_colorspace_name(int cs) {
  switch (cs) {
    case SWS_CS_ITU709: return "BT.709";
    case SWS_CS_BT2020: return "BT.2020";
    default: return "BT.601";
  }
}

bool is_full_range(const AVFrame& f) {
  if (f.color_range == AVCOL_RANGE_JPEG) return true;
  // The deprecated yuvj* formats mean full range even when the tag is missing.
  const auto fmt = static_cast<AVPixelFormat>(f.format);
  return fmt == AV_PIX_FMT_YUVJ420P || fmt == AV_PIX_FMT_YUVJ422P ||
         fmt == AV_PIX_FMT_YUVJ444P || fmt == AV_PIX_FMT_YUVJ440P ||
         fmt == AV_PIX_FMT_YUVJ411P;
}

bool is_rgb_format(int format) {
  const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(static_cast<AVPixelFormat>(format));
  return d != nullptr && (d->flags & AV_PIX_FMT_FLAG_RGB) != 0;
}

/// What the encoder gets: rgb24 rows, or (a planar `format`) the planes, converted to RGB with
/// `coefficients`.
struct FrameLayout {
  int width = 0, height = 0;
  FrameFormat format = FrameFormat::rgb24;  ///< rgb24, yuv420p, yuv422p or yuv400p
  YuvCoefficients coefficients{};
  /// 10- or 12-bit 4:2:0 frames: reduced to 8-bit planes as libswscale reduces them
  /// (yuv420p10 -> yuv420p, its ordered dither), then converted as 8-bit 4:2:0 planes.
  bool reduce = false;
  /// The planes are converted to RGB by libswscale after the source (swscale_source): reduced
  /// 10- or 12-bit frames of odd height, whose RGB libswscale's scaler makes.
  bool swscale_after = false;
  const int* table = nullptr;  ///< libswscale's coefficient table of the matrix
  bool full = false;           ///< full range
  bool is_planar() const { return mjpeg::is_planar(format); }
  bool has_chroma() const { return is_planar() && format != FrameFormat::yuv400p; }
  /// log2 of the pixels per chroma sample, horizontally / vertically.
  int shift_x() const { return format == FrameFormat::yuv420p || format == FrameFormat::yuv422p; }
  int shift_y() const { return format == FrameFormat::yuv420p; }
};

/// Sets `f.format` and `f.coefficients` to the planar format the encoder reads frames of pixel
/// format `format` in, once they are `f.height` rows tall (after any turn), with libswscale
/// matrix `sws_matrix` and range `full`, where the transforms give libswscale's RGB for them
/// (ffmpeg_planes, ycbcr.hpp: 4:2:0 / 4:2:2 of even height, gray); otherwise `f` stays rgb24 and
/// libswscale converts each frame (odd heights, 4:4:4, nv12, whose chroma it interpolates), or,
/// for 10- and 12-bit 4:2:0 of odd height, the reduced 8-bit planes (`swscale_after`).
void set_planar_format(int format, AVColorSpace colorspace, int sws_matrix, bool full,
                       FrameLayout& f) {
  FrameFormat planes = FrameFormat::rgb24;
  f.reduce = false;
  f.swscale_after = false;
  f.table = sws_getCoefficients(sws_matrix);
  f.full = full;
  switch (static_cast<AVPixelFormat>(format)) {
    case AV_PIX_FMT_YUV420P10LE:
    case AV_PIX_FMT_YUV420P12LE:
      // Reduced to yuv420p first (reduce_planes), so that a GPU decoder's 10-bit output,
      // reduced the same way on the GPU (mjpeg::NvdecSource), gives the same frames.
      f.reduce = true;
      planes = FrameFormat::yuv420p;
      break;
    case AV_PIX_FMT_YUV420P:
    case AV_PIX_FMT_YUVJ420P: planes = FrameFormat::yuv420p; break;
    case AV_PIX_FMT_YUV422P:
    case AV_PIX_FMT_YUVJ422P: planes = FrameFormat::yuv422p; break;
    case AV_PIX_FMT_GRAY8: planes = FrameFormat::yuv400p; break;
    default: return;  // 4:4:4 and nv12 included (see above)
  }
  if (colorspace == AVCOL_SPC_RGB) {  // GBR stored as planes: not YCbCr
    f.reduce = false;
    return;
  }
  const std::optional<VideoOptions> exact =
      ffmpeg_planes(planes, f.width, f.height, sws_getCoefficients(sws_matrix),
                    full ? YuvRange::full : YuvRange::limited);
  if (!exact && !f.reduce) return;  // libswscale converts each frame itself
  // Reduced frames of odd height: libswscale converts their 8-bit planes after the reduction,
  // as it converts the 8-bit clip ffmpeg makes of them (and NVDEC's frames, reduced alike).
  f.swscale_after = !exact;
  f.coefficients = swscale_coefficients(f.table, full ? YuvRange::full : YuvRange::limited);
  f.format = planes;
}

// ---------------------------------------------------------------------------------------------
// Orientation: the display matrix as ffmpeg's command line applies it (autorotate)
// ---------------------------------------------------------------------------------------------

/// How the stored picture is turned for display. The names are those of ffmpeg's transpose
/// filter; `transpose` is its cclock_flip (a mirror about the main diagonal), `antitranspose`
/// its clock_flip.
enum class Turn { none, clock, cclock, transpose, antitranspose, hflip, vflip, rot180 };

bool swaps_axes(Turn t) {
  return t == Turn::clock || t == Turn::cclock || t == Turn::transpose || t == Turn::antitranspose;
}

const char* turn_words(Turn t) {
  switch (t) {
    case Turn::clock: return "rotated by 90 degrees clockwise";
    case Turn::cclock: return "rotated by 90 degrees counterclockwise";
    case Turn::transpose: return "rotated by 90 degrees counterclockwise and flipped vertically";
    case Turn::antitranspose: return "rotated by 90 degrees clockwise and flipped vertically";
    case Turn::hflip: return "mirrored left to right";
    case Turn::vflip: return "flipped upside down";
    case Turn::rot180: return "rotated by 180 degrees";
    case Turn::none: break;
  }
  return "as stored";
}

/// The display matrix of stream `st`, or null.
const std::int32_t* display_matrix(const AVStream* st) {
#if LIBAVFORMAT_VERSION_MAJOR >= 61
  const AVPacketSideData* sd = av_packet_side_data_get(
      st->codecpar->coded_side_data, st->codecpar->nb_coded_side_data, AV_PKT_DATA_DISPLAYMATRIX);
  if (sd == nullptr || sd->size < 9 * 4) return nullptr;
  return reinterpret_cast<const std::int32_t*>(sd->data);
#else
  std::size_t size = 0;
  const std::uint8_t* sd = av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, &size);
  if (sd == nullptr || size < 9 * 4) return nullptr;
  return reinterpret_cast<const std::int32_t*>(sd);
#endif
}

/// The turn for `m` (fftools' get_rotation and its choice of filters); `degrees` is the
/// clockwise display rotation in 0..360 (for a notice when it is not a multiple of 90).
Turn turn_of(const std::int32_t* m, double& degrees) {
  degrees = 0;
  if (m == nullptr) return Turn::none;
  double theta = -std::round(av_display_rotation_get(m));
  if (std::isnan(theta)) return Turn::none;
  theta -= 360 * std::floor(theta / 360 + 0.9 / 360);
  degrees = theta;
  if (std::fabs(theta - 90) < 1.0) return m[3] > 0 ? Turn::transpose : Turn::clock;
  if (std::fabs(theta - 180) < 1.0) {
    if (m[0] < 0 && m[4] < 0) return Turn::rot180;
    if (m[0] < 0) return Turn::hflip;
    if (m[4] < 0) return Turn::vflip;
    return Turn::none;
  }
  if (std::fabs(theta - 270) < 1.0) return m[3] < 0 ? Turn::antitranspose : Turn::cclock;
  if (std::fabs(theta) < 1.0) return m[4] < 0 ? Turn::vflip : Turn::none;
  return Turn::none;  // another angle: left as stored (the caller says so)
}

/// Writes plane `src` (w x h elements of `elem` bytes, rows `src_ls` apart) turned by `t`
/// into `dst` (rows `dst_ls` apart; (h x w) when the turn swaps the axes).
void turn_plane(const std::uint8_t* src, std::ptrdiff_t src_ls, int w, int h, int elem,
                std::uint8_t* dst, std::ptrdiff_t dst_ls, Turn t) {
  const int out_w = swaps_axes(t) ? h : w;
  const int out_h = swaps_axes(t) ? w : h;
  for (int y = 0; y < out_h; ++y) {
    std::uint8_t* d = dst + y * dst_ls;
    for (int x = 0; x < out_w; ++x) {
      int sx = x, sy = y;
      switch (t) {
        case Turn::clock: sx = y; sy = h - 1 - x; break;
        case Turn::cclock: sx = w - 1 - y; sy = x; break;
        case Turn::transpose: sx = y; sy = x; break;
        case Turn::antitranspose: sx = w - 1 - y; sy = h - 1 - x; break;
        case Turn::hflip: sx = w - 1 - x; break;
        case Turn::vflip: sy = h - 1 - y; break;
        case Turn::rot180: sx = w - 1 - x; sy = h - 1 - y; break;
        case Turn::none: break;
      }
      const std::uint8_t* s = src + sy * src_ls + static_cast<std::ptrdiff_t>(sx) * elem;
      if (elem == 1) d[x] = *s;
      else std::memcpy(d + static_cast<std::ptrdiff_t>(x) * elem, s, static_cast<std::size_t>(elem));
    }
  }
}

/// True when frames of `format` can be turned plane by plane, as ffmpeg's transpose / hflip /
/// vflip filters do (then the result is theirs exactly); otherwise the RGB is turned.
bool can_turn_planes(int format, Turn t) {
  const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(static_cast<AVPixelFormat>(format));
  if (d == nullptr) return false;
  if (d->flags & (AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_PAL))
    return false;
  const bool subsampled = d->log2_chroma_w != 0 || d->log2_chroma_h != 0;
  if (subsampled && !(d->flags & AV_PIX_FMT_FLAG_PLANAR)) return false;  // e.g. yuyv422
  if (swaps_axes(t) && d->log2_chroma_w != d->log2_chroma_h) return false;  // e.g. yuv422p
  return true;
}

/// `in` turned by `t` into `out` (same format; allocated here when its size or format differ).
void turn_frame(const AVFrame& in, AVFrame& out, Turn t) {
  const int w = swaps_axes(t) ? in.height : in.width;
  const int h = swaps_axes(t) ? in.width : in.height;
  if (out.width != w || out.height != h || out.format != in.format || out.data[0] == nullptr) {
    av_frame_unref(&out);
    out.format = in.format;
    out.width = w;
    out.height = h;
    if (av_frame_get_buffer(&out, 64) < 0) throw std::bad_alloc();
  }
  const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(static_cast<AVPixelFormat>(in.format));
  int steps[4] = {};
  av_image_fill_max_pixsteps(steps, nullptr, d);
  for (int p = 0; p < 4 && in.data[p] != nullptr; ++p) {
    const bool chroma = (p == 1 || p == 2) && !(d->flags & AV_PIX_FMT_FLAG_RGB);
    const int pw = chroma ? AV_CEIL_RSHIFT(in.width, d->log2_chroma_w) : in.width;
    const int ph = chroma ? AV_CEIL_RSHIFT(in.height, d->log2_chroma_h) : in.height;
    turn_plane(in.data[p], in.linesize[p], pw, ph, steps[p], out.data[p], out.linesize[p], t);
  }
  out.colorspace = in.colorspace;
  out.color_range = in.color_range;
}

// ---------------------------------------------------------------------------------------------
// The source
// ---------------------------------------------------------------------------------------------

struct IoFreer {
  void operator()(AVIOContext* c) const {
    av_freep(&c->buffer);
    avio_context_free(&c);
  }
};
struct FormatCloser {
  void operator()(AVFormatContext* c) const { avformat_close_input(&c); }
};
struct CodecFreer {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
struct FrameFreer {
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
struct PacketFreer {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct SwsFreer {
  void operator()(SwsContext* c) const { sws_freeContext(c); }
};
using FramePtr = std::unique_ptr<AVFrame, FrameFreer>;

FramePtr new_frame() {
  FramePtr f(av_frame_alloc());
  if (!f) throw std::bad_alloc();
  return f;
}

bool is_interlaced(const AVFrame& f) {
#ifdef AV_FRAME_FLAG_INTERLACED
  return (f.flags & AV_FRAME_FLAG_INTERLACED) != 0;
#else
  return f.interlaced_frame != 0;
#endif
}
bool top_field_first(const AVFrame& f) {
#ifdef AV_FRAME_FLAG_TOP_FIELD_FIRST
  return (f.flags & AV_FRAME_FLAG_TOP_FIELD_FIRST) != 0;
#else
  return f.top_field_first != 0;
#endif
}

std::string plural(std::int64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

/// The library's description of frames of `f`.
VideoOptions video_format(const FrameLayout& f) {
  VideoOptions o;
  o.width = f.width;
  o.height = f.height;
  if (!f.is_planar()) return o;
  o.format = f.format;
  o.coefficients = f.coefficients;
  return o;
}

/// Frames decoded by FFmpeg's own libraries (libavformat + libavcodec) and turned into RGB by
/// libswscale with the source's colour matrix and range, as `ffmpeg -i X -pix_fmt rgb24` does.
/// Demuxing and decoding are sequential (under a lock, into the producer's own AVFrame); the
/// turn and the conversion write into the slot outside the lock, with one SwsContext per
/// producer.
class LibavSource final : public mjpeg::FrameSource {
 public:
  /// Opens `file`, decodes its first frame (so that size, pixel format and colour tags are the
  /// decoder's, not the container's guess). Throws Error naming the file.
  /// A frame range (options.start, options.part): its first frame is found by seeking to the
  /// keyframe before it when `may_seek` and the packets' timestamps name the frames (else by
  /// decoding from the start); a seek that does not land on it throws SeekMissed. The packets
  /// are indexed by a demuxer of their own, which opens the file by its name: a regular file
  /// named on the command line; a stream's range is found by decoding from its start.
  LibavSource(InputFile& file, const InputOptions& options, bool may_seek = true)
      : name_(file.name()), options_(options),
        index_path_(file.regular() && file.path() != "-" ? file.path() : std::string()) {
    const std::string& path = name_;
    install_log_callback();
    // FFmpeg reads the input through us: a regular file with seeks, a stream (already relayed,
    // its first bytes already looked at) front to back, once.
    const std::vector<std::uint8_t> head = file.peek(12);
    const bool iso_media = head.size() >= 8 && std::memcmp(head.data() + 4, "ftyp", 4) == 0;
    auto* buffer = static_cast<unsigned char*>(av_malloc(kIoBuffer));
    if (buffer == nullptr) throw std::bad_alloc();
    avio_.reset(avio_alloc_context(buffer, kIoBuffer, 0, &file, read_input,
                                   nullptr, file.regular() ? seek_input : nullptr));
    if (!avio_) {
      av_free(buffer);
      throw std::bad_alloc();
    }
    avio_->seekable = file.regular() ? AVIO_SEEKABLE_NORMAL : 0;
    AVFormatContext* raw = avformat_alloc_context();
    if (raw == nullptr) throw std::bad_alloc();
    raw->pb = avio_.get();
    raw->flags |= AVFMT_FLAG_CUSTOM_IO;
    // No name: the content decides, never an extension.
    int err = avformat_open_input(&raw, "", nullptr, nullptr);
    const std::string stream_hint =
        file.regular() || !iso_media
            ? ""
            : "; read from a pipe, which cannot seek, an MP4 or MOV file needs its index (moov) "
              "at its start (ffmpeg -movflags +faststart, or +frag_keyframe when writing to a pipe)";
    if (err < 0) {
      const std::string problem = file.stream_problem();
      if (!problem.empty()) throw Error(problem);
      throw Error(fmt::format("cannot read '{}': not Y4M, PPM/PGM or a picture, and FFmpeg's "
                              "libraries do not recognise it either ({}){}",
                              path, av_error_text(err), stream_hint));
    }
    fmtctx_.reset(raw);
    err = avformat_find_stream_info(raw, nullptr);
    if (err < 0)
      throw Error(fmt::format("cannot read '{}' as a video: {}{}", path, av_error_text(err),
                              stream_hint));
    choose_stream();
    const AVStream* st = raw->streams[stream_];
    const AVCodec* codec = avcodec_find_decoder(st->codecpar->codec_id);
    if (!codec)
      throw Error(fmt::format("'{}': this FFmpeg has no decoder for its {} video", path,
                              avcodec_get_name(st->codecpar->codec_id)));
    for (unsigned i = 0; i < raw->nb_streams; ++i) {
      raw->streams[i]->discard = static_cast<int>(i) == stream_ ? AVDISCARD_DEFAULT : AVDISCARD_ALL;
      if (raw->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_AUDIO) has_audio_ = true;
    }
    codec_name_ = codec->name;
    // VP8/VP9 alpha in Matroska/WebM travels beside the picture (BlockAdditional), marked by
    // the track's AlphaMode: FFmpeg's own vp8/vp9 decoders give no alpha plane, so the pixel
    // format cannot say it.
    const AVDictionaryEntry* alpha_mode = av_dict_get(st->metadata, "alpha_mode", nullptr, 0);
    side_alpha_ = alpha_mode != nullptr && std::strcmp(alpha_mode->value, "0") != 0;
    dec_.reset(avcodec_alloc_context3(codec));
    if (!dec_) throw std::bad_alloc();
    err = avcodec_parameters_to_context(dec_.get(), st->codecpar);
    if (err >= 0) {
      dec_->thread_count = 0;  // as many as there are cores: decoding is the serial part
      dec_->thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE;
      dec_->pkt_timebase = st->time_base;
      err = avcodec_open2(dec_.get(), codec, nullptr);
    }
    if (err < 0)
      throw Error(fmt::format("'{}': cannot open the {} decoder: {}", path, codec_name_,
                              av_error_text(err)));
    packet_.reset(av_packet_alloc());
    if (!packet_) throw std::bad_alloc();
    time_base_ = av_q2d(st->time_base);

    AVRational rate = st->avg_frame_rate;
    if (rate.num <= 0 || rate.den <= 0) rate = st->r_frame_rate;
    if (rate.num > 0 && rate.den > 0) av_reduce(&fps_num_, &fps_den_, rate.num, rate.den, 1 << 30);
    if (st->nb_frames > 0) frame_count_ = st->nb_frames;
    if (st->duration != AV_NOPTS_VALUE && st->duration > 0)
      stream_seconds_ = st->duration * time_base_;
    else if (raw->duration != AV_NOPTS_VALUE && raw->duration > 0)
      container_seconds_ = static_cast<double>(raw->duration) / AV_TIME_BASE;
    if (cover_) {  // one picture; the file's duration is the audio's
      fps_num_ = 25;
      fps_den_ = 1;
      frame_count_ = 1;
      stream_seconds_ = container_seconds_ = 0;
    }

    // What the demuxer logs from here on counts (opening may complain about harmless things).
    log_.attach(raw);
    first_ = new_frame();
    if (!decode(*first_))
      throw Error(fmt::format("'{}' has no decodable video frames", path));
    if (first_->width <= 0 || first_->height <= 0)
      throw Error(fmt::format("'{}': the decoder gave a {}x{} frame", path, first_->width,
                              first_->height));
    coded_w_ = first_->width;
    coded_h_ = first_->height;
    pix_format_ = first_->format;
    const char* pix = av_get_pix_fmt_name(static_cast<AVPixelFormat>(first_->format));
    pix_name_ = pix ? pix : "?";
    interlaced_ = is_interlaced(*first_);
    tff_ = top_field_first(*first_);

    matrix_override_ = sws_colorspace_option(options.colorspace);
    if (!options.range.empty() && options.range != "limited" && options.range != "full")
      throw UsageError(fmt::format("unknown --range '{}' (limited or full)", options.range));
    range_override_ = options.range.empty() ? -1 : (options.range == "full" ? 1 : 0);
    const bool rgb_source = first_->colorspace == AVCOL_SPC_RGB || is_rgb_format(first_->format);
    if (rgb_source) {
      colour_ = "RGB";
    } else {
      const bool full = range_override_ >= 0 ? range_override_ == 1 : is_full_range(*first_);
      colour_ = fmt::format("{} {} range{}",
                            matrix_override_ >= 0 ? sws_colorspace_name(matrix_override_)
                                                  : matrix_name(first_->colorspace),
                            full ? "full" : "limited",
                            matrix_override_ >= 0 || range_override_ >= 0 ? " as stated" : "");
    }

    double degrees = 0;
    const Turn turn = turn_of(display_matrix(st), degrees);
    if (turn != Turn::none) {
      const int w = swaps_axes(turn) ? coded_h_ : coded_w_;
      const int h = swaps_axes(turn) ? coded_w_ : coded_h_;
      if (options.autorotate) {
        turn_ = turn;
        notices_.push_back(fmt::format(
            "'{}' is shown {} (its display matrix): its {}x{} frames are turned{} as players "
            "show them (--no-autorotate keeps them as stored)",
            path, turn_words(turn), coded_w_, coded_h_,
            swaps_axes(turn) ? fmt::format(" to {}x{}", w, h) : std::string()));
      } else {
        notices_.push_back(fmt::format("'{}' is shown {} (its display matrix); --no-autorotate "
                                       "keeps its {}x{} frames as stored",
                                       path, turn_words(turn), coded_w_, coded_h_));
      }
    } else if (std::fabs(degrees) >= 1.0) {
      notices_.push_back(fmt::format("'{}' is shown rotated by {:.0f} degrees (its display "
                                     "matrix), which is not a multiple of 90: its frames are "
                                     "encoded as stored",
                                     path, degrees));
    }
    const bool swap = swaps_axes(turn_);
    format_ = FrameLayout{};
    format_.width = swap ? coded_h_ : coded_w_;
    format_.height = swap ? coded_w_ : coded_h_;
    if (!options.rgb_swscale && !rgb_source &&
        (turn_ == Turn::none || can_turn_planes(first_->format, turn_))) {
      // Planes to the encoder (turned plane by plane first when the stream says so: the frame
      // libswscale would convert is the turned one, so its height picks the arithmetic).
      const int matrix =
          matrix_override_ >= 0 ? matrix_override_ : sws_colorspace(first_->colorspace);
      const bool full = range_override_ >= 0 ? range_override_ == 1 : is_full_range(*first_);
      set_planar_format(first_->format, first_->colorspace, matrix, full, format_);
    }
    if (interlaced_)
      notices_.push_back(fmt::format(
          "'{}' is interlaced video ({} field first): the two fields of each frame are encoded "
          "together as one progressive picture (deinterlace it first where that shows)",
          path, tff_ ? "top" : "bottom"));
    announced_ = frame_count_;
    first_seconds_ = first_->best_effort_timestamp == AV_NOPTS_VALUE
                         ? 0.0
                         : static_cast<double>(first_->best_effort_timestamp) * time_base_;
    if (options.part.given() || options.start > 0) position(may_seek);
  }

  /// Thrown by the constructor when a seek did not land on the range's first frame.
  struct SeekMissed {
    std::int64_t decoded;  ///< frames the attempt decoded
  };

  /// The frame range and how it was planned (null without --start or --part).
  const PartPlan* plan() const { return planned_ ? &plan_ : nullptr; }
  /// Pictures the decoder has delivered so far (the frames before a range included).
  std::int64_t frames_decoded() const { return decoded_; }

  const FrameLayout& layout() const { return format_; }
  /// Decoding is sequential (FFmpeg's own frame threads decode ahead); a producer only copies
  /// planes outside the lock, so two keep the decoder busy. libswscale's conversion, and the
  /// turn of a display matrix, run outside the lock on any number of producers.
  bool concurrent_reads() const override { return true; }
  int max_concurrent_reads() const override {
    return format_.is_planar() && !format_.reduce && turn_ == Turn::none ? 2 : 0;
  }
  int fps_num() const { return fps_num_; }
  int fps_den() const { return fps_den_; }
  /// The frames its container announces (all of them, a range's too); -1 when it does not.
  std::int64_t announced_frames() const { return announced_; }
  bool has_audio() const { return has_audio_; }
  int stream_index() const { return stream_; }
  /// The time of the stream's first frame (frame 0, also for a range), seconds (0 when it has
  /// none).
  double first_frame_seconds() const { return first_seconds_; }
  /// The pixel aspect ratio of the frames as encoded (the decoder's, else the container's;
  /// inverted when the display matrix turns them by 90 degrees); 1:1 when unknown.
  AVRational pixel_aspect() const {
    AVRational sar = av_guess_sample_aspect_ratio(fmtctx_.get(), fmtctx_->streams[stream_],
                                                  first_.get());
    if (sar.num <= 0 || sar.den <= 0) return AVRational{1, 1};
    if (swaps_axes(turn_)) std::swap(sar.num, sar.den);
    av_reduce(&sar.num, &sar.den, sar.num, sar.den, 1 << 30);
    return sar;
  }
  /// The decoder's frames have no colour: grey, with or without alpha, at any depth (a
  /// palette is colour, whatever it holds).
  bool grey_source() const {
    const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(static_cast<AVPixelFormat>(pix_format_));
    return d != nullptr && d->nb_components <= 2 &&
           !(d->flags & (AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_RGB));
  }
  const std::string& codec_name() const { return codec_name_; }
  const std::string& pix_name() const { return pix_name_; }
  const std::string& colour() const { return colour_; }
  const std::vector<std::string>& open_notices() const { return notices_; }

  /// What the conversion to 8-bit RGB drops, one line each: samples of more than 8 bits
  /// (rounded to 8 by libswscale, as `ffmpeg -pix_fmt rgb24` does) and an alpha channel.
  std::vector<std::string> conversion_notices() const {
    std::vector<std::string> notices;
    const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(static_cast<AVPixelFormat>(pix_format_));
    if (!d) return notices;
    if (d->comp[0].depth > 8 && format_.reduce)
      notices.push_back(fmt::format("the source has {}-bit samples ({}); they are reduced to "
                                    "8 bits as libswscale reduces them to yuv420p",
                                    d->comp[0].depth, pix_name_));
    else if (d->comp[0].depth > 8)
      notices.push_back(fmt::format("the source has {}-bit samples ({}); they are converted "
                                    "to 8-bit RGB",
                                    d->comp[0].depth, pix_name_));
    if (d->flags & AV_PIX_FMT_FLAG_ALPHA)
      notices.push_back(fmt::format("the source's alpha channel ({}) is ignored", pix_name_));
    else if (side_alpha_)
      notices.push_back(fmt::format("the source's alpha channel ({} alpha, stored beside the "
                                    "picture) is ignored",
                                    codec_name_));
    return notices;
  }

  /// After the whole stream was read: what --keep-going let through, and the timing evened
  /// out to a constant rate.
  std::vector<std::string> final_notices() const {
    std::vector<std::string> out;
    if (!lost_.empty()) out.push_back("--keep-going: " + lost_);
    if (bad_packets_ > 0)
      out.push_back(fmt::format("--keep-going: {} of '{}' could not be decoded and {} left out",
                                plural(bad_packets_, "packet", "packets"), name_,
                                bad_packets_ == 1 ? "was" : "were"));
    if (concealed_ > 0)
      out.push_back(fmt::format("--keep-going: {} of '{}' {} damaged and encoded as the "
                                "decoder concealed {}",
                                plural(concealed_, "frame", "frames"), name_,
                                concealed_ == 1 ? "was" : "were",
                                concealed_ == 1 ? "it" : "them"));
    if (jumps_ > 0)
      out.push_back(fmt::format(
          "'{}' has {} where its timestamps go back (the first before frame {}, by {:.1f} ms; "
          "e.g. recordings joined together): its frames are written in decode order at a "
          "constant {}/{} fps",
          name_, plural(jumps_, "place", "places"), first_jump_frame_ + 1, 1e3 * first_jump_s_,
          fps_num_, fps_den_));
    const double frame_s = static_cast<double>(fps_den_) / fps_num_;
    if (have_gap_ && max_shift_s_ > 0.5 * frame_s)
      out.push_back(fmt::format(
          "'{}' has a variable frame rate (frames {:.1f} to {:.1f} ms apart): written at a "
          "constant {}/{} fps, which moves frames by up to {:.0f} ms from their times",
          name_, 1e3 * min_gap_s_, 1e3 * max_gap_s_, fps_num_, fps_den_, 1e3 * max_shift_s_));
    return out;
  }

  bool read(std::int64_t index, std::uint8_t* dst) override {
    const auto p = producers_.take();
    AVFrame& frame = *p->frame;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!turns_.wait(lock, index)) return false;
      DecodeTurns::Section section(turns_);
      if (ended_ || (options_.max_frames >= 0 && next_ >= options_.max_frames)) {
        check_end();
        return false;
      }
      av_frame_unref(&frame);
      if (first_) {
        av_frame_move_ref(&frame, first_.get());
        first_.reset();
      } else if (!decode(frame)) {
        ended_ = true;
        if (planned_ && !options_.keep_going)
          throw Error(fmt::format("'{}' ends early: {} of the {} frames {}..{} decoded, which its "
                                  "packets promised; nothing written",
                                  name_, next_, plan_.range.count, plan_.range.first,
                                  plan_.range.end() - 1));
        check_complete();  // throws when the file ends early (without --keep-going)
        return false;
      }
      ++next_;
      note_time(frame);
      // Under the lock, ending the stream first: the first changed frame is the one reported,
      // whichever producer would have converted a later one.
      if (frame.width != coded_w_ || frame.height != coded_h_) {
        ended_ = true;
        throw Error(fmt::format("{}: frame {} is {}x{}, but the stream started at {}x{} "
                                "(resolution changes are not supported)",
                                name_, index + 1, frame.width, frame.height, coded_w_, coded_h_));
      }
      if (format_.is_planar() && frame.format != pix_format_) {
        ended_ = true;
        throw Error(fmt::format("{}: frame {} changes the pixel format from {} to {} (try "
                                "--rgb-decode swscale)",
                                name_, index + 1, pix_name_,
                                av_get_pix_fmt_name(static_cast<AVPixelFormat>(frame.format))));
      }
      section.taken();
    }
    if (format_.reduce)
      reduce_planes(*p, frame, dst);
    else if (format_.is_planar())
      copy_planes(frame, dst);
    else
      convert(*p, frame, dst, static_cast<std::size_t>(format_.width) * 3);
    av_frame_unref(&frame);
    return true;
  }

 private:
  struct Producer {
    FramePtr frame;
    FramePtr turned;  ///< the frame turned plane by plane (display matrix)
    std::unique_ptr<SwsContext, SwsFreer> sws;
    int pix = -1, matrix = -1, full = -1, src_w = -1;
    std::vector<std::uint8_t> rgb;  ///< swscale's padded output (libav_rgb.hpp)
  };

  /// The video stream to decode: --stream N (the N-th video stream), else FFmpeg's best one;
  /// cover pictures (attached pictures) are not video. Notes the others.
  void choose_stream() {
    AVFormatContext* raw = fmtctx_.get();
    std::vector<int> videos = libav_video_streams(raw, false);
    const std::vector<int> covers = libav_video_streams(raw, true);
    // An audio file with a cover picture (MP3, M4A, FLAC): the picture is its one frame, as
    // ffmpeg encodes it.
    if (videos.empty() && !covers.empty()) {
      videos = covers;
      cover_ = true;
    }
    if (videos.empty()) throw Error(fmt::format("'{}' has no video stream", name_));
    int chosen = -1;
    if (options_.stream >= 0) {
      if (options_.stream >= static_cast<int>(videos.size()))
        throw Error(fmt::format("--stream {}: '{}' has {} (0{})", options_.stream, name_,
                                plural(static_cast<int>(videos.size()), "video stream",
                                       "video streams"),
                                videos.size() > 1 ? fmt::format("..{}", videos.size() - 1) : ""));
      chosen = videos[static_cast<std::size_t>(options_.stream)];
    } else {
      const int best = av_find_best_stream(raw, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
      chosen = std::find(videos.begin(), videos.end(), best) != videos.end() ? best : videos[0];
    }
    stream_ = chosen;
    if (videos.size() > 1) {
      std::string list;
      int chosen_n = 0;
      for (std::size_t n = 0; n < videos.size(); ++n) {
        const AVCodecParameters* c = raw->streams[videos[n]]->codecpar;
        if (videos[n] == chosen) chosen_n = static_cast<int>(n);
        list += fmt::format("{}{}: {} {}x{}", n ? ", " : "", n, avcodec_get_name(c->codec_id),
                            c->width, c->height);
      }
      notices_.push_back(fmt::format("'{}' has {} {} ({}): {} {} is encoded, the others are "
                                     "left out (--stream N picks another)",
                                     name_, videos.size(),
                                     cover_ ? "cover pictures" : "video streams", list,
                                     cover_ ? "picture" : "stream", chosen_n));
    }
    if (cover_) {
      const AVCodecParameters* c = raw->streams[chosen]->codecpar;
      notices_.push_back(fmt::format("'{}' has no video stream but a cover picture ({} {}x{}): "
                                     "it is encoded as one frame",
                                     name_, avcodec_get_name(c->codec_id), c->width, c->height));
    }
  }

  /// "(the demuxer: ...)" with what it logged while reading, or "".
  std::string demuxer_says() const {
    const std::vector<std::string> m = log_.messages();
    if (m.empty()) return "";
    return fmt::format(" (the demuxer: \"{}\"{})", m.front(),
                       m.size() > 1 ? fmt::format(" and {} more", m.size() - 1) : "");
  }

  /// At the end of the stream: did the file hold what it announced?
  void check_complete() {
    const std::string says = demuxer_says();
    const double frame_s = static_cast<double>(fps_den_) / fps_num_;
    std::string head, problem, kept;
    if (frame_count_ > 0 && video_packets_ < frame_count_) {
      head = fmt::format("'{}' ends early{}", name_, says);
      problem = fmt::format("its container announces {} frames, {} decoded", frame_count_, next_);
      kept = fmt::format("{} of the {} frames its container announces encoded, {} lost", next_,
                         frame_count_, frame_count_ - next_);
    } else if (!says.empty()) {
      const std::string announced =
          frame_count_ > 0 ? fmt::format(" of the {} its container announces", frame_count_)
          : container_seconds_ > 0
              ? fmt::format(" (its container announces {:.2f} s, about {} frames)",
                            container_seconds_, std::llround(container_seconds_ / frame_s))
              : "";
      head = fmt::format("'{}' is truncated or damaged{}", name_, says);
      problem = fmt::format("{} decoded{}", plural(next_, "frame", "frames"), announced);
      kept = fmt::format("{} encoded{}", plural(next_, "frame", "frames"), announced);
    } else if (frame_count_ <= 0 && stream_seconds_ > 0 && have_time_ &&
               last_time_s_ + frame_s < stream_seconds_ - std::max(1.0, 0.05 * stream_seconds_)) {
      head = fmt::format("'{}' ends early", name_);
      problem = fmt::format("its video stream announces {:.2f} s, the {} decoded end at {:.2f} s",
                            stream_seconds_, plural(next_, "frame", "frames"),
                            last_time_s_ + frame_s);
      kept = fmt::format("{} encoded, up to {:.2f} s of the {:.2f} s announced",
                         plural(next_, "frame", "frames"), last_time_s_ + frame_s,
                         stream_seconds_);
    }
    if (problem.empty()) return;
    if (!options_.keep_going)
      throw Error(head + ": " + problem +
                  "; nothing written (--keep-going encodes the frames that decode)");
    if (lost_.empty()) lost_ = head + ": " + kept;
  }

  [[noreturn]] void fail_decode(int err) {
    // A packet cut off by the end of the file is the truncation, not damage in the middle.
    AVIOContext* pb = fmtctx_->pb;
    if (pb != nullptr && avio_feof(pb) && !log_.messages().empty()) {
      check_complete();
      throw Error(fmt::format("'{}' ends early{}: its last packet is cut off after frame {}; "
                              "nothing written (--keep-going encodes the frames that decode)",
                              name_, demuxer_says(), next_));
    }
    throw Error(fmt::format("{}: {} after frame {}{}: {} (--keep-going encodes the frames that "
                            "decode)",
                            name_, err == AVERROR_INVALIDDATA ? "damaged video data" : "decoding failed",
                            next_, demuxer_says(), av_error_text(err)));
  }

  /// The next decoded frame into `out` (caller holds the lock, or the constructor runs).
  /// False at the end of the stream.
  bool decode(AVFrame& out) {
    for (;;) {
      int err = avcodec_receive_frame(dec_.get(), &out);
      if (err == 0) {
        ++decoded_;
        if (out.decode_error_flags != 0 || (out.flags & AV_FRAME_FLAG_CORRUPT) != 0) {
          if (seeking_) {  // before the range: dropped, or the seek is given up
            seek_damaged_ = true;
            return true;
          }
          if (!options_.keep_going)
            throw Error(fmt::format("{}: damaged video data in frame {}{} (the decoder could "
                                    "only conceal it; --keep-going encodes it so)",
                                    name_, next_ + 1, demuxer_says()));
          ++concealed_;
        }
        return true;
      }
      if (err == AVERROR_EOF) return false;
      if (err != AVERROR(EAGAIN)) {
        if (seeking_) {
          seek_damaged_ = true;
          if (draining_) return false;
          continue;
        }
        if (!options_.keep_going) fail_decode(err);
        ++bad_packets_;
        if (draining_) return false;
        continue;
      }
      if (draining_) return false;
      err = av_read_frame(fmtctx_.get(), packet_.get());
      if (err < 0 && err != AVERROR_EOF) {
        if (!options_.keep_going)
          throw Error(fmt::format("{}: reading failed after frame {}{}: {} (--keep-going "
                                  "encodes the frames before it)",
                                  name_, next_, demuxer_says(), av_error_text(err)));
        if (lost_.empty())
          lost_ = fmt::format("reading '{}' failed after frame {} ({}): the frames before it "
                              "encoded",
                              name_, next_, av_error_text(err));
        err = AVERROR_EOF;
      }
      if (err == AVERROR_EOF) {
        draining_ = true;
        avcodec_send_packet(dec_.get(), nullptr);
        continue;
      }
      if (packet_->stream_index == stream_) {
        ++video_packets_;
        err = avcodec_send_packet(dec_.get(), packet_.get());
        // Damaged data is an error, not a silently dropped or concealed frame: the output
        // would lack frames (or show decoder guesses) without the user knowing.
        if (err < 0 && err != AVERROR(EAGAIN)) {
          av_packet_unref(packet_.get());
          if (seeking_) {
            seek_damaged_ = true;
            continue;
          }
          if (!options_.keep_going) fail_decode(err);
          ++bad_packets_;
          continue;
        }
      }
      av_packet_unref(packet_.get());
    }
  }

  /// Finds the first frame of the range (constructor; first_ holds frame 0) and leaves it in
  /// first_: after a seek to the keyframe at or before it (the frames before it decoded and
  /// dropped), or by decoding from the start. --part plans the range from the packets' index
  /// (all of it); --start alone reads the index only as far as its frame (and a margin past
  /// it for the frames a decoder reorders).
  void position(bool may_seek) {
    const bool split = options_.part.given();
    if (index_path_.empty() && split)
      throw UsageError(fmt::format("--part splits a file whose frames can be counted, not {} "
                                   "(write it to a file first)",
                                   name_ == "standard input" ? name_ : "a pipe"));
    constexpr std::int64_t kReorderMargin = 256;  // decoders reorder at most 16 frames
    if (!index_path_.empty())
      index_ = index_video(index_path_, stream_, split ? -1 : options_.start + 1 + kReorderMargin);
    std::int64_t first = options_.start;
    if (split) {
      plan_ = plan_part(options_.part, index_.frames, options_.start, options_.max_frames, name_);
      plan_.counted = "counted from its packets without decoding";
      planned_ = true;
      options_.max_frames = plan_.range.count;
      check_end_ = plan_.range.end() == plan_.total;
      first = plan_.range.first;
    }
    if (first == 0) return;
    // The packets' timestamps name the frames when the first picture bears the first of them
    // (a decoder that drops undecodable leading frames would shift every number).
    const bool timed = !options_.keep_going && first < static_cast<std::int64_t>(index_.pts.size()) &&
                       first_->pts == index_.pts.front();
    if (may_seek && timed && seek_to(first)) {
      frame_count_ = -1;  // the packets before the seek were not read: no count to check
      return;
    }
    for (std::int64_t i = 0; i < first; ++i) {  // counting from the start: a one-pass decode
      av_frame_unref(first_.get());
      if (decode(*first_)) continue;
      if (split)
        throw Error(fmt::format("'{}' ends after {} frames, before frame {} (--part)", name_, i + 1,
                                first + 1));
      first_.reset();  // --start past the end: no frames (the caller says so)
      ended_ = true;
      return;
    }
  }

  /// Seeks to the keyframe at or before frame `first` (the last one in file order whose pts
  /// is not after it) and decodes up to that frame. False when no seek is needed (the frame
  /// lies in the first GOP: the caller decodes on from frame 0); throws SeekMissed when the
  /// pictures do not reach it exactly (a damaged one, a timestamp skipped).
  bool seek_to(std::int64_t first) {
    const std::int64_t target = index_.pts[static_cast<std::size_t>(first)];
    const VideoIndex::Key* key = nullptr;
    for (const VideoIndex::Key& k : index_.keys)
      if (k.pts != AV_NOPTS_VALUE && k.pts <= target) key = &k;
    if (key == nullptr || key == &index_.keys.front()) return false;
    // The key's own pts: demuxers index keyframes by their dts (often shifted so that the
    // first is 0) or by their pts, and a keyframe's dts never exceeds its pts, so the seek
    // lands on it (or, by an index's rounding, on a keyframe before it: more to decode and
    // drop, the same frames).
    if (av_seek_frame(fmtctx_.get(), stream_, key->pts, AVSEEK_FLAG_BACKWARD) < 0)
      throw SeekMissed{decoded_};
    avcodec_flush_buffers(dec_.get());
    draining_ = false;
    seeking_ = true;
    for (;;) {
      av_frame_unref(first_.get());
      seek_damaged_ = false;
      if (!decode(*first_)) break;
      if (first_->pts == AV_NOPTS_VALUE || first_->pts > target) break;
      if (first_->pts < target) continue;
      if (seek_damaged_) break;
      seeking_ = false;
      return true;
    }
    seeking_ = false;
    throw SeekMissed{decoded_};
  }

  /// The last part of a --part split: the input must end with its range (the count read from
  /// the packets would otherwise have been short of the frames a decoder gives).
  void check_end() {
    if (!check_end_ || end_checked_) return;
    end_checked_ = true;
    FramePtr extra = new_frame();
    if (decode(*extra))
      throw Error(fmt::format("'{}' has more frames than the {} its packets counted: its parts "
                              "cannot be planned exactly; give --frames N",
                              name_, plan_.total));
  }

  /// Records frame times for the variable-frame-rate and discontinuity notices (under the
  /// lock). Time that goes back (or stands still) between two frames in decode order is a
  /// discontinuity (an MPEG-TS stream of joined recordings, a timestamp reset), not a rate:
  /// counted apart, and the constant rate the frames are written at starts again there.
  void note_time(const AVFrame& f) {
    if (f.best_effort_timestamp == AV_NOPTS_VALUE) return;
    const double t = f.best_effort_timestamp * time_base_;
    const std::int64_t i = next_ - 1;
    if (!have_time_) {
      first_time_s_ = t;
      have_time_ = true;
    } else if (const double gap = t - last_time_s_; gap <= 0) {
      if (jumps_++ == 0) {
        first_jump_frame_ = i;
        first_jump_s_ = -gap;
      }
      first_time_s_ = t;
      first_time_index_ = i;
    } else {
      min_gap_s_ = have_gap_ ? std::min(min_gap_s_, gap) : gap;
      max_gap_s_ = have_gap_ ? std::max(max_gap_s_, gap) : gap;
      have_gap_ = true;
    }
    last_time_s_ = t;
    const double constant =
        first_time_s_ + static_cast<double>(i - first_time_index_) * fps_den_ / fps_num_;
    max_shift_s_ = std::max(max_shift_s_, std::fabs(t - constant));
  }

  /// The frame to rgb24 at `dst`, outside the lock (each producer has its own SwsContext),
  /// turned for display first when the stream says so.
  void convert(Producer& p, const AVFrame& frame, std::uint8_t* dst, std::size_t stride) {
    const bool planes = turn_ != Turn::none && can_turn_planes(frame.format, turn_);
    const AVFrame* src = &frame;
    if (planes) {
      turn_frame(frame, *p.turned, turn_);
      src = p.turned.get();
    }
    const bool rgb_src = frame.colorspace == AVCOL_SPC_RGB || is_rgb_format(frame.format);
    const int matrix = matrix_override_ >= 0 && !rgb_src ? matrix_override_
                                                         : sws_colorspace(frame.colorspace);
    const int full = range_override_ >= 0 && !rgb_src ? range_override_
                                                      : (is_full_range(frame) ? 1 : 0);
    if (!p.sws || p.pix != frame.format || p.matrix != matrix || p.full != full ||
        p.src_w != src->width) {
      p.sws.reset(rgb24_scaler(src->width, src->height, src->format,
                               sws_getCoefficients(matrix), full != 0));
      if (!p.sws)
        throw Error(fmt::format("{}: cannot convert its {} frames to RGB", name_,
                                av_get_pix_fmt_name(static_cast<AVPixelFormat>(frame.format))));
      p.pix = frame.format;
      p.matrix = matrix;
      p.full = full;
      p.src_w = src->width;
    }
    if (turn_ == Turn::none || planes) {
      sws_to_rgb24(p.sws.get(), *src, src->width, src->height, p.rgb, dst, stride);
      return;
    }
    // A format that cannot be turned plane by plane (e.g. yuyv422): turn the RGB.
    std::size_t pstride = 0;
    const std::uint8_t* rgb =
        sws_to_rgb24(p.sws.get(), frame, frame.width, frame.height, p.rgb, nullptr, 0, &pstride);
    turn_plane(rgb, static_cast<std::ptrdiff_t>(pstride), frame.width, frame.height, 3, dst,
               static_cast<std::ptrdiff_t>(stride), turn_);
  }

  /// A 10- or 12-bit 4:2:0 frame into `dst` as 8-bit planes in the contiguous layout, turned
  /// for display first when the stream says so: libswscale's unscaled conversion to yuv420p
  /// (its planar copy with the ordered dither; the source's range kept, which picks the
  /// rounding of luma), outside the lock, one SwsContext per producer.
  void reduce_planes(Producer& p, const AVFrame& frame, std::uint8_t* dst) {
    const AVFrame* src = &frame;
    if (turn_ != Turn::none) {
      turn_frame(frame, *p.turned, turn_);
      src = p.turned.get();
    }
    const int full = range_override_ >= 0 ? range_override_ : (is_full_range(frame) ? 1 : 0);
    if (!p.sws || p.pix != frame.format || p.full != full || p.src_w != src->width) {
      p.sws.reset(sws_getContext(src->width, src->height, static_cast<AVPixelFormat>(src->format),
                                 src->width, src->height, AV_PIX_FMT_YUV420P, SWS_BICUBIC,
                                 nullptr, nullptr, nullptr));
      if (!p.sws)
        throw Error(fmt::format("{}: cannot reduce its {} frames to 8 bits", name_, pix_name_));
      int* inv = nullptr;
      int* tab = nullptr;
      int src_range = 0, dst_range = 0, brightness = 0, contrast = 0, saturation = 0;
      sws_getColorspaceDetails(p.sws.get(), &inv, &src_range, &tab, &dst_range, &brightness,
                               &contrast, &saturation);
      sws_setColorspaceDetails(p.sws.get(), inv, full, tab, full, brightness, contrast,
                               saturation);
      p.pix = frame.format;
      p.full = full;
      p.src_w = src->width;
    }
    const FrameView planes = FrameView::contiguous(dst, video_format(format_));
    std::uint8_t* out[4] = {};
    int pitch[4] = {};
    for (int i = 0; i < 3; ++i) {
      out[i] = dst + (planes.plane[i] - dst);  // the view is read-only; `dst` is ours
      pitch[i] = static_cast<int>(planes.stride[i]);
    }
    sws_scale(p.sws.get(), src->data, src->linesize, 0, src->height, out, pitch);
  }

  /// The frame's planes into `dst` in the library's contiguous layout (FrameView::contiguous:
  /// Y, Cb, Cr, rows packed), turned for display when the
  /// stream says so (each plane straight into the slot): the one copy between the decoder and
  /// the slot. Exactly the picture's bytes of each row are copied (the decoder's rows are
  /// linesize apart, padded); chroma rows are ceil(width / 2) samples at 4:2:0 and 4:2:2.
  void copy_planes(const AVFrame& frame, std::uint8_t* dst) const {
    const FrameView planes = FrameView::contiguous(dst, video_format(format_));
    const int count = format_.has_chroma() ? 3 : 1;
    for (int i = 0; i < count; ++i) {
      // The plane as stored (before any turn), and as it lies in the slot (after it).
      const int pw = i == 0 ? coded_w_ : AV_CEIL_RSHIFT(coded_w_, format_.shift_x());
      const int ph = i == 0 ? coded_h_ : AV_CEIL_RSHIFT(coded_h_, format_.shift_y());
      const std::size_t pitch = planes.stride[i];
      // The view is read-only; its plane lies in `dst`, which is ours to write.
      std::uint8_t* const plane = dst + (planes.plane[i] - dst);
      if (turn_ != Turn::none) {
        turn_plane(frame.data[i], frame.linesize[i], pw, ph, 1, plane,
                   static_cast<std::ptrdiff_t>(pitch), turn_);
        continue;
      }
      for (int y = 0; y < ph; ++y)
        std::memcpy(plane + static_cast<std::size_t>(y) * pitch,
                    frame.data[i] + static_cast<std::ptrdiff_t>(y) * frame.linesize[i],
                    static_cast<std::size_t>(pw));
    }
  }

  static constexpr int kIoBuffer = 1 << 16;
  static int read_input(void* opaque, std::uint8_t* buf, int size) {
    try {
      const std::size_t n = static_cast<InputFile*>(opaque)->read(buf, static_cast<std::size_t>(size));
      return n == 0 ? AVERROR_EOF : static_cast<int>(n);
    } catch (const std::exception&) {
      return AVERROR(EIO);
    }
  }
  static std::int64_t seek_input(void* opaque, std::int64_t offset, int whence) {
    auto* file = static_cast<InputFile*>(opaque);
    if (whence & AVSEEK_SIZE) return file->size();
    const std::int64_t at = file->seek(offset, whence & ~AVSEEK_FORCE);
    return at < 0 ? AVERROR(errno) : at;
  }

  std::string name_;
  InputOptions options_;
  std::string index_path_;  ///< the file index_video opens; "" for a stream
  std::unique_ptr<AVIOContext, IoFreer> avio_;  ///< after the format context, which reads it
  std::unique_ptr<AVFormatContext, FormatCloser> fmtctx_;
  std::unique_ptr<AVCodecContext, CodecFreer> dec_;
  std::unique_ptr<AVPacket, PacketFreer> packet_;
  LogCapture log_;
  int stream_ = -1;
  bool has_audio_ = false;
  bool cover_ = false;  ///< the stream is a cover picture (attached to an audio file)
  bool side_alpha_ = false;  ///< the track carries alpha beside the picture (WebM AlphaMode)
  std::string codec_name_, pix_name_, colour_;
  std::vector<std::string> notices_;
  int pix_format_ = -1;
  int coded_w_ = 0, coded_h_ = 0;
  Turn turn_ = Turn::none;
  bool interlaced_ = false, tff_ = false;
  int matrix_override_ = -1, range_override_ = -1;
  int fps_num_ = 25, fps_den_ = 1;
  double time_base_ = 0;
  std::int64_t frame_count_ = -1;  ///< what check_complete holds the packets to
  std::int64_t announced_ = -1;
  double first_seconds_ = 0;
  double stream_seconds_ = 0, container_seconds_ = 0;
  FrameLayout format_;
  FramePtr first_;  ///< decoded at open, handed out as frame 0
  std::mutex mutex_;
  std::int64_t next_ = 0;
  // A frame range (--start, --part): the plan (--part), the packets' index, whether the last
  // part checks that no frame follows its range, the state of a seek.
  PartPlan plan_;
  bool planned_ = false;
  VideoIndex index_;
  bool check_end_ = false, end_checked_ = false;
  bool seeking_ = false, seek_damaged_ = false;
  std::atomic<std::int64_t> decoded_{0};
  std::int64_t video_packets_ = 0;
  std::int64_t bad_packets_ = 0, concealed_ = 0;
  std::string lost_;  ///< --keep-going: what the end of the stream lacked
  bool ended_ = false, draining_ = false;
  bool have_time_ = false;
  double first_time_s_ = 0, last_time_s_ = 0, min_gap_s_ = 0, max_gap_s_ = 0, max_shift_s_ = 0;
  std::int64_t first_time_index_ = 0;  ///< the frame of first_time_s_ (0, or after a jump back)
  bool have_gap_ = false;              ///< min_gap_s_, max_gap_s_ hold a forward gap
  std::int64_t jumps_ = 0;             ///< where time went back (or stood still)
  std::int64_t first_jump_frame_ = 0;  ///< the frame (0-based) after the first of them
  double first_jump_s_ = 0;            ///< how far back it went
  ScratchPool<Producer> producers_{[this] {
    auto p = std::make_unique<Producer>(Producer{new_frame(), new_frame(), {}, -1, -1, -1, -1, {}});
    // Room for the picture as stored and as turned (their padded rows differ); planar frames
    // need no RGB.
    if (!format_.is_planar())
      p->rgb.resize(std::max(padded_rgb_bytes(coded_w_, coded_h_),
                             padded_rgb_bytes(coded_h_, coded_w_)));
    return p;
  }};
  DecodeTurns turns_;
};

}  // namespace

VideoOptions libav_frame_format(int pix_fmt, int colorspace, bool full_range, int width,
                                int height, const InputOptions& options, bool& reduced,
                                bool* swscale_after) {
  const int matrix_override = sws_colorspace_option(options.colorspace);
  const int range_override = options.range.empty() ? -1 : (options.range == "full" ? 1 : 0);
  const auto spc = static_cast<AVColorSpace>(colorspace);
  FrameLayout f;
  f.width = width;
  f.height = height;
  const int matrix = matrix_override >= 0 ? matrix_override : sws_colorspace(spc);
  const bool full = range_override >= 0 ? range_override == 1 : full_range;
  if (!options.rgb_swscale && !is_rgb_format(pix_fmt))
    set_planar_format(pix_fmt, spc, matrix, full, f);
  reduced = f.reduce;
  if (swscale_after != nullptr) *swscale_after = f.swscale_after;
  return video_format(f);
}

const int* libav_sws_table(int colorspace, const InputOptions& options) {
  const int matrix_override = sws_colorspace_option(options.colorspace);
  return sws_getCoefficients(matrix_override >= 0
                                 ? matrix_override
                                 : sws_colorspace(static_cast<AVColorSpace>(colorspace)));
}

bool libav_full_range(bool full_range, const InputOptions& options) {
  return options.range.empty() ? full_range : options.range == "full";
}

std::string libav_colour_words(int colorspace, bool full_range, const InputOptions& options) {
  const int matrix_override = sws_colorspace_option(options.colorspace);
  const bool full = options.range.empty() ? full_range : options.range == "full";
  return fmt::format("{} {} range{}",
                     matrix_override >= 0 ? sws_colorspace_name(matrix_override)
                                          : matrix_name(static_cast<AVColorSpace>(colorspace)),
                     full ? "full" : "limited",
                     matrix_override >= 0 || !options.range.empty() ? " as stated" : "");
}

std::vector<int> libav_video_streams(const AVFormatContext* f, bool attached) {
  std::vector<int> found;
  for (unsigned i = 0; i < f->nb_streams; ++i) {
    const AVStream* s = f->streams[i];
    if (s->codecpar->codec_type == AVMEDIA_TYPE_VIDEO &&
        ((s->disposition & AV_DISPOSITION_ATTACHED_PIC) != 0) == attached)
      found.push_back(static_cast<int>(i));
  }
  return found;
}

void quiet_libav_messages() { install_log_callback(); }

std::optional<double> libav_header_pixels(const std::string& path, const InputOptions& options) {
  install_log_callback();  // FFmpeg's own messages about a file it cannot read stay quiet
  AVFormatContext* raw = nullptr;
  if (avformat_open_input(&raw, path.c_str(), nullptr, nullptr) < 0) return std::nullopt;
  const std::unique_ptr<AVFormatContext*, void (*)(AVFormatContext**)> owner(&raw, avformat_close_input);
  const std::vector<int> videos = libav_video_streams(raw, false);
  const AVStream* st = nullptr;
  if (options.stream >= 0 && static_cast<std::size_t>(options.stream) < videos.size())
    st = raw->streams[videos[static_cast<std::size_t>(options.stream)]];
  else if (options.stream < 0 && videos.size() == 1)
    st = raw->streams[videos.front()];
  if (st == nullptr || st->nb_frames <= 0 || st->codecpar->width <= 0 || st->codecpar->height <= 0)
    return std::nullopt;
  std::int64_t frames = std::max<std::int64_t>(0, st->nb_frames - options.start);
  if (options.max_frames >= 0) frames = std::min(frames, options.max_frames);
  return static_cast<double>(frames) * st->codecpar->width * st->codecpar->height;
}

VideoInput open_libav(InputFile& file, const InputOptions& options) {
  std::unique_ptr<LibavSource> src;
  std::string missed;
  std::int64_t missed_decoded = 0;
  try {
    src = std::make_unique<LibavSource>(file, options);
  } catch (const LibavSource::SeekMissed& m) {
    missed_decoded = m.decoded;
    missed = fmt::format("'{}': a seek to the keyframe before the first frame did not reach it "
                         "exactly; its frames were decoded from the start",
                         file.name());
    if (file.seek(0, SEEK_SET) != 0)
      throw Error(fmt::format("cannot read '{}' again from its start", file.name()));
    src = std::make_unique<LibavSource>(file, options, false);
  }
  VideoInput in;
  in.fps_num = src->fps_num();
  in.fps_den = src->fps_den();
  in.frame_count = src->announced_frames();
  if (in.frame_count >= 0) in.frame_count = std::max<std::int64_t>(0, in.frame_count - options.start);
  if (options.max_frames >= 0 && (in.frame_count < 0 || options.max_frames < in.frame_count))
    in.frame_count = options.max_frames;
  if (const PartPlan* plan = src->plan()) {
    in.plan = *plan;
    in.frame_count = plan->range.count;
  }
  if (!missed.empty()) in.notices.push_back(missed);
  const FrameLayout& f = src->layout();
  in.format = video_format(f);
  in.description = fmt::format(
      "{}x{} {}/{} fps, {}, {} {} ({}), decoded by FFmpeg's libraries{}", f.width, f.height,
      in.fps_num, in.fps_den,
      in.frame_count >= 0 ? plural(in.frame_count, "frame", "frames") : "? frames",
      src->codec_name(), src->pix_name(), src->colour(),
      f.is_planar() && !f.swscale_after ? ", planes to the encoder" : " to RGB (libswscale)");
  in.gray = src->grey_source();
  for (const std::string& n : src->open_notices()) in.notices.push_back(n);
  in.has_audio = src->has_audio();
  in.video_stream = src->stream_index();
  in.start_seconds = src->first_frame_seconds();
  const AVRational sar = src->pixel_aspect();
  in.aspect_num = sar.num;
  in.aspect_den = sar.den;
  for (std::string& n : src->conversion_notices()) in.notices.push_back(std::move(n));
  const LibavSource* raw = src.get();
  in.final_notices = [raw] { return raw->final_notices(); };
  in.frames_decoded = [raw, missed_decoded] { return missed_decoded + raw->frames_decoded(); };
  if (f.swscale_after) {  // the reduced planes, then libswscale's RGB of them
    VideoOptions planes = in.format;
    planes.range = f.full ? YuvRange::full : YuvRange::limited;
    const int* table = f.table;
    in.format = VideoOptions{};
    in.format.width = f.width;
    in.format.height = f.height;
    in.source = swscale_source(std::move(src), planes, table);
    return in;
  }
  in.source = std::move(src);
  return in;
}

}  // namespace mjpeg::app
