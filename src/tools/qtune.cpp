// mjpeg_qtune: the numeric half of the quantization-table tuning (src/tools/tune_tables.py drives
// it; docs/tuning/README.md explains the method).
//
//   mjpeg_qtune model --metric psnr|ssim --lambdas L1,L2,... [options] INPUT...
//     Reads every frame of each INPUT (rgb24, through the same reader as `mjpeg quality`),
//     transforms it exactly as the encoder does (colour conversion, 4:2:0 downsampling, islow
//     FDCT) but without quantizing, and gathers, per component (Y, Cb, Cr) and coefficient
//     position, the histogram of the unquantized coefficients. For any step q it then knows
//     exactly what libjpeg's rounding makes of them: the squared error D(q) and the zero-order
//     entropy R(q) of the quantized values (DC: of the differences between neighbouring
//     blocks, as JPEG codes them). For each Lagrange multiplier L it picks, independently per
//     position, the q in 1..--max-value that minimises w_c D(q) + L R(q), and prints one JSON
//     line per L: {"lambda", "model_bits", "model_mse", "tables": [Y, Cb, Cr] (natural order)}.
//     Component weights w_c: the error a chroma coefficient adds to RGB PSNR (see the
//     weights below; --subsampling 420|422|444, default 420), times --chroma-weight. With --metric ssim the luma error of each
//     block is weighted by 1 / (2 var + C2) (var: the block's AC energy per pixel, C2 as SSIM's),
//     normalised to mean 1 — SSIM counts an error against the local contrast — and chroma by
//     --chroma-weight alone. --ac-rounding N: AC levels round up from (8 - N) / 8 of a step
//     (default 4, libjpeg's rounding to nearest; 3 is --rdo deadzone's), so that tables can be
//     fitted for a dead zone (docs/rdo.md: the trellis refit that was measured).
//
//   mjpeg_qtune eval JOBS.json INPUT...
//     JOBS.json: [{"id": ..., "quality": Q, "optimize": bool, "progressive": bool (optional),
//     "tune": "none|psnr|ssim", "rdo": "off|deadzone|trellis" (optional),
//     "qtables": [[64 values]...] (optional), "qslots": [..] (optional)}, ...]. Encodes every
//     frame of each INPUT with each job's settings (encode_jpeg: the bytes cjpeg writes), decodes
//     it with the same decoder as `mjpeg quality` (FFmpeg's mjpeg decoder) and prints one JSON
//     line per job and input: {"id", "input", "frames", "bytes", "psnr_rgb" (PSNR of the mean
//     MSE, as ffmpeg's psnr filter's average), "ssim_y" (mean)}.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/input/frame_reader.hpp"
#include "core/geometry.hpp"
#include "core/quant.hpp"
#include "jpeg/transform_cpu.hpp"
#include "app/input/jpeg_decoder.hpp"
#include "core/jpeg_math.hpp"
#include "mjpeg/encoder.hpp"
#include "mjpeg/error.hpp"
#include "quality/metrics.hpp"

