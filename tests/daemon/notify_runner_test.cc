// The notifier worker against an in-process receiver, on a ManualClock: batching,
// pacing, Retry-After, 410 Gone and deduplication across restarts.
#include <doctest/doctest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <deque>

#include "net/http_server.h"
#include "reconcile/notify_runner.h"
#include "tests/testing/run_async.h"
#include "tests/testing/temp_dir.h"

namespace loopwarden::testing {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

const Time kT = ParseTime("2026-08-01T00:00:00Z").value();

struct NotifyFixture {
  NotifyFixture() : clock(kT) {
    auto s = store::Store::Open({.path = dir.File("n.db")});
    REQUIRE(s.ok());
    st = std::move(*s);
    auto srv = net::HttpServer::Start(ioc, {}, [this](const net::HttpRequest& r) {
      got.push_back(r);
      net::HttpResponse resp;
      resp.body = "ok";
      if (!answers.empty()) {
        resp = answers.front();
        answers.pop_front();
      }
      return resp;
    });
    REQUIRE(srv.ok());
    server = std::move(*srv);
    runner = std::make_unique<reconcile::NotifyRunner>(ioc, clock, *st, metrics);
  }
  std::string Url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(server->port()) + path; }
  config::NotifierConfig Slack() const {
    config::NotifierConfig n;
    n.name = "slack";
    n.type = config::NotifierType::kSlack;
    n.webhook_url.value = Url("/services/T/B/x");
    n.webhook_url.source = "test";
    return n;
  }
  config::NotifierConfig Hook() const {
    config::NotifierConfig n;
    n.name = "hook";
    n.type = config::NotifierType::kWebhook;
    n.url = Url("/hook");
    n.secret.value = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    n.secret.source = "test";
    return n;
  }
  static reconcile::Outgoing Event(const std::string& policy, const std::string& resource, std::string notifier = "slack") {
    reconcile::Outgoing o;
    o.event.type = "marked";
    o.event.policy = policy;
    o.event.resource = resource;
    o.event.action = "deactivate";
    o.event.reason = "idle 40m";
    o.event.dedupe_key = "marked|" + policy + "|" + resource;
    o.notifiers = {std::move(notifier)};
    return o;
  }
  // Runs the worker and `body` together until `body` finishes.
  template <class F>
  void Run(F body) {
    bool worker_done = false;
    asio::co_spawn(ioc, runner->Run(), [&](std::exception_ptr) { worker_done = true; });
    RunAsync(ioc, body(), 30s);
    runner->Stop();
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (!worker_done && std::chrono::steady_clock::now() < deadline) ioc.run_one_for(20ms);
    CHECK(worker_done);
  }
  // Waits in real time (bounded) for the receiver to have `n` requests.
  asio::awaitable<bool> WaitFor(size_t n) {
    asio::steady_timer t(co_await asio::this_coro::executor);
    for (int i = 0; i < 250 && got.size() < n; ++i) {
      t.expires_after(20ms);
      co_await t.async_wait(asio::use_awaitable);
    }
    co_return got.size() >= n;
  }
  // Waits until the runner has handled `n` answers (not just until the receiver saw the
  // request: the verdict, and any retry time, come after).
  asio::awaitable<bool> WaitForDeliveries(uint64_t n) {
    asio::steady_timer t(co_await asio::this_coro::executor);
    for (int i = 0; i < 250 && runner->deliveries() < n; ++i) {
      t.expires_after(20ms);
      co_await t.async_wait(asio::use_awaitable);
    }
    co_return runner->deliveries() >= n;
  }
  asio::awaitable<void> Pause() {
    asio::steady_timer t(co_await asio::this_coro::executor);
    t.expires_after(150ms);
    co_await t.async_wait(asio::use_awaitable);
  }

  asio::io_context ioc;
  ManualClock clock;
  TempDir dir;
  std::unique_ptr<store::Store> st;
  exporters::Metrics metrics;
  std::unique_ptr<net::HttpServer> server;
  std::vector<net::HttpRequest> got;
  std::deque<net::HttpResponse> answers;
  std::unique_ptr<reconcile::NotifyRunner> runner;
};

