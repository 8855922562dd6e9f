#include "frame_store.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

#include <fmt/format.h>

#include "mjpeg/error.hpp"
#include "app/input/video_input.hpp"
#include "app/common/wording.hpp"

namespace mjpeg::app {

std::vector<ImageView> FrameStore::views() const {
  std::vector<ImageView> v;
  v.reserve(frames.size());
  for (const Image& f : frames) v.push_back(f.view());
  return v;
}

std::uint64_t FrameStore::bytes() const {
  std::uint64_t total = 0;
  for (const Image& f : frames) total += f.pixels.size();
  for (const auto& f : planar) total += f.size();
  return total;
}

std::vector<const std::uint8_t*> FrameStore::pointers(std::size_t n) const {
  std::vector<const std::uint8_t*> p;
  for (std::size_t i = 0; i < n; ++i)
    p.push_back(is_planar() ? planar[i].data() : frames[i].pixels.data());
  return p;
}

MemorySource& FrameStore::source() const {
  if (!all_) all_ = std::make_shared<MemorySource>(pointers(count()), format);
  return *all_;
}

std::unique_ptr<MemorySource> FrameStore::first(std::int64_t n) const {
  const std::size_t k = n < 0 ? count() : std::min<std::size_t>(count(), static_cast<std::size_t>(n));
  return std::make_unique<MemorySource>(pointers(k), format);
}

std::vector<ImageView> FrameStore::pixel_views(std::vector<Image>& scratch) const {
  if (!is_planar()) return views();
  scratch.clear();
  scratch.reserve(planar.size());
  for (const auto& f : planar) {
    Image rgb(format.width, format.height, PixelFormat::rgb24);
    to_pixels(FrameView::contiguous(f.data(), format), format, rgb.pixels.data(), rgb.stride());
    scratch.push_back(std::move(rgb));
  }
  std::vector<ImageView> v;
  for (const Image& f : scratch) v.push_back(f.view());
  return v;
}

FrameStore panning_frames(const Image& picture, int width, int height, int count) {
  if (width < 1 || height < 1 || count < 1)
    throw UsageError(fmt::format("cannot make {} frames of {}x{}", count, width, height));
  const int ch = channels(picture.format);
  const int pw = picture.width, ph = picture.height;
  FrameStore store;
  store.frames.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    // A diagonal pan, 8 pixels right and 3 down per frame, wrapping around the tiled picture.
    const int x0 = static_cast<int>((8LL * i) % pw), y0 = static_cast<int>((3LL * i) % ph);
    Image frame(width, height, picture.format);
    for (int y = 0; y < height; ++y) {
      const std::uint8_t* src_row = picture.pixels.data() + picture.stride() * ((y0 + y) % ph);
      std::uint8_t* dst = frame.pixels.data() + frame.stride() * y;
      for (int x = 0; x < width;) {
        const int sx = (x0 + x) % pw;
        const int run = std::min(width - x, pw - sx);  // contiguous until the picture's edge
        std::copy(src_row + sx * ch, src_row + (sx + run) * ch, dst + x * ch);
        x += run;
      }
    }
    store.frames.push_back(std::move(frame));
  }
  store.format.width = width;
  store.format.height = height;
  store.format.format = picture.format == PixelFormat::gray8 ? FrameFormat::gray8 : FrameFormat::rgb24;
  store.description = fmt::format("{} frames of {}x{} panning across a {}x{} picture", count,
                                  width, height, pw, ph);
  return store;
}

FrameStore load_frames(Input opened, std::int64_t max_frames, int width, int height,
                       const NoticeSink& notice) {
  if (max_frames < 1) throw UsageError("at least one frame is needed");
  const std::string input = opened.name();
  if (opened.kind == InputKind::image) {
    const Image picture = read_input_image(*opened.file, notice);
    FrameStore store = panning_frames(picture, width > 0 ? width : picture.width,
                                      height > 0 ? height : picture.height,
                                      static_cast<int>(std::min<std::int64_t>(max_frames, 1 << 20)));
    store.description += " (" + input + ")";
    return store;
  }
  if (width > 0 || height > 0)
    throw UsageError("--size applies to a still-image input (video frames keep their size)");
  InputOptions options;
  options.max_frames = max_frames;
  VideoInput in = open_video_input(std::move(opened), options);
  for (const std::string& n : in.notices) notice(n);
  FrameStore store;
  store.format = in.format;
  store.fps_num = in.fps_num;
  store.fps_den = in.fps_den;
  const VideoOptions& f = in.format;
  for (std::int64_t index = 0;; ++index) {
    if (store.is_planar()) {  // as the encoder reads it: planes, 1.5 bytes per pixel at 4:2:0
      std::vector<std::uint8_t> frame(frame_bytes(f));
      if (!in.source->read(index, frame.data())) break;
      store.planar.push_back(std::move(frame));
    } else {
      Image frame(f.width, f.height,
                      f.format == FrameFormat::gray8 ? PixelFormat::gray8 : PixelFormat::rgb24);
      if (!in.source->read(index, frame.pixels.data())) break;
      store.frames.push_back(std::move(frame));
    }
  }
  if (store.count() == 0) throw Error(fmt::format("'{}' has no frames", input));
  store.description = fmt::format("{} of {} ({})",
                                  count_of(static_cast<std::int64_t>(store.count()), "frame", "frames"),
                                  input, in.description);
  return store;
}

}  // namespace mjpeg::app
