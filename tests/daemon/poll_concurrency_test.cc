// `poll_concurrency`: how many provider accounts one poll lists at once. Each account's
// listing is held in memory until it is recorded, so the bound is a memory bound; it
// must hold, and lifting it must let the listings overlap again.
#include <doctest/doctest.h>

#include <boost/asio/io_context.hpp>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

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
namespace {

// Three Fireworks accounts (a bill is a request per day there), each behind its own loopback server in front of one
// simulator, so the order in which the servers see requests tells which account's
// listing was in flight when.
struct ThreeAccounts {
  explicit ThreeAccounts(const std::string& extra) : clock(ParseTime("2026-08-01T12:00:00Z").value()) {
    std::ifstream in("sim/scenarios/demo.yaml");
    REQUIRE_MESSAGE(in.good(), "cannot read sim/scenarios/demo.yaml (run from the repository root)");
    std::stringstream ss;
    ss << in.rdbuf();
    auto sc = sim::LoadScenarioText(ss.str(), "demo.yaml", clock.Now());
    REQUIRE_MESSAGE(sc.ok(), sc.status().message());
    sim = std::make_unique<sim::Simulator>(clock, std::move(*sc));
    std::string providers = "providers:\n";
    for (int i = 0; i < 3; ++i) {
      auto server = net::HttpServer::Start(ioc, {}, [this, i](const net::HttpRequest& r) {
        order.push_back(i);
        return sim->Handle(r);
      });
      REQUIRE(server.ok());
      providers += "  - {name: fw" + std::to_string(i) + ", type: fireworks, account: acme-ml, base_url: \"http://127.0.0.1:" +
                   std::to_string((*server)->port()) + "\", api_key_env: FW_KEY, requests_per_minute: 1000000}\n";
      servers.push_back(std::move(*server));
    }
    config::LoadOptions lo;
    lo.env = [](std::string_view k) -> std::optional<std::string> {
      if (k == "FW_KEY") return std::string("fw-demo-key");
      return std::nullopt;
    };
    auto cfg = config::LoadConfigText("state_path: " + dir.File("state.db") + "\n" + extra + providers, "test.yaml", lo);
    REQUIRE_MESSAGE(cfg.ok(), cfg.status().message());
    auto st = store::Store::Open({.path = cfg->state_path});
    REQUIRE(st.ok());
    store = std::move(*st);
    auto s = reconcile::MakeSetup(ioc, clock, std::move(*cfg));
    REQUIRE(s.ok());
    setup = std::move(*s);
    // The poll ends with the last account's listing recorded: the requests after it
    // (the usage pass) are not the poll's.
    reconcile::ReconcilerOptions ro;
    ro.on_listed = [this](const std::string&, size_t, size_t, size_t, bool) { poll_requests = order.size(); };
    rec = std::make_unique<reconcile::Reconciler>(clock, *store, metrics, nullptr, ro);
    rec->SetSetup(setup.get());
  }

  reconcile::CycleReport Poll() {
    reconcile::CycleReport out;
    RunAsync(ioc, Run(rec.get(), &out), std::chrono::seconds(30));
    return out;
  }
  static boost::asio::awaitable<void> Run(reconcile::Reconciler* r, reconcile::CycleReport* out) {
    *out = co_await r->Cycle(true);
  }

  // How often consecutive requests in [from, to) came from different accounts.
  int Switches(size_t from, size_t to) const {
    int n = 0;
    for (size_t i = from + 1; i < to; ++i) n += order[i] != order[i - 1];
    return n;
  }

  boost::asio::io_context ioc;
  ManualClock clock;
  TempDir dir;
  std::unique_ptr<sim::Simulator> sim;
  std::vector<std::unique_ptr<net::HttpServer>> servers;
  std::vector<int> order;
  size_t poll_requests = 0;
  std::unique_ptr<store::Store> store;
  exporters::Metrics metrics;
  std::unique_ptr<reconcile::Setup> setup;
  std::unique_ptr<reconcile::Reconciler> rec;
};

TEST_CASE("poll_concurrency 1: each account is listed, and its bill read, before the next one's first request") {
  ThreeAccounts f("poll_concurrency: 1\n");
  const auto rep = f.Poll();
  CHECK(rep.complete);
  REQUIRE(f.poll_requests >= 6);
  CHECK(f.Switches(0, f.poll_requests) == 2);
  // Then the first cycle's usage pass: a week of bills, a request a day, an account at
  // a time.
  REQUIRE(f.order.size() >= f.poll_requests + 3 * 7);
  CHECK(f.Switches(f.poll_requests, f.order.size()) == 2);
  CHECK(f.order.front() == 0);
  CHECK(f.order[f.poll_requests - 1] == 2);
  // Every account's resources were recorded (the demo account's, once per provider).
  CHECK(f.store->resources().size() % 3 == 0);
  CHECK(f.store->resources().size() >= 3);
}

TEST_CASE("poll_concurrency 3: the three listings overlap, and so do the bills") {
  ThreeAccounts f("poll_concurrency: 3\n");
  const auto rep = f.Poll();
  CHECK(rep.complete);
  CHECK(f.Switches(0, f.poll_requests) > 2);
  CHECK(f.Switches(f.poll_requests, f.order.size()) > 2);
}

TEST_CASE("poll_concurrency is at least 1") {
  auto cfg = config::LoadConfigText(
      "poll_concurrency: 0\nproviders:\n  - {name: fw, type: fireworks, account: a, api_key_env: FW_KEY}\n", "bad.yaml",
      {.resolve_secrets = false, .env = {}});
  REQUIRE_FALSE(cfg.ok());
  CHECK(cfg.status().message().find("poll_concurrency") != std::string::npos);
}

}  // namespace
}  // namespace loopwarden::testing
