// Small charts drawn with OpenCV and written as PNG: line and scatter series with labels and
// colours, axes with "nice" ticks (linear or log10), axis labels, a title, a legend placed where
// it hides the fewest points, and one or more panels side by side or stacked.
// Used by `mjpeg quality` (PSNR/SSIM over frames, rate-distortion) and meant for `mjpeg bench`.
//
//   plot::Chart chart;
//   chart.title = "Throughput";
//   plot::Panel& p = chart.panels.emplace_back();
//   p.x.label = "threads";  p.x.log_scale = true;
//   p.y.label = "frames/s";
//   p.series.push_back({"aok", {1, 2, 4, 8}, {900, 1700, 3100, 5200}, plot::palette(0)});
//   plot::write_png(plot::render(chart), "fps.png", /*overwrite=*/true);
//
// Non-finite points (NaN, inf) are skipped and break a line. Only in builds with OpenCV.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <opencv2/core.hpp>

namespace mjpeg::plot {

struct Color {
  std::uint8_t r = 0, g = 0, b = 0;
};

/// A distinguishable colour for series `i` (cycles after 8).
Color palette(int i);

enum class Marker { none, circle, square, triangle, cross };

struct Series {
  std::string label;           ///< legend text ("" = not in the legend)
  std::vector<double> x, y;    ///< same length
  Color color = palette(0);
  bool line = true;            ///< connect consecutive points
  Marker marker = Marker::none;
  bool dashed = false;
  int thickness = 2;
};

struct Axis {
  std::string label;
  bool log_scale = false;      ///< log10 axis (only positive values are drawn)
  double min = NAN, max = NAN;  ///< NaN: from the data (with a small margin on linear axes)
};

struct Panel {
  std::string title;
  Axis x, y;
  std::vector<Series> series;
  bool legend = true;
};

struct Chart {
  std::string title;            ///< above all panels ("" = none)
  std::vector<Panel> panels;
  bool side_by_side = false;    ///< panels in a row (default: stacked in a column)
  int panel_width = 900;        ///< pixels per panel, margins included
  int panel_height = 400;
};

/// Renders the chart as an 8-bit BGR image. Throws mjpeg::UsageError for a chart without
/// panels or a series whose x and y lengths differ.
cv::Mat render(const Chart& chart);

/// Tick positions for [lo, hi]: multiples of 1, 2 or 5 x 10^k, about `target` of them.
std::vector<double> nice_ticks(double lo, double hi, int target = 6);

/// Encodes `image` as PNG (cv::imencode) and writes it through io::AtomicFile (temporary file,
/// then rename). Throws mjpeg::Error when encoding or writing fails or when the file exists
/// and `overwrite` is false.
void write_png(const cv::Mat& image, const std::string& path, bool overwrite);

}  // namespace mjpeg::plot
