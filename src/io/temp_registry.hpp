// Temporary outputs that a signal handler can remove: an AtomicFile's hidden temporary file,
// an image sequence's temporary folder. The paths are copied into fixed slots when registered,
// so that remove_registered_temps() needs no allocation and no lock (it is async-signal-safe:
// unlink, open, getdents64, unlinkat, rmdir).
#pragma once

#include <string>

namespace mjpeg::io {

/// Registers `path` (a file, or with `directory` a folder whose files go with it). Returns a
/// slot for unregister_temp, or -1 when the path cannot be registered (all slots in use, or
/// longer than a slot): then only the normal clean-up removes it.
int register_temp(const std::string& path, bool directory);

/// Forgets slot `slot` (no-op for -1). Call after the path was renamed or removed.
void unregister_temp(int slot) noexcept;

/// Removes every registered path. Async-signal-safe: for the handler that ends the process.
void remove_registered_temps() noexcept;

}  // namespace mjpeg::io
