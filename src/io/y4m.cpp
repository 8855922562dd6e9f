// YUV4MPEG2 reader and YCbCr -> RGB converter (see y4m.hpp for the format).
#include "io/y4m.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <limits>
#include <sstream>

#include "core/color_matrix.hpp"
#include "jpeg/planar.hpp"
#include "mjpeg/error.hpp"
#include "mjpeg/vocabulary.hpp"

namespace mjpeg::io {
namespace {

constexpr char kMagic[] = "YUV4MPEG2";
constexpr std::size_t kMaxHeaderLine = 65536;  // no sane header is anywhere near this
constexpr int kMaxY4mDimension = 65535;         // keeps every size computation far from overflow

[[noreturn]] void y4m_fail(const std::string& name, const std::string& what) {
  throw Error(name + ": " + what);
}

/// The rules of a FRAME header, shared by the stdio reader and the mapped one: `word` holds the
/// first `got` (1 to 5) bytes of the header, `next()` yields the bytes after them, EOF at the
/// end of the stream. Optional frame parameters run up to the newline; none of them changes the
/// frame size. Returns what is wrong with the header ("" when nothing), stopping at the first
/// byte that shows it.
template <typename NextByte>
std::string frame_header_problem(const std::string& frame_name, const char* word,
                                 std::size_t got, NextByte next) {
  const std::string truncated =
      "truncated " + frame_name + " (the stream ends inside its FRAME header)";
  if (got < 5) return truncated;
  if (std::memcmp(word, "FRAME", 5) != 0)
    return frame_name + ": expected a 'FRAME' header (garbage or wrong frame size in the stream)";
  std::size_t length = 0;
  for (bool first = true;; first = false) {
    const int c = next();
    if (c == EOF) return truncated;
    if (c == '\n') return "";
    if (first && c != ' ') return frame_name + ": malformed FRAME header";
    if (++length > kMaxHeaderLine) return frame_name + ": FRAME header too long";
  }
}

/// Parses a non-negative decimal integer that fills all of `s`; -1 when it is not one.
long long parse_uint(const std::string& s) {
  if (s.empty() || s.size() > 12) return -1;
  long long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

/// Parses "<num>:<den>" (both non-negative); false when malformed.
bool parse_ratio(const std::string& s, long long& num, long long& den) {
  const auto colon = s.find(':');
  if (colon == std::string::npos) return false;
  num = parse_uint(s.substr(0, colon));
  den = parse_uint(s.substr(colon + 1));
  return num >= 0 && den >= 0 && num <= std::numeric_limits<int>::max() &&
         den <= std::numeric_limits<int>::max();
}

std::string upper(std::string s) {
  for (char& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

/// True for high-bit-depth chroma tags: 420p10, 422p12, 444p16, mono10, mono16, ...
bool is_high_bit_depth_tag(const std::string& tag) {
  const auto p = tag.find('p');
  if (p != std::string::npos && p > 0 && parse_uint(tag.substr(p + 1)) > 8) return true;
  if (tag.rfind("mono", 0) == 0 && tag.size() > 4 && parse_uint(tag.substr(4)) > 8) return true;
  return false;
}

void parse_chroma(const std::string& tag, const std::string& name, Y4mInfo& info) {
  info.chroma_tag = tag;
  if (tag == "420jpeg" || tag == "420paldv" || tag == "420mpeg2" || tag == "420") {
    info.chroma = PlanarChroma::c420;
  } else if (tag == "422") {
    info.chroma = PlanarChroma::c422;
  } else if (tag == "444") {
    info.chroma = PlanarChroma::c444;
  } else if (tag == "mono") {
    info.chroma = PlanarChroma::mono;
  } else if (is_high_bit_depth_tag(tag)) {
    y4m_fail(name, "Y4M chroma 'C" + tag + "' has more than 8 bits per sample, which is not "
               "supported; convert to 8-bit first (e.g. ffmpeg -i IN -pix_fmt yuv420p -f "
               "yuv4mpegpipe OUT.y4m)");
  } else {
    y4m_fail(name, "unsupported Y4M chroma 'C" + tag + "' (supported: 420jpeg, 420paldv, "
               "420mpeg2, 420, 422, 444, mono)");
  }
}

/// X tags: FFmpeg's XCOLORRANGE=FULL|LIMITED, our XCOLORMATRIX=BT601|BT709 (a few aliases).
/// Other extensions (e.g. XYSCSS=420JPEG) are ignored as the format allows.
void parse_extension(const std::string& value, const std::string& name, Y4mInfo& info) {
  const auto eq = value.find('=');
  if (eq == std::string::npos) return;
  const std::string key = upper(value.substr(0, eq));
  const std::string val = upper(value.substr(eq + 1));
  if (key == "COLORRANGE") {
    if (val == "FULL") info.range = YuvRange::full;
    else if (val == "LIMITED") info.range = YuvRange::limited;
    else y4m_fail(name, "invalid Y4M XCOLORRANGE value '" + value.substr(eq + 1) +
                    "' (expected FULL or LIMITED)");
    info.range_tagged = true;
  } else if (key == "COLORMATRIX" || key == "MATRIX" || key == "COLORSPACE") {
    if (val == "BT709" || val == "BT.709" || val == "709") {
      info.matrix = YuvMatrix::bt709;
      info.matrix_tagged = true;
    } else if (val == "BT601" || val == "BT.601" || val == "601" || val == "BT470BG" ||
               val == "SMPTE170M") {
      info.matrix = YuvMatrix::bt601;
      info.matrix_tagged = true;
    } else if (val == "BT2020" || val == "BT.2020" || val == "2020" || val == "BT2020NC") {
      info.matrix = YuvMatrix::bt2020;
      info.matrix_tagged = true;
    } else {
      info.notices.push_back("unknown Y4M matrix hint '" + value + "', using BT.601");
    }
  }
}

std::string ratio_string(int num, int den) {
  return std::to_string(num) + "/" + std::to_string(den);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Y4mInfo
// ---------------------------------------------------------------------------------------------

int Y4mInfo::chroma_width() const {
  switch (chroma) {
    case PlanarChroma::c420:
    case PlanarChroma::c422: return (width + 1) / 2;
    case PlanarChroma::c444: return width;
    case PlanarChroma::mono:
    case PlanarChroma::none: return 0;
  }
  return 0;
}

int Y4mInfo::chroma_height() const {
  switch (chroma) {
    case PlanarChroma::c420: return (height + 1) / 2;
    case PlanarChroma::c422:
    case PlanarChroma::c444: return height;
    case PlanarChroma::mono:
    case PlanarChroma::none: return 0;
  }
  return 0;
}

std::string Y4mInfo::describe() const {
  std::ostringstream s;
  s << width << "x" << height << " " << ratio_string(fps_num, fps_den) << " fps Y4M "
    << chroma_tag << ", " << vocab::name_of(range) << " range, " << core::matrix_spec(matrix).title
    << (matrix_tagged ? "" : " (assumed)") << ", "
    << (interlace == 'p' || interlace == '?' ? "progressive" : "interlaced");
  return s.str();
}

Y4mPlanes planes_of(const std::uint8_t* data, const Y4mInfo& info) {
  Y4mPlanes p;
  p.y = data;
  p.y_stride = std::size_t(info.width);
  if (info.chroma != PlanarChroma::mono) {
    p.cb = data + info.luma_bytes();
    p.cr = p.cb + info.chroma_bytes();
    p.c_stride = std::size_t(info.chroma_width());
  }
  return p;
}

// ---------------------------------------------------------------------------------------------
// Header parsing
// ---------------------------------------------------------------------------------------------

Y4mInfo parse_y4m_header(const std::string& line_in, const std::string& name) {
  std::string line = line_in;
  if (!line.empty() && line.back() == '\n') line.pop_back();
  if (line.rfind(kMagic, 0) == 0) line.erase(0, sizeof(kMagic) - 1);

  Y4mInfo info;
  long long width = -1, height = -1;
  bool have_rate = false;
  std::size_t pos = 0;
  while (pos < line.size()) {
    if (line[pos] == ' ') { ++pos; continue; }  // separators (tolerate repeated spaces)
    std::size_t end = line.find(' ', pos);
    if (end == std::string::npos) end = line.size();
    const char tag = line[pos];
    const std::string value = line.substr(pos + 1, end - pos - 1);
    pos = end;
    switch (tag) {
      case 'W': width = parse_uint(value); if (width <= 0) y4m_fail(name, "invalid Y4M width 'W" + value + "'"); break;
      case 'H': height = parse_uint(value); if (height <= 0) y4m_fail(name, "invalid Y4M height 'H" + value + "'"); break;
      case 'F': {
        long long n, d;
        if (!parse_ratio(value, n, d)) y4m_fail(name, "invalid Y4M frame rate 'F" + value + "'");
        if (n > 0 && d > 0) { info.fps_num = int(n); info.fps_den = int(d); have_rate = true; }
        break;
      }
      case 'I':
        if (value.size() != 1 || std::strchr("ptbm?", value[0]) == nullptr)
          y4m_fail(name, "invalid Y4M interlacing 'I" + value + "' (expected p, t, b, m or ?)");
        info.interlace = value[0];
        break;
      case 'A': {
        long long n, d;
        if (!parse_ratio(value, n, d)) y4m_fail(name, "invalid Y4M aspect ratio 'A" + value + "'");
        info.aspect_num = int(n);
        info.aspect_den = int(d);
        break;
      }
      case 'C': parse_chroma(value, name, info); break;
      case 'X': parse_extension(value, name, info); break;
      default: break;  // unknown tags are ignored, as the format asks readers to do
    }
  }
  if (width < 0 || height < 0) y4m_fail(name, "Y4M header has no W (width) or H (height)");
  if (width > kMaxY4mDimension || height > kMaxY4mDimension)
    y4m_fail(name, "Y4M frame size " + std::to_string(width) + "x" + std::to_string(height) +
               " is too large");
  info.width = int(width);
  info.height = int(height);
  if (!have_rate) info.notices.push_back("Y4M header gives no frame rate; assuming 25/1 fps");
  if (info.interlace == 't' || info.interlace == 'b' || info.interlace == 'm')
    info.notices.push_back(std::string("interlaced Y4M source (I") + info.interlace +
                           "): fields are encoded together as progressive frames");
  return info;
}

// ---------------------------------------------------------------------------------------------
// Y4mReader
// ---------------------------------------------------------------------------------------------

Y4mReader::Y4mReader(const std::string& path) : name_(path == "-" ? "<stdin>" : path) {
  if (path == "-") {
    file_ = stdin;
  } else {
    file_ = std::fopen(path.c_str(), "rb");
    if (file_ == nullptr) y4m_fail(name_, std::string("cannot open: ") + std::strerror(errno));
    owns_file_ = true;
  }
  // Unbuffered: a frame payload goes with one read() straight into the caller's memory (a
  // pinned slot), without a copy through a stdio buffer; the few header bytes per frame cost
  // a read() or two each.
  std::setvbuf(file_, nullptr, _IONBF, 0);
  try {
    parse_stream_header();
    probe_positional();
  } catch (...) {
    if (owns_file_) std::fclose(file_);
    throw;
  }
}

Y4mReader::Y4mReader(std::FILE* stream, std::string name) : file_(stream), name_(std::move(name)) {
  if (file_ == nullptr) throw UsageError("Y4mReader: null stream");
  // Unbuffered, as above, before the first read (as the standard asks). Not a stream of no
  // file descriptor (fopencookie): glibc reads such a stream through its buffer even for a
  // large fread, one byte per call when it has none, so it keeps the buffer its maker gave it.
  if (::fileno(file_) >= 0) std::setvbuf(file_, nullptr, _IONBF, 0);
  parse_stream_header();
  probe_positional();
}

void Y4mReader::probe_positional() {
  const int fd = ::fileno(file_);
  if (fd < 0) return;  // a memory stream
  struct stat st {};
  if (::fstat(fd, &st) != 0) return;
#ifdef F_SETPIPE_SZ
  // A pipe: larger pipe buffers mean fewer, larger reads (best effort; the default is 64 KiB).
  if (S_ISFIFO(st.st_mode)) (void)::fcntl(fd, F_SETPIPE_SZ, 1 << 20);
#endif
  if (!S_ISREG(st.st_mode)) return;
  const off_t start = ::ftello(file_);
  if (start < 0) return;
  const std::int64_t stride = 6 + static_cast<std::int64_t>(info_.frame_bytes());
  const std::int64_t rest = static_cast<std::int64_t>(st.st_size) - start;
  if (rest <= 0 || rest % stride != 0) return;
  char head[6];
  if (::pread(fd, head, sizeof head, start) != static_cast<ssize_t>(sizeof head) ||
      std::memcmp(head, "FRAME\n", 6) != 0)
    return;
  fd_ = fd;
  data_start_ = start;
  positional_frames_ = rest / stride;
}

bool Y4mReader::read_frame_at(std::int64_t index, std::uint8_t* dst, std::size_t capacity) const {
  const std::size_t need = info_.frame_bytes();
  if (positional_frames_ < 0 || index < 0 || index >= positional_frames_)
    throw UsageError(name_ + ": read_frame_at outside the positional frames");
  if (dst == nullptr || capacity < need)
    throw UsageError(name_ + ": read_frame_at buffer of " + std::to_string(capacity) +
                     " bytes is smaller than a frame (" + std::to_string(need) + ")");
  const std::string frame_name = "frame " + std::to_string(index + 1);
  char head[6];
  const std::int64_t stride = 6 + static_cast<std::int64_t>(need);
  std::int64_t offset = data_start_ + index * stride;
  std::size_t done = 0;  // of head + payload
  const std::size_t total = sizeof head + need;
  while (done < total) {
    iovec iov[2];
    int n = 0;
    if (done < sizeof head) iov[n++] = {head + done, sizeof head - done};
    const std::size_t pd = done < sizeof head ? 0 : done - sizeof head;
    iov[n++] = {dst + pd, need - pd};
    const ssize_t got = ::preadv(fd_, iov, n, static_cast<off_t>(offset));
    if (got < 0) {
      if (errno == EINTR) continue;
      y4m_fail(name_, "read error in " + frame_name + ": " + std::strerror(errno));
    }
    if (got == 0)
      y4m_fail(name_, "truncated " + frame_name + " (the file became shorter while it was read)");
    done += static_cast<std::size_t>(got);
    offset += got;
  }
  return std::memcmp(head, "FRAME\n", 6) == 0;
}

bool Y4mReader::plain_headers_before(std::int64_t count) const {
  if (positional_frames_ < 0 || count < 0 || count > positional_frames_)
    throw UsageError(name_ + ": plain_headers_before outside the positional frames");
  const std::int64_t stride = 6 + static_cast<std::int64_t>(info_.frame_bytes());
  for (std::int64_t i = 0; i < count; ++i) {
    char head[6];
    const ssize_t got = ::pread(fd_, head, sizeof head, static_cast<off_t>(data_start_ + i * stride));
    if (got != static_cast<ssize_t>(sizeof head) || std::memcmp(head, "FRAME\n", 6) != 0)
      return false;
  }
  return true;
}

void Y4mReader::resume_at(std::int64_t index) {
  if (positional_frames_ < 0 || index < 0 || index > positional_frames_)
    throw UsageError(name_ + ": resume_at outside the positional frames");
  const std::int64_t stride = 6 + static_cast<std::int64_t>(info_.frame_bytes());
  if (::fseeko(file_, static_cast<off_t>(data_start_ + index * stride), SEEK_SET) != 0)
    y4m_fail(name_, std::string("cannot seek: ") + std::strerror(errno));
  frames_read_ = index;
}

bool Y4mReader::map_frames() {
  if (map_ != nullptr) return true;
  const int fd = ::fileno(file_);
  if (fd < 0) return false;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return false;
  const off_t start = ::ftello(file_);  // unbuffered: exactly after the stream header
  if (start < 0 || st.st_size <= start) return false;
  void* m = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) return false;
  map_ = static_cast<const std::uint8_t*>(m);
  map_bytes_ = static_cast<std::size_t>(st.st_size);
  map_skip_ = static_cast<std::size_t>(start);
  map_next_ = 0;
  return true;
}

const std::uint8_t* Y4mReader::next_mapped_frame() {
  if (map_ == nullptr) throw UsageError(name_ + ": next_mapped_frame without map_frames");
  const std::uint8_t* base = mapping();
  const std::size_t size = mapping_bytes();
  const std::size_t need = info_.frame_bytes();
  std::size_t at = map_next_;
  if (at == size) return nullptr;  // clean end of stream
  if (ended_) return nullptr;
  const std::string frame_name = "frame " + std::to_string(frames_read_ + 1);
  const std::size_t got = std::min<std::size_t>(5, size - at);
  const char* word = reinterpret_cast<const char*>(base + at);
  at += got;
  const std::string problem = frame_header_problem(
      frame_name, word, got, [&]() -> int { return at == size ? EOF : base[at++]; });
  if (!problem.empty()) {
    damaged(problem);
    return nullptr;
  }
  if (size - at < need) {
    damaged("truncated " + frame_name + ": got " + std::to_string(size - at) + " of " +
            std::to_string(need) + " bytes");
    return nullptr;
  }
  map_next_ = at + need;
  ++frames_read_;
  return base + at;
}

Y4mReader::~Y4mReader() {
  if (map_ != nullptr) ::munmap(const_cast<std::uint8_t*>(map_), map_bytes_);
  if (owns_file_ && file_ != nullptr) std::fclose(file_);
}

void Y4mReader::parse_stream_header() {
  char magic[sizeof(kMagic)] = {};
  const std::size_t got = std::fread(magic, 1, sizeof(kMagic) - 1, file_);
  if (got == 0) y4m_fail(name_, "empty input (expected a YUV4MPEG2 stream)");
  if (got < sizeof(kMagic) - 1 || std::memcmp(magic, kMagic, sizeof(kMagic) - 1) != 0)
    y4m_fail(name_, "not a YUV4MPEG2 (.y4m) stream (missing 'YUV4MPEG2' signature)");
  std::string line;
  for (;;) {
    const int c = std::getc(file_);
    if (c == EOF) y4m_fail(name_, "truncated Y4M stream header (no end of line)");
    if (c == '\n') break;
    if (line.size() >= kMaxHeaderLine) y4m_fail(name_, "Y4M stream header too long");
    line.push_back(char(c));
  }
  if (!line.empty() && line[0] != ' ')
    y4m_fail(name_, "malformed Y4M signature 'YUV4MPEG2" + line.substr(0, 8) + "'");
  info_ = parse_y4m_header(line, name_);
}

void Y4mReader::damaged(const std::string& what) {
  if (!keep_going_) y4m_fail(name_, what);
  ended_ = true;
  lost_ = what + (frames_read_ > 0
                      ? "; frames 1 to " + std::to_string(frames_read_) +
                            " are complete, the rest of the stream is left out"
                      : "; no frame is complete");
}

bool Y4mReader::read_frame_header() {
  if (ended_) return false;
  char word[5];
  const std::size_t got = std::fread(word, 1, 5, file_);
  const std::string frame_name = "frame " + std::to_string(frames_read_ + 1);
  if (got == 0) {
    if (std::ferror(file_)) y4m_fail(name_, "read error before " + frame_name + ": " + std::strerror(errno));
    return false;  // clean end of stream
  }
  const std::string problem =
      frame_header_problem(frame_name, word, got, [this] { return std::getc(file_); });
  if (std::ferror(file_)) y4m_fail(name_, "read error in " + frame_name + ": " + std::strerror(errno));
  if (!problem.empty()) {
    damaged(problem);
    return false;
  }
  return true;
}

bool Y4mReader::read_frame(std::uint8_t* dst, std::size_t capacity) {
  const std::size_t need = info_.frame_bytes();
  if (dst == nullptr || capacity < need)
    throw UsageError(name_ + ": read_frame buffer of " + std::to_string(capacity) +
                     " bytes is smaller than a frame (" + std::to_string(need) + ")");
  if (!read_frame_header()) return false;
  const std::size_t got = std::fread(dst, 1, need, file_);
  if (got != need) {
    const std::string frame_name = "frame " + std::to_string(frames_read_ + 1);
    if (std::ferror(file_)) y4m_fail(name_, "read error in " + frame_name + ": " + std::strerror(errno));
    damaged("truncated " + frame_name + ": got " + std::to_string(got) + " of " +
            std::to_string(need) + " bytes");
    return false;
  }
  ++frames_read_;
  return true;
}

bool Y4mReader::read_frame(Y4mFrame& frame) {
  if (frame.data.size() != info_.frame_bytes()) frame.data.resize(info_.frame_bytes());
  return read_frame(frame.data.data(), frame.data.size());
}

// ---------------------------------------------------------------------------------------------
// YCbCr -> RGB: the rounded integer form of jpeg_math.hpp (the GPU kernels use the same one)
// ---------------------------------------------------------------------------------------------
namespace {

/// Fixed-point coefficients for one (matrix, range) pair, from Kr, Kb of the matrix.
math::YccToRgb coefficients(YuvMatrix matrix, YuvRange range) {
  const core::MatrixSpec& m = core::matrix_spec(matrix);
  return math::make_rounded_ycc(m.kr, m.kb, range == YuvRange::limited);
}

}  // namespace

PlanarFormat planar_format(const Y4mInfo& info) {
  PlanarFormat f;
  f.chroma = info.chroma;
  f.ycc = info.conversion ? *info.conversion : coefficients(info.matrix, info.range);
  return f;
}

void yuv_to_rgb24(const Y4mPlanes& planes, const Y4mInfo& info, std::uint8_t* rgb,
                  std::size_t stride) {
  if (rgb == nullptr || planes.y == nullptr || stride < std::size_t(info.width) * 3)
    throw UsageError("yuv_to_rgb24: null buffer or stride smaller than width*3");
  PlanarView v;
  v.width = info.width;
  v.height = info.height;
  v.format = planar_format(info);
  v.plane[0] = planes.y;
  v.pitch[0] = planes.y_stride;
  if (info.chroma != PlanarChroma::mono) {
    if (planes.cb == nullptr || planes.cr == nullptr)
      throw UsageError("yuv_to_rgb24: missing chroma planes");
    v.plane[1] = planes.cb;
    v.plane[2] = planes.cr;
    v.pitch[1] = v.pitch[2] = planes.c_stride;
  }
  planar_to_rgb(v, rgb, stride);
}

}  // namespace mjpeg::io
