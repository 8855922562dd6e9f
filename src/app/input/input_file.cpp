#include "input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

#include <fmt/format.h>

#include "input_relay.hpp"
#include "mjpeg/error.hpp"
#include "mjpeg/files.hpp"

namespace mjpeg::app {
namespace {

/// Enough to tell every signature below apart.
constexpr std::size_t kSignatureBytes = 64;

/// `text` (no NUL bytes in it) at offset `at` of `head`.
bool starts_with(const std::vector<std::uint8_t>& head, const char* text, std::size_t at = 0) {
  const std::size_t n = std::strlen(text);
  return head.size() >= at + n && std::memcmp(head.data() + at, text, n) == 0;
}

std::uint32_t le32(const std::vector<std::uint8_t>& b, std::size_t at) {
  return std::uint32_t(b[at]) | std::uint32_t(b[at + 1]) << 8 | std::uint32_t(b[at + 2]) << 16 |
         std::uint32_t(b[at + 3]) << 24;
}

/// The signatures of the still-image formats that OpenCV reads (besides Netpbm and JPEG, which
/// are told apart first).
bool still_image_signature(const std::vector<std::uint8_t>& h) {
  if (starts_with(h, "\x89PNG\r\n\x1a\n")) return true;
  if (starts_with(h, "II*") && h.size() >= 4 && h[3] == 0) return true;  // TIFF, little-endian
  if (h.size() >= 4 && h[0] == 'M' && h[1] == 'M' && h[2] == 0 && h[3] == 42) return true;
  if (starts_with(h, "RIFF") && starts_with(h, "WEBP", 8)) return true;
  if (starts_with(h, "BM") && h.size() >= 18) {  // BMP: a known size of its info header
    const std::uint32_t info = le32(h, 14);
    if (info == 12 || info == 40 || info == 52 || info == 56 || info == 64 || info == 108 ||
        info == 124)
      return true;
  }
  static const std::uint8_t jp2[] = {0, 0, 0, 0x0C, 'j', 'P', ' ', ' '};
  if ((h.size() >= sizeof jp2 && std::memcmp(h.data(), jp2, sizeof jp2) == 0) ||
      (h.size() >= 4 && h[0] == 0xFF && h[1] == 0x4F && h[2] == 0xFF && h[3] == 0x51))
    return true;  // JPEG 2000 (JP2 box, or a bare codestream)
  if (h.size() >= 4 && h[0] == 0x76 && h[1] == 0x2F && h[2] == 0x31 && h[3] == 0x01)
    return true;  // OpenEXR
  if (starts_with(h, "#?RADIANCE") || starts_with(h, "#?RGBE")) return true;
  if (h.size() >= 4 && h[0] == 0x59 && h[1] == 0xA6 && h[2] == 0x6A && h[3] == 0x95)
    return true;  // Sun raster
  if ((starts_with(h, "PF") || starts_with(h, "Pf")) && h.size() >= 3 &&
      (h[2] == '\n' || h[2] == '\r' || h[2] == ' '))
    return true;  // PFM
  return false;
}

}  // namespace

InputFile::InputFile(const std::string& path)
    : path_(path), name_(path == "-" ? "standard input" : path) {
  if (path == "-") {
    fd_ = STDIN_FILENO;
  } else {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
      throw Error(fmt::format("cannot open input '{}': {}", path, std::strerror(errno)));
    if (S_ISDIR(st.st_mode)) throw Error(fmt::format("input '{}' is a directory", path));
    // Not waiting for a FIFO's writer here (a plain open would wait, deaf to Ctrl-C): the relay
    // waits for its data where a signal is heard.
    const int flags = O_RDONLY | O_CLOEXEC | (S_ISFIFO(st.st_mode) ? O_NONBLOCK : 0);
    fd_ = ::open(path.c_str(), flags);
    if (fd_ < 0)
      throw Error(fmt::format("cannot open input '{}': {}", path, std::strerror(errno)));
    owns_fd_ = true;
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    if (owns_fd_) ::close(fd_);
    throw Error(fmt::format("cannot read input '{}': {}", name_, std::strerror(err)));
  }
  regular_ = S_ISREG(st.st_mode) || S_ISBLK(st.st_mode);
  if (regular_) {
    const off_t at = ::lseek(fd_, 0, SEEK_CUR);
    start_ = at > 0 ? at : 0;
    const off_t end = S_ISBLK(st.st_mode) ? ::lseek(fd_, 0, SEEK_END) : st.st_size;
    if (S_ISBLK(st.st_mode)) ::lseek(fd_, start_, SEEK_SET);
    size_ = std::max<std::int64_t>(0, static_cast<std::int64_t>(end) - start_);
  } else {
    try {
      relay_ = std::make_unique<InputRelay>(fd_, name_);
    } catch (...) {
      if (owns_fd_) ::close(fd_);
      throw;
    }
  }
}

InputFile::~InputFile() {
  if (stdio_ != nullptr) std::fclose(stdio_);
  relay_.reset();  // its thread stops before the descriptor it reads is closed
  if (owns_fd_) ::close(fd_);
}

std::string InputFile::stream_problem() const {
  if (!relay_) return "";
  if (relay_->cut()) return fmt::format("{}: interrupted while waiting for input", name_);
  if (relay_->error() != 0)
    return fmt::format("{}: read error: {}", name_, std::strerror(relay_->error()));
  return "";
}

std::vector<std::uint8_t> InputFile::peek(std::size_t n) {
  std::vector<std::uint8_t> out;
  if (regular_) {
    if (size_ >= 0) n = std::min(n, static_cast<std::size_t>(size_));
    out.resize(n);
    std::size_t got = 0;
    while (got < n) {
      const ssize_t r = ::pread(fd_, out.data() + got, n - got, start_ + std::int64_t(got));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0)
        throw Error(fmt::format("cannot read input '{}': {}", name_, std::strerror(errno)));
      if (r == 0) break;
      got += static_cast<std::size_t>(r);
    }
    out.resize(got);
    return out;
  }
  if (stream_read_ || handed_ > 0)
    throw Error("internal error: an input stream was looked at after reading began");
  const int fd = ::fileno(relay_->stream());
  while (peeked_.size() < n) {
    const std::size_t have = peeked_.size();
    peeked_.resize(n);
    const ssize_t r = ::read(fd, peeked_.data() + have, n - have);
    peeked_.resize(have + static_cast<std::size_t>(std::max<ssize_t>(r, 0)));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw Error(fmt::format("cannot read input '{}': {}", name_, std::strerror(errno)));
    if (r == 0) break;
  }
  out.assign(peeked_.begin(), peeked_.begin() + std::min(n, peeked_.size()));
  return out;
}

