// loopwarden: cost governance for ML training resources. Everything but argument
// dispatch lives in lw_daemon so tests link the same code.
#include <iostream>

#include "daemon/cli.h"

int main(int argc, char** argv) { return loopwarden::cli::Main(argc, argv, std::cout, std::cerr); }
