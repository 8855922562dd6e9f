// .mkv and .mov outputs through FFmpeg's muxers (see libav_sink.hpp).
#include "libav_sink.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>

#include <fmt/format.h>

#include "app/common/paths.hpp"
#include "mjpeg/error.hpp"
#include "mjpeg/files.hpp"

#if MJPEG_HAVE_LIBAV
#include "app/input/libav_extras.hpp"
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/error.h>
#include <libavutil/mem.h>
}
#endif

namespace mjpeg::app {

bool is_muxer_output(const std::string& path) {
  const std::string ext = lower_extension(path);
  return path.find('%') == std::string::npos && (ext == ".mkv" || ext == ".mov");
}

const char* muxer_output_name(const std::string& path) {
  return lower_extension(path) == ".mov" ? "QuickTime" : "Matroska";
}

#if !MJPEG_HAVE_LIBAV

std::string muxer_output_problem(const std::string& path) {
  return fmt::format("'{}': {} output needs FFmpeg's libraries, which this mjpeg was built "
                     "without (use .avi)",
                     path, muxer_output_name(path));
}

struct LibavSink::Impl {};

LibavSink::LibavSink(const std::string& path, int, int, const Options&) {
  throw UsageError(muxer_output_problem(path));
}
LibavSink::~LibavSink() = default;
void LibavSink::write(const EncodedFrame&) {}
void LibavSink::close() {}
std::uint64_t LibavSink::bytes_written() const { return 0; }

#else

namespace {
const char* muxer_of(const std::string& path) {
  return lower_extension(path) == ".mov" ? "mov" : "matroska";
}
}  // namespace

std::string muxer_output_problem(const std::string& path) {
  if (av_guess_format(muxer_of(path), nullptr, nullptr) != nullptr) return "";
  return fmt::format("'{}': the FFmpeg libraries of this mjpeg have no {} muxer (use .avi)", path,
                     muxer_output_name(path));
}

namespace {

std::string muxer_error_text(int err) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(err, buf, sizeof buf);
  return buf;
}

}  // namespace

std::string muxer_audio_problem(const std::string& path, const SourceAudio& audio) {
  const AVOutputFormat* format = av_guess_format(muxer_of(path), nullptr, nullptr);
  const AVCodecID codec = audio.parameters()->codec_id;
  if (format != nullptr && avformat_query_codec(format, codec, FF_COMPLIANCE_NORMAL) == 1) return "";
  return fmt::format("{} has no place for {} audio", muxer_output_name(path),
                     avcodec_get_name(codec));
}

struct LibavSink::Impl {
  std::string path;
  Options options;
  OutputFile file;
  AVFormatContext* ctx = nullptr;
  AVIOContext* io = nullptr;
  AVPacket* packet = nullptr;
  AVStream* video = nullptr;
  AVStream* audio_stream = nullptr;
  std::uint64_t pos = 0;  ///< where the muxer writes next
  std::string io_error;   ///< what the file refused (the muxer only sees an error code)
  std::int64_t frames = 0;
  bool audio_pending = false;
  double audio_time = 0;  ///< start of the pending audio packet, seconds
  bool closed = false;

