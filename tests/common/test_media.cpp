#include "common/test_media.hpp"

#include <png.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#ifndef MJPEG_MEDIA_DIR
#define MJPEG_MEDIA_DIR "../shared/media"
#endif

namespace mjpeg::test {

ImageView Image::view() const {
  ImageView v;
  v.data = pixels.data();
  v.width = width;
  v.height = height;
  v.format = channels == 3 ? PixelFormat::rgb24 : PixelFormat::gray8;
  v.stride = stride();
  return v;
}

namespace {

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

}  // namespace

std::string media_dir() {
  const char* env = std::getenv("MJPEG_MEDIA_DIR");
  const bool from_env = env != nullptr && *env != '\0';
  const std::string dir = from_env ? std::string(env) : std::string(MJPEG_MEDIA_DIR);
  if (!is_directory(dir)) {
    throw std::runtime_error(
        "test media directory not found: '" + dir + "' (from " +
        (from_env ? std::string("environment variable MJPEG_MEDIA_DIR")
                  : std::string("the build's MJPEG_MEDIA_DIR; default <source>/../shared/media")) +
        "). Check out ../shared/media beside the repository, or set MJPEG_MEDIA_DIR=/path/to/media");
  }
  return dir;
}

Image load_png(const std::string& path) {
  File file(std::fopen(path.c_str(), "rb"));
  if (!file) throw std::runtime_error("cannot open PNG file '" + path + "'");
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  if (png == nullptr) throw std::runtime_error("png_create_read_struct failed");
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    throw std::runtime_error("png_create_info_struct failed");
  }
  // libpng reports errors by longjmp; everything that longjmp can skip is plain data (the
  // Image below is only assigned after the last libpng call) and the FILE is owned outside.
  Image img;
  std::vector<png_bytep> rows;
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    throw std::runtime_error("libpng failed to decode '" + path + "'");
  }
  png_init_io(png, file.get());
  png_read_info(png, info);
  const png_byte color_type = png_get_color_type(png, info);
  const png_byte bit_depth = png_get_bit_depth(png, info);
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (bit_depth == 16) png_set_scale_16(png);
  png_set_strip_alpha(png);  // also drops tRNS (never expanded to alpha)
  if (png_get_interlace_type(png, info) != PNG_INTERLACE_NONE) png_set_interlace_handling(png);
  png_read_update_info(png, info);
  const int channels = png_get_channels(png, info);
  const int width = static_cast<int>(png_get_image_width(png, info));
  const int height = static_cast<int>(png_get_image_height(png, info));
  if ((channels != 1 && channels != 3) || png_get_bit_depth(png, info) != 8 ||
      png_get_rowbytes(png, info) != static_cast<std::size_t>(width) * channels) {
    png_destroy_read_struct(&png, &info, nullptr);
    throw std::runtime_error("unexpected PNG layout after conversion in '" + path + "'");
  }
  img.width = width;
  img.height = height;
  img.channels = channels;
  img.pixels.resize(img.stride() * height);
  rows.resize(height);
  for (int y = 0; y < height; ++y) rows[y] = img.pixels.data() + img.stride() * y;
  png_read_image(png, rows.data());
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return img;
}

const Image& kodak(int index) {
  if (index < 1 || index > 24) throw std::out_of_range("kodak(): index must be 1..24");
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<Image>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = cache[index];
  if (!slot) {
    char name[32];
    std::snprintf(name, sizeof name, "kodim%02d.png", index);
    slot = std::make_unique<Image>(load_png(media_dir() + "/images/kodak/" + name));
  }
  return *slot;
}

const std::vector<int>& kodak_mosaic_order() {
  static const std::vector<int> order = {1,  2,  3,  5,  6,  7,  8,  11, 12, 13, 14, 15, 16,
                                         20, 21, 22, 23, 24, 1,  5,  8,  13, 14, 21, 22};
  return order;
}

