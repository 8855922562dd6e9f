// GPU transform exactness: every variant x stage count x sampling x quality x size gives the
// same coefficient buffer as transform_cpu, bit for bit (size check, then memcmp), for packed,
// padded and unaligned pitches; and the JPEG from GPU coefficients equals encode_jpeg's bytes.
// Planar YCbCr input (every input chroma layout x output sampling x conversion form): the
// same as transform_cpu of the frame converted to RGB by planar_to_rgb.
//
// Without a usable CUDA device the tests are skipped (GTEST_SKIP); with MJPEG_REQUIRE_GPU=1 they
// fail instead. MJPEG_GPU_SMALL=1 keeps only small frames (for compute-sanitizer runs).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "common/gpu_guard.hpp"
#include "cuda_check.hpp"
#include "cuda_raii.hpp"
#include "gpu_test_util.hpp"
#include "gpu_transform.hpp"
#include "jpeg/entropy.hpp"
#include "core/geometry.hpp"
#include "jpeg/planar.hpp"
#include "core/quant.hpp"
#include "jpeg/transform_cpu.hpp"
#include "mjpeg/encoder.hpp"
#ifdef MJPEG_GPU_TESTS_WITH_MEDIA
#include "common/test_media.hpp"
#endif

namespace mjpeg {
namespace {

using gputest::DeviceFrame;
using gputest::HostFrame;

bool env_is(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v && std::string(v) == value;
}
bool small_mode() { return env_is("MJPEG_GPU_SMALL", "1"); }

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MJPEG_NEED_GPU();
  }
};

const int kQualities[] = {1, 10, 50, 75, 90, 95, 100};

std::vector<std::int16_t> cpu_coeffs(const HostFrame& f, const FrameGeometry& g,
                                     const QuantTables& t) {
  std::vector<std::int16_t> out(g.coefficient_count(), std::int16_t{0x7777});
  transform_cpu(f.view(), g, t, out.data());
  return out;
}

std::vector<std::int16_t> gpu_coeffs(const gpu::TransformPlan& plan, const DeviceFrame& d,
                                     gpu::DeviceBuffer& coeffs, KernelVariant v, int stages) {
  const FrameGeometry& g = plan.geometry();
  MJPEG_CUDA_CHECK(cudaMemset(coeffs.get(), 0xA5, coeffs.size()));  // poison
  gpu::launch_transform(plan, d.data, d.pitch, coeffs.as<std::int16_t>(), v, stages, nullptr);
  MJPEG_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<std::int16_t> out(g.coefficient_count());
  MJPEG_CUDA_CHECK(cudaMemcpy(out.data(), coeffs.get(), out.size() * sizeof(std::int16_t),
                              cudaMemcpyDeviceToHost));
  return out;
}

std::string first_difference(const std::vector<std::int16_t>& a,
                              const std::vector<std::int16_t>& b) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i])
      return "first difference at coefficient " + std::to_string(i) + " (block " +
             std::to_string(i / 64) + ", zigzag " + std::to_string(i % 64) +
             "): cpu " + std::to_string(a[i]) + ", gpu " + std::to_string(b[i]);
  return "";
}

