// NvdecSource (include/mjpeg/nvdec.hpp): the NVDEC decoder of cuda/nvdec.hpp behind the public
// FrameSource, and for encode_all a pipeline source whose frames lie in device memory.
#include "mjpeg/nvdec.hpp"

#include <mutex>
#include <string>

#include "device_frames.hpp"
#include "internal.hpp"
#include "nvdec.hpp"
#include "pipeline/frame_source.hpp"

namespace mjpeg {

namespace {

gpu::NvdecCodec gpu_codec(VideoCodec c) {
  switch (c) {
    case VideoCodec::h264: return gpu::NvdecCodec::h264;
    case VideoCodec::hevc: return gpu::NvdecCodec::hevc;
    case VideoCodec::vp9: return gpu::NvdecCodec::vp9;
    case VideoCodec::mpeg2: return gpu::NvdecCodec::mpeg2;
  }
  throw UsageError("unknown VideoCodec");
}

gpu::NvdecVideo gpu_video(const CompressedVideo& v) {
  gpu::NvdecVideo g;
  g.codec = gpu_codec(v.codec);
  g.width = v.width;
  g.height = v.height;
  g.bit_depth = v.bit_depth;
  g.chroma = v.chroma == FrameFormat::yuv420p   ? PlanarChroma::c420
             : v.chroma == FrameFormat::yuv422p ? PlanarChroma::c422
             : v.chroma == FrameFormat::yuv444p ? PlanarChroma::c444
             : v.chroma == FrameFormat::yuv400p ? PlanarChroma::mono
                                                : PlanarChroma::none;
  g.full_range = v.full_range;
  return g;
}

/// The pipeline's view: frames written into the slots' device pixels (aok) or read to the host.
class DeviceSource final : public pipeline::FrameSource {
 public:
  DeviceSource(gpu::NvdecDecoder& d, const VideoOptions& o)
      : decoder_(d), format_(api::source_format(o)) {}
  pipeline::SourceFormat format() const override { return format_; }
  void set_range(std::int64_t first, std::int64_t count) {
    first_ = first;
    count_ = count;
  }
  bool read_into(int, std::uint8_t* dst, std::size_t, std::int64_t& index) override {
    if (!skip_first()) return false;
    if (!decoder_.next_frame_host(dst, index)) return false;
    return in_range(index);
  }
  /// Drops the next frame; false at the end of the range.
  bool drop(std::int64_t& index) {
    if (!skip_first()) return false;
    if (!decoder_.next_frame(index, [](const std::uint8_t*) -> gpu::StreamHandle { return nullptr; }))
      return false;
    return in_range(index);
  }
  // The decoders run on threads of their own; a producer only issues a device-to-device copy,
  // and one more overlaps its wait for the next frame with that.
  int max_useful_producers() const override { return 2; }
  bool device_frames() const override { return true; }
  bool read_device(int, DeviceSlot& slot, std::int64_t& index) override {
    const std::size_t bytes = decoder_.frame_bytes();
    if (!skip_first()) return false;
    // A frame past the range is taken, but not written into the slot.
    bool past = false;
    const bool got = decoder_.next_frame(index, [&](const std::uint8_t* frame) -> gpu::StreamHandle {
      if (count_ >= 0 && index - first_ >= count_) {
        past = true;
        return nullptr;
      }
      gpu::StreamHandle used = nullptr;
      slot.write([&](std::uint8_t* dst, gpu::StreamHandle stream) {
        gpu::copy_device(dst, frame, bytes, stream);
        used = stream;
      });
      return used;
    });
    if (!got || past) return false;
    index -= first_;
    return true;
  }

 private:
  /// Drops the frames before the range, once (the first reader does it, the others wait).
  bool skip_first() {
    std::lock_guard<std::mutex> lock(skip_mutex_);
    while (skipped_ < first_) {
      std::int64_t i = 0;
      if (!decoder_.next_frame(i, [](const std::uint8_t*) -> gpu::StreamHandle { return nullptr; }))
        return false;
      ++skipped_;
    }
    return true;
  }
  bool in_range(std::int64_t& index) {
    index -= first_;
    return count_ < 0 || index < count_;
  }

  gpu::NvdecDecoder& decoder_;
  pipeline::SourceFormat format_;
  std::int64_t first_ = 0, count_ = -1, skipped_ = 0;
  std::mutex skip_mutex_;
};

}  // namespace

const char* to_string(VideoCodec c) {
  switch (c) {
    case VideoCodec::h264: return "H.264";
    case VideoCodec::hevc: return "HEVC";
    case VideoCodec::vp9: return "VP9";
    case VideoCodec::mpeg2: return "MPEG-2";
  }
  return "?";
}

std::string nvdec_problem(const CompressedVideo& video, int device) {
  try {
    return gpu::nvdec_problem(gpu_video(video), device);
  } catch (const std::exception& e) {
    return e.what();
  }
}

struct NvdecSource::Impl {
  Impl(const CompressedVideo& v, const VideoOptions& o, NextPacket next, int device, int decoders,
       std::int64_t hint)
      : format(o),
        decoder(gpu_video(v), device, decoders, hint,
                [next = std::move(next)](gpu::NvdecPacket& p) {
                  CompressedPacket c;
                  if (!next(c)) return false;
                  p.data = std::move(c.data);
                  p.key = c.key;
                  p.discard = c.discard;
                  return true;
                }),
        source(decoder, o) {}
  const VideoOptions format;
  gpu::NvdecDecoder decoder;
  DeviceSource source;
  std::int64_t next = 0;
};

namespace {
VideoOptions checked(const CompressedVideo& v, const VideoOptions& o) {
  validate(o);
  if (o.width != v.width || o.height != v.height || o.format != FrameFormat::yuv420p)
    throw UsageError("NvdecSource: the VideoOptions must describe " + std::to_string(v.width) +
                     "x" + std::to_string(v.height) + " yuv420p frames");
  return o;
}
}  // namespace

NvdecSource::NvdecSource(const CompressedVideo& video, const VideoOptions& format,
                         NextPacket next, int device, int decoders, std::int64_t frames_hint)
    : impl_(std::make_unique<Impl>(video, checked(video, format), std::move(next), device,
                                   decoders, frames_hint)) {}

NvdecSource::~NvdecSource() = default;

bool NvdecSource::read(std::int64_t index, std::uint8_t* dst) {
  std::int64_t got = -1;
  if (index != impl_->next)
    throw UsageError("NvdecSource::read: frames come in order (" + std::to_string(impl_->next) +
                     " next, not " + std::to_string(index) + ")");
  if (!impl_->source.read_into(0, dst, 0, got)) return false;
  ++impl_->next;
  return true;
}

bool NvdecSource::skip() {
  std::int64_t got = -1;
  if (!impl_->source.drop(got)) return false;
  ++impl_->next;
  return true;
}

void NvdecSource::set_range(std::int64_t first, std::int64_t count) {
  if (first < 0) throw UsageError("NvdecSource::set_range: a negative first frame");
  impl_->source.set_range(first, count);
}

int NvdecSource::decoders() const { return impl_->decoder.decoders(); }

NvdecActivity NvdecSource::activity() const { return impl_->decoder.activity(); }

// The pipeline's source of the decoded frames in device memory.
pipeline::FrameSource* NvdecSource::library_reader(const VideoOptions& o) {
  const VideoOptions& f = impl_->format;
  if (o.width != f.width || o.height != f.height || o.format != f.format)
    throw UsageError("encode_all: the VideoOptions do not describe the NvdecSource's frames");
  return &impl_->source;
}
}  // namespace mjpeg
