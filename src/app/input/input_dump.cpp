#include "input_dump.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "mjpeg/files.hpp"
#include "pnm.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg::app {

InputDump::InputDump(std::string dir, bool overwrite) : dir_(std::move(dir)), overwrite_(overwrite) {
  if (dir_.empty()) throw UsageError("--dump-input needs a directory");
  struct stat st {};
  if (::stat(dir_.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode))
      throw Error(fmt::format("--dump-input: '{}' exists and is not a directory", dir_));
  } else if (::mkdir(dir_.c_str(), 0777) != 0) {
    throw Error(fmt::format("--dump-input: cannot create '{}': {}", dir_, std::strerror(errno)));
  }
  for (PixelFormat f : {PixelFormat::rgb24, PixelFormat::gray8})
    check_output_allowed(file_name(0, f), overwrite_);
}

std::string InputDump::file_name(std::int64_t index, PixelFormat format) const {
  return fmt::format("{}/{:06d}.{}", dir_, index + 1, format == PixelFormat::gray8 ? "pgm" : "ppm");
}

void InputDump::add(std::int64_t index, const ImageView& pixels) const {
  if (grey_ && pixels.format == PixelFormat::rgb24) {  // R = G = B: the grey is R
    Image grey(pixels.width, pixels.height, PixelFormat::gray8);
    for (int y = 0; y < pixels.height; ++y) {
      const std::uint8_t* rgb = pixels.data + static_cast<std::size_t>(y) * pixels.stride;
      std::uint8_t* out = grey.pixels.data() + static_cast<std::size_t>(y) * grey.stride();
      for (int x = 0; x < pixels.width; ++x) out[x] = rgb[3 * x];
    }
    write_file(file_name(index, PixelFormat::gray8), encode_pnm(grey.view()), overwrite_);
    return;
  }
  write_file(file_name(index, pixels.format), encode_pnm(pixels), overwrite_);
}

}  // namespace mjpeg::app
