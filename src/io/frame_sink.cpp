// Output selection by name, the raw .mjpeg stream writer and the image-sequence writer.
#include "io/frame_sink.hpp"

#include <fcntl.h>
#include <stdio.h>  // renameat2
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "io/atomic_file.hpp"
#include "io/avi_writer.hpp"
#include "mjpeg/files.hpp"
#include "io/temp_registry.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg::io {
OutputKind output_kind(const std::string& path) {
  if (path == "-") return OutputKind::mjpeg_stream;
  if (path.find('%') != std::string::npos) {
    if (!is_sequence_pattern(path))
      throw UsageError(path + ": an image-sequence output needs exactly one integer "
                              "conversion such as %05d (use %% for a literal percent sign)");
    const std::string ext = file_extension(path);
    if (ext != "jpg" && ext != "jpeg")
      throw UsageError(path + ": image-sequence outputs must end in .jpg or .jpeg");
    return OutputKind::image_sequence;
  }
  const std::string ext = file_extension(path);
  if (ext == "avi") return OutputKind::avi;
  if (ext == "mjpeg" || ext == "mjpg") return OutputKind::mjpeg_stream;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)))
    return OutputKind::mjpeg_stream;  // written in place (AtomicFile), as "-" is
  throw UsageError(path + ": unsupported output type (use .avi, .mjpeg/.mjpg, or a pattern "
                          "like out/%05d.jpg)");
}

std::unique_ptr<FrameSink> make_frame_sink(const std::string& path, int width, int height,
                                           int fps_num, int fps_den, int first_number,
                                           bool replace_existing) {
  switch (output_kind(path)) {
    case OutputKind::avi: {
      AviExtras extras;
      extras.replace_existing = replace_existing;
      return std::make_unique<AviWriter>(path, width, height, fps_num, fps_den, extras,
                                         avi_riff_limit());
    }
    case OutputKind::mjpeg_stream:
      return std::make_unique<MjpegStreamWriter>(path, replace_existing);
    case OutputKind::image_sequence:
      return std::make_unique<ImageSequenceWriter>(path, first_number, replace_existing);
  }
  throw UsageError(path + ": unsupported output");
}

// ---------------------------------------------------------------------------------------------
// MjpegStreamWriter: the frames back to back, nothing in between (a note follows the last).
// ---------------------------------------------------------------------------------------------

struct MjpegStreamWriter::Impl {
  Impl(const std::string& path, bool replace) : file(path, replace) {}
  AtomicFile file;
  std::string note;
  bool closed = false;
};

MjpegStreamWriter::MjpegStreamWriter(const std::string& path, bool replace_existing)
    : impl_(std::make_unique<Impl>(path, replace_existing)) {}

MjpegStreamWriter::~MjpegStreamWriter() = default;  // AtomicFile abandons if not committed

void MjpegStreamWriter::write_frame(const std::uint8_t* jpeg, std::size_t size) {
  if (impl_->closed) throw Error(impl_->file.path() + ": write_frame after close");
  if (jpeg == nullptr || size == 0) throw UsageError(impl_->file.path() + ": empty frame");
  impl_->file.write(jpeg, size);
  ++frames_;
  bytes_ += size;
}

void MjpegStreamWriter::set_note(const std::string& text) { impl_->note = text; }

void MjpegStreamWriter::close() {
  if (impl_->closed) return;
  impl_->closed = true;
  if (!impl_->note.empty()) {
    // After the last frame's EOI: decoders and ffmpeg's mjpeg demuxer skip what follows it.
    impl_->file.write(kNoteSignature, kNoteSignatureBytes);
    impl_->file.write(impl_->note.data(), impl_->note.size());
  }
  impl_->file.commit();
}

// ---------------------------------------------------------------------------------------------
// SingleJpegWriter
// ---------------------------------------------------------------------------------------------

struct SingleJpegWriter::Impl {
  Impl(const std::string& path, bool replace) : file(path, replace) {}
  AtomicFile file;
};

SingleJpegWriter::SingleJpegWriter(const std::string& path, bool replace_existing)
    : impl_(std::make_unique<Impl>(path, replace_existing)) {}

SingleJpegWriter::~SingleJpegWriter() = default;  // AtomicFile abandons if not committed

void SingleJpegWriter::write_frame(const std::uint8_t* jpeg, std::size_t size) {
  if (jpeg == nullptr || size == 0) throw UsageError(impl_->file.path() + ": empty frame");
  if (frames_ > 0)
    throw Error(impl_->file.path() + ": holds one picture, and the stream has more frames");
  impl_->file.write(jpeg, size);
  ++frames_;
  bytes_ += size;
}

void SingleJpegWriter::close() { impl_->file.commit(); }

// ---------------------------------------------------------------------------------------------
// ImageSequenceWriter
// ---------------------------------------------------------------------------------------------

