// mjpeg command-line tool. Everything lives in cli.cpp and the command modules.
#include <signal.h>

#include "cli.hpp"

int main(int argc, char** argv) {
  // Past a file-size limit (ulimit -f) the kernel sends SIGXFSZ, whose default action kills
  // the process without a word. Ignored, the write fails with EFBIG instead, which surfaces
  // as a one-line error and leaves no partial output (see io::AtomicFile).
  ::signal(SIGXFSZ, SIG_IGN);
  return mjpeg::app::run_cli(argc, argv);
}
