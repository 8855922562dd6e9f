#include "paths.hpp"

#include <filesystem>
#include <system_error>

#include "mjpeg/error.hpp"
#include "mjpeg/files.hpp"

namespace fs = std::filesystem;

namespace mjpeg::app {

std::string lower_extension(const std::string& path) {
  const std::string ext = file_extension(path);
  return ext.empty() ? ext : "." + ext;
}

const char* supported_output_extensions() {
  return ".jpg, .jpeg (one picture); .avi, .mkv, .mov, .mjpeg, .mjpg or a pattern like "
         "out/%05d.jpg (streams); - (standard output), a device or a FIFO (/dev/null, a named "
         "pipe) for the JPEGs back to back";
}

OutputKind output_kind_for(const std::string& path) {
  const std::string ext = lower_extension(path);
  if (ext == ".jpg" || ext == ".jpeg") return OutputKind::jpeg;
  throw UsageError("unsupported output extension " +
                   (ext.empty() ? std::string("(none)") : "'" + ext + "'") + " of '" + path +
                   "'; supported: " + supported_output_extensions());
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::equivalent(a, b, ec) && !ec) return true;
  // At least one does not exist (or cannot be inspected): compare normalised paths.
  const fs::path na = fs::weakly_canonical(fs::absolute(a, ec), ec);
  if (ec) return false;
  const fs::path nb = fs::weakly_canonical(fs::absolute(b, ec), ec);
  if (ec) return false;
  return na == nb;
}

}  // namespace mjpeg::app
