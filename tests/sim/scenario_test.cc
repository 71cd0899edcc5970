// Scenario loading, the control surface and the fleet generator.
#include <doctest/doctest.h>

#include <chrono>
#include <set>

#include "tests/sim/sim_fixture.h"

using namespace loopwarden;
using namespace loopwarden::testing;
using namespace std::chrono_literals;

TEST_CASE("scenario: the demo scenario loads with every provider situation") {
  auto sc = sim::LoadScenarioFile("sim/scenarios/demo.yaml", kSimEpoch);
  REQUIRE_MESSAGE(sc.ok(), sc.status().message());
  const sim::World& w = sc->world;
  REQUIRE(w.orgs.size() == 1);
  CHECK(w.orgs[0].runs.size() == 3);
  CHECK(w.orgs[0].samplers.size() == 2);  // one paired, one standalone
  CHECK(w.orgs[0].deployments.size() == 2);
  REQUIRE(w.accounts.size() == 1);
  CHECK(w.accounts[0].sessions.size() == 7);
  CHECK(w.accounts[0].jobs.size() == 1);
  CHECK(w.accounts[0].deployments.size() == 1);
  const sim::BtRun& forgotten = w.orgs[0].runs[1];
  CHECK(forgotten.created == kSimEpoch - 100min);
  CHECK(forgotten.keepalive.at(0).to == sim::Forever());
}

TEST_CASE("scenario: errors name file, line and column") {
  auto bad = sim::LoadScenarioText("baseten:\n  - org: a\n    keys: [{key: k}]\n    runs:\n      - {id: r1, creatd: -1h}\n",
                                   "s.yaml", kSimEpoch);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() ==
        "s.yaml:5:18: baseten[0].runs[0]: unknown key 'creatd' (did you mean 'created'?)\n"
        "s.yaml:5:9: baseten[0].runs[0]: missing required key 'created'");
  auto time = sim::LoadScenarioText(
      "fireworks:\n  - account: a\n    keys: [{key: k}]\n    sessions: [{id: ts-x, created: yesterday}]\n", "t.yaml",
      kSimEpoch);
  REQUIRE_FALSE(time.ok());
  CHECK(time.status().message() ==
        "t.yaml:4:36: fireworks[0].sessions[0].created: invalid time 'yesterday' (use -2h, +30m, an RFC 3339 instant, "
        "or forever)");
  auto interval = sim::LoadScenarioText(
      "baseten:\n  - org: a\n    keys: [{key: k}]\n    runs: [{id: r, created: -1h, activity: [{from: 0s, to: -1h}]}]\n",
      "u.yaml", kSimEpoch);
  CHECK(interval.status().message().find("'to' must be after 'from'") != std::string::npos);
}

TEST_CASE("scenario: absolute times, forever, and the scenario's own epoch") {
  auto sc = sim::LoadScenarioText(
      "epoch: 2026-01-01T00:00:00Z\nbaseten:\n  - org: a\n    keys: [{key: k}]\n    runs:\n"
      "      - {id: r, created: 2025-12-31T23:00:00Z, activity: [{from: -30m, to: forever}]}\n",
      "e.yaml", kSimEpoch);
  REQUIRE_MESSAGE(sc.ok(), sc.status().message());
  CHECK(sc->epoch == ParseTime("2026-01-01T00:00:00Z").value());
  CHECK(sc->world.orgs[0].runs[0].activity[0].from == ParseTime("2025-12-31T23:30:00Z").value());
}

TEST_CASE("generator: the same seed gives the same fleet, of the size asked") {
  sim::World a, b, c;
  sim::GenerateFleet(a, kSimEpoch, {.resources = 2000, .accounts = 4, .seed = 9});
  sim::GenerateFleet(b, kSimEpoch, {.resources = 2000, .accounts = 4, .seed = 9});
  sim::GenerateFleet(c, kSimEpoch, {.resources = 2000, .accounts = 4, .seed = 10});
  CHECK(a.ResourceCount() == 2000);
  CHECK(a.orgs.size() == 2);
  CHECK(a.accounts.size() == 2);
  CHECK(a.orgs[0].runs[0].id == b.orgs[0].runs[0].id);
  CHECK(a.orgs[0].runs.size() == b.orgs[0].runs.size());
  CHECK(a.orgs[0].runs.size() != c.orgs[0].runs.size());
}

