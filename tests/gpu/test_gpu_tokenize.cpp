// GPU tokenizer exactness: for every size, sampling, quality and restart interval, the stream the
// GPU writes equals the CPU tokenizer's, word for word: coded blocks (header, MCU-row bit
// offsets, block words, the AC stream with its padding and slack: tokenize_blocks) and symbol
// slots with or without the histogram (tokenize); coefficient patterns that reach every case
// of the formats (escapes, ZRLs, a nonzero coefficient 63, empty blocks, the longest coded AC
// parts) included; an output too small for the stream is an overflow, not a partial stream;
// and GPU transform + GPU tokenizer + CPU token coder write exactly encode_jpeg's bytes.
//
// Skipped without a usable CUDA device; fails instead with MJPEG_REQUIRE_GPU=1.
// MJPEG_GPU_SMALL=1 keeps only small frames (for compute-sanitizer runs).
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/gpu_guard.hpp"
#include "cuda_check.hpp"
#include "cuda_raii.hpp"
#include "gpu_test_util.hpp"
#include "gpu_tokenize.hpp"
#include "gpu_transform.hpp"
#include "core/geometry.hpp"
#include "core/quant.hpp"
#include "jpeg/huffman.hpp"
#include "jpeg/tokens.hpp"
#include "jpeg/transform_cpu.hpp"
#include "mjpeg/encoder.hpp"
#include "core/token_format.hpp"

