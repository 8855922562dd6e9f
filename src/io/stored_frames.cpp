// StoredFrames (mjpeg/stored_frames.hpp): an AVI's frames through its RIFF lists, a raw
// stream's by walking each JPEG's markers; the note FileSink stored with either.
#include "io/stored_frames.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "io/frame_sink.hpp"
#include "mjpeg/error.hpp"
#include "mjpeg/stored_frames.hpp"

namespace mjpeg::io {
namespace stored_detail {

std::uint32_t le32(const std::uint8_t* p) {
  return std::uint32_t(p[0]) | (std::uint32_t(p[1]) << 8) | (std::uint32_t(p[2]) << 16) |
         (std::uint32_t(p[3]) << 24);
}

bool is_id(const std::uint8_t* p, const char* id) { return std::memcmp(p, id, 4) == 0; }

std::string id_text(const std::uint8_t* p) {
  std::string s(reinterpret_cast<const char*>(p), 4);
  for (char& c : s)
    if (c < 32 || c > 126) c = '?';
  return s;
}

[[noreturn]] void fail(const std::string& name, const std::string& what) {
  throw Error(name + ": " + what);
}

bool is_digit(std::uint8_t c) { return c >= '0' && c <= '9'; }
/// '##wb': an audio stream's chunk.
bool is_audio_chunk(const std::uint8_t* p) {
  return is_digit(p[0]) && is_digit(p[1]) && p[2] == 'w' && p[3] == 'b';
}
/// 'ix##': an OpenDML standard index of one stream.
bool is_index_chunk(const std::uint8_t* p) {
  return p[0] == 'i' && p[1] == 'x' && is_digit(p[2]) && is_digit(p[3]);
}

bool starts_with_note(const std::uint8_t* p, std::size_t n) {
  return n >= kNoteSignatureBytes && std::memcmp(p, kNoteSignature, kNoteSignatureBytes) == 0;
}

/// Checks that frame `i` at `p` is one whole JPEG: SOI first, EOI last.
void check_whole_jpeg(const std::uint8_t* p, std::size_t n, std::size_t i,
                      const std::string& name) {
  if (n < 4 || p[0] != 0xFF || p[1] != 0xD8 || p[n - 2] != 0xFF || p[n - 1] != 0xD9)
    fail(name, "frame " + std::to_string(i + 1) + " is not a whole JPEG (SOI ... EOI)");
}

/// The header fields of LIST hdrl (and the lists inside it) that a reader needs.
struct HeaderFields {
  std::uint32_t width = 0, height = 0, rate = 0, scale = 0;
  std::uint32_t length = 0;  ///< strh dwLength: every frame of the stream
  bool have_strh = false;
  std::uint32_t dmlh_frames = 0;
  bool have_dmlh = false;
};

void read_hdrl(const std::uint8_t* base, std::size_t from, std::size_t to, HeaderFields& h,
               const std::string& name) {
  for (std::size_t c = from; c + 8 <= to;) {
    const std::uint8_t* p = base + c;
    const std::size_t size = le32(p + 4);
    if (size > to - c - 8) fail(name, "its AVI header is damaged (a chunk runs past its list)");
    const std::uint8_t* d = p + 8;
    if (is_id(p, "avih") && size >= 56) {
      h.width = le32(d + 32);
      h.height = le32(d + 36);
    } else if (is_id(p, "LIST") && size >= 4 && (is_id(d, "strl") || is_id(d, "odml"))) {
      read_hdrl(base, c + 12, c + 8 + size, h, name);
    } else if (is_id(p, "strh") && size >= 36 && !h.have_strh) {
      if (!is_id(d, "vids") || (!is_id(d + 4, "MJPG") && !is_id(d + 4, "mjpg")))
        fail(name, "its first stream is not M-JPEG video ('" + id_text(d) + "' '" +
                       id_text(d + 4) + "')");
      h.scale = le32(d + 20);
      h.rate = le32(d + 24);
      h.length = le32(d + 32);
      h.have_strh = true;
    } else if (is_id(p, "dmlh") && size >= 4) {
      h.dmlh_frames = le32(d);
      h.have_dmlh = true;
    }
    c += 8 + size + (size & 1);
  }
}

StoredLayout parse_avi(const std::uint8_t* b, std::size_t n, const std::string& name) {
  StoredLayout out;
  out.avi = true;
  HeaderFields h;
  int segment = 0;
  for (std::size_t pos = 0; pos < n;) {
    if (n - pos < 12)
      fail(name, "cut short: " + std::to_string(n - pos) + " stray bytes after RIFF segment " +
                     std::to_string(segment));
    if (!is_id(b + pos, "RIFF") || !is_id(b + pos + 8, segment == 0 ? "AVI " : "AVIX"))
      fail(name, "not an AVI file (RIFF segment " + std::to_string(segment + 1) + " is '" +
                     id_text(b + pos) + "' '" + id_text(b + pos + 8) + "')");
    const std::uint64_t end = pos + 8 + std::uint64_t(le32(b + pos + 4));
    if (end > n)
      fail(name, "cut short: its RIFF segment " + std::to_string(segment + 1) + " needs " +
                     std::to_string(end) + " bytes, the file has " + std::to_string(n));
    for (std::size_t c = pos + 12; c < end;) {
      if (end - c < 8) fail(name, "its RIFF segment " + std::to_string(segment + 1) +
                                      " ends inside a chunk header");
      const std::uint8_t* p = b + c;
      const std::size_t size = le32(p + 4);
      if (size > end - c - 8)
        fail(name, "cut short or damaged: chunk '" + id_text(p) + "' at byte " +
                       std::to_string(c) + " runs past its RIFF segment");
      const std::size_t data = c + 8;
      if (is_id(p, "LIST") && size >= 4 && is_id(p + 8, "hdrl")) {
        if (segment != 0) fail(name, "an AVI header outside the first RIFF segment");
        read_hdrl(b, data + 4, data + size, h, name);
      } else if (is_id(p, "LIST") && size >= 4 && is_id(p + 8, "movi")) {
        for (std::size_t m = data + 4; m < data + size;) {
          if (data + size - m < 8) fail(name, "a movi list ends inside a chunk header");
          const std::uint8_t* q = b + m;
          const std::size_t msize = le32(q + 4);
          if (msize > data + size - m - 8)
            fail(name, "cut short or damaged: chunk '" + id_text(q) + "' at byte " +
                           std::to_string(m) + " runs past its movi list");
          if (is_id(q, "00dc")) {
            check_whole_jpeg(q + 8, msize, out.frames.size(), name);
            out.frames.push_back(FrameSpan{m + 8, msize});
          } else if (is_audio_chunk(q)) {
            ++out.audio_chunks;  // skipped: the frames alone are read
          } else if (!is_index_chunk(q) && !is_id(q, "JUNK")) {
            fail(name, "holds chunks of another kind ('" + id_text(q) +
                           "'), which are not read: only the video frames (and audio) of an "
                           "AVI are");
          }
          m += 8 + msize + (msize & 1);
        }
      } else if (is_id(p, "JUNK") && starts_with_note(p + 8, size) && out.note.empty()) {
        out.note.assign(reinterpret_cast<const char*>(p + 8 + kNoteSignatureBytes),
                        size - kNoteSignatureBytes);
      }
      c = data + size + (size & 1);
      if (c > end) c = end;  // a last odd chunk's pad byte may be missing
    }
    ++segment;
    pos = static_cast<std::size_t>(end);
  }
  if (!h.have_strh) fail(name, "its AVI header has no video stream");
  const std::uint64_t stored = out.frames.size();
  const std::uint64_t said = h.have_dmlh ? h.dmlh_frames : h.length;
  if (said != stored)
    fail(name, "damaged: its header says " + std::to_string(said) + " frames, " +
                   std::to_string(stored) + " are stored");
  if (h.width == 0 || h.height == 0 || h.width > 65535 || h.height > 65535 || h.rate == 0 ||
      h.scale == 0 || h.rate > 0x7FFFFFFF || h.scale > 0x7FFFFFFF)
    fail(name, "its AVI header gives no valid frame size and rate");
  out.width = static_cast<int>(h.width);
  out.height = static_cast<int>(h.height);
  out.fps_num = static_cast<int>(h.rate);
  out.fps_den = static_cast<int>(h.scale);
  return out;
}

StoredLayout parse_stream(const std::uint8_t* b, std::size_t n, const std::string& name) {
  StoredLayout out;
  for (std::size_t pos = 0; pos < n;) {
    if (starts_with_note(b + pos, n - pos)) {
      out.note.assign(reinterpret_cast<const char*>(b + pos + kNoteSignatureBytes),
                      n - pos - kNoteSignatureBytes);
      break;
    }
    if (n - pos < 2 || b[pos] != 0xFF || b[pos + 1] != 0xD8)
      fail(name, "not an M-JPEG stream: no JPEG begins at byte " + std::to_string(pos) +
                     (out.frames.empty() ? "" : " (after frame " +
                                                    std::to_string(out.frames.size()) + ")"));
    const std::size_t length = jpeg_length(b + pos, n - pos, name, pos);
    if (length == 0)
      fail(name, "cut short: frame " + std::to_string(out.frames.size() + 1) + " (from byte " +
                     std::to_string(pos) + ") has no end");
    out.frames.push_back(FrameSpan{pos, length});
    pos += length;
  }
  return out;
}

}  // namespace stored_detail

std::size_t jpeg_length(const std::uint8_t* data, std::size_t size, const std::string& name,
                        std::size_t offset) {
  using stored_detail::fail;
  const auto bad = [&](const std::string& what) {
    fail(name, "the JPEG at byte " + std::to_string(offset) + " is damaged: " + what);
  };
  if (size < 2 || data[0] != 0xFF || data[1] != 0xD8) bad("it does not begin with SOI");
  std::size_t at = 2;
  for (;;) {
    if (at >= size) return 0;
    if (data[at] != 0xFF) bad("no marker at its byte " + std::to_string(at));
    while (at < size && data[at] == 0xFF) ++at;  // fill bytes
    if (at >= size) return 0;
    const std::uint8_t marker = data[at++];
    if (marker == 0xD9) return at;                                  // EOI
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;  // no length
    if (marker == 0x00 || marker == 0xD8) bad("a stray marker at its byte " + std::to_string(at - 2));
    if (size - at < 2) return 0;
    const std::size_t length = (std::size_t(data[at]) << 8) | data[at + 1];
    if (length < 2) bad("a marker segment of length " + std::to_string(length));
    if (size - at < length) return 0;
    at += length;
    if (marker != 0xDA) continue;
    // Entropy-coded data up to the next marker: 0xFF followed by neither 0x00 (a stuffed
    // byte) nor a restart marker.
    for (;;) {
      const void* ff = std::memchr(data + at, 0xFF, size - at);
      if (ff == nullptr) return 0;
      at = static_cast<std::size_t>(static_cast<const std::uint8_t*>(ff) - data);
      if (at + 1 >= size) return 0;
      const std::uint8_t next = data[at + 1];
      if (next == 0x00 || (next >= 0xD0 && next <= 0xD7)) {
        at += 2;
        continue;
      }
      if (next == 0xFF) {  // fill bytes before a marker
        ++at;
        continue;
      }
      break;
    }
  }
}

StoredLayout parse_stored_frames(const std::uint8_t* data, std::size_t size,
                                 const std::string& name) {
  if (size == 0) stored_detail::fail(name, "empty file");
  if (size >= 12 && stored_detail::is_id(data, "RIFF"))
    return stored_detail::parse_avi(data, size, name);
  if ((size >= 2 && data[0] == 0xFF && data[1] == 0xD8) ||
      stored_detail::starts_with_note(data, size))  // a stream of no frame has its note only
    return stored_detail::parse_stream(data, size, name);
  stored_detail::fail(name, "neither an AVI file nor an M-JPEG stream");
}

}  // namespace mjpeg::io

