// Video files decoded by NVDEC (nvdec_input.hpp).
#include "nvdec_input.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <future>
#include <memory>
#include <new>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "app/common/wording.hpp"
#include "libav_rgb.hpp"
#include "libav_source.hpp"
#include "mjpeg/error.hpp"
#include "mjpeg/nvdec.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavcodec/bsf.h>
#include <libavformat/avformat.h>
#include <libavutil/display.h>
#include <libavutil/pixdesc.h>
}

namespace mjpeg::app {
namespace {

std::string nvdec_av_text(int err) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(err, buf, sizeof buf);
  return buf;
}

}  // namespace

/// The container, the chosen stream and the bitstream filter that turns its packets into what
/// NVDEC's parser reads; packets are pulled by the decoder's own thread (next()).
class NvdecDemuxer {
 public:
  NvdecDemuxer(const std::string& path) : name_(path) {
    quiet_libav_messages();  // (its errors are said in one line below)
    AVFormatContext* raw = nullptr;
    int err = avformat_open_input(&raw, path.c_str(), nullptr, nullptr);
    if (err < 0)
      throw Error(fmt::format("cannot read '{}' as a video: {}", path, nvdec_av_text(err)));
    fmt_ = raw;
    err = avformat_find_stream_info(raw, nullptr);
    if (err < 0)
      throw Error(fmt::format("cannot read '{}' as a video: {}", path, nvdec_av_text(err)));
    packet_ = av_packet_alloc();
    if (packet_ == nullptr) throw std::bad_alloc();
  }
  ~NvdecDemuxer() {
    av_packet_free(&packet_);
    av_bsf_free(&bsf_);
    avformat_close_input(&fmt_);
  }
  NvdecDemuxer(const NvdecDemuxer&) = delete;
  NvdecDemuxer& operator=(const NvdecDemuxer&) = delete;

  AVFormatContext* context() const { return fmt_; }
  AVStream* stream() const { return fmt_->streams[stream_]; }

