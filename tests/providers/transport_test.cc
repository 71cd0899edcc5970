// Retries, budgets, error classes from injected faults, and a full listing at 10k.
#include <doctest/doctest.h>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <memory>

#include "core/clock.h"
#include "core/json.h"
#include "net/http_server.h"
#include "providers/errors.h"
#include "providers/transport.h"
#include "tests/testing/run_async.h"

#include "tests/providers/provider_fixture.h"

using namespace loopwarden;
using namespace loopwarden::testing;
using namespace std::chrono_literals;

namespace {

const char* kScenario = R"(
baseten:
  - org: acme
    keys: [{key: bt-key, owner: ana@example.com}]
    runs:
      - {id: r1, mode: dedicated, created: -1h, activity: [{from: -1h, to: forever}]}
)";

int64_t Requests(ProviderFixture& f) {
  auto r = f.Sim("GET", "/_sim/faults");
  return boost::json::parse(r.body).at("requests").as_int64();
}

}  // namespace

TEST_CASE("retries stop at their budget: 5 attempts for a GET, one for a call that is not safe to repeat") {
  // 600x: the up-to-30 s backoffs pass in milliseconds of real time.
  ProviderFixture f(kScenario, {.scale = 600});
  REQUIRE(f.Sim("POST", "/_sim/faults", R"({"rules":[{"match":"/v1/loops/runs*","error_rate":1.0}]})").status == 200);
  const int64_t before = Requests(f);
  auto r = f.Refresh(Resource{.kind = Kind::kBasetenRun, .provider = "bt", .id = "r1"});
  CHECK_FALSE(r.ok());
  CHECK(r.status().message().find("transient") != std::string::npos);
  CHECK(Requests(f) - before == 5 + 1);  // five attempts, plus this probe's own count call
  const int64_t mid = Requests(f);
  Resource run{.kind = Kind::kBasetenRun, .provider = "bt", .id = "r1"};
  auto act = f.Act(run, ActionType::kDeactivate);
  // A 5xx after the call was sent may or may not have done it: the executor re-reads.
  CHECK(act.outcome == providers::Outcome::kUnknown);
  CHECK(Requests(f) - mid == 1 + 1);  // deactivate is never resent blindly
  CHECK(f.provider().stats().retries >= 4);
  CHECK(f.provider().stats().errors_by_class.at("transient") >= 6);
}

TEST_CASE("a call the send gate refuses is never sent and is known not to have been, and one it allows carries the lease") {
  bool allow = false;
  ProviderFixture f(kScenario, {.tweak = [&allow](providers::ProviderOptions& o) {
    o.send_gate = [&allow]() -> Result<providers::SendPermit> {
      if (!allow) return FailedPrecondition("the leader lease runs out in 0s");
      return providers::SendPermit{.send_by = std::chrono::steady_clock::now() + 10s, .lease = "host:1/7"};
    };
  }});
  Resource run{.kind = Kind::kBasetenRun, .provider = "bt", .id = "r1"};
  auto refused = f.Act(run, ActionType::kDeactivate);
  CHECK(refused.outcome == providers::Outcome::kFailed);  // not kUnknown: nothing left the process
  CHECK(refused.error.message.find("not sent") != std::string::npos);
  auto journal = boost::json::parse(f.Sim("GET", "/_sim/journal").body).at("entries").as_array();
  CHECK(journal.empty());
  // Reads never ask the gate.
  CHECK(f.Refresh(run).ok());
  allow = true;
  auto done = f.Act(run, ActionType::kDeactivate);
  CHECK(done.outcome == providers::Outcome::kDone);
  journal = boost::json::parse(f.Sim("GET", "/_sim/journal").body).at("entries").as_array();
  REQUIRE(journal.size() == 1);
  CHECK(journal[0].at("lease").as_string() == "host:1/7");
}

TEST_CASE("Retry-After from a 429 is honoured on the shared clock") {
  ProviderFixture f(kScenario, {.scale = 600});
  REQUIRE(f.Sim("POST", "/_sim/faults",
                R"({"rules":[{"match":"/v1/loops/runs/r1","rate_limit_rate":1.0,"retry_after_seconds":20}]})").status == 200);
  const Time start = f.clock().Now();
  auto r = f.Refresh(Resource{.kind = Kind::kBasetenRun, .provider = "bt", .id = "r1"});
  CHECK_FALSE(r.ok());
  // Four waits of at least 20 s each, then it gives up (5 attempts).
  CHECK(f.clock().Now() - start >= 80s);
  CHECK(f.provider().stats().errors_by_class.at("rate_limited") == 5);
}

