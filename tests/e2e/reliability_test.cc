// Reliability end to end: every fault kind at once, kill -9 at random points, bad input
// at the edges, and a search for secrets afterwards.
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sqlite3.h>
#include <sys/socket.h>

#include <boost/json/parse.hpp>
#include <filesystem>
#include <random>
#include <set>

#include "store/store.h"
#include "tests/e2e/e2e_fixture.h"

namespace loopwarden::testing {
namespace {

using namespace std::chrono_literals;

std::string BaseConfig(const std::string& policies, const std::string& limits = "{max_actions_per_cycle: 100, max_actions_percent: 100}",
                       bool fireworks = true) {
  std::string y = "state_path: ${STATE}\npoll_interval: 1m\ndry_run: false\nlisten: 127.0.0.1:0\n"
                  "admin_token_env: LOOPWARDEN_ADMIN_TOKEN\ndrain_timeout: 5s\nproviders:\n"
                  "  - {name: bt, type: baseten, base_url: \"${SIM_URL}\", api_key_env: BASETEN_API_KEY, activity_window: 4h,"
                  " request_timeout: 5s}\n";
  if (fireworks) {
    y += "  - {name: fw, type: fireworks, account: acme-ml, base_url: \"${SIM_URL}\", api_key_env: FIREWORKS_API_KEY,"
         " request_timeout: 5s}\n";
  }
  return y + "pricing: {gpu_hour_usd: {H100: 6.50, H200: 7.00}}\nnotifiers: []\n"
             "exemptions:\n  - {match: {name: \"^prod-\"}, reason: serving team}\nlimits: " + limits +
         "\npolicies:\n" + policies;
}

// Mutating calls that took effect, per path, from the journal: a 2xx, or a call the
// simulator applied and then reset the connection on (status 0; the client's retry then
// finds it done).
std::map<std::string, int> Successes(const bj::array& journal) {
  std::map<std::string, int> n;
  for (const auto& v : journal) {
    const auto& o = v.as_object();
    const int64_t st = o.at("status").as_int64();
    if (st == 0 || (st >= 200 && st < 300)) {
      n[std::string(o.at("method").as_string()) + " " + std::string(o.at("path").as_string())]++;
    }
  }
  return n;
}

TEST_CASE("chaos: every fault kind at once, no wrong action, every due action done, the daemon never exits") {
  E2E e(60);
  const std::string policies =
      "  - {name: idle-trainers, resource: baseten.run, where: {mode: dedicated, lifecycle: running, idle_for: \">= 20m\"},"
      " action: deactivate, grace: 5m}\n"
      "  - {name: forgotten-endpoints, resource: baseten.deployment, where: {lifecycle: running, no_traffic_for: \">= 2h\"},"
      " action: deactivate, grace: 5m}\n"
      "  - {name: idle-samplers, resource: baseten.sampler, where: {lifecycle: running, flags: [standalone],"
      " no_traffic_for: \">= 1h\"}, action: deactivate, grace: 5m}\n"
      "  - {name: idle-rlor, resource: fireworks.rlor_job, where: {lifecycle: running, idle_for: \">= 30m\"},"
      " action: cancel, grace: 5m}\n"
      "  - {name: idle-sessions, resource: fireworks.training_session, where: {lifecycle: running, idle_for: \">= 45m\"},"
      " action: delete, allow_irreversible: true, checkpoints: promote_latest, grace: 5m}\n"
      "  - {name: orphaned-rollouts, resource: fireworks.deployment, where: {lifecycle: running, flags: [rollout]},"
      " action: scale_to_zero, grace: 5m}\n";
  e.WriteConfig(BaseConfig(policies));
  // 5% 5xx, 429 bursts with Retry-After, latency spikes, resets, truncation, malformed
  // JSON, stale listings, and the Fireworks deployment listing's page always failing:
  // that listing is never complete, so the rollout it would show must never be touched.
  const std::string faults = R"({"seed": 7, "stale_reads_seconds": 180, "rules": [
      {"match": "/v1/accounts/acme-ml/deployments", "methods": ["GET"], "fail_page": 1},
      {"match": "*", "error_rate": 0.05, "rate_limit_rate": 0.03, "retry_after_seconds": 2,
       "burst_every_seconds": 1800, "burst_length_seconds": 60, "reset_rate": 0.02, "truncate_rate": 0.02,
       "malformed_rate": 0.02, "latency_rate": 0.02, "latency_seconds": 0.3}]})";
  auto f = Fetch("POST", e.SimUrl() + "/_sim/faults", faults);
  REQUIRE(f.ok());
  REQUIRE(f->status == 200);
  e.StartDaemon();

  const std::vector<std::string> due = {
      "POST /v1/loops/runs/rforgot/deactivate",
      "POST /v1/models/mtickets/deployments/dtick01/deactivate",
      "POST /v1/loops/samplers/smpeval/deactivate",
      "POST /v1/accounts/acme-ml/rlorTrainerJobs/training-api-service-1a2b3c4d:cancel",
      "DELETE /v1/accounts/acme-ml/trainingSessions/ts-5bb4c28c5434412f8ce3f4317d23b0e8",
      "DELETE /v1/accounts/acme-ml/trainingSessions/ts-11111111111111111111111111111111",
      "DELETE /v1/accounts/acme-ml/trainingSessions/ts-55555555555555555555555555555555",
  };
  const bool all = WaitUntil([&] {
    auto ok = Successes(e.Journal());
    for (const std::string& d : due) if (!ok.count(d)) return false;
    return true;
  }, e.Real(60min), 200ms);
  // Rare faults (2 %) may not have come up by then in a short, fast run: keep the daemon
  // under fire until every kind has, so the checks below cover all of them.
  const std::vector<std::string> kinds = {"error_5xx", "rate_limit_429", "connection_reset", "truncated_body",
                                          "malformed_json", "latency", "failed_page"};
  WaitUntil([&] {
    auto fr = Fetch("GET", e.SimUrl() + "/_sim/faults");
    if (!fr.ok()) return false;
    for (const std::string& kind : kinds) {
      if (fr->body.find("\"" + kind + "\"") == std::string::npos) return false;
    }
    return true;
  }, e.Real(60min), 200ms);
  const bj::array journal = e.Journal();
  const auto ok = Successes(journal);
  for (const std::string& d : due) CHECK_MESSAGE(ok.count(d) == 1, "never done: " << d);
  REQUIRE(all);
  // Nothing acted twice, nothing protected touched, the rollout behind a failing page left alone.
  for (const auto& [call, n] : ok) CHECK_MESSAGE(n == 1, call << " succeeded " << n << " times");
  for (const auto& v : journal) {
    const std::string path(v.as_object().at("path").as_string());
    for (const char* p : {"rbusy01", "dprod01", "mprodch", "rsrvls1", "ts-0c1de2f3", "qwen3-8b-rollout"}) {
      CHECK_MESSAGE(path.find(p) == std::string::npos, "wrong action: " << path);
    }
  }
  int promotes = 0;
  for (const auto& [call, n] : ok) promotes += call.find(":promote") != std::string::npos ? n : 0;
  CHECK(promotes == 1);
  CHECK(e.daemon().running());
  // The faults happened, and loopwarden counted them.
  auto fr = Fetch("GET", e.SimUrl() + "/_sim/faults");
  REQUIRE(fr.ok());
  const std::string counts = fr->body;
  MESSAGE("faults injected: " << counts);
  for (const std::string& kind : kinds) {
    CHECK_MESSAGE(counts.find("\"" + kind + "\"") != std::string::npos, kind << " never injected");
  }
  const std::string metrics = e.Get("/metrics");
  CHECK(E2E::Sample(metrics, "loopwarden_provider_errors_total{error=\"transient\",provider=\"bt\"}") > 0);
  CHECK(E2E::Sample(metrics, "loopwarden_listing_complete{provider=\"fw\"}") == 0);
  e.daemon().Signal(SIGTERM);
  CHECK(e.daemon().Wait(20s) == std::optional<int>(0));
}

