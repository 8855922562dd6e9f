// Tests of the chart module (src/plot/chart.hpp); built only with OpenCV.
#include <limits>

#include <gtest/gtest.h>

#include "mjpeg/error.hpp"
#include "plot/chart.hpp"

namespace mjpeg::plot {
namespace {

TEST(Chart, NiceTicksAreRoundSteps) {
  const std::vector<double> unit = nice_ticks(0, 1, 5);
  ASSERT_EQ(unit.size(), 6u);
  for (std::size_t i = 0; i < unit.size(); ++i) EXPECT_NEAR(unit[i], 0.2 * i, 1e-12);
  // Range 7.5 over about 6 ticks: 1.25 rounds up to a step of 2.
  const std::vector<double> t = nice_ticks(33.7, 41.2, 6);
  EXPECT_EQ(t, (std::vector<double>{34, 36, 38, 40}));
}

TEST(Chart, RendersPanelsOfTheAskedSize) {
  Chart c;
  c.title = "t";
  c.side_by_side = true;
  c.panel_width = 300;
  c.panel_height = 200;
  Panel p;
  p.x.label = "x";
  p.y.label = "y";
  p.series.push_back({"a", {1, 2, 3}, {1, std::numeric_limits<double>::infinity(), 2}, palette(0)});
  c.panels = {p, p};
  const cv::Mat img = render(c);
  EXPECT_EQ(img.cols, 600);
  EXPECT_EQ(img.rows, 200 + 34);
  EXPECT_EQ(img.type(), CV_8UC3);
}

TEST(Chart, MismatchedSeriesIsAnError) {
  Chart c;
  Panel p;
  p.series.push_back({"bad", {1, 2}, {1}, palette(1)});
  c.panels = {p};
  EXPECT_THROW(render(c), UsageError);
  EXPECT_THROW(render(Chart{}), UsageError);
}

}  // namespace
}  // namespace mjpeg::plot
