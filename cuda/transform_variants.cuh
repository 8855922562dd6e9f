// Transform kernels, part 6 of 6: the tile loop, written once, and the four variants as its
// staging policy (how pixel tiles reach shared memory; all variants give identical output).
//
//   run_tiles<L, C>(p, s, staging, tid):   for every tile of this block (t = blockIdx.x,
//                                          blockIdx.x + gridDim.x, ...):
//       stage = staging.wait(st)           the tile's bytes are in stage st (direct: nullptr)
//       pass 1                             samples -> row FDCT -> work (transform_fdct.cuh)
//       staging.release(st)                barrier; stage st is free (and refilled with the
//                                          tile S iterations ahead while the tile finishes)
//
// The stage count S is a run-time value (KernelParams::stages, 1..kMaxKernelStages): one kernel
// per (configuration, variant) serves every S, with S stages of shared memory per launch.
//       pass 2, dummies, store             (transform_quantize.cuh)
//
// A staging policy is a class with
//   stages() (ring of stages; 1 for direct, whose ring index is unused), kStaged (pass 1 reads a
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
    st = st + 1 == staging.stages() ? 0 : st + 1;
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
template <int S>
using BlockPipelineState = cuda::pipeline_shared_state<cuda::thread_scope_block, S>;

/// Bytes of the pipeline state of `stages` stages (the end of the launch's shared memory).
constexpr int pipeline_state_bytes(int stages) {
  constexpr int kBytes[kMaxKernelStages] = {
      int(sizeof(BlockPipelineState<1>)), int(sizeof(BlockPipelineState<2>)),
      int(sizeof(BlockPipelineState<3>)), int(sizeof(BlockPipelineState<4>))};
  return kBytes[stages - 1];
}
static_assert(kMaxKernelStages == 4, "pipeline_state_bytes and make_block_pipeline list 1..4");
// The launcher sizes shared memory with the host compiler's sizeof, the kernels use the device
// compiler's: both passes check the same layout (one 16-byte stage each, then the count).
static_assert(sizeof(BlockPipelineState<1>) == 24 && sizeof(BlockPipelineState<2>) == 40 &&
                  sizeof(BlockPipelineState<3>) == 56 && sizeof(BlockPipelineState<4>) == 72 &&
                  alignof(BlockPipelineState<4>) <= 16,
              "cuda::pipeline_shared_state layout");

/// cuda::make_pipeline over the state at `state` (shared memory of pipeline_state_bytes(stages)
/// bytes) with `stages` stages, a run-time value; `role...`: none (every thread produces and
/// consumes) or this thread's pipeline_role.
template <class... Role>
__device__ __forceinline__ BlockPipeline make_block_pipeline(void* state, int stages,
                                                             Role... role) {
  const auto block = cg::this_thread_block();
  switch (stages) {
    case 1:
      return cuda::make_pipeline(block, static_cast<BlockPipelineState<1>*>(state), role...);
    case 2:
      return cuda::make_pipeline(block, static_cast<BlockPipelineState<2>*>(state), role...);
    case 3:
      return cuda::make_pipeline(block, static_cast<BlockPipelineState<3>*>(state), role...);
    default:
      return cuda::make_pipeline(block, static_cast<BlockPipelineState<4>*>(state), role...);
  }
}

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
  static constexpr bool kStaged = false;
  static constexpr bool kPartial = false;
  static constexpr int kBlockThreads = K::kThreads;

  __device__ __forceinline__ DirectStaging(const KernelParams& p, const SmemPtrs& s, int tid) {
    load_tables(p.tables, s.tab, tid, K::kThreads);
    __syncthreads();
  }
  __device__ __forceinline__ static constexpr int stages() { return 1; }
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
template <int L, int C>
struct UnifiedStaging {
  using K = TileConfig<L, C>;
  static constexpr bool kStaged = true;
  static constexpr bool kPartial = false;
  static constexpr int kBlockThreads = K::kThreads;

  BlockPipeline pipe;
  const KernelParams& p;
  const SmemPtrs& s;
  const int tid;
  const int S;    // stages
  int fetch;      // next tile to stage
  int committed;  // stages committed and not yet consumed

  __device__ __forceinline__ UnifiedStaging(const KernelParams& p_, const SmemPtrs& s_, int tid_)
      : pipe(make_block_pipeline(s_.pipe_state, p_.stages)),
        p(p_),
        s(s_),
        tid(tid_),
        S(p_.stages) {
    load_tables(p.tables, s.tab, tid, K::kThreads);
    fetch = blockIdx.x;
    committed = 0;
#pragma unroll 1
    for (int st = 0; st < S; ++st) refill(st);
    __syncthreads();  // tables visible
  }
  __device__ __forceinline__ int stages() const { return S; }
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
template <int L, int C>
struct PartitionedStaging {
  using K = TileConfig<L, C>;
  static constexpr bool kStaged = true;
  static constexpr bool kPartial = true;
  static constexpr int kBlockThreads = K::kThreads + K::kProducerThreads;

