// Where encoded JPEG frames go: an AVI file, a raw .mjpeg stream, or one file per frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "mjpeg/files.hpp"

namespace mjpeg::io {

/// Receives complete JPEG frames (SOI..EOI) in display order.
/// close() finalizes the output and publishes it under its final name; a sink destroyed
/// without close() (an error or an abort) removes what it wrote and never throws.
class FrameSink {
 public:
  virtual ~FrameSink() = default;
  /// Appends one frame. Throws Error on I/O failure (e.g. disk full, with strerror).
  virtual void write_frame(const std::uint8_t* jpeg, std::size_t size) = 0;
  /// Finalizes (indexes, header counts) and renames into place. Throws Error on failure.
  virtual void close() = 0;
  virtual std::int64_t frames_written() const = 0;
  /// Bytes of output so far (container overhead included).
  virtual std::uint64_t bytes_written() const = 0;
  /// Text kept with the output where players ignore it, written by close() (before it): an AVI
  /// stores it in a 'JUNK' chunk after its last index, a .mjpeg stream after its last frame
  /// (see mjpeg/stored_frames.hpp, which reads it back). Other outputs have no place for it.
  virtual void set_note(const std::string& text) { static_cast<void>(text); }
};

/// What a note starts with in the file, so that a reader tells it from padding or other data.
inline constexpr char kNoteSignature[] = "MJPEG-NOTE\n";
inline constexpr std::size_t kNoteSignatureBytes = sizeof(kNoteSignature) - 1;

enum class OutputKind {
  avi,             ///< "*.avi": RIFF AVI, MJPG, idx1 + OpenDML (see avi_writer.hpp)
  mjpeg_stream,    ///< "*.mjpeg" / "*.mjpg" / "-" (stdout) / a device or FIFO of another
                   ///< name (/dev/null, a named pipe, /dev/fd/N): the JPEGs back to back
  image_sequence,  ///< a pattern with one %d / %0Nd conversion, e.g. "out/%05d.jpg"
};

/// Classifies an output path; throws UsageError for anything else (e.g. "out.mp4").
/// An existing character device or FIFO whose name has no output extension (/dev/null, a named
/// pipe, a shell's >(command)) is written in place like "-".
OutputKind output_kind(const std::string& path);

/// Opens the sink that `output_kind(path)` names. fps is the stream's frame rate as a
/// rational (used by AVI only). Image sequences number files from `first_number` (1, like
/// ffmpeg's image2 muxer). Unless `replace_existing`, no output replaces a file that exists
/// when it is published (Error "already exists (use -y to overwrite)"; the name is claimed
/// atomically, rename_no_replace); whether one exists before the work starts is the caller's
/// check (check_output_allowed). An AVI's RIFF segments are avi_riff_limit() bytes.
std::unique_ptr<FrameSink> make_frame_sink(const std::string& path, int width, int height,
                                           int fps_num, int fps_den, int first_number = 1,
                                           bool replace_existing = true);

/// Concatenated JPEGs (the "mjpeg" raw format ffmpeg reads with -f mjpeg).
class MjpegStreamWriter final : public FrameSink {
 public:
  explicit MjpegStreamWriter(const std::string& path, bool replace_existing = true);
  ~MjpegStreamWriter() override;
  void write_frame(const std::uint8_t* jpeg, std::size_t size) override;
  void close() override;
  std::int64_t frames_written() const override { return frames_; }
  std::uint64_t bytes_written() const override { return bytes_; }
  void set_note(const std::string& text) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::int64_t frames_ = 0;
  std::uint64_t bytes_ = 0;
};

/// One picture: the first (and only) frame of a stream as a .jpg file, written atomically.
class SingleJpegWriter final : public FrameSink {
 public:
  SingleJpegWriter(const std::string& path, bool replace_existing);
  ~SingleJpegWriter() override;
  /// Throws Error on a second frame (the caller limits the stream to one).
  void write_frame(const std::uint8_t* jpeg, std::size_t size) override;
  void close() override;
  std::int64_t frames_written() const override { return frames_; }
  std::uint64_t bytes_written() const override { return bytes_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::int64_t frames_ = 0;
  std::uint64_t bytes_ = 0;
};

/// One JPEG file per frame, named by a printf-style pattern with exactly one integer
/// conversion in the file name (%d, %5d or %05d; "%%" is a literal percent sign). The frames
/// are written into a hidden temporary folder beside them (".<first name>.tmp-<pid>-<n>") and
/// close() moves them all to their names: a failed or interrupted run leaves none of them, a
/// successful one all. Without replace_existing a name that exists is refused (when its frame
/// is written, and again when it is published); with it, a replaced file is kept until every
/// frame is in place, so that a failure while publishing puts the old ones back.
class ImageSequenceWriter final : public FrameSink {
 public:
  ImageSequenceWriter(const std::string& pattern, int first_number = 1,
                      bool replace_existing = true);
  ~ImageSequenceWriter() override;  ///< without close(): removes the folder and its frames
  ImageSequenceWriter(const ImageSequenceWriter&) = delete;
  ImageSequenceWriter& operator=(const ImageSequenceWriter&) = delete;
  void write_frame(const std::uint8_t* jpeg, std::size_t size) override;
  void close() override;
  std::int64_t frames_written() const override { return frames_; }
  std::uint64_t bytes_written() const override { return bytes_; }
  /// The file name for frame number `n` (e.g. 7 -> "out/00007.jpg").
  std::string file_name(std::int64_t n) const;

 private:
  std::string staged(std::int64_t n) const;  ///< frame n's file in the temporary folder
  void remove_folder() noexcept;

  SequencePattern pattern_;
  int first_number_ = 1;
  bool replace_existing_ = true;
  std::string folder_;  ///< the temporary folder; empty once published or removed
  int folder_slot_ = -1;
  std::int64_t frames_ = 0;
  std::uint64_t bytes_ = 0;
};

}  // namespace mjpeg::io
