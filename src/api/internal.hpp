// What the public API's sources (src/api) share: the pipeline's view of a VideoOptions frame
// format, and the pipeline's own source behind a library-made mjpeg::FrameSource.
#pragma once

#include "mjpeg/video.hpp"
#include "pipeline/frame_source.hpp"

namespace mjpeg::api {

/// The pipeline's view of frames of `o` (bgr24 frames are RGB by the time they are in a slot;
/// planar frames with the Y4M reader's conversion, or VideoOptions::coefficients).
pipeline::SourceFormat source_format(const VideoOptions& o);

/// A library-made source (Y4mSource, MemorySource) that encode_all reads through the pipeline's
/// own source (positional and mapped reads, lent frames); null for any other FrameSource. Throws
/// UsageError when `o` does not describe that source's frames.
pipeline::FrameSource* library_source(FrameSource& source, const VideoOptions& o);

/// The same for a MemorySource: the pipeline's in-memory source that lends its frames (null
/// for any other source, and for bgr24 frames, which are copied).
pipeline::FrameSource* lent_memory_source(FrameSource& source, const VideoOptions& o);

/// The same for an NvdecSource: the pipeline's source of its decoded frames in device memory
/// (null for any other source).
pipeline::FrameSource* nvdec_source(FrameSource& source, const VideoOptions& o);

}  // namespace mjpeg::api
