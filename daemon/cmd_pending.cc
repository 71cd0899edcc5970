// Subcommands whose machinery is not built yet: each says what is missing.
#include <ostream>

#include "daemon/commands.h"

namespace loopwarden::cli {
namespace {
int Missing(std::ostream& err, const char* what) {
  err << "loopwarden: " << what << "\n";
  return kExitUsage;
}
}  // namespace

int CmdRun(const Args&, std::ostream&, std::ostream& err) {
  return Missing(err, "run: not built yet (needs the reconcile loop, providers and store)");
}
int CmdPlan(const Args&, std::ostream&, std::ostream& err) {
  return Missing(err, "plan: not built yet (needs the providers and the policy engine)");
}
int CmdStatus(const Args&, std::ostream&, std::ostream& err) { return Missing(err, "status: not built yet (needs the store)"); }
int CmdReport(const Args&, std::ostream&, std::ostream& err) { return Missing(err, "report: not built yet (needs the store)"); }
int CmdSnooze(const Args&, std::ostream&, std::ostream& err) {
  return Missing(err, "snooze: not built yet (needs the admin HTTP server)");
}

}  // namespace loopwarden::cli