namespace {

using namespace mjpeg;

constexpr int kBias = 16384;  // histogram index of coefficient 0 (islow output is 8x the DCT)
constexpr int kBins = 2 * kBias + 1;

std::vector<mjpeg::Image> read_frames(const std::string& path) {
  app::FrameReader reader(path, -1);
  std::vector<mjpeg::Image> frames;
  for (mjpeg::Image f; reader.next(f);) frames.push_back(f);
  if (frames.empty()) throw Error(path + ": no frames");
  return frames;
}

/// Unquantized coefficients (islow FDCT output, 8x the orthonormal DCT) of one frame, in the
/// encoder's layout: the production transform (scalar reference) with divisors that divide by one.
std::vector<std::int16_t> raw_coefficients(const mjpeg::Image& f, const FrameGeometry& g) {
  QuantTables t;
  t.components = 3;
  t.slot[0] = 0;
  t.slot[1] = 1;
  t.slot[2] = 2;
  for (int s = 0; s < 3; ++s) {
    t.defined[s] = true;
    for (int i = 0; i < 64; ++i) {
      t.natural[s][i] = 1;
      t.divisor[s][i] = math::QuantDivisor{std::uint64_t{1} << math::kRecipShift, 0, 1};
    }
  }
  std::vector<std::int16_t> c(g.coefficient_count());
  // The scalar reference, named: it quantizes with the 64-bit divisors above (a division by
  // one). The vector variants build their 16-bit divisors from `natural` (8 x the step), so
  // with them these "raw" coefficients would come out divided by 8 and rounded.
  transform_cpu("scalar", f.view(), g, t, c.data());
  return c;
}

struct Stats {
  // [component][natural position] -> histogram (counts) and SSIM-weighted histogram (luma).
  std::vector<std::uint32_t> count[3][64];
  std::vector<double> weight[64];
  // DC values per component in block order, one run per block row (differences are taken
  // between horizontal neighbours; the first block of each row is predicted from 0... as the
  // first block of a scan is: a slight overestimate for the others, small against a row).
  std::vector<std::vector<int>> dc_rows[3];
  double luma_pixels = 0;
};

void gather(const mjpeg::Image& f, Stats& s, bool ssim, Subsampling sub, double gamma) {
  const FrameGeometry g = make_geometry(f.width, f.height, sub);
  const std::vector<std::int16_t> c = raw_coefficients(f, g);
  s.luma_pixels += static_cast<double>(f.width) * f.height;
  // SSIM weights of this frame's luma blocks, normalised to mean 1.
  const ComponentGeometry& y = g.comp[0];
  std::vector<double> w;
  if (ssim) {
    const double c2 = 0.03 * 255 * 0.03 * 255;
    double sum = 0;
    for (int by = 0; by < y.height_in_blocks; ++by)
      for (int bx = 0; bx < y.width_in_blocks; ++bx) {
        const std::int16_t* b = &c[g.block_index(0, by, bx) * 64];
        double e = 0;
        for (int k = 1; k < 64; ++k) e += (b[k] / 8.0) * (b[k] / 8.0);
        w.push_back(std::pow(2 * e / 64 + c2, -gamma));
        sum += w.back();
      }
    for (double& v : w) v *= static_cast<double>(w.size()) / sum;
  }
  for (int comp = 0; comp < 3; ++comp) {
    const ComponentGeometry& cg = g.comp[comp];
    for (int by = 0; by < cg.height_in_blocks; ++by) {
      std::vector<int> dcs;
      for (int bx = 0; bx < cg.width_in_blocks; ++bx) {
        const std::int16_t* b = &c[g.block_index(comp, by, bx) * 64];
        const double wb = comp == 0 && ssim ? w[static_cast<std::size_t>(by) * cg.width_in_blocks + bx] : 1.0;
        for (int k = 0; k < 64; ++k) {
          const int n = math::kZigzagToNatural[k];
          const int idx = std::clamp(b[k] + kBias, 0, kBins - 1);
          ++s.count[comp][n][idx];
          if (comp == 0 && ssim) s.weight[n][idx] += wb;
        }
        dcs.push_back(b[0]);
      }
      s.dc_rows[comp].push_back(std::move(dcs));
    }
  }
}

/// Coefficient v (8x scale) by step q, rounded up from (8 - rounding) / 8 of a step: rounding
/// 4 is libjpeg's (to nearest), 3 the dead zone of --rdo deadzone.
int level(int v, int q, int rounding) {
  const int d = 8 * q;
  const int m = (std::abs(v) + d * rounding / 8) / d;
  return v < 0 ? -m : m;
}

double entropy_bits(const std::vector<std::uint64_t>& h) {
  std::uint64_t n = 0;
  for (std::uint64_t v : h) n += v;
  double bits = 0;
  for (std::uint64_t v : h)
    if (v) bits += static_cast<double>(v) * std::log2(static_cast<double>(n) / v);
  return bits;
}

/// D(q) (sum of squared errors in pixel units; weighted for SSIM luma) and R(q) (bits) for
/// q = 1..qmax of one component and position; AC levels rounded by `ac_rounding` (level()), DC
/// to nearest.
void curves(const Stats& s, int comp, int n, bool weighted, int qmax, int ac_rounding,
            std::vector<double>& D, std::vector<double>& R) {
  D.assign(qmax + 1, 0.0);
  R.assign(qmax + 1, 0.0);
  const std::vector<std::uint32_t>& cnt = s.count[comp][n];
  std::vector<int> vals;
  for (int i = 0; i < kBins; ++i)
    if (cnt[i]) vals.push_back(i);
  for (int q = 1; q <= qmax; ++q) {
    double d = 0;
    const int maxl = kBias / (8 * q) + 1;
    std::vector<std::uint64_t> levels(2 * maxl + 1, 0);
    for (int i : vals) {
      const int v = i - kBias;
      const int l = level(v, q, n != 0 ? ac_rounding : 4);
      const double e = v / 8.0 - static_cast<double>(q) * l;
      d += e * e * (weighted ? s.weight[n][i] : static_cast<double>(cnt[i]));
      levels[l + maxl] += cnt[i];
    }
    D[q] = d;
    if (n != 0) {
      R[q] = entropy_bits(levels);
    } else {
      std::vector<std::uint64_t> diffs(4 * maxl + 1, 0);
      for (const auto& row : s.dc_rows[comp]) {
        int prev = 0;
        for (int v : row) {
          const int l = level(v, q, 4);
          ++diffs[l - prev + 2 * maxl];
          prev = l;
        }
      }
      R[q] = entropy_bits(diffs);
    }
  }
}

std::vector<double> parse_list(const std::string& text) {
  std::vector<double> out;
  std::size_t from = 0;
  while (from <= text.size()) {
    const std::size_t comma = text.find(',', from);
    out.push_back(std::stod(text.substr(from, comma - from)));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return out;
}

int run_model(int argc, char** argv) {
  std::string metric = "psnr";
  std::vector<double> lambdas;
  double chroma_weight = 1.0;
  int qmax = 255;
  Subsampling sub = Subsampling::s420;
  bool shared_chroma = false;
  double hf_rate = 1.0;
  double gamma = 1.0;
  int ac_rounding = 4;
  std::vector<std::string> inputs;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&] {
      if (i + 1 >= argc) throw UsageError(a + " needs a value");
      return std::string(argv[++i]);
    };
    if (a == "--metric") metric = value();
    else if (a == "--lambdas") lambdas = parse_list(value());
    else if (a == "--chroma-weight") chroma_weight = std::stod(value());
    else if (a == "--max-value") qmax = std::stoi(value());
    else if (a == "--subsampling") sub = parse_subsampling(value());
    else if (a == "--shared-chroma") shared_chroma = true;
    else if (a == "--hf-rate") hf_rate = std::stod(value());
    else if (a == "--gamma") gamma = std::stod(value());
    else if (a == "--ac-rounding") ac_rounding = std::stoi(value());
    else inputs.push_back(a);
  }
  if (metric != "psnr" && metric != "ssim") throw UsageError("--metric psnr|ssim");
  if (lambdas.empty() || inputs.empty()) throw UsageError("model needs --lambdas and inputs");
  const bool ssim = metric == "ssim";
  auto s = std::make_unique<Stats>();
  for (auto& v : s->count)
    for (auto& h : v) h.assign(kBins, 0);
  if (ssim)
    for (auto& h : s->weight) h.assign(kBins, 0.0);
  for (const std::string& in : inputs)
    for (const mjpeg::Image& f : read_frames(in)) gather(f, *s, ssim, sub, gamma);