TEST_CASE("notifier: one message per policy, a second apart, each event delivered once even across a restart") {
  NotifyFixture f;
  REQUIRE(f.runner->Configure({f.Slack()}).ok());
  f.Run([&]() -> asio::awaitable<void> {
    f.runner->Enqueue({NotifyFixture::Event("a", "r1"), NotifyFixture::Event("a", "r2"), NotifyFixture::Event("b", "r3")});
    CHECK(co_await f.WaitForDeliveries(1));
    co_await f.Pause();
    CHECK(f.got.size() == 1);  // Slack pacing: the next message waits a second
    f.clock.Advance(1s);
    CHECK(co_await f.WaitFor(2));
    // The same events again: already delivered.
    f.runner->Enqueue({NotifyFixture::Event("a", "r1"), NotifyFixture::Event("b", "r3")});
    f.clock.Advance(2s);
    co_await f.Pause();
    CHECK(f.got.size() == 2);
  });
  REQUIRE(f.got.size() == 2);
  CHECK(f.got[0].body.find("r1") != std::string::npos);
  CHECK(f.got[0].body.find("r2") != std::string::npos);
  CHECK(f.got[0].body.find("r3") == std::string::npos);
  CHECK(f.got[1].body.find("r3") != std::string::npos);

  // A new runner on the same store (a restart) does not resend.
  f.runner = std::make_unique<reconcile::NotifyRunner>(f.ioc, f.clock, *f.st, f.metrics);
  REQUIRE(f.runner->Configure({f.Slack()}).ok());
  f.Run([&]() -> asio::awaitable<void> {
    f.runner->Enqueue({NotifyFixture::Event("a", "r1")});
    f.clock.Advance(5s);
    co_await f.Pause();
  });
  CHECK(f.got.size() == 2);
}

TEST_CASE("notifier: a 429 is retried only after its Retry-After, and a failure never blocks later messages") {
  NotifyFixture f;
  REQUIRE(f.runner->Configure({f.Slack()}).ok());
  net::HttpResponse busy;
  busy.status = 429;
  busy.headers = {{"Retry-After", "30"}};
  f.answers.push_back(busy);
  f.Run([&]() -> asio::awaitable<void> {
    f.runner->Enqueue({NotifyFixture::Event("a", "r1")});
    CHECK(co_await f.WaitForDeliveries(1));
    f.clock.Advance(20s);
    co_await f.Pause();
    CHECK(f.got.size() == 1);  // not before Retry-After
    f.clock.Advance(15s);
    CHECK(co_await f.WaitFor(2));
  });
  CHECK(f.got.size() == 2);
  auto recorded = f.st->NotificationRecorded(reconcile::DeliveryKey(NotifyFixture::Event("a", "r1").event, "slack"));
  REQUIRE(recorded.ok());
  CHECK(*recorded);
}

TEST_CASE("notifier: a webhook answering 410 Gone is disabled, and signs what it sends") {
  NotifyFixture f;
  REQUIRE(f.runner->Configure({f.Hook()}).ok());
  net::HttpResponse gone;
  gone.status = 410;
  f.answers.push_back(gone);
  f.Run([&]() -> asio::awaitable<void> {
    f.runner->Enqueue({NotifyFixture::Event("a", "r1", "hook")});
    CHECK(co_await f.WaitForDeliveries(1));
    f.clock.Advance(5s);
    f.runner->Enqueue({NotifyFixture::Event("a", "r2", "hook")});
    f.clock.Advance(5s);
    co_await f.Pause();
  });
  REQUIRE(f.got.size() == 1);
  CHECK(f.got[0].Header("webhook-signature").substr(0, 3) == "v1,");
  CHECK(!f.got[0].Header("webhook-id").empty());
  CHECK(f.metrics.RenderText().find("loopwarden_notifications_total{notifier=\"hook\",result=\"failed\"} 2") !=
        std::string::npos);
}

}  // namespace
}  // namespace loopwarden::testing
