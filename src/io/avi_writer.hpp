// Streaming RIFF AVI writer for Motion-JPEG, with the OpenDML (AVI 2.0) extension.
//
// File layout (little-endian; every chunk is FOURCC, u32 size, data, padded to an even size):
//
//   RIFF 'AVI '                         first segment, at most `riff_limit` bytes (~1 GiB)
//     LIST 'hdrl'
//       'avih'  MainAVIHeader (56 bytes): dwTotalFrames = frames of this first RIFF only
//       LIST 'strl'
//         'strh' AVIStreamHeader (56): 'vids' 'MJPG', dwRate/dwScale = fps, dwLength = all frames
//         'strf' BITMAPINFOHEADER (40): biCompression 'MJPG'
//         'indx' OpenDML super index: one entry (offset, size, frames) per 'ix00' below,
//                room reserved for kMaxSegments entries
//       LIST 'odml'
//         'dmlh' (248): dwTotalFrames = all frames of all segments
//     LIST 'movi'
//       '00dc' JPEG ... (stream 0, compressed video)
//       'ix00'  OpenDML standard index of this segment's frames
//     'idx1'  AVI 1.0 index of the first segment (what pre-OpenDML readers use)
//   RIFF 'AVIX'                         further segments, each at most `riff_limit` bytes
//     LIST 'movi'
//       '00dc' ...
//       'ix00'
//   ...
//     'JUNK'  a note (set_note), if any: after the last segment's index, where players skip it
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/frame_sink.hpp"

namespace mjpeg::io {

class AtomicFile;

class AviWriter final : public FrameSink {
 public:
  /// 1 GiB per RIFF segment, the OpenDML convention (and what FFmpeg uses).
  static constexpr std::uint64_t kDefaultRiffLimit = std::uint64_t(1) << 30;
  /// Super-index entries reserved in the header: 256 segments of 1 GiB, ~256 GiB of video.
  static constexpr int kMaxSegments = 256;

  /// Opens `path` (written to a temporary file, renamed by close()). fps = fps_num/fps_den.
  /// `riff_limit` caps each RIFF segment (tests set it small to cross segment boundaries);
  /// it must lie in [64 KiB, 1 GiB]. Throws UsageError on invalid arguments.
  AviWriter(const std::string& path, int width, int height, int fps_num, int fps_den,
            std::uint64_t riff_limit = kDefaultRiffLimit);
  ~AviWriter() override;  ///< an unclosed writer removes its temporary file; never throws

  void write_frame(const std::uint8_t* jpeg, std::size_t size) override;
  void close() override;
  std::int64_t frames_written() const override { return total_frames_; }
  std::uint64_t bytes_written() const override;
  /// RIFF segments started so far (1 + the number of 'AVIX' segments).
  int segments() const { return segments_; }
  void set_note(const std::string& text) override { note_ = text; }

 private:
  struct IndexEntry {   // one frame of the current segment
    std::uint32_t offset;  // chunk header offset from the segment's 'movi' fourcc
    std::uint32_t size;    // payload bytes (unpadded)
  };
  struct SegmentIndex {  // one super-index entry
    std::uint64_t offset;  // file offset of the 'ix00' chunk
    std::uint32_t size;    // its size including the 8-byte chunk header
    std::uint32_t frames;
  };

  void write_header();
  void begin_segment(bool first);
  void end_segment();
  std::uint64_t trailing_index_bytes(std::size_t frames) const;
  void patch32(std::uint64_t offset, std::uint32_t value);

  std::unique_ptr<AtomicFile> file_;
  int width_, height_, fps_num_, fps_den_;
  std::uint64_t riff_limit_;
  bool closed_ = false;
  std::string note_;

  // Current segment.
  bool first_segment_ = true;
  std::uint64_t riff_pos_ = 0;        // offset of 'RIFF'
  std::uint64_t movi_list_pos_ = 0;   // offset of 'LIST' of the movi list
  std::vector<IndexEntry> entries_;

  std::vector<SegmentIndex> super_index_;  // finished segments
  int segments_ = 0;                       // segments begun
  std::int64_t total_frames_ = 0;
  std::uint32_t first_riff_frames_ = 0;
  std::uint32_t max_frame_size_ = 0;

  // Offsets of header fields patched at close().
  std::uint64_t avih_pos_ = 0;   // start of the avih payload
  std::uint64_t strh_pos_ = 0;   // start of the strh payload
  std::uint64_t indx_pos_ = 0;   // start of the indx payload
  std::uint64_t dmlh_pos_ = 0;   // start of the dmlh payload
};

}  // namespace mjpeg::io
