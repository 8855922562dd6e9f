// The frame geometry (src/core/geometry.hpp): components, MCUs, blocks (the MCU padding's dummy
// blocks included) and the sizes it accepts.
#include <gtest/gtest.h>

#include "core/geometry.hpp"
#include "mjpeg/error.hpp"
#include "mjpeg/options.hpp"

namespace mjpeg {
namespace {

TEST(Geometry, Subsampled420OddSizeHasDummyBlocks) {
  const FrameGeometry g = make_geometry(17, 9, Subsampling::s420);
  EXPECT_EQ(g.num_components, 3);
  EXPECT_EQ(g.mcus_x, 2);
  EXPECT_EQ(g.mcus_y, 1);
  EXPECT_EQ(g.blocks_per_mcu, 6);
  EXPECT_EQ(g.comp[0].width_in_blocks, 3);   // ceil(17 / 8)
  EXPECT_EQ(g.comp[0].height_in_blocks, 2);  // ceil(9 / 8)
  EXPECT_EQ(g.comp[0].blocks_w, 4);          // 2 MCUs x 2
  EXPECT_EQ(g.comp[0].blocks_h, 2);
  EXPECT_EQ(g.comp[1].width, 9);             // ceil(17 / 2)
  EXPECT_EQ(g.comp[1].height, 5);
  EXPECT_EQ(g.comp[1].width_in_blocks, 2);
  EXPECT_EQ(g.comp[1].blocks_w, 2);
  EXPECT_EQ(g.total_blocks, 8u + 2u + 2u);
  EXPECT_EQ(g.comp[2].block_offset, 10u);
}

TEST(Geometry, GrayIsNotInterleaved) {
  const FrameGeometry g = make_geometry(17, 9, Subsampling::gray);
  EXPECT_EQ(g.num_components, 1);
  EXPECT_EQ(g.mcus_x, 3);
  EXPECT_EQ(g.mcus_y, 2);
  EXPECT_EQ(g.comp[0].blocks_w, 3);
  EXPECT_EQ(g.total_blocks, 6u);
}

TEST(Geometry, RejectsSizesOutsideRange) {
  EXPECT_THROW(make_geometry(0, 5, Subsampling::s420), UsageError);
  EXPECT_THROW(make_geometry(5, 0, Subsampling::s420), UsageError);
  EXPECT_THROW(make_geometry(kMaxDimension + 1, 5, Subsampling::s444), UsageError);
  EXPECT_NO_THROW(make_geometry(kMaxDimension, 1, Subsampling::s444));
}

}  // namespace
}  // namespace mjpeg
