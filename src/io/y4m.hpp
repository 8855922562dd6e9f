// YUV4MPEG2 (.y4m) reader and the YCbCr -> RGB converter for its frames.
//
// Format facts (mjpegtools' yuv4mpeg(5) and FFmpeg's yuv4mpegpipe muxer):
//   stream header:  "YUV4MPEG2" { ' ' TAG } '\n', where TAG is one letter + value:
//     W<width> H<height>           (required)
//     F<num>:<den>                 frame rate (0:0 = unknown)
//     I<p|t|b|m|?>                 interlacing (progressive, top/bottom first, mixed, unknown)
//     A<num>:<den>                 pixel aspect ratio (0:0 = unknown)
//     C<tag>                       chroma: 420jpeg (default), 420paldv, 420mpeg2, 420, 422, 444,
//                                  mono; 420p10 and friends are >8-bit (rejected here)
//     X<anything>                  extension; FFmpeg writes XCOLORRANGE=FULL|LIMITED and
//                                  XYSCSS=<chroma>; we also read XCOLORMATRIX=BT601|BT709
//   per frame:      "FRAME" { ' ' TAG } '\n' followed by the planes Y, Cb, Cr, 8 bits per
//                   sample, no padding; chroma planes are ceil(W/2) x ceil(H/2) for 4:2:0,
//                   ceil(W/2) x H for 4:2:2, W x H for 4:4:4; mono has only Y.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "core/planar_format.hpp"
#include "mjpeg/video.hpp"

namespace mjpeg::io {


/// What the stream header says, after validation.
struct Y4mInfo {
  int width = 0;
  int height = 0;
  int fps_num = 25;                 ///< frame rate as a rational; 25/1 when the header has none
  int fps_den = 1;
  int aspect_num = 0;               ///< pixel aspect ratio, 0:0 when unknown
  int aspect_den = 0;
  char interlace = '?';             ///< 'p', 't', 'b', 'm' or '?'
  /// The chroma layout (never none). The three 4:2:0 tags differ only in chroma siting (which
  /// the nearest-neighbour upsampling does not use), so they share c420.
  PlanarChroma chroma = PlanarChroma::c420;
  std::string chroma_tag = "420jpeg";  ///< the C tag as written (or the default)
  YuvRange range = YuvRange::limited;
  YuvMatrix matrix = YuvMatrix::bt601;
  bool range_tagged = false;        ///< known: the header said (XCOLORRANGE) or set_colour
  bool matrix_tagged = false;       ///< known: the header said (XCOLORMATRIX) or set_colour;
                                    ///< else BT.601 is assumed
  /// The integer conversion to RGB when given (set_conversion), instead of the rounded one of
  /// matrix and range.
  std::optional<math::YccToRgb> conversion;
  /// Things a user should be told (e.g. "interlaced source ... encoded as progressive",
  /// "no frame rate in header, assuming 25/1"). One line each; the reader never prints.
  std::vector<std::string> notices;

