// The GPU tokenizer: quantized zigzag coefficients (layout of core/geometry.hpp) -> a token
// stream of src/core/token_format.hpp, bit-identical to the CPU tokenizers (src/jpeg/tokens.cpp):
// coded blocks (tokenize_blocks) or symbol slots (tokenize). Both walk the blocks in *scan
// order* (s = 0 .. n-1: MCU by MCU, and inside an MCU the blocks in the order the scan codes
// them).
//
// Coded blocks: one kernel (emit_blocks), one pass. Each CTA takes a tile of 32 consecutive
// blocks, counts their coded AC bits, assembles its AC parts in shared memory while one warp
// finds the tile's first bit by a decoupled look-back over the tiles before it, and then writes
// the block words, the row starts and the AC parts as whole words, shifted into place (the one
// word it shares with each neighbour is combined through the plan's scratch). The last tile writes the header: the body's length, and
// overflow = 1 when the body does not fit the output (the body is then incomplete, and the
// caller uses the coefficients instead).
//
// Symbol slots: three steps on one stream:
//   1. count: how many slots each block takes -> counts[s] (counts[n] = 0);
//   2. an exclusive prefix sum -> offsets[s], the block's first slot; offsets[n] = total
//      (two small kernels: the sum of each tile of counts, then each tile scanned from its base);
//   3. emit: every block writes its slots at offsets[s]; the header, the MCU-row starts and
//      (with --optimize) the symbol histogram are written beside them. When the body does not
//      fit the output, only the header is written (overflow = 1).
//
// One warp per block at a time (slots: grid-stride over the blocks; coded blocks: four
// consecutive blocks of the tile per warp). Lane l holds the block's coefficients 2l and
// 2l+1 (zigzag order; one coalesced 32-bit load per lane), so:
//   - the nonzero pattern is two ballots: ma (even positions, bit l = coefficient 2l, with bit 0
//     forced on so that the DC position anchors the first run) and mb (odd positions);
//   - a nonzero coefficient k finds the previous nonzero position p from the ballots of the
//     positions below k, so its zero run is k - p - 1 (ZRL slots or codes for each full 16);
//   - lane l's count is the sum for its two coefficients (slots: + the DC and a marker on lane 0;
//     both: + the EOB on lane 31); a warp sum gives the block's count, a warp exclusive scan
//     each lane's first slot or bit inside the block, and the lanes write in position order.
// Slots: the DC difference needs the DC of the previous block of the same component in scan
// order (in the same MCU, or the last such block of the previous MCU), 0 at the start of the
// scan and of every restart interval; lane 0 reads it from global memory. Coded blocks carry
// the DC itself, so their blocks do not depend on each other (nor on the restart interval).
// A coded AC part is ORed into the tile's staging buffer at its bit offset (each lane its codes),
// and the words are stored byte-swapped, so that the stream is most significant bit first,
// bytes in order.
#include "gpu_tokenize.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "cuda_check.hpp"
#include "cuda_raii.hpp"
#include "mjpeg/error.hpp"
#include "core/token_format.hpp"

