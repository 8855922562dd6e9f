#include "quality/metrics.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <numeric>
#include <thread>

#include <fmt/format.h>

#include "core/jpeg_math.hpp"
#include "mjpeg/error.hpp"

namespace mjpeg::quality {
namespace {

/// Runs fn(begin, end) over [0, count) split into `threads` contiguous bands, in parallel.
void parallel_bands(int count, int threads, const std::function<void(int, int)>& fn) {
  threads = std::max(1, std::min(threads, count));
  if (threads == 1) {
    fn(0, count);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(threads - 1));
  const auto band = [&](int t) { return static_cast<int>(static_cast<std::int64_t>(count) * t / threads); };
  for (int t = 1; t < threads; ++t) pool.emplace_back(fn, band(t), band(t + 1));
  fn(0, band(1));
  for (std::thread& th : pool) th.join();
}

/// Squared-error sums of one band of rows (exact integers).
struct ErrorSums {
  std::array<std::int64_t, 6> sq{};  // r, g, b, y, cb, cr
};

/// One pixel's RGB from an rgb24 or gray8 row.
template <int C>
inline void load_rgb(const std::uint8_t* row, int x, int& r, int& g, int& b) {
  if constexpr (C == 3) {
    r = row[3 * x];
    g = row[3 * x + 1];
    b = row[3 * x + 2];
  } else {
    r = g = b = row[x];
  }
}

/// Accumulates the squared errors of rows [y0, y1) and writes both luma planes.
template <int C>
ErrorSums compare_rows(const ImageView& ref, const ImageView& dis, int y0, int y1,
                       std::uint8_t* luma_ref, std::uint8_t* luma_dis) {
  ErrorSums s;
  const int w = ref.width;
  for (int y = y0; y < y1; ++y) {
    const std::uint8_t* ra = ref.data + static_cast<std::size_t>(y) * ref.stride;
    const std::uint8_t* rb = dis.data + static_cast<std::size_t>(y) * dis.stride;
    std::uint8_t* la = luma_ref + static_cast<std::size_t>(y) * w;
    std::uint8_t* lb = luma_dis + static_cast<std::size_t>(y) * w;
    // Per-row 32-bit sums cannot overflow (w <= 16384, 255^2 * 16384 < 2^31). Separate
    // accumulators and no early exits keep the loop vectorisable.
    std::int32_t er = 0, eg = 0, eb = 0, ey = 0, ecb = 0, ecr = 0;
    for (int x = 0; x < w; ++x) {
      int r1, g1, b1, r2, g2, b2;
      load_rgb<C>(ra, x, r1, g1, b1);
      load_rgb<C>(rb, x, r2, g2, b2);
      const int y1v = math::rgb_to_y(r1, g1, b1), y2v = math::rgb_to_y(r2, g2, b2);
      la[x] = static_cast<std::uint8_t>(y1v);
      lb[x] = static_cast<std::uint8_t>(y2v);
      const int dr = r1 - r2, dg = g1 - g2, db = b1 - b2, dy = y1v - y2v;
      const int dcb = math::rgb_to_cb(r1, g1, b1) - math::rgb_to_cb(r2, g2, b2);
      const int dcr = math::rgb_to_cr(r1, g1, b1) - math::rgb_to_cr(r2, g2, b2);
      er += dr * dr;
      eg += dg * dg;
      eb += db * db;
      ey += dy * dy;
      ecb += dcb * dcb;
      ecr += dcr * dcr;
    }
    const std::int32_t row_sq[6] = {er, eg, eb, ey, ecb, ecr};
    for (int k = 0; k < 6; ++k) s.sq[k] += row_sq[k];
  }
  return s;
}

/// Sums over one 4x4 block of both planes: a, b, a^2 + b^2, a*b.
struct BlockSums {
  std::int32_t s1, s2, ss, s12;
};

BlockSums block_sums(const std::uint8_t* a, std::size_t as, const std::uint8_t* b,
                     std::size_t bs) {
  BlockSums r{0, 0, 0, 0};
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) {
      const int va = a[y * as + x], vb = b[y * bs + x];
      r.s1 += va;
      r.s2 += vb;
      r.ss += va * va + vb * vb;
      r.s12 += va * vb;
    }
  return r;
}

/// SSIM of one 8x8 window from its sums, with ffmpeg's constants and its float arithmetic.
float window_ssim(std::int64_t s1, std::int64_t s2, std::int64_t ss, std::int64_t s12) {
  constexpr std::int64_t c1 = static_cast<std::int64_t>(.01 * .01 * 255 * 255 * 64 + .5);
  constexpr std::int64_t c2 = static_cast<std::int64_t>(.03 * .03 * 255 * 255 * 64 * 63 + .5);
  const std::int64_t vars = ss * 64 - s1 * s1 - s2 * s2;
  const std::int64_t covar = s12 * 64 - s1 * s2;
  return static_cast<float>(2 * s1 * s2 + c1) * static_cast<float>(2 * covar + c2) /
         (static_cast<float>(s1 * s1 + s2 * s2 + c1) * static_cast<float>(vars + c2));
}

void check_pair(const ImageView& a, const ImageView& b) {
  if (a.width <= 0 || a.height <= 0 || !a.data || !b.data)
    throw UsageError("cannot compare an empty picture");
  if (a.width != b.width || a.height != b.height)
    throw UsageError(fmt::format("pictures differ in size: {}x{} and {}x{}", a.width, a.height,
                                 b.width, b.height));
  if (a.format != b.format)
    throw UsageError("pictures differ in pixel format (one is gray, one is RGB)");
}

}  // namespace

