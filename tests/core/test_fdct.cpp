// The integer forward DCT (math::fdct_islow, src/core/jpeg_math.hpp) against libjpeg's
// jpeg_fdct_islow. The whole CPU transform and its instruction-set variants:
// tests/jpeg/test_transform.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/oracle.hpp"
#include "core/jpeg_math.hpp"

namespace mjpeg {
namespace {

// The integer DCT is libjpeg's jpeg_fdct_islow, bit for bit (the library's own function, in
// process): random blocks, and blocks that drive each coefficient to its extremes (0/255 on the
// basis function's sign, and the inverse), flat black and white, checkers.
TEST(Fdct, EqualsLibjpegsIslowBitForBit) {
  std::vector<std::array<int, 64>> blocks;
  std::uint32_t state = 7;
  for (int trial = 0; trial < 20000; ++trial) {
    std::array<int, 64> b{};
    const int range = trial % 3 == 0 ? 256 : trial % 3 == 1 ? 16 : 2;  // noise, small, binary
    for (int& v : b) {
      state ^= state << 13;
      state ^= state >> 17;
      state ^= state << 5;
      v = range == 2 ? ((state & 1) ? 127 : -128) : static_cast<int>(state % range) - range / 2;
    }
    blocks.push_back(b);
  }
  for (int f = 0; f < 64; ++f)
    for (bool inverse : {false, true}) {
      std::array<int, 64> b{};
      for (int y = 0; y < 8; ++y)
        for (int x = 0; x < 8; ++x) {
          const double basis = std::cos((2 * x + 1) * (f % 8) * M_PI / 16) *
                               std::cos((2 * y + 1) * (f / 8) * M_PI / 16);
          b[y * 8 + x] = (basis > 0) != inverse ? 127 : -128;
        }
      blocks.push_back(b);
    }
  for (int v : {-128, 127}) {
    std::array<int, 64> b;
    b.fill(v);
    blocks.push_back(b);
    for (int i = 0; i < 64; ++i) b[i] = ((i / 8 + i % 8) & 1) ? v : -1 - v;
    blocks.push_back(b);
  }
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    int want[64];
    test::libjpeg_fdct_islow(blocks[k].data(), want);
    std::int32_t got[64];
    std::copy(blocks[k].begin(), blocks[k].end(), got);
    math::fdct_islow(got);
    for (int i = 0; i < 64; ++i) ASSERT_EQ(got[i], want[i]) << "block " << k << ", coefficient " << i;
  }
}

TEST(Fdct, FlatBlockHasOnlyDc) {
  std::int32_t block[64];
  for (auto& s : block) s = 100 - 128;
  math::fdct_islow(block);
  EXPECT_EQ(block[0], 8 * 8 * (100 - 128));  // 8 x (sum / 8)
  for (int i = 1; i < 64; ++i) EXPECT_EQ(block[i], 0) << i;
}

}  // namespace
}  // namespace mjpeg
