// Command-line definitions (CLI11) and the mapping of failures to exit codes.
#pragma once

namespace mjpeg::app {

/// Exit codes of the mjpeg tool.
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,  ///< runtime failure: unreadable input, write failure, existing output
  kExitUsage = 2,    ///< bad arguments: unknown option, out-of-range value, unknown extension
};

/// Parses argv, runs the chosen subcommand and returns the process exit code. Errors are
/// reported as exactly one line "mjpeg: error: ..." on stderr.
int run_cli(int argc, char** argv);

/// Parses argv like run_cli (same errors, same exit codes, --help/--version printed) but runs
/// no command: nothing is read or written. For the command-line fuzzer (tests/fuzz).
int parse_cli(int argc, char** argv);

}  // namespace mjpeg::app
