// The admin endpoints as handlers: routing, auth, validation.
#include <doctest/doctest.h>

#include <boost/json/parse.hpp>
#include <iostream>
#include <sstream>

#include "core/log.h"

#include "daemon/admin.h"
#include "tests/store/fixtures.h"
#include "tests/testing/temp_dir.h"

namespace loopwarden::testing {
namespace {

struct AdminFixture {
  AdminFixture() : clock(kT0) {
    auto s = store::Store::Open({.path = dir.File("a.db")});
    REQUIRE(s.ok());
    st = std::move(*s);
    ListedResource r = Run("r1");
    store::Snapshot snap = Snap({r});
    REQUIRE(st->Ingest(std::span<const store::Snapshot>(&snap, 1), kT0, Prices()).ok());
    ctx.metrics = &metrics;
    ctx.store = st.get();
    ctx.clock = &clock;
    ctx.admin_token = [this] { return token; };
    ctx.healthy = [] { return std::make_pair(true, std::string()); };
    ctx.ready = [this] { return std::make_pair(ready, std::string("shutting down")); };
    ctx.on_snooze = [this] { ++snoozed; };
  }
  net::HttpResponse Call(const std::string& method, const std::string& target, const std::string& body = "",
                         const std::string& auth = "") {
    net::HttpRequest req;
    req.method = method;
    req.url = target;
    req.body = body;
    if (!auth.empty()) req.headers.emplace_back("Authorization", auth);
    return daemon::HandleAdmin(ctx, req);
  }
  TempDir dir;
  ManualClock clock;
  std::unique_ptr<store::Store> st;
  exporters::Metrics metrics;
  daemon::AdminContext ctx;
  std::string token = "s3cret-token";
  bool ready = true;
  int snoozed = 0;
};

TEST_CASE("admin: /metrics in text format 0.0.4, health and readiness, 404 and 405") {
  AdminFixture f;
  auto m = f.Call("GET", "/metrics");
  CHECK(m.status == 200);
  CHECK(m.Header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8");
  CHECK(m.body.find("loopwarden_up") != std::string::npos);
  CHECK(f.Call("GET", "/healthz").status == 200);
  CHECK(f.Call("GET", "/readyz").status == 200);
  f.ready = false;
  auto r = f.Call("GET", "/readyz");
  CHECK(r.status == 503);
  CHECK(r.body == "shutting down\n");
  CHECK(f.Call("GET", "/nope").status == 404);
  auto post = f.Call("POST", "/metrics");
  CHECK(post.status == 405);
  CHECK(post.Header("Allow") == "GET");
  CHECK(f.Call("GET", "/v1/snooze").status == 405);
  CHECK(f.Call("GET", "/v1/plan").status == 503);  // no cycle yet
}

TEST_CASE("admin: /v1/resources lists what the store knows, with filters checked") {
  AdminFixture f;
  auto r = f.Call("GET", "/v1/resources?kind=baseten.run");
  REQUIRE(r.status == 200);
  auto o = boost::json::parse(r.body).as_object();
  CHECK(o.at("count").to_number<int64_t>() == 1);
  CHECK(o.at("resources").as_array()[0].as_object().at("id").as_string() == "r1");
  CHECK(f.Call("GET", "/v1/resources?kind=baseten.nothing").status == 400);
  CHECK(f.Call("GET", "/v1/resources?limit=abc").status == 400);
  auto none = boost::json::parse(f.Call("GET", "/v1/resources?provider=other").body).as_object();
  CHECK(none.at("count").to_number<int64_t>() == 0);
}

TEST_CASE("admin: POST /v1/snooze needs the bearer token and a valid body") {
  AdminFixture f;
  const std::string ok = R"({"resource":"r1","for":"2h","reason":"long eval","by":"ana"})";
  auto no_auth = f.Call("POST", "/v1/snooze", ok);
  CHECK(no_auth.status == 401);
  CHECK(no_auth.Header("WWW-Authenticate").find("Bearer") == 0);
  CHECK(f.Call("POST", "/v1/snooze", ok, "Bearer wrong").status == 401);
  CHECK(f.Call("POST", "/v1/snooze", ok, "Basic czNjcmV0LXRva2Vu").status == 401);
  CHECK(f.Call("POST", "/v1/snooze", ok, "Bearer s3cret-token-longer").status == 401);
  const std::string auth = "Bearer s3cret-token";
  CHECK(f.Call("POST", "/v1/snooze", "not json", auth).status == 400);
  CHECK(f.Call("POST", "/v1/snooze", R"({"resource":"r1","for":"2h"})", auth).status == 400);          // no reason
  CHECK(f.Call("POST", "/v1/snooze", R"({"resource":"r1","reason":"x"})", auth).status == 400);         // no for/until
  CHECK(f.Call("POST", "/v1/snooze", R"({"resource":"r1","for":"soon","reason":"x"})", auth).status == 400);
  CHECK(f.Call("POST", "/v1/snooze", R"({"resource":"r1","for":"2h","reason":"x","extra":1})", auth).status == 400);
  CHECK(f.Call("POST", "/v1/snooze", R"({"resource":"r1","until":"2020-01-01T00:00:00Z","reason":"x"})", auth).status == 400);
  auto unknown = f.Call("POST", "/v1/snooze", R"({"resource":"nope","for":"2h","reason":"x"})", auth);
  CHECK(unknown.status == 404);
  CHECK(f.snoozed == 0);
  auto created = f.Call("POST", "/v1/snooze", ok, auth);
  REQUIRE(created.status == 201);
  CHECK(f.snoozed == 1);
  auto active = f.st->ActiveSnoozes(kT0);
  REQUIRE(active.ok());
  REQUIRE(active->size() == 1);
  CHECK((*active)[0].resource == "r1");
  CHECK((*active)[0].by == "ana");
  CHECK((*active)[0].until == kT0 + std::chrono::hours(2));

  f.token.clear();
  CHECK(f.Call("POST", "/v1/snooze", ok, auth).status == 403);
}

TEST_CASE("admin: constant-time comparison compares whole strings") {
  CHECK(daemon::ConstantTimeEquals("abc", "abc"));
  CHECK(!daemon::ConstantTimeEquals("abc", "abd"));
  CHECK(!daemon::ConstantTimeEquals("abc", "abcd"));
  CHECK(!daemon::ConstantTimeEquals("", "a"));
  CHECK(daemon::ConstantTimeEquals("", ""));
}


TEST_CASE("hardening: refused snooze tokens are logged at most once a minute, with how many were not") {
  AdminFixture f;
  std::ostringstream out;
  Log().set_output(&out);
  for (int i = 0; i < 1000; ++i) CHECK(f.Call("POST", "/v1/snooze", "{}", "Bearer wrong").status == 401);
  f.clock.Advance(std::chrono::minutes(1));
  CHECK(f.Call("POST", "/v1/snooze", "{}", "Bearer wrong").status == 401);
  Log().set_output(&std::cout);
  const std::string log = out.str();
  size_t lines = 0;
  for (size_t p = log.find("snooze refused"); p != std::string::npos; p = log.find("snooze refused", p + 1)) ++lines;
  CHECK(lines == 2);
  CHECK(log.find("\"refused_since_last_line\":999") != std::string::npos);
}

}  // namespace
}  // namespace loopwarden::testing
