// Host side of the GPU transform: device probing, TransformPlan (device tables, kernel
// attributes, launch shapes) and launch_transform.
#include "gpu_transform.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <iterator>
#include <cstdint>
#include <string>
#include <utility>

#include "core/rdo.hpp"
#include "cuda_check.hpp"
#include "cuda_raii.hpp"
#include "mjpeg/error.hpp"
#include "transform_params.hpp"

namespace mjpeg::gpu {

namespace {
// Empty: only asked whether the build holds code for the device (kernel_image_problem).
__global__ void probe_kernel() {}
}  // namespace

std::string kernel_image_problem() {
  cudaFuncAttributes a{};
  const cudaError_t e = cudaFuncGetAttributes(&a, probe_kernel);
  if (e == cudaSuccess) return "";
  (void)cudaGetLastError();
  return cudaGetErrorName(e);
}

const char* built_architectures() { return MJPEG_CUDA_ARCHITECTURES; }


struct TransformPlan::Impl {
  FrameGeometry geometry;
  PixelFormat input = PixelFormat::rgb24;
  PlanarFormat planar;  // planar.planar(): planar input
  detail::KernelParams base{};
  detail::KernelTable table{};
  int grid[4][4] = {};
  int blocks_per_sm[4][4] = {};
  DeviceBuffer tables;
  // Rdo::trellis only: the search's model and the real divisors (the transform kernel's
  // tables then divide by one, so that it stores the FDCT outputs for the search).
  DeviceBuffer trellis;
  DeviceBuffer search_tables;
};

namespace {

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// The kernel table of (layout, input) from whichever transform_tu<N>.cu instantiates it.
template <int... Unit>
bool find_kernel_table(int layout, int input, detail::KernelTable& t,
                       std::integer_sequence<int, Unit...>) {
  return (detail::kernel_table_in_unit<Unit>(layout, input, t) || ...);
}
static_assert(detail::kMaxKernelStages == kMaxStages, "kernel table columns = stage counts");
// The kernel table's variant index is the public KernelVariant's value.
static_assert(static_cast<int>(KernelVariant::direct) == detail::kDirect &&
                  static_cast<int>(KernelVariant::pipeline) == detail::kPipeline &&
                  static_cast<int>(KernelVariant::partitioned) == detail::kPartitioned &&
                  static_cast<int>(KernelVariant::primitives) == detail::kPrimitives &&
                  std::size(kAllVariants) == detail::kVariantCount,
              "kernel table columns = KernelVariant values");

}  // namespace

TransformPlan::TransformPlan(const FrameGeometry& g, const QuantTables& tables, PixelFormat input)
    : TransformPlan(g, tables, input, PlanarFormat{}) {}

TransformPlan::TransformPlan(const FrameGeometry& g, const QuantTables& tables,
                             const PlanarFormat& input)
    : TransformPlan(g, tables, PixelFormat::rgb24, input) {
  if (!input.planar()) throw UsageError("TransformPlan: the planar format is not planar");
}

TransformPlan::TransformPlan(const FrameGeometry& g, const QuantTables& tables, PixelFormat input,
                             const PlanarFormat& planar)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  if (g.num_components != 1 && g.num_components != 3)
    throw UsageError("TransformPlan: geometry has no components");
  if (!planar.planar() && input == PixelFormat::gray8 && g.num_components != 1)
    throw UsageError("TransformPlan: gray8 input needs a grayscale geometry");
  if (tables.components != g.num_components)
    throw UsageError("TransformPlan: quantization tables for another component count");
  m.geometry = g;
  m.input = input;
  m.planar = planar;

  const int layout = g.num_components == 1 ? detail::kLGray
                     : g.max_v == 2          ? detail::kL420
                     : g.max_h == 2          ? detail::kL422
                                             : detail::kL444;
  const int kernel_input = planar.planar() ? detail::kPlanarInput : channels(input);
  if (!find_kernel_table(layout, kernel_input, m.table,
                         std::make_integer_sequence<int, detail::kTransformUnits>{}))
    throw UsageError("TransformPlan: no transform kernels for this sampling and input");

