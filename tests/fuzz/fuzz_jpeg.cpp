// libFuzzer target: the JPEG encoder on random sizes (1..320 px), inputs (RGB or gray),
// samplings, qualities (1..100), restart intervals, optimized tables and progressive scans.
// Every output must be byte-identical to libjpeg-turbo's encode of the same pixels with the same
// settings (the project's oracle, tests/common/oracle.hpp), and must decode with TurboJPEG to the
// same size.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

#include "common/oracle.hpp"
#include "mjpeg/encoder.hpp"
#include "mjpeg/error.hpp"

#if MJPEG_HAVE_TURBOJPEG
#include <turbojpeg.h>
#endif

namespace {

constexpr int kMaxSide = 320;

[[noreturn]] void finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_jpeg: %s\n%s\n", what, detail.c_str());
  std::abort();
}

/// Pixels for a w x h x c image: the fuzzer's bytes where there are enough of them, then a
/// smooth gradient or LCG noise (picked by the input) so that large images are cheap to reach.
std::vector<std::uint8_t> make_pixels(FuzzedDataProvider& in, std::size_t count) {
  const int fill = in.ConsumeIntegralInRange<int>(0, 2);
  std::uint64_t state = in.ConsumeIntegral<std::uint64_t>();
  std::vector<std::uint8_t> given = in.ConsumeRemainingBytes<std::uint8_t>();
  std::vector<std::uint8_t> px(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (i < given.size()) {
      px[i] = given[i];
    } else if (fill == 0 && !given.empty()) {
      px[i] = given[i % given.size()];
    } else if (fill == 1) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      px[i] = std::uint8_t(state >> 56);
    } else {
      px[i] = std::uint8_t((i * 7 + (i / 97) * 3 + state) & 0xFF);
    }
  }
  return px;
}

#if MJPEG_HAVE_TURBOJPEG
void check_decodes(const std::vector<std::uint8_t>& jpeg, int width, int height) {
  tjhandle tj = tjInitDecompress();
  if (tj == nullptr) finding("tjInitDecompress failed", "");
  int w = 0, h = 0, sub = 0, cs = 0;
  auto* buf = const_cast<unsigned char*>(jpeg.data());
  const auto len = static_cast<unsigned long>(jpeg.size());
  if (tjDecompressHeader3(tj, buf, len, &w, &h, &sub, &cs) != 0 || w != width || h != height)
    finding("TurboJPEG cannot read the header, or the size differs", tjGetErrorStr2(tj));
  std::vector<unsigned char> rgb(std::size_t(w) * std::size_t(h) * 3);
  if (tjDecompress2(tj, buf, len, rgb.data(), w, 0, h, TJPF_RGB, TJFLAG_ACCURATEDCT) != 0)
    finding("TurboJPEG cannot decode the output", tjGetErrorStr2(tj));
  tjDestroy(tj);
}
#endif

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const int width = in.ConsumeIntegralInRange<int>(1, kMaxSide);
  const int height = in.ConsumeIntegralInRange<int>(1, kMaxSide);
  const bool gray_input = in.ConsumeIntegralInRange<int>(0, 7) == 0;
  mjpeg::EncodeOptions options;
  const mjpeg::Subsampling samplings[] = {mjpeg::Subsampling::s444, mjpeg::Subsampling::s422,
                                          mjpeg::Subsampling::s420, mjpeg::Subsampling::gray};
  options.subsampling = samplings[in.ConsumeIntegralInRange<int>(0, 3)];
  options.quality = in.ConsumeIntegralInRange<int>(1, 100);
  // Mostly short intervals (many markers on small images), sometimes anything up to the max.
  options.restart_interval = in.ConsumeBool() ? in.ConsumeIntegralInRange<int>(0, 8)
                                              : in.ConsumeIntegralInRange<int>(0, 65535);
  options.optimize = in.ConsumeBool();
  options.progressive = in.ConsumeIntegralInRange<int>(0, 3) == 0;  // SOF2 (spectral selection)

  mjpeg::ImageView view;
  view.width = width;
  view.height = height;
  view.format = gray_input ? mjpeg::PixelFormat::gray8 : mjpeg::PixelFormat::rgb24;
  view.stride = std::size_t(width) * std::size_t(mjpeg::channels(view.format));
  const std::vector<std::uint8_t> pixels = make_pixels(in, view.stride * std::size_t(height));
  view.data = pixels.data();

  const std::vector<std::uint8_t> ours = mjpeg::encode_jpeg(view, options);
  const std::vector<std::uint8_t> reference = mjpeg::test::libjpeg_encode(view, options);
  const std::string diff = mjpeg::test::describe_difference(ours, reference);
  if (!diff.empty()) {
    char settings[180];
    std::snprintf(settings, sizeof settings,
                  "%dx%d %s q%d sampling %d restart %d optimize %d progressive %d", width, height,
                  gray_input ? "gray" : "rgb", options.quality,
                  static_cast<int>(options.subsampling), options.restart_interval,
                  options.optimize ? 1 : 0, options.progressive ? 1 : 0);
    finding("output differs from libjpeg-turbo's", std::string(settings) + "\n" + diff);
  }
#if MJPEG_HAVE_TURBOJPEG
  check_decodes(ours, width, height);
#endif
  return 0;
}
