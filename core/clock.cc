#include "core/clock.h"

#include <algorithm>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace loopwarden {
namespace {

Time SystemNow() { return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now()); }

class RealClock : public Clock {
 public:
  Time Now() const override { return SystemNow(); }
  asio::awaitable<void> SleepUntil(Time deadline) override {
    auto ex = co_await asio::this_coro::executor;
    asio::steady_timer timer(ex);
    while (Now() < deadline) {
      timer.expires_after(deadline - Now());
      co_await timer.async_wait(asio::use_awaitable);  // throws operation_aborted on cancel
    }
  }
};

}  // namespace

asio::awaitable<void> Clock::SleepFor(Duration d) { co_await SleepUntil(Now() + d); }

std::unique_ptr<Clock> MakeRealClock() { return std::make_unique<RealClock>(); }

ScaledClock::ScaledClock(const ScaledClockOptions& options) : epoch_(options.epoch), scale_(options.scale) {
  if (scale_ <= 0) scale_ = 1.0;
  const auto steady_now = std::chrono::steady_clock::now();
  // Translate the shared wall-clock anchor into this process's steady timeline.
  const Duration since_anchor = options.anchor ? SystemNow() - *options.anchor : Duration(0);
  steady_anchor_ = steady_now - std::chrono::duration_cast<std::chrono::steady_clock::duration>(since_anchor);
}

Time ScaledClock::Now() const {
  const auto real = std::chrono::steady_clock::now() - steady_anchor_;
  const double real_us = static_cast<double>(std::chrono::duration_cast<Duration>(real).count());
  return epoch_ + Duration(static_cast<int64_t>(real_us * scale_)) + offset_;
}

asio::awaitable<void> ScaledClock::SleepUntil(Time deadline) {
  auto ex = co_await asio::this_coro::executor;
  asio::steady_timer timer(ex);
  while (Now() < deadline) {
    const double clock_us = static_cast<double>((deadline - Now()).count());
    // Round up so we never wake a hair early and spin.
    const auto real_us = static_cast<int64_t>(clock_us / scale_) + 1;
    timer.expires_after(std::chrono::microseconds(real_us));
    co_await timer.async_wait(asio::use_awaitable);
  }
}

struct ManualClock::Waiter {
  Time deadline;
  asio::steady_timer timer;
  bool fired = false;
};

asio::awaitable<void> ManualClock::SleepUntil(Time deadline) {
  if (deadline <= now_) co_return;
  auto ex = co_await asio::this_coro::executor;
  Waiter w{deadline, asio::steady_timer(ex, asio::steady_timer::time_point::max())};
  waiters_.push_back(&w);
  boost::system::error_code ec;
  co_await w.timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  std::erase(waiters_, &w);
  if (!w.fired) throw boost::system::system_error(asio::error::operation_aborted);
}

void ManualClock::Advance(Duration d) {
  now_ += d;
  Fire();
}

void ManualClock::Set(Time t) {
  if (t > now_) now_ = t;
  Fire();
}

void ManualClock::Fire() {
  std::vector<Waiter*> due;
  for (Waiter* w : waiters_) {
    if (!w->fired && w->deadline <= now_) due.push_back(w);
  }
  std::stable_sort(due.begin(), due.end(), [](Waiter* a, Waiter* b) { return a->deadline < b->deadline; });
  for (Waiter* w : due) {
    w->fired = true;
    w->timer.cancel();
  }
}

std::optional<Time> ManualClock::NextDeadline() const {
  std::optional<Time> best;
  for (const Waiter* w : waiters_) {
    if (!w->fired && (!best || w->deadline < *best)) best = w->deadline;
  }
  return best;
}

}  // namespace loopwarden
