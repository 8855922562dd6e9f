// libjpeg-turbo as a peer of `mjpeg compare` / `mjpeg bench`: the same frames compressed by
// TurboJPEG (tjCompress2, islow DCT as ours), frame-parallel over T threads, each thread with
// its own handle and output buffer. Builds without turbojpeg.h report it as unavailable.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mjpeg/options.hpp"

namespace mjpeg::app {

struct PeerResult {
  bool available = false;
  std::string why_not;       ///< when not available
  double wall_s = 0;
  std::int64_t frames = 0;
  std::uint64_t jpeg_bytes = 0;
  /// Every frame byte-identical to `reference` (when one was given and it could be checked).
  bool identical = false;
  std::string identity_note;  ///< why identity was not checked, or where it first differs
};

/// Compresses every frame once, with `threads` threads (frame i on thread i % threads).
/// `reference` (may be empty): our JPEG of each frame, to compare with.
PeerResult run_turbojpeg(const std::vector<ImageView>& frames, const EncodeOptions& options,
                         int threads, const std::vector<std::vector<std::uint8_t>>& reference);

/// `repeat` runs of run_turbojpeg, the median by wall time (with an even count, the faster of
/// the middle two, as run_mode picks its median); stops at the first when TurboJPEG is absent.
PeerResult run_turbojpeg_median(const std::vector<ImageView>& frames, const EncodeOptions& options,
                                int threads, const std::vector<std::vector<std::uint8_t>>& reference,
                                int repeat);

}  // namespace mjpeg::app
