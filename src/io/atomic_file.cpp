// Buffered, atomically published output file (see atomic_file.hpp).
#include "io/atomic_file.hpp"

#include <fcntl.h>
#include <stdio.h>  // renameat2 (glibc >= 2.28)
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>

#include "io/temp_registry.hpp"
#include "mjpeg/error.hpp"
#include "mjpeg/files.hpp"

namespace mjpeg::io {
namespace {

[[noreturn]] void fail_errno(const std::string& path, const std::string& what, int err) {
  throw Error(path + ": " + what + ": " + std::strerror(err));
}

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string temp_name_beside(const std::string& path, const std::string& tag) {
  // ".<base>.tmp-<tag>", the base shortened (from its end) so that the name fits the file
  // system's limit: a target name of 240 bytes must not fail for its temporary name's sake.
  const std::string dir = directory_of(path);
  long name_max = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  if (name_max <= 0 || name_max > 4096) name_max = 255;
  std::string base = base_of(path);
  const std::size_t fixed = 1 + 5 + tag.size();  // "." + ".tmp-" + tag
  if (fixed + base.size() > static_cast<std::size_t>(name_max))
    base.resize(static_cast<std::size_t>(name_max) > fixed + 1 ? name_max - fixed : 1);
  return dir + "/." + base + ".tmp-" + tag;
}

namespace {

/// Creates ".<base>.tmp-<pid>-<n><random>" beside `path` with O_EXCL, so the mode follows
/// the umask like any new file, and two writers never share a temporary file.
int create_temp(const std::string& path, std::string& temp_path) {
  static std::atomic<unsigned> counter{0};
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, "%u%06x", counter++, rd() & 0xFFFFFFu);
    temp_path = temp_name_beside(path, std::to_string(::getpid()) + "-" + suffix);
    const int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    if (errno != EEXIST) fail_errno(path, "cannot create output file", errno);
  }
  throw Error(path + ": cannot create a temporary output file (too many name collisions)");
}

}  // namespace

int rename_no_replace(const char* from, const char* to, NoReplaceMethod method) {
  using M = NoReplaceMethod;
  const bool any = method == M::automatic;
  if (any || method == M::renameat2) {
#ifdef RENAME_NOREPLACE
    if (::renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) return 0;
#else
    errno = ENOSYS;
#endif
    if (!any || (errno != EINVAL && errno != ENOSYS)) return -1;
  }
  if (any || method == M::link) {
    if (::link(from, to) == 0) {
      ::unlink(from);
      return 0;
    }
    if (!any || (errno != EPERM && errno != EOPNOTSUPP && errno != EMLINK && errno != ENOSYS))
      return -1;
  }
  // No hard links either (FAT, some network and FUSE file systems): claim the name with an
  // empty file created exclusively, then rename over that file of ours. Only what replaces
  // the placeholder in between (nobody's data) could be lost.
  const int fd = ::open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) return -1;
  ::close(fd);
  if (::rename(from, to) == 0) return 0;
  const int err = errno;
  ::unlink(to);
  errno = err;
  return -1;
}

void fail_exists(const std::string& path) {
  throw Error("output '" + path + "' already exists (use -y to overwrite)");
}

AtomicFile::AtomicFile(const std::string& path, bool replace_existing, std::size_t buffer_size)
    : path_(path),
      replace_existing_(replace_existing),
      buffer_(new std::uint8_t[buffer_size < 4096 ? 4096 : buffer_size]),
      buffer_size_(buffer_size < 4096 ? 4096 : buffer_size) {
  if (path.empty()) throw UsageError("empty output path");
  if (path == "-") {
    fd_ = STDOUT_FILENO;
    owns_fd_ = false;
    return;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) throw UsageError(path + ": output is a directory");
    // A device or FIFO (/dev/null, /dev/full, a pipe): write in place, nothing to rename.
    fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) fail_errno(path, "cannot open output", errno);
    return;
  }
  fd_ = create_temp(path, temp_path_);
  temp_slot_ = register_temp(temp_path_, /*directory=*/false);  // a signal handler removes it
}

AtomicFile::~AtomicFile() { abandon(); }

void AtomicFile::write_all(const void* data, std::size_t size) {
  write_two(data, size, nullptr, 0);
}

void AtomicFile::write_two(const void* a, std::size_t na, const void* b, std::size_t nb) {
  iovec v[2] = {{const_cast<void*>(a), na}, {const_cast<void*>(b), nb}};
  int first = 0;
  while (first < 2 && v[first].iov_len == 0) ++first;  // nothing to write of an empty part
  while (first < 2) {
    const ssize_t n = ::writev(fd_, v + first, 2 - first);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_errno(path_, "write failed", errno);
    }
    if (n == 0) fail_errno(path_, "write failed", EIO);
    flushed_ += std::uint64_t(n);
    std::size_t done = std::size_t(n);
    while (first < 2 && done >= v[first].iov_len) done -= v[first++].iov_len;
    if (first < 2) {
      v[first].iov_base = static_cast<std::uint8_t*>(v[first].iov_base) + done;
      v[first].iov_len -= done;
    }
  }
}

void AtomicFile::flush() {
  if (buffered_ == 0) return;
  const std::size_t n = buffered_;
  buffered_ = 0;  // on error the buffer is dropped: the file is abandoned anyway
  write_all(buffer_.get(), n);
}

