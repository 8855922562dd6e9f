// Streaming RIFF AVI writer for Motion-JPEG, with the OpenDML (AVI 2.0) extension and,
// optionally, one audio stream copied beside the video.
//
// File layout (little-endian; every chunk is FOURCC, u32 size, data, padded to an even size):
//
//   RIFF 'AVI '                         first segment, at most `riff_limit` bytes (~1 GiB)
//     LIST 'hdrl'
//       'avih'  MainAVIHeader (56 bytes): dwTotalFrames = frames of this first RIFF only
//       LIST 'strl'                     stream 0, the video
//         'strh' AVIStreamHeader (56): 'vids' 'MJPG', dwRate/dwScale = fps, dwLength = all frames
//         'strf' BITMAPINFOHEADER (40): biCompression 'MJPG'
//         'indx' OpenDML super index: one entry (offset, size, frames) per 'ix00' below,
//                room reserved for kMaxSegments entries
//         'vprp' video properties (68): the frame's display aspect ratio (the pixel aspect
//                ratio times width / height), where players read it
//       LIST 'strl'                     stream 1, the audio (only with AviAudio)
//         'strh' 'auds': dwScale/dwRate, dwSampleSize, dwLength (see AviAudio)
//         'strf' WAVEFORMATEX (18 + extra bytes)
//         'indx' its super index, one entry per 'ix01'
//       LIST 'odml'
//         'dmlh' (248): dwTotalFrames = all frames of all segments
//     LIST 'INFO'                       the RIFF INFO tags (only when there are any)
//       'INAM' title, 'IART' artist, ... (zero-terminated text)
//     LIST 'movi'
//       '00dc' JPEG ...                 stream 0, compressed video
//       '01wb' audio packet ...         stream 1, interleaved with the frames
//       'ix00'  OpenDML standard index of this segment's frames
//       'ix01'  the same for its audio chunks
//     'idx1'  AVI 1.0 index of the first segment, every chunk in file order (what pre-OpenDML
//             readers use)
//   RIFF 'AVIX'                         further segments, each at most `riff_limit` bytes
//     LIST 'movi'
//       '00dc' ..., '01wb' ...
//       'ix00', 'ix01'
//   ...
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/frame_sink.hpp"

namespace mjpeg {
struct AudioFormat;
}

namespace mjpeg::io {

class AtomicFile;

/// An audio stream as the AVI describes it: its WAVEFORMATEX and how its chunks count time.
struct AviAudio {
  std::uint16_t format_tag = 0;  ///< WAVE_FORMAT_*: 1 PCM, 3 IEEE float, 0x50 MPEG, 0x55 MP3, ...
  int channels = 0;
  int sample_rate = 0;
  std::uint32_t avg_bytes_per_sec = 0;
  int block_align = 0;
  int bits_per_sample = 0;
  std::vector<std::uint8_t> extra;  ///< the bytes after cbSize (AAC: AudioSpecificConfig)
  /// 0: PCM-like, every chunk whole blocks of block_align bytes (dwSampleSize = block_align,
  /// time counted in samples); otherwise each chunk is one coded frame of this many samples
  /// (dwSampleSize = 0, dwScale / dwRate = frame_samples / sample_rate), as for MP3, AAC, AC-3.
  int frame_samples = 0;
  /// Where the audio starts after the first frame's start (strh dwStart), seconds.
  double start_seconds = 0;
};

/// The AVI description of `format` (video.hpp), or nullopt with `why` set when AVI carries no
/// such audio (e.g. Opus, Vorbis) or the format is incomplete.
std::optional<AviAudio> avi_audio(const AudioFormat& format, std::string& why);

/// The RIFF INFO chunk id of a metadata key ("title" -> "INAM", "artist" -> "IART", "comment"
/// -> "ICMT", "date" -> "ICRD", "genre" -> "IGNR", "copyright" -> "ICOP", "album" -> "IPRD",
/// "language" -> "ILNG", "track" -> "IPRT", "encoded_by" -> "ITCH"; the names FFmpeg uses for
/// these chunks), or "" for a key AVI has no chunk for.
std::string riff_info_id(const std::string& key);
/// The keys riff_info_id knows, in that order.
std::vector<std::string> riff_info_keys();

/// What an AVI holds beside its frames.
struct AviExtras {
  int aspect_num = 1, aspect_den = 1;  ///< pixel aspect ratio (vprp carries it times w / h)
  std::optional<AviAudio> audio;
  /// RIFF INFO chunks in this order: (chunk id such as "INAM", text).
  std::vector<std::pair<std::string, std::string>> info;
  bool replace_existing = true;  ///< false: close() refuses to replace a file that exists by then
};

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
  AviWriter(const std::string& path, int width, int height, int fps_num, int fps_den,
            const AviExtras& extras, std::uint64_t riff_limit = kDefaultRiffLimit);
  ~AviWriter() override;  ///< an unclosed writer removes its temporary file; never throws

