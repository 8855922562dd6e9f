// encode_frames: encodes synthetic frames made in memory to a Motion-JPEG AVI with
// mjpeg::VideoEncoder, as an application built against the installed package does.
//
//   encode_frames OUTPUT.avi [--frames N] [--size WxH] [--format rgb24|bgr24|gray8|yuv420p|...]
//                 [--quality Q] [--offload cpu|sok|sok-pinned|aok] [--fps N]
//
// Exit codes: 0 done, 1 runtime error (mjpeg::Error), 2 bad arguments (mjpeg::UsageError).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include <mjpeg/encoder.hpp>
#include <mjpeg/video.hpp>

namespace {

int to_int(const std::string& s, const char* what) {
  std::size_t used = 0;
  int v = 0;
  try {
    v = std::stoi(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || s.empty())
    throw mjpeg::UsageError(std::string(what) + ": '" + s + "' is not a number");
  return v;
}

// Frame t of a moving pattern in the contiguous layout of mjpeg::frame_bytes(): bands that
// drift with t over a gradient (packed formats), the same idea per plane (planar formats).
void draw(std::vector<std::uint8_t>& frame, const mjpeg::VideoOptions& o, int t) {
  const int channels = o.format == mjpeg::FrameFormat::gray8 ? 1
                       : mjpeg::is_planar(o.format)         ? 1
                                                            : 3;
  const std::size_t row = std::size_t(o.width) * channels;
  for (std::size_t i = 0; i < frame.size(); ++i) {
    const int x = int(i % row) / channels, y = int(i / row), c = int(i % channels);
    int v = (x * 255 / o.width + y + 3 * t + 80 * c) % 256;
    if (((x + 2 * t) / 32 + (y + t) / 24) % 2) v = 255 - v;
    frame[i] = std::uint8_t(v);
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc < 2 || std::string(argv[1]) == "--help") {
      std::printf("usage: encode_frames OUTPUT.avi [--frames N] [--size WxH] [--format F] "
                  "[--quality Q] [--offload cpu|sok|sok-pinned|aok] [--fps N]\n");
      return argc < 2 ? 2 : 0;
    }
    const std::string output = argv[1];
    mjpeg::VideoOptions options;
    options.width = 320;
    options.height = 240;
    int frames = 30, fps = 25;
    for (int i = 2; i < argc; ++i) {
      const std::string arg = argv[i];
      if (i + 1 >= argc) throw mjpeg::UsageError(arg + " needs a value");
      const std::string value = argv[++i];
      if (arg == "--frames") {
        frames = to_int(value, "--frames");
      } else if (arg == "--size") {
        const std::size_t x = value.find('x');
        if (x == std::string::npos) throw mjpeg::UsageError("--size: expected WxH");
        options.width = to_int(value.substr(0, x), "--size");
        options.height = to_int(value.substr(x + 1), "--size");
      } else if (arg == "--format") {
        options.format = mjpeg::parse_frame_format(value);
      } else if (arg == "--quality") {
        options.jpeg.quality = to_int(value, "--quality");
      } else if (arg == "--offload") {
        options.offload = mjpeg::parse_offload(value);
      } else if (arg == "--fps") {
        fps = to_int(value, "--fps");
      } else {
        throw mjpeg::UsageError("unknown option " + arg);
      }
    }
    if (frames < 1) throw mjpeg::UsageError("--frames must be at least 1");

    mjpeg::FileSink sink(output, options.width, options.height, fps, 1);
    mjpeg::VideoEncoder encoder(options, sink);  // throws before any work on bad options
    std::vector<std::uint8_t> frame(mjpeg::frame_bytes(options));
    for (int t = 0; t < frames; ++t) {
      draw(frame, options, t);  // the same buffer every time: encode() has copied the last one
      encoder.encode(mjpeg::FrameView::contiguous(frame.data(), options));
    }
    encoder.finish();
    sink.close();

    const mjpeg::Stats st = encoder.stats();
    std::printf("encode_frames: %lld frames, %llu JPEG bytes, %s, %d+%d threads, %.3f s (mjpeg %s)\n",
                static_cast<long long>(st.frames), static_cast<unsigned long long>(st.jpeg_bytes),
                mjpeg::to_string(st.offload), st.producers, st.entropy_threads, st.wall_s,
                mjpeg::version());
    return 0;
  } catch (const mjpeg::UsageError& e) {
    std::fprintf(stderr, "encode_frames: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "encode_frames: %s\n", e.what());
    return 1;
  }
}
