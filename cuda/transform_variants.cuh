// Transform kernels, part 6 of 6: the tile loop, written once, and the four variants as its
// staging policy (how pixel tiles reach shared memory; all variants give identical output).
//
//   run_tiles<L, C>(p, s, staging, tid):   for every tile of this block (t = blockIdx.x,
//                                          blockIdx.x + gridDim.x, ...):
//       stage = staging.wait(st)           the tile's bytes are in stage st (direct: nullptr)
//       pass 1                             samples -> row FDCT -> work (transform_fdct.cuh)
//       staging.release(st)                barrier; stage st is free (and refilled with the
//                                          tile S iterations ahead while the tile finishes)
//       pass 2, dummies, store             (transform_quantize.cuh)
//
// A staging policy is a class with
//   kStages  (ring of stages; 1 for direct, whose ring index is unused), kStaged (pass 1 reads a
//   stage rather than global memory), kPartial (consumers are not the whole block: named
//   barriers), and the hooks produce() (partitioned: the producer warp's own loop; true when
//   this thread was a producer and is done), wait(st), release(st) and drain().
// Each kernel declares its block-scoped pipeline state (if any), carves shared memory, builds
// its policy and hands it to transform_block: the kernels differ in nothing else.
#pragma once

#include <cooperative_groups.h>
#include <cuda/pipeline>
#include <cuda_pipeline_primitives.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "transform_color.cuh"
#include "transform_fdct.cuh"
#include "transform_quantize.cuh"
#include "transform_stage.cuh"
#include "transform_tile.cuh"

namespace mjpeg::gpu::detail {

namespace cg = cooperative_groups;

// ---------------------------------------------------------------------------------------------
// One tile
// ---------------------------------------------------------------------------------------------
// Pass 1 (kFast420 interior tiles: the balanced 4:2:0 path, only luma warps work). Planar
// input: first the tile to RGB (convert_tile) and a barrier of the consumer threads; pass 1
// then reads the RGB tile.
template <int L, int C, bool kSmem, bool kPartial = false>
__device__ __forceinline__ void pass1_any(const KernelParams& p, const Tile& tl,
                                          const std::uint8_t* stage, std::uint8_t* rgb, int tid,
                                          std::int32_t* work, bool fast) {
  using K = TileConfig<L, C>;
  if constexpr (K::kPlanar) {
    convert_tile<L, C, kSmem>(p, tl, stage, rgb, tid, K::kThreads);
    consumer_sync<kPartial>(K::kThreads);
    if constexpr (K::kFast420) {
      if (fast) {
        if (tid < K::kYBlocks * kDctSize) pass1_fast420<L, C, true>(p, tl, rgb, tid, work);
        return;
      }
    }
    pass1<L, C, true>(p, tl, rgb, tid, work);
    return;
  }
  if constexpr (K::kFast420) {
    if (fast) {
      if (tid < K::kYBlocks * kDctSize) pass1_fast420<L, C, kSmem>(p, tl, stage, tid, work);
      return;
    }
  }
  pass1<L, C, kSmem>(p, tl, stage, tid, work);
}

// Everything after pass 1's barrier.
template <int L, int C, bool kPartial>
__device__ __forceinline__ void finish_any(const KernelParams& p, const Tile& tl, int tid,
                                           std::int32_t* work, std::int16_t* outq,
                                           const DeviceTables& tab, bool fast) {
  using K = TileConfig<L, C>;
  if constexpr (K::kFast420) {
    if (fast) {
      finish_fast420<L, C>(p, tl, tid, work, outq, tab);
      return;
    }
  }
  finish_tile<L, C, kPartial>(p, tl, tid, work, outq, tab);
}

// ---------------------------------------------------------------------------------------------
// The tile loop (every variant; the block's grid is persistent)
// ---------------------------------------------------------------------------------------------
template <int L, int C, class Staging>
__device__ __forceinline__ void run_tiles(const KernelParams& p, const SmemPtrs& s,
                                          Staging& staging, int tid) {
  int st = 0;
  int iter = 0;
  for (int t = blockIdx.x; t < p.num_tiles; t += gridDim.x, ++iter) {
    const Tile tl = make_tile<L, C>(p, t);
    const bool fast = tile_is_interior<L, C>(p, tl);
    std::int32_t* work = work_of<L, C>(s.work, iter);
    const std::uint8_t* stage = staging.wait(st);
    pass1_any<L, C, Staging::kStaged, Staging::kPartial>(p, tl, stage, s.rgb, tid, work, fast);
    staging.release(st);
    finish_any<L, C, Staging::kPartial>(p, tl, tid, work, s.outq, *s.tab, fast);
    st = st + 1 == Staging::kStages ? 0 : st + 1;
  }
}

template <int L, int C, class Staging>
__device__ __forceinline__ void transform_block(const KernelParams& p, const SmemPtrs& s,
                                                Staging& staging, int tid) {
  if (staging.produce()) return;
  run_tiles<L, C>(p, s, staging, tid);
  staging.drain();
}

// ---------------------------------------------------------------------------------------------
// Copy policies of stage_tile (transform_stage.cuh)
// ---------------------------------------------------------------------------------------------
using BlockPipeline = cuda::pipeline<cuda::thread_scope_block>;

/// cuda::memcpy_async on a block-scoped pipeline (16-byte chunks as aligned_size_t<16>).
struct PipelineCopy {
  BlockPipeline& pipe;
  __device__ __forceinline__ void chunk(std::uint8_t* d, const std::uint8_t* g) {
    cuda::memcpy_async(d, g, cuda::aligned_size_t<kCopyBytes>(kCopyBytes), pipe);
  }
  __device__ __forceinline__ void byte(std::uint8_t* d, const std::uint8_t* g) {
    cuda::memcpy_async(d, g, std::size_t{1}, pipe);
  }
};

/// Thread-scope primitives: __pipeline_memcpy_async chunks, plain byte copies.
struct PrimitivesCopy {
  __device__ __forceinline__ void chunk(std::uint8_t* d, const std::uint8_t* g) {
    __pipeline_memcpy_async(d, g, kCopyBytes);
  }
  __device__ __forceinline__ void byte(std::uint8_t* d, const std::uint8_t* g) { *d = *g; }
};

// ---------------------------------------------------------------------------------------------
// Variant `direct`: no staging. Pass 1 reads pixels from global memory (byte loads through the
// read-only cache). Threads: kThreads; shared: work + outq + tables (no stages).
// ---------------------------------------------------------------------------------------------
template <int L, int C>
struct DirectStaging {
  using K = TileConfig<L, C>;
  static constexpr int kStages = 1;
  static constexpr bool kStaged = false;
  static constexpr bool kPartial = false;
  static constexpr int kBlockThreads = K::kThreads;

