#pragma once
// The admin HTTP endpoints (127.0.0.1 by default):
//   GET  /metrics       Prometheus text format 0.0.4
//   GET  /healthz       the reconcile loop is alive (also /livez)
//   GET  /readyz        configuration loaded and store open; never depends on providers
//   GET  /v1/resources  what the store knows (?provider= &kind= &lifecycle= &limit=)
//   GET  /v1/plan       the last cycle's decisions
//   POST /v1/snooze     add an exemption (Authorization: Bearer <admin token>)
// Handlers are synchronous and run on the io thread, like everything that touches the
// store.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "core/clock.h"
#include "exporters/metrics.h"
#include "net/http.h"
#include "store/store.h"

namespace loopwarden::daemon {

struct AdminContext {
  exporters::Metrics* metrics = nullptr;
  store::Store* store = nullptr;
  Clock* clock = nullptr;
  // The last cycle's decisions as JSON (plan_output.h's PlanJson); empty before the first.
  std::function<std::string()> plan_json;
  // The bearer token POST /v1/snooze needs; empty: snoozing over HTTP is disabled.
  std::function<std::string()> admin_token;
  // (ok, why) for /healthz and /readyz.
  std::function<std::pair<bool, std::string>()> healthy;
  std::function<std::pair<bool, std::string>()> ready;
  // Called after a snooze is stored (wakes the loop so the next decisions see it).
  std::function<void()> on_snooze;
  // Refused snooze tokens are logged at most once a minute, with how many were not.
  struct RefusalLog {
    std::optional<Time> last;
    uint64_t unlogged = 0;
  };
  std::shared_ptr<RefusalLog> refusals = std::make_shared<RefusalLog>();
};

net::HttpResponse HandleAdmin(const AdminContext& ctx, const net::HttpRequest& req);

// Compares in time independent of where the strings differ.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace loopwarden::daemon