namespace mjpeg::gpu {

namespace {

using namespace tokens;

constexpr int kWarpsPerCta = 8;
constexpr int kThreadsPerCta = 32 * kWarpsPerCta;

struct ScanParams {
  const std::int16_t* coeffs;
  std::uint32_t* counts;   // n + 1
  std::uint32_t* offsets;  // n + 1
  std::uint8_t* out;       // header, then the body
  long long capacity;      // body bytes that fit after the header
  const AcCodes* codes;    // coded blocks: the AC codes (device memory)
  int blocks;              // 1: coded blocks, 0: symbol slots
  int header_words;
  int histogram;           // 0/1
  int n;                   // blocks in the scan
  int num_components;
  int mcus_x, mcus_y;
  int blocks_per_mcu;
  int restart_interval;
  int h[3], v[3], blocks_w[3];
  long long block_offset[3];
};

/// Where scan block s lies.
struct ScanBlock {
  int comp;          // component
  int mcu, mx, my;   // MCU
  int j;             // position in the MCU
  int first;         // 1: the first block of its component in the MCU
  long long block;   // block index in the coefficient planes
  long long prev;    // block index of the predecessor for the DC difference, or -1 (predictor 0)
  int marker;        // 1: a restart marker precedes this block
  int marker_index;  // its n (RSTn)
};

__device__ __forceinline__ int pick(const int (&a)[3], int c) {
  return c == 0 ? a[0] : (c == 1 ? a[1] : a[2]);
}
__device__ __forceinline__ long long pick(const long long (&a)[3], int c) {
  return c == 0 ? a[0] : (c == 1 ? a[1] : a[2]);
}

__device__ ScanBlock locate(const ScanParams& p, int s) {
  ScanBlock b;
  b.mcu = s / p.blocks_per_mcu;
  b.j = s - b.mcu * p.blocks_per_mcu;
  b.my = b.mcu / p.mcus_x;
  b.mx = b.mcu - b.my * p.mcus_x;
  const int luma = p.h[0] * p.v[0];
  int yy, xx;
  if (b.j < luma) {
    b.comp = 0;
    yy = b.j / p.h[0];
    xx = b.j - yy * p.h[0];
  } else {  // chroma components have one block per MCU
    b.comp = 1 + (b.j - luma);
    yy = 0;
    xx = 0;
  }
  const int hc = pick(p.h, b.comp), vc = pick(p.v, b.comp), bw = pick(p.blocks_w, b.comp);
  const long long off = pick(p.block_offset, b.comp);
  const int by = b.my * vc + yy, bx = b.mx * hc + xx;
  b.block = off + static_cast<long long>(by) * bw + bx;
  b.first = yy == 0 && xx == 0;
  const bool restart_here = p.restart_interval > 0 && b.mcu % p.restart_interval == 0;
  b.marker = restart_here && b.mcu > 0 && b.j == 0;
  b.marker_index = b.marker ? (b.mcu / p.restart_interval - 1) & 7 : 0;
  if (!b.first) {  // the previous block of this component in the same MCU
    const int pyy = xx > 0 ? yy : yy - 1;
    const int pxx = xx > 0 ? xx - 1 : hc - 1;
    b.prev = off + static_cast<long long>(b.my * vc + pyy) * bw + (b.mx * hc + pxx);
  } else if (b.mcu == 0 || restart_here) {
    b.prev = -1;
  } else {  // the last block of this component in the previous MCU
    const int pm = b.mcu - 1;
    const int pmy = pm / p.mcus_x, pmx = pm - pmy * p.mcus_x;
    b.prev = off + static_cast<long long>(pmy * vc + vc - 1) * bw + (pmx * hc + hc - 1);
  }
  return b;
}

__device__ __forceinline__ int size_of(int v) {
  const unsigned m = static_cast<unsigned>(v < 0 ? -v : v);
  return 32 - __clz(m);  // 0 for 0
}
__device__ __forceinline__ unsigned bits_of(int v, int size) {
  return static_cast<unsigned>(v < 0 ? v - 1 : v) & ((1u << size) - 1u);
}
/// Highest set bit index of a nonzero mask.
__device__ __forceinline__ int top_bit(unsigned m) { return 31 - __clz(m); }

/// Inclusive prefix sum of `v` over the warp's lanes in order (lane `lane` gets lanes 0..lane).
template <typename T>
__device__ __forceinline__ T warp_inclusive_sum(T v, int lane) {
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const T below = __shfl_up_sync(0xFFFFFFFFu, v, d);
    if (lane >= d) v += below;
  }
  return v;
}

/// What lane `lane` of the warp handling one block contributes.
struct LaneWork {
  int va, vb;          // coefficients 2l (the DC on lane 0) and 2l + 1
  int run_a, run_b;    // zero runs before them (when nonzero)
  int dc_diff;         // lane 0
  int eob;             // lane 31: 1 when the block ends with an EOB
  int slots;           // this lane's slot count
};

__device__ __forceinline__ LaneWork analyse(const ScanParams& p, const ScanBlock& b, int lane) {
  LaneWork w;
  const std::uint32_t pair =
      reinterpret_cast<const std::uint32_t*>(p.coeffs + b.block * 64)[lane];
  w.va = static_cast<std::int16_t>(pair & 0xFFFFu);
  w.vb = static_cast<std::int16_t>(pair >> 16);
  const unsigned ma = __ballot_sync(0xFFFFFFFFu, w.va != 0) | 1u;  // DC position anchors runs
  const unsigned mb = __ballot_sync(0xFFFFFFFFu, w.vb != 0);
  const unsigned below_l = (1u << lane) - 1u;                        // bits < l
  const unsigned upto_l = lane == 31 ? 0xFFFFFFFFu : (1u << (lane + 1)) - 1u;  // bits <= l
  int slots = 0;
  w.run_a = 0;
  w.run_b = 0;
  if (lane > 0 && w.va != 0) {  // k = 2l: previous nonzero among 2i (i < l) and 2i+1 (i < l)
    const unsigned pa = ma & below_l, pb = mb & below_l;
    const int prev = max(2 * top_bit(pa), pb ? 2 * top_bit(pb) + 1 : 0);
    w.run_a = 2 * lane - prev - 1;
    slots += (w.run_a >> 4) + slots_for_size(size_of(w.va));
  }
  if (w.vb != 0) {  // k = 2l+1: previous among 2i (i <= l) and 2i+1 (i < l)
    const unsigned pa = ma & upto_l, pb = mb & below_l;
    const int prev = max(2 * top_bit(pa), pb ? 2 * top_bit(pb) + 1 : 0);
    w.run_b = 2 * lane + 1 - prev - 1;
    slots += (w.run_b >> 4) + slots_for_size(size_of(w.vb));
  }
  w.dc_diff = 0;
  if (lane == 0 && !p.blocks) {  // coded blocks carry the DC itself
    const int pred = b.prev >= 0 ? p.coeffs[b.prev * 64] : 0;
    w.dc_diff = w.va - pred;
    slots += b.marker + slots_for_size(size_of(w.dc_diff));
  }
  // The last nonzero AC position: coefficient 63 is lane 31's odd one.
  w.eob = lane == 31 && (mb >> 31) == 0;
  slots += w.eob;
  w.slots = slots;
  return w;
}

__global__ void __launch_bounds__(kThreadsPerCta) count_slots(const ScanParams p) {
  const int lane = threadIdx.x & 31;
  const int warps = gridDim.x * kWarpsPerCta;
  for (int s = blockIdx.x * kWarpsPerCta + (threadIdx.x >> 5); s < p.n; s += warps) {
    const ScanBlock b = locate(p, s);
    const LaneWork w = analyse(p, b, lane);
    const int total = __reduce_add_sync(0xFFFFFFFFu, w.slots);
    if (lane == 0) p.counts[s] = static_cast<std::uint32_t>(total);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) p.counts[p.n] = 0;
}

/// Appends one coefficient's slots (ZRLs, the symbol, an escape slot) at `o`.
__device__ __forceinline__ std::uint16_t* put_ac(std::uint16_t* o, int run, int v, unsigned cls,
                                                 unsigned* hist_ac) {
  for (; run >= 16; run -= 16) {
    *o++ = slot(kZrl, cls, 0);
    if (hist_ac) atomicAdd(&hist_ac[kZrl], 1u);
  }
  const int size = size_of(v);
  const unsigned symbol = static_cast<unsigned>(run) << 4 | static_cast<unsigned>(size);
  const unsigned bits = bits_of(v, size);
  if (size > kInlineValueBits) {
    *o++ = slot(symbol, cls, 0);
    *o++ = static_cast<std::uint16_t>(bits);
  } else {
    *o++ = slot(symbol, cls, bits);
  }
  if (hist_ac) atomicAdd(&hist_ac[symbol], 1u);
  return o;
}

__global__ void __launch_bounds__(kThreadsPerCta) emit_slots(const ScanParams p) {
  __shared__ unsigned hist[kHistogramWords];
  const int lane = threadIdx.x & 31;
  std::uint32_t* const header = reinterpret_cast<std::uint32_t*>(p.out);
  std::uint32_t* const row_start = header + sizeof(StreamHeader) / 4;
  const std::uint32_t total = p.offsets[p.n];
  const bool overflow = 2 * static_cast<long long>(total) > p.capacity;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    header[0] = 2 * total;
    header[1] = overflow ? 1u : 0u;
    header[2] = static_cast<std::uint32_t>(p.mcus_y);
    header[3] = p.histogram ? kHistogramFlag : 0u;
    row_start[p.mcus_y] = total;
  }
  if (overflow) return;  // uniform across the grid
  if (p.histogram) {
    for (int i = threadIdx.x; i < int(kHistogramWords); i += kThreadsPerCta) hist[i] = 0;
    __syncthreads();
  }
  std::uint16_t* const slots = reinterpret_cast<std::uint16_t*>(p.out + 4 * p.header_words);
  const int warps = gridDim.x * kWarpsPerCta;
  for (int s = blockIdx.x * kWarpsPerCta + (threadIdx.x >> 5); s < p.n; s += warps) {
    const ScanBlock b = locate(p, s);
    const LaneWork w = analyse(p, b, lane);
    // This lane's first slot inside the block: exclusive warp scan of the lane counts.
    const int incl = warp_inclusive_sum(w.slots, lane);
    const std::uint32_t base = p.offsets[s];
    std::uint16_t* o = slots + base + (incl - w.slots);
    const unsigned cls = b.comp == 0 ? 0u : 1u;
    unsigned* const hdc = p.histogram ? hist + (2 * cls) * kHistogramBins : nullptr;
    unsigned* const hac = p.histogram ? hist + (2 * cls + 1) * kHistogramBins : nullptr;
    if (lane == 0) {
      if (b.mx == 0 && b.j == 0) row_start[b.my] = base;
      if (b.marker) *o++ = slot(kRestart, 0, static_cast<unsigned>(b.marker_index));
      const int size = size_of(w.dc_diff);
      const unsigned bits = bits_of(w.dc_diff, size);
      if (size > kInlineValueBits) {
        *o++ = slot(dc_symbol(size), cls, 0);
        *o++ = static_cast<std::uint16_t>(bits);
      } else {
        *o++ = slot(dc_symbol(size), cls, bits);
      }
      if (hdc) atomicAdd(&hdc[size], 1u);
    } else if (w.va != 0) {
      o = put_ac(o, w.run_a, w.va, cls, hac);
    }
    if (w.vb != 0) o = put_ac(o, w.run_b, w.vb, cls, hac);
    if (w.eob) {
      *o++ = slot(kEob, cls, 0);
      if (hac) atomicAdd(&hac[kEob], 1u);
    }
  }
  if (p.histogram) {
    __syncthreads();
    unsigned* const global = header + 4 + p.mcus_y + 1;
    for (int i = threadIdx.x; i < int(kHistogramWords); i += kThreadsPerCta)
      if (hist[i]) atomicAdd(&global[i], hist[i]);
  }
}

