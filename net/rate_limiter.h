#pragma once
// A request-rate budget on the injected clock (the generic cell rate algorithm): at
// most `per_minute` requests per minute on average, with bursts of up to `burst`.
// Each Acquire reserves the next slot, so concurrent waiters are spaced out without a
// queue, and simulated time (ScaledClock, ManualClock) paces them like real time.
//
// Used from the io_context thread only.

#include <boost/asio/awaitable.hpp>

#include "core/clock.h"

namespace loopwarden::net {

class RateLimiter {
 public:
  RateLimiter(Clock& clock, double per_minute, int burst = 1);
  // Completes when this request may be sent.
  boost::asio::awaitable<void> Acquire();
  // How long an Acquire started now would wait (without reserving).
  Duration WaitIfAcquiredNow() const;
  double per_minute() const { return per_minute_; }

 private:
  Clock& clock_;
  double per_minute_;
  Duration interval_;
  Duration burst_window_;
  Time tat_{};  // theoretical arrival time of the next request
};

}  // namespace loopwarden::net