// Compares every variant and stage count for one frame, geometry and quality (or tables).
void expect_all_variants_match(const HostFrame& f, Subsampling s, int quality,
                               std::size_t pitch, std::size_t offset, bool all_stages,
                               const EncodeOptions* tables = nullptr) {
  const FrameGeometry g = make_geometry(f.width, f.height, s);
  const QuantTables t = tables ? make_quant_tables(*tables, g.num_components)
                               : make_quant_tables(quality, g.num_components == 1 ? 1 : 2);
  const std::vector<std::int16_t> ref = cpu_coeffs(f, g, t);
  const DeviceFrame d(f, pitch, offset);
  gpu::DeviceBuffer coeffs(g.coefficient_count() * sizeof(std::int16_t));
  const gpu::TransformPlan plan(g, t, f.channels == 3 ? PixelFormat::rgb24 : PixelFormat::gray8);
  const char* only = std::getenv("MJPEG_GPU_ONLY_VARIANT");  // e.g. for synccheck runs
  for (KernelVariant v : gpu::kAllVariants) {
    if (only && *only && parse_kernel_variant(only) != v) continue;
    const int max_s = v == KernelVariant::direct ? 1 : (all_stages ? gpu::kMaxStages : 2);
    for (int st = 1; st <= max_s; ++st) {
      const std::vector<std::int16_t> got = gpu_coeffs(plan, d, coeffs, v, st);
      ASSERT_EQ(got.size(), ref.size());
      const bool same = std::memcmp(got.data(), ref.data(), ref.size() * sizeof(std::int16_t)) == 0;
      EXPECT_TRUE(same) << f.width << "x" << f.height << " " << to_string(s) << " q" << quality
                        << " ch" << f.channels << " pitch " << pitch << " offset " << offset
                        << " " << to_string(v) << " S=" << st << ": "
                        << first_difference(ref, got);
      if (!same) return;
    }
  }
}

struct Size {
  int w, h;
};

using Param = std::tuple<Subsampling, Size>;

class GpuExact : public GpuTest, public ::testing::WithParamInterface<Param> {};

TEST_P(GpuExact, AllVariantsStagesQualitiesPitchesMatchCpu) {
  const auto [s, size] = GetParam();
  // {300, 48} is 'small' too: the smallest kind of frame with 4:2:0 interior tiles (the
  // balanced fast path), so the sanitizers cover it.
  const bool small = size.w * size.h <= 64 * 64 || (size.w == 300 && size.h == 48);
  if (small_mode() && !small) GTEST_SKIP() << "MJPEG_GPU_SMALL=1: large frame skipped";
  const std::vector<int> channel_sets = s == Subsampling::gray ? std::vector<int>{3, 1}
                                                               : std::vector<int>{3};
  for (int ch : channel_sets) {
    const std::size_t row = static_cast<std::size_t>(size.w) * ch;
    const HostFrame f = gputest::synthetic_frame(size.w, size.h, ch, 17u + size.w * 31u + size.h);
    // Packed rows (pitch = row bytes, any alignment), a 16-multiple padded pitch, and an odd
    // pitch on a misaligned base.
    const std::size_t padded = (row + 15) / 16 * 16 + 64;
    const std::size_t odd = row + 5;
    for (int q : kQualities) {
      // Small mode (sanitizer runs): one quality, packed and odd pitches only.
      if (small_mode() && q != 90) continue;
      const bool all_stages = small || q == 90;
      expect_all_variants_match(f, s, q, row, 0, all_stages);
      if (q == 75 || q == 90 || small) {
        if (!small_mode()) expect_all_variants_match(f, s, q, padded, 0, all_stages);
        expect_all_variants_match(f, s, q, odd, 3, all_stages);
      }
      if (HasFailure()) return;
    }
  }
}

const Size kSizes[] = {{1, 1},     {7, 5},       {8, 8},       {17, 9},      {33, 17},
                       {16, 16},   {40, 24},     {4001, 9},    {9, 4001},    {1921, 1081},
                       {1920, 1080}, {259, 131},  {300, 48}};
const Subsampling kSamplings[] = {Subsampling::s444, Subsampling::s422, Subsampling::s420,
                                  Subsampling::gray};

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const auto [s, size] = info.param;
  return "s" + to_string(s) + "_" + std::to_string(size.w) + "x" + std::to_string(size.h);
}

INSTANTIATE_TEST_SUITE_P(Matrix, GpuExact,
                         ::testing::Combine(::testing::ValuesIn(kSamplings),
                                            ::testing::ValuesIn(kSizes)),
                         param_name);

