// The coded-blocks token format (src/core/token_format.hpp), its CPU tokenizer (the reference of
// the GPU kernel) and packer, and the coefficient coder, held to libjpeg in process: the
// entropy-coded segment libjpeg's jpeg_write_coefficients writes for the same coefficients
// (tests/common/oracle.hpp libjpeg_scan), on every instruction-set variant of the build (one
// this CPU cannot run is reported skipped by name) and on several threads; whole files from pixels against libjpeg_encode (qualities down to 16-bit
// tables, every sampling, restart intervals). Hand-made blocks check the format bit by bit;
// malformed streams are errors that leave the output as it was. The GPU modes' choice of format
// (coded blocks unless MJPEG_TOKEN_FORMAT=slots) is checked too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "common/oracle.hpp"
#include "common/scoped_env.hpp"
#include "common/test_media.hpp"
#include "common/variants.hpp"
#include "core/geometry.hpp"
#include "core/quant.hpp"
#include "core/token_format.hpp"
#include "jpeg/entropy.hpp"
#include "jpeg/huffman.hpp"
#include "jpeg/tokens.hpp"
#include "jpeg/transform_cpu.hpp"
#include "mjpeg/encoder.hpp"
#include "mjpeg/error.hpp"

// A namespace of its own: the test files are compiled as one unity file.
namespace mjpeg::token_coder_test {

std::string name_of(const FrameGeometry& g, int restart, bool optimize) {
  return std::to_string(g.width) + "x" + std::to_string(g.height) + " " +
         std::to_string(g.num_components) + " components, luma " +
         std::to_string(g.comp[0].h) + "x" + std::to_string(g.comp[0].v) + ", restart " +
         std::to_string(restart) + (optimize ? ", optimize" : "");
}

/// Coefficients of every kind of block that libjpeg accepts (deterministic, xorshift): empty,
/// full of the largest values (+-1023, 16-bit codes: a block's longest AC part), long zero runs
/// (ZRL, runs of exactly 16, 32 and 48), only coefficient 63 (no EOB), DC values from -1023 to
/// 1024 (every difference up to size 11; 1024 lies outside the coefficient coder's value
/// table). The dummy blocks are made as libjpeg makes them.
std::vector<std::int16_t> edge_coefficients(const FrameGeometry& g, std::uint32_t seed) {
  std::vector<std::int16_t> c(g.coefficient_count(), 0);
  std::uint32_t state = seed * 2654435761u + 12345u;
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
    blk[0] = next() % 16 == 0 ? 1024 : static_cast<std::int16_t>(static_cast<int>(next() % 2047) - 1023);
    switch (next() % 10) {
      case 0:
        break;
      case 1:
        for (int k = 1; k < 64; ++k) blk[k] = value();
        break;
      case 2:
        for (int k = 1; k < 64; ++k) blk[k] = next() & 1 ? 1023 : -1023;
        break;
      case 3:
        blk[1 + next() % 3] = value();
        blk[20 + next() % 10] = value();
        blk[63] = next() & 1 ? value() : 0;
        break;
      case 4:
        blk[63] = value();
        break;
      case 5:
        blk[17] = value();  // runs of exactly 16 (a ZRL and run 0), 15 and 29
        blk[33] = value();
        blk[63] = value();
        break;
      case 6:
        blk[49] = value();  // a run of 48: three ZRL codes, then the value
        break;
      default:
        for (int k = 1; k < 64; ++k)
          if (next() % 64 < 6 * (next() % 8)) blk[k] = value();
        break;
    }
  }
  fill_dummy_blocks(g, c.data());
  return c;
}

