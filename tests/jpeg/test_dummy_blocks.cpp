// The MCU padding's dummy blocks (fill_dummy_blocks, src/jpeg/transform_cpu.hpp): the DC of
// the block to the left, or of the row above in the MCU, as libjpeg writes them.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/geometry.hpp"
#include "jpeg/transform_cpu.hpp"

namespace mjpeg {
namespace {

TEST(DummyBlocks, CopyDcFromLeftAndFromRowAbove) {
  const FrameGeometry g = make_geometry(17, 9, Subsampling::s420);  // luma 3x2 real of 4x2
  std::vector<std::int16_t> coeffs(g.coefficient_count(), 7);
  // Give each real luma block a distinct DC.
  for (int by = 0; by < 2; ++by)
    for (int bx = 0; bx < 3; ++bx) coeffs[g.block_index(0, by, bx) * 64] = 100 + by * 10 + bx;
  fill_dummy_blocks(g, coeffs.data());
  for (int by = 0; by < 2; ++by) {
    const std::int16_t* dummy = &coeffs[g.block_index(0, by, 3) * 64];
    EXPECT_EQ(dummy[0], 100 + by * 10 + 2);
    for (int k = 1; k < 64; ++k) EXPECT_EQ(dummy[k], 0);
  }
  // 16x17 in 4:2:0: 17 luma rows -> 3 real block rows of the 4 that two MCU rows hold.
  const FrameGeometry g2 = make_geometry(16, 17, Subsampling::s420);
  ASSERT_EQ(g2.comp[0].height_in_blocks, 3);
  ASSERT_EQ(g2.comp[0].blocks_h, 4);
  std::vector<std::int16_t> c2(g2.coefficient_count(), 5);
  c2[g2.block_index(0, 2, 0) * 64] = 40;
  c2[g2.block_index(0, 2, 1) * 64] = 41;
  fill_dummy_blocks(g2, c2.data());
  EXPECT_EQ(c2[g2.block_index(0, 3, 0) * 64], 41);  // last block of the row above in the MCU
  EXPECT_EQ(c2[g2.block_index(0, 3, 1) * 64], 41);
  EXPECT_EQ(c2[g2.block_index(0, 3, 1) * 64 + 1], 0);
}

}  // namespace
}  // namespace mjpeg
