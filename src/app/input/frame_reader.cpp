#include "frame_reader.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <vector>

#include "image_input.hpp"
#include "jpeg_decoder.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg::app {

Image to_rgb(const ImageView& image) {
  Image out(image.width, image.height, PixelFormat::rgb24);
  for (int y = 0; y < image.height; ++y) {
    const std::uint8_t* src = image.data + static_cast<std::size_t>(y) * image.stride;
    std::uint8_t* dst = out.pixels.data() + static_cast<std::size_t>(y) * out.stride();
    for (int x = 0; x < image.width; ++x) {
      if (image.format == PixelFormat::gray8) {
        dst[3 * x] = dst[3 * x + 1] = dst[3 * x + 2] = src[x];
      } else {
        dst[3 * x] = src[3 * x];
        dst[3 * x + 1] = src[3 * x + 1];
        dst[3 * x + 2] = src[3 * x + 2];
      }
    }
  }
  return out;
}

namespace {

/// One picture for the quality figures. A JPEG is decoded by JpegDecoder, exactly as the frames
/// of an M-JPEG AVI or .mjpeg stream are (and as `encode --psnr` decodes what it writes), so
/// that every kind of output gets the same figures for the same JPEG bytes; other pictures
/// through decode_input_image.
Image read_picture(InputFile& file) {
  const std::vector<std::uint8_t> bytes = file.read_all();
  const bool jpeg = bytes.size() >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF;
  // A JPEG with an EXIF orientation is read turned, as `encode` reads it.
  if (jpeg && JpegDecoder::available() && exif_orientation(bytes.data(), bytes.size()) == 1) {
    thread_local std::unique_ptr<JpegDecoder> decoder;
    if (!decoder) decoder = std::make_unique<JpegDecoder>();
    Image out;
    try {
      decoder->decode(bytes, out);
    } catch (const Error& e) {
      throw Error(fmt::format("'{}': {}", file.name(), e.what()));
    }
    return out;
  }
  return decode_input_image(bytes, file.name(), [](const std::string&) {});
}

}  // namespace

FrameReader::FrameReader(const std::string& path, std::int64_t max_frames, std::int64_t start)
    : path_(path), max_frames_(max_frames) {
  Input input = open_input(path);
  if (input.kind == InputKind::image && start > 0)
    throw UsageError(fmt::format("--start {}: '{}' is a still image (one frame)", start, path));
  if (input.kind == InputKind::image) {
    const Image image = read_picture(*input.file);
    still_ = to_rgb(image.view());
    is_still_ = true;
    width_ = still_.width;
    height_ = still_.height;
    frame_count_ = 1;
    description_ = fmt::format("{}x{} still image", width_, height_);
    return;
  }
  InputOptions options;
  options.max_frames = max_frames;
  options.start = start;
  options.read_image = [](const std::string& file) {
    InputFile in(file);
    return read_picture(in);
  };
  video_ = open_video_input(std::move(input), options);
  const VideoOptions& f = video_.format;
  width_ = f.width;
  height_ = f.height;
  frame_count_ = video_.frame_count;
  description_ = video_.description;
  if (f.format != FrameFormat::rgb24) planar_scratch_.resize(frame_bytes(f));
}

FrameReader::~FrameReader() = default;

bool FrameReader::next(Image& out) {
  if (max_frames_ >= 0 && read_ >= max_frames_) return false;
  if (is_still_) {
    if (read_ > 0) return false;
    out = still_;
    ++read_;
    return true;
  }
  if (out.width != width_ || out.height != height_ || out.format != PixelFormat::rgb24)
    out = Image(width_, height_, PixelFormat::rgb24);
  const VideoOptions& f = video_.format;
  if (!planar_scratch_.empty()) {
    if (!video_.source->read(read_, planar_scratch_.data())) return false;
    if (f.format == FrameFormat::gray8)  // a grey image sequence: R = G = B
      out = to_rgb(ImageView{planar_scratch_.data(), width_, height_, PixelFormat::gray8,
                             static_cast<std::size_t>(width_)});
    else  // the RGB the encoder encodes from these planes (the transforms' conversion)
      to_pixels(FrameView::contiguous(planar_scratch_.data(), f), f, out.pixels.data(),
                out.stride());
  } else if (!video_.source->read(read_, out.pixels.data())) {
    return false;
  }
  ++read_;
  return true;
}

}  // namespace mjpeg::app
