#include <doctest/doctest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <vector>

#include "core/clock.h"
#include "net/rate_limiter.h"
#include "net/retry.h"

namespace lw = loopwarden;
namespace net = loopwarden::net;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {
void Drain(asio::io_context& ioc) {
  ioc.restart();
  ioc.poll();
}
const lw::Time kStart = lw::ParseTime("2026-08-01T09:00:00Z").value();
}  // namespace

TEST_CASE("the rate limiter spaces requests on the injected clock, bursts allowed") {
  asio::io_context ioc;
  lw::ManualClock clock(kStart);
  net::RateLimiter limiter(clock, 18, 2);  // Baseten activate/deactivate pacing
  std::vector<lw::Time> sent;
  for (int i = 0; i < 5; ++i) {
    asio::co_spawn(ioc, [&]() -> asio::awaitable<void> {
      co_await limiter.Acquire();
      sent.push_back(clock.Now());
    }, asio::detached);
  }
  Drain(ioc);
  CHECK(sent.size() == 2);  // the burst
  const lw::Duration interval = std::chrono::microseconds(static_cast<int64_t>(60e6 / 18));
  for (int step = 0; step < 10 && sent.size() < 5; ++step) {
    clock.Advance(interval);
    Drain(ioc);
  }
  REQUIRE(sent.size() == 5);
  CHECK(sent[2] - kStart == interval);
  CHECK(sent[4] - sent[3] == interval);
  CHECK(limiter.WaitIfAcquiredNow() > lw::Duration::zero());
}

TEST_CASE("backoff uses full jitter under the cap and honours the server's delay") {
  std::mt19937_64 rng(42);
  net::RetryPolicy p;
  for (int attempt = 1; attempt <= 8; ++attempt) {
    for (int i = 0; i < 200; ++i) {
      lw::Duration d = net::BackoffDelay(p, attempt, std::nullopt, rng);
      CHECK(d >= lw::Duration::zero());
      CHECK(d <= std::min<lw::Duration>(p.cap, std::chrono::seconds(1 << (attempt - 1))));
    }
  }
  for (int i = 0; i < 100; ++i) {
    lw::Duration d = net::BackoffDelay(p, 1, 37s, rng);
    CHECK(d >= 37s);
    CHECK(d <= 37s + 3700ms);
  }
  CHECK(net::BackoffDelay(p, 1, 1h, rng) <= p.max_server_wait + 12s + 1s);
}

TEST_CASE("Retry-After as seconds or HTTP-date") {
  const lw::Time now = lw::ParseTime("2015-10-21T07:27:00Z").value();
  CHECK(net::ParseRetryAfter("37", now) == lw::Duration(37s));
  CHECK(net::ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", now) == lw::Duration(60s));
  CHECK(net::ParseRetryAfter("Wed, 21 Oct 2015 07:26:00 GMT", now) == lw::Duration::zero());
  CHECK_FALSE(net::ParseRetryAfter("soon", now).has_value());
  CHECK_FALSE(net::ParseRetryAfter("", now).has_value());
}