// ---------------------------------------------------------------------------------------------
// Coded blocks.
// ---------------------------------------------------------------------------------------------
/// The AC codes in shared memory: code << 8 | length by [class][symbol].
struct SharedCodes {
  unsigned code[2][256];
};

__device__ __forceinline__ void load_codes(const ScanParams& p, SharedCodes& sc) {
  for (int i = threadIdx.x; i < 2 * 256; i += kThreadsPerCta) {
    const int cls = i >> 8, sym = i & 255;
    sc.code[cls][sym] = static_cast<unsigned>(p.codes->code[cls][sym]) << 8 | p.codes->length[cls][sym];
  }
  __syncthreads();
}

/// The coded bits of one nonzero coefficient v after `run` zeros: ZRL codes, then the symbol's
/// code and v's value bits. Calls put(value, length) for each piece (at most 26 bits) in order,
/// returns the bit count.
template <typename Put>
__device__ __forceinline__ int code_ac(const unsigned (&code)[256], int run, int v, Put&& put) {
  int bits = 0;
  for (; run >= 16; run -= 16) {
    const unsigned z = code[kZrl];
    put(z >> 8, static_cast<int>(z & 0xFF));
    bits += static_cast<int>(z & 0xFF);
  }
  const int size = size_of(v);
  const unsigned e = code[run << 4 | size];
  const int len = static_cast<int>(e & 0xFF) + size;
  put((e >> 8) << size | bits_of(v, size), len);
  return bits + len;
}

