#include <cstdint>
#include <vector>

#include <mjpeg/video.hpp>

int main() {
  mjpeg::VideoOptions options;
  options.width = 640;
  options.height = 360;
  options.format = mjpeg::FrameFormat::rgb24;
  options.jpeg.quality = 85;
  options.offload = mjpeg::Offload::cpu;  // or sok, sok_pinned, aok with a GPU

  mjpeg::FileSink avi("minimal.avi", options.width, options.height, 25, 1);
  mjpeg::VideoEncoder encoder(options, avi);  // frames go to the AVI, in order
  std::vector<std::uint8_t> rgb(mjpeg::frame_bytes(options));
  for (int t = 0; t < 50; ++t) {
    for (std::size_t i = 0; i < rgb.size(); ++i) rgb[i] = std::uint8_t(i / 3 % 640 + 4 * t);
    encoder.encode(mjpeg::FrameView::packed(rgb.data(), options.width, options.height));
  }  // encode() copies the frame: `rgb` may be rewritten as soon as it returns
  encoder.finish();
  avi.close();
  return 0;
}
