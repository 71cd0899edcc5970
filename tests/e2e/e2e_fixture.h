#pragma once
// End-to-end tests: loopwarden-sim, the loopwarden daemon and Slack / webhook receivers
// (lw-receiver), each its own process, over loopback, on one accelerated timeline
// (every process gets the same --epoch, --time-anchor and --time-scale).

#include <doctest/doctest.h>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "core/time.h"
#include "tests/testing/metrics_text.h"
#include "tests/testing/fetch.h"
#include "tests/testing/process.h"
#include "tests/testing/temp_dir.h"

namespace loopwarden::testing {

namespace bj = boost::json;

inline std::string BuildDir() {
  const char* b = std::getenv("LOOPWARDEN_BUILD_DIR");
  return b && *b ? b : "build";
}

// Secrets with markers the tests look for in logs, metrics and the database.
struct Markers {
  std::string baseten_key = "bt-MARKER-7c1e9a";
  std::string fireworks_key = "fw-MARKER-2b8d4f";
  std::string slack_path = "/services/T0MARKER/B0MARKER/slackMARKER5d3";
  std::string hook_secret = "whsec_TUFSS0VSLWhvb2stc2VjcmV0LTFmNmE=";  // base64("MARKER-hook-secret-1f6a")
  std::string admin_token = "admin-MARKER-9e4c";
};

// A Baseten org of dedicated H100x8 runs: `idle` that stop working at `idle_from(i)`
// (a scenario time: "-2h", "+50s") and are kept alive after, ids ridle000…; and `busy`
// that never stop, ids rbusy000….
inline std::string RunFleet(int idle, int busy, const std::function<std::string(int)>& idle_from) {
  std::string y = "baseten:\n  - org: acme\n    keys: [{key: bt-demo-key, owner: ops@example.com, org_visible: true}]\n    runs:\n";
  char buf[400];
  for (int i = 0; i < idle; ++i) {
    std::snprintf(buf, sizeof buf,
                  "      - {id: ridle%03d, name: idle-%03d, owner: ops@example.com, mode: dedicated, created: -3h,"
                  " instance_type: H100x8, nodes: 1, activity: [{from: -3h, to: %s, gpu_util: 0.9}],"
                  " keepalive: [{from: -3h, to: forever}]}\n", i, i, idle_from(i).c_str());
    y += buf;
  }
  for (int i = 0; i < busy; ++i) {
    std::snprintf(buf, sizeof buf,
                  "      - {id: rbusy%03d, name: busy-%03d, owner: ops@example.com, mode: dedicated, created: -3h,"
                  " instance_type: H100x8, nodes: 1, activity: [{from: -3h, to: forever, gpu_util: 0.9}]}\n", i, i);
    y += buf;
  }
  return y;
}

class E2E {
 public:
  // `scale` simulated seconds per real second.
  explicit E2E(double scale = 30, const std::string& scenario = "sim/scenarios/demo.yaml") : scale_(scale) {
    const auto wall = std::chrono::system_clock::now();
    anchor_ = std::chrono::duration_cast<std::chrono::seconds>(wall.time_since_epoch()).count();
    epoch_ = FormatTimeSeconds(FromUnixMicros(anchor_ * 1'000'000));
    // The demo scenario with marker API keys.
    std::string sc = ReadFile(scenario);
    REQUIRE_MESSAGE(!sc.empty(), "cannot read " << scenario);
    sc = std::regex_replace(sc, std::regex("bt-demo-key"), markers_.baseten_key);
    sc = std::regex_replace(sc, std::regex("fw-demo-key"), markers_.fireworks_key);
    std::ofstream(dir_.File("scenario.yaml")) << sc;
    sim_ = Process::Start({BuildDir() + "/sim/loopwarden-sim", "--scenario", dir_.File("scenario.yaml"), "--listen",
                           "127.0.0.1:0", "--port-file", dir_.File("sim.port"), "--log-level", "warn",
                           "--time-scale", Scale(), "--epoch", epoch_, "--time-anchor", std::to_string(anchor_)},
                          {}, dir_.File("sim.log"));
    sim_port_ = WaitPort(dir_.File("sim.port"), *sim_);
  }

  std::string SimUrl() const { return "http://127.0.0.1:" + std::to_string(sim_port_); }
  const TempDir& dir() const { return dir_; }
  const Markers& markers() const { return markers_; }
  double scale() const { return scale_; }

