// Where a video's frames are, found by reading its packets without decoding them (builds with
// FFmpeg's libraries): the frame count that --part splits, and the timestamps that let a part
// seek to its first frame instead of decoding every frame before it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mjpeg::app {

struct VideoIndex {
  /// Frames the stream shows: its packets, less those the demuxer marks discarded (an edit
  /// list's) and VP8's hidden frames, each of which decodes to no picture.
  std::int64_t frames = 0;
  /// The presentation timestamp of every frame, ascending: frame i (as a one-pass decode
  /// numbers them) is the picture whose pts is pts[i]. Empty when a packet has no timestamp, two
  /// share one or the decoding timestamps go back: then frames are found by counting from the
  /// start.
  std::vector<std::int64_t> pts;
  /// The keyframes a decoder can start at, in file order.
  struct Key {
    std::int64_t pts;
    std::int64_t dts;  ///< AV_NOPTS_VALUE when the demuxer gives none
  };
  std::vector<Key> keys;
  /// The longest run of frames from one keyframe to the next (what a seek may decode and drop).
  std::int64_t longest_gop = 0;
};

/// Reads the packets of stream `stream` of `path` (its own demuxer: the caller's is not
/// moved): all of them, or (limit >= 0) until `limit` frames are counted, which describes
/// frames 0 .. limit - 1 - (the decoder's reorder depth) exactly. Throws Error naming the file
/// when it cannot be read.
VideoIndex index_video(const std::string& path, int stream, std::int64_t limit = -1);

}  // namespace mjpeg::app
