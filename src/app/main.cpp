// mjpeg command-line tool. Everything lives in cli.cpp and the command modules.
#include "cli.hpp"
#include "app/common/interrupt.hpp"

int main(int argc, char** argv) {
  // First of all: from here on Ctrl-C and SIGTERM are handled as documented (exit 130, one
  // line, nothing left under an output name), however early they arrive.
  mjpeg::app::install_interrupt_handlers();
  return mjpeg::app::run_cli(argc, argv);
}