  detail::DeviceTables host{};
  for (int c = 0; c < 3; ++c)  // each component's own table (gray: [0] only is read)
    for (int n = 0; n < 64; ++n)
      host.divisor[c][n] = tables.component_divisor(std::min(c, tables.components - 1))[n];
  for (int k = 0; k < 64; ++k) host.zigzag_of_natural[math::kZigzagToNatural[k]] = static_cast<std::uint8_t>(k);
  if (tables.rdo == Rdo::trellis) {
    m.trellis = DeviceBuffer(sizeof tables.trellis);
    MJPEG_CUDA_CHECK(cudaMemcpy(m.trellis.get(), &tables.trellis, sizeof tables.trellis,
                                cudaMemcpyHostToDevice));
    m.search_tables = DeviceBuffer(sizeof host);
    MJPEG_CUDA_CHECK(
        cudaMemcpy(m.search_tables.get(), &host, sizeof host, cudaMemcpyHostToDevice));
    // math::quantize by this divisor is the identity: (|c| * 2^40) >> 40 with no rounding.
    const math::QuantDivisor one{std::uint64_t{1} << math::kRecipShift, 0, 1};
    for (auto& component : host.divisor)
      for (math::QuantDivisor& d : component) d = one;
  }
  m.tables = DeviceBuffer(sizeof host);
  MJPEG_CUDA_CHECK(cudaMemcpy(m.tables.get(), &host, sizeof host, cudaMemcpyHostToDevice));

  const detail::KernelEntry& e0 = m.table.entry[0][0];
  detail::KernelParams& p = m.base;
  p.tables = m.tables.as<detail::DeviceTables>();
  p.width = g.width;
  p.height = g.height;
  p.mcus_x = g.mcus_x;
  const int bands = ceil_div(g.height, e0.tile_h);
  p.tiles_x = ceil_div(g.width, e0.tile_w);
  p.num_tiles = p.tiles_x * bands;
  for (int c = 0; c < g.num_components; ++c) {
    p.comp[c].height = g.comp[c].height;
    p.comp[c].width_in_blocks = g.comp[c].width_in_blocks;
    p.comp[c].height_in_blocks = g.comp[c].height_in_blocks;
    p.comp[c].blocks_w = g.comp[c].blocks_w;
    p.comp[c].block_offset = static_cast<long long>(g.comp[c].block_offset);
  }
  if (planar.planar()) {
    const PlanarLayout l = planar_layout(g.width, g.height, planar.chroma);
    p.planar.shift_x = planar.shift_x();
    p.planar.shift_y = planar.shift_y();
    p.planar.chroma_width = l.chroma_width;
    p.planar.chroma_height = l.chroma_height;
    p.planar.has_chroma = planar.has_chroma() ? 1 : 0;
    p.planar.ycc = planar.ycc;
  }

  int dev = 0, sms = 0;
  MJPEG_CUDA_CHECK(cudaGetDevice(&dev));
  MJPEG_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  for (int v = 0; v < detail::kVariantCount; ++v) {
    // One kernel per variant serves every stage count: allow the largest stage count's
    // shared memory; each launch asks for its own.
    std::size_t max_smem = 0;
    for (int s = 0; s < detail::kMaxKernelStages; ++s)
      max_smem = std::max(max_smem, m.table.entry[v][s].smem);
    MJPEG_CUDA_CHECK(cudaFuncSetAttribute(m.table.entry[v][0].fn,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(max_smem)));
    for (int s = 0; s < detail::kMaxKernelStages; ++s) {
      const detail::KernelEntry& e = m.table.entry[v][s];
      int per_sm = 0;
      MJPEG_CUDA_CHECK(
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, e.fn, e.threads, e.smem));
      if (per_sm < 1) throw Error("TransformPlan: a transform kernel does not fit on the device");
      m.blocks_per_sm[v][s] = per_sm;
      m.grid[v][s] = std::max(1, std::min(p.num_tiles, per_sm * sms));
    }
  }
}

TransformPlan::~TransformPlan() = default;
TransformPlan::TransformPlan(TransformPlan&&) noexcept = default;
TransformPlan& TransformPlan::operator=(TransformPlan&&) noexcept = default;

const FrameGeometry& TransformPlan::geometry() const { return impl_->geometry; }
PixelFormat TransformPlan::input_format() const { return impl_->input; }
bool TransformPlan::planar() const { return impl_->planar.planar(); }

namespace {
void check_stages(int stages) {
  if (stages < 1 || stages > kMaxStages)
    throw UsageError("GPU pipeline stages must be 1..4, got " + std::to_string(stages));
}
}  // namespace