namespace {

[[noreturn]] void sink_fail_errno(const std::string& path, const std::string& what, int err) {
  throw Error(path + ": " + what + ": " + std::strerror(err));
}

std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// renameat2 with `flags` (RENAME_EXCHANGE) where the file system has it;
/// -1 with errno EINVAL/ENOSYS where it does not.
int rename2(const std::string& from, const std::string& to, unsigned flags) {
#ifdef RENAME_NOREPLACE
  return ::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), flags);
#else
  static_cast<void>(from);
  static_cast<void>(to);
  static_cast<void>(flags);
  errno = ENOSYS;
  return -1;
#endif
}

bool exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace

ImageSequenceWriter::ImageSequenceWriter(const std::string& pattern, int first_number,
                                         bool replace_existing)
    : first_number_(first_number), replace_existing_(replace_existing) {
  if (!SequencePattern::parse(pattern, pattern_))
    throw UsageError(pattern + ": an image-sequence output needs exactly one integer "
                               "conversion such as %05d");
  if (!pattern_.number_in_file_name())
    throw UsageError(pattern + ": the number of an image-sequence output must be in the file "
                               "name, not in a directory");
  if (first_number < 0) throw UsageError(pattern + ": negative first frame number");
}

ImageSequenceWriter::~ImageSequenceWriter() { remove_folder(); }

std::string ImageSequenceWriter::file_name(std::int64_t n) const { return pattern_.name(n); }

std::string ImageSequenceWriter::staged(std::int64_t n) const {
  return folder_ + "/" + base_name(file_name(n));
}

void ImageSequenceWriter::remove_folder() noexcept {
  if (folder_.empty()) return;
  for (std::int64_t i = 0; i < frames_; ++i) ::unlink(staged(first_number_ + i).c_str());
  ::rmdir(folder_.c_str());
  folder_.clear();
  unregister_temp(folder_slot_);
  folder_slot_ = -1;
}

void ImageSequenceWriter::write_frame(const std::uint8_t* jpeg, std::size_t size) {
  if (jpeg == nullptr || size == 0) throw UsageError(pattern_.prefix + "...: empty frame");
  const std::string name = file_name(first_number_ + frames_);
  if (!replace_existing_ && exists(name)) fail_exists(name);
  if (folder_.empty()) {  // created with the first frame
    std::random_device rd;
    char tag[48];
    for (int attempt = 0;; ++attempt) {
      std::snprintf(tag, sizeof tag, "%ld-%06x", static_cast<long>(::getpid()), rd() & 0xFFFFFFu);
      folder_ = temp_name_beside(name, tag);
      if (::mkdir(folder_.c_str(), 0777) == 0) break;
      const int err = errno;
      folder_.clear();
      if (err != EEXIST || attempt >= 100) sink_fail_errno(name, "cannot create output file", err);
    }
    folder_slot_ = register_temp(folder_, /*directory=*/true);  // a signal handler removes it
  }
  const std::string path = staged(first_number_ + frames_);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) sink_fail_errno(name, "cannot create output file", errno);
  ++frames_;  // from here the staged file is ours to remove
  const std::uint8_t* p = jpeg;
  std::size_t left = size;
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      sink_fail_errno(name, "write failed", err);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) sink_fail_errno(name, "write failed", errno);
  bytes_ += size;
}

void ImageSequenceWriter::close() {
  if (folder_.empty()) return;  // nothing written (or already published)
  // Every frame to its name. What was there before (with -y) is exchanged into the folder and
  // stays there until all are in place, so a failure can put everything back.
  std::vector<bool> exchanged;
  std::int64_t done = 0;
  try {
    for (; done < frames_; ++done) {
      const std::string from = staged(first_number_ + done);
      const std::string to = file_name(first_number_ + done);
      bool swapped = false;
      if (replace_existing_) {
#ifdef RENAME_EXCHANGE
        if (rename2(from, to, RENAME_EXCHANGE) == 0) swapped = true;
        else if (errno != ENOENT && errno != EINVAL && errno != ENOSYS)
          sink_fail_errno(to, "cannot move the frame into place", errno);
#endif
        if (!swapped && ::rename(from.c_str(), to.c_str()) != 0)
          sink_fail_errno(to, "cannot move the frame into place", errno);
      } else if (rename_no_replace(from.c_str(), to.c_str()) != 0) {
        if (errno == EEXIST) fail_exists(to);
        sink_fail_errno(to, "cannot move the frame into place", errno);
      }
      exchanged.push_back(swapped);
    }
  } catch (...) {
    for (std::int64_t i = done - 1; i >= 0; --i) {  // back as it was
      const std::string from = staged(first_number_ + i);
      const std::string to = file_name(first_number_ + i);
#ifdef RENAME_EXCHANGE
      if (exchanged[static_cast<std::size_t>(i)]) {
        rename2(from, to, RENAME_EXCHANGE);
        continue;
      }
#endif
      ::rename(to.c_str(), from.c_str());
    }
    remove_folder();
    throw;
  }
  remove_folder();  // the files replaced, if any
}

}  // namespace mjpeg::io
