#pragma once
// A provider adapter against an in-process loopwarden-sim over a real loopback socket,
// both on one ScaledClock (Jump moves them together).

#include <doctest/doctest.h>

#include <boost/asio/io_context.hpp>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "net/http_server.h"
#include "net/tls.h"
#include "providers/provider.h"
#include "sim/simulator.h"
#include "tests/testing/run_async.h"

namespace loopwarden::testing {

inline const Time kEpoch = ParseTime("2026-08-01T12:00:00Z").value();

struct FixtureOptions {
  ProviderType type = ProviderType::kBaseten;
  std::string key = "bt-key";
  std::string account;  // Fireworks
  bool tls = false;
  bool trust = true;  // give the client the simulator's CA
  double scale = 1.0;
  std::function<void(providers::ProviderOptions&)> tweak;
};

class ProviderFixture {
 public:
  ProviderFixture(const std::string& scenario, FixtureOptions o)
      : clock_({.epoch = kEpoch, .scale = o.scale, .anchor = std::nullopt}) {
    auto sc = sim::LoadScenarioText(scenario, "scenario", kEpoch);
    REQUIRE_MESSAGE(sc.ok(), sc.status().message());
    sim_ = std::make_unique<sim::Simulator>(clock_, std::move(*sc), [this](Duration d) { clock_.Jump(d); });
    net::ServerOptions so;
    providers::ProviderOptions po;
    if (o.tls) {
      auto id = net::MakeSelfSignedIdentity({"127.0.0.1"});
      REQUIRE(id.ok());
      so.tls = std::make_pair(id->cert_pem, id->key_pem);
      if (o.trust) {
        po.ca_pem = id->cert_pem;
      } else {
        po.ca_pem = net::MakeSelfSignedIdentity({"127.0.0.1"})->cert_pem;  // some other CA
      }
      po.use_system_cas = false;
    }
    so.max_connections = 256;
    auto server = net::HttpServer::Start(ioc_, so, [this](const net::HttpRequest& r) { return sim_->Handle(r); });
    REQUIRE(server.ok());
    server_ = std::move(*server);
    po.name = o.type == ProviderType::kBaseten ? "bt" : "fw";
    po.type = o.type;
    po.base_url = std::string(o.tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(server_->port());
    po.account = o.account;
    po.api_key = o.key;
    po.request_timeout = std::chrono::seconds(5);
    po.requests_per_minute = 1'000'000;
    po.max_detail_calls = 100000;
    po.gpu_hour_usd = {{"H100", Money::FromMicros(6'500'000)}, {"H200", Money::FromMicros(7'000'000)}};
    if (o.tweak) o.tweak(po);
    auto p = providers::MakeProvider(ioc_, clock_, po);
    REQUIRE(p.ok());
    provider_ = std::move(*p);
  }

  template <class T>
  T Await(boost::asio::awaitable<T> a) {
    std::optional<T> out;
    RunAsync(ioc_, [&]() -> boost::asio::awaitable<void> { out = co_await std::move(a); }(), std::chrono::seconds(300));
    return std::move(*out);
  }
  providers::Inventory List() { return Await(provider_->List()); }
  // List() with a sink, as the poll calls it: each resource lands in `out`.
  providers::Inventory ListInto(std::vector<ListedResource>& out) {
    return Await(provider_->List([&out](ListedResource&& r) { out.push_back(std::move(r)); }));
  }
  providers::ActionOutcome Act(const Resource& r, ActionType a) { return Await(provider_->Act(r, a)); }
  Result<providers::RefreshResult> Refresh(const Resource& r) { return Await(provider_->Refresh(r)); }
  // Calls the simulator directly (control routes), without the network.
  net::HttpResponse Sim(const std::string& method, const std::string& path, const std::string& body = "") {
    net::HttpRequest req;
    req.method = method;
    req.url = path;
    req.body = body;
    return sim_->Handle(req);
  }
  static const ListedResource* Find(const providers::Inventory& inv, const std::string& id) {
    for (const ListedResource& r : inv.resources) {
      if (r.id == id) return &r;
    }
    return nullptr;
  }
  sim::Simulator& sim() { return *sim_; }
  ScaledClock& clock() { return clock_; }
  providers::Provider& provider() { return *provider_; }

 private:
  boost::asio::io_context ioc_;
  ScaledClock clock_;
  std::unique_ptr<sim::Simulator> sim_;
  std::unique_ptr<net::HttpServer> server_;
  std::unique_ptr<providers::Provider> provider_;
};

// Lists twice, keeping the resources and then giving them to a sink: the sink gets every
// resource List() keeps, each once, with the same identity and state, and the
// Inventory keeps none of them but counts them.
inline void CheckSinkGetsWhatListKeeps(ProviderFixture& f) {
  const providers::Inventory kept = f.List();
  REQUIRE(kept.complete);
  REQUIRE_FALSE(kept.resources.empty());
  CHECK(kept.listed == kept.resources.size());
  std::vector<ListedResource> given;
  const providers::Inventory sunk = f.ListInto(given);
  CHECK(sunk.complete);
  CHECK(sunk.resources.empty());
  CHECK(sunk.listed == given.size());
  REQUIRE(given.size() == kept.resources.size());
  std::map<std::string, const ListedResource*> by_key;
  for (const ListedResource& r : given) CHECK(by_key.emplace(r.Key(), &r).second);
  for (const ListedResource& r : kept.resources) {
    CAPTURE(r.Key());
    auto it = by_key.find(r.Key());
    REQUIRE(it != by_key.end());
    CHECK(it->second->name == r.name);
    CHECK(it->second->lifecycle == r.lifecycle);
    CHECK(it->second->native_status == r.native_status);
    CHECK(it->second->billing.gpus() == r.billing.gpus());
  }
}

}  // namespace loopwarden::testing
