#include "image_sequence.hpp"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "frame_reader.hpp"
#include "image_input.hpp"
#include "mjpeg/files.hpp"
#include "mjpeg/error.hpp"
#include "app/common/wording.hpp"

namespace mjpeg::app {
namespace {

/// The numbers of the files in the pattern's directory that are names of the pattern, sorted.
std::vector<std::int64_t> numbers_present(const SequencePattern& p, const std::string& pattern) {
  const std::string dir = p.directory();
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr)
    throw Error(fmt::format("cannot read the image sequence '{}': directory '{}': {}", pattern,
                            dir, std::strerror(errno)));
  std::vector<std::int64_t> numbers;
  while (const dirent* e = ::readdir(d)) {
    const std::int64_t n = p.number_of(e->d_name);
    if (n >= 0) numbers.push_back(n);
  }
  ::closedir(d);
  std::sort(numbers.begin(), numbers.end());
  numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
  return numbers;
}

/// "00001..00005" style ranges of consecutive numbers, for messages.
std::string number_range(const SequencePattern& p, std::int64_t a, std::int64_t b) {
  SequencePattern bare = p;
  bare.prefix.clear();
  bare.suffix.clear();
  return a == b ? bare.name(a) : bare.name(a) + ".." + bare.name(b);
}

/// What the reader says of the sequence's files (an alpha channel dropped, 16-bit samples, an
/// EXIF turn), each said once for the whole sequence: the file's name in it becomes the
/// pattern. Any producer may add; take() hands out what is new since the last take.
class SequenceNotices {
 public:
  explicit SequenceNotices(std::string pattern) : pattern_(std::move(pattern)) {}
  void add(const std::string& path, std::string text) {
    const std::string file = "'" + path + "'", sequence = "'" + pattern_ + "'";
    for (std::size_t at = text.find(file); at != std::string::npos;
         at = text.find(file, at + sequence.size()))
      text.replace(at, file.size(), sequence);
    std::lock_guard<std::mutex> lock(mutex_);
    if (std::find(said_.begin(), said_.end(), text) == said_.end()) said_.push_back(text);
  }
  std::vector<std::string> take() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> fresh(said_.begin() + static_cast<std::ptrdiff_t>(taken_), said_.end());
    taken_ = said_.size();
    return fresh;
  }

 private:
  const std::string pattern_;
  std::mutex mutex_;
  std::vector<std::string> said_;
  std::size_t taken_ = 0;
};

/// The files decode on any number of threads at once (frame i is file numbers[i]). A grey
/// sequence (every file's header says grey, the first decodes grey) is read as gray8, so that
/// it encodes as grey JPEGs; any other as rgb24 (a grey file among colour ones expanded to
/// R = G = B).
class ImageSequenceSource final : public mjpeg::FrameSource {
 public:
  ImageSequenceSource(std::string pattern, SequencePattern p,
                      std::vector<std::int64_t> numbers, InputOptions options, Image first,
                      bool grey)
      : pattern_(std::move(pattern)),
        p_(std::move(p)),
        numbers_(std::move(numbers)),
        options_(std::move(options)),
        first_(std::move(first)) {
    format_.width = first_.width;
    format_.height = first_.height;
    format_.format = grey ? FrameFormat::gray8 : FrameFormat::rgb24;
  }
  const VideoOptions& format() const { return format_; }
  bool concurrent_reads() const override { return true; }
  std::int64_t frame_count() const override { return static_cast<std::int64_t>(numbers_.size()); }

  bool read(std::int64_t index, std::uint8_t* dst) override {
    if (index >= static_cast<std::int64_t>(numbers_.size())) return false;
    const bool use_first = index == 0;
    const std::string path = p_.name(numbers_[static_cast<std::size_t>(index)]);
    Image decoded;
    if (!use_first) decoded = options_.read_image(path);
    const Image& image = use_first ? first_ : decoded;
    if (image.width != format_.width || image.height != format_.height)
      throw Error(fmt::format("'{}' is {}x{}, but the sequence started at {}x{} (pictures of "
                              "one size only)",
                              path, image.width, image.height, format_.width, format_.height));
    const bool grey = format_.format == FrameFormat::gray8;
    if (grey && image.format != PixelFormat::gray8)
      throw Error(fmt::format("'{}' decodes in colour, but its header says grey", path));
    const Image rgb = grey || image.format == PixelFormat::rgb24 ? Image() : to_rgb(image.view());
    const Image& src = grey || image.format == PixelFormat::rgb24 ? image : rgb;
    const std::size_t row = static_cast<std::size_t>(format_.width) * (grey ? 1 : 3);
    for (int y = 0; y < format_.height; ++y)
      std::memcpy(dst + static_cast<std::size_t>(y) * row,
                  src.pixels.data() + static_cast<std::size_t>(y) * src.stride(), row);
    if (use_first) first_ = Image();  // not needed again
    return true;
  }

