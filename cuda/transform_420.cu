// Kernel instances for one sampling/input configuration (one file each: parallel compilation).
#include "transform_kernels.cuh"

namespace mjpeg::gpu::detail {
void kernel_table_420(KernelTable& t) { fill_kernel_table<kL420, 3>(t); }
}  // namespace mjpeg::gpu::detail
