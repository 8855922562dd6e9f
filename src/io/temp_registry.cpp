#include "io/temp_registry.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "mjpeg/files.hpp"

namespace mjpeg {
namespace io {
namespace {

constexpr int kSlots = 32;
constexpr std::size_t kPathBytes = 4096;

enum State : int { kFree = 0, kWriting = 1, kFile = 2, kDirectory = 3 };

struct Slot {
  std::atomic<int> state{kFree};
  char path[kPathBytes];
};
Slot g_slots[kSlots];
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free atomics");

/// Removes the entries of directory `fd` (plain files: the frames of an image sequence).
void empty_directory(int fd) noexcept {
  alignas(8) char buf[4096];
  for (;;) {
    const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
    if (n <= 0) return;
    bool removed = false;
    for (long at = 0; at < n;) {
      // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name.
      unsigned short reclen;
      std::memcpy(&reclen, buf + at + 16, sizeof reclen);
      const char* name = buf + at + 19;
      if (!(name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))))
        removed = ::unlinkat(fd, name, 0) == 0 || removed;
      at += reclen;
    }
    if (removed) ::lseek(fd, 0, SEEK_SET);  // start over: removal may shift the listing
    else return;
  }
}

}  // namespace

int register_temp(const std::string& path, bool directory) {
  if (path.size() >= kPathBytes) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kWriting)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(directory ? kDirectory : kFile);
    return i;
  }
  return -1;
}

void unregister_temp(int slot) noexcept {
  if (slot < 0 || slot >= kSlots) return;
  g_slots[slot].state.store(kFree);
}

void remove_registered_temps() noexcept {
  for (Slot& s : g_slots) {
    const int state = s.state.load();
    if (state == kFile) {
      ::unlink(s.path);
    } else if (state == kDirectory) {
      const int fd = ::open(s.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd >= 0) {
        empty_directory(fd);
        ::close(fd);
      }
      ::rmdir(s.path);
    }
  }
}

}  // namespace io

void remove_partial_outputs() noexcept { io::remove_registered_temps(); }

}  // namespace mjpeg