  void write_frame(const std::uint8_t* jpeg, std::size_t size) override;
  /// Appends one audio packet (only with AviExtras::audio), where the stream stands now: the
  /// caller interleaves them with the frames in time order.
  void write_audio(const std::uint8_t* data, std::size_t size);
  void close() override;
  std::int64_t frames_written() const override { return streams_[0].chunks; }
  std::uint64_t bytes_written() const override;
  /// RIFF segments started so far (1 + the number of 'AVIX' segments).
  int segments() const { return segments_; }
  /// Audio chunks and their bytes written so far.
  std::int64_t audio_chunks() const { return streams_.size() > 1 ? streams_[1].chunks : 0; }
  std::uint64_t audio_bytes() const { return streams_.size() > 1 ? streams_[1].bytes : 0; }

 private:
  struct IndexEntry {   // one chunk of the current segment
    std::uint32_t offset;  // chunk header offset from the segment's 'movi' fourcc
    std::uint32_t size;    // payload bytes (unpadded)
  };
  struct SegmentIndex {  // one super-index entry
    std::uint64_t offset;  // file offset of the 'ix##' chunk
    std::uint32_t size;    // its size including the 8-byte chunk header
    std::uint32_t duration;  // frames, audio chunks, or (PCM) samples of the segment
  };
  struct Stream {
    char tag[5];                          // "00dc" or "01wb"
    std::vector<IndexEntry> entries;      // this segment's chunks
    std::uint64_t segment_bytes = 0;      // their payload bytes
    std::vector<SegmentIndex> super_index;
    std::int64_t chunks = 0;              // all segments
    std::uint64_t bytes = 0;
    std::uint32_t max_chunk = 0;
    std::uint64_t strh_pos = 0;           // start of the strh payload
    std::uint64_t indx_pos = 0;           // start of the indx payload
  };
  struct Idx1Entry {  // a chunk of the first segment, in file order
    std::uint8_t stream;
    std::uint32_t offset, size;
  };

  void open(const std::string& path, std::uint64_t riff_limit);
  void write_header();
  void write_chunk(int stream, const std::uint8_t* data, std::size_t size);
  void begin_segment(bool first);
  void end_segment();
  std::uint64_t trailing_index_bytes(int adding_to) const;
  std::uint32_t segment_duration(const Stream& s) const;
  void patch32(std::uint64_t offset, std::uint32_t value);

  std::unique_ptr<AtomicFile> file_;
  int width_, height_, fps_num_, fps_den_;
  AviExtras extras_;
  std::uint64_t riff_limit_;
  bool closed_ = false;

  std::vector<Stream> streams_;  // [0] video, [1] audio when there is one

  // Current segment.
  bool first_segment_ = true;
  std::uint64_t riff_pos_ = 0;        // offset of 'RIFF'
  std::uint64_t movi_list_pos_ = 0;   // offset of 'LIST' of the movi list
  std::size_t segment_chunks_ = 0;    // chunks of every stream in it
  std::vector<Idx1Entry> idx1_;       // the first segment's chunks

  int segments_ = 0;                  // segments begun
  std::uint32_t first_riff_frames_ = 0;

  // Offsets of header fields patched at close().
  std::uint64_t avih_pos_ = 0;   // start of the avih payload
  std::uint64_t dmlh_pos_ = 0;   // start of the dmlh payload
};

}  // namespace mjpeg::io