KernelInfo TransformPlan::kernel_info(KernelVariant v, int stages) const {
  check_stages(stages);
  const int vi = static_cast<int>(v);
  const detail::KernelEntry& e = impl_->table.entry[vi][stages - 1];
  cudaFuncAttributes a{};
  MJPEG_CUDA_CHECK(cudaFuncGetAttributes(&a, e.fn));
  KernelInfo k;
  k.registers = a.numRegs;
  k.static_smem = a.sharedSizeBytes;
  k.dynamic_smem = e.smem;
  k.threads = e.threads;
  k.grid = impl_->grid[vi][stages - 1];
  k.blocks_per_sm = impl_->blocks_per_sm[vi][stages - 1];
  return k;
}

namespace {
bool aligned16(const void* ptr, std::size_t pitch) {
  return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && pitch % 16 == 0;
}

// The DC search's segments of every component, for trellis_dc_segments.
struct DcSegments {
  math::DcChain chain[3];
  int blocks_h[3];
  int per_row[3];      // segments of a whole MCU row
  int rows = 0;        // MCU rows
  int components = 0;
};

constexpr int kDcThreads = 128;

// The dummy blocks whose DC is real block (by, bx)'s, x, as fill_dummy_blocks makes them: the
// right-edge dummies of its row where it is the row's last real block, and where it is in the
// last real row and holds the DC its MCU's bottom dummies copy (the MCU's last column, or the
// last real one), those.
__device__ void fill_dummies_from(std::int16_t* coeffs, const math::DcChain& chain, int blocks_h,
                                  int by, int bx, std::int16_t x) {
  const auto dc = [&](int y, int x_) -> std::int16_t& {
    return coeffs[(chain.offset + static_cast<long long>(y) * chain.blocks_w + x_) * kBlockSize];
  };
  if (bx == chain.width_in_blocks - 1)
    for (int right = chain.width_in_blocks; right < chain.blocks_w; ++right) dc(by, right) = x;
  if (by != chain.height_in_blocks - 1 || blocks_h == chain.height_in_blocks) return;
  const int mcu = bx / chain.h;
  const int last = mcu * chain.h + chain.h - 1;
  if (bx != (last < chain.width_in_blocks ? last : chain.width_in_blocks - 1)) return;
  for (int y = chain.height_in_blocks; y < blocks_h; ++y)
    for (int col = mcu * chain.h; col <= last; ++col) dc(y, col) = x;
}

// A DC step whose four entries each went through `shuffle` (a warp shuffle of one int64).
template <class Shuffle>
__device__ math::DcStep shuffle_step(const math::DcStep& x, const Shuffle& shuffle) {
  math::DcStep r;
#pragma unroll
  for (int s = 0; s < 2; ++s)
#pragma unroll
    for (int u = 0; u < 2; ++u) r.cost[s][u] = shuffle(x.cost[s][u]);
  return r;
}

// Rdo::trellis, after trellis_blocks (which left every DC as its FDCT output): a warp per
// segment of an MCU row of a component (math::kDcSegment = 32 blocks, a lane each) chooses the
// segment's DC levels as math::trellis_dc_values does on the CPU, in its parallel form
// (math::DcStep): each lane makes its block's step, the warp scans their min-plus products in
// five shuffles, each lane compares its two back pointers against the previous lane's prefix,
// the pointers go round the warp as two ballots, and each lane walks them back from the
// segment's end to its own block. It then writes its level and the dummy blocks that copy it.
static_assert(math::kDcSegment == 32, "trellis_dc_segments gives a segment a warp");
__global__ void __launch_bounds__(kDcThreads)
    trellis_dc_segments(std::int16_t* coeffs, DcSegments d, const detail::DeviceTables* tables,
                        const math::TrellisModel* model) {
  long long t = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  int c = 0;
  for (; c < d.components; ++c) {
    const long long count = static_cast<long long>(d.rows) * d.per_row[c];
    if (t < count) break;
    t -= count;
  }
  if (c >= d.components) return;  // (whole warps: the count of threads is a multiple of 32)
  const int row = static_cast<int>(t / d.per_row[c]);
  const int first = static_cast<int>(t % d.per_row[c]) * math::kDcSegment;
  const math::DcChain& chain = d.chain[c];
  const int left = math::dc_chain_length(chain, row) - first;
  if (left <= 0) return;  // (the bottom MCU row may have fewer: the whole warp leaves)
  const int n = left < math::kDcSegment ? left : math::kDcSegment;
  const bool real = lane < n;
  const math::QuantDivisor& div = tables->divisor[c][0];
  const long long b = real ? math::dc_chain_block(chain, row, first + lane) : 0;
  const std::int32_t dc = real ? coeffs[b * kBlockSize] : 0;
  const std::int32_t lo = lane == 0 ? math::quantize(dc, div) : math::dc_lower_level(dc, div);
  const std::int32_t prev_lo = __shfl_up_sync(0xffffffffu, lo, 1);
  const math::DcStep step = lane == 0 || !real
                                ? math::dc_identity_step()
                                : math::dc_step(dc, lo, prev_lo, div, *model, c);
  math::DcStep prefix = step;
#pragma unroll
  for (int delta = 1; delta < 32; delta *= 2) {
    const math::DcStep before = shuffle_step(
        prefix, [delta](std::int64_t x) { return __shfl_up_sync(0xffffffffu, x, delta); });
    if (lane >= delta) prefix = math::dc_then(before, prefix);
  }
  const math::DcStep prev_prefix =
      shuffle_step(prefix, [](std::int64_t x) { return __shfl_up_sync(0xffffffffu, x, 1); });
  const int back = lane == 0 || !real ? 0 : math::dc_back_pointers(prev_prefix, step);
  const std::uint32_t backs[2] = {__ballot_sync(0xffffffffu, back & 1),
                                  __ballot_sync(0xffffffffu, back & 2)};
  const math::DcStep last_prefix =
      shuffle_step(prefix, [n](std::int64_t x) { return __shfl_sync(0xffffffffu, x, n - 1); });
  if (!real) return;
  const std::int16_t x =
      static_cast<std::int16_t>(lo + math::dc_choice(lane, n, last_prefix, backs));
  coeffs[b * kBlockSize] = x;
  if (d.components == 1) return;  // a non-interleaved scan has no MCU padding
  const long long k = b - chain.offset;
  fill_dummies_from(coeffs, chain, d.blocks_h[c], static_cast<int>(k / chain.blocks_w),
                    static_cast<int>(k % chain.blocks_w), x);
}

void launch(const TransformPlan::Impl& m, detail::KernelParams& p, KernelVariant variant, int stages,
            StreamHandle stream);
}  // namespace

