// mjpeg/y4m.hpp: YUV4MPEG2 (.y4m) input for encode_all, read by the library itself.
//
// A Y4mSource is a FrameSource that encode_all reads the fastest way the file allows: a
// regular file of plain frame headers (as FFmpeg writes them) is read positionally, several
// frames at once on several threads, straight into the encoder's slots; with `map` its frames
// are used where they lie in the page cache (the cpu mode transforms them there, the GPU modes
// upload them from there once they are page-locked). Pipes and files with per-frame parameters
// are read one frame after another. Every way gives the same bytes.
//
// Errors: the constructors throw mjpeg::Error for a file that cannot be opened or a header that
// is invalid or unsupported (more than 8 bits per sample), with the reader's message; read()
// and encode_all throw Error for a truncated frame or a malformed frame header (unless
// Y4mReadOptions::keep_going).
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mjpeg/video.hpp"

namespace mjpeg {

/// How a Y4mSource reads its stream.
struct Y4mReadOptions {
  std::int64_t first_frame = 0;  ///< frames before it are read and dropped
  std::int64_t max_frames = -1;  ///< at most this many from first_frame on (-1: all)
  /// A regular file: map it and use its frames where they lie (see above) instead of reading
  /// each into a slot. Ignored for pipes. Faster in the cpu mode; in the GPU modes reading
  /// into the page-locked slots is faster (page-locking the mapping stalls other CUDA calls).
  bool map = false;
  /// The source's matrix and range when known from elsewhere (Y4M carries no matrix; FFmpeg
  /// writes only XCOLORRANGE): they override the header.
  std::optional<YuvMatrix> matrix;
  std::optional<YuvRange> range;
  /// A truncated or damaged stream (the last frame cut short, the stream ending inside a FRAME
  /// header, a malformed FRAME header) ends at the last complete frame instead of throwing
  /// Error; lost() then says what was left out.
  bool keep_going = false;
};

/// What a Y4M stream header says.
struct Y4mStream {
  int width = 0;
  int height = 0;
  FrameFormat format = FrameFormat::yuv420p;  ///< yuv420p, yuv422p, yuv444p or yuv400p
  YuvMatrix matrix = YuvMatrix::bt601;        ///< as read: Y4mReadOptions, the header, or BT.601
  YuvRange range = YuvRange::limited;         ///< as read: Y4mReadOptions, the header, or limited
  std::optional<YuvMatrix> header_matrix;     ///< what the header says (XCOLORMATRIX), if it does
  std::optional<YuvRange> header_range;       ///< what the header says (XCOLORRANGE), if it does
  std::optional<YuvCoefficients> coefficients;  ///< set_coefficients, when called
  int fps_num = 25;                           ///< 25/1 when the header has no rate
  int fps_den = 1;
  /// The pixel aspect ratio of the header's A tag (width over height of one pixel, e.g. 4:3
  /// for 1440x1080 HDV); 1:1 when the header has none or says 0:0 (unknown).
  int aspect_num = 1;
  int aspect_den = 1;
  /// Frames from first_frame on (max_frames applied) when the file's size tells (a regular
  /// file of plain frame headers), else -1.
  std::int64_t frames = -1;
  /// One line, e.g. "1920x1080 25/1 fps yuv 420jpeg, limited range, BT.601, progressive".
  std::string description;
  /// What a user should be told about the header, one line each (an interlaced source
  /// encoded as progressive, no frame rate in the header, ...).
  std::vector<std::string> notices;
};

class Y4mSource final : public FrameSource {
 public:
  /// Opens a file ("-": standard input) and reads its stream header.
  explicit Y4mSource(const std::string& path, const Y4mReadOptions& options = {});
  /// Reads from an open stream (not owned, not closed; e.g. a pipe); `name` is used in messages.
  Y4mSource(std::FILE* stream, const std::string& name, const Y4mReadOptions& options = {});
  ~Y4mSource() override;
  Y4mSource(const Y4mSource&) = delete;
  Y4mSource& operator=(const Y4mSource&) = delete;

  const Y4mStream& stream() const;
  /// Converts the frames to RGB with `k` (video.hpp's YuvCoefficients, e.g.
  /// swscale_coefficients() to convert as libswscale does) instead of the rounded conversion of
  /// the matrix and range; video_options() carries it. Before the first frame is read (the
  /// header, in stream(), may decide it); throws UsageError after.
  void set_coefficients(const YuvCoefficients& k);
  /// VideoOptions for this stream: width, height, format, matrix, range and coefficients set,
  /// and jpeg.density to the pixel aspect ratio (JfifDensity::pixel_aspect; the default for
  /// 1:1), the rest at their defaults. encode_all refuses options whose size, format, matrix,
  /// range or coefficients differ.
  VideoOptions video_options() const;

  /// Frame `index` of the stream (from first_frame on), one call at a time, in order; used by
  /// encode_all only when the source is wrapped in another FrameSource (otherwise it reads the
  /// stream directly, as the file comment says).
  bool read(std::int64_t index, std::uint8_t* dst) override;
  std::int64_t frame_count() const override;
  /// With Y4mReadOptions::keep_going, once the stream was read: what a truncated or damaged end
  /// left out, one line naming the frame ("" when the stream was whole).
  std::string lost() const;

 private:
  pipeline::FrameSource* library_reader(const VideoOptions& options) override;
  struct Impl;  ///< the library's reader and its own source (src/api)
  std::unique_ptr<Impl> impl_;
};

}  // namespace mjpeg
