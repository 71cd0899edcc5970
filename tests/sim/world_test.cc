// The simulator's derivations as pure functions of definition, events and time.
#include <doctest/doctest.h>

#include "sim/world.h"

using namespace loopwarden;
using namespace loopwarden::sim;
using namespace std::chrono_literals;

namespace {
const Time T0 = ParseTime("2026-08-01T00:00:00Z").value();
}

TEST_CASE("a dedicated run ends delay after its last request or keepalive, in a gap if one is long enough") {
  Switches s;
  BtRun r;
  r.created = T0;
  r.dedicated = true;
  r.activity = {{T0, T0 + 40min}, {T0 + 70min, T0 + 80min}};  // a 30-minute gap > 15 minutes
  CHECK(RunEnd(r, s) == T0 + 55min);
  CHECK(RunEndReason(r, s, T0 + 56min) == RunEndCause::kTimeout);
  CHECK(LoopsDeploymentStatus(r, s, T0 + 54min) == "RUNNING");
  CHECK(LoopsDeploymentStatus(r, s, T0 + 56min) == "SCALED_TO_ZERO");
  r.keepalive = {{T0 + 30min, T0 + 75min}};  // bridges the gap
  CHECK(RunEnd(r, s) == T0 + 95min);
  r.deactivated_at = T0 + 60min;
  CHECK(RunEnd(r, s) == T0 + 60min);
  CHECK(LoopsDeploymentStatus(r, s, T0 + 61min) == "STOPPED");
  r.deactivated_at.reset();
  r.keepalive = {{T0, Forever()}};
  CHECK_FALSE(RunEnd(r, s).has_value());
}

TEST_CASE("an inference deployment holds min_replica, or one replica for scale_down_delay after traffic") {
  Switches s;
  BtDeployment d;
  d.created = T0;
  d.settings = {{T0, Autoscaling{0, 1, 60, std::nullopt, 1}}};
  d.traffic = {{T0 + 1h, T0 + 2h}};
  CHECK(DeploymentReplicas(d, s, T0 + 30s) == 1);          // deploying
  CHECK(DeploymentReplicas(d, s, T0 + 30min) == 0);        // idle past 900 s
  CHECK(DeploymentReplicas(d, s, T0 + 90min) == 1);        // traffic
  CHECK(DeploymentReplicas(d, s, T0 + 2h + 14min) == 1);   // within the delay
  CHECK(DeploymentReplicas(d, s, T0 + 2h + 16min) == 0);
  d.settings.push_back({T0 + 3h, Autoscaling{1, 1, 60, std::nullopt, 1}});
  CHECK(DeploymentReplicas(d, s, T0 + 5h) == 1);           // min 1 holds it
  d.activations.push_back({T0 + 6h, false});
  CHECK(DeploymentReplicas(d, s, T0 + 7h) == 0);
  CHECK(DeploymentStatus(d, s, T0 + 7h) == "INACTIVE");
}

TEST_CASE("RLOR accelerator-seconds accrue while live and publish every period") {
  Switches s;
  FwRlorJob j;
  j.created = T0;
  j.placement_delay = 2min;
  j.accelerator_count = 8;
  j.activity = {{T0 + 3min, T0 + 33min}};
  // Live from placement (T0+2m) until the reaper: 60 minutes after the last activity.
  CHECK(JobState(j, s, T0 + 1min) == "JOB_STATE_PENDING");
  CHECK(JobState(j, s, T0 + 10min) == "JOB_STATE_RUNNING");
  CHECK(JobState(j, s, T0 + 40min) == "JOB_STATE_IDLE");
  CHECK(JobState(j, s, T0 + 94min) == "JOB_STATE_CANCELLED");
  CHECK(JobAcceleratorSeconds(j, s, T0 + 12min) == 10 * 60 * 8);
  CHECK(JobAcceleratorSecondsPublished(j, s, T0 + 12min) == 8 * 60 * 8);  // as of T0+10m
  CHECK(JobAcceleratorSeconds(j, s, T0 + 200min) == 91 * 60 * 8);         // T0+2m .. T0+93m
  j.cancels.push_back(T0 + 20min);
  CHECK(JobState(j, s, T0 + 20min + 5s) == "JOB_STATE_CANCELLING");
  CHECK(JobAcceleratorSeconds(j, s, T0 + 200min) == 18 * 60 * 8);
  j.resumed_at.push_back(T0 + 50min);
  CHECK(JobState(j, s, T0 + 55min) == "JOB_STATE_IDLE");
}

TEST_CASE("session tokens integrate per meter over activity") {
  FwSession x;
  x.created = T0;
  x.activity = {{T0, T0 + 10min, 0, 0, {{"train", 1000}, {"sample", 300}}}};
  auto t = SessionTokens(x, T0 + 5min, T0 + 1h);
  CHECK(t.at("train") == 5000);
  CHECK(t.at("sample") == 1500);
}