// Custom tables (cjpeg -qtables / -qslots): each component quantized with its own table, Cb
// and Cr on different ones (the third table of DeviceTables), and the tuned presets.
TEST_F(GpuTest, PerComponentTablesAndPresetsMatchCpu) {
  EncodeOptions own;
  own.quality = 50;
  own.qtables.assign(3, QuantTableValues{});
  for (int i = 0; i < 64; ++i) {
    own.qtables[0][i] = 1 + static_cast<std::uint32_t>(i) % 9;
    own.qtables[1][i] = 7 + 5 * static_cast<std::uint32_t>(i);  // up to 322: 16-bit
    own.qtables[2][i] = 2 + static_cast<std::uint32_t>(i) / 3;
  }
  EncodeOptions psnr, ssim;
  psnr.tune = Tune::psnr;
  ssim.tune = Tune::ssim;
  ssim.quality = 40;
  const std::vector<std::pair<std::vector<int>, const EncodeOptions*>> cases = {
      {{0, 2, 1}, &own}, {{2, 1, 0}, &own}, {{1}, &own}, {{}, &psnr}, {{}, &ssim}};
  for (const Size size : {Size{40, 24}, Size{300, 48}, Size{259, 131}}) {
    if (small_mode() && size.w > 64 && size.w != 300) continue;
    for (Subsampling s : kSamplings) {
      for (int ch : s == Subsampling::gray ? std::vector<int>{3, 1} : std::vector<int>{3}) {
        const HostFrame f = gputest::synthetic_frame(size.w, size.h, ch, 5u + size.w);
        const std::size_t row = static_cast<std::size_t>(size.w) * ch;
        for (const auto& [slots, base] : cases) {
          EncodeOptions o = *base;
          o.qslots = slots;
          expect_all_variants_match(f, s, 0, row, 0, small_mode(), &o);
          expect_all_variants_match(f, s, 0, row + 5, 3, false, &o);
          if (HasFailure()) return;
        }
      }
    }
  }
}