  // Weight of each component's squared error (per coefficient, pixel units) in the metric.
  // RGB PSNR: R = Y + 1.402 Cr, G = Y - 0.344136 Cb - 0.714136 Cr, B = Y + 1.772 Cb, so with
  // independent errors the RGB MSE is eY^2 + (0.344136^2 + 1.772^2)/3 eCb^2 +
  // (1.402^2 + 0.714136^2)/3 eCr^2; a 4:2:0 chroma sample stands for 4 pixels (the decoder
  // repeats it), so its squared error counts 4 times.
  const double area = sub == Subsampling::s420 ? 4 : sub == Subsampling::s422 ? 2 : 1;
  double w[3] = {1.0, area * (0.344136 * 0.344136 + 1.772 * 1.772) / 3,
                 area * (1.402 * 1.402 + 0.714136 * 0.714136) / 3};
  if (ssim) w[1] = w[2] = 1.0;
  w[1] *= chroma_weight;
  w[2] *= chroma_weight;

  std::vector<double> D[3][64], R[3][64];
  for (int c = 0; c < 3; ++c)
    for (int n = 0; n < 64; ++n)
      curves(*s, c, n, ssim && c == 0, qmax, ac_rounding, D[c][n], R[c][n]);

  // Rate factor of position n: --hf-rate at the highest frequency, 1 at DC, linear in u + v.
  const auto rate_factor = [&](int n) { return 1.0 + (hf_rate - 1.0) * (n / 8 + n % 8) / 14.0; };
  for (double lambda : lambdas) {
    nlohmann::json tables = nlohmann::json::array();
    double bits = 0, sse = 0;
    for (int c = 0; c < 3; ++c) {
      std::vector<int> t(64);
      for (int n = 0; n < 64; ++n) {
        // With --shared-chroma, Cb and Cr get one table: their costs are added.
        const bool both = shared_chroma && c == 1;
        int best = 1;
        double best_cost = 0;
        for (int q = 1; q <= qmax; ++q) {
          double cost = w[c] * D[c][n][q] + lambda * rate_factor(n) * R[c][n][q];
          if (both) cost += w[2] * D[2][n][q] + lambda * rate_factor(n) * R[2][n][q];
          if (q == 1 || cost < best_cost) {
            best = q;
            best_cost = cost;
          }
        }
        if (shared_chroma && c == 2) best = tables[1][n].get<int>();
        t[n] = best;
        bits += R[c][n][best];
        sse += w[c] * D[c][n][best];
      }
      tables.push_back(t);
    }
    nlohmann::json line = {{"lambda", lambda},
                           {"model_bits", bits},
                           {"model_mse", sse / s->luma_pixels},
                           {"tables", tables}};
    std::printf("%s\n", line.dump().c_str());
  }
  return 0;
}

