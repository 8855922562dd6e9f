// The CUDA stream type for the GPU layer's plain C++ headers: cudaStream_t is a pointer to the
// runtime's CUstream_st, declared here without the CUDA headers. Null: the legacy default stream.
#pragma once

struct CUstream_st;

namespace mjpeg::gpu {

using StreamHandle = CUstream_st*;

}  // namespace mjpeg::gpu
