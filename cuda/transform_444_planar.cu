// Kernel instances for one sampling/input configuration (one file each: parallel compilation).
#include "transform_kernels.cuh"

namespace mjpeg::gpu::detail {
void kernel_table_444_planar(KernelTable& t) { fill_kernel_table<kL444, kPlanarInput>(t); }
}  // namespace mjpeg::gpu::detail