double psnr_from_mse(double mse) {
  if (mse <= 0) return std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(255.0 * 255.0 / mse);
}

double ssim_plane(const std::uint8_t* a, std::size_t a_stride, const std::uint8_t* b,
                  std::size_t b_stride, int width, int height, int threads) {
  const int bw = width / 4, bh = height / 4;  // whole 4x4 blocks
  if (bw < 2 || bh < 2) return std::numeric_limits<double>::quiet_NaN();
  std::vector<BlockSums> blocks(static_cast<std::size_t>(bw) * bh);
  parallel_bands(bh, threads, [&](int y0, int y1) {
    for (int by = y0; by < y1; ++by)
      for (int bx = 0; bx < bw; ++bx)
        blocks[static_cast<std::size_t>(by) * bw + bx] =
            block_sums(a + 4 * (by * a_stride + bx), a_stride, b + 4 * (by * b_stride + bx),
                       b_stride);
  });
  // Window (x, y) covers blocks x..x+1 of block rows y..y+1: (bw-1) x (bh-1) windows.
  std::vector<double> row_total(static_cast<std::size_t>(bh - 1));
  parallel_bands(bh - 1, threads, [&](int y0, int y1) {
    for (int wy = y0; wy < y1; ++wy) {
      const BlockSums* top = &blocks[static_cast<std::size_t>(wy) * bw];
      const BlockSums* bot = top + bw;
      double sum = 0;
      for (int wx = 0; wx + 1 < bw; ++wx) {
        const auto add = [&](std::int32_t BlockSums::*f) {
          return std::int64_t{top[wx].*f} + top[wx + 1].*f + bot[wx].*f + bot[wx + 1].*f;
        };
        sum += window_ssim(add(&BlockSums::s1), add(&BlockSums::s2), add(&BlockSums::ss),
                           add(&BlockSums::s12));
      }
      row_total[static_cast<std::size_t>(wy)] = sum;
    }
  });
  const double total = std::accumulate(row_total.begin(), row_total.end(), 0.0);
  return total / (static_cast<double>(bw - 1) * (bh - 1));
}

std::vector<std::uint8_t> luma_plane(const ImageView& image) {
  std::vector<std::uint8_t> out(static_cast<std::size_t>(image.width) * image.height);
  for (int y = 0; y < image.height; ++y) {
    const std::uint8_t* row = image.data + static_cast<std::size_t>(y) * image.stride;
    std::uint8_t* dst = out.data() + static_cast<std::size_t>(y) * image.width;
    for (int x = 0; x < image.width; ++x) {
      if (image.format == PixelFormat::gray8)
        dst[x] = row[x];
      else
        dst[x] = static_cast<std::uint8_t>(math::rgb_to_y(row[3 * x], row[3 * x + 1], row[3 * x + 2]));
    }
  }
  return out;
}

