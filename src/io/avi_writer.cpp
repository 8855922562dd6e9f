// Streaming RIFF AVI (MJPG) writer with OpenDML segments (layout in avi_writer.hpp).
#include "io/avi_writer.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "core/ratio.hpp"
#include "io/atomic_file.hpp"
#include "mjpeg/error.hpp"
#include "mjpeg/video.hpp"

namespace mjpeg::io {
namespace {

// avih.dwFlags
constexpr std::uint32_t kAvifHasIndex = 0x10;        // an idx1 chunk is present
constexpr std::uint32_t kAvifIsInterleaved = 0x100;
constexpr std::uint32_t kAvifTrustCkType = 0x800;   // the chunk ids say which stream
// idx1 entry flags
constexpr std::uint32_t kAviifKeyframe = 0x10;       // every JPEG frame is a keyframe
// OpenDML index types (bIndexType)
constexpr std::uint8_t kAviIndexOfIndexes = 0x00;    // 'indx': entries point at 'ix##' chunks
constexpr std::uint8_t kAviIndexOfChunks = 0x01;     // 'ix##': entries point at frame data

constexpr std::size_t kAvihSize = 56;
constexpr std::size_t kStrhSize = 56;
constexpr std::size_t kStrfSize = 40;                // BITMAPINFOHEADER
constexpr std::size_t kIndexHeaderSize = 24;         // shared by 'indx' and 'ix##'
constexpr std::size_t kSuperEntrySize = 16;          // qwOffset, dwSize, dwDuration
constexpr std::size_t kStdEntrySize = 8;             // dwOffset, dwSize
constexpr std::size_t kIdx1EntrySize = 16;           // ckid, dwFlags, dwOffset, dwSize
constexpr std::size_t kDmlhSize = 248;               // dwTotalFrames + 61 reserved dwords
constexpr std::size_t kVprpSize = 68;                // VideoPropHeader with one field
constexpr std::size_t kWaveFormatExSize = 18;        // WAVEFORMATEX up to cbSize
constexpr std::uint64_t kMinRiffLimit = 64 * 1024;

/// Little-endian byte builder for headers and index chunks.
class Bytes {
 public:
  void u8(std::uint8_t v) { b_.push_back(v); }
  void u16(std::uint16_t v) { u8(std::uint8_t(v)); u8(std::uint8_t(v >> 8)); }
  void u32(std::uint32_t v) { u16(std::uint16_t(v)); u16(std::uint16_t(v >> 16)); }
  void u64(std::uint64_t v) { u32(std::uint32_t(v)); u32(std::uint32_t(v >> 32)); }
  void fourcc(const char* c) { b_.insert(b_.end(), c, c + 4); }
  void zeros(std::size_t n) { b_.insert(b_.end(), n, 0); }
  /// Writes FOURCC and a size placeholder; returns the offset of the size field.
  std::size_t begin_chunk(const char* id) { fourcc(id); u32(0); return b_.size() - 4; }
  /// Fills a size placeholder with the bytes written since it.
  void end_chunk(std::size_t size_field) { set32(size_field, std::uint32_t(b_.size() - size_field - 4)); }
  void set32(std::size_t at, std::uint32_t v) { for (int i = 0; i < 4; ++i) b_[at + i] = std::uint8_t(v >> (8 * i)); }
  std::size_t size() const { return b_.size(); }
  const std::uint8_t* data() const { return b_.data(); }
  void clear() { b_.clear(); }

