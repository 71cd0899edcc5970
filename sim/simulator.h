#pragma once
// loopwarden-sim's request handling: both provider APIs, fault injection, the journal
// and the /_sim/ control surface, behind one synchronous handler for net::HttpServer.
//
// Routes: Baseten paths (/v1/loops/…, /v1/models/…, /v1/instance_type*, /v1/billing/…,
// /v1/teams, /v1/training/…) and Fireworks paths (/v1/accounts/…, /training/v1/…) do
// not overlap, so one listener serves both; point each provider's base_url at it.
//
// Control surface (tests and demos only; no auth, loopback by default):
//   GET  /_sim/time                    {"now": …}
//   POST /_sim/advance  {"seconds": N} jump the simulated clock forward
//   GET  /_sim/journal?since=N         mutating calls: seq, at, method, path, body, status
//   GET  /_sim/state                   every resource's current state and billing
//   GET  /_sim/faults                  faults injected so far, by kind
//   POST /_sim/faults   {…}            replace the fault configuration (JSON)
//   POST /_sim/reset                   back to the loaded scenario
//   POST /_sim/scenario (YAML body)    load another scenario
//   POST /_sim/activity {…}            add activity, keepalive or traffic to a resource
//   POST /_sim/event    {…}            preempt, drain_trainer, crash_trainer, capacity_full, fail_session
//
// Used from the io_context thread only.

#include <functional>
#include <memory>

#include "core/clock.h"
#include "net/http.h"
#include "sim/api.h"
#include "sim/faults.h"
#include "sim/scenario.h"

namespace loopwarden::sim {

class Simulator {
 public:
  // `jump` moves the clock forward for /_sim/advance (ScaledClock::Jump, or
  // ManualClock::Advance in tests); without one, /_sim/advance answers 501.
  Simulator(Clock& clock, Scenario scenario, std::function<void(Duration)> jump = {});

  net::HttpResponse Handle(const net::HttpRequest& req);

  World& world() { return world_; }
  Faults& faults() { return faults_; }
  Time Now() const { return clock_.Now(); }
  uint64_t requests() const { return requests_; }

 private:
  net::HttpResponse HandleControl(const net::HttpRequest& req);
  net::HttpResponse StateJson();
  int ListingPage(const net::HttpRequest& req, bool fireworks) const;

  Clock& clock_;
  Scenario initial_;
  World world_;
  Faults faults_;
  RateWindows rates_;
  std::function<void(Duration)> jump_;
  std::optional<Time> capacity_full_until_;
  uint64_t requests_ = 0;
};

// True for paths of the Fireworks API (the rest are Baseten's).
bool IsFireworksPath(const std::string& path);

}  // namespace loopwarden::sim