Image kodak_mosaic(int width, int height) {
  constexpr int kTileW = 768, kTileH = 512;
  if (width <= 0 || height <= 0) throw std::invalid_argument("kodak_mosaic: empty size");
  const int cols = std::max(5, (width + kTileW - 1) / kTileW);
  const int rows = (height + kTileH - 1) / kTileH;
  const auto& order = kodak_mosaic_order();
  Image out;
  out.width = width;
  out.height = height;
  out.channels = 3;
  out.pixels.resize(out.stride() * height);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c * kTileW < width; ++c) {
      const Image& tile = kodak(order[static_cast<std::size_t>(r * cols + c) % order.size()]);
      if (tile.width != kTileW || tile.height != kTileH || tile.channels != 3)
        throw std::runtime_error("kodak_mosaic: expected a 768x512 RGB Kodak tile");
      const int w = std::min(kTileW, width - c * kTileW);
      const int h = std::min(kTileH, height - r * kTileH);
      for (int y = 0; y < h; ++y) {
        std::copy_n(tile.pixels.data() + tile.stride() * y, static_cast<std::size_t>(w) * 3,
                    out.pixels.data() + out.stride() * (r * kTileH + y) +
                        static_cast<std::size_t>(c) * kTileW * 3);
      }
    }
  }
  return out;
}

Image crop(const Image& img, int x, int y, int w, int h) {
  if (x < 0 || y < 0 || w <= 0 || h <= 0 || x + w > img.width || y + h > img.height)
    throw std::out_of_range("crop: rectangle outside the image");
  Image out;
  out.width = w;
  out.height = h;
  out.channels = img.channels;
  out.pixels.resize(out.stride() * h);
  for (int r = 0; r < h; ++r) {
    std::copy_n(img.pixels.data() + img.stride() * (y + r) + static_cast<std::size_t>(x) * img.channels,
                out.stride(), out.pixels.data() + out.stride() * r);
  }
  return out;
}

Image first_channel(const Image& img) {
  Image out;
  out.width = img.width;
  out.height = img.height;
  out.channels = 1;
  out.pixels.resize(static_cast<std::size_t>(img.width) * img.height);
  for (std::size_t i = 0; i < out.pixels.size(); ++i) out.pixels[i] = img.pixels[i * img.channels];
  return out;
}

Image synthetic(int width, int height, int channels, std::uint32_t seed, int noise) {
  if (width <= 0 || height <= 0 || (channels != 1 && channels != 3))
    throw std::invalid_argument("synthetic: bad size or channel count");
  Image out;
  out.width = width;
  out.height = height;
  out.channels = channels;
  out.pixels.resize(out.stride() * height);
  std::uint32_t state = seed * 2654435761u + 0x9E3779B9u;
  if (state == 0) state = 1;
  auto next = [&state] {  // xorshift32: identical everywhere
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
  };
  const int nz = std::clamp(noise, 0, 255);
  std::uint8_t* p = out.pixels.data();
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      for (int c = 0; c < channels; ++c) {
        // Gradients in different directions per channel, a checker of hard edges every
        // 13 px and a diagonal band, plus noise; integer-only for reproducibility.
        int v = (x * (97 + 31 * c) / std::max(1, width)) + (y * (151 - 40 * c) / std::max(1, height));
        if (((x / 13) + (y / 13) + c) % 3 == 0) v += 60;
        if (((x + 2 * y + 7 * static_cast<int>(seed)) & 63) < 6) v = 250 - v / 4;
        if (nz > 0) v += static_cast<int>(next() % static_cast<std::uint32_t>(2 * nz + 1)) - nz;
        *p++ = static_cast<std::uint8_t>(std::clamp(v, 0, 255));
      }
    }
  }
  return out;
}

void write_pnm(const Image& img, const std::string& path) {
  File file(std::fopen(path.c_str(), "wb"));
  if (!file) throw std::runtime_error("cannot create '" + path + "'");
  std::fprintf(file.get(), "P%c\n%d %d\n255\n", img.channels == 3 ? '6' : '5', img.width,
               img.height);
  if (std::fwrite(img.pixels.data(), 1, img.pixels.size(), file.get()) != img.pixels.size())
    throw std::runtime_error("short write to '" + path + "'");
  if (std::fflush(file.get()) != 0) throw std::runtime_error("cannot write '" + path + "'");
}

}  // namespace mjpeg::test
