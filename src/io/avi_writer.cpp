// Streaming RIFF AVI (MJPG) writer with OpenDML segments (layout in avi_writer.hpp).
#include "io/avi_writer.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "io/atomic_file.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg::io {
namespace {

// avih.dwFlags
constexpr std::uint32_t kAvifHasIndex = 0x10;        // an idx1 chunk is present
constexpr std::uint32_t kAvifIsInterleaved = 0x100;
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

}  // namespace

AviWriter::AviWriter(const std::string& path, int width, int height, int fps_num, int fps_den,
                     std::uint64_t riff_limit)
    : width_(width), height_(height), fps_num_(fps_num), fps_den_(fps_den), riff_limit_(riff_limit) {
  if (width <= 0 || height <= 0 || width > 65535 || height > 65535)
    throw UsageError(path + ": invalid AVI frame size " + std::to_string(width) + "x" + std::to_string(height));
  if (fps_num <= 0 || fps_den <= 0)
    throw UsageError(path + ": invalid AVI frame rate " + std::to_string(fps_num) + "/" + std::to_string(fps_den));
  if (riff_limit < kMinRiffLimit || riff_limit > kDefaultRiffLimit)
    throw UsageError(path + ": AVI RIFF segment limit must lie between 64 KiB and 1 GiB");
  if (path == "-")  // header fields are patched at close(): standard output cannot be rewound
    throw UsageError("AVI output needs a seekable file, not standard output (use .mjpeg for a pipe)");
  file_ = std::make_unique<AtomicFile>(path);
  entries_.reserve(4096);
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

/// RIFF 'AVI ' + LIST hdrl (avih, LIST strl (strh, strf, indx), LIST odml (dmlh)); counts and
/// the super index are zero here and patched by close().
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
  h.u32(kAvifHasIndex | kAvifIsInterleaved);     // dwFlags
  h.u32(0);                                      // dwTotalFrames: first RIFF only (patched)
  h.u32(0);                                      // dwInitialFrames
  h.u32(1);                                      // dwStreams
  h.u32(0);                                      // dwSuggestedBufferSize (patched)
  h.u32(std::uint32_t(width_));                  // dwWidth
  h.u32(std::uint32_t(height_));                 // dwHeight
  h.zeros(16);                                   // dwReserved[4]

  const std::size_t strl = h.begin_chunk("LIST");
  h.fourcc("strl");
  h.fourcc("strh"); h.u32(kStrhSize);
  strh_pos_ = h.size();
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

  h.fourcc("indx"); h.u32(std::uint32_t(kIndexHeaderSize + kSuperEntrySize * kMaxSegments));
  indx_pos_ = h.size();
  h.u16(4);                                      // wLongsPerEntry: 16-byte entries
  h.u8(0);                                       // bIndexSubType
  h.u8(kAviIndexOfIndexes);                      // bIndexType
  h.u32(0);                                      // nEntriesInUse (patched)
  h.fourcc("00dc");                              // dwChunkId: stream 0, compressed video
  h.zeros(12);                                   // dwReserved[3]
  h.zeros(kSuperEntrySize * kMaxSegments);       // entries (patched)
  h.end_chunk(strl);

  const std::size_t odml = h.begin_chunk("LIST");
  h.fourcc("odml");
  h.fourcc("dmlh"); h.u32(kDmlhSize);
  dmlh_pos_ = h.size();
  h.zeros(kDmlhSize);                            // dwTotalFrames (patched) + reserved
  h.end_chunk(odml);
  h.end_chunk(hdrl);

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
  entries_.clear();
}

/// Index bytes still to come in the current segment once it holds `frames` frames:
/// 'ix00' always, plus 'idx1' in the first RIFF.
std::uint64_t AviWriter::trailing_index_bytes(std::size_t frames) const {
  std::uint64_t n = 8 + kIndexHeaderSize + kStdEntrySize * frames;
  if (first_segment_) n += 8 + kIdx1EntrySize * frames;
  // Any segment may turn out to be the last, which ends with the note.
  if (!note_.empty()) n += 8 + kNoteSignatureBytes + note_.size() + 1;
  return n;
}