std::size_t InputFile::read_stream(void* dst, std::size_t n) {
  if (handed_ < peeked_.size()) {
    const std::size_t k = std::min(n, peeked_.size() - handed_);
    std::memcpy(dst, peeked_.data() + handed_, k);
    handed_ += k;
    if (handed_ == peeked_.size()) {
      peeked_.clear();
      peeked_.shrink_to_fit();
      handed_ = 0;
      stream_read_ = true;
    }
    return k;
  }
  stream_read_ = true;
  const int fd = ::fileno(relay_->stream());
  for (;;) {
    const ssize_t r = ::read(fd, dst, n);
    if (r >= 0) return static_cast<std::size_t>(r);
    if (errno != EINTR)
      throw Error(fmt::format("cannot read input '{}': {}", name_, std::strerror(errno)));
  }
}

std::size_t InputFile::read(void* dst, std::size_t n) {
  if (!regular_) return read_stream(dst, n);
  for (;;) {
    const ssize_t r = ::read(fd_, dst, n);
    if (r >= 0) return static_cast<std::size_t>(r);
    if (errno != EINTR)
      throw Error(fmt::format("cannot read input '{}': {}", name_, std::strerror(errno)));
  }
}

std::int64_t InputFile::seek(std::int64_t offset, int whence) {
  if (!regular_) return -1;
  const off_t at = ::lseek(fd_, whence == SEEK_SET ? start_ + offset : offset, whence);
  return at < 0 ? -1 : static_cast<std::int64_t>(at) - start_;
}