void launch_transform(const TransformPlan& plan, const std::uint8_t* d_pixels, std::size_t pitch,
                      std::int16_t* d_coeffs, KernelVariant variant, int stages, StreamHandle stream) {
  check_stages(stages);
  const TransformPlan::Impl& m = plan.impl();
  if (m.planar.planar()) throw UsageError("launch_transform: a planar plan needs planes");
  const std::size_t row_bytes =
      static_cast<std::size_t>(m.geometry.width) * channels(m.input);
  if (!d_pixels || !d_coeffs) throw UsageError("launch_transform: null device pointer");
  if (pitch < row_bytes) throw UsageError("launch_transform: pitch is smaller than a row");
  detail::KernelParams p = m.base;
  p.pixels = d_pixels;
  p.pitch = pitch;
  p.coeffs = d_coeffs;
  p.aligned = aligned16(d_pixels, pitch) ? 1 : 0;
  launch(m, p, variant, stages, stream);
}

void launch_transform_planar(const TransformPlan& plan, const std::uint8_t* const d_planes[3],
                             const std::size_t pitches[3], std::int16_t* d_coeffs,
                             KernelVariant variant, int stages, StreamHandle stream) {
  check_stages(stages);
  const TransformPlan::Impl& m = plan.impl();
  if (!m.planar.planar()) throw UsageError("launch_transform_planar: the plan is not planar");
  if (!d_planes || !pitches || !d_planes[0] || !d_coeffs)
    throw UsageError("launch_transform_planar: null device pointer");
  detail::KernelParams p = m.base;
  if (pitches[0] < static_cast<std::size_t>(m.geometry.width))
    throw UsageError("launch_transform_planar: Y pitch is smaller than a row");
  p.pixels = d_planes[0];
  p.pitch = pitches[0];
  p.coeffs = d_coeffs;
  p.aligned = aligned16(d_planes[0], pitches[0]) ? 1 : 0;
  if (p.planar.has_chroma) {
    if (!d_planes[1] || !d_planes[2] || pitches[1] != pitches[2])
      throw UsageError("launch_transform_planar: chroma planes missing or of different pitches");
    if (pitches[1] < static_cast<std::size_t>(p.planar.chroma_width))
      throw UsageError("launch_transform_planar: chroma pitch is smaller than a row");
    p.planar.cb = d_planes[1];
    p.planar.cr = d_planes[2];
    p.planar.chroma_pitch = pitches[1];
    p.planar.chroma_aligned =
        aligned16(d_planes[1], pitches[1]) && aligned16(d_planes[2], pitches[2]) ? 1 : 0;
  }
  launch(m, p, variant, stages, stream);
}

