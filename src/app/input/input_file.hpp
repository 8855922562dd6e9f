// The input of a command, opened once and recognised by its content, never by its name.
//
// A regular file is read where each reader needs it (a Y4M file positionally or mapped, a video
// with seeks); its first bytes are looked at with pread, which reads nothing away. Anything else
// (standard input from a pipe or a terminal, a named FIFO, process substitution's /dev/fd/N) is
// a stream that can be read once: it is relayed (input_relay.hpp, so that Ctrl-C ends a read
// that waits), the bytes read to recognise it are kept and handed on to the reader before the
// rest of the stream, and nothing reads it twice.
//
// What an input holds: the signatures of Y4M ("YUV4MPEG2") and Netpbm ('P' and a digit), of the
// still-image formats read through OpenCV (PNG, JPEG, BMP, TIFF, WebP, ...), GIF (a stream:
// FFmpeg reads its frames), else whatever FFmpeg's own probe recognises (a video). A JPEG
// followed by another JPEG is an M-JPEG stream, a video (unless it says that the pictures after
// it are its own: a Multi-Picture file). Raw frames carry no signature: the
// command line says so (--pix-fmt), whatever the content.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace mjpeg::app {

class InputRelay;

/// What an input holds.
enum class InputKind {
  image,           ///< one still picture (PPM/PGM, PNG, JPEG, BMP, TIFF, ...)
  y4m,             ///< a YUV4MPEG2 stream
  image_sequence,  ///< a printf pattern such as frames/%05d.png naming many files
  video,           ///< anything FFmpeg reads (a container, a GIF, an M-JPEG stream)
  raw,             ///< headerless frames described on the command line (--pix-fmt)
};

/// One input file or stream, opened once.
class InputFile {
 public:
  /// Opens `path` ("-": standard input). A FIFO is opened without waiting for a writer (its
  /// data are waited for where a signal is heard, in the relay). Throws Error (one line naming
  /// the input) when it is missing, a directory or cannot be opened.
  explicit InputFile(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::string& path() const { return path_; }
  /// For messages: "standard input" for "-", else the path.
  const std::string& name() const { return name_; }
  /// A regular file (or a block device): readable at any offset, from start() on.
  bool regular() const { return regular_; }
  /// Regular: the descriptor (its offset at start() until a reader moves it) and the offset
  /// where the input begins (standard input may be a file read from its middle); its size.
  int fd() const { return fd_; }
  std::int64_t start() const { return start_; }
  std::int64_t size() const { return size_; }
  /// The relay of a stream (null for a regular file).
  InputRelay* relay() const { return relay_.get(); }

  /// The input's first `n` bytes, or all of them when it is shorter (waits for a stream's
  /// bytes; they are kept for the reader). Throws Error on a read error.
  std::vector<std::uint8_t> peek(std::size_t n);
  /// Reads up to `n` bytes from where reading stands (a stream's peeked bytes first); 0 at the
  /// end. Throws Error on a read error.
  std::size_t read(void* dst, std::size_t n);
  /// Regular files: moves the reading position (whence: SEEK_SET from start(), SEEK_CUR,
  /// SEEK_END) and returns it, counted from start(); -1 when that fails.
  std::int64_t seek(std::int64_t offset, int whence);
  /// The whole input from its start (a still picture). Throws Error on a read error.
  std::vector<std::uint8_t> read_all();
  /// A stdio stream of the input from its start (for the Y4M reader; owned here). A regular
  /// file is the file itself, so that positional and mapped reading work; a stream hands out
  /// its peeked bytes first. Unbuffered.
  std::FILE* stdio();

  /// "cannot read ...: <why>" for a stream whose reading ended early: interrupted, or the
  /// relay's read error; "" when neither.
  std::string stream_problem() const;

 private:
  std::size_t read_stream(void* dst, std::size_t n);

  std::string path_, name_;
  int fd_ = -1;
  bool owns_fd_ = false;
  bool regular_ = false;
  std::int64_t start_ = 0, size_ = -1;
  std::unique_ptr<InputRelay> relay_;
  std::vector<std::uint8_t> peeked_;  ///< a stream's first bytes, not yet handed on
  std::size_t handed_ = 0;            ///< of peeked_, handed on already
  bool stream_read_ = false;          ///< reading went past peeked_ (peek cannot grow then)
  std::FILE* stdio_ = nullptr;
  std::vector<char> stdio_buffer_;  // a stream's (glibc sizes a buffer it allocates at 8 KiB)
};

/// The input of a command, recognised.
struct Input {
  InputKind kind = InputKind::video;
  std::string path;                  ///< as given
  std::unique_ptr<InputFile> file;   ///< null for an image sequence
  bool gif = false;                  ///< a GIF (one picture to most people: see encode)
  const std::string& name() const { return file ? file->name() : path; }
};

/// Opens `path` and recognises what it holds (see the file comment). `raw`: the command line
/// describes raw frames (--pix-fmt): the kind is raw whatever the content (a Y4M stream, whose
/// header would say otherwise, is refused). A pattern with one integer conversion that names no
/// file is an image sequence. Throws Error: missing, a directory, empty, unreadable, or
/// interrupted while a stream's first bytes are awaited.
Input open_input(const std::string& path, bool raw = false);

/// Where the first JPEG picture in `data` ends (after its EOI marker), or 0 when `data` holds
/// no complete one (it is cut short, or not a JPEG). Markers inside segments and stuffed bytes
/// of the entropy-coded data are stepped over, so an EXIF thumbnail does not end it. Sets
/// `*multi_picture` when the picture carries an MPF segment (APP2 "MPF"): the pictures after
/// it belong to it (a camera's Multi-Picture file, an Ultra HDR gain map), not to a stream.
std::size_t jpeg_picture_end(const std::uint8_t* data, std::size_t size,
                             bool* multi_picture = nullptr);

}  // namespace mjpeg::app