/// Lane `lane`'s coded bits of its block's AC part (coefficients 2l and 2l + 1, the EOB on lane
/// 31), handed to put(value, length) in order; returns their count.
template <typename Put>
__device__ __forceinline__ int lane_ac_bits(const unsigned (&code)[256], const LaneWork& w,
                                            int lane, Put&& put) {
  int bits = 0;
  if (lane > 0 && w.va != 0) bits += code_ac(code, w.run_a, w.va, put);
  if (w.vb != 0) bits += code_ac(code, w.run_b, w.vb, put);
  if (w.eob) {
    const unsigned e = code[kEob];
    put(e >> 8, static_cast<int>(e & 0xFF));
    bits += static_cast<int>(e & 0xFF);
  }
  return bits;
}

// One pass over the blocks: a CTA takes the next tile of kTileBlocks consecutive blocks (tiles
// are handed out in order by a ticket, so every tile it waits for is running), counts each
// block's bits, scans them, and learns where its tile starts by looking back at the tiles before
// it (a decoupled look-back: each tile publishes its own bit count at once, and its inclusive
// prefix once known; a tile adds up its predecessors' counts until it meets a prefix). Meanwhile
// the AC parts are assembled in shared memory from bit 0; they are stored as whole words shifted
// to the tile's first bit; only the word a tile shares with its neighbour is combined through
// the plan's scratch (the second of the two to arrive stores it), so the output needs no
// zeroing beforehand.
constexpr int kBlocksPerWarp = 4;
constexpr int kTileBlocks = kWarpsPerCta * kBlocksPerWarp;
/// Words of a tile's staging buffer: its AC parts from bit 0 of the first word on, and one more.
constexpr int kTileWords = (kTileBlocks * kMaxAcBitsPerBlock + 31) / 32 + 1;

/// A tile's published state: flag << 32 | value (flag 0 nothing yet, 1 the tile's own bit count,
/// 2 the bits of every tile up to and including it).
constexpr unsigned long long kTileCount = 1ull << 32;
constexpr unsigned long long kTilePrefix = 2ull << 32;

/// The plan's scratch for coded blocks, zeroed before each launch.
struct TileScratch {
  unsigned long long* status;  // [tiles]
  unsigned* edge_bits;         // [tiles]: word shared by tile t - 1 and tile t, ORed
  unsigned* edge_arrivals;     // [tiles]: how many of the two have ORed theirs
  unsigned* ticket;            // the next tile to hand out
};

__device__ __forceinline__ unsigned long long load_status(const unsigned long long* at) {
  return *reinterpret_cast<const volatile unsigned long long*>(at);
}

/// Stores `word` (native order, bits from the most significant on) at `to`, most significant byte
/// first.
__device__ __forceinline__ void store_word(std::uint32_t* to, unsigned word) {
  *to = __byte_perm(word, 0, 0x0123);
}

/// The word tile `edge` shares with tile `edge - 1`: ORs this side's bits in; the second side to
/// arrive stores the whole word.
__device__ __forceinline__ void store_shared_word(const TileScratch& t, int edge, unsigned bits,
                                                  std::uint32_t* to) {
  atomicOr(&t.edge_bits[edge], bits);
  __threadfence();
  if (atomicAdd(&t.edge_arrivals[edge], 1u) == 1u) store_word(to, atomicOr(&t.edge_bits[edge], 0u));
}

/// Warp 0 of tile `tile` (> 0): the bits of every tile before it, from their published states,
/// 32 tiles at a time, nearest first (lane l reads tile last - l).
__device__ std::uint32_t look_back(const TileScratch& t, int tile, int lane) {
  std::uint32_t before = 0;
  for (int last = tile - 1;; last -= 32) {
    const int at = last - lane;
    unsigned long long st = at >= 0 ? load_status(&t.status[at]) : kTilePrefix;
    while (__any_sync(0xFFFFFFFFu, (st >> 32) == 0))
      if ((st >> 32) == 0) st = load_status(&t.status[at]);
    const unsigned prefix = __ballot_sync(0xFFFFFFFFu, (st >> 32) == 2);
    const int stop = prefix ? __ffs(prefix) - 1 : 31;  // the nearest prefix, or all 32
    before += __reduce_add_sync(0xFFFFFFFFu, lane <= stop ? static_cast<std::uint32_t>(st) : 0u);
    if (prefix) return before;
  }
}

