// loopwarden: cost governance for ML training resources. Everything but argument
// dispatch lives in lw_daemon so tests link the same code.
#include <csignal>
#include <iostream>

#include "core/log.h"
#include "daemon/cli.h"

int main(int argc, char** argv) {
  // A file-size limit (or a full quota) must turn into a write error SQLite reports, not
  // a signal that kills the process mid-transaction.
  std::signal(SIGXFSZ, SIG_IGN);
  // Logs on stderr, so `plan --json | jq` and `report --json` pipe cleanly.
  loopwarden::Logger::Default().set_output(&std::cerr);
  return loopwarden::cli::Main(argc, argv, std::cout, std::cerr);
}