TEST_CASE("crash: kill -9 at 55 seeded random points while acting, no duplicate call, consistent records") {
  TempDir scenario_dir;
  const int idle = 80, busy = 5;
  std::ofstream(scenario_dir.File("fleet.yaml")) << RunFleet(idle, busy, [](int) { return std::string("-2h"); });
  E2E e(30, scenario_dir.File("fleet.yaml"));
  e.WriteConfig(BaseConfig(
      "  - {name: idle-trainers, resource: baseten.run, where: {mode: dedicated, lifecycle: running,"
      " idle_for: \">= 20m\"}, action: deactivate, grace: 0s}\n", "{max_actions_per_cycle: 100, max_actions_percent: 100}",
      false));
  std::mt19937 rng(20261202);
  std::uniform_int_distribution<int> after_ms(20, 450);
  int kills = 0;
  for (int i = 0; i < 55; ++i) {
    Process& d = e.SpawnDaemon();
    std::this_thread::sleep_for(std::chrono::milliseconds(after_ms(rng)));
    d.Signal(SIGKILL);
    const auto rc = d.Wait(10s);
    REQUIRE(rc.has_value());
    kills += *rc == 128 + SIGKILL;
  }
  MESSAGE("kills survived: " << kills << " of 55 (the rest had exited before the signal)");
  CHECK(kills >= 50);
  // A final, uninterrupted run finishes the job.
  e.StartDaemon();
  const bool done = WaitUntil([&] {
    int n = 0;
    for (const auto& [call, c] : Successes(e.Journal())) n += call.find("/deactivate") != std::string::npos;
    return n >= idle;
  }, 60s, 100ms);
  // Two more polls, so the store has seen what the calls did.
  const double cycles = E2E::Sample(e.Get("/metrics"), "loopwarden_cycles_total");
  CHECK(WaitUntil([&] { return E2E::Sample(e.Get("/metrics"), "loopwarden_cycles_total") >= cycles + 2; }, 20s));
  e.daemon().Signal(SIGTERM);
  REQUIRE(e.daemon().Wait(20s) == std::optional<int>(0));
  REQUIRE_MESSAGE(done, e.DaemonLog().substr(e.DaemonLog().size() > 4000 ? e.DaemonLog().size() - 4000 : 0));

  // The journal: each idle run deactivated exactly once, in any state; busy ones never.
  std::map<std::string, int> calls;
  for (const auto& v : e.Journal()) calls[std::string(v.as_object().at("path").as_string())]++;
  for (int i = 0; i < idle; ++i) {
    char p[64];
    std::snprintf(p, sizeof p, "/v1/loops/runs/ridle%03d/deactivate", i);
    CHECK_MESSAGE(calls[p] == 1, p << " called " << calls[p] << " times");
  }
  for (const auto& [path, n] : calls) CHECK_MESSAGE(path.find("rbusy") == std::string::npos, path);

  // The records: intact, nothing open, one done intent per call, no mark left behind.
  auto store = store::Store::Open({.path = e.dir().File("state.db"), .read_only = true, .create = false});
  REQUIRE(store.ok());
  CHECK((*store)->IntegrityCheck().ok());
  auto open = (*store)->OpenIntents();
  REQUIRE(open.ok());
  CHECK(open->empty());
  auto intents = (*store)->IntentsSince(Time{});
  REQUIRE(intents.ok());
  std::map<std::string, int> done_by_resource;
  for (const auto& in : *intents) done_by_resource[in.resource] += in.state == store::IntentState::kDone;
  for (int i = 0; i < idle; ++i) {
    char k[64];
    std::snprintf(k, sizeof k, "bt/baseten.run/ridle%03d", i);
    CHECK_MESSAGE(done_by_resource[k] == 1, k);
  }
  CHECK((*store)->marks().empty());
  for (const store::ResourceState& st : (*store)->resources()) {
    const std::string key = st.resource.Key();
    if (key.find("ridle") != std::string::npos) CHECK_MESSAGE(st.resource.lifecycle != Lifecycle::kRunning, key);
    CHECK(st.SpendAt(Time{} + std::chrono::hours(24 * 365 * 60)) >= Money());
  }
}

