#include "bench/common.h"

#include <boost/json/parse.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <iostream>
#include <stdexcept>
#include <thread>

#include "tests/testing/fetch.h"

namespace loopwarden::bench {

std::vector<std::string> Timeline::Flags() const {
  std::ostringstream s;
  s << scale;
  return {"--time-scale", s.str(), "--epoch", epoch, "--time-anchor", std::to_string(anchor)};
}

Timeline Timeline::Start(double scale) {
  Timeline t;
  t.scale = scale;
  t.anchor = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count() + 1;
  t.epoch_time = FromUnixMicros(t.anchor * 1'000'000);
  t.epoch = FormatTimeSeconds(t.epoch_time);
  return t;
}

int StartSimulatorWith(const Options& o, const std::string& name, const std::vector<std::string>& flags,
                       std::unique_ptr<testing::Process>& sim) {
  const std::string port_file = o.work_dir + "/" + name + ".port";
  std::filesystem::remove(port_file);
  std::vector<std::string> argv = {o.build_dir + "/sim/loopwarden-sim", "--listen", "127.0.0.1:0", "--port-file",
                                   port_file, "--log-level", "warn"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  sim = testing::Process::Start(argv, {}, o.work_dir + "/" + name + ".sim.log");
  int port = 0;
  // A generated 100k fleet takes a while to build before the port is written.
  testing::WaitUntil([&] {
    std::ifstream in(port_file);
    in >> port;
    return port > 0 || !sim->running();
  }, std::chrono::seconds(120), std::chrono::milliseconds(20));
  if (port == 0) throw std::runtime_error("loopwarden-sim did not start: " + sim->Log());
  return port;
}

int StartSimulator(const Options& o, const std::string& name, const std::string& scenario, const Timeline& t,
                   std::unique_ptr<testing::Process>& sim) {
  const std::string sc = o.work_dir + "/" + name + ".yaml";
  std::ofstream(sc) << scenario;
  std::vector<std::string> flags = {"--scenario", sc};
  for (const std::string& f : t.Flags()) flags.push_back(f);
  return StartSimulatorWith(o, name, flags, sim);
}

std::unique_ptr<testing::Process> StartLoopwarden(const Options& o, const std::string& name, const std::string& config,
                                                  const Timeline& t, bool once,
                                                  const std::map<std::string, std::string>& env) {
  const std::string path = o.work_dir + "/" + name + ".config.yaml";
  std::ofstream(path) << config;
  std::vector<std::string> argv = {o.build_dir + "/daemon/loopwarden", "run", "--config", path, "--log-level", "warn"};
  if (once) argv.push_back("--once");
  for (const std::string& f : t.Flags()) argv.push_back(f);
  return testing::Process::Start(argv, env, o.work_dir + "/" + name + ".log");
}

boost::json::array ReadJournal(int port) {
  // Up to three tries: a bench runs for minutes and one unreadable answer should not
  // cost the whole run; a persistent failure is reported with what came back.
  std::string problem;
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::seconds(1));
    auto j = testing::Fetch("GET", "http://127.0.0.1:" + std::to_string(port) + "/_sim/journal");
    if (!j.ok()) {
      problem = j.status().message();
      continue;
    }
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(j->body, ec);
    if (!ec && v.is_object() && v.as_object().contains("entries") && v.as_object().at("entries").is_array()) {
      return std::move(v.as_object().at("entries").as_array());
    }
    problem = "HTTP " + std::to_string(j->status) + ": " + j->body.substr(0, 300);
    std::cerr << "lw-bench: unreadable journal from port " << port << " (" << problem << ")\n";
  }
  throw std::runtime_error("the simulator's journal on port " + std::to_string(port) + ": " + problem);
}

}  // namespace loopwarden::bench

namespace loopwarden::bench {

// The providers of a generated fleet: Baseten orgs gen-org-N and Fireworks accounts
// gen-acct-N, keys bt-gen-N / fw-gen-N (sim/generator.cc).
std::string GeneratedProviders(int accounts, int port) {
  std::string y;
  const int bt = (accounts + 1) / 2, fw = accounts - bt;
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  for (int i = 0; i < bt; ++i) {
    y += "  - {name: bt" + std::to_string(i) + ", type: baseten, base_url: \"" + url + "\", api_key_env: BT" +
         std::to_string(i) + ", requests_per_minute: 1000000, max_concurrency: 16, detail_calls_per_poll: 50000}\n";
  }
  for (int i = 0; i < fw; ++i) {
    y += "  - {name: fw" + std::to_string(i) + ", type: fireworks, account: gen-acct-" + std::to_string(i) +
         ", base_url: \"" + url + "\", api_key_env: FW" + std::to_string(i) +
         ", requests_per_minute: 1000000, max_concurrency: 16, detail_calls_per_poll: 50000}\n";
  }
  return y;
}

std::optional<std::string> GeneratedKey(const std::string& env) {
  if (env.size() > 2 && (env.rfind("BT", 0) == 0 || env.rfind("FW", 0) == 0)) {
    return std::string(env.rfind("BT", 0) == 0 ? "bt-gen-" : "fw-gen-") + env.substr(2);
  }
  return std::nullopt;
}

const char* kTypicalPolicies =
    "policies:\n"
    "  - {name: idle-trainers, resource: baseten.run, where: {mode: dedicated, lifecycle: running, idle_for: \">= 20m\"},"
    " action: deactivate, grace: 10m}\n"
    "  - {name: forgotten-endpoints, resource: baseten.deployment, where: {lifecycle: running, no_traffic_for: \">= 2h\"},"
    " action: deactivate, grace: 30m}\n"
    "  - {name: idle-samplers, resource: baseten.sampler, where: {lifecycle: running, flags: [standalone],"
    " no_traffic_for: \">= 1h\"}, action: deactivate, grace: 10m}\n"
    "  - {name: idle-rlor, resource: fireworks.rlor_job, where: {lifecycle: running, idle_for: \">= 30m\"},"
    " action: cancel, grace: 10m}\n"
    "  - {name: idle-sessions, resource: fireworks.training_session, where: {lifecycle: running, idle_for: \">= 2h\"},"
    " action: notify}\n"
    "  - {name: orphaned-rollouts, resource: fireworks.deployment, where: {lifecycle: running, flags: [orphaned]},"
    " action: scale_to_zero, grace: 10m}\n";

}  // namespace loopwarden::bench
