// FileSink (include/mjpeg/video.hpp): the frames into an AVI (with audio, metadata and the
// pixel aspect ratio), a raw .mjpeg stream, numbered JPEGs or one picture, through the writers
// of src/io. Each frame is checked against what the sink was made for before it is written.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "io/atomic_file.hpp"
#include "io/avi_writer.hpp"
#include "io/frame_sink.hpp"
#include "mjpeg/files.hpp"
#include "mjpeg/video.hpp"

namespace mjpeg {
namespace {

bool is_one_picture(const std::string& path) {
  const std::string ext = file_extension(path);
  return (ext == "jpg" || ext == "jpeg") && path.find('%') == std::string::npos;
}

/// What a frame's JPEG header says: its size and the layout of its components.
struct JpegLayout {
  int width = 0, height = 0;
  std::string components;  // per component: id, sampling factors (2 bytes each)
};

/// Reads the SOF segment of the complete JPEG file `data` (SOI first, EOI last). Returns an
/// empty string, or what is wrong with it.
std::string read_layout(const std::uint8_t* data, std::size_t size, JpegLayout& out) {
  if (data == nullptr || size < 4 || data[0] != 0xFF || data[1] != 0xD8)
    return "is not a JPEG (no SOI marker)";
  if (data[size - 2] != 0xFF || data[size - 1] != 0xD9) return "is not a complete JPEG (no EOI)";
  std::size_t at = 2;
  while (at + 4 <= size) {
    if (data[at] != 0xFF) return "is not a JPEG (a segment does not start with a marker)";
    const int marker = data[at + 1];
    if (marker == 0xFF) {  // fill byte
      ++at;
      continue;
    }
    const std::size_t length = std::size_t(data[at + 2]) << 8 | data[at + 3];
    if (length < 2 || at + 2 + length > size) return "is not a JPEG (a segment runs past its end)";
    const bool sof = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 &&
                     marker != 0xCC;
    if (sof) {
      const std::uint8_t* p = data + at + 4;
      if (length < 8) return "is not a JPEG (short SOF segment)";
      out.height = p[1] << 8 | p[2];
      out.width = p[3] << 8 | p[4];
      const int count = p[5];
      if (length < 8 + 3 * std::size_t(count)) return "is not a JPEG (short SOF segment)";
      out.components.clear();
      for (int c = 0; c < count; ++c) {
        out.components.push_back(char(p[6 + 3 * c]));
        out.components.push_back(char(p[7 + 3 * c]));
      }
      return {};
    }
    if (marker == 0xDA) break;  // scan data before any frame header
    at += 2 + length;
  }
  return "is not a JPEG (no frame header)";
}

std::string describe_layout(const std::string& components) {
  std::string text = std::to_string(components.size() / 2) + " component";
  if (components.size() != 2) text += "s";
  text += " sampled";
  for (std::size_t c = 1; c < components.size(); c += 2) {
    const int hv = static_cast<unsigned char>(components[c]);
    text += (c > 1 ? "," : "") + std::string(" ") + std::to_string(hv >> 4) + "x" +
            std::to_string(hv & 15);
  }
  return text;
}

}  // namespace

struct FileSink::Impl {
  std::string path;
  int width = 0, height = 0;
  FileSinkOptions options;
  std::unique_ptr<io::FrameSink> sink;
  io::AviWriter* avi = nullptr;  ///< the sink, when it is an AVI
  std::string layout;            ///< the first frame's components and sampling
  std::string failed;            ///< why the output was given up (then nothing is published)
  std::int64_t frames = 0;
  std::uint64_t bytes = 0;

  // Audio: the next packet not written yet.
  AudioPacket pending;
  bool have_pending = false;

