#include "quality_hook.hpp"

#include <fmt/format.h>

#include "app/input/frame_reader.hpp"
#include "quality_command.hpp"

namespace mjpeg::app {

WrittenQuality::WrittenQuality() { idle_.push_back(std::make_unique<JpegDecoder>()); }

std::unique_ptr<JpegDecoder> WrittenQuality::take_decoder() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!idle_.empty()) {
      std::unique_ptr<JpegDecoder> d = std::move(idle_.back());
      idle_.pop_back();
      return d;
    }
  }
  return std::make_unique<JpegDecoder>();
}

void WrittenQuality::give_back(std::unique_ptr<JpegDecoder> d) {
  std::lock_guard<std::mutex> lock(mutex_);
  idle_.push_back(std::move(d));
}

void WrittenQuality::add(std::int64_t index, const ImageView& pixels,
                         const std::vector<std::uint8_t>& jpeg) {
  std::unique_ptr<JpegDecoder> decoder = take_decoder();
  Image decoded;
  decoder->decode(jpeg, decoded);
  give_back(std::move(decoder));
  // Decoded frames are rgb24; gray sources compare as R = G = B (as `mjpeg quality` reads them).
  const quality::FrameMetrics m =
      pixels.format == PixelFormat::rgb24
          ? quality::compare(pixels, decoded.view())
          : quality::compare(to_rgb(pixels).view(), decoded.view());
  std::lock_guard<std::mutex> lock(mutex_);
  frames_[index] = m;
}

quality::Summary WrittenQuality::summary() const {
  std::vector<quality::FrameMetrics> ordered;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [index, m] : frames_) ordered.push_back(m);
  }
  return quality::summarize(ordered);
}

void WrittenQuality::print(std::FILE* out, const std::string& output) const {
  std::fprintf(out, "mjpeg: quality of %s against the input (decoded by %s):\n", output.c_str(),
               JpegDecoder::backend().c_str());
  for (const std::string& line : summary_lines(summary())) std::fprintf(out, "%s\n", line.c_str());
}

}  // namespace mjpeg::app
