#include "plot/chart.hpp"

#include <algorithm>
#include <array>
#include <limits>

#include <fmt/format.h>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "mjpeg/error.hpp"
#include "mjpeg/files.hpp"

namespace mjpeg::plot {
namespace {

constexpr int kFont = cv::FONT_HERSHEY_SIMPLEX;
constexpr double kTickScale = 0.45;
constexpr double kLabelScale = 0.55;
constexpr double kTitleScale = 0.65;
const cv::Scalar kInk(40, 40, 40);
const cv::Scalar kGrid(225, 225, 225);
const cv::Scalar kWhite(255, 255, 255);

// Margins of a panel's plotting area inside its cell (pixels).
constexpr int kLeft = 92, kRight = 20, kTop = 36, kBottom = 56;

cv::Scalar bgr(Color c) { return cv::Scalar(c.b, c.g, c.r); }

/// Draws `text` with its left end at x (or centred on x) and its baseline at y.
void put_text(cv::Mat& img, const std::string& text, int x, int y, double scale,
              bool centred = false, int thickness = 1) {
  int base = 0;
  const cv::Size size = cv::getTextSize(text, kFont, scale, thickness, &base);
  if (centred) x -= size.width / 2;
  cv::putText(img, text, {x, y}, kFont, scale, kInk, thickness, cv::LINE_AA);
}

/// Text rotated 90 degrees counter-clockwise, centred on (cx, cy).
void put_vertical_text(cv::Mat& img, const std::string& text, int cx, int cy, double scale) {
  int base = 0;
  const cv::Size size = cv::getTextSize(text, kFont, scale, 1, &base);
  cv::Mat strip(size.height + base + 4, size.width + 4, CV_8UC3, kWhite);
  cv::putText(strip, text, {2, size.height + 2}, kFont, scale, kInk, 1, cv::LINE_AA);
  cv::Mat turned;
  cv::rotate(strip, turned, cv::ROTATE_90_COUNTERCLOCKWISE);
  cv::Rect dst(cx - turned.cols / 2, cy - turned.rows / 2, turned.cols, turned.rows);
  dst &= cv::Rect(0, 0, img.cols, img.rows);
  turned(cv::Rect(0, 0, dst.width, dst.height)).copyTo(img(dst));
}

/// A tick label with as many decimals as the tick step needs ("12", "0.5", "0.99065").
std::string tick_label(double v, double step) {
  if (v == 0) return "0";
  const double a = std::fabs(v);
  if (a >= 1e6 || a < 1e-4) return fmt::format("{:.3g}", v);
  const int decimals = step > 0 ? std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9))) : 2;
  return fmt::format("{:.{}f}", v, decimals);
}

/// Maps data values to pixels along one axis.
struct Scale {
  double lo = 0, hi = 1;
  bool log = false;
  int p0 = 0, p1 = 1;  // pixel of lo, pixel of hi
  double to_unit(double v) const {
    if (log) return (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    return (v - lo) / (hi - lo);
  }
  double pixel(double v) const { return p0 + to_unit(v) * (p1 - p0); }
  bool valid(double v) const { return std::isfinite(v) && (!log || v > 0); }
};

/// The data range of an axis (x or y of every series), with the axis' fixed bounds applied.
Scale axis_range(const Axis& axis, const Panel& panel, bool x) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const Series& s : panel.series)
    for (double v : x ? s.x : s.y)
      if (std::isfinite(v) && (!axis.log_scale || v > 0)) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
  if (!std::isfinite(lo)) lo = hi = axis.log_scale ? 1 : 0;
  if (axis.log_scale) {
    if (hi <= lo) hi = lo * 10;
    lo /= 1.15;
    hi *= 1.15;
  } else {
    if (hi <= lo) {
      const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.05;
      lo -= pad;
      hi += pad;
    } else {
      const double pad = (hi - lo) * 0.05;
      lo -= pad;
      hi += pad;
    }
  }
  if (std::isfinite(axis.min)) lo = axis.min;
  if (std::isfinite(axis.max)) hi = axis.max;
  if (hi <= lo) hi = lo + 1;
  Scale s;
  s.lo = lo;
  s.hi = hi;
  s.log = axis.log_scale;
  return s;
}

/// Log-axis ticks: 1, 2, 5 x 10^k inside [lo, hi] (all decades' 1s when the range is wide).
std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> ticks;
  const int k0 = static_cast<int>(std::floor(std::log10(lo)));
  const int k1 = static_cast<int>(std::ceil(std::log10(hi)));
  const bool wide = k1 - k0 > 4;
  for (int k = k0; k <= k1; ++k)
    for (double m : {1.0, 2.0, 5.0}) {
      if (wide && m != 1.0) continue;
      const double v = m * std::pow(10.0, k);
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) ticks.push_back(v);
    }
  return ticks;
}

/// The spacing of evenly spaced ticks (0 when fewer than two).
double step_of(const std::vector<double>& ticks) {
  return ticks.size() >= 2 ? ticks[1] - ticks[0] : 0;
}

