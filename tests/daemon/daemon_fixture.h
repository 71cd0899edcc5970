#pragma once
// The daemon's reconcile machinery in one process: loopwarden-sim's handler behind a
// real loopback server, the providers, a real SQLite store and the reconciler, all on
// one ManualClock, so grace periods pass by Advance() and never by sleeping.

#include <doctest/doctest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "config/config.h"
#include "exporters/metrics.h"
#include "net/http_server.h"
#include "reconcile/reconciler.h"
#include "reconcile/setup.h"
#include "sim/simulator.h"
#include "store/store.h"
#include "tests/testing/run_async.h"
#include "tests/testing/temp_dir.h"

namespace loopwarden::testing {

inline const Time kDaemonEpoch = ParseTime("2026-08-01T12:00:00Z").value();

class DaemonFixture {
 public:
  // `policies` is the YAML under `policies:`; `extra` more top-level keys.
  DaemonFixture(const std::string& policies, const std::string& extra = "dry_run: false\n",
                const std::string& scenario_path = "sim/scenarios/demo.yaml")
      : clock_(kDaemonEpoch) {
    std::ifstream in(scenario_path);
    REQUIRE_MESSAGE(in.good(), "cannot read " << scenario_path << " (run from the repository root)");
    std::stringstream ss;
    ss << in.rdbuf();
    auto sc = sim::LoadScenarioText(ss.str(), scenario_path, kDaemonEpoch);
    REQUIRE_MESSAGE(sc.ok(), sc.status().message());
    sim_ = std::make_unique<sim::Simulator>(clock_, std::move(*sc));
    auto server = net::HttpServer::Start(ioc_, {}, [this](const net::HttpRequest& r) { return sim_->Handle(r); });
    REQUIRE(server.ok());
    server_ = std::move(*server);
    const std::string url = "http://127.0.0.1:" + std::to_string(server_->port());
    const std::string yaml =
        "state_path: " + dir_.File("state.db") + "\n" + extra +
        "providers:\n"
        "  - {name: bt, type: baseten, base_url: \"" + url + "\", api_key_env: BT_KEY, activity_window: 4h,"
        " requests_per_minute: 1000000}\n"
        "  - {name: fw, type: fireworks, account: acme-ml, base_url: \"" + url + "\", api_key_env: FW_KEY,"
        " requests_per_minute: 1000000}\n"
        "pricing: {gpu_hour_usd: {H100: 6.50, H200: 7.00}}\n"
        "limits: {max_actions_per_cycle: 20, max_actions_percent: 100}\n"
        "policies:\n" + policies;
    config::LoadOptions lo;
    lo.env = [](std::string_view k) -> std::optional<std::string> {
      if (k == "BT_KEY") return std::string("bt-demo-key");
      if (k == "FW_KEY") return std::string("fw-demo-key");
      return std::nullopt;
    };
    auto cfg = config::LoadConfigText(yaml, "test.yaml", lo);
    REQUIRE_MESSAGE(cfg.ok(), cfg.status().message());
    auto store = store::Store::Open({.path = cfg->state_path});
    REQUIRE(store.ok());
    store_ = std::move(*store);
    auto setup = reconcile::MakeSetup(ioc_, clock_, std::move(*cfg));
    REQUIRE(setup.ok());
    setup_ = std::move(*setup);
    rec_ = std::make_unique<reconcile::Reconciler>(clock_, *store_, metrics_, nullptr);
    rec_->SetSetup(setup_.get());
  }

  // With `advance`, the clock moves 1 s every 2 ms of real time while the cycle runs,
  // so provider retries and backoff (which wait on the clock) can complete.
  reconcile::CycleReport Cycle(bool poll = true, bool advance = false) {
    reconcile::CycleReport out;
    bool done = false;
    if (advance) boost::asio::co_spawn(ioc_, Ticker(&clock_, &done), boost::asio::detached);
    RunAsync(ioc_, RunCycle(rec_.get(), poll, &out, &done), std::chrono::seconds(30));
    return out;
  }
  void Advance(Duration d) { clock_.Advance(d); }
  // Settles open intents, as the daemon does at start and while any are unresolved.
  Status Recover() {
    Status out;
    RunAsync(ioc_, RecoverInto(rec_.get(), &out));
    return out;
  }
  net::HttpResponse Sim(const std::string& method, const std::string& path, const std::string& body = "",
                        net::Headers headers = {}) {
    net::HttpRequest req;
    req.method = method;
    req.url = path;
    req.body = body;
    req.headers = std::move(headers);
    return sim_->Handle(req);
  }
  // Mutating provider calls so far whose path contains `needle`.
  size_t Calls(const std::string& needle) {
    auto j = boost::json::parse(Sim("GET", "/_sim/journal").body).as_object().at("entries").as_array();
    size_t n = 0;
    for (const auto& e : j) n += std::string(e.as_object().at("path").as_string()).find(needle) != std::string::npos;
    return n;
  }
  bool Marked(const std::string& policy, const std::string& key) const { return store_->marks().count({policy, key}) > 0; }
  store::Store& store() { return *store_; }
  reconcile::Reconciler& reconciler() { return *rec_; }
  ManualClock& clock() { return clock_; }
  exporters::Metrics& metrics() { return metrics_; }

 private:
  static boost::asio::awaitable<void> RunCycle(reconcile::Reconciler* r, bool poll, reconcile::CycleReport* out, bool* done) {
    *out = co_await r->Cycle(poll);
    *done = true;
  }
  static boost::asio::awaitable<void> RecoverInto(reconcile::Reconciler* r, Status* out) { *out = co_await r->Recover(); }
  static boost::asio::awaitable<void> Ticker(ManualClock* clock, bool* done) {
    boost::asio::steady_timer t(co_await boost::asio::this_coro::executor);
    for (int i = 0; i < 10000 && !*done; ++i) {
      t.expires_after(std::chrono::milliseconds(2));
      co_await t.async_wait(boost::asio::use_awaitable);
      clock->Advance(std::chrono::seconds(1));
    }
  }
  boost::asio::io_context ioc_;
  ManualClock clock_;
  TempDir dir_;
  std::unique_ptr<sim::Simulator> sim_;
  std::unique_ptr<net::HttpServer> server_;
  std::unique_ptr<store::Store> store_;
  exporters::Metrics metrics_;
  std::unique_ptr<reconcile::Setup> setup_;
  std::unique_ptr<reconcile::Reconciler> rec_;
};

}  // namespace loopwarden::testing