namespace {

constexpr int kSearchThreads = 128;

// Rdo::trellis, after the transform kernel stored every block's FDCT outputs (its divisors
// divide by one: zigzag order, dummy blocks with their DC copied and AC 0; the outputs of an
// 8-bit FDCT fit in 16 bits): one thread per block runs the search of
// core/rdo.hpp (the CPU transform's code) and stores the chosen levels in place, each DC as
// its FDCT output for trellis_dc_segments (a dummy block's too, AC 0; trellis_dc_segments
// sets it).
__global__ void __launch_bounds__(kSearchThreads)
    trellis_blocks(std::int16_t* coeffs, long long blocks, long long cb_first,
                   long long cr_first, const detail::DeviceTables* tables,
                   const math::TrellisModel* model) {
  const long long b = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (b >= blocks) return;
  const int comp = b >= cr_first ? 2 : b >= cb_first ? 1 : 0;
  uint4* block = reinterpret_cast<uint4*>(coeffs + b * kBlockSize);
  union {
    uint4 v[8];
    std::int16_t c[64];
  } raw, out;
#pragma unroll
  for (int i = 0; i < 8; ++i) raw.v[i] = block[i];
  math::trellis_quantize([&raw](int k) { return raw.c[k]; }, tables->divisor[comp], *model, comp,
                         out.c);
#pragma unroll
  for (int i = 0; i < 8; ++i) block[i] = out.v[i];
}

void launch(const TransformPlan::Impl& m, detail::KernelParams& p, KernelVariant variant, int stages,
            StreamHandle stream) {
  if (reinterpret_cast<std::uintptr_t>(p.coeffs) % 16 != 0)
    throw UsageError("launch_transform: coefficient buffer must be 16-byte aligned");
  const int vi = static_cast<int>(variant);
  const detail::KernelEntry& e = m.table.entry[vi][stages - 1];
  p.stages = stages;
  void* args[] = {&p};
  MJPEG_CUDA_CHECK(cudaLaunchKernel(e.fn, dim3(static_cast<unsigned>(m.grid[vi][stages - 1])),
                                    dim3(static_cast<unsigned>(e.threads)), args, e.smem,
                                    stream));
  MJPEG_CUDA_CHECK_LAUNCH();
  if (!m.trellis.get()) return;
  const FrameGeometry& g = m.geometry;
  const long long blocks = static_cast<long long>(g.coefficient_count() / kBlockSize);
  const long long cb = g.num_components == 3 ? static_cast<long long>(g.comp[1].block_offset)
                                             : blocks;
  const long long cr = g.num_components == 3 ? static_cast<long long>(g.comp[2].block_offset)
                                             : blocks;
  const unsigned grid = static_cast<unsigned>((blocks + kSearchThreads - 1) / kSearchThreads);
  trellis_blocks<<<grid, kSearchThreads, 0, stream>>>(
      p.coeffs, blocks, cb, cr, m.search_tables.as<detail::DeviceTables>(),
      m.trellis.as<math::TrellisModel>());
  MJPEG_CUDA_CHECK_LAUNCH();
  DcSegments seg;
  seg.rows = g.mcus_y;
  seg.components = g.num_components;
  long long threads = 0;
  for (int c = 0; c < g.num_components; ++c) {
    seg.chain[c] = dc_chain(g, c);
    seg.blocks_h[c] = g.comp[c].blocks_h;
    seg.per_row[c] = math::dc_segments(seg.chain[c], 0);
    threads += 32LL * seg.rows * seg.per_row[c];  // a warp per segment
  }
  trellis_dc_segments<<<static_cast<unsigned>((threads + kDcThreads - 1) / kDcThreads), kDcThreads,
                        0, stream>>>(p.coeffs, seg, m.search_tables.as<detail::DeviceTables>(),
                                     m.trellis.as<math::TrellisModel>());
  MJPEG_CUDA_CHECK_LAUNCH();
}
}  // namespace

}  // namespace mjpeg::gpu
