#pragma once
// Retry timing: exponential backoff with full jitter, and Retry-After parsing.
//
// Whether a failure is retryable is the caller's call (the provider adapters classify
// each error shape); this file only says how long to wait and when to give up.

#include <cstdint>
#include <optional>
#include <random>
#include <string_view>

#include "core/time.h"

namespace loopwarden::net {

struct RetryPolicy {
  int max_attempts = 5;                          // including the first
  Duration base = std::chrono::seconds(1);
  Duration cap = std::chrono::seconds(30);       // min(2^n, 30) s
  Duration budget = std::chrono::seconds(300);   // total time spent waiting, per call
  Duration max_server_wait = std::chrono::seconds(120);  // longest Retry-After honoured
};

// The wait before attempt `attempt` (1 for the first retry): a uniformly random delay
// in [0, min(cap, base * 2^(attempt-1))] (full jitter). When the server named a delay
// (`server_after`), the wait is that delay plus up to 10% jitter, capped at
// max_server_wait, whichever is longer.
Duration BackoffDelay(const RetryPolicy& policy, int attempt, std::optional<Duration> server_after,
                      std::mt19937_64& rng);

// Retry-After: delta-seconds ("37") or an HTTP-date ("Wed, 21 Oct 2015 07:28:00 GMT"),
// relative to `now`. Nothing when unparseable.
std::optional<Duration> ParseRetryAfter(std::string_view value, Time now);

}  // namespace loopwarden::net