 private:
  std::vector<std::uint8_t> b_;
};

std::uint32_t clamp32(std::uint64_t v) {
  return v > 0xFFFFFFFFu ? 0xFFFFFFFFu : std::uint32_t(v);
}

std::uint32_t gcd32(std::uint32_t a, std::uint32_t b) { return std::gcd(a, b); }

}  // namespace

std::optional<AviAudio> avi_audio(const AudioFormat& f, std::string& why) {
  struct Codec {
    const char* name;
    std::uint16_t tag;
    int bytes;  // bytes per sample (PCM), 0 for frame-based codecs
  };
  // WAVE format tags (mmreg.h), as FFmpeg writes them into AVI.
  static const Codec kCodecs[] = {
      {"pcm_u8", 0x0001, 1},    {"pcm_s16le", 0x0001, 2}, {"pcm_s24le", 0x0001, 3},
      {"pcm_s32le", 0x0001, 4}, {"pcm_f32le", 0x0003, 4}, {"pcm_f64le", 0x0003, 8},
      {"pcm_alaw", 0x0006, 1},  {"pcm_mulaw", 0x0007, 1}, {"mp2", 0x0050, 0},
      {"mp3", 0x0055, 0},       {"aac", 0x00FF, 0},       {"ac3", 0x2000, 0},
  };
  const Codec* codec = nullptr;
  for (const Codec& c : kCodecs)
    if (f.codec == c.name) codec = &c;
  if (codec == nullptr) {
    why = "AVI has no place for " + (f.codec.empty() ? std::string("this") : f.codec) + " audio";
    return std::nullopt;
  }
  if (f.sample_rate <= 0 || f.channels <= 0 || f.channels > 255) {
    why = f.codec + " audio without a sample rate or channel count";
    return std::nullopt;
  }
  if (codec->bytes == 0 && f.frame_samples <= 0) {
    why = f.codec + " audio without its samples per packet";
    return std::nullopt;
  }
  AviAudio a;
  a.format_tag = codec->tag;
  a.channels = f.channels;
  a.sample_rate = f.sample_rate;
  a.extra = f.extradata;
  if (codec->bytes > 0) {  // PCM: whole blocks of one sample per channel
    a.block_align = codec->bytes * f.channels;
    a.bits_per_sample = codec->bytes * 8;
    a.avg_bytes_per_sec = std::uint32_t(std::uint64_t(a.block_align) * std::uint64_t(f.sample_rate));
    a.frame_samples = 0;
    return a;
  }
  // Frame-based codecs: each chunk is one coded frame. nBlockAlign and wBitsPerSample as FFmpeg
  // writes them for these codecs (MPEG audio: the samples per frame; AAC: 768 per channel;
  // AC-3: its largest frame).
  a.frame_samples = f.frame_samples;
  a.avg_bytes_per_sec = std::uint32_t(std::max<std::int64_t>(0, f.bit_rate) / 8);
  if (f.codec == "mp3") {
    a.block_align = f.frame_samples;
    a.bits_per_sample = 0;
    if (a.extra.empty()) {
      // MPEGLAYER3WAVEFORMAT: wID 1 (MPEG), fdwFlags 2 (no padding flag), nBlockSize,
      // nFramesPerBlock 1, nCodecDelay 1393.
      const std::uint16_t words[] = {1, 2, 0, std::uint16_t(f.frame_samples), 1, 1393};
      for (std::uint16_t w : words) {
        a.extra.push_back(std::uint8_t(w));
        a.extra.push_back(std::uint8_t(w >> 8));
      }
    }
  } else if (f.codec == "mp2") {
    a.block_align = f.frame_samples;
    a.bits_per_sample = 0;
  } else if (f.codec == "aac") {
    a.block_align = 768 * f.channels;
    a.bits_per_sample = 16;
  } else {  // ac3
    a.block_align = 3840;
    a.bits_per_sample = 16;
  }
  return a;
}

namespace {
// FFmpeg's names for the RIFF INFO chunks it reads and writes.
constexpr std::pair<const char*, const char*> kInfoTags[] = {
    {"title", "INAM"},    {"artist", "IART"},    {"comment", "ICMT"}, {"date", "ICRD"},
    {"genre", "IGNR"},    {"copyright", "ICOP"}, {"album", "IPRD"},   {"language", "ILNG"},
    {"track", "IPRT"},    {"encoded_by", "ITCH"},
};
}  // namespace

std::string riff_info_id(const std::string& key) {
  for (const auto& [name, id] : kInfoTags)
    if (key == name) return id;
  return "";
}

std::vector<std::string> riff_info_keys() {
  std::vector<std::string> keys;
  for (const auto& tag : kInfoTags) keys.emplace_back(tag.first);
  return keys;
}

AviWriter::AviWriter(const std::string& path, int width, int height, int fps_num, int fps_den,
                     std::uint64_t riff_limit)
    : AviWriter(path, width, height, fps_num, fps_den, AviExtras{}, riff_limit) {}

AviWriter::AviWriter(const std::string& path, int width, int height, int fps_num, int fps_den,
                     const AviExtras& extras, std::uint64_t riff_limit)
    : width_(width), height_(height), fps_num_(fps_num), fps_den_(fps_den), extras_(extras),
      riff_limit_(riff_limit) {
  if (width <= 0 || height <= 0 || width > 65535 || height > 65535)
    throw UsageError(path + ": invalid AVI frame size " + std::to_string(width) + "x" + std::to_string(height));
  if (fps_num <= 0 || fps_den <= 0)
    throw UsageError(path + ": invalid AVI frame rate " + std::to_string(fps_num) + "/" + std::to_string(fps_den));
  if (riff_limit < kMinRiffLimit || riff_limit > kDefaultRiffLimit)
    throw UsageError(path + ": AVI RIFF segment limit must lie between 64 KiB and 1 GiB");
  if (path == "-")  // header fields are patched at close(): standard output cannot be rewound
    throw UsageError("AVI output needs a seekable file, not standard output (use .mjpeg for a pipe)");
  if (extras.aspect_num <= 0 || extras.aspect_den <= 0) extras_.aspect_num = extras_.aspect_den = 1;
  if (const auto& a = extras.audio) {
    if (a->channels <= 0 || a->sample_rate <= 0 || a->extra.size() > 0xFFFF ||
        (a->frame_samples <= 0 && a->block_align <= 0))
      throw UsageError(path + ": invalid AVI audio stream description");
  }
  for (const auto& [id, text] : extras.info)
    if (id.size() != 4) throw UsageError(path + ": invalid RIFF INFO chunk id '" + id + "'");
  streams_.resize(extras_.audio ? 2 : 1);
  std::memcpy(streams_[0].tag, "00dc", 5);
  if (extras_.audio) std::memcpy(streams_[1].tag, "01wb", 5);
  for (Stream& st : streams_) st.entries.reserve(4096);
  file_ = std::make_unique<AtomicFile>(path, extras.replace_existing);
  write_header();
  begin_segment(true);
}

AviWriter::~AviWriter() {
  // Unclosed (error or abort): drop the temporary file. AtomicFile's destructor never throws.
}

std::uint64_t AviWriter::bytes_written() const { return file_ ? file_->position() : 0; }

void AviWriter::patch32(std::uint64_t offset, std::uint32_t value) {
  std::uint8_t b[4];
  for (int i = 0; i < 4; ++i) b[i] = std::uint8_t(value >> (8 * i));
  file_->patch(offset, b, 4);
}

/// RIFF 'AVI ' + LIST hdrl (avih, one LIST strl per stream (strh, strf, indx, video: vprp),
/// LIST odml (dmlh)), then LIST INFO; counts and the super indexes are zero here and patched
/// by close().
void AviWriter::write_header() {
  Bytes h;
  h.fourcc("RIFF"); h.u32(0); h.fourcc("AVI ");  // RIFF size patched by end_segment()
  const std::size_t hdrl = h.begin_chunk("LIST");
  h.fourcc("hdrl");

  h.fourcc("avih"); h.u32(kAvihSize);
  avih_pos_ = h.size();
  h.u32(std::uint32_t(std::llround(1e6 * fps_den_ / fps_num_)));  // dwMicroSecPerFrame
  h.u32(0);                                      // dwMaxBytesPerSec (patched)
  h.u32(0);                                      // dwPaddingGranularity
  h.u32(kAvifHasIndex | kAvifIsInterleaved | kAvifTrustCkType);  // dwFlags
  h.u32(0);                                      // dwTotalFrames: first RIFF only (patched)
  h.u32(0);                                      // dwInitialFrames
  h.u32(std::uint32_t(streams_.size()));         // dwStreams
  h.u32(0);                                      // dwSuggestedBufferSize (patched)
  h.u32(std::uint32_t(width_));                  // dwWidth
  h.u32(std::uint32_t(height_));                 // dwHeight
  h.zeros(16);                                   // dwReserved[4]

  // The super index of a stream: room for kMaxSegments entries.
  const auto super_index = [&](Stream& st) {
    h.fourcc("indx"); h.u32(std::uint32_t(kIndexHeaderSize + kSuperEntrySize * kMaxSegments));
    st.indx_pos = h.size();
    h.u16(4);                                    // wLongsPerEntry: 16-byte entries
    h.u8(0);                                     // bIndexSubType
    h.u8(kAviIndexOfIndexes);                    // bIndexType
    h.u32(0);                                    // nEntriesInUse (patched)
    h.fourcc(st.tag);                            // dwChunkId
    h.zeros(12);                                 // dwReserved[3]
    h.zeros(kSuperEntrySize * kMaxSegments);     // entries (patched)
  };

  const std::size_t strl = h.begin_chunk("LIST");
  h.fourcc("strl");
  h.fourcc("strh"); h.u32(kStrhSize);
  streams_[0].strh_pos = h.size();
  h.fourcc("vids");                              // fccType
  h.fourcc("MJPG");                              // fccHandler
  h.u32(0);                                      // dwFlags
  h.u16(0); h.u16(0);                            // wPriority, wLanguage
  h.u32(0);                                      // dwInitialFrames
  h.u32(std::uint32_t(fps_den_));                // dwScale
  h.u32(std::uint32_t(fps_num_));                // dwRate: fps = dwRate / dwScale
  h.u32(0);                                      // dwStart
  h.u32(0);                                      // dwLength: all frames (patched)
  h.u32(0);                                      // dwSuggestedBufferSize (patched)
  h.u32(0xFFFFFFFFu);                            // dwQuality: -1 = default
  h.u32(0);                                      // dwSampleSize: 0 = variable-size frames
  h.u16(0); h.u16(0);                            // rcFrame left, top
  h.u16(std::uint16_t(width_)); h.u16(std::uint16_t(height_));  // rcFrame right, bottom

  h.fourcc("strf"); h.u32(kStrfSize);            // BITMAPINFOHEADER
  h.u32(kStrfSize);                              // biSize
  h.u32(std::uint32_t(width_));                  // biWidth
  h.u32(std::uint32_t(height_));                 // biHeight
  h.u16(1);                                      // biPlanes
  h.u16(24);                                     // biBitCount
  h.fourcc("MJPG");                              // biCompression
  h.u32(clamp32(std::uint64_t(width_) * std::uint64_t(height_) * 3));  // biSizeImage
  h.u32(0); h.u32(0);                            // biX/YPelsPerMeter
  h.u32(0); h.u32(0);                            // biClrUsed, biClrImportant
  super_index(streams_[0]);

  // Video properties (OpenDML): the display aspect ratio, pixel aspect x width / height, in
  // 16-bit terms; one progressive field that is the whole frame.
  std::uint64_t dar_num = 0, dar_den = 0;
  core::nearest_ratio(std::uint64_t(extras_.aspect_num) * std::uint64_t(width_),
                      std::uint64_t(extras_.aspect_den) * std::uint64_t(height_), 0xFFFF, dar_num,
                      dar_den);
  h.fourcc("vprp"); h.u32(kVprpSize);
  h.u32(0);                                      // VideoFormatToken: unknown
  h.u32(0);                                      // VideoStandard: unknown
  h.u32(std::uint32_t(std::lround(double(fps_num_) / fps_den_)));  // dwVerticalRefreshRate
  h.u32(std::uint32_t(width_));                  // dwHTotalInT
  h.u32(std::uint32_t(height_));                 // dwVTotalInLines
  h.u16(std::uint16_t(dar_den));                 // dwFrameAspectRatio: den in the low word,
  h.u16(std::uint16_t(dar_num));                 //   num in the high word
  h.u32(std::uint32_t(width_));                  // dwFrameWidthInPixels
  h.u32(std::uint32_t(height_));                 // dwFrameHeightInLines
  h.u32(1);                                      // nbFieldPerFrame
  h.u32(std::uint32_t(height_));                 // CompressedBMHeight
  h.u32(std::uint32_t(width_));                  // CompressedBMWidth
  h.u32(std::uint32_t(height_));                 // ValidBMHeight
  h.u32(std::uint32_t(width_));                  // ValidBMWidth
  h.u32(0); h.u32(0);                            // ValidBMXOffset, ValidBMYOffset
  h.u32(0); h.u32(0);                            // VideoXOffsetInT, VideoYValidStartLine
  h.end_chunk(strl);

  if (extras_.audio) {
    const AviAudio& a = *extras_.audio;
    // Time units: PCM counts samples (dwSampleSize = one block); frame-based codecs count
    // chunks of frame_samples samples each.
    std::uint32_t scale = 1, rate = std::uint32_t(a.sample_rate), sample_size = 0;
    if (a.frame_samples > 0) {
      const std::uint32_t g = gcd32(std::uint32_t(a.frame_samples), rate);
      scale = std::uint32_t(a.frame_samples) / g;
      rate /= g;
    } else {
      sample_size = std::uint32_t(a.block_align);
    }
    const std::uint32_t start =
        a.start_seconds > 0 ? std::uint32_t(std::llround(a.start_seconds * rate / scale)) : 0;
    const std::size_t astrl = h.begin_chunk("LIST");
    h.fourcc("strl");
    h.fourcc("strh"); h.u32(kStrhSize);
    streams_[1].strh_pos = h.size();
    h.fourcc("auds");                            // fccType
    h.u32(0);                                    // fccHandler: none
    h.u32(0);                                    // dwFlags
    h.u16(0); h.u16(0);                          // wPriority, wLanguage
    h.u32(0);                                    // dwInitialFrames
    h.u32(scale);                                // dwScale
    h.u32(rate);                                 // dwRate
    h.u32(start);                                // dwStart
    h.u32(0);                                    // dwLength (patched)
    h.u32(0);                                    // dwSuggestedBufferSize (patched)
    h.u32(0xFFFFFFFFu);                          // dwQuality
    h.u32(sample_size);                          // dwSampleSize
    h.zeros(8);                                  // rcFrame
    h.fourcc("strf"); h.u32(std::uint32_t(kWaveFormatExSize + a.extra.size()));
    h.u16(a.format_tag);                         // wFormatTag
    h.u16(std::uint16_t(a.channels));            // nChannels
    h.u32(std::uint32_t(a.sample_rate));         // nSamplesPerSec
    h.u32(a.avg_bytes_per_sec);                  // nAvgBytesPerSec
    h.u16(std::uint16_t(a.block_align));         // nBlockAlign
    h.u16(std::uint16_t(a.bits_per_sample));     // wBitsPerSample
    h.u16(std::uint16_t(a.extra.size()));        // cbSize
    for (std::uint8_t b : a.extra) h.u8(b);
    if (a.extra.size() & 1) h.u8(0);             // word alignment
    super_index(streams_[1]);
    h.end_chunk(astrl);
  }

  const std::size_t odml = h.begin_chunk("LIST");
  h.fourcc("odml");
  h.fourcc("dmlh"); h.u32(kDmlhSize);
  dmlh_pos_ = h.size();
  h.zeros(kDmlhSize);                            // dwTotalFrames (patched) + reserved
  h.end_chunk(odml);
  h.end_chunk(hdrl);

  if (!extras_.info.empty()) {  // zero-terminated texts, each chunk padded to an even size
    const std::size_t info = h.begin_chunk("LIST");
    h.fourcc("INFO");
    for (const auto& [id, text] : extras_.info) {
      h.fourcc(id.c_str());
      h.u32(std::uint32_t(text.size() + 1));
      for (char c : text) h.u8(std::uint8_t(c));
      h.u8(0);
      if ((text.size() + 1) & 1) h.u8(0);
    }
    h.end_chunk(info);
  }

  file_->write(h.data(), h.size());
}

void AviWriter::begin_segment(bool first) {
  if (!first) {
    if (segments_ >= kMaxSegments)
      throw Error(file_->path() + ": AVI output exceeds " + std::to_string(kMaxSegments) +
                  " OpenDML segments (~" + std::to_string(kMaxSegments * (riff_limit_ >> 20) / 1024) +
                  " GiB); split the output");
    riff_pos_ = file_->position();
    Bytes b;
    b.fourcc("RIFF"); b.u32(0); b.fourcc("AVIX");  // OpenDML extension segment
    file_->write(b.data(), b.size());
  }
  first_segment_ = first;
  ++segments_;
  movi_list_pos_ = file_->position();
  Bytes b;
  b.fourcc("LIST"); b.u32(0); b.fourcc("movi");
  file_->write(b.data(), b.size());
  for (Stream& st : streams_) {
    st.entries.clear();
    st.segment_bytes = 0;
  }
  segment_chunks_ = 0;
}

/// Index bytes still to come in the current segment once stream `adding_to` has one more
/// chunk: an 'ix##' per stream always, plus 'idx1' (every chunk) in the first RIFF.
std::uint64_t AviWriter::trailing_index_bytes(int adding_to) const {
  std::uint64_t n = 0;
  for (std::size_t s = 0; s < streams_.size(); ++s)
    n += 8 + kIndexHeaderSize +
         kStdEntrySize * (streams_[s].entries.size() + (int(s) == adding_to ? 1 : 0));
  if (first_segment_) n += 8 + kIdx1EntrySize * (segment_chunks_ + 1);
  return n;
}

/// A stream's span in this segment, as its super index counts it: PCM samples, else chunks.
std::uint32_t AviWriter::segment_duration(const Stream& s) const {
  const bool pcm = &s != &streams_[0] && extras_.audio->frame_samples <= 0;
  if (pcm) return clamp32(s.segment_bytes / std::uint64_t(extras_.audio->block_align));
  return std::uint32_t(s.entries.size());
}

/// Writes each stream's 'ix##' (inside LIST movi, as FFmpeg does), closes LIST movi, writes
/// 'idx1' after it in the first RIFF, and patches the LIST and RIFF sizes.
void AviWriter::end_segment() {
  const std::uint64_t movi_fourcc = movi_list_pos_ + 8;
  for (std::size_t s = 0; s < streams_.size(); ++s) {
    Stream& st = streams_[s];
    const std::uint32_t n = std::uint32_t(st.entries.size());
    char ix_id[5] = {'i', 'x', '0', char('0' + s), 0};
    Bytes ix;
    ix.fourcc(ix_id); ix.u32(std::uint32_t(kIndexHeaderSize + kStdEntrySize * n));
    ix.u16(2);                                   // wLongsPerEntry: 8-byte entries
    ix.u8(0);                                    // bIndexSubType
    ix.u8(kAviIndexOfChunks);                    // bIndexType
    ix.u32(n);                                   // nEntriesInUse
    ix.fourcc(st.tag);                           // dwChunkId
    ix.u64(movi_fourcc);                         // qwBaseOffset
    ix.u32(0);                                   // dwReserved
    for (const IndexEntry& e : st.entries) {
      ix.u32(e.offset + 8);                      // dwOffset: base -> chunk DATA (past its header)
      ix.u32(e.size);                            // dwSize; bit 31 clear = keyframe
    }
    const std::uint64_t ix_pos = file_->position();
    file_->write(ix.data(), ix.size());
    st.super_index.push_back(SegmentIndex{ix_pos, std::uint32_t(ix.size()), segment_duration(st)});
  }

  patch32(movi_list_pos_ + 4, std::uint32_t(file_->position() - movi_list_pos_ - 8));

  if (first_segment_) {
    Bytes idx1;
    idx1.fourcc("idx1"); idx1.u32(std::uint32_t(kIdx1EntrySize * idx1_.size()));
    for (const Idx1Entry& e : idx1_) {
      idx1.fourcc(streams_[e.stream].tag);
      idx1.u32(kAviifKeyframe);                  // every JPEG frame and audio packet stands alone
      idx1.u32(e.offset);                        // from the 'movi' fourcc to the chunk header
      idx1.u32(e.size);
    }
    file_->write(idx1.data(), idx1.size());
    first_riff_frames_ = std::uint32_t(streams_[0].entries.size());
    idx1_.clear();
    idx1_.shrink_to_fit();
  }
  patch32(riff_pos_ + 4, std::uint32_t(file_->position() - riff_pos_ - 8));
}

void AviWriter::write_chunk(int stream, const std::uint8_t* data, std::size_t size) {
  // A chunk must fit a segment with its index: keeps every offset and size within 32 bits.
  if (size + 1 > riff_limit_ / 2)
    throw UsageError(file_->path() + ": " + (stream == 0 ? "frame" : "audio packet") + " of " +
                     std::to_string(size) + " bytes is too large for an AVI segment");
  const std::uint64_t padded = size + (size & 1);
  const std::uint64_t segment_end =
      file_->position() + 8 + padded + trailing_index_bytes(stream);
  if (segment_chunks_ > 0 && segment_end - riff_pos_ > riff_limit_) {
    end_segment();
    begin_segment(false);
  }
  Stream& st = streams_[std::size_t(stream)];
  const std::uint64_t chunk_pos = file_->position();
  std::uint8_t head[8];
  std::memcpy(head, st.tag, 4);
  for (int i = 0; i < 4; ++i) head[4 + i] = std::uint8_t(size >> (8 * i));
  file_->write(head, 8);
  file_->write(data, size);
  if (size & 1) file_->write_zeros(1);  // RIFF chunks are word aligned
  const std::uint32_t offset = std::uint32_t(chunk_pos - (movi_list_pos_ + 8));
  st.entries.push_back(IndexEntry{offset, std::uint32_t(size)});
  if (first_segment_) idx1_.push_back(Idx1Entry{std::uint8_t(stream), offset, std::uint32_t(size)});
  ++segment_chunks_;
  st.segment_bytes += size;
  ++st.chunks;
  st.bytes += size;
  if (size > st.max_chunk) st.max_chunk = std::uint32_t(size);
}

void AviWriter::write_frame(const std::uint8_t* jpeg, std::size_t size) {
  if (closed_ || !file_->is_open()) throw Error(file_->path() + ": write_frame after close");
  if (jpeg == nullptr || size == 0) throw UsageError(file_->path() + ": empty frame");
  write_chunk(0, jpeg, size);
}

void AviWriter::write_audio(const std::uint8_t* data, std::size_t size) {
  if (closed_ || !file_->is_open()) throw Error(file_->path() + ": write_audio after close");
  if (!extras_.audio) throw UsageError(file_->path() + ": this AVI has no audio stream");
  if (size == 0) return;  // nothing to carry (an AVI chunk of no bytes counts no time)
  if (data == nullptr) throw UsageError(file_->path() + ": null audio packet");
  write_chunk(1, data, size);
}

void AviWriter::close() {
  if (closed_) return;
  closed_ = true;  // a failed close is not retried; the destructor removes the temporary file
  end_segment();

  const Stream& video = streams_[0];
  const std::uint32_t total = clamp32(std::uint64_t(video.chunks));
  const std::uint32_t suggested = video.max_chunk + 8;
  std::uint64_t max_rate =
      std::uint64_t(video.max_chunk) * std::uint64_t(fps_num_) / std::uint64_t(fps_den_) + 1;
  if (extras_.audio) max_rate += extras_.audio->avg_bytes_per_sec;
  patch32(avih_pos_ + 4, clamp32(max_rate));    // dwMaxBytesPerSec
  patch32(avih_pos_ + 16, first_riff_frames_);  // dwTotalFrames (first RIFF, per OpenDML)
  patch32(avih_pos_ + 28, suggested);           // dwSuggestedBufferSize
  patch32(video.strh_pos + 32, total);          // dwLength
  patch32(video.strh_pos + 36, suggested);      // dwSuggestedBufferSize
  patch32(dmlh_pos_, total);                    // dwTotalFrames (all segments)
  if (extras_.audio) {
    const Stream& audio = streams_[1];
    const AviAudio& a = *extras_.audio;
    // dwLength in the stream's units: samples for PCM, chunks (coded frames) otherwise.
    patch32(audio.strh_pos + 32, a.frame_samples > 0
                                     ? clamp32(std::uint64_t(audio.chunks))
                                     : clamp32(audio.bytes / std::uint64_t(a.block_align)));
    patch32(audio.strh_pos + 36, audio.max_chunk);
  }

  for (const Stream& st : streams_) {
    Bytes sup;
    for (const SegmentIndex& s : st.super_index) {
      sup.u64(s.offset);                         // qwOffset of 'ix##'
      sup.u32(s.size);                           // dwSize of that chunk incl. header
      sup.u32(s.duration);                       // dwDuration in the stream's units
    }
    patch32(st.indx_pos + 4, std::uint32_t(st.super_index.size()));  // nEntriesInUse
    if (sup.size() > 0) file_->patch(st.indx_pos + kIndexHeaderSize, sup.data(), sup.size());
  }
  file_->commit();
}

}  // namespace mjpeg::io
