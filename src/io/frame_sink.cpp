// Output selection by name, the raw .mjpeg stream writer and the image-sequence writer.
#include "io/frame_sink.hpp"

#include <cctype>

#include "io/atomic_file.hpp"
#include "io/avi_writer.hpp"
#include "io/sequence_pattern.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg::io {
namespace {

std::string lower_extension(const std::string& path) {
  const auto slash = path.rfind('/');
  const auto dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot + 1);
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

}  // namespace

bool is_sequence_pattern(const std::string& path) {
  SequencePattern p;
  return SequencePattern::parse(path, p);
}

OutputKind output_kind(const std::string& path) {
  if (path == "-") return OutputKind::mjpeg_stream;
  if (path.find('%') != std::string::npos) {
    if (!is_sequence_pattern(path))
      throw UsageError(path + ": an image-sequence output needs exactly one integer "
                              "conversion such as %05d (use %% for a literal percent sign)");
    const std::string ext = lower_extension(path);
    if (ext != "jpg" && ext != "jpeg")
      throw UsageError(path + ": image-sequence outputs must end in .jpg or .jpeg");
    return OutputKind::image_sequence;
  }
  const std::string ext = lower_extension(path);
  if (ext == "avi") return OutputKind::avi;
  if (ext == "mjpeg" || ext == "mjpg") return OutputKind::mjpeg_stream;
  throw UsageError(path + ": unsupported output type (use .avi, .mjpeg/.mjpg, or a pattern "
                          "like out/%05d.jpg)");
}

std::unique_ptr<FrameSink> make_frame_sink(const std::string& path, int width, int height,
                                           int fps_num, int fps_den, int first_number,
                                           bool replace_existing) {
  switch (output_kind(path)) {
    case OutputKind::avi:
      return std::make_unique<AviWriter>(path, width, height, fps_num, fps_den);
    case OutputKind::mjpeg_stream:
      return std::make_unique<MjpegStreamWriter>(path);
    case OutputKind::image_sequence:
      return std::make_unique<ImageSequenceWriter>(path, first_number, replace_existing);
  }
  throw UsageError(path + ": unsupported output");
}

// ---------------------------------------------------------------------------------------------
// MjpegStreamWriter: the frames back to back, nothing in between.
// ---------------------------------------------------------------------------------------------

struct MjpegStreamWriter::Impl {
  explicit Impl(const std::string& path) : file(path) {}
  AtomicFile file;
  bool closed = false;
};

MjpegStreamWriter::MjpegStreamWriter(const std::string& path) : impl_(std::make_unique<Impl>(path)) {}

MjpegStreamWriter::~MjpegStreamWriter() = default;  // AtomicFile abandons if not committed

void MjpegStreamWriter::write_frame(const std::uint8_t* jpeg, std::size_t size) {
  if (impl_->closed) throw Error(impl_->file.path() + ": write_frame after close");
  if (jpeg == nullptr || size == 0) throw UsageError(impl_->file.path() + ": empty frame");
  impl_->file.write(jpeg, size);
  ++frames_;
  bytes_ += size;
}

void MjpegStreamWriter::close() {
  if (impl_->closed) return;
  impl_->closed = true;
  impl_->file.commit();
}

// ---------------------------------------------------------------------------------------------
// ImageSequenceWriter
// ---------------------------------------------------------------------------------------------

ImageSequenceWriter::ImageSequenceWriter(const std::string& pattern, int first_number,
                                         bool replace_existing)
    : first_number_(first_number), replace_existing_(replace_existing) {
  if (!SequencePattern::parse(pattern, pattern_))
    throw UsageError(pattern + ": an image-sequence output needs exactly one integer "
                               "conversion such as %05d");
  if (first_number < 0) throw UsageError(pattern + ": negative first frame number");
}

std::string ImageSequenceWriter::file_name(std::int64_t n) const {
  return pattern_.name(n);
}

void ImageSequenceWriter::write_frame(const std::uint8_t* jpeg, std::size_t size) {
  if (jpeg == nullptr || size == 0) throw UsageError(pattern_.prefix + "...: empty frame");
  // Payloads of 4 KiB and more bypass the small buffer.
  AtomicFile file(file_name(first_number_ + frames_), replace_existing_, 4096);
  file.write(jpeg, size);
  file.commit();
  ++frames_;
  bytes_ += size;
}

}  // namespace mjpeg::io
