// `mjpeg encode --psnr`: quality figures of the frames just written, measured while encoding.
// The pipeline's FrameObserver hands each encoded frame with its source pixels (still in the
// slot, so the source is never decoded twice); the JPEG is decoded as `mjpeg quality` decodes
// an M-JPEG AVI (jpeg_decoder.hpp) and compared (src/quality/metrics.hpp).
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "app/input/jpeg_decoder.hpp"
#include "mjpeg/options.hpp"
#include "quality/metrics.hpp"

namespace mjpeg::app {

class WrittenQuality {
 public:
  WrittenQuality();  ///< throws Error when this build cannot decode JPEGs

  /// Thread-safe: decodes `jpeg`, compares it with `pixels` and keeps the figures of frame
  /// `index` (0-based). Matches pipeline::FrameObserver.
  void add(std::int64_t index, const ImageView& pixels, const std::vector<std::uint8_t>& jpeg);

  /// The summary over the frames added so far (in frame order).
  quality::Summary summary() const;

  /// Prints "mjpeg: quality of OUTPUT: ..." and the summary lines on `out`.
  void print(std::FILE* out, const std::string& output) const;

 private:
  std::unique_ptr<JpegDecoder> take_decoder();
  void give_back(std::unique_ptr<JpegDecoder> d);

  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<JpegDecoder>> idle_;   // one per concurrent caller, reused
  std::map<std::int64_t, quality::FrameMetrics> frames_;
};

}  // namespace mjpeg::app