std::vector<std::uint8_t> InputFile::read_all() {
  std::vector<std::uint8_t> bytes;
  if (regular_) {
    bytes = peek(static_cast<std::size_t>(size_));
    // A file that grew since it was opened: the rest too.
    std::uint8_t more[1 << 16];
    for (;;) {
      const ssize_t r = ::pread(fd_, more, sizeof more, start_ + std::int64_t(bytes.size()));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0)
        throw Error(fmt::format("cannot read input '{}': {}", name_, std::strerror(errno)));
      if (r == 0) break;
      bytes.insert(bytes.end(), more, more + r);
    }
    return bytes;
  }
  std::size_t got = 0;
  for (;;) {
    if (bytes.size() - got < (1 << 16)) bytes.resize(std::max<std::size_t>(1 << 20, 2 * bytes.size()));
    const std::size_t r = read_stream(bytes.data() + got, bytes.size() - got);
    if (r == 0) break;
    got += r;
  }
  bytes.resize(got);
  const std::string problem = stream_problem();
  if (!problem.empty()) throw Error(problem);
  return bytes;
}

namespace {

ssize_t cookie_read(void* cookie, char* buf, std::size_t size) {
  try {
    return static_cast<ssize_t>(static_cast<InputFile*>(cookie)->read(buf, size));
  } catch (const std::exception&) {
    errno = EIO;
    return -1;
  }
}

}  // namespace

std::FILE* InputFile::stdio() {
  if (stdio_ != nullptr) return stdio_;
  if (regular_) {
    if (::lseek(fd_, start_, SEEK_SET) < 0)
      throw Error(fmt::format("cannot read input '{}': {}", name_, std::strerror(errno)));
    const int copy = ::fcntl(fd_, F_DUPFD_CLOEXEC, 0);
    if (copy < 0) throw Error(fmt::format("cannot read input '{}': {}", name_, std::strerror(errno)));
    stdio_ = ::fdopen(copy, "rb");
    if (stdio_ == nullptr) {
      ::close(copy);
      throw std::bad_alloc();
    }
  } else {
    cookie_io_functions_t io{};
    io.read = cookie_read;
    stdio_ = ::fopencookie(this, "rb", io);
    if (stdio_ == nullptr) throw std::bad_alloc();
    // A buffer, and a large one (the Y4M reader keeps it): glibc hands a cookie stream's fread
    // to its underflow one buffer at a time, so that an unbuffered one reads a 1080p frame one
    // byte per read() (3 million system calls a frame). A read returns what the pipe holds
    // (read_stream), so the buffer never waits to be filled.
    stdio_buffer_.resize(std::size_t(1) << 20);
    std::setvbuf(stdio_, stdio_buffer_.data(), _IOFBF, stdio_buffer_.size());
    return stdio_;
  }
  std::setvbuf(stdio_, nullptr, _IONBF, 0);
  return stdio_;
}