HuffmanTables tables_for(const FrameGeometry& g, const std::int16_t* coeffs, int restart,
                         bool optimize) {
  const int table_count = g.num_components == 1 ? 1 : 2;
  HuffmanTables t;
  if (optimize) {
    HuffmanStats stats;
    gather_stats(g, coeffs, restart, stats);
    t = frame_tables(table_count, &stats);
  } else {
    t = frame_tables(table_count, nullptr);
  }
  if (table_count == 1) t.dc[1] = t.dc[0], t.ac[1] = t.ac[0];
  return t;
}

const Subsampling kSamplings[] = {Subsampling::s420, Subsampling::s422, Subsampling::s444,
                                  Subsampling::gray};

// ---------------------------------------------------------------------------------------------
// The coders against libjpeg's jpeg_write_coefficients.
// ---------------------------------------------------------------------------------------------
TEST(CoderVariants, TheBestComesFirstAndGenericLast) {
  for (const std::vector<std::string>& variants : {token_coder_variants(), huffman_variants()}) {
    ASSERT_FALSE(variants.empty());
    EXPECT_EQ(variants.back(), "generic");
  }
  EXPECT_EQ(token_coder_variants().front(), token_coder_variant());
  EXPECT_EQ(huffman_variants().front(), huffman_variant());
  // The variants this CPU runs are those of the build that it can run, in the same order.
  const std::vector<std::string> runs = token_coder_variants();
  std::vector<std::string> runnable;
  for (const std::string& v : built_token_coder_variants())
    if (std::find(runs.begin(), runs.end(), v) != runs.end()) runnable.push_back(v);
  EXPECT_EQ(runnable, runs);
}

// One test per variant compiled into the build (tests/common/variants.hpp): a variant this CPU
// cannot run (AVX-512 on an AVX2 machine) is reported as a skipped test that names it, and
// tests/gpu/check.sh fails where the CPU has its instructions but the test was skipped.
class EachTokenCoderVariant : public ::testing::TestWithParam<std::string> {};

TEST_P(EachTokenCoderVariant, CodedBlocksOnAnyThreadCountMatchLibjpeg) {
  const std::string& v = GetParam();
  MJPEG_NEED_VARIANT("token coder", v, token_coder_variants());
  for (Subsampling s : kSamplings)
    for (const auto& [w, h] : {std::pair{200, 72}, std::pair{17, 9}, std::pair{8, 8},
                               std::pair{1, 1}, std::pair{64, 300}}) {
      const FrameGeometry g = make_geometry(w, h, s);
      const std::vector<std::int16_t> c = edge_coefficients(g, static_cast<std::uint32_t>(w * 7 + h));
      for (int restart : {0, 1, 7, 8, 65535})
        for (bool optimize : {false, true}) {
          SCOPED_TRACE(name_of(g, restart, optimize));
          const std::vector<std::uint8_t> expected = test::libjpeg_scan(g, c.data(), restart, optimize);
          const HuffmanTables t = tables_for(g, c.data(), restart, optimize);
          const int table_count = g.num_components == 1 ? 1 : 2;
          TokenBuffer tokens;
          tokenize_blocks(g, c.data(), ac_codes(t, table_count), tokens);
          EXPECT_EQ(tokens.blocks.size(), g.total_blocks);
          std::vector<std::uint8_t> out = {0x12, 0x34};  // appended after what is there
          encode_token_scan(g, restart, tokens.view(), t, out, v);
          ASSERT_EQ(out.size(), expected.size() + 2);
          EXPECT_TRUE(std::equal(expected.begin(), expected.end(), out.begin() + 2));
          for (int threads : {2, 3, 8}) {
            std::vector<std::uint8_t> par = {0x56};
            encode_token_scan_parallel(g, restart, tokens.view(), t, threads, par, v);
            ASSERT_EQ(par.size(), expected.size() + 1) << "threads " << threads;
            EXPECT_TRUE(std::equal(expected.begin(), expected.end(), par.begin() + 1))
                << "threads " << threads;
          }
        }
    }
}

class EachHuffmanVariantVsLibjpeg : public ::testing::TestWithParam<std::string> {};