namespace mjpeg {
namespace {

bool env_equals(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v && std::string(v) == value;
}

class GpuTokenize : public ::testing::Test {
 protected:
  void SetUp() override {
    MJPEG_NEED_GPU();
  }
};

/// What the GPU wrote: the header words, the row starts, the histogram and the body (when it
/// fits).
struct GpuStream {
  tokens::StreamHeader header{};
  std::vector<std::uint32_t> row_start;
  std::vector<std::uint32_t> histogram;
  std::vector<std::uint16_t> slots;     // symbol slots
  std::vector<std::uint32_t> blocks;    // coded blocks: the block words ...
  std::vector<std::uint8_t> bits;       // ... and the AC stream
};

/// The AC codes of the Annex K tables, as the GPU modes make coded blocks.
tokens::AcCodes standard_codes(const FrameGeometry& g) {
  const int table_count = g.num_components == 1 ? 1 : 2;
  return ac_codes(frame_tables(table_count, nullptr), table_count);
}

GpuStream run_gpu(const gpu::TokenizePlan& plan, const FrameGeometry& g,
                  const std::vector<std::int16_t>& coeffs) {
  gpu::DeviceBuffer d_coeffs(coeffs.size() * sizeof(std::int16_t));
  MJPEG_CUDA_CHECK(cudaMemcpy(d_coeffs.get(), coeffs.data(), d_coeffs.size(), cudaMemcpyHostToDevice));
  gpu::DeviceBuffer d_out(plan.output_bytes());
  MJPEG_CUDA_CHECK(cudaMemset(d_out.get(), 0xA5, d_out.size()));  // poison
  gpu::launch_tokenize(plan, d_coeffs.as<std::int16_t>(), d_out.get(), nullptr);
  MJPEG_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<std::uint8_t> head(plan.header_bytes());
  MJPEG_CUDA_CHECK(cudaMemcpy(head.data(), d_out.get(), head.size(), cudaMemcpyDeviceToHost));
  GpuStream s;
  std::memcpy(&s.header, head.data(), sizeof s.header);
  const auto* words = reinterpret_cast<const std::uint32_t*>(head.data()) + 4;
  s.row_start.assign(words, words + g.mcus_y + 1);
  if (s.header.flags & tokens::kHistogramFlag)
    s.histogram.assign(words + g.mcus_y + 1, words + g.mcus_y + 1 + tokens::kHistogramWords);
  if (!s.header.overflow) {
    std::vector<std::uint8_t> body(s.header.body_bytes);
    MJPEG_CUDA_CHECK(cudaMemcpy(body.data(), d_out.as<std::uint8_t>() + plan.header_bytes(),
                                body.size(), cudaMemcpyDeviceToHost));
    if (plan.format() == tokens::Format::slots) {
      s.slots.resize(body.size() / 2);
      std::memcpy(s.slots.data(), body.data(), 2 * s.slots.size());
    } else if (body.size() >= 4 * g.total_blocks) {
      s.blocks.resize(g.total_blocks);
      std::memcpy(s.blocks.data(), body.data(), 4 * g.total_blocks);
      s.bits.assign(body.begin() + static_cast<std::ptrdiff_t>(4 * g.total_blocks), body.end());
    }
  }
  return s;
}

GpuStream run_gpu(const FrameGeometry& g, const std::vector<std::int16_t>& coeffs, int restart,
                  bool histogram, std::size_t capacity_bytes) {
  return run_gpu(gpu::TokenizePlan(g, restart, histogram, capacity_bytes), g, coeffs);
}

GpuStream run_gpu_blocks(const FrameGeometry& g, const std::vector<std::int16_t>& coeffs,
                         std::size_t capacity_bytes) {
  return run_gpu(gpu::TokenizePlan(g, standard_codes(g), capacity_bytes), g, coeffs);
}

template <typename T>
std::string first_difference(const std::vector<T>& a, const std::vector<T>& b, const char* what) {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i)
    if (a[i] != b[i])
      return std::string("first difference at ") + what + " " + std::to_string(i) + ": cpu " +
             std::to_string(a[i]) + ", gpu " + std::to_string(b[i]);
  return a.size() == b.size() ? "" : std::string(what) + " counts differ";
}

void expect_same_stream(const FrameGeometry& g, const std::vector<std::int16_t>& coeffs,
                        int restart, bool histogram, const std::string& what) {
  TokenBuffer cpu;
  tokenize(g, coeffs.data(), restart, histogram, cpu);
  const GpuStream gs =
      run_gpu(g, coeffs, restart, histogram, 2 * g.total_blocks * tokens::kMaxSlotsPerBlock);
  SCOPED_TRACE(what + " restart " + std::to_string(restart) + (histogram ? " histogram" : ""));
  ASSERT_EQ(gs.header.overflow, 0u);
  EXPECT_EQ(gs.header.rows, static_cast<std::uint32_t>(g.mcus_y));
  EXPECT_EQ(gs.header.flags, histogram ? tokens::kHistogramFlag : 0u);
  ASSERT_EQ(gs.header.body_bytes, 2 * cpu.slots.size());
  EXPECT_EQ(gs.row_start, cpu.row_start);
  if (histogram) {
    EXPECT_EQ(gs.histogram, cpu.histogram);
  }
  EXPECT_TRUE(gs.slots == cpu.slots) << first_difference(cpu.slots, gs.slots, "slot");
}

void expect_same_blocks(const FrameGeometry& g, const std::vector<std::int16_t>& coeffs,
                        const std::string& what) {
  TokenBuffer cpu;
  tokenize_blocks(g, coeffs.data(), standard_codes(g), cpu);
  // Exactly the stream's size: the pipeline's capacity (the coefficients' bytes) is too small
  // for some of these blocks (a 1x1 frame of 63 large AC values), which is an overflow there.
  const GpuStream gs = run_gpu_blocks(g, coeffs, cpu.bytes());
  SCOPED_TRACE(what + " coded blocks");
  ASSERT_EQ(gs.header.overflow, 0u);
  EXPECT_EQ(gs.header.rows, static_cast<std::uint32_t>(g.mcus_y));
  EXPECT_EQ(gs.header.flags,
            static_cast<std::uint32_t>(tokens::Format::blocks) << tokens::kFormatShift);
  ASSERT_EQ(gs.header.body_bytes, cpu.bytes());
  EXPECT_EQ(gs.row_start, cpu.row_start);
  EXPECT_TRUE(gs.blocks == cpu.blocks) << first_difference(cpu.blocks, gs.blocks, "block");
  EXPECT_TRUE(gs.bits == cpu.bits) << first_difference(cpu.bits, gs.bits, "AC stream byte");
}

/// Coefficients of every kind of block (deterministic): empty, full, long zero runs, only
/// coefficient 63, runs of exactly 16 and 32, the longest lane of the coded-block kernel, sizes
/// up to 10 (AC) and 11 (DC differences).
std::vector<std::int16_t> edge_coefficients(const FrameGeometry& g, std::uint32_t seed) {
  std::vector<std::int16_t> c(g.coefficient_count());
  std::uint32_t state = seed * 2654435761u + 1u;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
  };
  auto value = [&] {
    const int mag = next() % 8 == 0 ? 1 + static_cast<int>(next() % 1023) : 1 + static_cast<int>(next() % 7);
    return static_cast<std::int16_t>(next() & 1 ? mag : -mag);
  };
  for (std::size_t b = 0; b < g.total_blocks; ++b) {
    std::int16_t* blk = c.data() + b * kBlockSize;
    blk[0] = static_cast<std::int16_t>(static_cast<int>(next() % 2048) - 1024);
    const int kind = static_cast<int>(next() % 10);
    switch (kind) {
      case 0: break;
      case 8:  // the longest coded AC part: 63 values of size 10
        for (int k = 1; k < 64; ++k) blk[k] = next() & 1 ? 1023 : -1023;
        break;
      case 9:  // the longest lane: 62 and 63 of size 10 after 61 zeros (3 ZRLs), 85 bits with
               // the Annex K codes (the coded-block kernel keeps up to 64 bits of a lane)
        blk[62] = next() & 1 ? 1023 : -1023;
        blk[63] = next() & 1 ? 1000 : -1000;
        break;
      case 1: for (int k = 1; k < 64; ++k) blk[k] = value(); break;
      case 2:
        blk[1 + next() % 3] = value();
        blk[20 + next() % 10] = value();
        blk[63] = next() & 1 ? value() : 0;
        break;
      case 3: blk[63] = value(); break;
      case 4: blk[17] = value(); blk[50] = value(); break;
      default:
        for (int k = 1; k < 64; ++k)
          if (next() % 64 < static_cast<std::uint32_t>(8 * kind)) blk[k] = value();
        break;
    }
    // Coded blocks hold the DC as it is: every int16 passes through (the GPU never sees
    // differences); the slot tests keep it within differences of size 11.
  }
  return c;
}

