// Y4mSource (include/mjpeg/y4m.hpp): the Y4M reader of src/io behind the public FrameSource,
// and for encode_all the pipeline's Y4M sources (positional or mapped reads; src/pipeline).
#include "mjpeg/y4m.hpp"

#include <memory>
#include <mutex>
#include <string>

#include "internal.hpp"
#include "io/y4m.hpp"
#include "pipeline/frame_source.hpp"

namespace mjpeg {

namespace {

FrameFormat public_format(PlanarChroma c) {
  switch (c) {
    case PlanarChroma::c420: return FrameFormat::yuv420p;
    case PlanarChroma::c422: return FrameFormat::yuv422p;
    case PlanarChroma::c444: return FrameFormat::yuv444p;
    case PlanarChroma::mono:
    case PlanarChroma::none: break;
  }
  return FrameFormat::yuv400p;
}

}  // namespace

struct Y4mSource::Impl {
  Impl(std::unique_ptr<io::Y4mReader> r, const Y4mReadOptions& o) : reader(std::move(r)), options(o) {
    if (o.first_frame < 0)
      throw UsageError("Y4mReadOptions: first_frame " + std::to_string(o.first_frame) +
                       " is negative");
    if (o.max_frames < -1)
      throw UsageError("Y4mReadOptions: max_frames " + std::to_string(o.max_frames) +
                       " is below -1");
    const io::Y4mInfo& header = reader->info();
    if (header.matrix_tagged) stream.header_matrix = header.matrix;
    if (header.range_tagged) stream.header_range = header.range;
    if (o.matrix) reader->set_matrix(*o.matrix);
    if (o.range) reader->set_range(*o.range);
    reader->set_keep_going(o.keep_going);
    const io::Y4mInfo& info = reader->info();
    stream.width = info.width;
    stream.height = info.height;
    stream.format = public_format(info.chroma);
    stream.matrix = info.matrix;
    stream.range = info.range;
    stream.fps_num = info.fps_num;
    stream.fps_den = info.fps_den;
    if (info.aspect_num > 0 && info.aspect_den > 0) {
      stream.aspect_num = info.aspect_num;
      stream.aspect_den = info.aspect_den;
    }
    stream.description = info.describe();
    stream.notices = info.notices;
    if (reader->positional_frames() >= 0) {
      std::int64_t n = reader->positional_frames() - o.first_frame;
      if (n < 0) n = 0;
      if (o.max_frames >= 0 && o.max_frames < n) n = o.max_frames;
      stream.frames = n;
    }
  }

  /// The pipeline's source, made on first use (its format is fixed then: set_coefficients
  /// comes before).
  pipeline::FrameSource& pipeline_source() {
    if (source) return *source;
    // The last frame it may read counts from the start of the stream.
    const Y4mReadOptions& o = options;
    const std::int64_t limit = o.max_frames < 0 ? -1 : o.first_frame + o.max_frames;
    // A range of a file of plain frame headers starts at its frame's fixed offset; otherwise
    // the frames before it are walked (mapped: their headers only) or read and dropped.
    const bool direct = o.first_frame > 0 && !o.map && reader->positional_frames() >= 0 &&
                        o.first_frame <= reader->positional_frames() &&
                        reader->plain_headers_before(o.first_frame);
    if (o.map && reader->map_frames())
      source = std::make_unique<pipeline::MappedY4mFrameSource>(*reader, limit);
    else
      source = std::make_unique<pipeline::Y4mFrameSource>(*reader, limit,
                                                          direct ? o.first_frame : 0);
    if (o.first_frame > 0 && !direct)
      source = std::make_unique<pipeline::SkipFrameSource>(std::move(source), o.first_frame);
    return *source;
  }

  std::unique_ptr<io::Y4mReader> reader;
  const Y4mReadOptions options;
  Y4mStream stream;
  std::unique_ptr<pipeline::FrameSource> source;
  std::mutex mutex;  // read(): one call at a time
};

Y4mSource::Y4mSource(const std::string& path, const Y4mReadOptions& options)
    : impl_(std::make_unique<Impl>(std::make_unique<io::Y4mReader>(path), options)) {}

Y4mSource::Y4mSource(std::FILE* stream, const std::string& name, const Y4mReadOptions& options)
    : impl_(std::make_unique<Impl>(std::make_unique<io::Y4mReader>(stream, name), options)) {
  if (stream == nullptr) throw UsageError("Y4mSource: null stream");
}

Y4mSource::~Y4mSource() = default;

const Y4mStream& Y4mSource::stream() const { return impl_->stream; }

VideoOptions Y4mSource::video_options() const {
  VideoOptions o;
  o.width = impl_->stream.width;
  o.height = impl_->stream.height;
  o.format = impl_->stream.format;
  o.matrix = impl_->stream.matrix;
  o.range = impl_->stream.range;
  o.jpeg.density = JfifDensity::pixel_aspect(impl_->stream.aspect_num, impl_->stream.aspect_den);
  o.coefficients = impl_->stream.coefficients;
  return o;
}

void Y4mSource::set_coefficients(const YuvCoefficients& k) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (impl_->source)
    throw UsageError("Y4mSource::set_coefficients: the frames are being read already");
  impl_->reader->set_conversion(
      math::YccToRgb{k.truncated ? 1 : 0, k.y0, k.cy, k.cr_r, k.cb_g, k.cr_g, k.cb_b});
  impl_->stream.coefficients = k;
}

bool Y4mSource::read(std::int64_t index, std::uint8_t* dst) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  pipeline::FrameSource& s = impl_->pipeline_source();
  std::int64_t got = -1;
  const pipeline::SourceFormat f = s.format();
  if (!s.read_into(0, dst, f.row_bytes(), got)) return false;
  if (got != index)
    throw UsageError("Y4mSource::read: frame " + std::to_string(index) +
                     " asked for out of order (the stream is at frame " + std::to_string(got) + ")");
  return true;
}

std::int64_t Y4mSource::frame_count() const { return impl_->stream.frames; }

std::string Y4mSource::lost() const { return impl_->reader->lost(); }

// The library's positional (or mapped) reader of the stream.
pipeline::FrameSource* Y4mSource::library_reader(const VideoOptions& o) {
  Impl& impl = *impl_;
  const Y4mStream& s = impl.stream;
  const auto same = [](const std::optional<YuvCoefficients>& a,
                       const std::optional<YuvCoefficients>& b) {
    if (!a || !b) return !a && !b;
    return a->truncated == b->truncated && a->y0 == b->y0 && a->cy == b->cy &&
           a->cr_r == b->cr_r && a->cb_g == b->cb_g && a->cr_g == b->cr_g && a->cb_b == b->cb_b;
  };
  if (o.width != s.width || o.height != s.height || o.format != s.format ||
      o.matrix != s.matrix || o.range != s.range || !same(o.coefficients, s.coefficients))
    throw UsageError("encode_all: the VideoOptions do not describe the Y4M stream (" +
                     s.description + "); start from Y4mSource::video_options()");
  std::lock_guard<std::mutex> lock(impl.mutex);
  return &impl.pipeline_source();
}

pipeline::FrameSource* library_reader(FrameSource& source, const VideoOptions& options) {
  return source.library_reader(options);
}

}  // namespace mjpeg