__global__ void __launch_bounds__(kThreadsPerCta) emit_blocks(const ScanParams p,
                                                              const TileScratch t, int tiles) {
  __shared__ SharedCodes sc;
  __shared__ unsigned staged[kTileWords];            // the tile's AC parts from bit 0 on
  __shared__ std::uint32_t block_base[kTileBlocks];  // bit offset inside the tile
  __shared__ std::uint32_t tile_base, tile_bits;
  __shared__ int tile_index;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  if (threadIdx.x == 0) tile_index = static_cast<int>(atomicAdd(t.ticket, 1u));
  load_codes(p, sc);  // ends with __syncthreads
  const int tile = tile_index;
  const int first = tile * kTileBlocks;

  // 1. This warp's blocks: what each lane codes, and the block's bit count.
  int dc[kBlocksPerWarp];  // lane 0: the block's DC (step 4's block word)
  int lane_bits[kBlocksPerWarp];
  int comp[kBlocksPerWarp];
  int block_bits[kBlocksPerWarp];
  // The MCU row a block starts (its MCU's first block in the row's first MCU), else -1: step 4
  // writes the row starts from it (locate, with its divisions, runs once a block).
  int row_started[kBlocksPerWarp];
  unsigned long long chunk[kBlocksPerWarp];  // the lane's bits, from the top, where <= 64
#pragma unroll
  for (int i = 0; i < kBlocksPerWarp; ++i) {
    const int local = warp * kBlocksPerWarp + i, s = first + local;
    lane_bits[i] = 0;
    dc[i] = 0;
    chunk[i] = 0;
    comp[i] = 0;
    row_started[i] = -1;
    if (s < p.n) {
      const ScanBlock b = locate(p, s);
      comp[i] = b.comp;
      row_started[i] = b.mx == 0 && b.j == 0 ? b.my : -1;
      const LaneWork w = analyse(p, b, lane);
      dc[i] = w.va;
      // The lane's bits kept from the top of a 64-bit word while they fit (almost always), so
      // that step 3 places them without coding them again.
      unsigned long long held = 0;
      int used = 0;
      lane_ac_bits(sc.code[b.comp == 0 ? 0 : 1], w, lane, [&](unsigned value, int len) {
        if (used + len <= 64) held |= static_cast<unsigned long long>(value) << (64 - used - len);
        used += len;
      });
      lane_bits[i] = used;
      chunk[i] = held;
    }
    block_bits[i] = __reduce_add_sync(0xFFFFFFFFu, lane_bits[i]);
    if (lane == 0) block_base[local] = static_cast<std::uint32_t>(block_bits[i]);
  }
  __syncthreads();

  // 2. The tile's scan (warp 0), its bit count published at once.
  if (warp == 0) {
    static_assert(kTileBlocks == 32, "one lane per block of the tile");
    const std::uint32_t own = block_base[lane];
    const std::uint32_t incl = warp_inclusive_sum(own, lane);
    block_base[lane] = incl - own;
    if (lane == 31) {
      tile_bits = incl;
      atomicExch(&t.status[tile], (tile == 0 ? kTilePrefix : kTileCount) | incl);
    }
  }
  __syncthreads();
  const std::uint32_t bits = tile_bits;
  const int words_staged = static_cast<int>((bits + 31) >> 5);
  for (int i = threadIdx.x; i < words_staged + 1; i += kThreadsPerCta) staged[i] = 0;
  __syncthreads();

  // 3. Warp 0 learns where the tile starts while the warps assemble their AC parts in the
  //    staging buffer (which starts on a word boundary; step 4 shifts it into place).
  if (warp == 0) {
    const std::uint32_t before = tile == 0 ? 0u : look_back(t, tile, lane);
    if (tile > 0 && lane == 0) atomicExch(&t.status[tile], kTilePrefix | (before + bits));
    if (lane == 0) tile_base = before;
  }
#pragma unroll
  for (int i = 0; i < kBlocksPerWarp; ++i) {
    const int local = warp * kBlocksPerWarp + i;
    if (first + local >= p.n) break;  // uniform across the warp
    const int incl = warp_inclusive_sum(lane_bits[i], lane);
    const unsigned at = block_base[local] + static_cast<unsigned>(incl - lane_bits[i]);
    const int len = lane_bits[i];
    // A lane with more than 64 bits codes them again (rare: the whole warp reads the block's
    // coefficients once more, as step 1 did, since the lanes' runs come from its ballots).
    LaneWork again;
    if (__any_sync(0xFFFFFFFFu, len > 64)) again = analyse(p, locate(p, first + local), lane);
    if (len == 0) continue;
    unsigned word = at >> 5;
    const int bit = static_cast<int>(at & 31u);
    if (len <= 64) {  // the bits kept in step 1: one to three words
      const unsigned long long c = chunk[i];
      atomicOr(&staged[word], static_cast<unsigned>(c >> (32 + bit)));
      if (bit + len > 32) atomicOr(&staged[word + 1], static_cast<unsigned>(c >> bit));
      if (bit + len > 64) atomicOr(&staged[word + 2], static_cast<unsigned>(c << (32 - bit)));
      continue;
    }
    // Its pieces gathered in a 64-bit window from its first word on (`used` bits of it taken,
    // from the top), each full word ORed in once.
    unsigned long long window = 0;
    int used = bit;
    lane_ac_bits(sc.code[comp[i] == 0 ? 0 : 1], again, lane, [&](unsigned value, int piece) {
      if (used + piece > 64) {  // (a piece has at most 26 bits)
        atomicOr(&staged[word++], static_cast<unsigned>(window >> 32));
        window <<= 32;
        used -= 32;
      }
      window |= static_cast<unsigned long long>(value) << (64 - used - piece);
      used += piece;
    });
    atomicOr(&staged[word], static_cast<unsigned>(window >> 32));
    if (used > 32) atomicOr(&staged[word + 1], static_cast<unsigned>(window));
  }
  __syncthreads();

  // 4. Out: the block words and row starts, then the staged words shifted to the tile's bit
  //    offset. The tile's first and last words are shared with its neighbours unless they start
  //    or end on a word boundary. The body must fit the output: a tile that would end beyond it
  //    writes nothing (the frame is an overflow then, which the last tile says in the header).
  const std::uint32_t base = tile_base;
  const std::uint32_t end = base + bits;
  const unsigned long long body_to_here =
      4ull * static_cast<unsigned long long>(p.n) + ac_stream_bytes(end);
  const bool fits = static_cast<long long>(body_to_here) <= p.capacity;
  std::uint32_t* const header = reinterpret_cast<std::uint32_t*>(p.out);
  std::uint32_t* const row_start = header + sizeof(StreamHeader) / 4;
  std::uint32_t* const block_words = reinterpret_cast<std::uint32_t*>(p.out + 4 * p.header_words);
  std::uint32_t* const stream = block_words + p.n;
  if (fits && lane == 0) {
#pragma unroll
    for (int i = 0; i < kBlocksPerWarp; ++i) {
      const int local = warp * kBlocksPerWarp + i, s = first + local;
      if (s >= p.n) break;
      block_words[s] = block_word(dc[i], static_cast<std::uint32_t>(block_bits[i]));
      if (row_started[i] >= 0) row_start[row_started[i]] = base + block_base[local];
    }
  }
  const bool last_tile = tile == tiles - 1;
  if (fits) {
    const unsigned r = base & 31u;
    const int words_out = static_cast<int>((r + bits + 31) >> 5);
    const bool head_shared = tile > 0 && r != 0;
    const bool tail_shared = !last_tile && (end & 31u) != 0;
    std::uint32_t* const to = stream + (base >> 5);
    for (int i = threadIdx.x; i < words_out; i += kThreadsPerCta) {
      const unsigned word =
          r == 0 ? staged[i] : (i > 0 ? staged[i - 1] << (32 - r) : 0u) | staged[i] >> r;
      if (i == 0 && head_shared)
        store_shared_word(t, tile, word, to);
      else if (i == words_out - 1 && tail_shared)
        store_shared_word(t, tile + 1, word, to + i);
      else
        store_word(to + i, word);
    }
  }
  if (last_tile && threadIdx.x == 0) {
    header[0] = static_cast<std::uint32_t>(body_to_here);
    header[1] = fits ? 0u : 1u;
    header[2] = static_cast<std::uint32_t>(p.mcus_y);
    header[3] = static_cast<std::uint32_t>(Format::blocks) << kFormatShift;
    row_start[p.mcus_y] = end;
  }
  if (last_tile && fits) {  // the slack after the last word
    const std::uint32_t from = (end + 31) >> 5;
    const std::uint32_t to = static_cast<std::uint32_t>(ac_stream_bytes(end) / 4);
    for (std::uint32_t i = from + threadIdx.x; i < to; i += kThreadsPerCta) stream[i] = 0;
  }
}