/// Writes the segment's 'ix00' (inside LIST movi, as FFmpeg does), closes LIST movi, writes
/// 'idx1' after it in the first RIFF, and patches the LIST and RIFF sizes.
void AviWriter::end_segment() {
  const std::uint64_t movi_fourcc = movi_list_pos_ + 8;
  const std::uint32_t n = std::uint32_t(entries_.size());

  Bytes ix;
  ix.fourcc("ix00"); ix.u32(std::uint32_t(kIndexHeaderSize + kStdEntrySize * n));
  ix.u16(2);                                     // wLongsPerEntry: 8-byte entries
  ix.u8(0);                                      // bIndexSubType
  ix.u8(kAviIndexOfChunks);                      // bIndexType
  ix.u32(n);                                     // nEntriesInUse
  ix.fourcc("00dc");                             // dwChunkId
  ix.u64(movi_fourcc);                           // qwBaseOffset
  ix.u32(0);                                     // dwReserved
  for (const IndexEntry& e : entries_) {
    ix.u32(e.offset + 8);                        // dwOffset: base -> frame DATA (past the chunk header)
    ix.u32(e.size);                              // dwSize; bit 31 clear = keyframe
  }
  const std::uint64_t ix_pos = file_->position();
  file_->write(ix.data(), ix.size());
  super_index_.push_back(SegmentIndex{ix_pos, std::uint32_t(ix.size()), n});

  patch32(movi_list_pos_ + 4, std::uint32_t(file_->position() - movi_list_pos_ - 8));

  if (first_segment_) {
    Bytes idx1;
    idx1.fourcc("idx1"); idx1.u32(std::uint32_t(kIdx1EntrySize * n));
    for (const IndexEntry& e : entries_) {
      idx1.fourcc("00dc");
      idx1.u32(kAviifKeyframe);
      idx1.u32(e.offset);                        // from the 'movi' fourcc to the chunk header
      idx1.u32(e.size);
    }
    file_->write(idx1.data(), idx1.size());
    first_riff_frames_ = n;
  }
  patch32(riff_pos_ + 4, std::uint32_t(file_->position() - riff_pos_ - 8));
}

void AviWriter::write_frame(const std::uint8_t* jpeg, std::size_t size) {
  if (closed_ || !file_->is_open()) throw Error(file_->path() + ": write_frame after close");
  if (jpeg == nullptr || size == 0) throw UsageError(file_->path() + ": empty frame");
  // A frame must fit a segment with its index: keeps every offset and size within 32 bits.
  if (size + 1 > riff_limit_ / 2)
    throw UsageError(file_->path() + ": frame of " + std::to_string(size) +
                     " bytes is too large for an AVI segment");
  const std::uint64_t padded = size + (size & 1);
  const std::uint64_t segment_end =
      file_->position() + 8 + padded + trailing_index_bytes(entries_.size() + 1);
  if (!entries_.empty() && segment_end - riff_pos_ > riff_limit_) {
    end_segment();
    begin_segment(false);
  }
  const std::uint64_t chunk_pos = file_->position();
  std::uint8_t head[8] = {'0', '0', 'd', 'c'};
  for (int i = 0; i < 4; ++i) head[4 + i] = std::uint8_t(size >> (8 * i));
  file_->write(head, 8);
  file_->write(jpeg, size);
  if (size & 1) file_->write_zeros(1);  // RIFF chunks are word aligned
  entries_.push_back(IndexEntry{std::uint32_t(chunk_pos - (movi_list_pos_ + 8)), std::uint32_t(size)});
  ++total_frames_;
  if (size > max_frame_size_) max_frame_size_ = std::uint32_t(size);
}

void AviWriter::close() {
  if (closed_) return;
  closed_ = true;  // a failed close is not retried; the destructor removes the temporary file
  end_segment();
  if (!note_.empty()) {  // a JUNK chunk at the end of the last RIFF: every reader skips it
    const std::size_t size = kNoteSignatureBytes + note_.size();
    Bytes junk;
    junk.fourcc("JUNK"); junk.u32(std::uint32_t(size));
    file_->write(junk.data(), junk.size());
    file_->write(kNoteSignature, kNoteSignatureBytes);
    file_->write(note_.data(), note_.size());
    if (size & 1) file_->write_zeros(1);
    patch32(riff_pos_ + 4, std::uint32_t(file_->position() - riff_pos_ - 8));
  }

  const std::uint32_t total = clamp32(std::uint64_t(total_frames_));
  const std::uint32_t suggested = max_frame_size_ + 8;
  const std::uint32_t max_rate =
      clamp32(std::uint64_t(max_frame_size_) * std::uint64_t(fps_num_) / std::uint64_t(fps_den_) + 1);
  patch32(avih_pos_ + 4, max_rate);             // dwMaxBytesPerSec
  patch32(avih_pos_ + 16, first_riff_frames_);  // dwTotalFrames (first RIFF, per OpenDML)
  patch32(avih_pos_ + 28, suggested);           // dwSuggestedBufferSize
  patch32(strh_pos_ + 32, total);               // dwLength
  patch32(strh_pos_ + 36, suggested);           // dwSuggestedBufferSize
  patch32(dmlh_pos_, total);                    // dwTotalFrames (all segments)

  Bytes sup;
  for (const SegmentIndex& s : super_index_) {
    sup.u64(s.offset);                           // qwOffset of 'ix00'
    sup.u32(s.size);                             // dwSize of that chunk incl. header
    sup.u32(s.frames);                           // dwDuration in frames
  }
  patch32(indx_pos_ + 4, std::uint32_t(super_index_.size()));  // nEntriesInUse
  if (sup.size() > 0) file_->patch(indx_pos_ + kIndexHeaderSize, sup.data(), sup.size());
  file_->commit();
}

}  // namespace mjpeg::io