struct TokenizeSize {
  int w, h;
};

std::vector<TokenizeSize> sizes() {
  std::vector<TokenizeSize> s = {{1, 1}, {7, 5}, {8, 8}, {17, 9}, {33, 17}, {300, 48}, {259, 131}};
  if (!env_equals("MJPEG_GPU_SMALL", "1")) {
    s.push_back({1921, 1081});
    s.push_back({4001, 9});
    s.push_back({9, 4001});
  }
  return s;
}

const Subsampling kTokenizeSamplings[] = {Subsampling::s444, Subsampling::s422,
                                          Subsampling::s420, Subsampling::gray};

TEST_F(GpuTokenize, EdgeCaseCoefficientsMatchTheCpuTokenizer) {
  for (Subsampling s : kTokenizeSamplings)
    for (const TokenizeSize& z : sizes()) {
      const FrameGeometry g = make_geometry(z.w, z.h, s);
      const std::vector<std::int16_t> c = edge_coefficients(g, static_cast<std::uint32_t>(z.w * 31 + z.h));
      const std::string what = std::to_string(z.w) + "x" + std::to_string(z.h) + " " + to_string(s);
      expect_same_blocks(g, c, what);
      if (HasFatalFailure()) return;
      for (int restart : {0, 1, 7, 65535})
        for (bool histogram : {false, true}) {
          expect_same_stream(g, c, restart, histogram, what);
          if (HasFatalFailure()) return;
        }
    }
}

// The slots' prefix sum works on tiles of 2048 counts (n blocks have n + 1 counts): n + 1 just
// below, at and just above one and two tiles. Coded blocks go in tiles of 32 blocks that look
// back 32 tiles at a time and share a word with each neighbour: one tile short, exact and one
// over, and one to 33 tiles of look-back. Gray frames of one block row.
TEST_F(GpuTokenize, PrefixSumTileEdgesMatchTheCpuTokenizer) {
  for (int blocks : {31, 32, 33, 1023, 1024, 1025, 1057, 2046, 2047, 2048, 4095, 4096}) {
    const FrameGeometry g = make_geometry(8 * blocks, 8, Subsampling::gray);
    const std::vector<std::int16_t> c = edge_coefficients(g, static_cast<std::uint32_t>(blocks));
    const std::string what = std::to_string(blocks) + " gray blocks";
    expect_same_blocks(g, c, what);
    if (HasFatalFailure()) return;
    for (int restart : {0, 7})
      for (bool histogram : {false, true}) {
        expect_same_stream(g, c, restart, histogram, what);
        if (HasFatalFailure()) return;
      }
  }
}

TEST_F(GpuTokenize, PictureCoefficientsMatchTheCpuTokenizer) {
  for (Subsampling s : kTokenizeSamplings)
    for (const TokenizeSize& z : sizes()) {
      const gputest::HostFrame f = gputest::synthetic_frame(z.w, z.h, 3, 7u);
      const FrameGeometry g = make_geometry(z.w, z.h, s);
      for (int q : {1, 10, 50, 90, 100}) {
        const QuantTables t = make_quant_tables(q, g.num_components == 1 ? 1 : 2);
        std::vector<std::int16_t> c(g.coefficient_count());
        transform_cpu(f.view(), g, t, c.data());
        const std::string what =
            std::to_string(z.w) + "x" + std::to_string(z.h) + " " + to_string(s) + " q" + std::to_string(q);
        expect_same_blocks(g, c, what);
        for (int restart : {0, 3}) expect_same_stream(g, c, restart, q == 90, what);
        if (HasFatalFailure()) return;
      }
    }
}

