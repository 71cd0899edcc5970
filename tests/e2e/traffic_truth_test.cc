// Traffic truth end to end: from a fresh database, one `run --once` judges endpoints,
// samplers, sessions and Fireworks deployments from the providers' documented metrics
// (baseten.md R18, fireworks.md R12b and R17), with nothing configured but the policies.
#include <doctest/doctest.h>

#include <boost/json/parse.hpp>
#include <sqlite3.h>


#include "tests/e2e/e2e_fixture.h"

namespace loopwarden::testing {
namespace {

using namespace std::chrono_literals;

const char* kBusySession = "ts-b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0";
const char* kIdleSession = "ts-1d1e1d1e1d1e1d1e1d1e1d1e1d1e1d1e";

// No activity_window anywhere: how far back to read comes from the policies alone.
std::string Config(const std::string& poll = "1m") {
  return "state_path: ${STATE}\npoll_interval: " + poll + "\ndry_run: false\nlisten: 127.0.0.1:0\n"
         "admin_token_env: LOOPWARDEN_ADMIN_TOKEN\ndrain_timeout: 5s\nproviders:\n"
         "  - {name: bt, type: baseten, base_url: \"${SIM_URL}\", api_key_env: BASETEN_API_KEY}\n"
         "  - {name: fw, type: fireworks, account: acme-ml, base_url: \"${SIM_URL}\", api_key_env: FIREWORKS_API_KEY}\n"
         "pricing: {gpu_hour_usd: {H100: 6.50}}\nnotifiers: []\n"
         "limits: {max_actions_per_cycle: 10, max_actions_percent: 100}\npolicies:\n"
         "  - {name: forgotten-endpoints, resource: baseten.deployment, where: {lifecycle: running, no_traffic_for: \">= 4h\"},"
         " action: deactivate, grace: 0s}\n"
         "  - {name: idle-samplers, resource: baseten.sampler, where: {lifecycle: running, flags: [standalone],"
         " no_traffic_for: \">= 90m\"}, action: deactivate, grace: 0s}\n"
         "  - {name: idle-sessions, resource: fireworks.training_session, where: {lifecycle: running, idle_for: \">= 30m\"},"
         " action: delete, allow_irreversible: true, checkpoints: ignore, grace: 0s}\n"
         "  - {name: pinned-deployments, resource: fireworks.deployment, where: {lifecycle: running,"
         " flags: [never_scales_to_zero], age: \">= 4h\"}, action: scale_to_zero, grace: 0s}\n"
         "  - {name: quiet-deployments, resource: fireworks.deployment, where: {lifecycle: running,"
         " no_traffic_for: \">= 2h\"}, action: notify}\n";
}

std::vector<std::string> Argv(E2E& e, const std::string& cmd) {
  std::vector<std::string> argv = {BuildDir() + "/daemon/loopwarden", cmd};
  if (cmd == "run") argv.push_back("--once");
  argv.push_back("--config");
  argv.push_back(e.ConfigPath());
  for (const std::string& f : e.TimeFlags()) argv.push_back(f);
  return argv;
}

// Mutating calls with a 2xx answer whose path contains `needle`.
size_t Done(E2E& e, const std::string& needle, const std::string& method) {
  size_t n = 0;
  for (const auto& c : e.Calls(needle)) {
    const int64_t st = c.at("status").as_int64();
    n += c.at("method").as_string() == method && st >= 200 && st < 300;
  }
  return n;
}

TEST_CASE("traffic truth: from a fresh database one cycle deactivates an endpoint idle 6 h and a sampler idle 2 h") {
  E2E e(30, "sim/scenarios/traffic_truth.yaml");
  e.WriteConfig(Config());
  REQUIRE_FALSE(std::filesystem::exists(e.dir().File("state.db")));

  // `plan` first: it names what a live run will act on, and says what it cannot know yet.
  auto plan = Process::Start(Argv(e, "plan"), e.DaemonEnv(), e.dir().File("plan.log"));
  const auto plan_rc = plan->Wait(60s);
  // Exit 2: something would change.
  REQUIRE_MESSAGE(plan_rc == std::optional<int>(2), plan->Log());
  const std::string planned = plan->Log();
  INFO(planned);
  CHECK(planned.find("dtick01") != std::string::npos);
  CHECK(planned.find("smpidle") != std::string::npos);
  // Fireworks serves no traffic history: two hours of loopwarden's own observation first.
  CHECK(planned.find("unknown until observed for") != std::string::npos);
  CHECK(e.Journal().empty());

  auto once = Process::Start(Argv(e, "run"), e.DaemonEnv(), e.dir().File("once.log"));
  REQUIRE_MESSAGE(once->Wait(60s) == std::optional<int>(0), once->Log());
  INFO(once->Log());
  CHECK(Done(e, "/v1/models/mtickets/deployments/dtick01/deactivate", "POST") == 1);
  CHECK(Done(e, "/v1/loops/samplers/smpidle/deactivate", "POST") == 1);
  // Serving, or quiet for less than the threshold: untouched.
  CHECK(e.Calls("smpbusy").empty());
  CHECK(e.Calls("dquiet1").empty());
  // The idle session went; the busy one, whose updateTime is frozen, did not.
  CHECK(Done(e, std::string("trainingSessions/") + kIdleSession, "DELETE") == 1);
  CHECK(e.Calls(kBusySession).empty());
}

TEST_CASE("traffic truth: a Fireworks deployment is at zero replicas right after scale_to_zero, and a busy session with a frozen updateTime is never touched") {
  E2E e(30, "sim/scenarios/traffic_truth.yaml");
  e.WriteConfig(Config());
  e.StartDaemon();
  REQUIRE_MESSAGE(WaitUntil([&] { return Done(e, "deployments/forgotten-dep", "PATCH") == 1; }, e.Real(3min) + 20s),
                  e.DaemonLog());
  const auto patch = e.Calls("deployments/forgotten-dep");
  REQUIRE(patch.size() == 1);
  CHECK(std::string(patch[0].at("path").as_string()).find("updateMask=min_replica_count,max_replica_count") !=
        std::string::npos);
  // Right after the call: no replica bills, without waiting for the scale-to-zero window.
  auto dep = Fetch("GET", e.SimUrl() + "/v1/accounts/acme-ml/deployments/forgotten-dep", "",
                   {{"Authorization", "Bearer " + e.markers().fireworks_key}});
  REQUIRE(dep.ok());
  const auto d = boost::json::parse(dep->body).as_object();
  CHECK(d.at("replicaCount").as_int64() == 0);
  CHECK(d.at("maxReplicaCount").as_int64() == 0);

  // Ten cycles on: the busy session is still untouched, the idle one was deleted once.
  e.AwaitCycles(10);
  CHECK(e.daemon().running());
  CHECK(e.Calls(kBusySession).empty());
  CHECK(Done(e, std::string("trainingSessions/") + kIdleSession, "DELETE") == 1);
  // The undo values are on record: /v1/resources shows the deployment scaled to zero.
  CHECK(e.Get("/v1/resources?limit=1000").find("forgotten-dep") != std::string::npos);
}

TEST_CASE("traffic truth: with token spend unreadable a session is unknown, never idle") {
  E2E e(30, "sim/scenarios/traffic_truth.yaml");
  REQUIRE(Fetch("POST", e.SimUrl() + "/_sim/faults",
                R"({"seed": 3, "rules": [{"match": "/v1/accounts/acme-ml/usageCosts:query", "error_rate": 1.0}]})")
              .ok());
  e.WriteConfig(Config());
  auto once = Process::Start(Argv(e, "run"), e.DaemonEnv(), e.dir().File("once.log"));
  REQUIRE_MESSAGE(once->Wait(120s) == std::optional<int>(0), once->Log());
  // Neither session was deleted: the idle one is idle by its updateTime, but without
  // its spend loopwarden cannot tell.
  CHECK(e.Calls("trainingSessions/").empty());
}


int64_t Count(const std::string& db, const std::string& sql) {
  sqlite3* h = nullptr;
  REQUIRE(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(st) == SQLITE_ROW);
  const int64_t n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return n;
}

TEST_CASE("detail caches: cron-style run --once processes share them through the database and rotate through the fleet") {
  E2E e(30);
  // Three detail reads a poll: far fewer than the demo fleet needs.
  e.WriteConfig("state_path: ${STATE}\npoll_interval: 1m\ndry_run: true\nlisten: 127.0.0.1:0\nproviders:\n"
                "  - {name: bt, type: baseten, base_url: \"${SIM_URL}\", api_key_env: BASETEN_API_KEY,"
                " detail_calls_per_poll: 3}\n"
                "policies:\n  - {name: look, resource: baseten.run, where: {idle_for: \">= 20m\"}, action: notify}\n");
  const std::string db = e.dir().File("state.db");
  auto once = [&](const std::string& log) {
    auto p = Process::Start(Argv(e, "run"), e.DaemonEnv(), e.dir().File(log));
    const auto rc = p->Wait(60s);
    // 1 when the budget left a listing incomplete (cron sees it); never a crash or hang.
    REQUIRE_MESSAGE((rc == std::optional<int>(0) || rc == std::optional<int>(1)), p->Log());
    REQUIRE(p->Log().find("loopwarden stopped") != std::string::npos);
  };
  once("once1.log");
  const int64_t first = Count(db, "SELECT count(*) FROM details WHERE provider = 'bt'");
  CHECK(first >= 1);
  CHECK(first <= 3);
  once("once2.log");
  const int64_t second = Count(db, "SELECT count(*) FROM details WHERE provider = 'bt'");
  // The second process kept what the first read and spent its budget on others.
  CHECK(second > first);
  once("once3.log");
  CHECK(Count(db, "SELECT count(*) FROM details WHERE provider = 'bt'") > second);
  // No secret in what was stored.
  CHECK(Count(db, "SELECT count(*) FROM details WHERE instr(body, '" + e.markers().baseten_key + "') > 0") == 0);
}

}  // namespace
}  // namespace loopwarden::testing
