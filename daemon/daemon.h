#pragma once
// `loopwarden run` and `loopwarden plan`: the process around the reconcile loop.
//
// run: load the configuration (exit 78 when it is invalid), open the store, start the
// admin server, settle open intents, then cycle: poll and decide every poll_interval,
// and wake in between when a mark's grace ends. SIGHUP reloads (a configuration that
// does not load is logged and the running one kept); SIGTERM and SIGINT stop starting
// provider calls, let the running ones finish for up to drain_timeout, cancel what is
// left, flush notifications within the same bound, and exit 0. sd_notify READY,
// RELOADING, STOPPING and WATCHDOG when $NOTIFY_SOCKET is set.
//
// plan: one poll into a private copy of the store, the decision table, no provider
// call that changes anything, no notification; exit 0 when nothing would change, 2
// when something would.

#include <iosfwd>
#include <optional>
#include <string>

#include "core/clock.h"

namespace loopwarden::daemon {

struct RunOptions {
  std::string config_path;
  bool once = false;  // one cycle (poll, decide, act, notify), then exit
  // Share the simulator's accelerated clock.
  std::optional<ScaledClockOptions> time;
};

int RunDaemon(const RunOptions& options, std::ostream& err);

struct PlanOptions {
  std::string config_path;
  bool json = false;
  std::optional<ScaledClockOptions> time;
};

int RunPlan(const PlanOptions& options, std::ostream& out, std::ostream& err);

}  // namespace loopwarden::daemon