FrameMetrics compare(const ImageView& reference, const ImageView& distorted, int threads) {
  check_pair(reference, distorted);
  const int w = reference.width, h = reference.height;
  std::vector<std::uint8_t> luma_ref(static_cast<std::size_t>(w) * h);
  std::vector<std::uint8_t> luma_dis(luma_ref.size());

  const int bands = std::max(1, std::min(threads, h));
  std::vector<ErrorSums> partial(static_cast<std::size_t>(bands));
  parallel_bands(bands, bands, [&](int b0, int b1) {
    for (int band = b0; band < b1; ++band) {
      const int y0 = static_cast<int>(static_cast<std::int64_t>(h) * band / bands);
      const int y1 = static_cast<int>(static_cast<std::int64_t>(h) * (band + 1) / bands);
      partial[static_cast<std::size_t>(band)] =
          reference.format == PixelFormat::rgb24
              ? compare_rows<3>(reference, distorted, y0, y1, luma_ref.data(), luma_dis.data())
              : compare_rows<1>(reference, distorted, y0, y1, luma_ref.data(), luma_dis.data());
    }
  });
  std::array<std::int64_t, 6> sq{};
  for (const ErrorSums& p : partial)
    for (int k = 0; k < 6; ++k) sq[k] += p.sq[k];

  const double pixels = static_cast<double>(w) * h;
  FrameMetrics m;
  m.mse_r = sq[0] / pixels;
  m.mse_g = sq[1] / pixels;
  m.mse_b = sq[2] / pixels;
  m.mse_y = sq[3] / pixels;
  m.mse_cb = sq[4] / pixels;
  m.mse_cr = sq[5] / pixels;
  m.ssim_y = ssim_plane(luma_ref.data(), w, luma_dis.data(), w, w, h, threads);
  return m;
}

Summary summarize(const std::vector<FrameMetrics>& frames, std::size_t worst_count) {
  Summary s;
  s.frames = static_cast<std::int64_t>(frames.size());
  if (frames.empty()) return s;
  // PSNR ranges: min/max of per-frame PSNR, mean = PSNR of the mean MSE.
  const auto psnr_range = [&](auto mse_of) {
    Range r;
    double mse_sum = 0;
    for (const FrameMetrics& f : frames) {
      const double mse = mse_of(f);
      const double db = psnr_from_mse(mse);
      r.min = std::min(r.min, db);
      r.max = std::max(r.max, db);
      mse_sum += mse;
    }
    r.mean = psnr_from_mse(mse_sum / static_cast<double>(frames.size()));
    return r;
  };
  s.psnr_rgb = psnr_range([](const FrameMetrics& f) { return f.mse_rgb(); });
  s.psnr_y = psnr_range([](const FrameMetrics& f) { return f.mse_y; });
  s.psnr_cb = psnr_range([](const FrameMetrics& f) { return f.mse_cb; });
  s.psnr_cr = psnr_range([](const FrameMetrics& f) { return f.mse_cr; });
  // SSIM over the frames where it is defined; a picture under 8x8 has no window, and then the
  // summary is undefined too (NaN, as ffmpeg's ssim filter prints "nan"), not +-infinity.
  double ssim_sum = 0;
  std::int64_t ssim_frames = 0;
  for (const FrameMetrics& f : frames) {
    if (std::isnan(f.ssim_y)) continue;
    s.ssim_y.min = std::min(s.ssim_y.min, f.ssim_y);
    s.ssim_y.max = std::max(s.ssim_y.max, f.ssim_y);
    ssim_sum += f.ssim_y;
    ++ssim_frames;
  }
  if (ssim_frames > 0) {
    s.ssim_y.mean = ssim_sum / static_cast<double>(ssim_frames);
  } else {
    s.ssim_y.min = s.ssim_y.mean = s.ssim_y.max = std::numeric_limits<double>::quiet_NaN();
  }

  std::vector<std::int64_t> order(frames.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    const FrameMetrics& fa = frames[static_cast<std::size_t>(a)];
    const FrameMetrics& fb = frames[static_cast<std::size_t>(b)];
    if (fa.mse_rgb() != fb.mse_rgb()) return fa.mse_rgb() > fb.mse_rgb();
    return fa.ssim_y < fb.ssim_y;
  });
  order.resize(std::min(worst_count, order.size()));
  s.worst = order;
  return s;
}

std::string format_db(double db, int decimals) {
  if (std::isinf(db) && db > 0) return "inf";
  if (std::isnan(db)) return "n/a";
  return fmt::format("{:.{}f}", db, decimals);
}

}  // namespace mjpeg::quality
