#include "output_file.hpp"

#include <fcntl.h>
#include <stdio.h>  // renameat2 (glibc >= 2.28)
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "mjpeg/error.hpp"

namespace fs = std::filesystem;

namespace mjpeg::app {
namespace {

std::string errno_text(int err) { return std::strerror(err); }

/// The directory that will hold `path` ("." for a bare file name).
std::string parent_dir(const std::string& path) {
  fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

/// Permissions a freshly created file would get (0666 minus the umask); mkstemp uses 0600.
mode_t default_file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

/// rename() that never replaces an existing `to`: renameat2(RENAME_NOREPLACE) where the file
/// system supports it, otherwise link() + unlink(), which fails with EEXIST just the same.
int rename_no_replace(const char* from, const char* to) {
#ifdef RENAME_NOREPLACE
  if (::renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return -1;
#endif
  if (::link(from, to) != 0) return -1;
  ::unlink(from);
  return 0;
}

}  // namespace

void check_output_allowed(const std::string& path, bool overwrite) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;  // does not exist (or is unreachable: mkstemp says)
  if (S_ISDIR(st.st_mode)) throw Error(fmt::format("output '{}' is a directory", path));
  if (!overwrite)
    throw Error(fmt::format("output '{}' already exists (use -y to overwrite)", path));
}

AtomicOutputFile::AtomicOutputFile(std::string final_path, bool overwrite)
    : final_path_(std::move(final_path)), overwrite_(overwrite) {
  const std::string dir = parent_dir(final_path_);
  // Hidden, recognisable name in the same directory (so that rename() stays atomic).
  std::string pattern =
      (fs::path(dir) / ("." + fs::path(final_path_).filename().string() + ".tmp-XXXXXX"))
          .string();
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  fd_ = ::mkostemp(buf.data(), O_CLOEXEC);
  if (fd_ < 0)
    throw Error(fmt::format("cannot create output in '{}': {}", dir, errno_text(errno)));
  temp_path_ = buf.data();
  if (::fchmod(fd_, default_file_mode()) != 0) {
    const int err = errno;
    discard();
    throw Error(fmt::format("cannot set permissions of '{}': {}", temp_path_, errno_text(err)));
  }
}

AtomicOutputFile::~AtomicOutputFile() {
  if (!committed_) discard();
}

void AtomicOutputFile::discard() noexcept {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!temp_path_.empty()) {
    ::unlink(temp_path_.c_str());
    temp_path_.clear();
  }
}

void AtomicOutputFile::write(const void* data, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd_, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(fmt::format("cannot write '{}': {}", final_path_, errno_text(errno)));
    }
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

void AtomicOutputFile::commit() {
  // close() can report a delayed write error (e.g. NFS, quota): check it.
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0)
    throw Error(fmt::format("cannot write '{}': {}", final_path_, errno_text(errno)));
  const int moved = overwrite_ ? ::rename(temp_path_.c_str(), final_path_.c_str())
                               : rename_no_replace(temp_path_.c_str(), final_path_.c_str());
  if (moved != 0) {
    if (errno == EEXIST)
      throw Error(fmt::format("output '{}' already exists (use -y to overwrite)", final_path_));
    throw Error(fmt::format("cannot create '{}': {}", final_path_, errno_text(errno)));
  }
  temp_path_.clear();
  committed_ = true;
}

}  // namespace mjpeg::app