std::size_t jpeg_picture_end(const std::uint8_t* d, std::size_t n, bool* multi_picture) {
  if (multi_picture != nullptr) *multi_picture = false;
  if (n < 4 || d[0] != 0xFF || d[1] != 0xD8) return 0;
  std::size_t at = 2;
  bool in_scan = false;  // after an SOS: entropy-coded data until the next marker
  while (at + 1 < n) {
    if (in_scan) {
      // 0xFF 0x00 is a stuffed byte, 0xFF 0xD0..0xD7 a restart marker: both inside the scan.
      if (d[at] != 0xFF || d[at + 1] == 0x00 || (d[at + 1] >= 0xD0 && d[at + 1] <= 0xD7) ||
          d[at + 1] == 0xFF) {
        ++at;
        continue;
      }
      in_scan = false;
    }
    if (d[at] != 0xFF) return 0;  // not where a marker must be: not a JPEG we can follow
    const std::uint8_t marker = d[at + 1];
    if (marker == 0xFF) {  // fill bytes before a marker
      ++at;
      continue;
    }
    if (marker == 0xD9) return at + 2;  // EOI
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD8)) {  // no length
      at += 2;
      continue;
    }
    if (at + 4 > n) return 0;
    const std::size_t length = (std::size_t(d[at + 2]) << 8) | d[at + 3];
    if (length < 2) return 0;
    if (marker == 0xE2 && multi_picture != nullptr && length >= 6 && at + 8 <= n &&
        std::memcmp(d + at + 4, "MPF", 4) == 0)
      *multi_picture = true;
    at += 2 + length;
    if (marker == 0xDA) in_scan = true;
  }
  return 0;
}

Input open_input(const std::string& path, bool raw) {
  Input in;
  in.path = path;
  struct stat st {};
  SequencePattern pattern;
  if (path != "-" && path.find('%') != std::string::npos && ::stat(path.c_str(), &st) != 0 &&
      SequencePattern::parse(path, pattern)) {
    in.kind = InputKind::image_sequence;
    return in;
  }
  in.file = std::make_unique<InputFile>(path);
  InputFile& f = *in.file;
  // A Y4M stream's signature is awaited alone: a pipe or FIFO may hold no more than its header
  // line (shorter than kSignatureBytes) until its writer has the first frame, and the encode
  // makes its output meanwhile.
  std::vector<std::uint8_t> head = f.peek(9);
  if (!starts_with(head, "YUV4MPEG2")) head = f.peek(kSignatureBytes);
  if (head.empty()) {
    const std::string problem = f.stream_problem();
    if (!problem.empty()) throw Error(problem);
    throw Error(fmt::format("input '{}' is empty", f.name()));
  }
  const bool y4m = starts_with(head, "YUV4MPEG2");
  if (raw) {
    if (y4m)
      throw UsageError(fmt::format("'{}' is a Y4M stream, whose header gives the frames' size, "
                                   "format and rate: leave out --pix-fmt, --size and --fps",
                                   f.name()));
    in.kind = InputKind::raw;
    return in;
  }
  if (y4m) {
    in.kind = InputKind::y4m;
  } else if (head.size() >= 2 && head[0] == 'P' && head[1] >= '1' && head[1] <= '7') {
    in.kind = InputKind::image;  // Netpbm: its reader says what it does not read (PBM, PAM)
  } else if (starts_with(head, "GIF8")) {
    in.kind = InputKind::video;
    in.gif = true;
  } else if (head.size() >= 3 && head[0] == 0xFF && head[1] == 0xD8 && head[2] == 0xFF) {
    // One JPEG picture, or the first of an M-JPEG stream (JPEGs back to back): what follows
    // its end says which. Read up to there (a stream's bytes are kept for the reader).
    in.kind = InputKind::image;
    for (std::size_t want = std::size_t(1) << 16;; want *= 4) {
      const std::vector<std::uint8_t> bytes = f.peek(want);
      bool multi_picture = false;
      const std::size_t end = jpeg_picture_end(bytes.data(), bytes.size(), &multi_picture);
      if (end > 0 && bytes.size() < end + 2 && bytes.size() == want) continue;
      if (end > 0) {
        if (!multi_picture && bytes.size() >= end + 2 && bytes[end] == 0xFF &&
            bytes[end + 1] == 0xD8)
          in.kind = InputKind::video;
        break;
      }
      if (bytes.size() < want) break;  // cut short, or not a JPEG we can follow: its reader says
    }
  } else if (still_image_signature(head)) {
    in.kind = InputKind::image;
  } else {
    in.kind = InputKind::video;  // FFmpeg's probe decides (libav_source.cpp)
  }
  return in;
}

}  // namespace mjpeg::app
