// Video files decoded by the GPU's NVDEC engines (builds with FFmpeg's libraries): libavformat
// demuxes on the host (the MP4/MKV packets of H.264 and HEVC to Annex B by FFmpeg's bitstream
// filters), the library's NvdecSource decodes on several decoders at once into device memory
// (include/mjpeg/nvdec.hpp). The frames are those of open_libav (libav_source.hpp) exactly: the
// same planes (10- and 12-bit ones reduced to 8 bits alike) and the same conversion to RGB.
#pragma once

#include <optional>
#include <string>

#include "video_input.hpp"

namespace mjpeg::app {

/// `path` opened for NVDEC decoding when options.decoder and the stream allow it (auto: the
/// encode runs on a GPU, and NVDEC decodes the stream's codec, profile, bit depth and size
/// into frames open_libav would give as planes). Otherwise empty, and `cpu_notice` says why
/// the CPU decodes when a GPU encode (auto) should hear it. Throws Error with --decoder gpu
/// when the GPU cannot decode the stream, and for a file libavformat cannot read.
std::optional<VideoInput> open_nvdec(const std::string& path, const InputOptions& options,
                                     std::string& cpu_notice);

/// Begins libavformat's opening of the video file `path` for NVDEC (the container's header and
/// FFmpeg's probe of the streams, which decodes a few frames on one core: 0.1 s for 1080p H.264,
/// 0.3 s for 4K) on a thread of its own, so that it runs while the CUDA devices are asked for
/// (0.2-0.3 s). open_nvdec takes it (options.nvdec_opening) when it opens that file, with the
/// error the opening met if any; one not taken is waited for and dropped with the last owner.
/// Null where no thread can be started (open_nvdec then opens the file itself).
std::shared_ptr<NvdecOpening> begin_nvdec_opening(const std::string& path);

}  // namespace mjpeg::app