  // Starts a receiver ("slack" or "webhook"); extra flags such as --fail-first.
  int StartReceiver(const std::string& name, const std::string& mode, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {BuildDir() + "/tests/e2e/lw-receiver", "--mode", mode, "--record",
                                     dir_.File(name + ".jsonl"), "--port-file", dir_.File(name + ".port"), "--secret",
                                     markers_.hook_secret};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto p = Process::Start(argv, {}, dir_.File(name + ".log"));
    const int port = WaitPort(dir_.File(name + ".port"), *p);
    receivers_[name] = std::move(p);
    ports_[name] = port;
    return port;
  }
  std::vector<bj::object> Received(const std::string& name) const {
    std::vector<bj::object> out;
    std::ifstream in(dir_.File(name + ".jsonl"));
    std::string line;
    while (std::getline(in, line)) {
      boost::system::error_code ec;
      bj::value v = bj::parse(line, ec);
      if (!ec && v.is_object()) out.push_back(v.as_object());
    }
    return out;
  }

  // Writes the configuration; ${SIM_URL}, ${STATE}, ${SLACK_URL} and ${HOOK_URL} expand
  // from the daemon's environment.
  void WriteConfig(const std::string& yaml) { std::ofstream(dir_.File("loopwarden.yaml")) << yaml; }
  std::string ConfigPath() const { return dir_.File("loopwarden.yaml"); }

