// The daemon end to end: loopwarden-sim, loopwarden and Slack / webhook receivers as
// separate processes over loopback, on one accelerated simulated timeline.
#include <doctest/doctest.h>

#include <boost/json/parse.hpp>
#include <cstdio>
#include <filesystem>
#include <regex>

#include "core/time.h"
#include "store/store.h"
#include "tests/e2e/e2e_fixture.h"

namespace loopwarden::testing {
namespace {

using namespace std::chrono_literals;

struct ConfigOptions {
  bool dry_run = false;
  std::string poll = "1m";
  std::string limits = "{max_actions_per_cycle: 10, max_actions_percent: 50}";
  bool baseten = true;
  bool fireworks = true;
  bool slack = false;
  bool hook = false;
  std::string policies;
};

std::string Config(const ConfigOptions& o) {
  std::string y = "state_path: ${STATE}\npoll_interval: " + o.poll + "\ndry_run: " + (o.dry_run ? "true" : "false") +
                  "\nlisten: 127.0.0.1:0\nadmin_token_env: LOOPWARDEN_ADMIN_TOKEN\ndrain_timeout: 5s\nproviders:\n";
  if (o.baseten) {
    y += "  - {name: bt, type: baseten, base_url: \"${SIM_URL}\", api_key_env: BASETEN_API_KEY, activity_window: 4h}\n";
  }
  if (o.fireworks) {
    y += "  - {name: fw, type: fireworks, account: acme-ml, base_url: \"${SIM_URL}\", api_key_env: FIREWORKS_API_KEY}\n";
  }
  y += "pricing: {gpu_hour_usd: {H100: 6.50, H200: 7.00}}\nnotifiers:";
  if (!o.slack && !o.hook) y += " []";
  y += "\n";
  if (o.slack) y += "  - {name: slack, type: slack, webhook_url_env: SLACK_WEBHOOK_URL}\n";
  if (o.hook) y += "  - {name: hook, type: webhook, url: \"${HOOK_URL}\", secret_env: HOOK_SECRET}\n";
  y += "exemptions:\n  - {match: {name: \"^prod-\"}, reason: serving team}\nlimits: " + o.limits + "\npolicies:\n" + o.policies;
  return y;
}

std::string Notify(const ConfigOptions& o) {
  std::string n;
  if (o.slack) n += "slack";
  if (o.hook) n += std::string(n.empty() ? "" : ", ") + "hook";
  return "[" + n + "]";
}

std::string TrainerPolicies(const ConfigOptions& o, const std::string& grace = "2m") {
  return "  - {name: idle-dedicated-trainers, resource: baseten.run, where: {mode: dedicated, lifecycle: running, "
         "idle_for: \">= 20m\"}, action: deactivate, grace: " + grace + ", notify: " + Notify(o) + "}\n"
         "  - {name: forgotten-endpoints, resource: baseten.deployment, where: {lifecycle: running, no_traffic_for: "
         "\">= 2h\", age: \">= 1h\"}, action: deactivate, grace: " + grace + ", notify: " + Notify(o) + "}\n";
}

std::string SessionPolicy(const std::string& checkpoints) {
  return "  - {name: idle-sessions, resource: fireworks.training_session, where: {lifecycle: running, idle_for: "
         "\">= 45m\"}, action: delete, allow_irreversible: true, checkpoints: " + checkpoints + ", grace: 1m}\n";
}

Time At(const bj::object& o, const char* key) { return ParseTime(std::string(o.at(key).as_string())).value(); }

// The mark a resource carries in /v1/resources, if any.
std::optional<bj::object> MarkOf(E2E& e, const std::string& id) {
  auto all = bj::parse(e.Get("/v1/resources?limit=100000")).as_object().at("resources").as_array();
  for (const bj::value& v : all) {
    const bj::object& r = v.as_object();
    if (r.at("id").as_string() == id && r.contains("marks")) return r.at("marks").as_array().at(0).as_object();
  }
  return std::nullopt;
}

bool LogHas(E2E& e, const std::string& needle) { return e.DaemonLog().find(needle) != std::string::npos; }

TEST_CASE("an idle dedicated run is marked, warned, then deactivated when its grace ends, busy ones are untouched") {
  // Slow enough that one simulated second (200 ms real) covers the confirm read, the
  // intent and the call even in the sanitizer build.
  E2E e(5);
  e.StartReceiver("slack", "slack");
  e.StartReceiver("hook", "webhook");
  ConfigOptions o{.slack = true, .hook = true};
  o.fireworks = false;
  o.policies = TrainerPolicies(o);
  e.WriteConfig(Config(o));
  e.StartDaemon();

  // Marked, with its deadline.
  std::optional<bj::object> mark;
  REQUIRE(WaitUntil([&] { return (mark = MarkOf(e, "rforgot")).has_value(); }, 20s));
  const Time act_after = At(*mark, "act_after");
  CHECK(std::string(mark->at("action").as_string()) == "deactivate");

  // Warned before acting: a Slack message naming it and when it will act.
  REQUIRE(WaitUntil([&] {
    for (const auto& m : e.Received("slack")) {
      const std::string body(m.at("body").as_string());
      if (body.find("rforgot") != std::string::npos && body.find("Will deactivate at") != std::string::npos) return true;
    }
    return false;
  }, 20s));
  CHECK(e.Calls("rforgot").empty());

  // Deactivated at the deadline: not before it, and within one simulated second after.
  REQUIRE_MESSAGE(WaitUntil([&] { return !e.Calls("/v1/loops/runs/rforgot/deactivate").empty(); }, e.Real(5min) + 20s),
                  e.DaemonLog());
  const auto calls = e.Calls("/v1/loops/runs/rforgot/deactivate");
  REQUIRE(calls.size() == 1);
  const Duration late = At(calls[0], "at") - act_after;
  INFO("acted " << FormatDuration(late) << " after the deadline");
  CHECK(late >= Duration::zero());
  CHECK(late <= 1s);

  // The forgotten endpoint goes too; the busy run and the exempt production endpoint do not.
  REQUIRE(WaitUntil([&] { return !e.Calls("/deployments/dtick01/deactivate").empty(); }, e.Real(5min) + 20s));
  CHECK(e.Calls("rbusy01").empty());
  CHECK(e.Calls("dprod01").empty());
  CHECK(e.Calls("mprodch").empty());

  // The webhook receiver verified every delivery's Standard Webhooks signature.
  REQUIRE(WaitUntil([&] { return e.Received("hook").size() >= 2; }, 20s));
  for (const auto& m : e.Received("hook")) CHECK(m.at("verified").as_bool());
  bool acted = false;
  for (const auto& m : e.Received("hook")) acted = acted || std::string(m.at("body").as_string()).find("\"acted\"") != std::string::npos;
  CHECK(acted);

  // /metrics passes promtool, and carries the action.
  const std::string metrics = e.Get("/metrics");
  CHECK(E2E::Sample(metrics, "loopwarden_actions_total{action=\"deactivate\",policy=\"idle-dedicated-trainers\",result=\"ok\"}") == 1);
  std::ofstream(e.dir().File("metrics.txt")) << metrics;
  const std::string promtool = "promtool check metrics < " + e.dir().File("metrics.txt") + " > " +
                               e.dir().File("promtool.out") + " 2>&1";
  const int rc = std::system(promtool.c_str());
  INFO(ReadFile(e.dir().File("promtool.out")));
  CHECK_MESSAGE(rc == 0, "promtool check metrics failed (is the prometheus package installed?)");
  CHECK(e.Get("/healthz") == "ok\n");
  CHECK(e.Get("/readyz") == "ok\n");

  // SIGTERM: drains and exits 0.
  e.daemon().Signal(SIGTERM);
  CHECK(e.daemon().Wait(15s) == std::optional<int>(0));

  // No marker secret reached the logs, the metrics or the database.
  std::string db;
  for (const char* suffix : {"", "-wal", "-shm"}) db += ReadFile(e.dir().File(std::string("state.db") + suffix));
  const Markers& m = e.markers();
  for (const std::string& secret : {m.baseten_key, m.slack_path, m.hook_secret, m.admin_token, std::string("slackMARKER5d3"),
                                    std::string("TUFSS0VSLWhvb2stc2VjcmV0")}) {
    CHECK_MESSAGE(e.DaemonLog().find(secret) == std::string::npos, "in the log: " << secret);
    CHECK_MESSAGE(metrics.find(secret) == std::string::npos, "in /metrics: " << secret);
    CHECK_MESSAGE(db.find(secret) == std::string::npos, "in the database: " << secret);
  }
  CHECK(db.size() > 4096);
}

TEST_CASE("promote_latest promotes a session's unpromoted checkpoint, verifies it, then deletes the session") {
  E2E e(30);
  ConfigOptions o;
  o.baseten = false;
  o.limits = "{max_actions_per_cycle: 10, max_actions_percent: 100}";
  o.policies = SessionPolicy("promote_latest");
  e.WriteConfig(Config(o));
  e.StartDaemon();
  const std::string s = "trainingSessions/ts-5bb4c28c5434412f8ce3f4317d23b0e8";
  REQUIRE_MESSAGE(WaitUntil([&] {
    for (const auto& c : e.Calls(s)) if (c.at("method").as_string() == "DELETE") return true;
    return false;
  }, e.Real(3min) + 20s), e.DaemonLog());
  const auto calls = e.Calls(s);
  REQUIRE(calls.size() == 2);
  CHECK(std::string(calls[0].at("path").as_string()).find(":promote") != std::string::npos);
  CHECK(std::string(calls[0].at("body").as_string()).find("models/lw-5bb4c28c-final") != std::string::npos);
  CHECK(calls[0].at("status").as_int64() == 200);
  CHECK(calls[1].at("method").as_string() == "DELETE");
  CHECK(calls[0].at("seq").as_int64() < calls[1].at("seq").as_int64());
  CHECK(LogHas(e, "checkpoint promoted and verified"));
}

TEST_CASE("a promotion that failed is tried again, the session is deleted only after one is verified") {
  E2E e(30);
  ConfigOptions o;
  o.baseten = false;
  o.limits = "{max_actions_per_cycle: 10, max_actions_percent: 100}";
  o.policies = SessionPolicy("promote_latest");
  e.WriteConfig(Config(o));
  // Every promotion fails until the fault is lifted.
  auto f = Fetch("POST", e.SimUrl() + "/_sim/faults",
                 R"({"seed": 1, "rules": [{"match": "*:promote", "methods": ["POST"], "error_rate": 1}]})");
  REQUIRE(f.ok());
  REQUIRE(f->status == 200);
  e.StartDaemon();
  const std::string s = "trainingSessions/ts-5bb4c28c5434412f8ce3f4317d23b0e8";
  // (The simulator's journal holds the calls it served, not the faults it injected.)
  REQUIRE_MESSAGE(WaitUntil([&] {
    return E2E::SumSamples(e.Get("/metrics"), "loopwarden_actions_total",
                           "action=\"promote_checkpoint\",policy=\"idle-sessions\",result=\"failed\"") >= 1;
  }, e.Real(3min) + 20s), e.DaemonLog());
  CHECK(LogHas(e, "promotion failed, not deleting"));
  CHECK(e.Calls(s).empty());
  auto clear = Fetch("POST", e.SimUrl() + "/_sim/faults", R"({"seed": 1, "rules": []})");
  REQUIRE(clear.ok());
  REQUIRE_MESSAGE(WaitUntil([&] {
    for (const auto& c : e.Calls(s)) if (c.at("method").as_string() == "DELETE") return true;
    return false;
  }, e.Real(10min) + 20s), e.DaemonLog());
  const auto calls = e.Calls(s);
  // The retried promotion, then the delete, once each.
  REQUIRE(calls.size() == 2);
  CHECK(std::string(calls[0].at("path").as_string()).find(":promote") != std::string::npos);
  CHECK(calls[0].at("status").as_int64() == 200);
  CHECK(calls[1].at("method").as_string() == "DELETE");
  CHECK(LogHas(e, "checkpoint promoted and verified"));
}

TEST_CASE("checkpoints: refuse leaves a session with an unpromoted checkpoint alone while deleting the others") {
  E2E e(30);
  ConfigOptions o;
  o.baseten = false;
  o.policies = SessionPolicy("refuse");
  e.WriteConfig(Config(o));
  e.StartDaemon();
  REQUIRE(WaitUntil([&] { return !e.Calls("trainingSessions/ts-11111111111111111111111111111111").empty(); },
                    e.Real(3min) + 20s));
  // Two more cycles, then nothing has touched it, and the plan says why.
  e.AwaitCycles(2);
  CHECK(e.Calls("ts-5bb4c28c5434412f8ce3f4317d23b0e8").empty());
  const std::string plan = e.Get("/v1/plan");
  CHECK(plan.find("ts-5bb4c28c5434412f8ce3f4317d23b0e8") != std::string::npos);
  CHECK(plan.find("is unpromoted (checkpoints: refuse)") != std::string::npos);
}

TEST_CASE("dry-run decides, reports would-act, and makes no mutating call") {
  E2E e(30);
  e.StartReceiver("hook", "webhook");
  ConfigOptions o{.dry_run = true, .hook = true};
  o.policies = TrainerPolicies(o, "1m") + SessionPolicy("ignore");
  e.WriteConfig(Config(o));
  e.StartDaemon();
  REQUIRE_MESSAGE(WaitUntil([&] {
    for (const auto& m : e.Received("hook")) {
      if (std::string(m.at("body").as_string()).find("\"would_act\"") != std::string::npos) return true;
    }
    return false;
  }, e.Real(3min) + 20s), e.DaemonLog());
  e.AwaitCycles(2);
  CHECK(e.Journal().empty());
  const std::string metrics = e.Get("/metrics");
  CHECK(E2E::Sample(metrics, "loopwarden_dry_run") == 1);
  CHECK(E2E::Sample(metrics, "loopwarden_actions_total{action=\"deactivate\",policy=\"idle-dedicated-trainers\",result=\"dry_run\"}") == 1);
}

TEST_CASE("a blast-radius cap aborts every action of the cycle and alerts once") {
  E2E e(30);
  e.StartReceiver("slack", "slack");
  ConfigOptions o{.slack = true};
  o.limits = "{max_actions_per_cycle: 2, max_actions_percent: 100}";
  o.policies = TrainerPolicies(o, "1m") + SessionPolicy("ignore");
  e.WriteConfig(Config(o));
  const Time sim_start = e.SimNow();
  e.StartDaemon();
  REQUIRE(WaitUntil([&] { return E2E::Sample(e.Get("/metrics"), "loopwarden_blast_radius_aborts_total") >= 1; },
                    e.Real(3min) + 20s));
  REQUIRE(WaitUntil([&] {
    for (const auto& m : e.Received("slack")) {
      if (std::string(m.at("body").as_string()).find("blast-radius") != std::string::npos) return true;
    }
    return false;
  }, 20s));
  e.AwaitCycles(2);
  CHECK(e.Journal().empty());
  int alerts = 0;
  for (const auto& m : e.Received("slack")) alerts += std::string(m.at("body").as_string()).find("blast-radius") != std::string::npos;
  // The alert repeats at most once per simulated hour (its dedupe key is the hour). The
  // simulated clock starts at the wall clock, so a run near the top of an hour spans two.
  const auto hours = std::chrono::floor<std::chrono::hours>(e.SimNow()) - std::chrono::floor<std::chrono::hours>(sim_start);
  CHECK(alerts >= 1);
  CHECK(alerts <= 1 + hours.count());
  CHECK(hours.count() <= 1);  // the test spans minutes of simulated time
}

// kill -9 at `point` of the first provider call, restart, and count calls.
void CrashAndRestart(const std::string& point, const std::string& expect_state) {
  E2E e(30);
  ConfigOptions o;
  o.fireworks = false;
  o.policies = "  - {name: idle-dedicated-trainers, resource: baseten.run, where: {mode: dedicated, lifecycle: running, "
               "idle_for: \">= 20m\"}, action: deactivate, grace: 1m}\n";
  e.WriteConfig(Config(o));
  e.StartDaemon({{"LOOPWARDEN_TEST_CRASH_AT", point}});
  REQUIRE_MESSAGE(e.daemon().Wait(e.Real(3min) + 20s) == std::optional<int>(128 + SIGKILL), e.DaemonLog());
  const size_t before = e.Calls("/v1/loops/runs/rforgot/deactivate").size();
  CHECK(before == (point == "after_call" ? 1u : 0u));

  e.StartDaemon();
  REQUIRE_MESSAGE(WaitUntil([&] { return e.Recovered() >= 1; }, 20s), e.DaemonLog());
  REQUIRE(WaitUntil([&] { return e.Calls("/v1/loops/runs/rforgot/deactivate").size() == 1; }, e.Real(3min) + 20s));
  e.AwaitCycles(3);
  CHECK(e.Calls("/v1/loops/runs/rforgot/deactivate").size() == 1);
  e.daemon().Signal(SIGTERM);
  REQUIRE(e.daemon().Wait(15s) == std::optional<int>(0));

  auto store = store::Store::Open({.path = e.dir().File("state.db"), .read_only = true, .create = false});
  REQUIRE(store.ok());
  auto intents = (*store)->IntentsSince(Time{});
  REQUIRE(intents.ok());
  REQUIRE(!intents->empty());
  CHECK(store::IntentStateName((*intents)[0].state) == expect_state);
  CHECK((*intents)[0].outcome == "recovered");
  int done = 0;
  for (const auto& i : *intents) done += i.state == store::IntentState::kDone;
  CHECK(done == 1);
}

TEST_CASE("kill -9 between the intent and the call: the restart settles the intent and calls exactly once") {
  CrashAndRestart("after_intent", "abandoned");
}

TEST_CASE("kill -9 after the call: the restart sees it done and does not call again") {
  CrashAndRestart("after_call", "done");
}

TEST_CASE("SIGHUP with a broken file keeps the running configuration, a good one replaces it") {
  E2E e(30);
  ConfigOptions o{.dry_run = true};
  o.policies = TrainerPolicies(o, "1h");
  e.WriteConfig(Config(o));
  e.StartDaemon();
  REQUIRE(WaitUntil([&] { return MarkOf(e, "rforgot").has_value(); }, 20s));

  e.WriteConfig("policies: [ {name: broken\n");
  e.daemon().Signal(SIGHUP);
  REQUIRE_MESSAGE(WaitUntil([&] { return E2E::Sample(e.Get("/metrics"), "loopwarden_config_last_reload_successful") == 0; },
                            20s), e.DaemonLog());
  CHECK(LogHas(e, "reload failed; keeping the running configuration"));
  CHECK(e.daemon().running());
  CHECK(e.Get("/healthz") == "ok\n");
  // Still deciding with the old policies.
  const size_t cycles = static_cast<size_t>(E2E::Sample(e.Get("/metrics"), "loopwarden_cycles_total"));
  REQUIRE(WaitUntil([&] { return E2E::Sample(e.Get("/metrics"), "loopwarden_cycles_total") > cycles + 1; }, 20s));
  CHECK(MarkOf(e, "rforgot").has_value());

  ConfigOptions o2 = o;
  o2.policies = "  - {name: renamed-trainers, resource: baseten.run, where: {mode: dedicated, lifecycle: running, "
                "idle_for: \">= 20m\"}, action: deactivate, grace: 1h}\n";
  e.WriteConfig(Config(o2));
  e.daemon().Signal(SIGHUP);
  REQUIRE(WaitUntil([&] { return E2E::Sample(e.Get("/metrics"), "loopwarden_config_last_reload_successful") == 1; }, 20s));
  REQUIRE(WaitUntil([&] {
    auto m = MarkOf(e, "rforgot");
    return m && m->at("policy").as_string() == "renamed-trainers";
  }, 20s));
  e.daemon().Signal(SIGTERM);
  CHECK(e.daemon().Wait(15s) == std::optional<int>(0));
}

TEST_CASE("snooze: the CLI exempts a marked resource through the daemon, a wrong token gets 401") {
  E2E e(30);
  ConfigOptions o{.dry_run = true};
  o.policies = TrainerPolicies(o, "1h");
  e.WriteConfig(Config(o));
  e.StartDaemon();
  REQUIRE(WaitUntil([&] { return MarkOf(e, "rforgot").has_value(); }, 20s));

  auto bad = Fetch("POST", e.AdminUrl() + "/v1/snooze", R"({"resource":"rforgot","for":"2h","reason":"x"})",
                   {{"Authorization", "Bearer wrong"}});
  REQUIRE(bad.ok());
  CHECK(bad->status == 401);
  auto none = Fetch("POST", e.AdminUrl() + "/v1/snooze", R"({"resource":"rforgot","for":"2h","reason":"x"})");
  REQUIRE(none.ok());
  CHECK(none->status == 401);

  std::vector<std::string> argv = {BuildDir() + "/daemon/loopwarden", "snooze", "rforgot", "--for", "2h", "--reason",
                                   "long eval", "--by", "ana", "--config", e.ConfigPath(),
                                   "--address", e.AdminUrl().substr(7)};
  auto cli = Process::Start(argv, e.DaemonEnv(), e.dir().File("snooze.log"));
  REQUIRE(cli->Wait(20s) == std::optional<int>(0));
  CHECK(cli->Log().find("snoozed rforgot until") != std::string::npos);
  REQUIRE(WaitUntil([&] { return !MarkOf(e, "rforgot").has_value(); }, 20s));
  CHECK(LogHas(e, "\"msg\":\"unmarked\""));
}

TEST_CASE("plan: exit 2 when something would change, 0 when nothing would, and no database is written") {
  E2E e(30);
  ConfigOptions o;
  o.policies = TrainerPolicies(o, "10m");
  e.WriteConfig(Config(o));
  auto run_plan = [&](const std::string& log) {
    std::vector<std::string> argv = {BuildDir() + "/daemon/loopwarden", "plan", "--config", e.ConfigPath()};
    for (const std::string& f : e.TimeFlags()) argv.push_back(f);
    auto p = Process::Start(argv, e.DaemonEnv(), e.dir().File(log));
    auto rc = p->Wait(30s);
    return std::make_pair(rc, p->Log());
  };
  auto [rc, out] = run_plan("plan1.log");
  CHECK(rc == std::optional<int>(2));
  CHECK(out.find("baseten.run/rforgot") != std::string::npos);
  CHECK(out.find("idle-dedicated-trainers") != std::string::npos);
  CHECK(!std::filesystem::exists(e.dir().File("state.db")));
  CHECK(e.Journal().empty());
  // Progress on stderr: one "plan: listed" line per provider account, counted up to the
  // number announced at the start.
  std::smatch polling;
  REQUIRE(std::regex_search(out, polling, std::regex(R"re("msg":"plan: polling","accounts":(\d+))re")));
  const int accounts = std::stoi(polling[1]);
  CHECK(accounts >= 2);
  const std::regex listed_re(R"re("msg":"plan: listed","provider":"[^"]+","listed":(\d+),"of":(\d+))re");
  int listed = 0;
  for (auto it = std::sregex_iterator(out.begin(), out.end(), listed_re); it != std::sregex_iterator(); ++it) {
    ++listed;
    CHECK(std::stoi((*it)[1]) == listed);
    CHECK(std::stoi((*it)[2]) == accounts);
  }
  CHECK(listed == accounts);

  o.policies = "  - {name: very-idle, resource: baseten.run, where: {idle_for: \">= 1000h\"}, action: deactivate}\n";
  e.WriteConfig(Config(o));
  auto [rc2, out2] = run_plan("plan2.log");
  CHECK(rc2 == std::optional<int>(0));
  CHECK(out2.find("nothing to do") != std::string::npos);
}

TEST_CASE("proxy: the real binary's provider calls follow HTTP_PROXY, and NO_PROXY bypasses it") {
  E2E e(30);
  ConfigOptions o;
  o.policies = TrainerPolicies(o, "10m");
  e.WriteConfig(Config(o));
  auto run_plan = [&](const std::string& log, std::map<std::string, std::string> proxy_env) {
    std::vector<std::string> argv = {BuildDir() + "/daemon/loopwarden", "plan", "--config", e.ConfigPath()};
    for (const std::string& f : e.TimeFlags()) argv.push_back(f);
    auto env = e.DaemonEnv();
    for (auto& [k, v] : proxy_env) env[k] = v;
    auto p = Process::Start(argv, env, e.dir().File(log));
    auto rc = p->Wait(30s);
    return std::make_pair(rc, p->Log());
  };
  // Port 1 on loopback: nothing listens, so a call that goes to the proxy fails at once.
  auto [rc, out] = run_plan("plan-proxied.log", {{"HTTP_PROXY", "http://proxyuser:pr0xy-secret@127.0.0.1:1"}});
  CHECK(rc == std::optional<int>(1));
  CHECK(out.find("proxy http://127.0.0.1:1 for 127.0.0.1:") != std::string::npos);
  CHECK(out.find("pr0xy-secret") == std::string::npos);
  auto [rc2, out2] = run_plan("plan-bypassed.log", {{"HTTP_PROXY", "http://127.0.0.1:1"}, {"NO_PROXY", "localhost,127.0.0.1"}});
  CHECK(rc2 == std::optional<int>(2));
  CHECK(out2.find("baseten.run/rforgot") != std::string::npos);
  // The start-up log says which proxy is in use, and what bypasses it.
  CHECK(out2.find(R"("msg":"outbound proxy","https":"","http":"http://127.0.0.1:1","no_proxy":"localhost,127.0.0.1")") !=
        std::string::npos);
  CHECK(out.find(R"("msg":"outbound proxy")") != std::string::npos);
  // A proxy loopwarden cannot use stops it before any call, naming the variable.
  auto [rc3, out3] = run_plan("plan-socks.log", {{"HTTPS_PROXY", "socks5://127.0.0.1:1080"}});
  CHECK(rc3 == std::optional<int>(78));
  CHECK(out3.find("HTTPS_PROXY uses the scheme 'socks5'") != std::string::npos);
}

}  // namespace
}  // namespace loopwarden::testing
