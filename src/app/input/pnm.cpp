#include "pnm.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include "mjpeg/error.hpp"

namespace mjpeg::app {
namespace {

constexpr unsigned kMaxMaxval = 65535;

[[noreturn]] void fail(const std::string& name, const std::string& reason) {
  throw Error(name + ": " + reason);
}

bool is_space(std::uint8_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}
bool is_digit(std::uint8_t c) { return c >= '0' && c <= '9'; }

std::string describe_byte(std::uint8_t c) {
  if (c >= 0x21 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
  static const char* hex = "0123456789abcdef";
  return std::string("byte 0x") + hex[c >> 4] + hex[c & 15];
}

/// A forward-only reader of the header and ASCII raster of one PNM image.
class Cursor {
 public:
  Cursor(const std::uint8_t* data, std::size_t size, const std::string& name)
      : data_(data), size_(size), name_(name) {}

  std::size_t pos() const { return pos_; }
  std::size_t remaining() const { return size_ - pos_; }
  const std::uint8_t* here() const { return data_ + pos_; }
  const std::string& name() const { return name_; }
  void advance(std::size_t n) { pos_ += n; }

  /// Skips whitespace and '#' comments (to end of line), as cjpeg does between numbers.
  void skip_blanks() {
    while (pos_ < size_) {
      if (is_space(data_[pos_])) {
        ++pos_;
      } else if (data_[pos_] == '#') {
        while (pos_ < size_ && data_[pos_] != '\n' && data_[pos_] != '\r') ++pos_;
      } else {
        break;
      }
    }
  }

  /// Reads an unsigned decimal number of at most `limit`, after blanks. `what` names it in
  /// errors; `truncated` is the error for end of data.
  unsigned read_number(const char* what, unsigned limit, const char* truncated) {
    skip_blanks();
    if (pos_ >= size_) fail(name_, truncated);
    if (!is_digit(data_[pos_]))
      fail(name_, std::string("corrupt data: expected ") + what + ", found " +
                      describe_byte(data_[pos_]));
    unsigned long value = 0;
    while (pos_ < size_ && is_digit(data_[pos_])) {
      value = value * 10 + (data_[pos_] - '0');
      if (value > limit)
        fail(name_, std::string(what) + " is above " + std::to_string(limit));
      ++pos_;
    }
    // A number ends at a blank, a comment or the end of the data ("640x360" is corrupt).
    if (pos_ < size_ && !is_space(data_[pos_]) && data_[pos_] != '#')
      fail(name_, std::string("corrupt data: unexpected ") + describe_byte(data_[pos_]) +
                      " after " + what);
    return static_cast<unsigned>(value);
  }

  /// The single blank that separates maxval from a binary raster. A comment there is
  /// skipped up to and including its newline, as cjpeg does.
  void skip_raster_separator() {
    if (pos_ >= size_) fail(name_, "truncated: no pixel data after the header");
    if (data_[pos_] == '#') {
      while (pos_ < size_ && data_[pos_] != '\n') ++pos_;
      if (pos_ >= size_) fail(name_, "truncated: no pixel data after the header");
    }
    ++pos_;  // read_number guaranteed a blank (or '#', handled above) here
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
  const std::string& name_;
};

struct Header {
  char type = 0;  ///< '2', '3', '5' or '6'
  unsigned width = 0;
  unsigned height = 0;
  unsigned maxval = 0;
  bool color() const { return type == '3' || type == '6'; }
  bool ascii() const { return type == '2' || type == '3'; }
};

/// Reads "Pn width height maxval"; leaves the cursor just after maxval.
Header read_header(Cursor& in) {
  const std::string& name = in.name();
  if (in.remaining() < 2 || in.here()[0] != 'P' || !is_digit(in.here()[1]))
    fail(name, "not a PPM/PGM file (no P6/P5/P3/P2 signature)");
  Header h;
  h.type = static_cast<char>(in.here()[1]);
  switch (h.type) {
    case '2': case '3': case '5': case '6': break;
    case '1': case '4': fail(name, "PBM (bitmap) files are not supported; use PPM or PGM");
    case '7': fail(name, "PAM files are not supported; use PPM or PGM");
    default: fail(name, std::string("not a PPM/PGM file (unknown type P") + h.type + ")");
  }
  in.advance(2);
  // Up to 2^31 - 1 here, so that a size above JPEG's limit is named as such below.
  h.width = in.read_number("width", 0x7FFFFFFFu, "truncated header");
  h.height = in.read_number("height", 0x7FFFFFFFu, "truncated header");
  h.maxval = in.read_number("maxval", kMaxMaxval, "truncated header");
  return h;
}

void check_dimensions(const std::string& name, const Header& h) {
  if (h.width == 0 || h.height == 0)
    fail(name, "image size " + std::to_string(h.width) + "x" + std::to_string(h.height) +
                   " is empty");
  if (h.width > static_cast<unsigned>(kMaxDimension) ||
      h.height > static_cast<unsigned>(kMaxDimension))
    fail(name, "image size " + std::to_string(h.width) + "x" + std::to_string(h.height) +
                   " is above " + std::to_string(kMaxDimension) +
                   " per side, libjpeg's limit (cjpeg, djpeg and most JPEG readers refuse "
                   "larger pictures)");
  if (h.maxval == 0) fail(name, "maxval 0 is invalid (must be 1..65535)");
}

void read_binary_raster(Cursor& in, const Header& h, Image& img) {
  const std::size_t samples = img.pixels.size();
  const std::size_t bytes_per_sample = h.maxval > 255 ? 2 : 1;
  const std::size_t need = samples * bytes_per_sample;
  if (in.remaining() < need)
    fail(in.name(), "truncated pixel data: expected " + std::to_string(need) +
                        " bytes after the header, found " + std::to_string(in.remaining()));
  const std::uint8_t* src = in.here();
  std::uint8_t* dst = img.pixels.data();
  if (h.maxval == 255) {
    std::memcpy(dst, src, samples);
    return;
  }
  for (std::size_t i = 0; i < samples; ++i) {
    unsigned v = bytes_per_sample == 2 ? (unsigned{src[2 * i]} << 8) | src[2 * i + 1] : src[i];
    if (v > h.maxval)
      fail(in.name(), "corrupt pixel data: sample " + std::to_string(v) + " is above maxval " +
                          std::to_string(h.maxval));
    dst[i] = rescale_sample(v, h.maxval);
  }
}

void read_ascii_raster(Cursor& in, const Header& h, Image& img) {
  const std::string what = "a sample value (0.." + std::to_string(h.maxval) + ")";
  for (std::uint8_t& out : img.pixels) {
    unsigned v = in.read_number(what.c_str(), h.maxval, "truncated pixel data");
    out = h.maxval == 255 ? static_cast<std::uint8_t>(v) : rescale_sample(v, h.maxval);
  }
}

}  // namespace

bool looks_like_pnm(const std::uint8_t* data, std::size_t size) {
  return size >= 2 && data[0] == 'P' && data[1] >= '1' && data[1] <= '7';
}

Image decode_pnm(const std::uint8_t* data, std::size_t size, const std::string& name) {
  if (size == 0) fail(name, "file is empty");
  Cursor in(data, size, name);
  const Header h = read_header(in);
  check_dimensions(name, h);

  Image img(static_cast<int>(h.width), static_cast<int>(h.height),
            h.color() ? PixelFormat::rgb24 : PixelFormat::gray8);
  if (h.ascii()) {
    read_ascii_raster(in, h, img);
  } else {
    in.skip_raster_separator();
    read_binary_raster(in, h, img);
  }
  return img;
}

namespace {

/// The whole content of a regular file; mjpeg::Error naming the path otherwise.
std::vector<std::uint8_t> read_whole_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, std::string("cannot open: ") + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(path, std::string("cannot stat: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) fail(path, "is a directory, not an image file");
  std::vector<std::uint8_t> bytes;
  if (S_ISREG(st.st_mode)) bytes.reserve(static_cast<std::size_t>(st.st_size));
  std::uint8_t buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(path, std::string("read error: ") + std::strerror(errno));
    }
    if (n == 0) break;
    bytes.insert(bytes.end(), buf, buf + n);
  }
  return bytes;
}

}  // namespace

Image read_pnm(const std::string& path) {
  std::vector<std::uint8_t> bytes = read_whole_file(path);
  return decode_pnm(bytes.data(), bytes.size(), path);
}

std::string encode_pnm(const ImageView& image) {
  if (image.data == nullptr || image.width <= 0 || image.height <= 0)
    throw Error("cannot write an empty image as PPM/PGM");
  const int ch = channels(image.format);
  std::string out = (ch == 3 ? "P6\n" : "P5\n") + std::to_string(image.width) + " " +
                    std::to_string(image.height) + "\n255\n";
  const std::size_t row_bytes = static_cast<std::size_t>(image.width) * ch;
  out.reserve(out.size() + row_bytes * image.height);
  for (int y = 0; y < image.height; ++y) {
    const auto* row = reinterpret_cast<const char*>(image.data + y * image.stride);
    out.append(row, row_bytes);
  }
  return out;
}

void write_pnm(const std::string& path, const ImageView& image) {
  const std::string bytes = encode_pnm(image);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) fail(path, std::string("cannot open for writing: ") + std::strerror(errno));
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) fail(path, "write failed");
}

}  // namespace mjpeg::app
