// loopwarden: cost governance for ML training resources. Everything but argument
// dispatch lives in lw_daemon so tests link the same code.
#include <iostream>

#include "core/log.h"
#include "daemon/cli.h"

int main(int argc, char** argv) {
  // Logs on stderr, so `plan --json | jq` and `report --json` pipe cleanly.
  loopwarden::Logger::Default().set_output(&std::cerr);
  return loopwarden::cli::Main(argc, argv, std::cout, std::cerr);
}
