// The transform kernels of translation unit 1 (the configurations MJPEG_TRANSFORM_CONFIGS in
// transform_params.hpp assigns to it).
#include "transform_kernels.cuh"

template bool mjpeg::gpu::detail::kernel_table_in_unit<1>(int, int, KernelTable&);