  Impl(const std::string& p, const Options& o) : path(p), options(o), file(p, o.overwrite) {}
  ~Impl() {
    if (ctx != nullptr) avformat_free_context(ctx);
    if (io != nullptr) {
      av_freep(&io->buffer);
      avio_context_free(&io);
    }
    av_packet_free(&packet);
  }

#if LIBAVFORMAT_VERSION_MAJOR >= 61
  static int write_cb(void* opaque, const std::uint8_t* buf, int size) {
#else
  static int write_cb(void* opaque, std::uint8_t* buf, int size) {
#endif
    auto* m = static_cast<Impl*>(opaque);
    try {
      if (m->pos == m->file.size())
        m->file.write(buf, static_cast<std::size_t>(size));
      else
        m->file.write_at(m->pos, buf, static_cast<std::size_t>(size));
      m->pos += static_cast<std::uint64_t>(size);
      return size;
    } catch (const std::exception& e) {
      if (m->io_error.empty()) m->io_error = e.what();
      return AVERROR(EIO);
    }
  }
  static std::int64_t seek_cb(void* opaque, std::int64_t offset, int whence) {
    auto* m = static_cast<Impl*>(opaque);
    const auto size = static_cast<std::int64_t>(m->file.size());
    if (whence & AVSEEK_SIZE) return size;
    std::int64_t to = offset;
    switch (whence & ~AVSEEK_FORCE) {
      case SEEK_SET: break;
      case SEEK_CUR: to = static_cast<std::int64_t>(m->pos) + offset; break;
      case SEEK_END: to = size + offset; break;
      default: return AVERROR(EINVAL);
    }
    if (to < 0) return AVERROR(EINVAL);
    m->pos = static_cast<std::uint64_t>(to);
    return to;
  }

  /// Throws Error for a failed muxer call: what the file said, or FFmpeg's message.
  void check(int err, const char* what) {
    if (err >= 0) return;
    throw Error(fmt::format("{}: {}: {}", path, what,
                            io_error.empty() ? muxer_error_text(err) : io_error));
  }

  void next_audio() {
    audio_pending = options.audio->read(packet);
    if (audio_pending)
      audio_time = static_cast<double>(packet->pts) * options.audio->time_base_num() /
                   options.audio->time_base_den();
  }
  /// Writes the audio packets that start before `until` seconds.
  void pump_audio(double until) {
    while (audio_stream != nullptr && audio_pending && audio_time < until) {
      packet->stream_index = audio_stream->index;
      av_packet_rescale_ts(packet, AVRational{options.audio->time_base_num(),
                                              options.audio->time_base_den()},
                           audio_stream->time_base);
      check(av_interleaved_write_frame(ctx, packet), "writing audio failed");
      next_audio();
    }
  }
};

LibavSink::LibavSink(const std::string& path, int width, int height, const Options& options)
    : impl_(std::make_unique<Impl>(path, options)) {
  av_log_set_level(AV_LOG_FATAL);  // (mjpeg speaks in one-line errors and notices)
  Impl& m = *impl_;
  m.check(avformat_alloc_output_context2(&m.ctx, nullptr, muxer_of(path), nullptr),
          "cannot set up the muxer");
  constexpr int kBuffer = 1 << 16;
  auto* buffer = static_cast<unsigned char*>(av_malloc(kBuffer));
  if (buffer == nullptr) throw std::bad_alloc();
  m.io = avio_alloc_context(buffer, kBuffer, 1, &m, nullptr, &Impl::write_cb, &Impl::seek_cb);
  if (m.io == nullptr) {
    av_free(buffer);
    throw std::bad_alloc();
  }
  m.ctx->pb = m.io;
  m.ctx->flags |= AVFMT_FLAG_CUSTOM_IO;
  m.packet = av_packet_alloc();
  if (m.packet == nullptr) throw std::bad_alloc();

  m.video = avformat_new_stream(m.ctx, nullptr);
  if (m.video == nullptr) throw std::bad_alloc();
  AVCodecParameters* v = m.video->codecpar;
  v->codec_type = AVMEDIA_TYPE_VIDEO;
  v->codec_id = AV_CODEC_ID_MJPEG;
  v->width = width;
  v->height = height;
  v->sample_aspect_ratio = AVRational{options.aspect_num, options.aspect_den};
  m.video->sample_aspect_ratio = v->sample_aspect_ratio;
  m.video->time_base = AVRational{options.fps_den, options.fps_num};
  m.video->avg_frame_rate = AVRational{options.fps_num, options.fps_den};
  m.video->r_frame_rate = m.video->avg_frame_rate;

  if (options.audio != nullptr) {
    m.audio_stream = avformat_new_stream(m.ctx, nullptr);
    if (m.audio_stream == nullptr) throw std::bad_alloc();
    if (avcodec_parameters_copy(m.audio_stream->codecpar, options.audio->parameters()) < 0)
      throw std::bad_alloc();
    m.audio_stream->codecpar->codec_tag = 0;  // the muxer's own tag for the codec
    m.audio_stream->time_base =
        AVRational{options.audio->time_base_num(), options.audio->time_base_den()};
  }
  for (const auto& [key, text] : options.metadata)
    av_dict_set(&m.ctx->metadata, key.c_str(), text.c_str(), 0);
  m.check(avformat_write_header(m.ctx, nullptr), "cannot write the header");
  if (options.audio != nullptr) m.next_audio();
}

LibavSink::~LibavSink() = default;

void LibavSink::write(const EncodedFrame& frame) {
  Impl& m = *impl_;
  if (m.closed) throw Error(m.path + ": write after close");
  m.pump_audio(static_cast<double>(m.frames + 1) * m.options.fps_den / m.options.fps_num);
  AVPacket* p = av_packet_alloc();
  if (p == nullptr || av_new_packet(p, static_cast<int>(frame.size)) < 0) {
    av_packet_free(&p);
    throw std::bad_alloc();
  }
  std::memcpy(p->data, frame.data, frame.size);
  p->stream_index = m.video->index;
  p->pts = p->dts = m.frames;
  p->duration = 1;
  p->flags |= AV_PKT_FLAG_KEY;
  av_packet_rescale_ts(p, AVRational{m.options.fps_den, m.options.fps_num}, m.video->time_base);
  const int err = av_interleaved_write_frame(m.ctx, p);
  av_packet_free(&p);
  m.check(err, "writing a frame failed");
  ++m.frames;
}

void LibavSink::close() {
  Impl& m = *impl_;
  if (m.closed) return;
  m.closed = true;
  m.pump_audio(std::numeric_limits<double>::infinity());
  m.check(av_write_trailer(m.ctx), "cannot finish the file");
  avio_flush(m.io);
  if (!m.io_error.empty()) throw Error(m.path + ": " + m.io_error);
  m.file.commit();
}

std::uint64_t LibavSink::bytes_written() const { return impl_->file.size(); }

#endif

}  // namespace mjpeg::app