TEST_CASE("every error class from injected faults") {
  ProviderFixture f(kScenario, {.scale = 600, .tweak = [](providers::ProviderOptions& o) { o.max_attempts = 1; }});
  const Resource run{.kind = Kind::kBasetenRun, .provider = "bt", .id = "r1"};
  auto expect = [&](const char* rule, providers::ErrorClass cls) {
    REQUIRE(f.Sim("POST", "/_sim/faults", rule).status == 200);
    auto act = f.Act(run, ActionType::kDeactivate);
    CAPTURE(rule);
    CHECK(act.error.cls == cls);
    REQUIRE(f.Sim("POST", "/_sim/faults", "{}").status == 200);
  };
  expect(R"({"rules":[{"match":"/v1/loops/runs/*","error_rate":1.0}]})", providers::ErrorClass::kTransient);
  expect(R"({"rules":[{"match":"/v1/loops/runs/*","rate_limit_rate":1.0}]})", providers::ErrorClass::kRateLimited);
  expect(R"({"rules":[{"match":"/v1/loops/runs/*","reset_rate":1.0}]})", providers::ErrorClass::kTransient);
  expect(R"({"rules":[{"match":"/v1/loops/runs/*","malformed_rate":1.0}]})", providers::ErrorClass::kTransient);
  // A reset after a deactivate was sent: outcome unknown, to be settled by re-reading.
  REQUIRE(f.Sim("POST", "/_sim/faults", R"({"rules":[{"match":"/v1/loops/runs/*","reset_rate":1.0}]})").status == 200);
  CHECK(f.Act(run, ActionType::kDeactivate).outcome == providers::Outcome::kUnknown);
  REQUIRE(f.Sim("POST", "/_sim/faults", "{}").status == 200);
  // The provider's own refusals.
  CHECK(f.Act(Resource{.kind = Kind::kBasetenRun, .provider = "bt", .id = "nope"}, ActionType::kDeactivate).error.cls ==
        providers::ErrorClass::kNotFound);
}

TEST_CASE("auth failures: a wrong key is auth, never retried, and the listing partial") {
  ProviderFixture f(kScenario, {.key = "wrong"});
  const int64_t before = Requests(f);
  auto inv = f.List();
  CHECK_FALSE(inv.complete);
  CHECK(inv.failures.at(0).error.cls == providers::ErrorClass::kAuth);
  CHECK(Requests(f) - before == 5 + 1);  // prices + four listings, once each
}

TEST_CASE("a full paginated listing of 10k resources") {
  ProviderFixture bt("generate: {resources: 10000, accounts: 2, seed: 3}\n", {.key = "bt-gen-0"});
  auto binv = bt.List();
  CHECK(binv.complete);
  size_t want_bt = 0;
  for (const auto& org : bt.sim().world().orgs) {
    want_bt += org.runs.size() + org.samplers.size() + org.deployments.size();
    for (const auto& r : org.runs) want_bt += r.dedicated ? 1 : 0;  // each dedicated run's Loops deployment
  }
  CHECK(binv.resources.size() == want_bt);
  ProviderFixture fw("generate: {resources: 10000, accounts: 2, seed: 3}\n",
                     {.type = ProviderType::kFireworks, .key = "fw-gen-0", .account = "gen-acct-0"});
  auto finv = fw.List();
  CHECK(finv.complete);
  size_t visible = 0;
  const Time now = fw.clock().Now();
  for (const auto& a : fw.sim().world().accounts) {
    for (const auto& s : a.sessions) visible += sim::SessionVisible(s, fw.sim().world().switches, now);
    visible += a.jobs.size() + a.deployments.size();
  }
  CHECK(finv.resources.size() == visible);
  CHECK(finv.resources.size() > 4000);
}

namespace {

const char* kFireworksScenario = R"(
fireworks:
  - account: acme-ml
    keys: [{key: fw-key, owner: ana@example.com}]
    sessions:
      - {id: ts-11111111111111111111111111111111, created: -30m}
    deployments:
      - {id: dep1, created: -5h, accelerator: NVIDIA_H100_80GB, accelerator_count: 1, min_replicas: 1, max_replicas: 1}
)";

// Mutating calls the simulator ran whose method and path match.
size_t Ran(ProviderFixture& f, const std::string& method, const std::string& needle) {
  auto j = boost::json::parse(f.Sim("GET", "/_sim/journal").body).as_object().at("entries").as_array();
  size_t n = 0;
  for (const auto& e : j) {
    const auto& o = e.as_object();
    n += o.at("method").as_string() == method && std::string(o.at("path").as_string()).find(needle) != std::string::npos;
  }
  return n;
}

}  // namespace

TEST_CASE("a state change that may have reached the provider is sent once: resets, truncation and 5xx") {
  // Issue 17: one scale-to-zero produced 7 PATCHes under reset/truncate faults (the
  // pool's stale-connection resend, then the transport's retries). Now the call goes
  // once on a fresh connection and an ambiguous failure is left to the executor's re-read.
  ProviderFixture f(kFireworksScenario, {.type = ProviderType::kFireworks, .key = "fw-key", .account = "acme-ml", .scale = 600});
  REQUIRE(f.List().complete);  // leaves a pooled connection behind
  const Resource dep{.kind = Kind::kFireworksDeployment, .provider = "fw", .id = "dep1"};
  const Resource session{.kind = Kind::kFireworksTrainingSession, .provider = "fw", .id = "ts-11111111111111111111111111111111"};
  size_t patches = 0;
  for (std::string fault : {"reset_rate", "truncate_rate", "error_rate"}) {
    CAPTURE(fault);
    const std::string rule =
        R"({"rules":[{"match":"/v1/accounts/acme-ml/*","methods":["PATCH","DELETE"],")" + fault + R"(":1.0}]})";
    REQUIRE(f.Sim("POST", "/_sim/faults", rule).status == 200);
    const int64_t before = Requests(f);
    auto out = f.Act(dep, ActionType::kScaleToZero);
    CHECK(out.outcome == providers::Outcome::kUnknown);
    CHECK(Requests(f) - before == 1 + 1);  // the PATCH, plus this probe's own count call
    // The simulator runs the PATCH and then loses its answer; its 5xx comes before running it.
    if (fault != "error_rate") ++patches;
    CHECK(Ran(f, "PATCH", "deployments/dep1") == patches);
  }
  // A DELETE (harmless to repeat, but still a call whose answer was lost) likewise.
  REQUIRE(f.Sim("POST", "/_sim/faults",
                R"({"rules":[{"match":"/v1/accounts/acme-ml/*","methods":["DELETE"],"reset_rate":1.0}]})").status == 200);
  CHECK(f.Act(session, ActionType::kDelete).outcome == providers::Outcome::kUnknown);
  CHECK(Ran(f, "DELETE", "trainingSessions/") == 1);
  // A 429 says nothing was done: that one is retried, and ends as a plain failure.
  REQUIRE(f.Sim("POST", "/_sim/faults",
                R"({"rules":[{"match":"/v1/accounts/acme-ml/*","methods":["PATCH"],"rate_limit_rate":1.0,"retry_after_seconds":1}]})")
              .status == 200);
  const int64_t before = Requests(f);
  auto limited = f.Act(dep, ActionType::kScaleToZero);
  CHECK(limited.outcome == providers::Outcome::kFailed);
  CHECK(Requests(f) - before == 5 + 1);
  CHECK(Ran(f, "PATCH", "deployments/dep1") == patches);  // none of them ran
}

TEST_CASE("a reply's page DOM stays in the arena the reply owns when it is moved, assigned or copied") {
  // Boost.JSON deep-copies a value onto the heap when it is move-assigned across memory
  // resources; at 100k resources that copy and its frees were a third of the steady cycle.
  auto arena = std::make_shared<boost::json::monotonic_resource>();
  auto parsed = json::Parse(R"({"runs":[{"id":"r1"},{"id":"r2"}],"next":null})", "test", 1 << 20,
                            boost::json::storage_ptr(arena.get()));
  REQUIRE(parsed.ok());
  // Owned by the Reply, not through the DOM: destroying the DOM frees nothing node by node.
  CHECK_FALSE(parsed->storage().is_shared());
  CHECK(parsed->storage().is_deallocate_trivial());
  auto a = std::make_unique<providers::Reply>();
  a->arena = arena;
  std::destroy_at(&a->json);
  std::construct_at(&a->json, std::move(*parsed));
  a->status = 200;
  const boost::json::memory_resource* where = arena.get();
  arena.reset();  // the reply alone holds it now
  providers::Reply b;
  b = std::move(*a);
  a.reset();
  CHECK(b.status == 200);
  CHECK(b.arena.get() == where);
  CHECK(b.json.storage().get() == where);
  CHECK(b.json.at("runs").as_array().size() == 2);
  providers::Reply d;
  {
    providers::Reply c(std::move(b));
    CHECK(c.json.storage().get() == where);
    d = c;  // a copy shares the arena: it lives while any copy does
  }
  CHECK(d.arena.get() == where);
  CHECK(d.json.storage().get() == where);
  CHECK(d.json.at("runs").at(1).at("id").as_string() == "r2");  // read after the others are gone
}

TEST_CASE("Send parses a page into an arena the reply owns, and a page it cannot parse leaves none behind") {
  boost::asio::io_context ioc;
  auto server = net::HttpServer::Start(ioc, {}, [](const net::HttpRequest& r) {
    if (r.Path() == "/broken") return net::JsonResponse(200, R"({"runs":[{"id":)");
    return net::JsonResponse(200, R"({"runs":[{"id":"r1"},{"id":"r2"}],"next":null})");
  });
  REQUIRE(server.ok());
  ManualClock clock(kEpoch);
  providers::TransportOptions o;
  o.base_url = "http://127.0.0.1:" + std::to_string((*server)->port());
  o.classify = providers::ClassifyBaseten;
  o.retry.max_attempts = 1;  // a malformed page is retryable; one attempt says what it leaves
  auto transport = providers::Transport::Create(ioc, clock, o);
  REQUIRE(transport.ok());
  providers::Reply good, broken;
  RunAsync(ioc, [&]() -> boost::asio::awaitable<void> {
    good = co_await (*transport)->Send({"GET", "/runs"});
    broken = co_await (*transport)->Send({"GET", "/broken"});
  }());
  REQUIRE(good.ok());
  REQUIRE(good.arena != nullptr);
  // The DOM lives in the reply's arena through a non-owning pointer, so destroying it
  // walks nothing (Reply::arena).
  CHECK(good.json.storage().get() == good.arena.get());
  CHECK_FALSE(good.json.storage().is_shared());
  CHECK(good.json.storage().is_deallocate_trivial());
  CHECK(good.json.at("runs").at(1).at("id").as_string() == "r2");
  CHECK_FALSE(broken.ok());
  CHECK(broken.error.detail == "malformed");
  CHECK(broken.arena == nullptr);
  CHECK(broken.json.is_null());
}

TEST_CASE("a call read by its caller's parser gets the body unparsed, and a body it refuses is retried as malformed") {
  boost::asio::io_context ioc;
  auto server = net::HttpServer::Start(ioc, {}, [](const net::HttpRequest&) {
    return net::JsonResponse(200, R"({"runs":[{"id":"r1"}]})");
  });
  REQUIRE(server.ok());
  ManualClock clock(kEpoch);
  providers::TransportOptions o;
  o.base_url = "http://127.0.0.1:" + std::to_string((*server)->port());
  o.classify = providers::ClassifyBaseten;
  o.retry.max_attempts = 3;
  auto transport = providers::Transport::Create(ioc, clock, o);
  REQUIRE(transport.ok());
  int reads = 0;
  std::string seen, named;
  size_t room_past_end = 0;
  auto call = [&](int refusals) {
    providers::Call c("GET", "/runs?scope=org");
    c.read = [&, refusals](const std::string& body, std::string_view what) {
      seen = body;
      room_past_end = body.capacity() - body.size();
      named = what;
      return ++reads <= refusals ? InvalidArgument("not a runs page") : Status::Ok();
    };
    return c;
  };
  // Runs `c` to its reply, moving the clock over each retry's backoff (at most 10 times).
  auto send = [&](providers::Call c) {
    providers::Reply reply;
    bool done = false;
    boost::asio::co_spawn(ioc, [&]() -> boost::asio::awaitable<void> { reply = co_await (*transport)->Send(std::move(c)); },
                          [&](std::exception_ptr) { done = true; });
    ioc.restart();
    for (int i = 0; i < 1000 && !done; ++i) {
      ioc.run_one_for(std::chrono::milliseconds(20));
      if (auto next = clock.NextDeadline(); next && i % 10 == 9) clock.Set(*next);
    }
    REQUIRE(done);
    return reply;
  };
  providers::Reply once = send(call(1));
  CHECK(once.ok());
  CHECK(reads == 2);  // refused once, retried, read
  CHECK(once.attempts == 2);
  CHECK(seen == R"({"runs":[{"id":"r1"}]})");
  CHECK(named == "GET /runs?scope=org");
  CHECK(room_past_end >= 64);  // simdjson's padding: the body is parsed where it is
  CHECK(once.json.is_null());  // no DOM was built beside the caller's reading
  CHECK(once.arena == nullptr);
  reads = 0;
  providers::Reply never = send(call(100));
  CHECK_FALSE(never.ok());
  CHECK(reads == 3);  // every attempt refused
  CHECK(never.error.detail == "malformed");
  CHECK(never.error.message == "not a runs page");
}