void draw_marker(cv::Mat& img, cv::Point p, Marker m, const cv::Scalar& colour) {
  switch (m) {
    case Marker::none: return;
    case Marker::circle: cv::circle(img, p, 4, colour, cv::FILLED, cv::LINE_AA); return;
    case Marker::square: cv::rectangle(img, {p.x - 4, p.y - 4}, {p.x + 4, p.y + 4}, colour, cv::FILLED); return;
    case Marker::triangle: {
      const std::array<cv::Point, 3> t{cv::Point(p.x, p.y - 5), cv::Point(p.x - 5, p.y + 4),
                                       cv::Point(p.x + 5, p.y + 4)};
      cv::fillConvexPoly(img, t.data(), 3, colour, cv::LINE_AA);
      return;
    }
    case Marker::cross:
      cv::line(img, {p.x - 4, p.y - 4}, {p.x + 4, p.y + 4}, colour, 2, cv::LINE_AA);
      cv::line(img, {p.x - 4, p.y + 4}, {p.x + 4, p.y - 4}, colour, 2, cv::LINE_AA);
      return;
  }
}

/// A segment, dashed when asked (8 on, 6 off).
void draw_segment(cv::Mat& img, cv::Point2d a, cv::Point2d b, const Series& s) {
  const cv::Scalar c = bgr(s.color);
  if (!s.dashed) {
    cv::line(img, a, b, c, s.thickness, cv::LINE_AA);
    return;
  }
  const double len = cv::norm(b - a);
  for (double t = 0; t < len; t += 14) {
    const double t1 = std::min(len, t + 8);
    cv::line(img, a + (b - a) * (t / len), a + (b - a) * (t1 / len), c, s.thickness, cv::LINE_AA);
  }
}

void draw_series(cv::Mat& img, const Series& s, const Scale& sx, const Scale& sy,
                 const cv::Rect& area) {
  cv::Mat clip = img(area);  // drawing into the plotting area clips lines to it
  const cv::Point2d off(area.x, area.y);
  bool have_prev = false;
  cv::Point2d prev;
  for (std::size_t i = 0; i < s.x.size(); ++i) {
    if (!sx.valid(s.x[i]) || !sy.valid(s.y[i])) {
      have_prev = false;
      continue;
    }
    const cv::Point2d p(sx.pixel(s.x[i]), sy.pixel(s.y[i]));
    if (s.line && have_prev) draw_segment(clip, prev - off, p - off, s);
    prev = p;
    have_prev = true;
  }
  if (s.marker == Marker::none) return;
  for (std::size_t i = 0; i < s.x.size(); ++i)
    if (sx.valid(s.x[i]) && sy.valid(s.y[i]))
      draw_marker(clip, cv::Point(cvRound(sx.pixel(s.x[i]) - off.x), cvRound(sy.pixel(s.y[i]) - off.y)),
                  s.marker, bgr(s.color));
}

/// The legend box in the corner of `area` that covers the fewest data points.
void draw_legend(cv::Mat& img, const Panel& panel, const Scale& sx, const Scale& sy,
                 const cv::Rect& area) {
  std::vector<const Series*> shown;
  int text_w = 0;
  for (const Series& s : panel.series)
    if (!s.label.empty()) {
      shown.push_back(&s);
      int base = 0;
      text_w = std::max(text_w, cv::getTextSize(s.label, kFont, kTickScale, 1, &base).width);
    }
  if (shown.empty()) return;
  const int row = 18, w = text_w + 50, h = static_cast<int>(shown.size()) * row + 8;
  const std::array<cv::Point, 4> corners{
      cv::Point(area.x + area.width - w - 8, area.y + 8),
      cv::Point(area.x + area.width - w - 8, area.y + area.height - h - 8),
      cv::Point(area.x + 8, area.y + area.height - h - 8), cv::Point(area.x + 8, area.y + 8)};
  cv::Rect best;
  long fewest = std::numeric_limits<long>::max();
  for (const cv::Point& c : corners) {
    const cv::Rect box(c.x, c.y, w, h);
    long inside = 0;  // points, and samples along the lines, that the box would hide
    for (const Series& s : panel.series)
      for (std::size_t i = 0; i < s.x.size(); ++i) {
        if (!sx.valid(s.x[i]) || !sy.valid(s.y[i])) continue;
        const cv::Point2d p(sx.pixel(s.x[i]), sy.pixel(s.y[i]));
        const bool joined = s.line && i + 1 < s.x.size() && sx.valid(s.x[i + 1]) && sy.valid(s.y[i + 1]);
        const cv::Point2d q = joined ? cv::Point2d(sx.pixel(s.x[i + 1]), sy.pixel(s.y[i + 1])) : p;
        for (int k = 0; k < (joined ? 16 : 1); ++k) {
          const cv::Point2d at = p + (q - p) * (k / 16.0);
          if (box.contains(cv::Point(cvRound(at.x), cvRound(at.y)))) ++inside;
        }
      }
    if (inside < fewest) {
      fewest = inside;
      best = box;
    }
  }
  cv::rectangle(img, best, kWhite, cv::FILLED);
  cv::rectangle(img, best, cv::Scalar(180, 180, 180), 1);
  for (std::size_t i = 0; i < shown.size(); ++i) {
    const Series& s = *shown[i];
    const int y = best.y + 4 + static_cast<int>(i) * row + row / 2;
    if (s.line) draw_segment(img, cv::Point2d(best.x + 8, y), cv::Point2d(best.x + 36, y), s);
    draw_marker(img, {best.x + 22, y}, s.marker, bgr(s.color));
    put_text(img, s.label, best.x + 44, y + 5, kTickScale);
  }
}

