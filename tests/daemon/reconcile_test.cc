// The reconcile cycle and the executor against the simulator, on a ManualClock: the
// safety rules that need a provider to hold.
#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>

#include "tests/daemon/daemon_fixture.h"
#include "tests/testing/metrics_text.h"
#include "tests/testing/sqlite_exec.h"

namespace loopwarden::testing {
namespace {

using namespace std::chrono_literals;

const std::string kTrainers =
    "  - {name: idle-trainers, resource: baseten.run, where: {mode: dedicated, lifecycle: running,"
    " idle_for: \">= 20m\"}, action: deactivate, grace: 10m}\n";
const std::string kForgot = "bt/baseten.run/rforgot";

TEST_CASE("marks at first sight, acts when the grace ends on a deadline cycle, and never twice") {
  DaemonFixture f(kTrainers);
  auto rep = f.Cycle();
  CHECK(rep.ok);
  CHECK(f.Marked("idle-trainers", kForgot));
  CHECK(!f.Marked("idle-trainers", "bt/baseten.run/rbusy01"));
  REQUIRE(f.reconciler().NextDeadline(f.clock().Now()) == kDaemonEpoch + 10min);

  f.Advance(9min);
  f.Cycle(false);
  CHECK(f.Calls("rforgot/deactivate") == 0);

  f.Advance(1min);
  rep = f.Cycle(false);
  CHECK(rep.acted == 1);
  CHECK(f.Calls("rforgot/deactivate") == 1);
  CHECK(!f.Marked("idle-trainers", kForgot));
  CHECK(f.Calls("rbusy01") == 0);

  f.Advance(1min);
  f.Cycle();
  f.Advance(20min);
  f.Cycle();
  CHECK(f.Calls("rforgot/deactivate") == 1);
}

TEST_CASE("confirm before act: a run that resumed training during its grace is neither deactivated nor kept marked") {
  DaemonFixture f(kTrainers);
  f.Cycle();
  REQUIRE(f.Marked("idle-trainers", kForgot));
  // Work resumes; the store has not polled since, so only the fresh read can know.
  REQUIRE(f.Sim("POST", "/_sim/activity", R"({"id":"rforgot","from_seconds":0,"to_seconds":"forever","gpu_util":0.9})").status == 200);
  f.Advance(10min);
  auto rep = f.Cycle(false);
  CHECK(rep.acts == 1);
  CHECK(rep.acted == 0);
  CHECK(f.Calls("rforgot") == 0);
  CHECK(!f.Marked("idle-trainers", kForgot));
}

TEST_CASE("unknown is not idle: with the activity metrics failing nothing is marked") {
  DaemonFixture f(kTrainers);
  REQUIRE(f.Sim("POST", "/_sim/faults", R"({"rules":[{"match":"/v1/loops/deployments/*/metrics","error_rate":1.0}]})").status == 200);
  auto rep = f.Cycle(true, true);
  CHECK(!f.Marked("idle-trainers", kForgot));
  CHECK(f.store().marks().empty());
  const store::ResourceState* st = f.store().Find(kForgot);
  REQUIRE(st != nullptr);
  CHECK(!st->IdleSince().has_value());
  f.Advance(1h);
  f.Cycle(true, true);
  CHECK(f.Calls("deactivate") == 0);
}

TEST_CASE("inert by default: without dry_run: false the grace ends and nothing is called") {
  DaemonFixture f(kTrainers, "");
  f.Cycle();
  REQUIRE(f.Marked("idle-trainers", kForgot));
  f.Advance(11min);
  auto rep = f.Cycle();
  CHECK(rep.would_act == 1);
  CHECK(rep.acted == 0);
  CHECK(f.Calls("/") == 0);
  auto intents = f.store().IntentsSince(Time{});
  REQUIRE(intents.ok());
  REQUIRE(intents->size() == 1);
  CHECK((*intents)[0].dry_run);
  CHECK((*intents)[0].state == store::IntentState::kSkipped);
  // Reported once, not every cycle.
  f.Advance(1min);
  rep = f.Cycle();
  CHECK(rep.would_act == 1);
  CHECK(f.store().IntentsSince(Time{})->size() == 1);
}

TEST_CASE("slot headroom frees only the slots it needs: aggregates move as sessions are deleted") {
  DaemonFixture f(
      "  - {name: headroom, resource: fireworks.training_session, where: {lifecycle: running, idle_for: \">= 45m\"},"
      " when: {account_active_sessions: \">= 6\"}, action: delete, allow_irreversible: true, checkpoints: ignore,"
      " grace: 5m}\n");
  f.Cycle();
  // 7 sessions live, 6 of them idle: only the two a delete is needed for are marked
  // (and announced), the longest idle.
  CHECK(f.store().marks().size() == 2);
  CHECK(f.Marked("headroom", "fw/fireworks.training_session/ts-22222222222222222222222222222222"));
  f.Advance(5min);
  f.Cycle(false);
  // 7 -> 5 slots held: two deletes, the longest idle first; nothing else is touched.
  CHECK(f.Calls("trainingSessions/") == 2);
  CHECK(f.Calls("ts-22222222222222222222222222222222") == 1);
  CHECK(f.Calls("ts-11111111111111111111111111111111") == 1);
  CHECK(f.Calls("ts-5bb4c28c5434412f8ce3f4317d23b0e8") == 0);
}

TEST_CASE("one decider: a dry run would act on exactly what a live run acts on, in the same order") {
  const std::string policy =
      "  - {name: headroom, resource: fireworks.training_session, where: {lifecycle: running, idle_for: \">= 45m\"},"
      " when: {account_active_sessions: \">= 6\"}, action: delete, allow_irreversible: true, checkpoints: ignore,"
      " grace: 5m}\n";
  auto acted_on = [](const reconcile::CycleReport& rep) {
    std::vector<std::string> out;
    for (const policies::Decision& d : rep.decisions) {
      if (d.type == policies::DecisionType::kAct) out.push_back(d.resource);
    }
    return out;
  };
  DaemonFixture dry(policy, "dry_run: true\n");
  dry.Cycle();
  dry.Advance(5min);
  const reconcile::CycleReport would = dry.Cycle(false);
  DaemonFixture live(policy);
  live.Cycle();
  live.Advance(5min);
  const reconcile::CycleReport did = live.Cycle(false);
  CHECK(would.would_act == 2);
  CHECK(dry.Calls("trainingSessions/") == 0);
  CHECK(did.acted == 2);
  CHECK(live.Calls("trainingSessions/") == 2);
  CHECK(acted_on(would) == acted_on(did));
}

TEST_CASE("reversible first: a delete policy without allow_irreversible does not load") {
  config::LoadOptions lo;
  lo.resolve_secrets = false;
  auto cfg = config::LoadConfigText(
      "providers: []\npolicies:\n  - {name: p, resource: fireworks.training_session, action: delete}\n", "t.yaml", lo);
  REQUIRE(!cfg.ok());
  CHECK(cfg.status().message().find("allow_irreversible") != std::string::npos);
}

TEST_CASE("a provider refusal is recorded once and not retried every cycle") {
  // A sampler paired to a run answers 409 to a direct deactivate.
  DaemonFixture f(
      "  - {name: samplers, resource: baseten.sampler, where: {lifecycle: running}, action: deactivate, grace: 0s}\n");
  f.Cycle(true, true);
  const size_t first = f.Calls("/samplers/");
  CHECK(first >= 1);
  f.Advance(1min);
  f.Cycle(true, true);
  f.Advance(1min);
  f.Cycle(true, true);
  // The standalone sampler was deactivated; the paired one was refused once, not again.
  CHECK(f.Calls("/samplers/") == first);
}


TEST_CASE("after acting, a policy leaves the resource alone while the provider converges") {
  DaemonFixture f(
      "  - {name: rollouts, resource: fireworks.deployment, where: {lifecycle: running, flags: [rollout]},"
      " action: scale_to_zero, grace: 0s}\n");
  auto rep = f.Cycle();
  CHECK(rep.acted == 1);
  CHECK(f.Calls("deployments/qwen3-8b-rollout") == 1);
  bool cooling = false;
  for (int i = 0; i < 3; ++i) {
    f.Advance(10min);
    rep = f.Cycle();
    for (const auto& d : rep.decisions) {
      cooling = cooling || d.reason.find("waiting for the provider to show the effect") != std::string::npos;
    }
  }
  CHECK(f.Calls("deployments/qwen3-8b-rollout") == 1);
  const store::ResourceState* st = f.store().Find("fw/fireworks.deployment/qwen3-8b-rollout");
  REQUIRE(st != nullptr);
  // Either the provider already shows it scaled down, or loopwarden is waiting for it to.
  CHECK((cooling || st->resource.lifecycle != Lifecycle::kRunning));
}


TEST_CASE("hardening: a garbage meta value neither throws out of the loop nor stays garbage") {
  DaemonFixture f(kTrainers);
  REQUIRE(f.store().PutMeta("last_retention_us", "not-a-number-\xff").ok());
  auto rep = f.Cycle();
  CHECK(rep.ok);
  CHECK(f.Marked("idle-trainers", kForgot));
  auto v = f.store().GetMeta("last_retention_us");
  REQUIRE(v.ok());
  REQUIRE(v->has_value());
  CHECK(**v == std::to_string(ToUnixMicros(f.clock().Now())));
  // Overflowing digits too.
  REQUIRE(f.store().PutMeta("last_retention_us", "99999999999999999999999").ok());
  f.Advance(std::chrono::minutes(1));
  CHECK(f.Cycle().ok);
}


TEST_CASE("exactly once: an outcome the store cannot record holds the resource until recovery settles it") {
  DaemonFixture f(kTrainers);
  f.Cycle();
  REQUIRE(f.Marked("idle-trainers", kForgot));
  // The intent is written, the call made, and writing its outcome fails.
  SqliteExec(f.store().path(),
      "CREATE TRIGGER lose_outcome BEFORE UPDATE OF state ON intents WHEN NEW.state = 'done' "
      "BEGIN SELECT RAISE(ABORT, 'injected: disk I/O error'); END");
  f.Advance(10min);
  f.Cycle(false);
  CHECK(f.Calls("rforgot/deactivate") == 1);
  CHECK(f.reconciler().executor().unresolved() == 1);
  auto open = f.store().OpenIntents();
  REQUIRE(open.ok());
  REQUIRE(open->size() == 1);
  CHECK(open->front().resource == kForgot);
  f.Advance(1min);
  f.Cycle();
  CHECK(f.Calls("rforgot/deactivate") == 1);

  // Once the store takes writes again, recovery settles it on the provider's word.
  SqliteExec(f.store().path(), "DROP TRIGGER lose_outcome");
  REQUIRE(f.Recover().ok());
  CHECK(f.reconciler().executor().unresolved() == 0);
  open = f.store().OpenIntents();
  REQUIRE(open.ok());
  CHECK(open->empty());
  CHECK(f.Calls("rforgot/deactivate") == 1);
}

TEST_CASE("hardening: the database deleted while running stops deciding and acting, loudly") {
  DaemonFixture f(kTrainers);
  f.Cycle();
  REQUIRE(f.Marked("idle-trainers", kForgot));
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(f.store().path() + suffix);
  f.Advance(std::chrono::minutes(10));
  auto rep = f.Cycle(false);
  CHECK_FALSE(rep.ok);
  REQUIRE_FALSE(rep.errors.empty());
  CHECK(rep.errors[0].find("was deleted while loopwarden was running") != std::string::npos);
  CHECK(rep.acted == 0);
  CHECK(f.Calls("rforgot") == 0);  // its intent would have gone with the unlinked file
}

TEST_CASE("spend: a deactivated run's GPU interval closes when the provider takes the call, not at the next poll") {
  DaemonFixture f(kTrainers);
  f.Cycle();
  REQUIRE(f.Marked("idle-trainers", kForgot));
  const store::ResourceState* st = f.store().Find(kForgot);
  REQUIRE(st != nullptr);
  REQUIRE(st->open_gpu.has_value());
  f.Advance(10min);
  auto rep = f.Cycle(false);  // the deadline cycle acts without polling
  REQUIRE(rep.acted == 1);
  const Time acted_at = f.clock().Now();
  st = f.store().Find(kForgot);
  REQUIRE(st != nullptr);
  CHECK_FALSE(st->resource.billing.billable);
  CHECK_FALSE(st->open_gpu.has_value());
  // Nothing accrues between the action and the next poll, 25 minutes later.
  const Money at_action = st->SpendAt(acted_at);
  f.Advance(25min);
  CHECK(st->SpendAt(f.clock().Now()) == at_action);
  f.Cycle();
  st = f.store().Find(kForgot);
  REQUIRE(st != nullptr);
  CHECK(st->SpendAt(f.clock().Now()) == at_action);
}

}  // namespace
}  // namespace loopwarden::testing

namespace loopwarden::testing {

TEST_CASE("the fleet gauges agree with a recount of the store, before and after a run leaves running") {
  DaemonFixture f(kTrainers);
  auto check = [&] {
    const Time now = f.clock().Now();
    const std::string text = f.metrics().RenderText();
    std::map<std::string, int64_t> counts, idle, unpriced;
    std::map<std::string, double> spend;
    for (const store::ResourceState& st : f.store().resources()) {
      const Resource& r = st.resource;
      const Meter m = r.billing.meter == Meter::kNone ? Meter::kGpuTime : r.billing.meter;
      spend["loopwarden_spend_usd_total{meter=\"" + std::string(MeterName(m)) + "\",provider=\"" + r.provider + "\"}"] +=
          st.SpendAt(now).ToDouble();
      if (st.deleted_at || r.lifecycle == Lifecycle::kDeleted) continue;
      counts["loopwarden_resources{kind=\"" + std::string(KindName(r.kind)) + "\",lifecycle=\"" +
             std::string(LifecycleName(r.lifecycle)) + "\",provider=\"" + r.provider + "\"}"]++;
      const auto since = st.IdleSince();
      if (r.lifecycle == Lifecycle::kRunning && since && now - *since >= 15min) {
        idle["loopwarden_idle_resources{kind=\"" + std::string(KindName(r.kind)) + "\",provider=\"" + r.provider + "\"}"]++;
      }
      unpriced["loopwarden_unpriced_resources{provider=\"" + r.provider + "\"}"] += st.unpriced ? 1 : 0;
    }
    REQUIRE(counts.size() >= 4);
    for (const auto& [series, n] : counts) {
      CAPTURE(series);
      CHECK(MetricSample(text, series) == static_cast<double>(n));
    }
    // A resources series the recount lacks (none in this fleet) may only read 0.
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("loopwarden_resources{", 0) != 0) continue;
      const std::string series = line.substr(0, line.rfind(' '));
      if (counts.count(series)) continue;
      CAPTURE(series);
      CHECK(MetricSample(text, series) == 0);
    }
    for (const auto& [series, n] : idle) {
      CAPTURE(series);
      CHECK(MetricSample(text, series) == static_cast<double>(n));
    }
    for (const auto& [series, n] : unpriced) {
      CAPTURE(series);
      CHECK(MetricSample(text, series) == static_cast<double>(n));
    }
    for (const auto& [series, usd] : spend) {
      CAPTURE(series);
      CHECK(MetricSample(text, series) == doctest::Approx(usd).epsilon(1e-6));
    }
  };
  f.Cycle();
  check();
  // The forgotten run is deactivated when its grace ends and leaves `running`: the next
  // export counts it where it went. (A series left empty reading 0 is Metrics' own
  // rule, tested in exporters/metrics_test.cc.)
  const std::string running = "loopwarden_resources{kind=\"baseten.run\",lifecycle=\"running\",provider=\"bt\"}";
  const double before = MetricSample(f.metrics().RenderText(), running);
  REQUIRE(before >= 1);
  f.Advance(10min);
  f.Cycle(false);
  f.Advance(1min);
  f.Cycle();
  REQUIRE(f.Calls("rforgot/deactivate") == 1);
  check();
  CHECK(MetricSample(f.metrics().RenderText(), running) == before - 1);
}

}  // namespace loopwarden::testing