TEST_F(GpuTokenize, TooSmallAnOutputIsAnOverflowWithNothingWritten) {
  const FrameGeometry g = make_geometry(64, 48, Subsampling::s420);
  const std::vector<std::int16_t> c = edge_coefficients(g, 3);
  TokenBuffer cpu;
  tokenize(g, c.data(), 0, false, cpu);
  const std::size_t total = 2 * cpu.slots.size();
  const GpuStream exact = run_gpu(g, c, 0, false, total);
  EXPECT_EQ(exact.header.overflow, 0u);
  EXPECT_EQ(exact.slots, cpu.slots);
  const GpuStream small = run_gpu(g, c, 0, false, total - 2);
  EXPECT_EQ(small.header.overflow, 1u);
  EXPECT_EQ(small.header.body_bytes, total);  // the length it would have had
  TokenBuffer blocks;
  tokenize_blocks(g, c.data(), standard_codes(g), blocks);
  const GpuStream fits = run_gpu_blocks(g, c, blocks.bytes());
  EXPECT_EQ(fits.header.overflow, 0u);
  EXPECT_EQ(fits.bits, blocks.bits);
  const GpuStream too_small = run_gpu_blocks(g, c, blocks.bytes() - 1);
  EXPECT_EQ(too_small.header.overflow, 1u);
  EXPECT_EQ(too_small.header.body_bytes, blocks.bytes());
}

TEST_F(GpuTokenize, CodedBlocksNeedEveryAcCode) {
  const FrameGeometry g = make_geometry(64, 48, Subsampling::s420);
  tokens::AcCodes codes = standard_codes(g);
  codes.length[1][0xF0] = 0;  // no chroma ZRL
  EXPECT_THROW(gpu::TokenizePlan(g, codes, 1 << 20), UsageError);
  const FrameGeometry huge = make_geometry(65500, 65500, Subsampling::s444);
  EXPECT_THROW(gpu::TokenizePlan(huge, standard_codes(huge), 1 << 20), UsageError);
}

TEST_F(GpuTokenize, GpuTransformTokensAndCpuCoderEqualEncodeJpeg) {
  for (Subsampling s : kTokenizeSamplings)
    for (const TokenizeSize& z :
         {TokenizeSize{259, 131}, TokenizeSize{300, 48}, TokenizeSize{17, 9}}) {
      const gputest::HostFrame f = gputest::synthetic_frame(z.w, z.h, 3, 11u);
      for (bool optimize : {false, true})
        for (int restart : {0, 5})
        for (tokens::Format asked : {tokens::Format::slots, tokens::Format::blocks}) {
          EncodeOptions o;
          o.quality = 85;
          o.subsampling = s;
          o.restart_interval = restart;
          o.optimize = optimize;
          const FrameGeometry g = make_geometry(z.w, z.h, s);
          const QuantTables t = make_quant_tables(o.quality, g.num_components == 1 ? 1 : 2);
          const gpu::TransformPlan tplan(g, t, PixelFormat::rgb24);
          const gputest::DeviceFrame d(f, f.stride);
          gpu::DeviceBuffer coeffs(g.coefficient_count() * sizeof(std::int16_t));
          gpu::launch_transform(tplan, d.data, d.pitch, coeffs.as<std::int16_t>(),
                                KernelVariant::pipeline, 2, nullptr);
          // The plan the stream buffer makes for these settings, with either format asked for
          // (MJPEG_TOKEN_FORMAT).
          const std::size_t capacity = g.coefficient_count() * 2;
          const gpu::TokenizePlan kplan =
              token_format_for(g, o, asked) == tokens::Format::blocks
                  ? gpu::TokenizePlan(g, standard_codes(g), capacity)
                  : gpu::TokenizePlan(g, restart, optimize, capacity);
          EXPECT_EQ(kplan.format(), optimize ? tokens::Format::slots : asked);
          gpu::DeviceBuffer out(kplan.output_bytes());
          // Poisoned: the test copies the whole capacity back, and the tail past the stream is
          // never written (the pipeline copies only the stream; compute-sanitizer initcheck).
          MJPEG_CUDA_CHECK(cudaMemset(out.get(), 0xA5, kplan.output_bytes()));
          gpu::launch_tokenize(kplan, coeffs.as<std::int16_t>(), out.get(), nullptr);
          MJPEG_CUDA_CHECK(cudaDeviceSynchronize());
          std::vector<std::uint8_t> host(kplan.output_bytes());
          MJPEG_CUDA_CHECK(cudaMemcpy(host.data(), out.get(), host.size(), cudaMemcpyDeviceToHost));
          const TokenView v = stream_view(host.data(), kplan.header_bytes(), g.total_blocks);
          std::vector<std::uint8_t> jpeg;
          encode_tokens(g, t, v, o, jpeg);
          const std::vector<std::uint8_t> expected = encode_jpeg(f.view(), o);
          EXPECT_TRUE(jpeg == expected)
              << z.w << "x" << z.h << " " << to_string(s) << (optimize ? " optimize" : "")
              << " restart " << restart
              << (kplan.format() == tokens::Format::blocks ? " coded blocks" : " symbol slots");
        }
    }
}

}  // namespace
}  // namespace mjpeg