namespace mjpeg {

struct StoredFrames::Impl {
  std::string path;
  const std::uint8_t* map = nullptr;
  std::size_t bytes = 0;
  io::StoredLayout layout;
  ~Impl() {
    if (map != nullptr) ::munmap(const_cast<std::uint8_t*>(map), bytes);
  }
};

StoredFrames::StoredFrames(const std::string& path) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw Error(path + ": cannot read: " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(path + (S_ISDIR(st.st_mode) ? ": is a folder" : ": is not a regular file"));
  }
  impl_->bytes = static_cast<std::size_t>(st.st_size);
  if (impl_->bytes > 0) {
    void* m = ::mmap(nullptr, impl_->bytes, PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw Error(path + ": cannot map: " + std::strerror(err));
    }
    impl_->map = static_cast<const std::uint8_t*>(m);
    ::madvise(m, impl_->bytes, MADV_SEQUENTIAL);
  }
  ::close(fd);  // the mapping stays valid
  impl_->layout = io::parse_stored_frames(impl_->map, impl_->bytes, path);
}

StoredFrames::~StoredFrames() = default;

StoredFrames::Container StoredFrames::container() const {
  return impl_->layout.avi ? Container::avi : Container::mjpeg_stream;
}
int StoredFrames::width() const { return impl_->layout.width; }
int StoredFrames::height() const { return impl_->layout.height; }
int StoredFrames::fps_num() const { return impl_->layout.fps_num; }
int StoredFrames::fps_den() const { return impl_->layout.fps_den; }
std::int64_t StoredFrames::frame_count() const {
  return static_cast<std::int64_t>(impl_->layout.frames.size());
}
const std::string& StoredFrames::note() const { return impl_->layout.note; }
std::uint64_t StoredFrames::file_bytes() const { return impl_->bytes; }
std::int64_t StoredFrames::audio_chunks() const { return impl_->layout.audio_chunks; }

EncodedFrame StoredFrames::frame(std::int64_t index) const {
  if (index < 0 || index >= frame_count())
    throw UsageError(impl_->path + ": frame " + std::to_string(index) + " asked for, it has " +
                     std::to_string(frame_count()));
  const io::FrameSpan& f = impl_->layout.frames[static_cast<std::size_t>(index)];
  return EncodedFrame{index, impl_->map + f.offset, f.size};
}

}  // namespace mjpeg