TEST_P(EachHuffmanVariantVsLibjpeg, CoefficientsOnAnyThreadCountMatchLibjpeg) {
  const std::string& v = GetParam();
  MJPEG_NEED_VARIANT("Huffman coder", v, huffman_variants());
  for (Subsampling s : kSamplings)
    for (const auto& [w, h] : {std::pair{200, 72}, std::pair{17, 9}, std::pair{64, 300}}) {
      const FrameGeometry g = make_geometry(w, h, s);
      const std::vector<std::int16_t> c = edge_coefficients(g, static_cast<std::uint32_t>(w + 3 * h));
      for (int restart : {0, 1, 8})
        for (bool optimize : {false, true}) {
          SCOPED_TRACE(name_of(g, restart, optimize));
          const std::vector<std::uint8_t> expected = test::libjpeg_scan(g, c.data(), restart, optimize);
          const HuffmanTables t = tables_for(g, c.data(), restart, optimize);
          std::vector<std::uint8_t> out = {0x12};
          encode_scan(v, g, c.data(), restart, t, out);
          ASSERT_EQ(out.size(), expected.size() + 1);
          EXPECT_TRUE(std::equal(expected.begin(), expected.end(), out.begin() + 1));
          for (int threads : {2, 5}) {
            std::vector<std::uint8_t> par;
            encode_scan_parallel(g, c.data(), restart, t, threads, par, v);
            EXPECT_EQ(par, expected) << "threads " << threads;
          }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Built, EachTokenCoderVariant, ::testing::ValuesIn(built_token_coder_variants()),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Built, EachHuffmanVariantVsLibjpeg,
                         ::testing::ValuesIn(built_huffman_variants()),
                         [](const auto& info) { return info.param; });

// Whole files from pixels: transform, coded blocks, packer (what the GPU modes do, with the CPU
// standing in for the GPU) against libjpeg from the same pixels; qualities below 24 give 16-bit
// tables and SOF1, 100 the largest values.
TEST(CodedBlocks, WholeFilesFromPixelsMatchLibjpeg) {
  const test::Image kodak = test::kodak_mosaic(328, 200);
  for (Subsampling s : kSamplings)
    for (int quality : {1, 10, 23, 50, 90, 100})
      for (int restart : {0, 5}) {
        EncodeOptions o;
        o.quality = quality;
        o.subsampling = s;
        o.restart_interval = restart;
        const FrameGeometry g = make_geometry(kodak.width, kodak.height, s);
        const QuantTables q = make_quant_tables(o, g.num_components);
        std::vector<std::int16_t> c(g.coefficient_count());
        transform_cpu(kodak.view(), g, q, c.data());
        ASSERT_EQ(token_format_for(g, o, tokens::Format::blocks), tokens::Format::blocks);
        TokenBuffer tokens;
        const int table_count = g.num_components == 1 ? 1 : 2;
        tokenize_blocks(g, c.data(), ac_codes(frame_tables(table_count, nullptr), table_count), tokens);
        for (int threads : {1, 3}) {
          std::vector<std::uint8_t> jpeg(7, 0xAB);  // written over
          encode_tokens(g, q, tokens.view(), o, jpeg, threads);
          const std::vector<std::uint8_t> expected = test::libjpeg_encode(kodak.view(), o);
          EXPECT_TRUE(jpeg == expected)
              << "q" << quality << " " << to_string(s) << " restart " << restart << " threads "
              << threads << ": " << test::describe_difference(jpeg, expected);
        }
      }
}

// ---------------------------------------------------------------------------------------------
// The format, bit by bit.
// ---------------------------------------------------------------------------------------------
/// The AC stream's first `n` bits as a string of 0 and 1.
std::string stream_bits(const TokenBuffer& t, std::size_t from, std::size_t n) {
  std::string s;
  for (std::size_t i = from; i < from + n; ++i) s += (t.bits[i / 8] >> (7 - i % 8) & 1) ? '1' : '0';
  return s;
}

TEST(CodedBlocks, BlockWordsAndAcBitsAreWhatTheFormatSays) {
  // Two gray blocks. Luma AC codes of Annex K (table K.5): 0/1 = 00, 0/2 = 01, EOB = 1010,
  // ZRL = 11111111001.
  const FrameGeometry g = make_geometry(16, 8, Subsampling::gray);
  std::vector<std::int16_t> c(g.coefficient_count(), 0);
  std::int16_t* a = c.data();
  a[0] = -5;
  a[1] = 1;    // 00 1
  a[2] = -1;   // 00 0
  a[3] = 3;    // 01 11
  a[20] = 2;   // 16 zeros: ZRL, then 01 10
  std::int16_t* b = c.data() + 64;
  b[0] = 300;
  b[63] = -1;  // 62 zeros: three ZRLs, then run 14 size 1, no EOB
  TokenBuffer t;
  tokenize_blocks(g, c.data(), ac_codes(frame_tables(1, nullptr), 1), t);
  ASSERT_EQ(t.format, tokens::Format::blocks);
  ASSERT_EQ(t.blocks.size(), 2u);
  const std::string first = "001" "000" "0111" "11111111001" "0110" "1010";
  EXPECT_EQ(tokens::block_dc(t.blocks[0]), -5);
  EXPECT_EQ(tokens::block_ac_bits(t.blocks[0]), first.size());
  EXPECT_EQ(stream_bits(t, 0, first.size()), first);
  EXPECT_EQ(tokens::block_dc(t.blocks[1]), 300);
  const std::size_t second = tokens::block_ac_bits(t.blocks[1]);
  EXPECT_EQ(stream_bits(t, first.size(), 33), "11111111001" "11111111001" "11111111001");
  // Row starts in bits; the stream padded to a 32-bit word, then the slack, all zero.
  ASSERT_EQ(t.row_start.size(), 2u);
  EXPECT_EQ(t.row_start[0], 0u);
  EXPECT_EQ(t.row_start[1], first.size() + second);
  EXPECT_EQ(t.bits.size(), tokens::ac_stream_bytes(first.size() + second));
  EXPECT_EQ(stream_bits(t, first.size() + second, 8 * t.bits.size() - first.size() - second),
            std::string(8 * t.bits.size() - first.size() - second, '0'));
  EXPECT_EQ(t.bytes(), 4 * 2 + t.bits.size());
}

using test::ScopedEnv;

// The GPU modes hand back coded blocks unless MJPEG_TOKEN_FORMAT=slots asks for symbol slots;
// any other value is refused.
TEST(CodedBlocks, CodedBlocksUnlessTheEnvironmentAsksForSymbolSlots) {
  const FrameGeometry g = make_geometry(1920, 1080, Subsampling::s420);
  const EncodeOptions o;
  for (const char* value : {static_cast<const char*>(nullptr), "", "coded"}) {
    const ScopedEnv env("MJPEG_TOKEN_FORMAT", value);
    SCOPED_TRACE(value ? std::string("MJPEG_TOKEN_FORMAT=") + value : "MJPEG_TOKEN_FORMAT unset");
    EXPECT_EQ(requested_token_format(), tokens::Format::blocks);
    EXPECT_EQ(token_format_for(g, o, requested_token_format()), tokens::Format::blocks);
  }
  {
    const ScopedEnv env("MJPEG_TOKEN_FORMAT", "slots");
    EXPECT_EQ(requested_token_format(), tokens::Format::slots);
    EXPECT_EQ(token_format_for(g, o, requested_token_format()), tokens::Format::slots);
  }
  for (const char* value : {"blocks", "CODED", "coded ", "1"}) {
    const ScopedEnv env("MJPEG_TOKEN_FORMAT", value);
    try {
      requested_token_format();
      ADD_FAILURE() << "MJPEG_TOKEN_FORMAT=" << value << " accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), std::string("MJPEG_TOKEN_FORMAT: '") + value +
                                           "' is not a token format (coded or slots)");
    }
  }
}

// Coded blocks where they are asked for and the settings allow them; symbol slots where the
// tables come from the frame, the frame goes back to coefficients or it is too large.
TEST(CodedBlocks, TheFormatFollowsTheSettings) {
  const FrameGeometry g = make_geometry(1920, 1080, Subsampling::s420);
  EncodeOptions o;
  EXPECT_EQ(token_format_for(g, o, tokens::Format::blocks), tokens::Format::blocks);
  EXPECT_EQ(token_format_for(g, o, tokens::Format::slots), tokens::Format::slots);
  o.restart_interval = 3;
  EXPECT_EQ(token_format_for(g, o, tokens::Format::blocks), tokens::Format::blocks);
  o.optimize = true;  // the tables come from the frame: symbol slots and their histogram
  EXPECT_EQ(token_format_for(g, o, tokens::Format::blocks), tokens::Format::slots);
  o.optimize = false;
  o.progressive = true;
  EXPECT_EQ(token_format_for(g, o, tokens::Format::blocks), tokens::Format::slots);
  o.progressive = false;
  const FrameGeometry huge = make_geometry(65500, 65500, Subsampling::s444);
  EXPECT_GT(huge.total_blocks, tokens::kMaxCodedBlocks);
  EXPECT_EQ(token_format_for(huge, o, tokens::Format::blocks), tokens::Format::slots);
  TokenBuffer unused;
  EXPECT_THROW(tokenize_blocks(huge, nullptr, tokens::AcCodes{}, unused), UsageError);
}

// A stream as the GPU writes it (header, row starts, body) read back through stream_view.
TEST(CodedBlocks, StreamViewReadsWhatTheGpuWrites) {
  const FrameGeometry g = make_geometry(200, 72, Subsampling::s420);
  const std::vector<std::int16_t> c = edge_coefficients(g, 5);
  const HuffmanTables t = tables_for(g, c.data(), 0, false);
  TokenBuffer tokens;
  tokenize_blocks(g, c.data(), ac_codes(t, 2), tokens);
  const std::size_t header = 4 * tokens::header_words(g.mcus_y, false);
  std::vector<std::uint8_t> stream(header + tokens.bytes(), 0xEE);
  tokens::StreamHeader h{static_cast<std::uint32_t>(tokens.bytes()), 0,
                         static_cast<std::uint32_t>(g.mcus_y),
                         static_cast<std::uint32_t>(tokens::Format::blocks) << tokens::kFormatShift};
  std::memcpy(stream.data(), &h, sizeof h);
  std::memcpy(stream.data() + sizeof h, tokens.row_start.data(), 4 * tokens.row_start.size());
  std::memcpy(stream.data() + header, tokens.blocks.data(), 4 * tokens.blocks.size());
  std::memcpy(stream.data() + header + 4 * tokens.blocks.size(), tokens.bits.data(), tokens.bits.size());
  const TokenView v = stream_view(stream.data(), header, g.total_blocks);
  EXPECT_EQ(v.format, tokens::Format::blocks);
  EXPECT_EQ(v.bit_bytes, tokens.bits.size());
  std::vector<std::uint8_t> direct, via_stream;
  encode_token_scan(g, 0, tokens.view(), t, direct);
  encode_token_scan(g, 0, v, t, via_stream);
  EXPECT_EQ(via_stream, direct);
  EXPECT_EQ(direct, test::libjpeg_scan(g, c.data(), 0, false));
  // An overflowed stream, an unknown format, a histogram beside coded blocks, a body shorter
  // than the block words: errors.
  h.overflow = 1;
  std::memcpy(stream.data(), &h, sizeof h);
  EXPECT_THROW(stream_view(stream.data(), header, g.total_blocks), Error);
  h.overflow = 0;
  h.flags = 7u << tokens::kFormatShift;
  std::memcpy(stream.data(), &h, sizeof h);
  EXPECT_THROW(stream_view(stream.data(), header, g.total_blocks), Error);
  h.flags = tokens::kHistogramFlag | static_cast<std::uint32_t>(tokens::Format::blocks) << tokens::kFormatShift;
  std::memcpy(stream.data(), &h, sizeof h);
  EXPECT_THROW(stream_view(stream.data(), header, g.total_blocks), Error);
  h.flags = static_cast<std::uint32_t>(tokens::Format::blocks) << tokens::kFormatShift;
  h.body_bytes = static_cast<std::uint32_t>(4 * g.total_blocks);
  std::memcpy(stream.data(), &h, sizeof h);
  EXPECT_THROW(stream_view(stream.data(), header, g.total_blocks), Error);
}

TEST(CodedBlocks, MalformedStreamsAreErrorsThatLeaveTheOutput) {
  const FrameGeometry g = make_geometry(64, 48, Subsampling::s420);
  const std::vector<std::int16_t> c = edge_coefficients(g, 9);
  const HuffmanTables t = tables_for(g, c.data(), 0, false);
  TokenBuffer good;
  tokenize_blocks(g, c.data(), ac_codes(t, 2), good);
  const std::vector<std::uint8_t> kept = {1, 2, 3};
  auto expect_error = [&](const TokenBuffer& bad, const char* what) {
    for (const std::string& v : token_coder_variants())
      for (int threads : {1, 2}) {
        std::vector<std::uint8_t> out = kept;
        EXPECT_THROW(encode_token_scan_parallel(g, 0, bad.view(), t, threads, out, v), Error)
            << what << " " << v << " threads " << threads;
        EXPECT_EQ(out, kept) << what << " " << v;
      }
  };
  TokenBuffer longer = good;  // a block claims more bits than its row has
  longer.blocks[5] += 1u << tokens::kBlockAcShift;
  expect_error(longer, "a block longer than its row");
  TokenBuffer shorter = good;  // a block claims fewer: the rows' bits are not used up
  shorter.blocks[5] -= 1u << tokens::kBlockAcShift;
  expect_error(shorter, "a block shorter than its row");
  TokenBuffer huge = good;  // far beyond the stream
  huge.blocks[0] |= 0xFFFFu << tokens::kBlockAcShift;
  expect_error(huge, "a block beyond the stream");
  TokenBuffer backwards = good;
  std::swap(backwards.row_start[1], backwards.row_start[2]);
  expect_error(backwards, "row starts backwards");
  TokenBuffer cut = good;
  cut.bits.resize(cut.bits.size() - 9);
  expect_error(cut, "an AC stream cut short");
  TokenBuffer dc = good;  // a DC difference of 30000: no code for it
  dc.blocks[3] = tokens::block_word(30000, tokens::block_ac_bits(dc.blocks[3]));
  expect_error(dc, "a DC difference beyond size 11");
  // Coded blocks of another geometry.
  const FrameGeometry other = make_geometry(64, 64, Subsampling::s420);
  std::vector<std::uint8_t> out = kept;
  EXPECT_THROW(encode_token_scan(other, 0, good.view(), t, out), Error);
  EXPECT_EQ(out, kept);
  // A table without a code the frame needs.
  HuffmanTables few = t;
  few.ac[0] = HuffmanSpec{};
  few.ac[0].bits[2] = 1;
  few.ac[0].values[0] = 0x00;
  TokenBuffer unused;
  EXPECT_THROW(tokenize_blocks(g, c.data(), ac_codes(few, 2), unused), Error);
  EXPECT_THROW(encode_token_scan(g, 0, good.view(), t, out, "no-such-variant"), Error);
}

}  // namespace mjpeg::token_coder_test