  __device__ __forceinline__ DirectStaging(const KernelParams& p, const SmemPtrs& s, int tid) {
    load_tables(p.tables, s.tab, tid, K::kThreads);
    __syncthreads();
  }
  __device__ __forceinline__ bool produce() { return false; }
  __device__ __forceinline__ const std::uint8_t* wait(int) { return nullptr; }
  __device__ __forceinline__ void release(int) { __syncthreads(); }
  __device__ __forceinline__ void drain() {}
};

// ---------------------------------------------------------------------------------------------
// Variant `pipeline`: unified block-scoped cuda::pipeline with S stages; every thread copies
// (16-byte cuda::memcpy_async, aligned_size_t<16>) and computes. The constructor fills S stages;
// each iteration waits for the oldest stage, runs pass 1 from it, releases it after the
// barrier and immediately refills it with the tile S iterations ahead, then finishes the tile
// while that copy is in flight. Threads: kThreads; shared: S stages + work + outq + tables.
// At the end the pipeline is drained (the empty stages committed past the last tile are waited
// for), so every committed stage is consumed.
// ---------------------------------------------------------------------------------------------
template <int L, int C, int S>
struct UnifiedStaging {
  using K = TileConfig<L, C>;
  using State = cuda::pipeline_shared_state<cuda::thread_scope_block, S>;
  static constexpr int kStages = S;
  static constexpr bool kStaged = true;
  static constexpr bool kPartial = false;
  static constexpr int kBlockThreads = K::kThreads;

  BlockPipeline pipe;
  const KernelParams& p;
  const SmemPtrs& s;
  const int tid;
  int fetch;      // next tile to stage
  int committed;  // stages committed and not yet consumed