  BlockPipeline pipe;
  const KernelParams& p;
  const SmemPtrs& s;
  const int tid;
  const int S;  // stages

  // Tables first (every thread of the block helps), then the pipeline with this thread's role.
  __device__ __forceinline__ static BlockPipeline make(const KernelParams& p, const SmemPtrs& s,
                                                       int tid) {
    load_tables(p.tables, s.tab, tid, kBlockThreads);
    __syncthreads();
    const auto role =
        tid >= K::kThreads ? cuda::pipeline_role::producer : cuda::pipeline_role::consumer;
    return make_block_pipeline(s.pipe_state, p.stages, role);
  }
  __device__ __forceinline__ PartitionedStaging(const KernelParams& p_, const SmemPtrs& s_,
                                                int tid_)
      : pipe(make(p_, s_, tid_)), p(p_), s(s_), tid(tid_), S(p_.stages) {}
  __device__ __forceinline__ int stages() const { return S; }

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
template <int L, int C>
struct PrimitivesStaging {
  using K = TileConfig<L, C>;
  static constexpr bool kStaged = true;
  static constexpr bool kPartial = false;
  static constexpr int kBlockThreads = K::kThreads;

  const KernelParams& p;
  const SmemPtrs& s;
  const int tid;
  const int S;  // stages
  int fetch;    // next tile to stage

  __device__ __forceinline__ PrimitivesStaging(const KernelParams& p_, const SmemPtrs& s_,
                                               int tid_)
      : p(p_), s(s_), tid(tid_), S(p_.stages) {
    load_tables(p.tables, s.tab, tid, K::kThreads);
    fetch = blockIdx.x;
#pragma unroll 1
    for (int st = 0; st < S; ++st) refill(st);
  }
  __device__ __forceinline__ int stages() const { return S; }
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
    __pipeline_wait_prior(S - 1);  // run-time S: a switch over wait_group immediates
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
// The kernels: one per variant (their names show in profiles), the same body. The staged ones
// take their stage count from KernelParams::stages.
// ---------------------------------------------------------------------------------------------
extern __shared__ __align__(16) std::uint8_t g_smem[];

template <int L, int C, template <int, int> class Staging>
__device__ __forceinline__ void transform_kernel_body(const KernelParams& p) {
  const SmemPtrs s = carve_smem<L, C>(g_smem, Staging<L, C>::kStaged ? p.stages : 0);
  const int tid = threadIdx.x;
  Staging<L, C> staging(p, s, tid);
  transform_block<L, C>(p, s, staging, tid);
}

template <int L, int C>
__global__ void MJPEG_GPU_BOUNDS(DirectStaging<L, C>::kBlockThreads)
    transform_direct(const KernelParams p) {
  transform_kernel_body<L, C, DirectStaging>(p);
}

template <int L, int C>
__global__ void MJPEG_GPU_BOUNDS(UnifiedStaging<L, C>::kBlockThreads)
    transform_pipeline(const KernelParams p) {
  transform_kernel_body<L, C, UnifiedStaging>(p);
}

template <int L, int C>
__global__ void MJPEG_GPU_BOUNDS(PartitionedStaging<L, C>::kBlockThreads)
    transform_partitioned(const KernelParams p) {
  transform_kernel_body<L, C, PartitionedStaging>(p);
}

template <int L, int C>
__global__ void MJPEG_GPU_BOUNDS(PrimitivesStaging<L, C>::kBlockThreads)
    transform_primitives(const KernelParams p) {
  transform_kernel_body<L, C, PrimitivesStaging>(p);
}

// ---------------------------------------------------------------------------------------------
// The kernel table of one configuration: each variant's kernel at every stage count
// 1..kMaxKernelStages, with that stage count's shared memory (direct has no stages: the same
// entry in each column).
// ---------------------------------------------------------------------------------------------
template <int L, int C>
void fill_kernel_table(KernelTable& t) {
  using K = TileConfig<L, C>;
  auto fn = [](auto kernel) { return reinterpret_cast<const void*>(kernel); };
  for (int stages = 1; stages <= kMaxKernelStages; ++stages) {
    auto set = [&](VariantId v, const void* f, int threads, int smem) {
      t.entry[v][stages - 1] =
          KernelEntry{f, threads, static_cast<std::size_t>(smem), K::kTileW, K::kTileH};
    };
    const int state = pipeline_state_bytes(stages);
    set(kDirect, fn(&transform_direct<L, C>), DirectStaging<L, C>::kBlockThreads,
        K::smem_bytes(0));
    set(kPipeline, fn(&transform_pipeline<L, C>), UnifiedStaging<L, C>::kBlockThreads,
        K::smem_bytes(stages, state));
    set(kPartitioned, fn(&transform_partitioned<L, C>), PartitionedStaging<L, C>::kBlockThreads,
        K::smem_bytes(stages, state));
    set(kPrimitives, fn(&transform_primitives<L, C>), PrimitivesStaging<L, C>::kBlockThreads,
        K::smem_bytes(stages));
  }
}

}  // namespace mjpeg::gpu::detail
