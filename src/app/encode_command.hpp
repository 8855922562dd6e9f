// `mjpeg encode INPUT -o OUTPUT`: one image to one JPEG file.
#pragma once

#include <string>

#include "mjpeg/options.hpp"

namespace mjpeg::app {

struct EncodeArgs {
  std::string input;
  std::string output;
  EncodeOptions options;
  bool overwrite = false;  ///< -y: replace an existing output
  bool quiet = false;      ///< no notices, no summary
};

/// Checks the request (output extension, output == input, existing output), reads the input,
/// encodes it and writes the output atomically, then prints a one-line summary on stderr
/// unless quiet. Throws UsageError for invalid requests and Error for runtime failures; on
/// any failure nothing exists under the output name that was not there before.
void run_encode(const EncodeArgs& args);

}  // namespace mjpeg::app
