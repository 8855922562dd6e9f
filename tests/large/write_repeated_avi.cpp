// write_repeated_avi: the fast path of the large-AVI test (tests/large/large_avi_test.sh).
//
//   write_repeated_avi OUT.avi MIN_BYTES [WIDTH HEIGHT]
//
// Encodes one frame of noise (the worst case for JPEG: every coefficient costs bits) at q100
// 4:4:4 once, then writes it through io::AviWriter until the file holds at least MIN_BYTES.
// Each copy carries a COM marker "mjpeg frame N" (N from 0) right after the JFIF APP0, so a
// reader that lands on the wrong index entry is caught. Before each frame goes one audio
// chunk of the frame's 1/25 s (16-bit stereo PCM at 48 kHz, 1920 samples) whose every sample
// is N % 30000 + 1, so that the audio stream's indexes are checked the same way. Prints
// "frames F jpeg_bytes B stride S segments G file_bytes T" on stdout (S: a frame's and its
// audio's chunks together). Exit 0 on success, 1 on failure.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "io/avi_writer.hpp"
#include "mjpeg/encoder.hpp"

namespace {

/// Deterministic noise (a 64-bit LCG's high bytes).
std::vector<std::uint8_t> noise_rgb(int width, int height) {
  std::vector<std::uint8_t> rgb(std::size_t(width) * std::size_t(height) * 3);
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  for (std::uint8_t& v : rgb) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = std::uint8_t(state >> 56);
  }
  return rgb;
}

/// Offset just past SOI and, when present, the JFIF APP0 segment: where the COM goes.
std::size_t comment_offset(const std::vector<std::uint8_t>& jpeg) {
  std::size_t at = 2;  // after SOI
  if (jpeg.size() > 6 && jpeg[2] == 0xFF && jpeg[3] == 0xE0)
    at = 4 + ((std::size_t(jpeg[4]) << 8) | jpeg[5]);
  return at;
}

/// `base` with a COM segment "mjpeg frame N" at `at`; the text has a fixed width so that
/// every copy has the same size (the test computes frame positions from it).
std::vector<std::uint8_t> with_comment(const std::vector<std::uint8_t>& base, std::size_t at,
                                       std::int64_t n) {
  char text[32];
  const int len = std::snprintf(text, sizeof text, "mjpeg frame %010lld", static_cast<long long>(n));
  std::vector<std::uint8_t> out;
  out.reserve(base.size() + 4 + std::size_t(len));
  out.insert(out.end(), base.begin(), base.begin() + std::ptrdiff_t(at));
  const std::size_t seg = std::size_t(len) + 2;
  out.insert(out.end(), {0xFF, 0xFE, std::uint8_t(seg >> 8), std::uint8_t(seg & 0xFF)});
  out.insert(out.end(), text, text + len);
  out.insert(out.end(), base.begin() + std::ptrdiff_t(at), base.end());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 5) {
    std::fprintf(stderr, "usage: %s OUT.avi MIN_BYTES [WIDTH HEIGHT]\n", argv[0]);
    return 2;
  }
  try {
    const std::string out = argv[1];
    const std::uint64_t min_bytes = std::strtoull(argv[2], nullptr, 10);
    const int width = argc == 5 ? std::atoi(argv[3]) : 1920;
    const int height = argc == 5 ? std::atoi(argv[4]) : 1080;

    const std::vector<std::uint8_t> rgb = noise_rgb(width, height);
    mjpeg::ImageView view;
    view.data = rgb.data();
    view.width = width;
    view.height = height;
    view.stride = std::size_t(width) * 3;
    view.format = mjpeg::PixelFormat::rgb24;
    mjpeg::EncodeOptions options;
    options.quality = 100;
    options.subsampling = mjpeg::Subsampling::s444;
    const std::vector<std::uint8_t> base = mjpeg::encode_jpeg(view, options);
    const std::size_t at = comment_offset(base);

    mjpeg::io::AviExtras extras;
    extras.audio = mjpeg::io::AviAudio{};
    extras.audio->format_tag = 1;  // PCM
    extras.audio->channels = 2;
    extras.audio->sample_rate = 48000;
    extras.audio->block_align = 4;
    extras.audio->bits_per_sample = 16;
    extras.audio->avg_bytes_per_sec = 48000 * 4;
    constexpr std::size_t kAudioBytes = 48000 / 25 * 4;
    std::vector<std::uint8_t> audio(kAudioBytes);
    mjpeg::io::AviWriter writer(out, width, height, 25, 1, extras);
    std::int64_t frames = 0;
    std::size_t jpeg_bytes = 0;
    while (writer.bytes_written() < min_bytes) {
      const auto sample = static_cast<std::uint16_t>(frames % 30000 + 1);
      for (std::size_t i = 0; i < audio.size(); i += 2) {
        audio[i] = std::uint8_t(sample & 0xFF);
        audio[i + 1] = std::uint8_t(sample >> 8);
      }
      writer.write_audio(audio.data(), audio.size());
      const std::vector<std::uint8_t> jpeg = with_comment(base, at, frames);
      writer.write_frame(jpeg.data(), jpeg.size());
      jpeg_bytes = jpeg.size();
      ++frames;
    }
    writer.close();
    // Chunk headers and padding of the frame and its audio.
    const std::size_t stride = 8 + jpeg_bytes + (jpeg_bytes & 1) + 8 + kAudioBytes;
    std::printf("frames %lld jpeg_bytes %zu stride %zu segments %d file_bytes %llu\n",
                static_cast<long long>(frames), jpeg_bytes, stride, writer.segments(),
                static_cast<unsigned long long>(writer.bytes_written()));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "write_repeated_avi: %s\n", e.what());
    return 1;
  }
}