/// Draws one panel into the cell `cell` of `img`.
void draw_panel(cv::Mat& img, const Panel& panel, const cv::Rect& cell) {
  for (const Series& s : panel.series)
    if (s.x.size() != s.y.size())
      throw UsageError(fmt::format("chart series '{}' has {} x and {} y values", s.label,
                                   s.x.size(), s.y.size()));
  const cv::Rect area(cell.x + kLeft, cell.y + kTop, cell.width - kLeft - kRight,
                      cell.height - kTop - kBottom);
  Scale sx = axis_range(panel.x, panel, true);
  Scale sy = axis_range(panel.y, panel, false);
  sx.p0 = area.x;
  sx.p1 = area.x + area.width;
  sy.p0 = area.y + area.height;  // y grows upwards
  sy.p1 = area.y;

  const std::vector<double> xt = sx.log ? log_ticks(sx.lo, sx.hi) : nice_ticks(sx.lo, sx.hi);
  const std::vector<double> yt = sy.log ? log_ticks(sy.lo, sy.hi) : nice_ticks(sy.lo, sy.hi);
  for (double t : xt) {
    const int px = cvRound(sx.pixel(t));
    cv::line(img, {px, area.y}, {px, area.y + area.height}, kGrid, 1);
    cv::line(img, {px, area.y + area.height}, {px, area.y + area.height + 5}, kInk, 1);
    put_text(img, tick_label(t, sx.log ? t : step_of(xt)), px, area.y + area.height + 20,
             kTickScale, true);
  }
  for (double t : yt) {
    const int py = cvRound(sy.pixel(t));
    cv::line(img, {area.x, py}, {area.x + area.width, py}, kGrid, 1);
    cv::line(img, {area.x - 5, py}, {area.x, py}, kInk, 1);
    const std::string label = tick_label(t, sy.log ? t : step_of(yt));
    int base = 0;
    const int tw = cv::getTextSize(label, kFont, kTickScale, 1, &base).width;
    put_text(img, label, area.x - 8 - tw, py + 5, kTickScale);
  }
  cv::rectangle(img, area, kInk, 1);

  for (const Series& s : panel.series) draw_series(img, s, sx, sy, area);
  if (panel.legend) draw_legend(img, panel, sx, sy, area);

  if (!panel.title.empty())
    put_text(img, panel.title, area.x + area.width / 2, cell.y + 24, kTitleScale, true);
  if (!panel.x.label.empty())
    put_text(img, panel.x.label, area.x + area.width / 2, area.y + area.height + 44,
             kLabelScale, true);
  if (!panel.y.label.empty())
    put_vertical_text(img, panel.y.label, cell.x + 14, area.y + area.height / 2, kLabelScale);
}

}  // namespace

Color palette(int i) {
  static const Color colours[] = {{31, 119, 180}, {214, 39, 40},  {44, 160, 44},
                                  {255, 127, 14}, {148, 103, 189}, {140, 86, 75},
                                  {227, 119, 194}, {23, 190, 207}};
  const int n = static_cast<int>(sizeof colours / sizeof colours[0]);
  return colours[((i % n) + n) % n];
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  std::vector<double> ticks;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return ticks;
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step)
    ticks.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
  return ticks;
}

cv::Mat render(const Chart& chart) {
  if (chart.panels.empty()) throw UsageError("a chart needs at least one panel");
  const int n = static_cast<int>(chart.panels.size());
  const int title_h = chart.title.empty() ? 0 : 34;
  const int cols = chart.side_by_side ? n : 1, rows = chart.side_by_side ? 1 : n;
  cv::Mat img(title_h + rows * chart.panel_height, cols * chart.panel_width, CV_8UC3, kWhite);
  if (!chart.title.empty()) put_text(img, chart.title, img.cols / 2, 26, 0.75, true, 2);
  for (int i = 0; i < n; ++i) {
    const int c = chart.side_by_side ? i : 0, r = chart.side_by_side ? 0 : i;
    draw_panel(img, chart.panels[static_cast<std::size_t>(i)],
               cv::Rect(c * chart.panel_width, title_h + r * chart.panel_height,
                        chart.panel_width, chart.panel_height));
  }
  return img;
}

void write_png(const cv::Mat& image, const std::string& path, bool overwrite) {
  std::vector<std::uint8_t> png;
  if (image.empty() || !cv::imencode(".png", image, png))
    throw Error(fmt::format("cannot encode the picture for '{}' as PNG", path));
  write_file(path, png.data(), png.size(), /*replace_existing=*/overwrite);
}

}  // namespace mjpeg::plot
