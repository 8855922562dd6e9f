#include "video_index.hpp"

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "mjpeg/error.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/error.h>
}

namespace mjpeg::app {

VideoIndex index_video(const std::string& path, int stream, std::int64_t limit) {
  AVFormatContext* raw = nullptr;
  const auto fail = [&](int err) {
    char text[AV_ERROR_MAX_STRING_SIZE] = {};
    av_strerror(err, text, sizeof text);
    return Error(fmt::format("cannot read the packets of '{}': {}", path, text));
  };
  int err = avformat_open_input(&raw, path.c_str(), nullptr, nullptr);
  if (err < 0) throw fail(err);
  const std::unique_ptr<AVFormatContext, void (*)(AVFormatContext*)> ctx(
      raw, [](AVFormatContext* c) { avformat_close_input(&c); });
  if ((err = avformat_find_stream_info(raw, nullptr)) < 0) throw fail(err);
  if (stream < 0 || stream >= static_cast<int>(raw->nb_streams))
    throw Error(fmt::format("'{}' has no stream {}", path, stream));
  for (unsigned i = 0; i < raw->nb_streams; ++i)
    raw->streams[i]->discard = static_cast<int>(i) == stream ? AVDISCARD_DEFAULT : AVDISCARD_ALL;
  const bool vp8 = raw->streams[stream]->codecpar->codec_id == AV_CODEC_ID_VP8;
  const std::unique_ptr<AVPacket, void (*)(AVPacket*)> packet(
      av_packet_alloc(), [](AVPacket* p) { av_packet_free(&p); });
  if (!packet) throw std::bad_alloc();

  VideoIndex index;
  bool timed = true;
  std::int64_t since_key = 0;
  std::int64_t last_dts = AV_NOPTS_VALUE;
  while ((limit < 0 || index.frames < limit) && (err = av_read_frame(raw, packet.get())) >= 0) {
    const AVPacket& p = *packet;
    // A VP8 frame header's show_frame bit (the fifth bit of its first byte) is clear for a
    // hidden frame (an alternate reference), which gives the decoder no picture.
    const bool shown = !(p.flags & AV_PKT_FLAG_DISCARD) &&
                       !(vp8 && p.size > 0 && (p.data[0] & 0x10) == 0);
    if (p.stream_index == stream && shown) {
      ++index.frames;
      if (p.pts == AV_NOPTS_VALUE) timed = false;
      // Decoding timestamps that go back (joined recordings, a reset): sorted, the pts would
      // not name the frames in the order a decode gives them.
      if (p.dts != AV_NOPTS_VALUE) {
        if (last_dts != AV_NOPTS_VALUE && p.dts < last_dts) timed = false;
        last_dts = p.dts;
      }
      if (timed) index.pts.push_back(p.pts);
      if (p.flags & AV_PKT_FLAG_KEY) {
        index.keys.push_back(VideoIndex::Key{p.pts, p.dts});
        since_key = 0;
      }
      index.longest_gop = std::max(index.longest_gop, ++since_key);
    }
    av_packet_unref(packet.get());
  }
  if (err < 0 && err != AVERROR_EOF) throw fail(err);
  std::sort(index.pts.begin(), index.pts.end());
  if (!timed || std::adjacent_find(index.pts.begin(), index.pts.end()) != index.pts.end())
    index.pts.clear();
  return index;
}

}  // namespace mjpeg::app