  int chroma_width() const;         ///< width of the Cb and Cr planes (0 for mono)
  int chroma_height() const;        ///< height of the Cb and Cr planes (0 for mono)
  std::size_t luma_bytes() const { return std::size_t(width) * std::size_t(height); }
  std::size_t chroma_bytes() const { return std::size_t(chroma_width()) * std::size_t(chroma_height()); }
  std::size_t frame_bytes() const { return luma_bytes() + 2 * chroma_bytes(); }
  /// e.g. "1920x1080 25/1 fps yuv 420jpeg, limited range, BT.601, progressive".
  std::string describe() const;
};

/// Read-only pointers to the three planes of one frame (cb/cr are null for mono).
struct Y4mPlanes {
  const std::uint8_t* y = nullptr;
  const std::uint8_t* cb = nullptr;
  const std::uint8_t* cr = nullptr;
  std::size_t y_stride = 0;
  std::size_t c_stride = 0;
};

/// The planes of a frame stored contiguously (Y, Cb, Cr) at `data`, as read_frame writes them.
Y4mPlanes planes_of(const std::uint8_t* data, const Y4mInfo& info);

/// For mono streams the Y plane is already an 8-bit grayscale image: use planes.y directly
/// as a gray8 ImageView (stride y_stride), no conversion.

/// A reusable frame buffer: read_frame(Y4mFrame&) sizes it once and then only refills it.
struct Y4mFrame {
  std::vector<std::uint8_t> data;
  Y4mPlanes planes(const Y4mInfo& info) const { return planes_of(data.data(), info); }
};

class Y4mReader {
 public:
  /// Opens a file, or standard input when `path` is "-". Parses the stream header.
  /// Throws Error when the file cannot be opened or the header is invalid/unsupported.
  explicit Y4mReader(const std::string& path);
  /// Reads from an already open stream (not owned, not closed). `name` is used in messages.
  Y4mReader(std::FILE* stream, std::string name);
  ~Y4mReader();
  Y4mReader(const Y4mReader&) = delete;
  Y4mReader& operator=(const Y4mReader&) = delete;

  const Y4mInfo& info() const { return info_; }
  /// State the source's matrix or range (--colorspace, --range: Y4M itself carries no
  /// matrix), overriding the header; before the first frame is read.
  void set_matrix(YuvMatrix matrix) {
    info_.matrix = matrix;
    info_.matrix_tagged = true;  // known now
  }
  void set_range(YuvRange range) {
    info_.range = range;
    info_.range_tagged = true;
  }
  /// Frames are converted to RGB with `k` (planar_format), e.g. libswscale's arithmetic.
  void set_conversion(const math::YccToRgb& k) { info_.conversion = k; }
  /// A truncated or damaged stream (a frame cut short, a stream that ends inside a FRAME
  /// header, a malformed FRAME header) ends the stream at the last complete frame instead of
  /// throwing; lost() then says what was left out. Before the first frame is read.
  void set_keep_going(bool keep_going) { keep_going_ = keep_going; }
  /// With set_keep_going: what a truncated or damaged end cost, one line ("" when nothing).
  const std::string& lost() const { return lost_; }

  /// Reads the next frame into `frame` (allocates only the first time). Returns false at a
  /// clean end of stream; throws Error on a truncated frame or a malformed FRAME header.
  bool read_frame(Y4mFrame& frame);
  /// Same, into caller memory (e.g. a pinned slot) of at least info().frame_bytes() bytes,
  /// planes stored contiguously Y, Cb, Cr (see planes_of).
  bool read_frame(std::uint8_t* dst, std::size_t capacity);

  /// Frames returned so far (by read_frame; resume_at sets it).
  std::int64_t frames_read() const { return frames_read_; }

  // --- Positional reading ------------------------------------------------------------------
  // A regular file whose frames all have a plain "FRAME\n" header (as FFmpeg writes them) has
  // frame i at a fixed offset, so several threads can read frames at once. The stream is
  // unbuffered: every payload goes with one read()/pread() straight into the caller's memory.
  /// The number of frames when the file looks like that (its size is a whole number of plain
  /// frames and the first frame's header is plain), else -1 (a pipe, frame parameters, a
  /// truncated last frame: read sequentially).
  std::int64_t positional_frames() const { return positional_frames_; }
  /// Reads frame `index` (0 <= index < positional_frames()) into `dst` with one pread of its
  /// header and payload. Thread-safe, independent of read_frame. Returns false when that
  /// frame's header is not exactly "FRAME\n": the frames are not all at their fixed offsets
  /// (some header before or at `index` has parameters); read on with resume_at + read_frame.
  /// Throws Error on a read error or a short read.
  bool read_frame_at(std::int64_t index, std::uint8_t* dst, std::size_t capacity) const;
  /// Continues sequential reading (read_frame) at frame `index`, which must be at its fixed
  /// offset: every frame before it has a plain header.
  void resume_at(std::int64_t index);
  /// True when frames 0 .. count - 1 (count <= positional_frames()) all have plain headers, so
  /// that frame `count` lies at its fixed offset: checked with one 6-byte pread per frame,
  /// their pixels unread. Thread-safe like read_frame_at.
  bool plain_headers_before(std::int64_t count) const;

