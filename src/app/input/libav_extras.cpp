// The input's metadata and audio for the outputs that carry them (see libav_extras.hpp).
#include "libav_extras.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>

#include <fmt/format.h>

#include "mjpeg/error.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
}

namespace mjpeg::app {
// Named, not anonymous: SourceAudio::Impl holds some of these, and the readers are one unity
// file, where libav_source.cpp has helpers of the same names.
namespace extras_detail {

std::string av_text(int err) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(err, buf, sizeof buf);
  return buf;
}

struct FormatCloser {
  void operator()(AVFormatContext* c) const { avformat_close_input(&c); }
};
struct PacketFreer {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct ParametersFreer {
  void operator()(AVCodecParameters* p) const { avcodec_parameters_free(&p); }
};

/// Big-endian PCM and its little-endian twin (what AVI and most players take).
struct Swap {
  AVCodecID from, to;
  int bytes;
};
constexpr Swap kSwaps[] = {
    {AV_CODEC_ID_PCM_S16BE, AV_CODEC_ID_PCM_S16LE, 2}, {AV_CODEC_ID_PCM_S24BE, AV_CODEC_ID_PCM_S24LE, 3},
    {AV_CODEC_ID_PCM_S32BE, AV_CODEC_ID_PCM_S32LE, 4}, {AV_CODEC_ID_PCM_F32BE, AV_CODEC_ID_PCM_F32LE, 4},
    {AV_CODEC_ID_PCM_F64BE, AV_CODEC_ID_PCM_F64LE, 8},
};

int channel_count(const AVCodecParameters& p) {
#if LIBAVCODEC_VERSION_MAJOR >= 60 || (LIBAVCODEC_VERSION_MAJOR == 59 && LIBAVCODEC_VERSION_MINOR >= 24)
  return p.ch_layout.nb_channels;
#else
  return p.channels;
#endif
}

/// Tags that describe the file, not its content: not carried.
bool file_tag(const std::string& key) {
  return key == "encoder" || key == "major_brand" || key == "minor_version" ||
         key == "compatible_brands";
}

}  // namespace extras_detail


struct SourceAudio::Impl {
  std::string name;
  std::unique_ptr<AVFormatContext, extras_detail::FormatCloser> fmt;
  std::unique_ptr<AVPacket, extras_detail::PacketFreer> packet;
  std::unique_ptr<AVCodecParameters, extras_detail::ParametersFreer> params;  ///< as delivered
  int stream = -1;
  AVRational tb{1, 1};
  std::int64_t start_ts = 0;  ///< the output's time 0 in tb units
  double end_seconds = std::numeric_limits<double>::infinity();
  int swap_bytes = 0;         ///< big-endian PCM: the sample size to swap
  AudioFormat format;
  std::int64_t delivered = 0;
  double covered = 0;         ///< seconds to the end of the last packet delivered
  double next_guess = 0;      ///< where a packet without timestamps starts
  std::string problem;
  bool ended = false;

