// What the files of the public API (src/api) share: the frames' checks and copies, the options'
// translation, what a run reports, the pipeline's view of a VideoOptions frame format, and
// the pipeline's own source behind a library-made mjpeg::FrameSource.
#pragma once

#include "mjpeg/video.hpp"
#include "core/planar_format.hpp"
#include "io/y4m.hpp"
#include "pipeline/frame_source.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/trace.hpp"

namespace mjpeg::api {

// --- frames.cpp ---------------------------------------------------------------------------
/// UsageError "VideoOptions: NAME V is outside LO..HI" unless lo <= v <= hi.
void check_range(int v, int lo, int hi, const char* name);
/// The planar layout's chroma of a planar format (none for packed ones).
PlanarChroma planar_chroma(FrameFormat f);
/// Bytes per pixel of a packed format.
std::size_t pixel_bytes(FrameFormat f);
/// Swaps the first and third byte of each pixel of a packed row (BGR <-> RGB).
void swap_red_blue(std::uint8_t* row, int width);
/// Throws UsageError when `f` does not fit `o` (see VideoEncoder::encode).
void check_frame(const FrameView& f, const VideoOptions& o);
/// Throws UsageError unless `f` is a device frame an encoder of `o` takes.
void check_device_frame(const DeviceFrame& f, const VideoOptions& o);
/// Copies frame `f` of `o` into `dst` in the contiguous layout (bgr24 reordered to RGB).
void copy_frame(const FrameView& f, const VideoOptions& o, std::uint8_t* dst);

// --- video_options.cpp ----------------------------------------------------------------------
/// The pipeline's options for `o` (push: VideoEncoder; else encode_all), validated.
pipeline::PipelineOptions pipeline_options(const VideoOptions& o, bool push,
                                           std::int64_t frames = -1, bool in_memory = false);
/// A GPU mode needs its devices: throws Error naming what is missing.
void check_device(const VideoOptions& o);

// --- profile.cpp ----------------------------------------------------------------------------
/// VideoOptions::profile from a run's statistics and trace.
void fill_profile(Profile& out, const pipeline::Stats& s, const pipeline::PipelineOptions& p,
                  const EncodeOptions& jpeg, const pipeline::Trace& trace);
/// The public Stats of a run.
Stats public_stats(const pipeline::Stats& s, const pipeline::PipelineOptions& p, Offload mode);

// --- the sources -----------------------------------------------------------------------------
/// The Y4M stream description of planar frames of `o` (size, chroma, matrix, range): the Y4M
/// reader's conversion is the one of planar frames given to the API.
io::Y4mInfo y4m_info(const VideoOptions& o);
/// The pipeline's view of frames of `o` (bgr24 frames are RGB by the time they are in a slot;
/// planar frames with the Y4M reader's conversion, or VideoOptions::coefficients).
pipeline::SourceFormat source_format(const VideoOptions& o);

}  // namespace mjpeg::api

namespace mjpeg {
/// The reader encode_all runs for a library-made source (FrameSource::library_reader, private
/// there; y4m_source.cpp): null for any other FrameSource. Throws UsageError when `o` does not
/// describe that source's frames.
pipeline::FrameSource* library_reader(FrameSource& source, const VideoOptions& o);
}  // namespace mjpeg
