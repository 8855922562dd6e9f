#include "raw_source.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "app/common/wording.hpp"
#include "input_relay.hpp"
#include "mjpeg/error.hpp"
#include "ycbcr.hpp"

namespace mjpeg::app {
namespace {

/// How frames of a raw pixel format lie in the input, and what the encoder gets of them.
struct RawLayout {
  FrameFormat format = FrameFormat::rgb24;  ///< as handed on (nv12: yuv420p)
  bool nv12 = false;                        ///< Cb and Cr interleaved in one plane
  std::size_t bytes = 0;                    ///< one frame in the input
};

RawLayout raw_layout(const RawFormat& raw) {
  RawLayout l;
  const std::string& f = raw.pix_fmt;
  if (f == "yuv420p") l.format = FrameFormat::yuv420p;
  else if (f == "yuv422p") l.format = FrameFormat::yuv422p;
  else if (f == "yuv444p") l.format = FrameFormat::yuv444p;
  else if (f == "nv12") l.format = FrameFormat::yuv420p, l.nv12 = true;
  else if (f == "gray") l.format = FrameFormat::yuv400p;
  else if (f == "rgb24") l.format = FrameFormat::rgb24;
  else if (f == "bgr24") l.format = FrameFormat::bgr24;
  else
    throw UsageError(fmt::format("--pix-fmt '{}': not a raw format mjpeg reads ({})", f,
                                 raw_pixel_formats()));
  VideoOptions o;
  o.width = raw.width;
  o.height = raw.height;
  o.format = l.format;
  l.bytes = frame_bytes(o);  // nv12's frame is as large as yuv420p's
  return l;
}

/// Reads the frames, each straight into the slot (nv12: its chroma split on the way).
class RawSource final : public mjpeg::FrameSource {
 public:
  RawSource(InputFile& file, const RawFormat& raw, const RawLayout& layout, std::int64_t first,
            std::int64_t count, bool keep_going)
      : file_(file), raw_(raw), layout_(layout), first_(first), count_(count),
        keep_going_(keep_going) {
    luma_ = static_cast<std::size_t>(raw.width) * static_cast<std::size_t>(raw.height);
    if (layout.nv12) chroma_ = (layout.bytes - luma_) / 2;
  }
  bool concurrent_reads() const override { return file_.regular(); }
  std::int64_t frame_count() const override { return count_; }
  /// With --keep-going: what a last frame cut short cost ("" when nothing).
  std::string lost() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return lost_;
  }

  bool read(std::int64_t index, std::uint8_t* dst) override {
    if (count_ >= 0 && index >= count_) return false;
    if (file_.regular()) {
      const std::int64_t at = (first_ + index) * static_cast<std::int64_t>(layout_.bytes);
      return take(index, dst, [&](std::uint8_t* to, std::size_t n, std::size_t offset) {
        return read_at(to, n, at + static_cast<std::int64_t>(offset));
      });
    }
    std::lock_guard<std::mutex> lock(stream_mutex_);
    if (ended_) return false;
    for (; skipped_ < first_; ++skipped_) {  // --start: the frames before the range
      std::vector<std::uint8_t> scratch(layout_.bytes);
      if (!take(-1 - skipped_, scratch.data(), [&](std::uint8_t* to, std::size_t n, std::size_t) {
            return read_stream(to, n);
          })) {
        ended_ = true;
        return false;
      }
    }
    const bool got = take(index, dst, [&](std::uint8_t* to, std::size_t n, std::size_t) {
      return read_stream(to, n);
    });
    ended_ = !got;
    return got;
  }

 private:
  /// One frame through `get(to, n, offset)` (bytes read into `to`, fewer only at the end):
  /// false at a clean end; a frame cut short is an error or, with --keep-going, the end.
  /// `index` < 0: a frame skipped by --start.
  template <class Get>
  bool take(std::int64_t index, std::uint8_t* dst, Get get) {
    std::size_t got = 0;
    if (!layout_.nv12) {
      got = get(dst, layout_.bytes, 0);
    } else {
      thread_local std::vector<std::uint8_t> uv;
      uv.resize(2 * chroma_);
      got = get(dst, luma_, 0);
      if (got == luma_) got += get(uv.data(), uv.size(), luma_);
      if (got == layout_.bytes) {
        std::uint8_t* cb = dst + luma_;
        std::uint8_t* cr = cb + chroma_;
        for (std::size_t i = 0; i < chroma_; ++i) {
          cb[i] = uv[2 * i];
          cr[i] = uv[2 * i + 1];
        }
      }
    }
    if (got == layout_.bytes) return true;
    if (got == 0) return false;
    const std::int64_t frame = first_ + (index < 0 ? -1 - index : index) + 1;  // 1-based
    const std::string what = fmt::format(
        "'{}' ends inside frame {}: {} of its {} bytes ({}x{} {}), not a whole number of frames",
        file_.name(), frame, got, layout_.bytes, raw_.width, raw_.height, raw_.pix_fmt);
    if (!keep_going_)
      throw Error(what + "; nothing written (--keep-going encodes the complete frames)");
    std::lock_guard<std::mutex> lock(mutex_);
    lost_ = fmt::format("--keep-going: {}; that frame is left out, the {} before it encoded",
                        what, count_of(frame - 1 - first_, "frame", "frames"));
    return false;
  }