// The JPEG written from GPU coefficients equals encode_jpeg's (the CPU path) byte for byte.
TEST_F(GpuTest, JpegFromGpuCoefficientsEqualsCpuJpeg) {
  const int w = small_mode() ? 37 : 643, h = small_mode() ? 29 : 481;
  for (Subsampling s : kSamplings) {
    for (int q : {10, 75, 90, 100}) {
      if (small_mode() && q != 90) continue;
      for (bool optimize : {false, true}) {
        const HostFrame f = gputest::synthetic_frame(w, h, 3, 99u + q);
        EncodeOptions o;
        o.quality = q;
        o.subsampling = s;
        o.optimize = optimize;
        o.restart_interval = optimize ? 0 : 7;
        const std::vector<std::uint8_t> cpu = encode_jpeg(f.view(), o);
        const FrameGeometry g = make_geometry(w, h, s);
        const QuantTables t = make_quant_tables(q, g.num_components == 1 ? 1 : 2);
        const DeviceFrame d(f, f.stride);
        gpu::DeviceBuffer coeffs(g.coefficient_count() * sizeof(std::int16_t));
        const gpu::TransformPlan plan(g, t, PixelFormat::rgb24);
        const std::vector<std::int16_t> c = gpu_coeffs(plan, d, coeffs, KernelVariant::pipeline, 2);
        std::vector<std::uint8_t> jpeg;
        encode_coefficients(g, t, c.data(), o, jpeg);
        ASSERT_EQ(jpeg.size(), cpu.size()) << to_string(s) << " q" << q;
        EXPECT_EQ(std::memcmp(jpeg.data(), cpu.data(), cpu.size()), 0) << to_string(s) << " q" << q;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Planar input
// ---------------------------------------------------------------------------------------------

/// The conversions the sources use: Y4M's rounded form (BT.601 limited, BT.709 full) and the
/// truncated form of decoded video (libswscale's BT.601 table, limited range).
math::YccToRgb ycc_case(int which) {
  static const int kSws601[4] = {104597, 132201, 25675, 53279};
  switch (which) {
    case 0: return math::make_rounded_ycc(0.299, 0.114, true);
    case 1: return math::make_rounded_ycc(0.2126, 0.0722, false);
    default: return math::make_truncated_ycc(kSws601, true);
  }
}

std::vector<std::int16_t> planar_gpu_coeffs(const gpu::TransformPlan& plan,
                                            const gputest::DevicePlanar& d,
                                            gpu::DeviceBuffer& coeffs, KernelVariant v, int stages) {
  const FrameGeometry& g = plan.geometry();
  MJPEG_CUDA_CHECK(cudaMemset(coeffs.get(), 0xA5, coeffs.size()));  // poison
  gpu::launch_transform_planar(plan, d.plane, d.pitch, coeffs.as<std::int16_t>(), v, stages,
                               nullptr);
  MJPEG_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<std::int16_t> out(g.coefficient_count());
  MJPEG_CUDA_CHECK(cudaMemcpy(out.data(), coeffs.get(), out.size() * sizeof(std::int16_t),
                              cudaMemcpyDeviceToHost));
  return out;
}

/// Device pitches and plane offsets for one upload of a planar frame.
struct PlanarPlacement {
  std::size_t pitch[3];
  std::size_t offset[3];
};

/// Every variant and stage count on one planar frame in each placement, against
/// transform_cpu of its RGB.
void expect_planar_matches(const gputest::PlanarFrame& f, Subsampling s, int quality,
                           const std::vector<PlanarPlacement>& placements, bool all_stages,
                           const EncodeOptions* tables = nullptr) {
  const FrameGeometry g = make_geometry(f.width, f.height, s);
  const QuantTables t = tables ? make_quant_tables(*tables, g.num_components)
                               : make_quant_tables(quality, g.num_components == 1 ? 1 : 2);
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(f.width) * f.height * 3);
  planar_to_rgb(f.view(), rgb.data(), static_cast<std::size_t>(f.width) * 3);
  const ImageView rgb_view{rgb.data(), f.width, f.height, PixelFormat::rgb24,
                           static_cast<std::size_t>(f.width) * 3};
  std::vector<std::int16_t> ref(g.coefficient_count(), std::int16_t{0x7777});
  transform_cpu(rgb_view, g, t, ref.data());
  gpu::DeviceBuffer coeffs(g.coefficient_count() * sizeof(std::int16_t));
  const gpu::TransformPlan plan(g, t, f.format);
  const char* only = std::getenv("MJPEG_GPU_ONLY_VARIANT");
  for (const PlanarPlacement& pl : placements) {
    const gputest::DevicePlanar d(f, pl.pitch, pl.offset);
    for (KernelVariant v : gpu::kAllVariants) {
      if (only && *only && parse_kernel_variant(only) != v) continue;
      const int max_s = v == KernelVariant::direct ? 1 : (all_stages ? gpu::kMaxStages : 2);
      for (int st = 1; st <= max_s; ++st) {
        const std::vector<std::int16_t> got = planar_gpu_coeffs(plan, d, coeffs, v, st);
        ASSERT_EQ(got.size(), ref.size());
        const bool same =
            std::memcmp(got.data(), ref.data(), ref.size() * sizeof(std::int16_t)) == 0;
        EXPECT_TRUE(same) << f.width << "x" << f.height << " in "
                          << static_cast<int>(f.format.chroma) << " ycc form "
                          << f.format.ycc.truncated << " out " << to_string(s) << " q"
                          << quality << " pitches " << pl.pitch[0] << "/" << pl.pitch[1]
                          << " offsets " << pl.offset[0] << "/" << pl.offset[1] << "/"
                          << pl.offset[2] << " " << to_string(v) << " S=" << st << ": "
                          << first_difference(ref, got);
        if (!same) return;
      }
    }
  }
}

using PlanarParam = std::tuple<PlanarChroma, Subsampling, Size>;

class GpuPlanarExact : public GpuTest, public ::testing::WithParamInterface<PlanarParam> {};

TEST_P(GpuPlanarExact, AllVariantsStagesPitchesMatchCpuOfTheRgb) {
  const auto [chroma, s, size] = GetParam();
  const bool small = size.w * size.h <= 64 * 64 || (size.w == 300 && size.h == 48);
  if (small_mode() && !small) GTEST_SKIP() << "MJPEG_GPU_SMALL=1: large frame skipped";
  // Sanitizer runs (small mode): the edge cases 1x1, 17x9, 33x17 and the 4:2:0 fast path's
  // 300x48, one conversion form (two for 4:2:0 input) and the misaligned placement only.
  if (small_mode() && (size.w == 7 || size.w == 8 || size.w == 40))
    GTEST_SKIP() << "MJPEG_GPU_SMALL=1: covered by the other small sizes";
  const bool large = size.w * size.h > 1000 * 1000;
  for (int form = 0; form < 3; ++form) {
    if ((small_mode() || large) && form == 1) continue;
    if (small_mode() && form == 2 && chroma != PlanarChroma::c420) continue;
    PlanarFormat pf;
    pf.chroma = chroma;
    pf.ycc = ycc_case(form);
    const gputest::PlanarFrame f =
        gputest::synthetic_planar(size.w, size.h, pf, 5u + size.w + form);
    const PlanarLayout l = f.layout();
    auto up16 = [](std::size_t v) { return (v + 15) / 16 * 16; };
    // Packed planes as a Y4M slot holds them, 16-aligned padded pitches, and odd pitches on
    // misaligned bases (different for Y and chroma).
    std::vector<PlanarPlacement> placements = {
        {{l.pitch[0] + 3, l.pitch[1] + 7, l.pitch[1] + 7}, {5, 1, 11}}};
    if (!small_mode()) {
      placements.push_back({{l.pitch[0], l.pitch[1], l.pitch[1]}, {0, 0, 0}});
      placements.push_back(
          {{up16(l.pitch[0]) + 32, up16(l.pitch[1]) + 16, up16(l.pitch[1]) + 16}, {0, 0, 0}});
    }
    for (int q : {90, 50}) {
      if ((small_mode() || large) && q != 90) continue;
      expect_planar_matches(f, s, q, placements, small || q == 90);
      if (HasFailure()) return;
    }
  }
}

const PlanarChroma kPlanarChromas[] = {PlanarChroma::c420, PlanarChroma::c422, PlanarChroma::c444,
                                       PlanarChroma::mono};
const Size kPlanarSizes[] = {{1, 1},   {7, 5},     {8, 8},      {17, 9},     {33, 17},
                             {40, 24}, {300, 48},  {259, 131},  {4001, 9},   {1921, 1081},
                             {1920, 1080}};

std::string planar_param_name(const ::testing::TestParamInfo<PlanarParam>& info) {
  const auto [chroma, s, size] = info.param;
  const char* in = chroma == PlanarChroma::c420   ? "yuv420"
                   : chroma == PlanarChroma::c422 ? "yuv422"
                   : chroma == PlanarChroma::c444 ? "yuv444"
                                                  : "mono";
  return std::string(in) + "_s" + to_string(s) + "_" + std::to_string(size.w) + "x" +
         std::to_string(size.h);
}

INSTANTIATE_TEST_SUITE_P(Planar, GpuPlanarExact,
                         ::testing::Combine(::testing::ValuesIn(kPlanarChromas),
                                            ::testing::ValuesIn(kSamplings),
                                            ::testing::ValuesIn(kPlanarSizes)),
                         planar_param_name);

// --rdo deadzone and trellis (core/rdo.hpp): the kernels choose the CPU transform's levels,
// packed and planar, every variant, sampling and placement, from 16-bit tables (q 5) to q 100;
// the trellis also with --tune ssim (each block's lambda from its own contrast).
TEST_F(GpuTest, RateDistortionQuantizationMatchesCpu) {
  for (const auto& [rdo, tune] : {std::pair{Rdo::deadzone, Tune::none}, {Rdo::trellis, Tune::none},
                                  {Rdo::trellis, Tune::ssim}}) {
    for (int q : {5, 30, 75, 95, 100}) {
      SCOPED_TRACE(to_string(rdo) + " tune " + to_string(tune) + " q" + std::to_string(q));
      EncodeOptions o;
      o.rdo = rdo;
      o.tune = tune;
      o.quality = q;
      for (const Size size : {Size{40, 24}, Size{300, 48}, Size{259, 131}, Size{1921, 1081}}) {
        if (small_mode() && (size.w > 300 || q == 30 || q == 95)) continue;
        for (Subsampling s : kSamplings) {
          o.subsampling = s;  // the trellis weighs chroma by its sampling
          const HostFrame f = gputest::synthetic_frame(size.w, size.h, 3, 9u + size.w + q);
          const std::size_t row = static_cast<std::size_t>(size.w) * 3;
          expect_all_variants_match(f, s, q, row + 5, 3, small_mode(), &o);
          PlanarFormat pf;
          pf.chroma = PlanarChroma::c420;
          pf.ycc = ycc_case(0);
          const gputest::PlanarFrame pl = gputest::synthetic_planar(size.w, size.h, pf, 3u + q);
          const PlanarLayout l = pl.layout();
          expect_planar_matches(pl, s, q, {{{l.pitch[0] + 3, l.pitch[1] + 7, l.pitch[1] + 7},
                                            {5, 1, 11}}},
                                small_mode(), &o);
          if (HasFailure()) return;
        }
      }
    }
  }
}

// The JPEG written from the GPU coefficients of a planar frame equals encode_jpeg of its RGB.
TEST_F(GpuTest, JpegFromPlanarGpuCoefficientsEqualsCpuJpegOfTheRgb) {
  const int w = small_mode() ? 37 : 643, h = small_mode() ? 29 : 481;
  for (PlanarChroma chroma : kPlanarChromas) {
    PlanarFormat pf;
    pf.chroma = chroma;
    pf.ycc = ycc_case(0);
    const gputest::PlanarFrame f = gputest::synthetic_planar(w, h, pf, 41u);
    std::vector<std::uint8_t> rgb(static_cast<std::size_t>(w) * h * 3);
    planar_to_rgb(f.view(), rgb.data(), static_cast<std::size_t>(w) * 3);
    const ImageView view{rgb.data(), w, h, PixelFormat::rgb24, static_cast<std::size_t>(w) * 3};
    const PlanarLayout l = f.layout();
    const std::size_t zero[3] = {0, 0, 0};
    const std::size_t pitches[3] = {l.pitch[0], l.pitch[1], l.pitch[1]};
    const gputest::DevicePlanar d(f, pitches, zero);
    for (Subsampling s : kSamplings) {
      EncodeOptions o;
      o.quality = 85;
      o.subsampling = s;
      o.restart_interval = 5;
      const std::vector<std::uint8_t> cpu = encode_jpeg(view, o);
      const FrameGeometry g = make_geometry(w, h, s);
      const QuantTables t = make_quant_tables(o.quality, g.num_components == 1 ? 1 : 2);
      gpu::DeviceBuffer coeffs(g.coefficient_count() * sizeof(std::int16_t));
      const gpu::TransformPlan plan(g, t, pf);
      const std::vector<std::int16_t> c = planar_gpu_coeffs(plan, d, coeffs, KernelVariant::pipeline, 2);
      std::vector<std::uint8_t> jpeg;
      encode_coefficients(g, t, c.data(), o, jpeg);
      ASSERT_EQ(jpeg.size(), cpu.size()) << to_string(s);
      EXPECT_EQ(std::memcmp(jpeg.data(), cpu.data(), cpu.size()), 0) << to_string(s);
    }
  }
}

TEST_F(GpuTest, PlanarBadArgumentsAreUsageErrors) {
  const FrameGeometry g = make_geometry(16, 16, Subsampling::s420);
  const QuantTables t = make_quant_tables(90, 2);
  PlanarFormat pf;
  pf.chroma = PlanarChroma::c420;
  pf.ycc = ycc_case(0);
  const gpu::TransformPlan planar(g, t, pf);
  const gpu::TransformPlan packed(g, t, PixelFormat::rgb24);
  gpu::DeviceBuffer px(16 * 16 * 3), coeffs(g.coefficient_count() * 2);
  // Defined pixels: the one launch that runs reads them (compute-sanitizer initcheck).
  MJPEG_CUDA_CHECK(cudaMemset(px.get(), 128, 16 * 16 * 3));
  const std::uint8_t* base = px.as<std::uint8_t>();
  const std::uint8_t* planes[3] = {base, base + 256, base + 320};
  const std::size_t pitches[3] = {16, 8, 8};
  EXPECT_NO_THROW(gpu::launch_transform_planar(planar, planes, pitches, coeffs.as<std::int16_t>(),
                                               KernelVariant::pipeline, 2, nullptr));
  MJPEG_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_THROW(gpu::launch_transform(planar, base, 48, coeffs.as<std::int16_t>(),
                                     KernelVariant::pipeline, 2, nullptr),
               UsageError);
  EXPECT_THROW(gpu::launch_transform_planar(packed, planes, pitches, coeffs.as<std::int16_t>(),
                                            KernelVariant::pipeline, 2, nullptr),
               UsageError);
  const std::size_t short_chroma[3] = {16, 7, 7};
  EXPECT_THROW(gpu::launch_transform_planar(planar, planes, short_chroma,
                                            coeffs.as<std::int16_t>(), KernelVariant::pipeline, 2,
                                            nullptr),
               UsageError);
  const std::uint8_t* missing[3] = {base, nullptr, nullptr};
  EXPECT_THROW(gpu::launch_transform_planar(planar, missing, pitches, coeffs.as<std::int16_t>(),
                                            KernelVariant::pipeline, 2, nullptr),
               UsageError);
  EXPECT_THROW(gpu::TransformPlan(g, t, PlanarFormat{}), UsageError);
}

TEST_F(GpuTest, BadArgumentsAreUsageErrors) {
  const FrameGeometry g = make_geometry(16, 16, Subsampling::s420);
  const QuantTables t = make_quant_tables(90, 2);
  const gpu::TransformPlan plan(g, t, PixelFormat::rgb24);
  gpu::DeviceBuffer px(16 * 16 * 3), coeffs(g.coefficient_count() * 2);
  EXPECT_THROW(gpu::launch_transform(plan, px.as<std::uint8_t>(), 16 * 3, coeffs.as<std::int16_t>(),
                                     KernelVariant::pipeline, 5, nullptr),
               UsageError);
  EXPECT_THROW(gpu::launch_transform(plan, px.as<std::uint8_t>(), 10, coeffs.as<std::int16_t>(),
                                     KernelVariant::pipeline, 1, nullptr),
               UsageError);
  EXPECT_THROW(parse_kernel_variant("bogus"), UsageError);
  EXPECT_EQ(parse_kernel_variant("partitioned"), KernelVariant::partitioned);
}

#ifdef MJPEG_GPU_TESTS_WITH_MEDIA
// Real photographs (Kodak, 768x512) of the shared media (missing media fail the test).
TEST_F(GpuTest, KodakImagesMatchCpu) {
  if (small_mode()) GTEST_SKIP() << "MJPEG_GPU_SMALL=1";
  MJPEG_REQUIRE_MEDIA();
  for (int index : {1, 3, 7, 23}) {
    const test::Image& img = test::kodak(index);
    HostFrame f;
    f.width = img.width;
    f.height = img.height;
    f.channels = img.channels;
    f.stride = img.stride();
    f.bytes = img.pixels;
    for (Subsampling s : kSamplings)
      for (int q : {50, 90, 100}) expect_all_variants_match(f, s, q, f.stride, 0, q == 90);
  }
}
#endif

}  // namespace
}  // namespace mjpeg
