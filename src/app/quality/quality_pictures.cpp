#include "quality_pictures.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "mjpeg/error.hpp"

#if MJPEG_HAVE_OPENCV
#include <opencv2/imgproc.hpp>

#include "plot/chart.hpp"
#endif

namespace mjpeg::app {

#if MJPEG_HAVE_OPENCV
namespace {

/// A BGR cv::Mat copy of an rgb24 image.
cv::Mat to_bgr(const Image& image) {
  const cv::Mat rgb(image.height, image.width, CV_8UC3,
                    const_cast<std::uint8_t*>(image.pixels.data()), image.stride());
  cv::Mat bgr;
  cv::cvtColor(rgb, bgr, cv::COLOR_RGB2BGR);
  return bgr;
}

/// `img` scaled (area-averaged down, nearest up) to `width` pixels wide.
cv::Mat scaled_to_width(const cv::Mat& img, int width) {
  if (img.cols == width) return img.clone();
  const int height = std::max(1, static_cast<int>(std::lround(double(img.rows) * width / img.cols)));
  cv::Mat out;
  cv::resize(img, out, {width, height}, 0, 0, width < img.cols ? cv::INTER_AREA : cv::INTER_NEAREST);
  return out;
}

/// A white strip of `height` pixels with `text` on it, as wide as `width`.
cv::Mat caption(const std::string& text, int width, int height = 30, double scale = 0.55) {
  cv::Mat strip(height, width, CV_8UC3, cv::Scalar(255, 255, 255));
  cv::putText(strip, text, {8, height - 10}, cv::FONT_HERSHEY_SIMPLEX, scale,
              cv::Scalar(30, 30, 30), 1, cv::LINE_AA);
  return strip;
}

/// `img` with `text` above it.
cv::Mat captioned(const cv::Mat& img, const std::string& text) {
  cv::Mat out;
  cv::vconcat(caption(text, img.cols), img, out);
  return out;
}

std::vector<double> frame_axis(std::size_t n) {
  std::vector<double> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<double>(i + 1);
  return x;
}

}  // namespace

bool pictures_available() { return true; }

void write_frames_plot(const std::vector<quality::FrameMetrics>& frames, const std::string& title,
                       const std::string& path, bool overwrite) {
  plot::Chart chart;
  chart.title = title;
  const std::vector<double> x = frame_axis(frames.size());
  const auto series = [&](const char* label, int colour, auto value) {
    plot::Series s;
    s.label = label;
    s.x = x;
    for (const quality::FrameMetrics& f : frames) s.y.push_back(value(f));
    s.color = plot::palette(colour);
    if (frames.size() <= 60) s.marker = plot::Marker::circle;
    return s;
  };
  plot::Panel psnr;
  psnr.title = "PSNR per frame (inf = identical, not drawn)";
  psnr.x.label = "frame";
  psnr.y.label = "PSNR (dB)";
  psnr.series.push_back(series("RGB", 0, [](const auto& f) { return f.psnr_rgb(); }));
  psnr.series.push_back(series("Y", 2, [](const auto& f) { return f.psnr_y(); }));
  psnr.series.push_back(series("Cb", 4, [](const auto& f) { return f.psnr_cb(); }));
  psnr.series.push_back(series("Cr", 1, [](const auto& f) { return f.psnr_cr(); }));
  plot::Panel ssim;
  ssim.title = "SSIM per frame (luma Y)";
  ssim.x.label = "frame";
  ssim.y.label = "SSIM (Y)";
  ssim.series.push_back(series("SSIM Y", 3, [](const auto& f) { return f.ssim_y; }));
  chart.panels = {psnr, ssim};
  plot::write_png(plot::render(chart), path, overwrite);
}

void write_worst_picture(const Image& source, const Image& encoded, std::int64_t frame,
                         const quality::FrameMetrics& m, const std::string& path, bool overwrite) {
  const cv::Mat a = to_bgr(source), b = to_bgr(encoded);
  cv::Mat diff;
  cv::absdiff(a, b, diff);
  std::vector<cv::Mat> ch;
  cv::split(diff, ch);
  cv::Mat largest = cv::max(cv::max(ch[0], ch[1]), ch[2]);
  double max_diff = 0;
  cv::minMaxLoc(largest, nullptr, &max_diff);
  // The gain brings the 99.5th percentile of the difference to full brightness (a few
  // outliers would otherwise leave the picture black); brighter pixels saturate.
  std::vector<long> histogram(256, 0);
  for (int y = 0; y < largest.rows; ++y)
    for (int x = 0; x < largest.cols; ++x) ++histogram[largest.at<std::uint8_t>(y, x)];
  const long total = static_cast<long>(largest.total());
  int p995 = 0;
  for (long seen = 0; p995 < 255 && (seen += histogram[p995]) < total - total / 200;) ++p995;
  const double gain = std::clamp(std::floor(255.0 / std::max(1, p995)), 1.0, 64.0);
  cv::Mat magnified, coloured;
  largest.convertTo(magnified, CV_8U, gain);
  cv::applyColorMap(magnified, coloured, cv::COLORMAP_INFERNO);

  // Panels 480..960 pixels wide: small frames are magnified (nearest neighbour, so pixels
  // stay visible), large ones reduced so that a 4K frame stays a reasonable picture.
  const int width = std::clamp(a.cols, 480, 960);
  cv::Mat row;
  cv::hconcat(std::vector<cv::Mat>{
                  captioned(scaled_to_width(a, width), "source"),
                  captioned(scaled_to_width(b, width), "encoded (decoded)"),
                  captioned(scaled_to_width(coloured, width),
                            fmt::format("|difference| x{:.0f} (99.5% <= {}, largest {:.0f})", gain,
                                        p995, max_diff))},
              row);
  const std::string header = fmt::format(
      "frame {}: PSNR RGB {} dB, Y {} dB, Cb {} dB, Cr {} dB, SSIM Y {}", frame + 1,
      quality::format_db(m.psnr_rgb()), quality::format_db(m.psnr_y()),
      quality::format_db(m.psnr_cb()), quality::format_db(m.psnr_cr()),
      quality::format_db(m.ssim_y, 4));
  cv::Mat out;
  cv::vconcat(caption(header, row.cols, 36, 0.65), row, out);
  plot::write_png(out, path, overwrite);
}

Image make_thumbnail(const Image& image, int max_width) {
  const cv::Mat small = scaled_to_width(to_bgr(image), std::min(max_width, image.width));
  cv::Mat rgb;
  cv::cvtColor(small, rgb, cv::COLOR_BGR2RGB);
  Image out(rgb.cols, rgb.rows, PixelFormat::rgb24);
  for (int y = 0; y < rgb.rows; ++y)
    std::copy_n(rgb.ptr<std::uint8_t>(y), out.stride(), out.pixels.data() + y * out.stride());
  return out;
}

void write_contact_sheet(const std::vector<Thumbnail>& thumbs, const std::string& title,
                         const std::string& path, bool overwrite) {
  if (thumbs.empty()) throw Error("no frames for the contact sheet");
  const int cols = std::min<int>(4, static_cast<int>(thumbs.size()));
  const int rows = (static_cast<int>(thumbs.size()) + cols - 1) / cols;
  const int cell_w = thumbs[0].image.width + 8;
  const int cell_h = thumbs[0].image.height + 30 + 8;
  cv::Mat sheet(40 + rows * cell_h, cols * cell_w, CV_8UC3, cv::Scalar(255, 255, 255));
  caption(title, sheet.cols, 40, 0.65).copyTo(sheet(cv::Rect(0, 0, sheet.cols, 40)));
  for (std::size_t i = 0; i < thumbs.size(); ++i) {
    const Thumbnail& t = thumbs[i];
    const cv::Mat cell = captioned(to_bgr(t.image),
                                   fmt::format("frame {}: {} dB, SSIM {}", t.frame + 1,
                                               quality::format_db(t.psnr_rgb),
                                               quality::format_db(t.ssim_y, 3)));
    const int c = static_cast<int>(i) % cols, r = static_cast<int>(i) / cols;
    const cv::Rect dst(c * cell_w + 4, 40 + r * cell_h + 4, std::min(cell.cols, cell_w - 8),
                       std::min(cell.rows, cell_h - 8));
    cell(cv::Rect(0, 0, dst.width, dst.height)).copyTo(sheet(dst));
  }
  plot::write_png(sheet, path, overwrite);
}

void write_rd_plot(const std::vector<RdPoint>& points,
                   const std::vector<std::pair<std::string, std::string>>& labels,
                   const std::string& title, const std::string& path, bool overwrite) {
  plot::Chart chart;
  chart.title = title;
  chart.side_by_side = true;
  chart.panel_width = 640;
  chart.panel_height = 460;
  const plot::Marker markers[] = {plot::Marker::circle, plot::Marker::square,
                                  plot::Marker::cross, plot::Marker::triangle};
  plot::Panel psnr, ssim;
  psnr.x.label = ssim.x.label = "bits per pixel";
  psnr.y.label = "PSNR RGB (dB)";
  ssim.y.label = "SSIM (Y)";
  psnr.title = "size against PSNR";
  ssim.title = "size against SSIM";
  for (std::size_t i = 0; i < labels.size(); ++i) {
    plot::Series s;
    s.label = labels[i].second;
    s.color = plot::palette(static_cast<int>(i));
    s.marker = markers[i % 4];
    // Reference points (libjpeg-turbo) as markers only, drawn over the lines.
    s.line = labels[i].first.rfind("libjpeg", 0) != 0;
    plot::Series t = s;
    for (const RdPoint& p : points)
      if (p.encoder == labels[i].first) {
        s.x.push_back(p.bits_per_pixel);
        s.y.push_back(p.psnr_rgb);
        t.x.push_back(p.bits_per_pixel);
        t.y.push_back(p.ssim_y);
      }
    psnr.series.push_back(s);
    ssim.series.push_back(t);
  }
  chart.panels = {psnr, ssim};
  plot::write_png(plot::render(chart), path, overwrite);
}

#else  // no OpenCV

namespace {
[[noreturn]] void no_pictures() {
  throw Error("this build has no OpenCV, which pictures (--plot, --worst, --sheet) need");
}
}  // namespace

bool pictures_available() { return false; }
void write_frames_plot(const std::vector<quality::FrameMetrics>&, const std::string&,
                       const std::string&, bool) { no_pictures(); }
void write_worst_picture(const Image&, const Image&, std::int64_t,
                         const quality::FrameMetrics&, const std::string&, bool) { no_pictures(); }
Image make_thumbnail(const Image&, int) { no_pictures(); }
void write_contact_sheet(const std::vector<Thumbnail>&, const std::string&, const std::string&,
                         bool) { no_pictures(); }
void write_rd_plot(const std::vector<RdPoint>&,
                   const std::vector<std::pair<std::string, std::string>>&, const std::string&,
                   const std::string&, bool) { no_pictures(); }

#endif

}  // namespace mjpeg::app