// ---------------------------------------------------------------------------------------------
// The exclusive prefix sum of the slot counts: counts[0..len) -> offsets[0..len), len = n + 1.
// The counts are cut into tiles of kScanTile; thread t of a tile's CTA owns kScanItems
// consecutive counts. scan_tile_sums writes each tile's sum; scan_tiles adds up the sums of
// the tiles before its own (fewer than 8000: len < 2^31 / kMaxSlotsPerBlock) and scans
// its tile from there. Every total fits 32 bits (TokenizePlan checks n).
// ---------------------------------------------------------------------------------------------
constexpr int kScanThreads = 256;
constexpr int kScanItems = 8;
constexpr int kScanTile = kScanThreads * kScanItems;
constexpr int kScanWarps = kScanThreads / 32;

/// Sum of `v` over the CTA (every thread gets it); `shared` holds kScanWarps words.
__device__ __forceinline__ std::uint32_t cta_sum(std::uint32_t v, std::uint32_t* shared) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = __reduce_add_sync(0xFFFFFFFFu, v);
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  std::uint32_t total = 0;
#pragma unroll
  for (int w = 0; w < kScanWarps; ++w) total += shared[w];
  __syncthreads();  // `shared` may be reused
  return total;
}

/// Exclusive prefix sum of `v` over the CTA's threads in order; `shared` holds kScanWarps words.
__device__ __forceinline__ std::uint32_t cta_exclusive_sum(std::uint32_t v,
                                                           std::uint32_t* shared) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const std::uint32_t incl = warp_inclusive_sum(v, lane);
  if (lane == 31) shared[warp] = incl;
  __syncthreads();
  std::uint32_t before = 0;
#pragma unroll
  for (int w = 0; w < kScanWarps; ++w) before += w < warp ? shared[w] : 0u;
  __syncthreads();
  return before + incl - v;
}

__global__ void __launch_bounds__(kScanThreads)
    scan_tile_sums(const std::uint32_t* counts, long long len, std::uint32_t* tile_sums) {
  __shared__ std::uint32_t shared[kScanWarps];
  const long long first = static_cast<long long>(blockIdx.x) * kScanTile + threadIdx.x;
  std::uint32_t sum = 0;
#pragma unroll
  for (int i = 0; i < kScanItems; ++i) {  // coalesced: the tile's order does not matter here
    const long long k = first + i * kScanThreads;
    if (k < len) sum += counts[k];
  }
  sum = cta_sum(sum, shared);
  if (threadIdx.x == 0) tile_sums[blockIdx.x] = sum;
}