 private:
  std::string pattern_;
  SequencePattern p_;
  std::vector<std::int64_t> numbers_;  ///< the files to read, in order
  InputOptions options_;
  Image first_;                    ///< decoded at open (its size is the stream's)
  VideoOptions format_;
};

}  // namespace

VideoInput open_image_sequence(const std::string& pattern, const InputOptions& options_in) {
  InputOptions options = options_in;
  const auto said = std::make_shared<SequenceNotices>(pattern);
  if (!options.read_image)
    options.read_image = [autorotate = options.autorotate, said](const std::string& path) {
      return read_input_image(
          path, [&](const std::string& text) { said->add(path, text); }, autorotate);
    };
  SequencePattern p;
  if (!SequencePattern::parse(pattern, p))
    throw UsageError(fmt::format("'{}': an image-sequence pattern needs exactly one integer "
                                 "conversion such as %05d (use %% for a literal percent sign)",
                                 pattern));
  if (!p.number_in_file_name())
    throw UsageError(fmt::format("'{}': the number of an image sequence must be in the file "
                                 "name, not in a directory",
                                 pattern));
  std::vector<std::int64_t> present = numbers_present(p, pattern);
  const std::int64_t start = options.start_number >= 0 ? options.start_number
                             : present.empty()         ? 0
                                                       : present.front();
  present.erase(present.begin(), std::lower_bound(present.begin(), present.end(), start));
  if (present.empty())
    throw Error(options.start_number >= 0
                    ? fmt::format("the image sequence '{}' has no file numbered {} or above "
                                  "(--start-number {})",
                                  pattern, start, start)
                    : fmt::format("no file matches the image sequence '{}' (e.g. '{}')", pattern,
                                  p.name(1)));
  if (present.front() != start)
    throw Error(fmt::format("'{}' is missing: the image sequence '{}' starts there "
                            "(--start-number {}); its files begin at '{}'",
                            p.name(start), pattern, start, p.name(present.front())));

  // The files to encode: with --frames N the first N numbers; a gap among them is an error
  // (nothing is written), or skipped with --keep-going.
  std::vector<std::int64_t> numbers;
  std::vector<std::string> notices;
  std::int64_t missing = 0;
  std::int64_t first_missing = -1;
  for (std::size_t i = 0; i < present.size(); ++i) {
    if (options.max_frames >= 0 && static_cast<std::int64_t>(numbers.size()) >= options.max_frames)
      break;
    const std::int64_t expected = start + static_cast<std::int64_t>(numbers.size()) + missing;
    if (present[i] != expected) {
      if (!options.keep_going)
        throw Error(fmt::format("'{}' is missing from the image sequence '{}' ({} are there, "
                                "then it goes on at {}); nothing written (--keep-going skips "
                                "the gaps)",
                                p.name(expected), pattern, number_range(p, start, expected - 1),
                                number_range(p, present[i], present[i])));
      if (first_missing < 0) first_missing = expected;
      missing += present[i] - expected;
    }
    numbers.push_back(present[i]);
  }
  if (missing > 0)
    notices.push_back(fmt::format("--keep-going: {} number{} of the image sequence '{}' {} "
                                  "missing (the first: '{}') and skipped",
                                  missing, missing == 1 ? "" : "s", pattern,
                                  missing == 1 ? "is" : "are", p.name(first_missing)));

  Image first = options.read_image(p.name(numbers.front()));
  // Grey when the first file decodes grey and every file's header says grey (the headers are
  // read here, a few bytes each; a format whose header cannot tell counts as colour).
  bool grey = first.format == PixelFormat::gray8;
  for (std::size_t i = 0; grey && i < numbers.size(); ++i)
    grey = picture_is_grey(p.name(numbers[i])) == 1;
  VideoInput in;
  in.fps_num = 25;  // an image sequence has no rate: 25/1, like ffmpeg's image2 demuxer
  in.fps_den = 1;
  in.frame_count = static_cast<std::int64_t>(numbers.size());
  in.description = fmt::format("{}x{} {}image sequence, {} ({}), {}/{} fps", first.width,
                               first.height, grey ? "grey " : "",
                               count_of(static_cast<std::int64_t>(numbers.size()), "file", "files"),
                               number_range(p, numbers.front(), numbers.back()), in.fps_num,
                               in.fps_den);
  in.notices = std::move(notices);
  for (std::string& n : said->take()) in.notices.push_back(std::move(n));  // the first file's
  in.final_notices = [said] { return said->take(); };  // what later files added
  auto source = std::make_unique<ImageSequenceSource>(pattern, p, std::move(numbers), options,
                                                     std::move(first), grey);
  in.format = source->format();
  in.gray = grey;
  in.source = std::move(source);
  return in;
}

}  // namespace mjpeg::app