  std::map<std::string, std::string> DaemonEnv() const {
    std::map<std::string, std::string> env = {
        {"SIM_URL", SimUrl()},
        {"STATE", dir_.File("state.db")},
        {"BASETEN_API_KEY", markers_.baseten_key},
        {"FIREWORKS_API_KEY", markers_.fireworks_key},
        {"HOOK_SECRET", markers_.hook_secret},
        {"LOOPWARDEN_ADMIN_TOKEN", markers_.admin_token},
        {"LOOPWARDEN_TEST_CRASH_AT", "\x01unset"},
    };
    // The machine's proxy must not carry the tests' loopback traffic.
    for (const char* v : {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY"}) {
      env[v] = "\x01unset";
    }
    if (ports_.count("slack")) env["SLACK_WEBHOOK_URL"] = "http://127.0.0.1:" + std::to_string(ports_.at("slack")) + markers_.slack_path;
    if (ports_.count("hook")) env["HOOK_URL"] = "http://127.0.0.1:" + std::to_string(ports_.at("hook")) + "/hooks/loopwarden";
    return env;
  }
  std::vector<std::string> TimeFlags() const {
    return {"--time-scale", Scale(), "--epoch", epoch_, "--time-anchor", std::to_string(anchor_)};
  }

  // Starts `loopwarden run` and waits until its admin server listens.
  Process& StartDaemon(std::map<std::string, std::string> extra_env = {}, long fsize_limit = 0) {
    std::map<std::string, std::string> env = DaemonEnv();
    for (auto& [k, v] : extra_env) env[k] = v;
    std::vector<std::string> argv = {BuildDir() + "/daemon/loopwarden", "run", "--config", ConfigPath()};
    for (const std::string& f : TimeFlags()) argv.push_back(f);
    const size_t before = ReadFile(dir_.File("daemon.log")).size();
    daemon_ = Process::Start(argv, env, dir_.File("daemon.log"), fsize_limit);
    std::smatch m;
    bool up = WaitUntil(
        [&] {
          const std::string log = ReadFile(dir_.File("daemon.log")).substr(before);
          static const std::regex re("\"msg\":\"loopwarden started\".*\"listen\":\"127\\.0\\.0\\.1:([0-9]+)\"");
          if (std::regex_search(log, m, re)) {
            admin_port_ = std::stoi(m[1]);
            return true;
          }
          return !daemon_->running();
        },
        std::chrono::seconds(20));
    REQUIRE_MESSAGE(up, "daemon did not start:\n" << DaemonLog());
    REQUIRE_MESSAGE(daemon_->running(), "daemon exited at start:\n" << DaemonLog());
    return *daemon_;
  }
  Process& daemon() { return *daemon_; }
  // Starts the daemon without waiting for it (the crash test kills it at random).
  Process& SpawnDaemon() {
    std::vector<std::string> argv = {BuildDir() + "/daemon/loopwarden", "run", "--config", ConfigPath()};
    for (const std::string& f : TimeFlags()) argv.push_back(f);
    daemon_ = Process::Start(argv, DaemonEnv(), dir_.File("daemon.log"));
    return *daemon_;
  }
  std::string DaemonLog() const { return ReadFile(dir_.File("daemon.log")); }
  std::string AdminUrl() const { return "http://127.0.0.1:" + std::to_string(admin_port_); }

  bj::array Journal() const {
    auto r = Fetch("GET", SimUrl() + "/_sim/journal");
    REQUIRE(r.ok());
    return bj::parse(r->body).as_object().at("entries").as_array();
  }
  // Journal entries whose path contains `needle`.
  std::vector<bj::object> Calls(const std::string& needle) const {
    std::vector<bj::object> out;
    for (const bj::value& v : Journal()) {
      if (std::string(v.as_object().at("path").as_string()).find(needle) != std::string::npos) out.push_back(v.as_object());
    }
    return out;
  }
  std::string Get(const std::string& path) const {
    auto r = Fetch("GET", AdminUrl() + path);
    REQUIRE_MESSAGE(r.ok(), path << ": " << r.status().message());
    return r->body;
  }
  // Waits until the daemon has run `n` more reconcile cycles, each a chance to act
  // again: a test that checks nothing more happens waits for cycles, not for time.
  void AwaitCycles(int n) {
    const double start = Sample(Get("/metrics"), "loopwarden_cycles_total");
    REQUIRE_MESSAGE(WaitUntil([&] { return Sample(Get("/metrics"), "loopwarden_cycles_total") >= start + n; },
                              Real(std::chrono::minutes(2 * n)) + std::chrono::seconds(20)),
                    "fewer than " << n << " cycles ran: " << DaemonLog());
  }
  // A sample's value in /metrics text, or -1 when absent.
  static double Sample(const std::string& metrics, const std::string& series) { return MetricSample(metrics, series); }
  // The sum of a family's samples whose labels contain `labels`
  // (`result="failed"`): counters the daemon moves as things happen.
  static double SumSamples(const std::string& metrics, const std::string& family, const std::string& labels) {
    std::istringstream in(metrics);
    std::string line;
    double sum = 0;
    while (std::getline(in, line)) {
      if (line.rfind(family + "{", 0) != 0 || line.find(labels) == std::string::npos) continue;
      sum += std::stod(line.substr(line.rfind(' ') + 1));
    }
    return sum;
  }
  // Open intents this daemon settled at start (done or not), from its metrics.
  double Recovered() const {
    const std::string m = Get("/metrics");
    return SumSamples(m, "loopwarden_actions_total", "result=\"recovered_done\"") +
           SumSamples(m, "loopwarden_actions_total", "result=\"recovered_not_done\"");
  }
  // The simulated time every process sees now.
  Time SimNow() const {
    const double real_s = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count() -
                          static_cast<double>(anchor_);
    return FromUnixMicros(anchor_ * 1'000'000 + static_cast<int64_t>(real_s * scale_ * 1e6));
  }
  // Real time for `sim` simulated time.
  std::chrono::milliseconds Real(Duration sim) const {
    return std::chrono::milliseconds(static_cast<int64_t>(std::chrono::duration<double, std::milli>(sim).count() / scale_));
  }

 private:
  std::string Scale() const {
    std::ostringstream s;
    s << scale_;
    return s.str();
  }
  static int WaitPort(const std::string& file, Process& p) {
    int port = 0;
    WaitUntil(
        [&] {
          std::ifstream in(file);
          in >> port;
          return port > 0 || !p.running();
        },
        std::chrono::seconds(10));
    REQUIRE_MESSAGE(port > 0, "no port in " << file << ":\n" << p.Log());
    return port;
  }

  double scale_;
  int64_t anchor_ = 0;
  std::string epoch_;
  Markers markers_;
  TempDir dir_;
  std::unique_ptr<Process> sim_;
  std::unique_ptr<Process> daemon_;
  std::map<std::string, std::unique_ptr<Process>> receivers_;
  std::map<std::string, int> ports_;
  int sim_port_ = 0;
  int admin_port_ = 0;
};

}  // namespace loopwarden::testing
