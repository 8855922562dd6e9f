// libFuzzer target: the command-line parser (CLI11 definitions, our validators, the error
// mapping). The input is split at NUL bytes into arguments after "mjpeg". parse_cli() runs no
// command, so nothing is read or written whatever the arguments say. Its exit code must be
// 0 (a valid command line, --help, --version) or 2 (a usage error); parse failures must not
// crash or throw. Run with -close_fd_mask=3: help texts and error lines are not interesting.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "app/cli.hpp"

namespace {
constexpr std::size_t kMaxArgs = 24;
constexpr std::size_t kMaxArgLength = 200;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args{"mjpeg"};
  std::string current;
  for (std::size_t i = 0; i < size && args.size() < kMaxArgs; ++i) {
    if (data[i] == 0) {
      args.push_back(current);
      current.clear();
    } else if (current.size() < kMaxArgLength) {
      current.push_back(static_cast<char>(data[i]));
    }
  }
  if (!current.empty() && args.size() < kMaxArgs) args.push_back(current);

  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int rc = mjpeg::app::parse_cli(static_cast<int>(args.size()), argv.data());
  if (rc != 0 && rc != 2) {
    std::fprintf(stderr, "parse_cli returned %d (expected 0 or 2)\n", rc);
    std::abort();
  }
  return 0;
}
