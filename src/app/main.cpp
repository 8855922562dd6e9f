// mjpeg command-line tool. Everything lives in cli.cpp and the command modules.
#include "cli.hpp"

int main(int argc, char** argv) { return mjpeg::app::run_cli(argc, argv); }
