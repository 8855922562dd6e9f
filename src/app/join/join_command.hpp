// `mjpeg join PART... -o OUTPUT`: the parts of a split encode (`mjpeg encode --part I/K`) into
// one file, byte-identical to a one-pass encode of the whole to that output. The parts' records
// are checked first (one source, one set of settings, ranges that cover the whole once, each
// part complete); the frames are then copied through the encoder's own writers, without
// decoding.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace mjpeg::app {

struct JoinArgs {
  std::vector<std::string> parts;
  std::string output;
  bool overwrite = false;  ///< -y
  bool no_audio = false;   ///< --no-audio: the frames alone
  bool quiet = false;      ///< no summary line
};

/// Adds `mjpeg join` to `app`; the parsed values land in `args`.
CLI::App* add_join_command(CLI::App& app, JoinArgs& args);

/// Checks the parts and writes the output atomically; prints a one-line summary unless quiet.
/// Returns 0. Throws UsageError for invalid requests (exit 2) and Error naming the part and the
/// reason when the parts cannot be joined exactly (exit 1); nothing is written then.
int run_join(const JoinArgs& args);

}  // namespace mjpeg::app
