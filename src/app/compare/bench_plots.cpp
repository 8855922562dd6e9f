#include "bench_plots.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "mjpeg/error.hpp"

#if MJPEG_HAVE_OPENCV
#include "plot/chart.hpp"
#endif

namespace mjpeg::app {

#if MJPEG_HAVE_OPENCV
namespace {

void make_directory(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
    throw Error(fmt::format("cannot create directory '{}': {}", dir, std::strerror(errno)));
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw Error(fmt::format("'{}' is not a directory", dir));
}

/// Rows of `sweep` grouped by mode, in the order the modes first appear.
std::vector<std::pair<std::string, std::vector<const BenchRow*>>> by_mode(
    const std::vector<BenchRow>& rows, const std::string& sweep) {
  std::vector<std::pair<std::string, std::vector<const BenchRow*>>> groups;
  for (const BenchRow& r : rows) {
    if (r.sweep != sweep) continue;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == r.mode; });
    if (it == groups.end()) {
      groups.push_back({r.mode, {}});
      it = groups.end() - 1;
    }
    it->second.push_back(&r);
  }
  return groups;
}

std::string size_of(const std::vector<BenchRow>& rows, const std::string& sweep) {
  for (const BenchRow& r : rows)
    if (r.sweep == sweep) return fmt::format("{}x{}", r.width, r.height);
  return "";
}

/// One line per mode of `sweep`, x from `x_of`, y = frames/s.
plot::Panel fps_panel(const std::vector<BenchRow>& rows, const std::string& sweep,
                      const std::string& x_label, double (*x_of)(const BenchRow&)) {
  plot::Panel p;
  p.x.label = x_label;
  p.y.label = "frames/s";
  p.y.min = 0;
  int i = 0;
  for (const auto& [mode, list] : by_mode(rows, sweep)) {
    plot::Series s;
    s.label = mode != "libjpeg-turbo" ? mode
              : sweep == "cpu"        ? "libjpeg-turbo (T threads)"
                                      : "libjpeg-turbo (N+M threads)";
    s.color = plot::palette(i++);
    s.marker = plot::Marker::circle;
    s.dashed = mode == "libjpeg-turbo";
    for (const BenchRow* r : list) {
      s.x.push_back(x_of(*r));
      s.y.push_back(r->fps);
    }
    p.series.push_back(std::move(s));
  }
  return p;
}

void write_chart(const plot::Chart& chart, const std::string& dir, const char* name) {
  plot::write_png(plot::render(chart), dir + "/" + name, /*overwrite=*/true);
}

}  // namespace

void check_bench_plots_possible() {}

void write_bench_plots(const std::vector<BenchRow>& rows, const std::string& dir) {
  make_directory(dir);
  const std::string settings = [&] {
    for (const BenchRow& r : rows)
      if (r.mode != "libjpeg-turbo") return fmt::format("N={}", r.producers);
    return std::string();
  }();

  if (!by_mode(rows, "threads").empty()) {
    plot::Chart c;
    c.title = fmt::format("frames/s vs entropy threads M ({}, {})", size_of(rows, "threads"), settings);
    c.panels.push_back(fps_panel(rows, "threads", "entropy threads M",
                                 [](const BenchRow& r) { return double(r.entropy_threads); }));
    write_chart(c, dir, "fps_vs_threads.png");
  }
  if (!by_mode(rows, "cpu").empty()) {
    plot::Chart c;
    c.title = fmt::format("cpu mode vs libjpeg-turbo: frames/s vs threads T ({})",
                          size_of(rows, "cpu"));
    c.panels.push_back(fps_panel(rows, "cpu", "threads T (cpu: T workers, 1 producer handing out frames)",
                                 [](const BenchRow& r) { return double(r.entropy_threads); }));
    write_chart(c, dir, "cpu_vs_libjpeg_turbo.png");
  }
  if (!by_mode(rows, "slots").empty()) {
    plot::Chart c;
    c.title = fmt::format("frames/s vs slots K ({}, {})", size_of(rows, "slots"), settings);
    c.panels.push_back(fps_panel(rows, "slots", "slots K", [](const BenchRow& r) { return double(r.slots); }));
    write_chart(c, dir, "fps_vs_slots.png");
  }
  if (!by_mode(rows, "stages").empty()) {
    plot::Chart c;
    c.title = fmt::format("AOK frames/s vs kernel pipeline stages ({})", size_of(rows, "stages"));
    c.panels.push_back(fps_panel(rows, "stages", "stages", [](const BenchRow& r) { return double(r.stages); }));
    write_chart(c, dir, "fps_vs_stages.png");
  }
  const auto resolution = by_mode(rows, "resolution");
  if (!resolution.empty()) {
    plot::Chart c;
    c.title = "stage time per frame vs resolution";
    c.side_by_side = false;
    c.panel_height = 330;
    struct Stage {
      const char* name;
      double BenchRow::*field;
    };
    const Stage stages[] = {{"produce", &BenchRow::produce_ms}, {"upload (H2D)", &BenchRow::upload_ms},
                            {"kernel / cpu transform", &BenchRow::kernel_ms},
                            {"download (D2H)", &BenchRow::download_ms},
                            {"entropy", &BenchRow::entropy_ms}, {"write", &BenchRow::write_ms}};
    for (const auto& [mode, list] : resolution) {
      plot::Panel p;
      p.title = mode;
      p.x.label = "megapixels per frame";
      p.y.label = "ms per frame";
      p.x.log_scale = true;
      p.y.log_scale = true;
      int i = 0;
      for (const Stage& st : stages) {
        plot::Series s;
        s.label = st.name;
        s.color = plot::palette(i++);
        s.marker = plot::Marker::circle;
        for (const BenchRow* r : list) {
          const double v = r->*st.field;
          if (v <= 0) continue;
          s.x.push_back(r->width * double(r->height) / 1e6);
          s.y.push_back(v);
        }
        if (!s.x.empty()) p.series.push_back(std::move(s));
      }
      c.panels.push_back(std::move(p));
    }
    plot::Panel fps = fps_panel(rows, "resolution", "megapixels per frame",
                                [](const BenchRow& r) { return r.width * double(r.height) / 1e6; });
    fps.title = "frames/s";
    fps.x.log_scale = true;
    fps.y.log_scale = true;
    fps.y.min = NAN;
    c.panels.push_back(std::move(fps));
    write_chart(c, dir, "stages_vs_resolution.png");
  }
}

#else

void check_bench_plots_possible() {
  throw Error("this build cannot draw plots (built without OpenCV); write the CSV here and run "
              "`mjpeg bench --from F.csv --plots DIR` where OpenCV is available");
}

void write_bench_plots(const std::vector<BenchRow>&, const std::string&) {
  check_bench_plots_possible();
}

#endif

}  // namespace mjpeg::app
