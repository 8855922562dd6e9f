#include "gantt.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>

#include <fmt/format.h>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "mjpeg/files.hpp"
#include "mjpeg/error.hpp"
#include "plot/chart.hpp"

namespace mjpeg::app {
namespace {

// ---------------------------------------------------------------------------------------------
// Style: sizes in pixels, colours in BGR
// ---------------------------------------------------------------------------------------------

constexpr int kMargin = 16;         // around the whole picture
constexpr int kHeaderHeight = 40;   // the picture's title
constexpr int kLegendHeight = 30;   // colour swatches of the span kinds
constexpr int kPanelTitleHeight = 28;
constexpr int kRowHeight = 24;      // one track
constexpr int kBarInset = 3;        // gap between a bar and its row's edges
constexpr int kPanelGap = 14;
constexpr int kAxisHeight = 50;     // tick labels and "time (ms)"
constexpr int kLabelPadding = 12;   // around track labels
constexpr int kRightPadding = 28;   // room for the last tick label

constexpr int kFont = cv::FONT_HERSHEY_SIMPLEX;
constexpr double kTitleScale = 0.75;
constexpr double kPanelTitleScale = 0.6;
constexpr double kLabelScale = 0.5;
constexpr double kBarTextScale = 0.42;

const cv::Scalar kWhite(255, 255, 255);
const cv::Scalar kText(30, 30, 30);
const cv::Scalar kMutedText(90, 90, 90);
const cv::Scalar kGrid(215, 215, 215);
const cv::Scalar kRowShade(246, 246, 246);
const cv::Scalar kRowLine(228, 228, 228);
const cv::Scalar kEndMarker(40, 40, 200);  // dark red: when the work shown is done

/// Fixed colours of the span kinds the pipeline writes, in legend order.
struct KindColour {
  const char* name;
  cv::Scalar bgr;
};
const KindColour kKnownKinds[] = {
    {"read", cv::Scalar(34, 189, 188)},       // olive
    {"upload", cv::Scalar(180, 119, 31)},     // blue
    {"kernel", cv::Scalar(44, 160, 44)},      // green
    {"download", cv::Scalar(14, 127, 255)},   // orange
    {"dispatch", cv::Scalar(194, 119, 227)},  // pink: AOK's dispatcher issuing work
    {"transform", cv::Scalar(207, 190, 23)},  // cyan
    {"wait", cv::Scalar(199, 199, 199)},      // light grey: the host blocked on a GPU event
    {"sync", cv::Scalar(40, 39, 214)},        // red: a blocking SOK call
    {"entropy", cv::Scalar(189, 103, 148)},   // purple
    {"write", cv::Scalar(75, 86, 140)},       // brown
};
const cv::Scalar kSpareColours[] = {
    cv::Scalar(127, 127, 127),  // grey
    cv::Scalar(141, 219, 219),  // khaki
    cv::Scalar(232, 199, 174),  // light blue
};

cv::Size text_size(const std::string& text, double scale, int thickness = 1) {
  int baseline = 0;
  return cv::getTextSize(text, kFont, scale, thickness, &baseline);
}

/// Draws `text` with its left end at x and its vertical middle at y_mid.
void put_text(cv::Mat& img, const std::string& text, int x, int y_mid, double scale,
              const cv::Scalar& colour, int thickness = 1) {
  const cv::Size size = text_size(text, scale, thickness);
  cv::putText(img, text, cv::Point(x, y_mid + size.height / 2), kFont, scale, colour, thickness,
              cv::LINE_AA);
}

/// Black or white, whichever reads better on `background`.
cv::Scalar text_colour_on(const cv::Scalar& background) {
  const double luma = 0.114 * background[0] + 0.587 * background[1] + 0.299 * background[2];
  return luma > 140 ? cv::Scalar(0, 0, 0) : kWhite;
}

// ---------------------------------------------------------------------------------------------
// Time axis
// ---------------------------------------------------------------------------------------------

/// The tick label of `ms` with as many decimals as the step needs ("12", "12.5", "0.25").
std::string tick_label(double ms, double step_ms) {
  const int decimals = step_ms >= 1.0 ? 0 : static_cast<int>(std::ceil(-std::log10(step_ms) - 1e-9));
  return fmt::format("{:.{}f}", ms, decimals);
}

/// The tick positions (ms) within [from_ms, to_ms]: a 1, 2 or 5 x 10^k step, about 8 to 16
/// ticks (the charts' rule).
std::vector<double> ticks_ms(double from_ms, double to_ms) {
  return plot::nice_ticks(from_ms, to_ms, 12);
}

// ---------------------------------------------------------------------------------------------
// Layout
// ---------------------------------------------------------------------------------------------

constexpr const char* kDoneLegend = "done (the frames shown, or the whole run)";

/// One legend entry: a span kind's swatch and name, or the done marker and its meaning.
struct LegendItem {
  std::string label;
  bool done_marker = false;
  int x = 0;     ///< left end of the swatch
  int line = 0;  ///< legend line (0 = first)
};

/// The legend's entries for `kinds` and the done marker, wrapped into lines `width` wide.
std::vector<LegendItem> place_legend(const std::vector<std::string>& kinds, int width) {
  std::vector<LegendItem> items;
  for (const std::string& kind : kinds) items.push_back({kind, false, 0, 0});
  items.push_back({kDoneLegend, true, 0, 0});
  int x = kMargin, line = 0;
  for (LegendItem& item : items) {
    const int item_width = 32 + text_size(item.label, kLabelScale).width;
    if (x > kMargin && x + item_width > width - kMargin) {
      x = kMargin;
      ++line;
    }
    item.x = x;
    item.line = line;
    x += item_width + 22;
  }
  return items;
}

/// Positions of every panel and row for `view` at `width` pixels, below `legend_lines` lines
/// of legend.
GanttLayout compute_layout(const TimelineView& view, int width, int legend_lines) {
  GanttLayout layout;
  layout.width = width;
  layout.from_us = view.from_us;
  layout.to_us = view.to_us;
  layout.caption = view.caption;

  int label_width = 0;
  for (const TraceProcess& p : view.trace.processes)
    for (const TraceTrack& t : p.tracks)
      label_width = std::max(label_width, text_size(t.name, kLabelScale).width);
  layout.plot_left = kMargin + std::max(120, label_width + 2 * kLabelPadding);
  layout.plot_right = width - kMargin - kRightPadding;

  int y = kMargin + kHeaderHeight + legend_lines * kLegendHeight;
  for (const TraceProcess& p : view.trace.processes) {
    GanttLayout::Panel panel;
    panel.process = p.name;
    panel.title_top = y;
    y += kPanelTitleHeight;
    for (const TraceTrack& t : p.tracks) {
      panel.rows.push_back({t.name, y, y + kRowHeight});
      y += kRowHeight;
    }
    y += kPanelGap;
    layout.panels.push_back(std::move(panel));
  }
  layout.height = y - kPanelGap + kAxisHeight + kMargin;
  return layout;
}

// ---------------------------------------------------------------------------------------------
// Drawing
// ---------------------------------------------------------------------------------------------

/// The span kinds shown in `trace`: known kinds in legend order, then the others by name.
std::vector<std::string> kinds_shown(const Trace& trace) {
  std::set<std::string> names;
  for (const TraceProcess& p : trace.processes)
    for (const TraceTrack& t : p.tracks)
      for (const TraceSpan& s : t.spans) names.insert(s.name);
  std::vector<std::string> kinds;
  for (const KindColour& k : kKnownKinds)
    if (names.erase(k.name) > 0) kinds.emplace_back(k.name);
  kinds.insert(kinds.end(), names.begin(), names.end());
  return kinds;
}

std::string default_title(const TimelineView& view) {
  std::string names;
  for (const TraceProcess& p : view.trace.processes)
    names += (names.empty() ? "" : " vs ") + p.name;
  return fmt::format("mjpeg timeline: {} ({})", names, view.caption);
}

void draw_header(cv::Mat& img, const std::string& title) {
  put_text(img, title, kMargin, kMargin + kHeaderHeight / 2 - 4, kTitleScale, kText, 2);
}

/// One swatch per span kind, then the meaning of the done marker.
void draw_legend(cv::Mat& img, const std::vector<LegendItem>& items) {
  for (const LegendItem& item : items) {
    const int y_mid = kMargin + kHeaderHeight + item.line * kLegendHeight + kLegendHeight / 2 - 2;
    if (item.done_marker) {
      cv::line(img, cv::Point(item.x + 13, y_mid - 9), cv::Point(item.x + 13, y_mid + 9),
               kEndMarker, 2, cv::LINE_AA);
    } else {
      const cv::Rect swatch(item.x, y_mid - 8, 26, 16);
      cv::rectangle(img, swatch, gantt_colour(item.label), cv::FILLED);
      cv::rectangle(img, swatch, gantt_colour(item.label) * 0.6, 1);
    }
    put_text(img, item.label, item.x + 32, y_mid, kLabelScale, kText);
  }
}

/// Vertical grid lines at the ticks over every panel's rows.
void draw_grid(cv::Mat& img, const GanttLayout& layout, const std::vector<double>& ticks) {
  for (const GanttLayout::Panel& panel : layout.panels) {
    if (panel.rows.empty()) continue;
    for (const double t : ticks) {
      const int x = static_cast<int>(std::lround(layout.x_of(t * 1000.0)));
      cv::line(img, cv::Point(x, panel.rows.front().top), cv::Point(x, panel.rows.back().bottom),
               kGrid, 1);
    }
  }
}

/// Tick marks and labels under the last panel, and the axis title.
void draw_axis(cv::Mat& img, const GanttLayout& layout, const std::vector<double>& ticks) {
  const int y = layout.height - kMargin - kAxisHeight + 4;
  const double step = ticks.size() >= 2 ? ticks[1] - ticks[0] : 1.0;
  cv::line(img, cv::Point(layout.plot_left, y), cv::Point(layout.plot_right, y), kMutedText, 1);
  for (const double t : ticks) {
    const int x = static_cast<int>(std::lround(layout.x_of(t * 1000.0)));
    cv::line(img, cv::Point(x, y), cv::Point(x, y + 5), kMutedText, 1);
    const std::string label = tick_label(t, step);
    put_text(img, label, x - text_size(label, kLabelScale).width / 2, y + 16, kLabelScale, kText);
  }
  const std::string axis_title = "time (ms)";
  put_text(img, axis_title,
           (layout.plot_left + layout.plot_right - text_size(axis_title, kLabelScale).width) / 2,
           y + 38, kLabelScale, kText);
}

/// The panel's title: the run's name, its wall time, fps and frames when the trace gives them,
/// and when the work shown is done.
void draw_panel_title(cv::Mat& img, const GanttLayout& layout, const GanttLayout::Panel& panel,
                      const TraceProcess& process, const std::string& done) {
  const int y_mid = panel.title_top + kPanelTitleHeight / 2 + 1;
  put_text(img, process.name, kMargin, y_mid, kPanelTitleScale, kText, 2);
  std::string facts;
  const auto add = [&facts](const std::string& fact) {
    facts += (facts.empty() ? "" : ",  ") + fact;
  };
  if (process.info.wall_ms) add(fmt::format("run: {:.1f} ms wall", *process.info.wall_ms));
  if (process.info.fps) add(fmt::format("{:.0f} fps", *process.info.fps));
  if (process.info.frames) add(fmt::format("{} frames", *process.info.frames));
  add(done);
  // At the time axis' left end when it fits there, else right after the name, smaller if need be.
  const int after_name = kMargin + text_size(process.name, kPanelTitleScale, 2).width + 16;
  int x = std::max(layout.plot_left, after_name);
  double scale = kLabelScale;
  if (x + text_size(facts, scale).width > layout.width - kMargin) {
    x = after_name;
    while (scale > 0.36 && x + text_size(facts, scale).width > layout.width - kMargin)
      scale -= 0.02;
  }
  put_text(img, facts, x, y_mid, scale, kMutedText);
}

/// One bar; its frame number on it when the bar is wide enough.
void draw_span(cv::Mat& img, const GanttLayout& layout, const GanttLayout::Row& row,
               const TraceSpan& span) {
  const double x0 = std::max<double>(layout.x_of(span.start_us), layout.plot_left);
  const double x1 = std::min<double>(layout.x_of(span.end_us()), layout.plot_right);
  const int left = static_cast<int>(std::lround(x0));
  const int right = std::max(left + 1, static_cast<int>(std::lround(x1)));
  const cv::Rect bar(left, row.top + kBarInset, right - left, kRowHeight - 2 * kBarInset);
  const cv::Scalar colour = gantt_colour(span.name);
  cv::rectangle(img, bar, colour, cv::FILLED);
  if (bar.width >= 4) cv::rectangle(img, bar, colour * 0.6, 1);
  if (span.frame < 0) return;
  const std::string label = std::to_string(span.frame);
  const cv::Size size = text_size(label, kBarTextScale);
  if (size.width + 4 > bar.width) return;
  put_text(img, label, bar.x + (bar.width - size.width) / 2, bar.y + bar.height / 2,
           kBarTextScale, text_colour_on(colour));
}

/// A panel's title, shaded rows and track labels.
void draw_panel(cv::Mat& img, const GanttLayout& layout, const GanttLayout::Panel& panel,
                const TraceProcess& process, const std::string& done) {
  draw_panel_title(img, layout, panel, process, done);
  for (std::size_t i = 0; i < panel.rows.size(); ++i) {
    const GanttLayout::Row& row = panel.rows[i];
    if (i % 2 == 0)
      cv::rectangle(img, cv::Rect(layout.plot_left, row.top, layout.plot_right - layout.plot_left,
                                  kRowHeight),
                    kRowShade, cv::FILLED);
    cv::line(img, cv::Point(layout.plot_left, row.bottom - 1),
             cv::Point(layout.plot_right, row.bottom - 1), kRowLine, 1);
    const int label_width = text_size(row.track, kLabelScale).width;
    put_text(img, row.track, layout.plot_left - kLabelPadding - label_width,
             (row.top + row.bottom) / 2, kLabelScale, kText);
  }
}

/// A panel's bars, and the marker of its done time when that is on the axis.
void draw_bars(cv::Mat& img, const GanttLayout& layout, const GanttLayout::Panel& panel,
               const TraceProcess& process, double done_us) {
  for (std::size_t i = 0; i < panel.rows.size(); ++i)
    for (const TraceSpan& span : process.tracks[i].spans) draw_span(img, layout, panel.rows[i], span);
  if (panel.rows.empty() || done_us <= layout.from_us || done_us > layout.to_us) return;
  const int x = static_cast<int>(std::lround(layout.x_of(done_us)));
  cv::line(img, cv::Point(x, panel.rows.front().top - 4), cv::Point(x, panel.rows.back().bottom + 4),
           kEndMarker, 2, cv::LINE_AA);
}

}  // namespace

cv::Scalar gantt_colour(const std::string& name) {
  for (const KindColour& k : kKnownKinds)
    if (name == k.name) return k.bgr;
  std::uint32_t hash = 2166136261u;  // FNV-1a: the same spare colour for a name on every run
  for (const unsigned char c : name) hash = (hash ^ c) * 16777619u;
  return kSpareColours[hash % (sizeof kSpareColours / sizeof kSpareColours[0])];
}

cv::Mat draw_gantt(const Trace& trace, const GanttOptions& options, GanttLayout* layout_out) {
  if (options.width < kGanttMinWidth || options.width > kGanttMaxWidth)
    throw UsageError(fmt::format("the picture width must be {}..{} pixels, not {}",
                                 kGanttMinWidth, kGanttMaxWidth, options.width));
  const TimelineView view = select_window(trace, options.window);
  const std::vector<LegendItem> legend = place_legend(kinds_shown(view.trace), options.width);
  const GanttLayout layout = compute_layout(view, options.width, legend.back().line + 1);

  cv::Mat img(layout.height, layout.width, CV_8UC3, kWhite);
  draw_header(img, options.title.empty() ? default_title(view) : options.title);
  draw_legend(img, legend);
  const std::vector<double> ticks = ticks_ms(view.from_us / 1000.0, view.to_us / 1000.0);
  for (std::size_t i = 0; i < layout.panels.size(); ++i) {
    const std::string done =
        fmt::format("{} at {:.2f} ms", view.done_label, view.done_us[i] / 1000.0);
    draw_panel(img, layout, layout.panels[i], view.trace.processes[i], done);
  }
  draw_grid(img, layout, ticks);
  for (std::size_t i = 0; i < layout.panels.size(); ++i)
    draw_bars(img, layout, layout.panels[i], view.trace.processes[i], view.done_us[i]);
  draw_axis(img, layout, ticks);

  if (layout_out) *layout_out = layout;
  return img;
}

GanttLayout write_gantt_png(const Trace& trace, const GanttOptions& options,
                            const std::string& path, bool overwrite, std::size_t* png_bytes) {
  GanttLayout layout;
  const cv::Mat picture = draw_gantt(trace, options, &layout);
  std::vector<std::uint8_t> png;
  if (!cv::imencode(".png", picture, png)) throw Error("OpenCV could not encode the PNG");
  write_file(path, png.data(), png.size(), /*replace_existing=*/overwrite);
  if (png_bytes) *png_bytes = png.size();
  return layout;
}

}  // namespace mjpeg::app