  __device__ __forceinline__ UnifiedStaging(const KernelParams& p_, const SmemPtrs& s_, int tid_,
                                            State& state)
      : pipe(cuda::make_pipeline(cg::this_thread_block(), &state)), p(p_), s(s_), tid(tid_) {
    load_tables(p.tables, s.tab, tid, K::kThreads);
    fetch = blockIdx.x;
    committed = 0;
#pragma unroll
    for (int st = 0; st < S; ++st) refill(st);
    __syncthreads();  // tables visible
  }
  __device__ __forceinline__ void refill(int st) {
    pipe.producer_acquire();
    PipelineCopy copy{pipe};
    if (fetch < p.num_tiles)
      stage_tile<L, C>(p, make_tile<L, C>(p, fetch), s.stages + st * K::kStageBytes, tid,
                       K::kThreads, copy);
    pipe.producer_commit();
    ++committed;
    fetch += gridDim.x;
  }
  __device__ __forceinline__ bool produce() { return false; }
  __device__ __forceinline__ const std::uint8_t* wait(int st) {
    pipe.consumer_wait();
    return s.stages + st * K::kStageBytes;
  }
  __device__ __forceinline__ void release(int st) {
    __syncthreads();
    pipe.consumer_release();
    --committed;
    refill(st);
  }
  __device__ __forceinline__ void drain() {  // the (empty) stages still in the pipeline
    for (; committed > 0; --committed) {
      pipe.consumer_wait();
      pipe.consumer_release();
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Variant `partitioned`: block-scoped cuda::pipeline with roles. Warps 0..kThreads/32-1 are
// consumers (same mapping as above); the last warp (32 threads) is the producer: it acquires
// stage after stage, issues the 16-byte copies of tile after tile and commits, running up to S
// tiles ahead. Consumers synchronise among themselves with named barrier 1 (the producer warp
// never joins it). Threads: kThreads + 32; shared: as `pipeline`.
// ---------------------------------------------------------------------------------------------
template <int L, int C, int S>
struct PartitionedStaging {
  using K = TileConfig<L, C>;
  using State = cuda::pipeline_shared_state<cuda::thread_scope_block, S>;
  static constexpr int kStages = S;
  static constexpr bool kStaged = true;
  static constexpr bool kPartial = true;
  static constexpr int kBlockThreads = K::kThreads + K::kProducerThreads;

  BlockPipeline pipe;
  const KernelParams& p;
  const SmemPtrs& s;
  const int tid;

  // Tables first (every thread of the block helps), then the pipeline with this thread's role.
  __device__ __forceinline__ static BlockPipeline make(const KernelParams& p, const SmemPtrs& s,
                                                       int tid, State& state) {
    load_tables(p.tables, s.tab, tid, kBlockThreads);
    __syncthreads();
    const auto role =
        tid >= K::kThreads ? cuda::pipeline_role::producer : cuda::pipeline_role::consumer;
    return cuda::make_pipeline(cg::this_thread_block(), &state, role);
  }
  __device__ __forceinline__ PartitionedStaging(const KernelParams& p_, const SmemPtrs& s_,
                                                int tid_, State& state)
      : pipe(make(p_, s_, tid_, state)), p(p_), s(s_), tid(tid_) {}

  __device__ __forceinline__ bool produce() {
    const bool producer = tid >= K::kThreads;
    if (producer) {
      const int pi = tid - K::kThreads;
      PipelineCopy copy{pipe};
      int st = 0;
      for (int t = blockIdx.x; t < p.num_tiles; t += gridDim.x) {
        pipe.producer_acquire();
        stage_tile<L, C>(p, make_tile<L, C>(p, t), s.stages + st * K::kStageBytes, pi,
                         K::kProducerThreads, copy);
        pipe.producer_commit();
        st = st + 1 == S ? 0 : st + 1;
      }
    }
    return producer;
  }
  __device__ __forceinline__ const std::uint8_t* wait(int st) {
    pipe.consumer_wait();
    return s.stages + st * K::kStageBytes;
  }
  __device__ __forceinline__ void release(int) {
    consumer_sync<true>(K::kThreads);
    pipe.consumer_release();
  }
  __device__ __forceinline__ void drain() {}
};

// ---------------------------------------------------------------------------------------------
// Variant `primitives`: thread-scope pipeline primitives. Every thread issues its 16-byte
// __pipeline_memcpy_async copies for a stage and commits one batch per stage (also when it has
// nothing to copy, so batch counts agree); tail bytes are plain loads/stores. Before pass 1 a
// thread waits with __pipeline_wait_prior(S-1) for its own oldest batch, and __syncthreads makes
// every thread's copies visible to all. Threads: kThreads; shared: as `pipeline`.
// ---------------------------------------------------------------------------------------------
template <int L, int C, int S>
struct PrimitivesStaging {
  using K = TileConfig<L, C>;
  static constexpr int kStages = S;
  static constexpr bool kStaged = true;
  static constexpr bool kPartial = false;
  static constexpr int kBlockThreads = K::kThreads;

  const KernelParams& p;
  const SmemPtrs& s;
  const int tid;
  int fetch;  // next tile to stage

  __device__ __forceinline__ PrimitivesStaging(const KernelParams& p_, const SmemPtrs& s_,
                                               int tid_)
      : p(p_), s(s_), tid(tid_) {
    load_tables(p.tables, s.tab, tid, K::kThreads);
    fetch = blockIdx.x;
#pragma unroll
    for (int st = 0; st < S; ++st) refill(st);
  }
  __device__ __forceinline__ void refill(int st) {
    PrimitivesCopy copy;
    if (fetch < p.num_tiles)
      stage_tile<L, C>(p, make_tile<L, C>(p, fetch), s.stages + st * K::kStageBytes, tid,
                       K::kThreads, copy);
    __pipeline_commit();
    fetch += gridDim.x;
  }
  __device__ __forceinline__ bool produce() { return false; }
  __device__ __forceinline__ const std::uint8_t* wait(int st) {
    __pipeline_wait_prior(S - 1);
    __syncthreads();
    return s.stages + st * K::kStageBytes;
  }
  __device__ __forceinline__ void release(int st) {
    __syncthreads();
    refill(st);
  }
  __device__ __forceinline__ void drain() { __pipeline_wait_prior(0); }
};

// ---------------------------------------------------------------------------------------------
// The kernels: one per variant (their names show in profiles), the same body.
// ---------------------------------------------------------------------------------------------
extern __shared__ __align__(16) std::uint8_t g_smem[];

template <int L, int C>
__global__ void MJPEG_GPU_BOUNDS(DirectStaging<L, C>::kBlockThreads)
    transform_direct(const KernelParams p) {
  const SmemPtrs s = carve_smem<L, C>(g_smem, 0);
  const int tid = threadIdx.x;
  DirectStaging<L, C> staging(p, s, tid);
  transform_block<L, C>(p, s, staging, tid);
}

template <int L, int C, int S>
__global__ void MJPEG_GPU_BOUNDS(UnifiedStaging<L, C, S>::kBlockThreads)
    transform_pipeline(const KernelParams p) {
  __shared__ typename UnifiedStaging<L, C, S>::State state;
  const SmemPtrs s = carve_smem<L, C>(g_smem, S);
  const int tid = threadIdx.x;
  UnifiedStaging<L, C, S> staging(p, s, tid, state);
  transform_block<L, C>(p, s, staging, tid);
}

template <int L, int C, int S>
__global__ void MJPEG_GPU_BOUNDS(PartitionedStaging<L, C, S>::kBlockThreads)
    transform_partitioned(const KernelParams p) {
  __shared__ typename PartitionedStaging<L, C, S>::State state;
  const SmemPtrs s = carve_smem<L, C>(g_smem, S);
  const int tid = threadIdx.x;
  PartitionedStaging<L, C, S> staging(p, s, tid, state);
  transform_block<L, C>(p, s, staging, tid);
}

template <int L, int C, int S>
__global__ void MJPEG_GPU_BOUNDS(PrimitivesStaging<L, C, S>::kBlockThreads)
    transform_primitives(const KernelParams p) {
  const SmemPtrs s = carve_smem<L, C>(g_smem, S);
  const int tid = threadIdx.x;
  PrimitivesStaging<L, C, S> staging(p, s, tid);
  transform_block<L, C>(p, s, staging, tid);
}

// ---------------------------------------------------------------------------------------------
// The kernel table of one configuration: every variant at every stage count 1..kMaxKernelStages
// (direct ignores the stage count: the same kernel in each column).
// ---------------------------------------------------------------------------------------------
template <int L, int C, int... S>
void fill_kernel_table(KernelTable& t, std::integer_sequence<int, S...>) {
  using K = TileConfig<L, C>;
  auto set = [&](VariantId v, int stages, const void* fn, int threads, int smem_stages) {
    t.entry[v][stages - 1] =
        KernelEntry{fn, threads, static_cast<std::size_t>(K::smem_bytes(smem_stages)),
                    K::kTileW, K::kTileH};
  };
  auto fn = [](auto kernel) { return reinterpret_cast<const void*>(kernel); };
  (set(kDirect, S + 1, fn(&transform_direct<L, C>), DirectStaging<L, C>::kBlockThreads, 0), ...);
  (set(kPipeline, S + 1, fn(&transform_pipeline<L, C, S + 1>),
       UnifiedStaging<L, C, S + 1>::kBlockThreads, S + 1),
   ...);
  (set(kPartitioned, S + 1, fn(&transform_partitioned<L, C, S + 1>),
       PartitionedStaging<L, C, S + 1>::kBlockThreads, S + 1),
   ...);
  (set(kPrimitives, S + 1, fn(&transform_primitives<L, C, S + 1>),
       PrimitivesStaging<L, C, S + 1>::kBlockThreads, S + 1),
   ...);
}

template <int L, int C>
void fill_kernel_table(KernelTable& t) {
  fill_kernel_table<L, C>(t, std::make_integer_sequence<int, kMaxKernelStages>{});
}

}  // namespace mjpeg::gpu::detail