int run_eval(int argc, char** argv) {
  if (argc < 4) throw UsageError("eval JOBS.json INPUT...");
  std::ifstream jf(argv[2]);
  if (!jf) throw Error(std::string("cannot read ") + argv[2]);
  const nlohmann::json jobs = nlohmann::json::parse(jf);
  app::JpegDecoder decoder;
  for (int i = 3; i < argc; ++i) {
    const std::vector<mjpeg::Image> frames = read_frames(argv[i]);
    for (const nlohmann::json& job : jobs) {
      EncodeOptions o;
      o.quality = job.value("quality", 90);
      o.optimize = job.value("optimize", false);
      o.progressive = job.value("progressive", false);
      o.subsampling = parse_subsampling(job.value("subsampling", std::string("420")));
      o.tune = parse_tune(job.value("tune", std::string("none")));
      o.rdo = parse_rdo(job.value("rdo", std::string("off")));
      if (job.contains("qtables"))
        for (const auto& t : job["qtables"]) {
          QuantTableValues v{};
          for (int k = 0; k < 64; ++k) v[k] = t.at(k).get<std::uint32_t>();
          o.qtables.push_back(v);
        }
      if (job.contains("qslots")) o.qslots = job["qslots"].get<std::vector<int>>();
      std::uint64_t bytes = 0;
      std::vector<quality::FrameMetrics> m;
      mjpeg::Image decoded;
      for (const mjpeg::Image& f : frames) {
        const std::vector<std::uint8_t> jpeg = encode_jpeg(f.view(), o);
        bytes += jpeg.size();
        decoder.decode(jpeg, decoded);
        m.push_back(quality::compare(f.view(), decoded.view(), 1));
      }
      const quality::Summary sum = quality::summarize(m, 0);
      nlohmann::json line = {{"id", job.value("id", nlohmann::json())},
                             {"input", argv[i]},
                             {"frames", frames.size()},
                             {"bytes", bytes},
                             {"psnr_rgb", sum.psnr_rgb.mean},
                             {"ssim_y", sum.ssim_y.mean}};
      std::printf("%s\n", line.dump().c_str());
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string cmd = argc > 1 ? argv[1] : "";
    if (cmd == "model") return run_model(argc, argv);
    if (cmd == "eval") return run_eval(argc, argv);
    std::fprintf(stderr, "usage: mjpeg_qtune model|eval ... (see src/tools/qtune.cpp)\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mjpeg_qtune: error: %s\n", e.what());
    return 1;
  }
}
