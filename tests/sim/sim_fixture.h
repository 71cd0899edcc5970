#pragma once
// An in-process simulator behind a real loopback listener (HTTP or HTTPS), driven by a
// ManualClock so tests move simulated time by hand.

#include <doctest/doctest.h>

#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <memory>
#include <string>

#include "core/clock.h"
#include "net/http_client.h"
#include "net/http_server.h"
#include "net/tls.h"
#include "sim/simulator.h"
#include "tests/testing/run_async.h"

namespace loopwarden::testing {

inline const Time kSimEpoch = ParseTime("2026-08-01T12:00:00Z").value();

struct Reply {
  Status transport;
  int status = 0;
  std::string body;
  net::Headers headers;
  boost::json::value json;  // null when the body is not JSON
  const boost::json::object& obj() const { return json.as_object(); }
  std::string_view Header(std::string_view n) const { return net::FindHeader(headers, n); }
};

class SimFixture {
 public:
  explicit SimFixture(const std::string& scenario_yaml, bool tls = false) : clock_(kSimEpoch) {
    auto sc = sim::LoadScenarioText(scenario_yaml, "test-scenario", kSimEpoch);
    REQUIRE_MESSAGE(sc.ok(), sc.status().message());
    sim_ = std::make_unique<sim::Simulator>(clock_, std::move(*sc), [this](Duration d) { clock_.Advance(d); });
    net::ServerOptions so;
    net::ClientOptions co;
    if (tls) {
      auto id = net::MakeSelfSignedIdentity({"127.0.0.1"});
      REQUIRE(id.ok());
      so.tls = std::make_pair(id->cert_pem, id->key_pem);
      co.ca_pem = id->cert_pem;
      scheme_ = "https";
    }
    co.io_timeout = std::chrono::seconds(5);
    auto server = net::HttpServer::Start(ioc_, so, [this](const net::HttpRequest& r) { return sim_->Handle(r); });
    REQUIRE(server.ok());
    server_ = std::move(*server);
    auto client = net::HttpClient::Create(ioc_, co);
    REQUIRE(client.ok());
    client_ = std::move(*client);
  }

  Reply Call(const std::string& method, const std::string& path, const net::Headers& headers,
             const std::string& body = "") {
    Reply out;
    net::HttpRequest req;
    req.method = method;
    req.url = scheme_ + "://127.0.0.1:" + std::to_string(server_->port()) + path;
    req.headers = headers;
    req.body = body;
    RunAsync(ioc_, [&]() -> boost::asio::awaitable<void> {
      auto r = co_await client_->Send(req);
      if (!r.ok()) {
        out.transport = r.status();
        co_return;
      }
      out.status = r->status;
      out.body = r->body;
      out.headers = r->headers;
      boost::system::error_code ec;
      out.json = boost::json::parse(r->body, ec);
      if (ec) out.json = nullptr;
    }());
    return out;
  }

  Reply Bt(const std::string& method, const std::string& path, const std::string& body = "",
           const std::string& key = "bt-key") {
    return Call(method, path, {{"Authorization", "Bearer " + key}}, body);
  }
  Reply Fw(const std::string& method, const std::string& path, const std::string& body = "",
           const std::string& key = "fw-key") {
    return Call(method, path, {{"X-Api-Key", key}}, body);
  }

  void Advance(Duration d) { clock_.Advance(d); }
  Time Now() const { return clock_.Now(); }
  sim::Simulator& sim() { return *sim_; }

 private:
  boost::asio::io_context ioc_;
  ManualClock clock_;
  std::unique_ptr<sim::Simulator> sim_;
  std::unique_ptr<net::HttpServer> server_;
  std::unique_ptr<net::HttpClient> client_;
  std::string scheme_ = "http";
};

// Keys of a JSON object, for field-for-field comparisons with the spec examples.
inline std::vector<std::string> Keys(const boost::json::value& v) {
  std::vector<std::string> k;
  for (const auto& kv : v.as_object()) k.emplace_back(kv.key());
  std::sort(k.begin(), k.end());
  return k;
}

inline std::string Str(const boost::json::value& v) { return std::string(v.as_string()); }

}  // namespace loopwarden::testing