TEST_CASE("generator: every id is unique, even the short ones (a listing never names one object twice)") {
  sim::World w;
  sim::GenerateFleet(w, kSimEpoch, {.resources = 20000, .accounts = 4, .seed = 1});
  std::set<std::string> seen;
  size_t total = 0;
  for (const auto& org : w.orgs) {
    for (const auto& r : org.runs) total += 1, seen.insert("run/" + r.id);
    for (const auto& s : org.samplers) total += 1, seen.insert("sampler/" + s.id);
    for (const auto& d : org.deployments) total += 1, seen.insert("deployment/" + d.id);
  }
  for (const auto& a : w.accounts) {
    for (const auto& s : a.sessions) total += 1, seen.insert("session/" + s.id);
    for (const auto& d : a.deployments) total += 1, seen.insert("fwdeployment/" + d.id);
  }
  CHECK(total > 10000);
  CHECK(seen.size() == total);
}

TEST_CASE("control: advance, activity hooks, journal, state, reset") {
  SimFixture f(R"(
baseten:
  - org: acme
    keys: [{key: bt-key}]
    runs: [{id: r1, mode: dedicated, created: -5m}]
)");
  auto t0 = Str(f.Bt("GET", "/_sim/time").obj().at("now"));
  auto adv = f.Bt("POST", "/_sim/advance", R"({"seconds":120})");
  CHECK(adv.status == 200);
  CHECK(f.Now() == kSimEpoch + 120s);
  // A keepalive from now on holds the run past its 900 s timeout.
  REQUIRE(f.Bt("POST", "/_sim/activity", R"({"id":"r1","field":"keepalive","from_seconds":0,"to_seconds":"forever"})")
              .status == 200);
  f.Advance(30min);
  CHECK(Str(f.Bt("GET", "/v1/loops/runs/r1").obj().at("run").at("status").at("name")) == "ACTIVE");
  f.Bt("POST", "/v1/loops/runs/r1/deactivate");
  auto j = f.Bt("GET", "/_sim/journal");
  REQUIRE(j.obj().at("entries").as_array().size() == 1);
  const auto& e = j.obj().at("entries").at(0);
  CHECK(Str(e.at("method")) == "POST");
  CHECK(Str(e.at("path")) == "/v1/loops/runs/r1/deactivate");
  CHECK(e.at("status").as_int64() == 200);
  CHECK(Str(e.at("at")) == FormatTime(f.Now()));
  CHECK(f.Bt("GET", "/_sim/journal?since=1").obj().at("entries").as_array().empty());
  auto st = f.Bt("GET", "/_sim/state");
  CHECK(Str(st.obj().at("resources").at(0).at("run_status")) == "INACTIVE");
  CHECK(f.Bt("POST", "/_sim/reset").status == 200);
  CHECK(Str(f.Bt("GET", "/_sim/state").obj().at("resources").at(0).at("run_status")) == "INACTIVE");  // timed out by now
  CHECK(f.Bt("GET", "/_sim/journal").obj().at("entries").as_array().empty());
  CHECK(f.Bt("POST", "/_sim/activity", R"({"id":"nope"})").status == 400);
}

TEST_CASE("scale: a generated fleet of 20k resources serves complete listings") {
  SimFixture f("{}");
  auto sc = sim::LoadScenarioText("generate: {resources: 20000, accounts: 4, seed: 5}\n", "g.yaml", kSimEpoch);
  REQUIRE(sc.ok());
  sim::World& w = f.sim().world();
  w = sc->world;
  size_t runs = 0, deployments = 0;
  for (const auto& org : w.orgs) {
    auto r = f.Bt("GET", "/v1/loops/runs?scope=org", "", org.keys[0].key);
    REQUIRE(r.status == 200);
    runs += r.obj().at("runs").as_array().size();
  }
  for (const auto& a : w.accounts) {
    std::string token;
    do {
      auto r = f.Fw("GET", "/v1/accounts/" + a.id + "/deployments?pageSize=200" + (token.empty() ? "" : "&pageToken=" + token),
                    "", a.keys[0].key);
      REQUIRE(r.status == 200);
      deployments += r.obj().at("deployments").as_array().size();
      token = Str(r.obj().at("nextPageToken"));
    } while (!token.empty());
  }
  size_t want_runs = 0, want_deps = 0;
  for (const auto& org : w.orgs) want_runs += org.runs.size();
  for (const auto& a : w.accounts) want_deps += a.deployments.size();
  CHECK(runs == want_runs);
  CHECK(deployments == want_deps);
  CHECK(runs > 4000);
}
