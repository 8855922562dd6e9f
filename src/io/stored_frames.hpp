// Where the frames of an M-JPEG file lie (mjpeg/stored_frames.hpp), found in memory: the
// parsers behind StoredFrames, on bytes already mapped (also what the fuzz target feeds).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mjpeg::io {

struct FrameSpan {
  std::size_t offset;  ///< of the JPEG's first byte (SOI)
  std::size_t size;
};

struct StoredLayout {
  bool avi = false;    ///< false: an M-JPEG stream (JPEGs back to back)
  int width = 0, height = 0, fps_num = 0, fps_den = 0;  ///< AVI header (0 for a stream)
  std::vector<FrameSpan> frames;
  std::int64_t audio_chunks = 0;  ///< an AVI's audio chunks ('##wb'), skipped
  std::string note;    ///< without its signature; "" when none
};

/// The length of the JPEG at `data` (SOI up to and including its EOI: markers walked, entropy
/// coded data scanned for the next marker), or 0 when the bytes end before its EOI.
/// Throws Error (naming `name` and `offset`, the JPEG's place in its file) when the bytes are
/// no JPEG.
std::size_t jpeg_length(const std::uint8_t* data, std::size_t size, const std::string& name,
                        std::size_t offset);

/// Parses `size` bytes of a file named `name` (for messages): an AVI ("RIFF....AVI ") or an
/// M-JPEG stream (it starts with SOI). Throws Error as StoredFrames documents.
StoredLayout parse_stored_frames(const std::uint8_t* data, std::size_t size,
                                 const std::string& name);

}  // namespace mjpeg::io
