// Kernel instances for one sampling/input configuration (one file each: parallel compilation).
#include "transform_kernels.cuh"

namespace mjpeg::gpu::detail {
void kernel_table_gray_planar(KernelTable& t) { fill_kernel_table<kLGray, kPlanarInput>(t); }
}  // namespace mjpeg::gpu::detail