__global__ void __launch_bounds__(kScanThreads)
    scan_tiles(const std::uint32_t* counts, long long len, const std::uint32_t* tile_sums,
               std::uint32_t* offsets) {
  __shared__ std::uint32_t shared[kScanWarps];
  std::uint32_t base = 0;  // the tiles before this one
  for (int t = threadIdx.x; t < static_cast<int>(blockIdx.x); t += kScanThreads)
    base += tile_sums[t];
  base = cta_sum(base, shared);
  const long long first =
      static_cast<long long>(blockIdx.x) * kScanTile + threadIdx.x * kScanItems;
  std::uint32_t v[kScanItems];
  std::uint32_t sum = 0;
#pragma unroll
  for (int i = 0; i < kScanItems; ++i) {
    v[i] = first + i < len ? counts[first + i] : 0u;
    sum += v[i];
  }
  std::uint32_t run = base + cta_exclusive_sum(sum, shared);
#pragma unroll
  for (int i = 0; i < kScanItems; ++i) {
    if (first + i < len) offsets[first + i] = run;
    run += v[i];
  }
}

int ceil_div(long long a, long long b) { return static_cast<int>((a + b - 1) / b); }

}  // namespace

struct TokenizePlan::Impl {
  ScanParams base{};
  Format format = Format::slots;
  std::size_t header_bytes = 0;
  std::size_t capacity = 0;
  std::size_t histogram_offset = 0;  // bytes from the start of d_out
  int grid = 1;
  int scan_tiles = 1;  // tiles of the prefix sum (slots)
  int block_tiles = 0;  // tiles of emit_blocks (coded blocks)
  DeviceBuffer counts, offsets, tile_sums, codes;
  DeviceBuffer tile_scratch;  // coded blocks: TileScratch's arrays, zeroed at each launch
  std::size_t tile_scratch_bytes = 0;
};

namespace {

/// What both formats' plans set up: the geometry's parameters.
void set_up(TokenizePlan::Impl& m, const FrameGeometry& g, std::size_t capacity_bytes,
            bool histogram) {
  if (g.num_components != 1 && g.num_components != 3)
    throw UsageError("TokenizePlan: geometry has no components");
  const long long n = static_cast<long long>(g.mcus_x) * g.mcus_y * g.blocks_per_mcu;
  if (n != static_cast<long long>(g.total_blocks) || n >= (1ll << 31) / kMaxSlotsPerBlock)
    throw UsageError("TokenizePlan: unsupported geometry");
  m.header_bytes = 4 * header_words(g.mcus_y, histogram);
  m.capacity = capacity_bytes;
  m.histogram_offset = 4 * (sizeof(StreamHeader) / 4 + static_cast<std::size_t>(g.mcus_y) + 1);
  ScanParams& p = m.base;
  p.capacity = static_cast<long long>(capacity_bytes);
  p.header_words = static_cast<int>(m.header_bytes / 4);
  p.histogram = histogram ? 1 : 0;
  p.n = static_cast<int>(n);
  p.num_components = g.num_components;
  p.mcus_x = g.mcus_x;
  p.mcus_y = g.mcus_y;
  p.blocks_per_mcu = g.blocks_per_mcu;
  for (int c = 0; c < 3; ++c) {
    const bool have = c < g.num_components;
    p.h[c] = have ? g.comp[c].h : 1;
    p.v[c] = have ? g.comp[c].v : 1;
    p.blocks_w[c] = have ? g.comp[c].blocks_w : 0;
    p.block_offset[c] = have ? static_cast<long long>(g.comp[c].block_offset) : 0;
  }
}

/// Symbol slots: the counts, their prefix sum's scratch and the grid of the count and emit
/// kernels.
void set_up_slots(TokenizePlan::Impl& m) {
  ScanParams& p = m.base;
  const long long n = p.n;
  m.counts = DeviceBuffer(sizeof(std::uint32_t) * static_cast<std::size_t>(n + 1));
  m.offsets = DeviceBuffer(sizeof(std::uint32_t) * static_cast<std::size_t>(n + 1));
  p.counts = m.counts.as<std::uint32_t>();
  p.offsets = m.offsets.as<std::uint32_t>();
  m.scan_tiles = ceil_div(n + 1, kScanTile);
  m.tile_sums = DeviceBuffer(sizeof(std::uint32_t) * static_cast<std::size_t>(m.scan_tiles));
  int dev = 0, sms = 0;
  MJPEG_CUDA_CHECK(cudaGetDevice(&dev));
  MJPEG_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  // Enough warps to cover the blocks once, at most 8 CTAs per SM (grid-stride beyond).
  m.grid = std::max(1, std::min(ceil_div(n, kWarpsPerCta), 8 * sms));
}

/// Coded blocks: one CTA per tile, and the tiles' scratch (status words, then the shared words
/// and their arrival counts, then the ticket).
void set_up_blocks(TokenizePlan::Impl& m) {
  m.block_tiles = ceil_div(m.base.n, kTileBlocks);
  const std::size_t tiles = static_cast<std::size_t>(m.block_tiles);
  m.tile_scratch_bytes = tiles * sizeof(unsigned long long) + (2 * tiles + 1) * sizeof(unsigned);
  m.tile_scratch = DeviceBuffer(m.tile_scratch_bytes);
}

TileScratch tile_scratch(const TokenizePlan::Impl& m) {
  const std::size_t tiles = static_cast<std::size_t>(m.block_tiles);
  TileScratch t;
  t.status = m.tile_scratch.as<unsigned long long>();
  t.edge_bits = reinterpret_cast<unsigned*>(t.status + tiles);
  t.edge_arrivals = t.edge_bits + tiles;
  t.ticket = t.edge_arrivals + tiles;
  return t;
}

}  // namespace

