#include "frame_store.hpp"

#include "api/internal.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

#include <fmt/format.h>

#include "jpeg/planar.hpp"
#include "mjpeg/error.hpp"
#include "video_input.hpp"
#include "wording.hpp"

namespace mjpeg::app {

std::vector<ImageView> FrameStore::views() const {
  std::vector<ImageView> v;
  v.reserve(frames.size());
  for (const io::Image& f : frames) v.push_back(f.view());
  return v;
}

std::uint64_t FrameStore::bytes() const {
  std::uint64_t total = 0;
  for (const io::Image& f : frames) total += f.pixels.size();
  for (const auto& f : planar) total += f.size();
  return total;
}

std::unique_ptr<pipeline::FrameSource> FrameStore::source(std::int64_t count) const {
  const std::size_t n = count < 0 ? this->count()
                                  : std::min<std::size_t>(this->count(), static_cast<std::size_t>(count));
  if (format.is_planar()) {
    std::vector<const std::uint8_t*> ptrs;
    for (std::size_t i = 0; i < n; ++i) ptrs.push_back(planar[i].data());
    return std::make_unique<pipeline::MemoryFrameSource>(std::move(ptrs), format, pinned());
  }
  std::vector<ImageView> v = views();
  v.resize(n);
  return std::make_unique<pipeline::MemoryFrameSource>(std::move(v), pinned());
}

void FrameStore::pin() {
  if (pinned()) return;
  std::vector<gpu::HostPin> p;
  for (const io::Image& f : frames) p.emplace_back(f.pixels.data(), f.pixels.size());
  for (const auto& f : planar) p.emplace_back(f.data(), f.size());
  pins = std::move(p);
}

std::vector<ImageView> FrameStore::pixel_views(std::vector<io::Image>& scratch) const {
  if (!format.is_planar()) return views();
  scratch.clear();
  scratch.reserve(planar.size());
  for (const auto& f : planar) {
    io::Image rgb(format.width, format.height, PixelFormat::rgb24);
    planar_to_rgb(planar_view(f.data(), format.width, format.height, format.planar),
                  rgb.pixels.data(), rgb.stride());
    scratch.push_back(std::move(rgb));
  }
  std::vector<ImageView> v;
  for (const io::Image& f : scratch) v.push_back(f.view());
  return v;
}

FrameSize parse_frame_size(const std::string& text, const std::string& option) {
  FrameSize z;
  char x = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &z.width, &x, &z.height, &extra) != 3 || x != 'x' ||
      z.width < 1 || z.height < 1 || z.width > kMaxDimension || z.height > kMaxDimension)
    throw UsageError(fmt::format("{}: '{}' is not WIDTHxHEIGHT (1..{} each)", option, text,
                                 kMaxDimension));
  return z;
}

FrameStore panning_frames(const io::Image& picture, int width, int height, int count) {
  if (width < 1 || height < 1 || count < 1)
    throw UsageError(fmt::format("cannot make {} frames of {}x{}", count, width, height));
  const int ch = channels(picture.format);
  const int pw = picture.width, ph = picture.height;
  FrameStore store;
  store.frames.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    // A diagonal pan, 8 pixels right and 3 down per frame, wrapping around the tiled picture.
    const int x0 = static_cast<int>((8LL * i) % pw), y0 = static_cast<int>((3LL * i) % ph);
    io::Image frame(width, height, picture.format);
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
  store.format = pipeline::SourceFormat{width, height, picture.format};
  store.description = fmt::format("{} frames of {}x{} panning across a {}x{} picture", count,
                                  width, height, pw, ph);
  return store;
}

FrameStore load_frames(const std::string& input, std::int64_t max_frames, int width, int height,
                       const NoticeSink& notice) {
  if (max_frames < 1) throw UsageError("at least one frame is needed");
  const InputKind kind = input_kind(input);
  if (kind == InputKind::image) {
    const io::Image picture = read_input_image(input, notice);
    FrameStore store = panning_frames(picture, width > 0 ? width : picture.width,
                                      height > 0 ? height : picture.height,
                                      static_cast<int>(std::min<std::int64_t>(max_frames, 1 << 20)));
    store.description += " (" + input + ")";
    return store;
  }
  if (width > 0 || height > 0)
    throw UsageError("--size applies to a still-image input (video frames keep their size)");
  VideoInput in = open_video_input(input, kind, max_frames);
  for (const std::string& n : in.notices) notice(n);
  const pipeline::SourceFormat f = api::source_format(in.format);
  FrameStore store;
  store.format = f;
  store.fps_num = in.fps_num;
  store.fps_den = in.fps_den;
  for (std::int64_t index = 0;; ++index) {
    if (f.is_planar()) {  // as the encoder reads it: planes, 1.5 bytes per pixel at 4:2:0
      std::vector<std::uint8_t> frame(f.frame_bytes());
      if (!in.source->read(index, frame.data())) break;
      store.planar.push_back(std::move(frame));
    } else {
      io::Image frame(f.width, f.height, f.format);
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