  /// --stream N (the N-th video stream), else FFmpeg's best one (as open_libav picks it);
  /// false when there is no video stream (open_libav then says so).
  bool choose(int wanted) {
    const std::vector<int> videos = libav_video_streams(fmt_, false);
    if (videos.empty()) return false;
    if (wanted >= 0) {
      if (wanted >= static_cast<int>(videos.size())) return false;
      stream_ = videos[static_cast<std::size_t>(wanted)];
    } else {
      const int best = av_find_best_stream(fmt_, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
      stream_ = std::find(videos.begin(), videos.end(), best) != videos.end() ? best : videos[0];
    }
    for (unsigned i = 0; i < fmt_->nb_streams; ++i)
      fmt_->streams[i]->discard =
          static_cast<int>(i) == stream_ ? AVDISCARD_DEFAULT : AVDISCARD_ALL;
    videos_ = static_cast<int>(videos.size());
    return true;
  }
  int video_streams() const { return videos_; }

  /// H.264 and HEVC in MP4 / MKV (length-prefixed NAL units) to Annex B; streams that are
  /// Annex B already pass through the filter unchanged.
  void filter(const char* name) {
    const AVBitStreamFilter* f = av_bsf_get_by_name(name);
    if (f == nullptr) throw Error(fmt::format("this FFmpeg has no {} filter", name));
    int err = av_bsf_alloc(f, &bsf_);
    if (err >= 0) err = avcodec_parameters_copy(bsf_->par_in, stream()->codecpar);
    if (err >= 0) {
      bsf_->time_base_in = stream()->time_base;
      err = av_bsf_init(bsf_);
    }
    if (err < 0) throw Error(fmt::format("'{}': {} failed: {}", name_, name, nvdec_av_text(err)));
  }

  /// The next packet of the stream; false at its end. Throws on a read error or a file that
  /// ends before what its container announces.
  bool next(CompressedPacket& out) {
    for (;;) {
      if (bsf_ != nullptr) {
        const int r = av_bsf_receive_packet(bsf_, packet_);
        if (r == 0) {
          take(out);
          return true;
        }
        if (r == AVERROR_EOF) return false;
        if (r != AVERROR(EAGAIN))
          throw Error(fmt::format("'{}': damaged video data after packet {}: {}", name_,
                                  packets_, nvdec_av_text(r)));
        if (eof_) return false;
      } else if (eof_) {
        return false;
      }
      const int r = av_read_frame(fmt_, packet_);
      if (r == AVERROR_EOF) {
        eof_ = true;
        check_complete();
        if (bsf_ != nullptr) av_bsf_send_packet(bsf_, nullptr);
        continue;
      }
      if (r < 0)
        throw Error(fmt::format("{}: reading failed after packet {}: {} (--keep-going with "
                                "--decoder cpu encodes the frames before it)",
                                name_, packets_, nvdec_av_text(r)));
      if (packet_->stream_index != stream_) {
        av_packet_unref(packet_);
        continue;
      }
      ++packets_;
      if (bsf_ == nullptr) {
        take(out);
        return true;
      }
      const int s = av_bsf_send_packet(bsf_, packet_);
      if (s < 0) {
        av_packet_unref(packet_);
        throw Error(fmt::format("'{}': damaged video data in packet {}: {}", name_, packets_,
                                nvdec_av_text(s)));
      }
    }
  }

 private:
  void take(CompressedPacket& out) {
    out.data.assign(packet_->data, packet_->data + packet_->size);
    out.key = (packet_->flags & AV_PKT_FLAG_KEY) != 0;
    out.discard = (packet_->flags & AV_PKT_FLAG_DISCARD) != 0;
    av_packet_unref(packet_);
  }
  void check_complete() const {
    const std::int64_t announced = stream()->nb_frames;
    if (announced > 0 && packets_ < announced)
      throw Error(fmt::format("'{}' ends early: its container announces {} frames, {} "
                              "read; nothing written (--keep-going encodes the frames that "
                              "decode)",
                              name_, announced, packets_));
  }

  std::string name_;
  AVFormatContext* fmt_ = nullptr;
  AVBSFContext* bsf_ = nullptr;
  AVPacket* packet_ = nullptr;
  int stream_ = -1, videos_ = 0;
  std::int64_t packets_ = 0;
  bool eof_ = false;
};

namespace {

std::string nvdec_activity_text(const NvdecActivity& a) {
  // Busy against the time each decoder existed (made one at a time, the later ones exist for
  // less of the run than the first).
  return fmt::format(
      "NVDEC: {} of {} made, {}, {}; first frame at {:.3f} s; making decoders {:.3f} s "
      "(summed{}); decoders busy {:.0f}% of the {:.3f} s they existed (summed) in {:.3f} s, "
      "{:.0f}% of that waiting for the encoder to take frames",
      count_of(a.decoders_made, "decoder", "decoders"), a.decoders, count_of(a.parts, "part", "parts"),
      count_of(a.frames, "frame", "frames"), a.first_frame_s, a.create_s,
      a.decoders_remade > 0 ? fmt::format(", {} made again for another coded size", a.decoders_remade)
                            : std::string(),
      a.alive_s > 0 ? 100.0 * a.decode_s / a.alive_s : 0.0, a.alive_s, a.elapsed_s,
      a.decode_s > 0 ? 100.0 * a.pool_wait_s / a.decode_s : 0.0);
}

/// The NVDEC codec of an FFmpeg codec id, or false.
bool nvdec_codec(AVCodecID id, VideoCodec& codec) {
  switch (id) {
    case AV_CODEC_ID_H264: codec = VideoCodec::h264; return true;
    case AV_CODEC_ID_HEVC: codec = VideoCodec::hevc; return true;
    case AV_CODEC_ID_VP9: codec = VideoCodec::vp9; return true;
    case AV_CODEC_ID_MPEG2VIDEO: codec = VideoCodec::mpeg2; return true;
    default: return false;
  }
}

bool full_range_of(const AVCodecParameters& c) {
  const auto f = static_cast<AVPixelFormat>(c.format);
  return c.color_range == AVCOL_RANGE_JPEG || f == AV_PIX_FMT_YUVJ420P;
}

/// Why frames of `st` must not be decoded on the GPU here ("" when they can): what the CPU
/// reader does with them that the GPU path does not.
std::string why_not(const AVStream& st, const InputOptions& options, VideoCodec& codec) {
  const AVCodecParameters& c = *st.codecpar;
  if (c.codec_id == AV_CODEC_ID_MPEG2VIDEO)
    return "MPEG-2 decoders may round their inverse DCT differently (the standard allows it), "
           "so NVDEC's frames would not be libavcodec's";
  if (!nvdec_codec(c.codec_id, codec))
    return fmt::format("NVDEC does not decode {} here", avcodec_get_name(c.codec_id));
  const auto pix = static_cast<AVPixelFormat>(c.format);
  if (pix != AV_PIX_FMT_YUV420P && pix != AV_PIX_FMT_YUVJ420P && pix != AV_PIX_FMT_YUV420P10LE &&
      pix != AV_PIX_FMT_YUV420P12LE) {
    const char* name = av_get_pix_fmt_name(pix);
    return fmt::format("its frames are {}, which NVDEC does not give", name ? name : "unknown");
  }
  if (options.rgb_swscale) return "--rgb-decode swscale converts frames on the CPU";
  if (options.keep_going) return "--keep-going encodes damaged frames as libavcodec conceals them";
  if (c.color_space == AVCOL_SPC_RGB) return "its planes hold RGB";
  if (c.field_order != AV_FIELD_UNKNOWN && c.field_order != AV_FIELD_PROGRESSIVE)
    return "it is interlaced";
  std::size_t size = 0;
  if (options.autorotate && av_stream_get_side_data(&st, AV_PKT_DATA_DISPLAYMATRIX, &size) &&
      size >= 9 * 4)
    return "its display matrix turns the frames (--no-autorotate keeps them as stored)";
  return "";
}

}  // namespace

class NvdecOpening {
 public:
  explicit NvdecOpening(std::string path)
      : path_(std::move(path)),
        opened_(std::async(std::launch::async,
                           [p = path_] { return std::make_shared<NvdecDemuxer>(p); })) {}
  const std::string& path() const { return path_; }
  /// The opened file (waits for it), or the opening's error; asked again, a new opening.
  std::shared_ptr<NvdecDemuxer> take() {
    return opened_.valid() ? opened_.get() : std::make_shared<NvdecDemuxer>(path_);
  }