TokenizePlan::TokenizePlan(const FrameGeometry& g, const AcCodes& codes,
                           std::size_t capacity_bytes)
    : impl_(std::make_unique<Impl>()) {
  if (g.total_blocks > kMaxCodedBlocks)
    throw UsageError("TokenizePlan: " + std::to_string(g.total_blocks) +
                     " blocks are more than a coded-blocks stream holds");
  for (int cls = 0; cls < 2; ++cls)
    for (int sym = 0; sym < 256; ++sym) {
      const int run = sym >> 4, size = sym & 15;
      const bool needed = sym == static_cast<int>(kEob) || sym == static_cast<int>(kZrl) ||
                          (size >= 1 && size <= 10 && run <= 15);
      if (needed && codes.length[cls][sym] == 0)
        throw UsageError("TokenizePlan: the AC codes have none for symbol " +
                         std::to_string(sym) + " of class " + std::to_string(cls));
    }
  Impl& m = *impl_;
  set_up(m, g, capacity_bytes, false);
  set_up_blocks(m);
  m.format = Format::blocks;
  m.base.blocks = 1;
  m.codes = DeviceBuffer(sizeof(AcCodes));
  MJPEG_CUDA_CHECK(cudaMemcpy(m.codes.get(), &codes, sizeof(AcCodes), cudaMemcpyHostToDevice));
  m.base.codes = m.codes.as<AcCodes>();
}

TokenizePlan::TokenizePlan(const FrameGeometry& g, int restart_interval, bool histogram,
                           std::size_t capacity_bytes)
    : impl_(std::make_unique<Impl>()) {
  if (restart_interval < 0) throw UsageError("TokenizePlan: negative restart interval");
  set_up(*impl_, g, capacity_bytes, histogram);
  set_up_slots(*impl_);
  impl_->base.restart_interval = restart_interval;
}

TokenizePlan::~TokenizePlan() = default;
TokenizePlan::TokenizePlan(TokenizePlan&&) noexcept = default;
TokenizePlan& TokenizePlan::operator=(TokenizePlan&&) noexcept = default;

Format TokenizePlan::format() const { return impl_->format; }
std::size_t TokenizePlan::header_bytes() const { return impl_->header_bytes; }
std::size_t TokenizePlan::capacity_bytes() const { return impl_->capacity; }
std::size_t TokenizePlan::output_bytes() const { return impl_->header_bytes + impl_->capacity; }

void launch_tokenize(const TokenizePlan& plan, const std::int16_t* d_coeffs, void* d_out,
                     StreamHandle stream) {
  const TokenizePlan::Impl& m = plan.impl();
  if (!d_coeffs || !d_out) throw UsageError("launch_tokenize: null device pointer");
  if (reinterpret_cast<std::uintptr_t>(d_out) % 16 != 0 ||
      reinterpret_cast<std::uintptr_t>(d_coeffs) % 16 != 0)
    throw UsageError("launch_tokenize: buffers must be 16-byte aligned");
  const cudaStream_t s = stream;
  ScanParams p = m.base;
  p.coeffs = d_coeffs;
  p.out = static_cast<std::uint8_t*>(d_out);
  if (m.format == Format::blocks) {
    MJPEG_CUDA_CHECK(cudaMemsetAsync(m.tile_scratch.get(), 0, m.tile_scratch_bytes, s));
    emit_blocks<<<m.block_tiles, kThreadsPerCta, 0, s>>>(p, tile_scratch(m), m.block_tiles);
    MJPEG_CUDA_CHECK_LAUNCH();
    return;
  }
  if (p.histogram)
    MJPEG_CUDA_CHECK(cudaMemsetAsync(p.out + m.histogram_offset, 0,
                                     kHistogramWords * sizeof(std::uint32_t), s));
  count_slots<<<m.grid, kThreadsPerCta, 0, s>>>(p);
  MJPEG_CUDA_CHECK_LAUNCH();
  const long long len = static_cast<long long>(p.n) + 1;
  std::uint32_t* const tile_sums = m.tile_sums.as<std::uint32_t>();
  if (m.scan_tiles > 1) {  // one tile needs no sums (its base is 0)
    scan_tile_sums<<<m.scan_tiles, kScanThreads, 0, s>>>(p.counts, len, tile_sums);
    MJPEG_CUDA_CHECK_LAUNCH();
  }
  scan_tiles<<<m.scan_tiles, kScanThreads, 0, s>>>(p.counts, len, tile_sums, p.offsets);
  MJPEG_CUDA_CHECK_LAUNCH();
  emit_slots<<<m.grid, kThreadsPerCta, 0, s>>>(p);
  MJPEG_CUDA_CHECK_LAUNCH();
}

}  // namespace mjpeg::gpu