  /// The next packet of the stream inside [0, end) into `packet` (timestamps made relative).
  bool next() {
    while (!ended) {
      av_packet_unref(packet.get());
      const int err = av_read_frame(fmt.get(), packet.get());
      if (err == AVERROR_EOF) break;
      if (err < 0) {
        problem = fmt::format("reading the audio of '{}' failed after {:.2f} s ({}): the audio "
                              "ends there",
                              name, covered, extras_detail::av_text(err));
        break;
      }
      if (packet->stream_index != stream || packet->size == 0) continue;
      std::int64_t ts = packet->pts != AV_NOPTS_VALUE ? packet->pts : packet->dts;
      const double duration = packet->duration > 0 ? packet->duration * av_q2d(tb) : 0;
      double t = ts != AV_NOPTS_VALUE ? (ts - start_ts) * av_q2d(tb) : next_guess;
      if (ts == AV_NOPTS_VALUE) ts = start_ts + std::llround(t / av_q2d(tb));
      next_guess = t + duration;
      // Half a microsecond of slack: a packet that ends exactly at time 0 (priming before the
      // first frame) still goes first, as ffmpeg keeps it.
      if (t + duration < -5e-7 && duration > 0) continue;
      if (t >= end_seconds) {
        ended = true;
        break;
      }
      packet->pts = ts - start_ts;
      packet->dts = packet->dts != AV_NOPTS_VALUE ? packet->dts - start_ts : packet->pts;
      if (swap_bytes > 1) {
        if (av_packet_make_writable(packet.get()) < 0) throw std::bad_alloc();
        for (int i = 0; i + swap_bytes <= packet->size; i += swap_bytes)
          std::reverse(packet->data + i, packet->data + i + swap_bytes);
      }
      ++delivered;
      covered = std::max(covered, t + duration);
      return true;
    }
    ended = true;
    return false;
  }
};

SourceAudio::SourceAudio(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SourceAudio::~SourceAudio() = default;
const AudioFormat& SourceAudio::format() const { return impl_->format; }
const AVCodecParameters* SourceAudio::parameters() const { return impl_->params.get(); }
int SourceAudio::time_base_num() const { return impl_->tb.num; }
int SourceAudio::time_base_den() const { return impl_->tb.den; }
void SourceAudio::end_at(double seconds) { impl_->end_seconds = std::min(impl_->end_seconds, seconds); }
std::int64_t SourceAudio::packets() const { return impl_->delivered; }
double SourceAudio::seconds() const { return impl_->covered; }
const std::string& SourceAudio::problem() const { return impl_->problem; }

std::string SourceAudio::describe() const {
  const AudioFormat& f = impl_->format;
  const std::string layout = f.channels == 1 ? "mono" : f.channels == 2 ? "stereo"
                                                      : fmt::format("{} channels", f.channels);
  return fmt::format("{} {} Hz {}", f.codec, f.sample_rate, layout);
}

bool SourceAudio::read(AudioPacket& out) {
  if (!impl_->next()) return false;
  const AVPacket& p = *impl_->packet;
  out.data.assign(p.data, p.data + p.size);
  out.time = static_cast<double>(p.pts) * av_q2d(impl_->tb);
  return true;
}

bool SourceAudio::read(AVPacket* out) {
  if (!impl_->next()) return false;
  av_packet_unref(out);
  if (av_packet_ref(out, impl_->packet.get()) < 0) throw std::bad_alloc();
  return true;
}

SourceExtras read_source_extras(const std::string& path, int video_stream, double start_seconds,
                                bool want_audio) {
  av_log_set_level(AV_LOG_FATAL);  // (the readers speak in one-line errors and notices)
  SourceExtras out;
  AVFormatContext* raw = nullptr;
  int err = avformat_open_input(&raw, path.c_str(), nullptr, nullptr);
  if (err < 0) throw Error(fmt::format("cannot read '{}' again: {}", path, extras_detail::av_text(err)));
  std::unique_ptr<AVFormatContext, extras_detail::FormatCloser> fmtctx(raw);
  // The tags of a container with a header (MP4, MOV, Matroska, AVI, ...) are read with it;
  // FFmpeg's probe of the streams (which decodes frames of every stream: a third of a second
  // of one core for 4K H.264) is only needed for the audio's parameters, or where the streams
  // are found in the packets (MPEG-TS, raw streams).
  if (want_audio || (raw->ctx_flags & AVFMTCTX_NOHEADER) != 0) {
    err = avformat_find_stream_info(raw, nullptr);
    if (err < 0)
      throw Error(fmt::format("cannot read '{}' again: {}", path, extras_detail::av_text(err)));
  }
  const AVDictionaryEntry* tag = nullptr;
  while ((tag = av_dict_get(raw->metadata, "", tag, AV_DICT_IGNORE_SUFFIX)) != nullptr) {
    // Keys as FFmpeg's muxers match them, without regard to case: Matroska's tags are upper
    // case ("ARTIST"), the names the outputs know lower case.
    std::string key = tag->key;
    for (char& ch : key) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (!extras_detail::file_tag(key) && tag->value[0] != '\0')
      out.metadata.emplace_back(std::move(key), tag->value);
  }
  if (!want_audio) return out;

  int audio_streams = 0;
  for (unsigned i = 0; i < raw->nb_streams; ++i)
    if (raw->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_AUDIO) ++audio_streams;
  if (audio_streams == 0) return out;
  const int chosen = av_find_best_stream(raw, AVMEDIA_TYPE_AUDIO, -1, video_stream, nullptr, 0);
  if (chosen < 0) return out;
  const AVStream* st = raw->streams[chosen];
  if (audio_streams > 1)
    out.notices.push_back(fmt::format("'{}' has {} audio streams: the {} one (stream {}) is "
                                      "carried, the others are left out",
                                      path, audio_streams, avcodec_get_name(st->codecpar->codec_id),
                                      chosen));
  for (unsigned i = 0; i < raw->nb_streams; ++i)
    raw->streams[i]->discard = static_cast<int>(i) == chosen ? AVDISCARD_DEFAULT : AVDISCARD_ALL;

  auto impl = std::make_unique<SourceAudio::Impl>();
  impl->name = path;
  impl->stream = chosen;
  impl->tb = st->time_base;
  impl->start_ts = std::llround(start_seconds / av_q2d(st->time_base));
  impl->next_guess = st->start_time != AV_NOPTS_VALUE
                         ? (st->start_time - impl->start_ts) * av_q2d(st->time_base)
                         : 0;
  impl->params.reset(avcodec_parameters_alloc());
  impl->packet.reset(av_packet_alloc());
  if (!impl->params || !impl->packet) throw std::bad_alloc();
  if (avcodec_parameters_copy(impl->params.get(), st->codecpar) < 0) throw std::bad_alloc();
  AVCodecParameters& p = *impl->params;
  for (const extras_detail::Swap& s : extras_detail::kSwaps) {
    if (p.codec_id != s.from) continue;
    p.codec_id = s.to;
    p.codec_tag = 0;
    impl->swap_bytes = s.bytes;
  }
  AudioFormat& f = impl->format;
  f.codec = avcodec_get_name(p.codec_id);
  f.sample_rate = p.sample_rate;
  f.channels = extras_detail::channel_count(p);
  const bool pcm = f.codec.rfind("pcm_", 0) == 0;  // packets of any whole number of samples
  f.frame_samples = pcm ? 0 : p.frame_size > 0 ? p.frame_size : av_get_audio_frame_duration2(&p, 0);
  f.bit_rate = p.bit_rate;
  if (p.extradata != nullptr && p.extradata_size > 0)
    f.extradata.assign(p.extradata, p.extradata + p.extradata_size);
  // Far into the file (--start): begin reading a second before the output's start.
  if (start_seconds > 2) {
    const std::int64_t ts = std::llround((start_seconds - 1) / av_q2d(st->time_base));
    if (av_seek_frame(raw, chosen, ts, AVSEEK_FLAG_BACKWARD) < 0)
      av_seek_frame(raw, chosen, st->start_time != AV_NOPTS_VALUE ? st->start_time : 0,
                    AVSEEK_FLAG_BACKWARD);
  }
  impl->fmt = std::move(fmtctx);
  out.audio = std::make_unique<SourceAudio>(std::move(impl));
  return out;
}

}  // namespace mjpeg::app
