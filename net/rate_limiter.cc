#include "net/rate_limiter.h"

#include <algorithm>

namespace loopwarden::net {

RateLimiter::RateLimiter(Clock& clock, double per_minute, int burst)
    : clock_(clock),
      per_minute_(per_minute > 0 ? per_minute : 1e9),
      interval_(static_cast<int64_t>(60e6 / per_minute_)),
      burst_window_(interval_ * std::max(0, burst - 1)) {}

boost::asio::awaitable<void> RateLimiter::Acquire() {
  const Time now = clock_.Now();
  const Time start = std::max(tat_, now);
  const Time allowed_at = start - burst_window_;
  tat_ = start + interval_;
  if (allowed_at > now) co_await clock_.SleepUntil(allowed_at);
}

Duration RateLimiter::WaitIfAcquiredNow() const {
  const Time now = clock_.Now();
  const Time allowed_at = std::max(tat_, now) - burst_window_;
  return allowed_at > now ? allowed_at - now : Duration::zero();
}

}  // namespace loopwarden::net