  // --- Mapped reading ----------------------------------------------------------------------
  // A regular file can be mapped read-only, so that frames are used where they lie in the page
  // cache (a GPU uploads them from there once they are page-locked) instead of being read into
  // other memory. The frames then come from next_mapped_frame, in stream order; read_frame
  // and the positional calls must not be used any more.
  /// Maps the file from the first frame header to its current end. False (and nothing
  /// changes) for a pipe or a terminal, before the stream header was parsed from a regular
  /// file, or when mmap fails. A file that grows later is encoded up to the size it had here.
  bool map_frames();
  /// The mapping's first byte (the first frame header) and length; null / 0 when not mapped.
  const std::uint8_t* mapping() const { return map_ == nullptr ? nullptr : map_ + map_skip_; }
  std::size_t mapping_bytes() const { return map_bytes_ - map_skip_; }
  /// The next frame's payload (info().frame_bytes() bytes in the mapping), or null at a clean
  /// end of the stream. Checks its FRAME header (parameters allowed) exactly as read_frame
  /// does and throws Error with read_frame's messages on a truncated or malformed frame. Not
  /// thread-safe: callers serialise.
  const std::uint8_t* next_mapped_frame();

 private:
  void parse_stream_header();
  bool read_frame_header();  // false at clean EOF
  void probe_positional();
  /// A truncated or damaged frame: throws Error(`what`), or with keep_going_ records what was
  /// lost and returns (the stream ends).
  void damaged(const std::string& what);

  std::FILE* file_ = nullptr;
  bool owns_file_ = false;
  std::string name_;
  Y4mInfo info_;
  std::int64_t frames_read_ = 0;
  int fd_ = -1;                        // positional reading: the file's descriptor
  std::int64_t data_start_ = 0;        // offset of the first frame header
  std::int64_t positional_frames_ = -1;
  const std::uint8_t* map_ = nullptr;  // mapped reading: the whole mapping (page-aligned)
  std::size_t map_bytes_ = 0;          // its length
  std::size_t map_skip_ = 0;           // bytes before the first frame header
  std::size_t map_next_ = 0;           // offset (from mapping()) of the next frame header
  bool keep_going_ = false;
  bool ended_ = false;                 // keep_going_: a damaged frame ended the stream
  std::string lost_;
};

/// Parses a stream header line (without "YUV4MPEG2" or with it; no trailing newline needed).
/// Exposed for tests. Throws Error naming `name` on invalid or unsupported content.
Y4mInfo parse_y4m_header(const std::string& line, const std::string& name);

/// The stream's frames as planar frames for the encoder (core/planar_format.hpp): chroma layout and
/// info.conversion, or else the rounded integer conversion of info.matrix / info.range, the
/// arithmetic of yuv_to_rgb24.
PlanarFormat planar_format(const Y4mInfo& info);

/// Converts one frame to interleaved RGB (3 bytes per pixel, `stride` bytes between rows).
/// Integer fixed point (16 fractional bits), rounded and clamped to 0..255, honouring
/// info.matrix (BT.601/BT.709) and info.range (limited/full). Chroma is upsampled by
/// nearest neighbour (each chroma sample covers its 2x2 / 2x1 block), which is what FFmpeg's
/// default unscaled yuv420p -> rgb24 path does. Mono gives R = G = B = the range-expanded Y.
/// No allocation.
void yuv_to_rgb24(const Y4mPlanes& planes, const Y4mInfo& info, std::uint8_t* rgb,
                  std::size_t stride);

}  // namespace mjpeg::io
