#pragma once

#include "jpeg_geometry.hpp"
#include "mjpeg/options.hpp"

namespace mjpeg {

/// Geometry of a width x height frame at the given sampling (gray: one component).
/// Throws UsageError for sizes outside 1..kMaxDimension.
FrameGeometry make_geometry(int width, int height, Subsampling sampling);

}  // namespace mjpeg
