// mjpeg/stored_frames.hpp: the JPEG frames of an M-JPEG file, found without decoding them.
//
// StoredFrames maps an AVI (MJPG, OpenDML segments included) or a raw M-JPEG stream (.mjpeg:
// JPEGs back to back), as FileSink writes them, and finds where each frame's bytes lie, so that
// a program can copy frames from one file to another at the speed of the disk: what
// `mjpeg join` does. It also reads back the note that FileSinkOptions::note stored with the
// file. Nothing is decoded; each frame is only checked to begin with SOI and end with EOI.
//
// Errors: the constructor throws mjpeg::Error naming the file and what is wrong with it: not an
// AVI or an M-JPEG stream, cut short (a RIFF segment, chunk or JPEG that runs past the end of
// the file), a frame that is no whole JPEG, header counts that disagree with the frames stored,
// or chunks of another kind than video, audio, index and JUNK (an AVI's audio chunks are
// counted and skipped: the frames alone are read).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "mjpeg/video.hpp"

namespace mjpeg {

class StoredFrames {
 public:
  enum class Container { avi, mjpeg_stream };

  /// Maps `path` and finds its frames; which container it is comes from its content.
  explicit StoredFrames(const std::string& path);
  ~StoredFrames();
  StoredFrames(const StoredFrames&) = delete;
  StoredFrames& operator=(const StoredFrames&) = delete;

  Container container() const;
  /// The AVI header's frame size and rate; 0 for an M-JPEG stream, which has none.
  int width() const;
  int height() const;
  int fps_num() const;
  int fps_den() const;
  /// How many frames the file holds.
  std::int64_t frame_count() const;
  /// Frame `index` (0-based): its bytes in the mapping, valid while this object lives; index
  /// is set. Throws UsageError for an index outside 0 .. frame_count() - 1.
  EncodedFrame frame(std::int64_t index) const;
  /// The note stored with the file (FileSinkOptions::note), or "" when it has none.
  const std::string& note() const;
  /// The file's size in bytes.
  std::uint64_t file_bytes() const;
  /// The audio chunks an AVI holds beside its frames (not read); 0 for an M-JPEG stream.
  std::int64_t audio_chunks() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace mjpeg