  bool next_audio() {
    have_pending = options.audio->read(pending);
    return have_pending;
  }
  /// Writes the audio packets that start before `until` seconds (all of them: infinity).
  void pump_audio(double until) {
    if (avi == nullptr) return;
    while (have_pending && pending.time < until) {
      avi->write_audio(pending.data.data(), pending.data.size());
      next_audio();
    }
  }
  /// Gives the output up: its temporary file goes, and later calls report `why`.
  void drop(const std::string& why) {
    failed = why;
    if (sink) bytes = sink->bytes_written();
    sink.reset();
    avi = nullptr;
  }
  [[noreturn]] void give_up(const std::string& why) {
    drop(why);
    throw Error(why);
  }
};

void FileSink::check_name(const std::string& path) {
  if (!is_one_picture(path)) (void)io::output_kind(path);
}

void FileSink::check_target(const std::string& path, bool overwrite, int first_number) {
  if (path == "-") return;
  if (!is_one_picture(path) && io::output_kind(path) == io::OutputKind::image_sequence)
    check_output_allowed(io::ImageSequenceWriter(path).file_name(first_number), overwrite);
  else
    check_output_allowed(path, overwrite);
}

std::string FileSink::audio_problem(const std::string& path, const AudioFormat& format) {
  if (is_one_picture(path)) return "a .jpg holds one picture";
  switch (io::output_kind(path)) {
    case io::OutputKind::avi: {
      std::string why;
      return io::avi_audio(format, why) ? std::string() : why;
    }
    case io::OutputKind::mjpeg_stream: {
      const std::string ext = file_extension(path);  // "-", a device or a FIFO: any other
      return ext == "mjpeg" || ext == "mjpg" ? "." + ext + " holds only the video"
                                             : "an M-JPEG stream holds only the video";
    }
    case io::OutputKind::image_sequence: return "numbered JPEG files hold only the video";
  }
  return "this output holds only the video";
}

std::vector<std::string> FileSink::metadata_keys(const std::string& path) {
  if (is_one_picture(path) || io::output_kind(path) != io::OutputKind::avi) return {};
  return io::riff_info_keys();
}

FileSink::FileSink(const std::string& path, int width, int height, int fps_num, int fps_den,
                   bool overwrite)
    : FileSink(path, width, height, [&] {
        FileSinkOptions o;
        o.fps_num = fps_num;
        o.fps_den = fps_den;
        o.overwrite = overwrite;
        return o;
      }()) {}

FileSink::FileSink(const std::string& path, int width, int height, const FileSinkOptions& options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.path = path;
  m.width = width;
  m.height = height;
  m.options = options;
  if (width < 1 || width > kMaxDimension || height < 1 || height > kMaxDimension)
    throw UsageError("FileSink: size " + std::to_string(width) + "x" + std::to_string(height) +
                     " is outside 1.." + std::to_string(kMaxDimension));
  if (options.fps_num <= 0 || options.fps_den <= 0)
    throw UsageError("FileSink: frame rate " + std::to_string(options.fps_num) + "/" +
                     std::to_string(options.fps_den) + " is not positive");
  if (options.first_number < 0)
    throw UsageError("FileSink: first number " + std::to_string(options.first_number) +
                     " is negative");
  if (options.aspect_num <= 0 || options.aspect_den <= 0)
    throw UsageError("FileSink: pixel aspect ratio " + std::to_string(options.aspect_num) + ":" +
                     std::to_string(options.aspect_den) + " is not positive");
  check_name(path);  // UsageError for an unknown extension
  if (options.audio != nullptr) {
    const std::string problem = audio_problem(path, options.audio->format());
    if (!problem.empty()) throw UsageError("FileSink: " + path + ": " + problem);
  }
  if (path != "-" && (is_one_picture(path) || io::output_kind(path) != io::OutputKind::image_sequence))
    check_output_allowed(path, options.overwrite);
  if (is_one_picture(path)) {
    // One picture: the stream's only frame (a second one is an error).
    m.sink = std::make_unique<io::SingleJpegWriter>(path, options.overwrite);
    return;
  }
  if (io::output_kind(path) != io::OutputKind::avi) {
    m.sink = io::make_frame_sink(path, width, height, options.fps_num, options.fps_den,
                                 options.first_number, options.overwrite);
    if (!options.note.empty()) m.sink->set_note(options.note);
    return;
  }
  io::AviExtras extras;
  extras.replace_existing = options.overwrite;
  extras.aspect_num = options.aspect_num;
  extras.aspect_den = options.aspect_den;
  for (const auto& [key, text] : options.metadata) {
    const std::string id = io::riff_info_id(key);
    if (id.empty() || text.empty()) continue;
    const bool seen = std::any_of(extras.info.begin(), extras.info.end(),
                                  [&](const auto& e) { return e.first == id; });
    if (!seen) extras.info.emplace_back(id, text);
  }
  if (options.audio != nullptr) {
    std::string why;
    extras.audio = io::avi_audio(options.audio->format(), why);
    // The first packet says where the audio starts (the stream header holds it).
    if (m.next_audio()) extras.audio->start_seconds = std::max(0.0, m.pending.time);
  }
  auto avi = std::make_unique<io::AviWriter>(path, width, height, options.fps_num,
                                             options.fps_den, extras, io::avi_riff_limit());
  if (!options.note.empty()) avi->set_note(options.note);
  m.avi = avi.get();
  m.sink = std::move(avi);
}

FileSink::~FileSink() = default;

void FileSink::write(const EncodedFrame& frame) {
  Impl& m = *impl_;
  if (!m.failed.empty()) throw Error(m.failed);
  // One picture holds one frame: a second is refused, the first stays publishable.
  if (m.frames > 0 && is_one_picture(m.path))
    throw Error(m.path + ": holds one picture, and the stream has more frames");
  const std::string name = "FileSink " + m.path + ": frame " + std::to_string(m.frames + 1);
  JpegLayout layout;
  const std::string problem = read_layout(frame.data, frame.size, layout);
  if (!problem.empty()) m.give_up(name + " " + problem + "; nothing written");
  if (layout.width != m.width || layout.height != m.height)
    m.give_up(name + " is " + std::to_string(layout.width) + "x" + std::to_string(layout.height) +
              ", but the output was made for " + std::to_string(m.width) + "x" +
              std::to_string(m.height) + "; nothing written");
  if (m.frames == 0) m.layout = layout.components;
  if (layout.components != m.layout)
    m.give_up(name + " has " + describe_layout(layout.components) + ", the first frame " +
              describe_layout(m.layout) + "; nothing written");
  try {
    m.pump_audio(double(m.frames + 1) * m.options.fps_den / m.options.fps_num);
    m.sink->write_frame(frame.data, frame.size);
  } catch (const std::exception& e) {
    m.drop(e.what());
    throw;
  }
  ++m.frames;
  m.bytes = m.sink->bytes_written();
}

void FileSink::close() {
  Impl& m = *impl_;
  if (!m.failed.empty()) throw Error(m.failed);
  try {
    m.pump_audio(std::numeric_limits<double>::infinity());
    m.sink->close();
  } catch (const std::exception& e) {
    m.drop(e.what());
    throw;
  }
  m.bytes = m.sink->bytes_written();
}

std::int64_t FileSink::frames_written() const { return impl_->frames; }
std::uint64_t FileSink::bytes_written() const {
  return impl_->sink ? impl_->sink->bytes_written() : impl_->bytes;
}

}  // namespace mjpeg