// Sends raw bytes to a port and returns the status line of the answer.
std::string Raw(int port, const std::string& bytes) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return "connect failed";
  }
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  char buf[256] = {0};
  const ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
  close(fd);
  std::string s(buf, n > 0 ? static_cast<size_t>(n) : 0);
  return s.substr(0, s.find("\r\n"));
}

TEST_CASE("bad input: malformed, oversize and unauthenticated admin requests get clear answers and break nothing") {
  E2E e(30);
  e.WriteConfig(BaseConfig("  - {name: idle-trainers, resource: baseten.run, where: {idle_for: \">= 20m\"}, action: notify}\n"));
  e.StartDaemon();
  const int port = std::stoi(e.AdminUrl().substr(e.AdminUrl().rfind(':') + 1));
  CHECK(Raw(port, "GARBAGE\r\n\r\n").find(" 400 ") != std::string::npos);
  CHECK(Raw(port, "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(40000, 'a') + "\r\n\r\n").find(" 431 ") != std::string::npos);
  CHECK(Raw(port, "POST /v1/snooze HTTP/1.1\r\nHost: x\r\nContent-Length: 200000\r\n\r\n" + std::string(200000, '{'))
            .find(" 413 ") != std::string::npos);
  CHECK(Raw(port, "POST /v1/snooze HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer nope\r\nContent-Length: 2\r\n\r\n{}")
            .find(" 401 ") != std::string::npos);
  CHECK(Raw(port, "GET /v1/resources?kind=%ZZ HTTP/1.1\r\nHost: x\r\n\r\n").find(" 400 ") != std::string::npos);
  CHECK(Raw(port, "DELETE /metrics HTTP/1.1\r\nHost: x\r\n\r\n").find(" 405 ") != std::string::npos);
  CHECK(e.Get("/healthz") == "ok\n");
  CHECK(e.daemon().running());
}

TEST_CASE("bad input: a damaged database or one from a newer loopwarden is refused, named, and left as it was") {
  E2E e(30);
  e.WriteConfig(BaseConfig("  - {name: idle-trainers, resource: baseten.run, where: {idle_for: \">= 20m\"}, action: notify}\n"));
  auto run_once = [&](const std::string& log) {
    std::vector<std::string> argv = {BuildDir() + "/daemon/loopwarden", "run", "--once", "--config", e.ConfigPath()};
    auto p = Process::Start(argv, e.DaemonEnv(), e.dir().File(log));
    auto rc = p->Wait(30s);
    return std::make_pair(rc, p->Log());
  };
  const std::string db = e.dir().File("state.db");
  std::string garbage = "SQLite format 3" + std::string(1, '\0');
  for (int i = 0; i < 8192; ++i) garbage += static_cast<char>((i * 7919) % 251);
  std::ofstream(db, std::ios::binary) << garbage;
  auto [rc, log] = run_once("damaged.log");
  CHECK(rc == std::optional<int>(1));
  CHECK(log.find(db) != std::string::npos);
  CHECK(ReadFile(db) == garbage);

  // A good database, then stamped as if a newer loopwarden had written it.
  std::filesystem::remove(db);
  REQUIRE(run_once("good.log").first == std::optional<int>(0));
  sqlite3* h = nullptr;
  REQUIRE(sqlite3_open(db.c_str(), &h) == SQLITE_OK);
  REQUIRE(sqlite3_exec(h, "PRAGMA user_version = 999", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(h);
  const std::string before = ReadFile(db);
  auto [rc2, log2] = run_once("newer.log");
  CHECK(rc2 == std::optional<int>(1));
  CHECK(log2.find("newer") != std::string::npos);
  CHECK(ReadFile(db) == before);
}

TEST_CASE("bad input: a full disk fails cycles loudly, acts on nothing, and loses nothing already recorded") {
  // The demo fleet plus a generated organisation the second configuration adds.
  TempDir scenario_dir;
  std::ofstream(scenario_dir.File("fleet.yaml"))
      << ReadFile("sim/scenarios/demo.yaml") << "\ngenerate: {resources: 800, accounts: 2, seed: 5, live_fraction: 0.2}\n";
  E2E e(30, scenario_dir.File("fleet.yaml"));
  const std::string policy =
      "  - {name: idle-trainers, resource: baseten.run, where: {mode: dedicated, lifecycle: running, idle_for: \">= 20m\"},"
      " action: deactivate, grace: 1h}\n";
  const std::string first = BaseConfig(policy);
  e.WriteConfig(first);
  e.StartDaemon();
  REQUIRE(WaitUntil([&] { return E2E::Sample(e.Get("/metrics"), "loopwarden_cycles_total") >= 2; }, 20s));
  e.daemon().Signal(SIGTERM);
  REQUIRE(e.daemon().Wait(20s) == std::optional<int>(0));
  const std::string db = e.dir().File("state.db");
  const auto size = std::max<std::uintmax_t>(std::filesystem::file_size(db), 64 * 1024);

  // Now the disk is full: no file may grow past `size`, and the new provider's first
  // poll has far more to record than that.
  std::string second = first;
  second.insert(second.find("pricing:"), "  - {name: gen, type: baseten, base_url: \"${SIM_URL}\", api_key_env: GEN_KEY,"
                                         " requests_per_minute: 100000, detail_calls_per_poll: 2000}\n");
  e.WriteConfig(second);
  e.StartDaemon({{"GEN_KEY", "bt-gen-0"}}, static_cast<long>(size));
  const bool failing = WaitUntil([&] { return E2E::Sample(e.Get("/metrics"), "loopwarden_cycle_failures_total") >= 2; }, 30s);
  REQUIRE_MESSAGE(failing, e.DaemonLog().substr(e.DaemonLog().size() > 3000 ? e.DaemonLog().size() - 3000 : 0));
  CHECK(e.daemon().running());
  CHECK(e.Get("/healthz") == "ok\n");
  CHECK(e.Calls("/").empty());
  CHECK(e.DaemonLog().find("recording the poll failed; nothing is decided this cycle") != std::string::npos);
  CHECK(e.DaemonLog().find("disk") != std::string::npos);
  e.daemon().Signal(SIGTERM);
  CHECK(e.daemon().Wait(20s).has_value());

  // Space again: everything recorded before is there and the file is sound.
  {
    auto store = store::Store::Open({.path = db, .read_only = true, .create = false});
    REQUIRE(store.ok());
    CHECK((*store)->IntegrityCheck().ok());
    CHECK((*store)->Find("bt/baseten.run/rforgot") != nullptr);
    CHECK((*store)->marks().count({"idle-trainers", "bt/baseten.run/rforgot"}) == 1);
  }
  e.StartDaemon({{"GEN_KEY", "bt-gen-0"}});
  CHECK(WaitUntil([&] { return E2E::Sample(e.Get("/metrics"), "loopwarden_resources{kind=\"baseten.run\",lifecycle=\"running\",provider=\"gen\"}") > 0; }, 30s));
  e.daemon().Signal(SIGTERM);
  CHECK(e.daemon().Wait(20s) == std::optional<int>(0));
}

TEST_CASE("secrets: a demo run with marker secrets, crash included, leaves none in logs, metrics, database or crash output") {
  E2E e(60);
  e.StartReceiver("slack", "slack");
  e.StartReceiver("hook", "webhook");
  // The README demo's configuration, with a webhook notifier added.
  std::string cfg = ReadFile("examples/demo.yaml");
  REQUIRE(!cfg.empty());
  cfg = std::regex_replace(cfg, std::regex("\\$\\{DEMO_DIR\\}/loopwarden.db"), "${STATE}");
  cfg = std::regex_replace(cfg, std::regex("\\$\\{ADMIN_PORT:-8464\\}"), "0");
  cfg = std::regex_replace(cfg, std::regex("notifiers:\n"), "notifiers:\n  - {name: hook, type: webhook, url: \"${HOOK_URL}\", secret_env: HOOK_SECRET}\n");
  cfg = std::regex_replace(cfg, std::regex("notify: \\[ml-slack\\]"), "notify: [ml-slack, hook]");
  e.WriteConfig(cfg);
  std::map<std::string, std::string> env = {{"SLACK_WEBHOOK_URL", e.DaemonEnv().at("SLACK_WEBHOOK_URL")}};
  // First a crash at the first provider call, then a full run.
  env["LOOPWARDEN_TEST_CRASH_AT"] = "after_intent";
  e.StartDaemon(env);
  REQUIRE(e.daemon().Wait(60s) == std::optional<int>(128 + SIGKILL));
  e.StartDaemon();
  REQUIRE(WaitUntil([&] { return e.Received("hook").size() >= 3 && e.Received("slack").size() >= 3; }, 60s));
  const std::string metrics = e.Get("/metrics");
  const std::string resources = e.Get("/v1/resources");
  const std::string plan = e.Get("/v1/plan");
  e.daemon().Signal(SIGTERM);
  REQUIRE(e.daemon().Wait(20s) == std::optional<int>(0));
  std::string db;
  for (const char* suffix : {"", "-wal", "-shm"}) db += ReadFile(e.dir().File(std::string("state.db") + suffix));
  const std::string logs = e.DaemonLog();
  CHECK(logs.find("LOOPWARDEN_TEST_CRASH_AT: killing the process") != std::string::npos);
  const Markers& m = e.markers();
  int searched = 0;
  for (const std::string& secret : {m.baseten_key, m.fireworks_key, m.slack_path, std::string("slackMARKER5d3"), m.hook_secret,
                                    std::string("TUFSS0VSLWhvb2stc2VjcmV0"), m.admin_token}) {
    for (const auto& [where, text] : std::vector<std::pair<std::string, const std::string*>>{
             {"logs and crash output", &logs}, {"/metrics", &metrics}, {"the database", &db},
             {"/v1/resources", &resources}, {"/v1/plan", &plan}}) {
      ++searched;
      CHECK_MESSAGE(text->find(secret) == std::string::npos, secret << " found in " << where);
    }
  }
  CHECK(searched == 35);
  CHECK(db.size() > 4096);
}


TEST_CASE("single writer: run --once beside the daemon is refused naming the daemon's pid, while plan, status and report work") {
  E2E e(30);
  e.WriteConfig(BaseConfig("  - {name: idle-trainers, resource: baseten.run, where: {idle_for: \">= 20m\"}, action: deactivate, grace: 1h}\n"));
  Process& daemon = e.StartDaemon();
  auto cmd = [&](std::vector<std::string> args, const std::string& log) {
    std::vector<std::string> argv = {BuildDir() + "/daemon/loopwarden"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("--config");
    argv.push_back(e.ConfigPath());
    auto p = Process::Start(argv, e.DaemonEnv(), e.dir().File(log));
    auto rc = p->Wait(60s);
    return std::make_pair(rc, p->Log());
  };
  auto [rc, log] = cmd({"run", "--once"}, "second.log");
  CHECK(rc == std::optional<int>(1));
  CHECK(log.find("in use by another loopwarden (pid " + std::to_string(daemon.pid()) + ",") != std::string::npos);
  // A second daemon too.
  auto [rc2, log2] = cmd({"run"}, "third.log");
  CHECK(rc2 == std::optional<int>(1));
  CHECK(log2.find("pid " + std::to_string(daemon.pid())) != std::string::npos);
  // Readers work beside it.
  CHECK(cmd({"status"}, "status.log").first == std::optional<int>(0));
  CHECK(cmd({"report", "--since", "1d"}, "report.log").first == std::optional<int>(0));
  const auto plan = cmd({"plan"}, "plan.log").first;
  CHECK((plan == std::optional<int>(0) || plan == std::optional<int>(2)));
  CHECK(daemon.running());
  CHECK(e.Journal().empty());  // nothing acted: the only writer's grace is an hour
}


TEST_CASE("hardening: plan exits 1 and says so when no provider can be listed, instead of 'nothing to do'") {
  E2E e(30);
  e.WriteConfig(BaseConfig("  - {name: idle-trainers, resource: baseten.run, where: {idle_for: \">= 20m\"}, action: notify}\n"));
  auto env = e.DaemonEnv();
  env["BASETEN_API_KEY"] = "bt-wrong-key";  // 401 on every route: not retried
  env["FIREWORKS_API_KEY"] = "fw-wrong-key";
  std::vector<std::string> argv = {BuildDir() + "/daemon/loopwarden", "plan", "--config", e.ConfigPath()};
  auto p = Process::Start(argv, env, e.dir().File("plan.log"));
  CHECK(p->Wait(60s) == std::optional<int>(1));
  CHECK(p->Log().find("no provider could be listed (bt, fw)") != std::string::npos);
  // One of two unreachable: the plan is still worth reading, with the warning.
  env["FIREWORKS_API_KEY"] = e.markers().fireworks_key;
  auto half = Process::Start(argv, env, e.dir().File("plan2.log"));
  const auto rc = half->Wait(60s);
  CHECK((rc == std::optional<int>(0) || rc == std::optional<int>(2)));
  CHECK(half->Log().find("a listing was incomplete") != std::string::npos);
}


TEST_CASE("hardening: 300 stalled connections to the admin port do not keep /healthz, /readyz or /metrics from answering") {
  E2E e(30);
  e.WriteConfig(BaseConfig("  - {name: idle-trainers, resource: baseten.run, where: {idle_for: \">= 20m\"}, action: notify}\n"));
  e.StartDaemon();
  const int port = std::stoi(e.AdminUrl().substr(e.AdminUrl().rfind(':') + 1));
  std::vector<int> fds;
  for (int i = 0; i < 300; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(fd);
      continue;
    }
    const std::string partial = "GET /metrics HTTP/1.1\r\nHost: x\r\n";  // and never the blank line
    (void)!::write(fd, partial.data(), partial.size());
    fds.push_back(fd);
  }
  CHECK(fds.size() >= 200);
  CHECK(e.Get("/healthz") == "ok\n");
  CHECK(e.Get("/readyz") == "ok\n");
  CHECK(e.Get("/metrics").find("loopwarden_up") != std::string::npos);
  for (int fd : fds) ::close(fd);
  CHECK(e.daemon().running());
}


TEST_CASE("hardening: a call cut off by the drain timeout stays open and is settled at the next start, never recorded failed") {
  // Issue 17: a scale-to-zero cancelled at the drain timeout after the provider had done
  // it was recorded "failed" (and would have been sent again).
  E2E e(30);
  std::string config = BaseConfig("  - {name: orphaned-rollouts, resource: fireworks.deployment, where: {lifecycle: running,"
                                   " flags: [rollout]}, action: scale_to_zero, grace: 1m}\n");
  config.replace(config.find("drain_timeout: 5s"), 17, "drain_timeout: 1s");  // under the 5 s request timeout
  e.WriteConfig(config);
  // The PATCH runs at once; its answer takes 60 s, past the drain timeout.
  auto f = Fetch("POST", e.SimUrl() + "/_sim/faults",
                 R"({"rules":[{"match":"/v1/accounts/acme-ml/deployments/*","methods":["PATCH"],"latency_rate":1.0,"latency_seconds":60}]})");
  REQUIRE(f.ok());
  REQUIRE(f->status == 200);
  e.StartDaemon();
  const std::string patch = "/deployments/qwen3-8b-rollout";
  REQUIRE_MESSAGE(WaitUntil([&] { return e.Calls(patch).size() == 1; }, e.Real(3min) + 20s), e.DaemonLog());
  e.daemon().Signal(SIGTERM);
  REQUIRE(e.daemon().Wait(30s) == std::optional<int>(0));
  CHECK(e.DaemonLog().find("drain timeout") != std::string::npos);
  auto intents = [&] {
    auto store = store::Store::Open({.path = e.dir().File("state.db"), .read_only = true, .create = false});
    REQUIRE(store.ok());
    auto all = (*store)->IntentsSince(Time{});
    REQUIRE(all.ok());
    std::vector<store::Intent> out;
    for (const auto& i : *all) {
      if (i.resource.find("qwen3-8b-rollout") != std::string::npos) out.push_back(i);
    }
    return out;
  };
  auto cut = intents();
  REQUIRE(cut.size() == 1);
  CHECK(cut[0].state == store::IntentState::kOpen);

  REQUIRE(Fetch("POST", e.SimUrl() + "/_sim/faults", "{}").ok());
  e.StartDaemon();
  REQUIRE_MESSAGE(WaitUntil([&] { return e.Recovered() >= 1; }, 20s), e.DaemonLog());
  e.AwaitCycles(2);
  e.daemon().Signal(SIGTERM);
  REQUIRE(e.daemon().Wait(15s) == std::optional<int>(0));
  auto settled = intents();
  REQUIRE(settled.size() == 1);
  CHECK(settled[0].state == store::IntentState::kDone);
  CHECK(settled[0].outcome == "recovered");
  CHECK(e.Calls(patch).size() == 1);
}

}  // namespace
}  // namespace loopwarden::testing
