// The Gantt picture of a traced run: one panel per mode run (SOK above AOK), one row per track
// (host thread or CUDA stream), bars coloured by span kind with frame numbers on them, a
// shared time axis in milliseconds, so a faster run is visibly shorter. In the spirit of the
// stream buffer's "single stream vs dedicated streams" figure: upload, kernel and download of
// different frames run one after another on SOK's default stream, and overlap on AOK's
// dedicated streams.
//
// Needs OpenCV (only compiled where MJPEG_HAVE_OPENCV): the model and its windows live in
// trace_model.hpp, which does not.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <opencv2/core.hpp>

#include "trace_model.hpp"

namespace mjpeg::app {

struct GanttOptions {
  int width = 1920;           ///< picture width in pixels; the height follows from the rows
  TimelineWindow window;      ///< what to show (default: the first 16 frames)
  std::string title;          ///< "" = "mjpeg timeline: SOK vs AOK (first 16 frames)"
};

/// Where things were drawn, for callers and tests.
struct GanttLayout {
  struct Row {
    std::string track;  ///< the track's name
    int top = 0;        ///< first pixel row of the row band
    int bottom = 0;     ///< one past its last pixel row
  };
  struct Panel {
    std::string process;    ///< the run's name
    int title_top = 0;      ///< top of the panel's title line
    std::vector<Row> rows;  ///< in display order
  };
  int width = 0, height = 0;
  int plot_left = 0;       ///< x of the time axis' left end (from_us)
  int plot_right = 0;      ///< x of its right end (to_us)
  double from_us = 0, to_us = 0;
  std::string caption;     ///< what the window shows ("first 16 frames")
  std::vector<Panel> panels;

  /// The x pixel of time `us` (not clamped).
  double x_of(double us) const {
    return plot_left + (us - from_us) * (plot_right - plot_left) / (to_us - from_us);
  }
};

/// Draws the picture of `trace` (BGR, 8 bits) cut to options.window. Throws UsageError for a
/// width out of range or a window that shows nothing. Fills `layout` when given.
cv::Mat draw_gantt(const Trace& trace, const GanttOptions& options,
                   GanttLayout* layout = nullptr);

/// Draws the picture (see draw_gantt) and writes it to `path` as a PNG through mjpeg::write_file
/// (nothing under `path` on failure; an existing file is replaced only when `overwrite`).
/// Returns the layout and sets *png_bytes (when given) to the file's size. For
/// `mjpeg gantt` and `mjpeg compare --gantt`.
GanttLayout write_gantt_png(const Trace& trace, const GanttOptions& options,
                            const std::string& path, bool overwrite,
                            std::size_t* png_bytes = nullptr);

/// The BGR colour of bars of span kind `name` ("upload", "kernel", ...). Known kinds have fixed
/// colours; others get one of a few spare colours chosen by a hash of the name.
cv::Scalar gantt_colour(const std::string& name);

}  // namespace mjpeg::app