 private:
  std::string path_;
  std::future<std::shared_ptr<NvdecDemuxer>> opened_;  // (its destructor waits for the thread)
};

std::shared_ptr<NvdecOpening> begin_nvdec_opening(const std::string& path) {
  try {
    return std::make_shared<NvdecOpening>(path);
  } catch (const std::system_error&) {
    return nullptr;  // no thread to be had: open_nvdec opens the file itself, as before
  }
}

std::optional<VideoInput> open_nvdec(const std::string& path, const InputOptions& options,
                                     std::string& cpu_notice) {
  if (options.decoder == "cpu") return std::nullopt;
  const bool forced = options.decoder == "gpu";
  if (!forced && options.gpu_device < 0) return std::nullopt;  // a CPU encode decodes there too
  if (options.part.given()) {
    // A part seeks to the keyframe before its range and decodes from there (libav_source.cpp);
    // these decoders would decode every frame before it.
    const std::string why = "a part (--part) seeks to its first frame, which the GPU's decoders "
                            "here do not (they would decode every frame before it)";
    if (forced) throw UsageError("--decoder gpu with --part: " + why + "; use --decoder auto or cpu");
    cpu_notice = fmt::format("'{}' is decoded on the CPU: {}", path, why);
    return std::nullopt;
  }
  struct stat sb;
  if (::stat(path.c_str(), &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size == 0) {
    if (forced) throw Error(fmt::format("--decoder gpu: cannot read '{}' as a video file", path));
    return std::nullopt;  // open_libav says what is wrong
  }
  std::shared_ptr<NvdecDemuxer> demux;
  if (options.nvdec_opening && options.nvdec_opening->path() == path)
    demux = options.nvdec_opening->take();
  else
    demux = std::make_shared<NvdecDemuxer>(path);
  if (!demux->choose(options.stream)) return std::nullopt;  // open_libav says what is wrong
  const AVStream& st = *demux->stream();
  const AVCodecParameters& c = *st.codecpar;
  VideoCodec codec = VideoCodec::h264;
  std::string reason = why_not(st, options, codec);
  CompressedVideo video;
  video.codec = codec;
  video.width = c.width;
  video.height = c.height;
  const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(static_cast<AVPixelFormat>(c.format));
  video.bit_depth = d ? d->comp[0].depth : 8;
  video.full_range = options.range.empty() ? full_range_of(c) : options.range == "full";
  const int device = std::max(0, options.gpu_device);
  // The frames as the CPU reader gives them: planes, or (an odd height: ycbcr.hpp) RGB that
  // libswscale makes of the 8-bit planes, on the host.
  bool reduced = false, reduced_then_swscale = false;
  const VideoOptions format =
      libav_frame_format(c.format, c.color_space, full_range_of(c), c.width, c.height, options,
                         reduced, &reduced_then_swscale);
  const bool swscale_after = !is_planar(format.format) || reduced_then_swscale;
  if (reason.empty()) reason = nvdec_problem(video, device);
  if (!reason.empty()) {
    if (forced) throw Error(fmt::format("--decoder gpu: '{}': {}", path, reason));
    cpu_notice = fmt::format("'{}' is decoded on the CPU: {}", path, reason);
    return std::nullopt;
  }

  VideoInput in;
  in.format = format;
  VideoOptions planes = format;  // what NVDEC's frames are taken as
  const int* table = libav_sws_table(c.color_space, options);
  if (swscale_after) {
    planes.format = FrameFormat::yuv420p;
    planes.range = libav_full_range(full_range_of(c), options) ? YuvRange::full : YuvRange::limited;
    planes.coefficients = swscale_coefficients(table, planes.range);
    in.format = VideoOptions{};
    in.format.width = c.width;
    in.format.height = c.height;
  }
  if (codec == VideoCodec::h264) demux->filter("h264_mp4toannexb");
  if (codec == VideoCodec::hevc) demux->filter("hevc_mp4toannexb");

  AVRational rate = st.avg_frame_rate;
  if (rate.num <= 0 || rate.den <= 0) rate = st.r_frame_rate;
  if (rate.num > 0 && rate.den > 0) av_reduce(&in.fps_num, &in.fps_den, rate.num, rate.den, 1 << 30);
  const std::int64_t announced = st.nb_frames > 0 ? st.nb_frames : -1;
  auto source = std::make_unique<NvdecSource>(
      video, planes, [demux](CompressedPacket& p) { return demux->next(p); }, device,
      options.decoders, announced);
  if (options.start > 0 || options.max_frames >= 0) source->set_range(options.start, options.max_frames);
  in.frame_count = announced >= 0 ? std::max<std::int64_t>(0, announced - options.start) : -1;
  if (options.max_frames >= 0 && (in.frame_count < 0 || options.max_frames < in.frame_count))
    in.frame_count = options.max_frames;
  const char* pix = av_get_pix_fmt_name(static_cast<AVPixelFormat>(c.format));
  in.description = fmt::format(
      "{}x{} {}/{} fps, {}, {} {} ({}), decoded by NVDEC ({} at once) into device memory, "
      "{}",
      c.width, c.height, in.fps_num, in.fps_den,
      in.frame_count >= 0 ? count_of(in.frame_count, "frame", "frames") : "? frames",
      avcodec_get_name(c.codec_id), pix ? pix : "?",
      libav_colour_words(c.color_space, full_range_of(c), options),
      count_of(source->decoders(), "decoder", "decoders"),
      swscale_after ? "to RGB by libswscale on the host (an odd height: ffmpeg's RGB)"
                    : "planes to the encoder");
  if (demux->video_streams() > 1)
    in.notices.push_back(fmt::format("'{}' has {} video streams: one is encoded, the others are "
                                     "left out (--stream N picks another)",
                                     path, demux->video_streams()));
  if (reduced)
    in.notices.push_back(fmt::format("the source has {}-bit samples ({}); they are reduced to "
                                     "8 bits as libswscale reduces them to yuv420p",
                                     video.bit_depth, pix ? pix : "?"));
  // What an output carries beside the frames (its audio and metadata are read from the file
  // again, libav_extras.hpp), and the pixel aspect ratio.
  in.video_stream = st.index;
  for (unsigned i = 0; i < demux->context()->nb_streams; ++i)
    if (demux->context()->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_AUDIO)
      in.has_audio = true;
  if (st.start_time != AV_NOPTS_VALUE) in.start_seconds = st.start_time * av_q2d(st.time_base);
  const AVRational sar = av_guess_sample_aspect_ratio(demux->context(), demux->stream(), nullptr);
  if (sar.num > 0 && sar.den > 0)
    av_reduce(&in.aspect_num, &in.aspect_den, sar.num, sar.den, 1 << 30);
  in.decoder_activity = [s = source.get()] { return nvdec_activity_text(s->activity()); };
  if (swscale_after)
    in.source = swscale_source(std::move(source), planes, table);
  else
    in.source = std::move(source);
  return in;
}

}  // namespace mjpeg::app