  std::size_t read_at(std::uint8_t* to, std::size_t n, std::int64_t offset) const {
    std::size_t got = 0;
    while (got < n) {
      const ssize_t r = ::pread(file_.fd(), to + got, n - got,
                                file_.start() + offset + static_cast<std::int64_t>(got));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0)
        throw Error(fmt::format("cannot read input '{}': {}", file_.name(), std::strerror(errno)));
      if (r == 0) break;
      got += static_cast<std::size_t>(r);
    }
    return got;
  }

  std::size_t read_stream(std::uint8_t* to, std::size_t n) {
    std::size_t got = 0;
    while (got < n) {
      const std::size_t r = file_.read(to + got, n - got);
      if (r == 0) break;
      got += r;
    }
    return got;
  }

  InputFile& file_;
  const RawFormat raw_;
  const RawLayout layout_;
  const std::int64_t first_;
  const std::int64_t count_;  ///< regular files: the frames to encode; streams: -1 (or --frames)
  const bool keep_going_;
  std::size_t luma_ = 0, chroma_ = 0;
  mutable std::mutex mutex_;
  std::string lost_;
  std::mutex stream_mutex_;
  std::int64_t skipped_ = 0;
  bool ended_ = false;
};

}  // namespace

const char* raw_pixel_formats() { return "yuv420p, yuv422p, yuv444p, nv12, gray, rgb24, bgr24"; }

VideoInput open_raw(std::unique_ptr<InputFile> file, const InputOptions& options) {
  const RawFormat& raw = options.raw;
  if (raw.width <= 0 || raw.height <= 0)
    throw UsageError(fmt::format("--pix-fmt {}: raw frames need their size, --size WxH",
                                 raw.pix_fmt));
  const RawLayout layout = raw_layout(raw);
  InputFile& f = *file;
  // A regular file's frames are counted from its size; a last one cut short is said at once
  // unless --frames stops before it.
  std::int64_t count = options.max_frames;
  std::string cut_short;
  if (f.regular()) {
    const std::int64_t bytes = static_cast<std::int64_t>(layout.bytes);
    const std::int64_t whole = f.size() / bytes;
    std::int64_t n = std::max<std::int64_t>(0, whole - options.start);
    if (count < 0 || count > n) {
      if (f.size() % bytes != 0) {
        const std::string what = fmt::format(
            "'{}' ends inside frame {}: {} of its {} bytes ({}x{} {}), not a whole number of "
            "frames",
            f.name(), whole + 1, f.size() % bytes, bytes, raw.width, raw.height, raw.pix_fmt);
        if (!options.keep_going)
          throw Error(what + "; nothing written (--keep-going encodes the complete frames)");
        cut_short = fmt::format("--keep-going: {}; that frame is left out, the {} before it "
                                "encoded",
                                what, count_of(n, "frame", "frames"));
      }
      count = n;
    }
  }
  auto source = std::make_unique<RawSource>(f, raw, layout, options.start, count,
                                            options.keep_going);
  const RawSource* reader = source.get();
  VideoInput in;
  in.fps_num = raw.fps_num;
  in.fps_den = raw.fps_den;
  in.frame_count = f.regular() ? count : options.max_frames;
  if (!raw.fps_given)
    in.notices.push_back(fmt::format("{}: raw frames carry no frame rate; 25/1 fps is assumed "
                                     "(--fps states it)",
                                     f.name()));
  std::string how;
  if (is_planar(layout.format)) {
    const YuvMatrix matrix = stated_matrix(options).value_or(YuvMatrix::bt601);
    const YuvRange range = stated_range(options).value_or(YuvRange::limited);
    if (layout.format != FrameFormat::yuv400p)
      colour_notices(f.name(), "raw frames do not say", raw.width, raw.height, std::nullopt,
                     std::nullopt, matrix, range, options, in.notices);
    const PlanarInput planes = planar_input(layout.format, raw.width, raw.height, matrix, range);
    in.format = planes.format;
    in.source = planar_source(std::move(source), planes);
    how = fmt::format("{}, {} range, {}", planes.how(),
                      range == YuvRange::full ? "full" : "limited",
                      matrix == YuvMatrix::bt709    ? "BT.709"
                      : matrix == YuvMatrix::bt2020 ? "BT.2020"
                                                    : "BT.601");
  } else {
    in.format.width = raw.width;
    in.format.height = raw.height;
    in.format.format = layout.format;
    in.source = std::move(source);
    how = "pixels as they are";
  }
  in.description = fmt::format("{}x{} {}/{} fps raw {}, {}, {}", raw.width, raw.height,
                               raw.fps_num, raw.fps_den, raw.pix_fmt,
                               in.frame_count >= 0
                                   ? count_of(in.frame_count, "frame", "frames")
                                   : std::string("? frames"),
                               how);
  in.final_notices = [reader, cut_short]() -> std::vector<std::string> {
    if (!cut_short.empty()) return {cut_short};
    const std::string lost = reader->lost();
    if (lost.empty()) return {};
    return {lost};
  };
  if (f.relay() != nullptr)
    in.source = std::make_unique<RelaySource>(std::move(in.source), *f.relay());
  in.own(std::move(file));
  return in;
}

}  // namespace mjpeg::app