void AtomicFile::write(const void* data, std::size_t size) {
  if (fd_ < 0) throw Error(path_ + ": write after close");
  // A large payload (a video frame) goes straight to the OS, after what is buffered, in one
  // writev: no copy through the buffer (such a copy bounds file output at thousands of 1080p
  // frames per second).
  if (size == 0) return;  // (data may then be null: nothing to copy, memcpy must not see it)
  if (size >= kDirectWrite || size >= buffer_size_) {
    write_two(buffer_.get(), buffered_, data, size);
    buffered_ = 0;
    position_ += size;
    return;
  }
  if (buffered_ + size > buffer_size_) flush();
  std::memcpy(buffer_.get() + buffered_, data, size);
  buffered_ += size;
  position_ += size;
}

void AtomicFile::write_zeros(std::size_t count) {
  static const std::uint8_t zeros[64] = {};
  while (count > 0) {
    const std::size_t n = count < sizeof zeros ? count : sizeof zeros;
    write(zeros, n);
    count -= n;
  }
}

void AtomicFile::patch(std::uint64_t offset, const void* data, std::size_t size) {
  if (fd_ < 0) throw Error(path_ + ": patch after close");
  if (offset + size > position_) throw Error(path_ + ": internal error: patch past end of file");
  if (offset >= flushed_) {  // still in the buffer
    std::memcpy(buffer_.get() + (offset - flushed_), data, size);
    return;
  }
  if (offset + size > flushed_) flush();  // straddles the flushed boundary
  const auto* p = static_cast<const std::uint8_t*>(data);
  while (size > 0) {
    const ssize_t n = ::pwrite(fd_, p, size, off_t(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == ESPIPE)
        throw Error(path_ + ": this output format needs a seekable file (not a pipe)");
      fail_errno(path_, "write failed", errno);
    }
    p += n;
    size -= std::size_t(n);
    offset += std::uint64_t(n);
  }
}

void AtomicFile::commit() {
  if (fd_ < 0) throw Error(path_ + ": commit after close");
  try {
    flush();
    if (owns_fd_) {
      const int fd = fd_;
      fd_ = -1;
      if (::close(fd) != 0) fail_errno(path_, "close failed", errno);  // NFS reports late errors here
    } else {
      fd_ = -1;
    }
    if (!temp_path_.empty()) {
      const int moved = replace_existing_ ? ::rename(temp_path_.c_str(), path_.c_str())
                                          : rename_no_replace(temp_path_.c_str(), path_.c_str());
      if (moved != 0) {
        if (errno == EEXIST) fail_exists(path_);
        fail_errno(path_, "cannot rename temporary file into place", errno);
      }
      temp_path_.clear();
      unregister_temp(temp_slot_);
      temp_slot_ = -1;
    }
  } catch (...) {
    abandon();
    throw;
  }
}

void AtomicFile::abandon() noexcept {
  if (fd_ >= 0 && owns_fd_) ::close(fd_);
  fd_ = -1;
  if (!temp_path_.empty()) {
    ::unlink(temp_path_.c_str());
    temp_path_.clear();
  }
  unregister_temp(temp_slot_);
  temp_slot_ = -1;
}

}  // namespace mjpeg::io

namespace mjpeg {

// The public functions of mjpeg/files.hpp that write (the rest: sequence_pattern.cpp,
// temp_registry.cpp).

void check_output_allowed(const std::string& path, bool overwrite) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    // Absent: its folder must be there (said now, before any input is read), or creation will
    // say what else is wrong (permissions).
    const std::size_t slash = path.find_last_of('/');
    if ((errno != ENOENT && errno != ENOTDIR) || slash == std::string::npos || slash == 0) return;
    const std::string folder = path.substr(0, slash);
    if (::stat(folder.c_str(), &st) != 0) {
      if (errno == ENOENT) throw Error("output folder '" + folder + "' does not exist");
    } else if (!S_ISDIR(st.st_mode)) {
      throw Error("output '" + path + "': '" + folder + "' is not a folder");
    }
    return;
  }
  if (S_ISDIR(st.st_mode)) throw Error("output '" + path + "' is a directory");
  if (!overwrite && S_ISREG(st.st_mode)) io::fail_exists(path);
}

void write_file(const std::string& path, const void* data, std::size_t size,
                bool replace_existing) {
  io::AtomicFile out(path, replace_existing);
  out.write(data, size);
  out.commit();
}

struct OutputFile::Impl {
  Impl(const std::string& path, bool replace) : file(path, replace) {}
  io::AtomicFile file;
};

OutputFile::OutputFile(const std::string& path, bool replace_existing)
    : impl_(std::make_unique<Impl>(path, replace_existing)) {}
OutputFile::~OutputFile() = default;
void OutputFile::write(const void* data, std::size_t size) { impl_->file.write(data, size); }
std::uint64_t OutputFile::size() const { return impl_->file.position(); }
void OutputFile::commit() { impl_->file.commit(); }
const std::string& OutputFile::path() const { return impl_->file.path(); }

void OutputFile::write_at(std::uint64_t offset, const void* data, std::size_t size) {
  io::AtomicFile& f = impl_->file;
  if (offset > f.position()) f.write_zeros(static_cast<std::size_t>(offset - f.position()));
  const std::uint64_t end = f.position();
  const std::size_t over = offset < end ? static_cast<std::size_t>(std::min<std::uint64_t>(size, end - offset)) : 0;
  if (over > 0) f.patch(offset, data, over);
  if (over < size) f.write(static_cast<const std::uint8_t*>(data) + over, size - over);
}

}  // namespace mjpeg
