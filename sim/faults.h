#pragma once
// Fault injection for the simulator: seeded, per endpoint, counted.
//
// Each rule matches request paths by glob ('*' matches anything, including '/') and,
// optionally, methods. A matching request may be answered with a 5xx, a 429 with a
// retry delay, a reset connection, a truncated body, malformed JSON, added latency, or
// (listings) a failing page in the middle. `stale_reads` makes listings show a
// resource's state from before a mutation for that long after it.

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/time.h"

namespace loopwarden::sim {

struct FaultRule {
  std::string match = "*";
  std::vector<std::string> methods;  // empty: all
  double error_rate = 0;             // 500 / 502 / 503
  double rate_limit_rate = 0;        // 429 with retry_after / Retry-After
  Duration retry_after = std::chrono::seconds(2);
  // 429 bursts: every `burst_every` of simulated time, `burst_length` of 429s.
  std::optional<Duration> burst_every;
  Duration burst_length = std::chrono::seconds(30);
  double reset_rate = 0;      // connection reset before an answer
  double truncate_rate = 0;   // connection closes mid-body
  double malformed_rate = 0;  // 200 with broken JSON
  double latency_rate = 0;
  Duration latency = std::chrono::seconds(1);
  std::optional<int> fail_page;  // listings: this page (1-based) answers 503
};

struct FaultConfig {
  uint64_t seed = 1;
  std::vector<FaultRule> rules;
  Duration stale_reads{0};
};

enum class FaultKind { kNone, kError, kRateLimit, kReset, kTruncate, kMalformed, kLatency, kFailPage };
std::string_view FaultKindName(FaultKind k);

// What to do to one request. Several can apply (latency plus an error).
struct FaultDecision {
  FaultKind kind = FaultKind::kNone;
  int status = 0;
  Duration retry_after{0};
  Duration latency{0};
};

class Faults {
 public:
  Faults() : rng_(1) {}
  explicit Faults(FaultConfig config) : config_(std::move(config)), rng_(config_.seed) {}
  // Decides for one request at simulated time `now`. `page` is the listing page
  // (1-based) or 0 for non-listings.
  FaultDecision Decide(std::string_view method, std::string_view path, Time now, int page);
  const FaultConfig& config() const { return config_; }
  Duration stale_reads() const { return config_.stale_reads; }
  // Faults injected so far, by kind name.
  const std::map<std::string, uint64_t>& counts() const { return counts_; }
  uint64_t total() const;

 private:
  FaultConfig config_;
  std::mt19937_64 rng_;
  std::map<std::string, uint64_t> counts_;
};

bool GlobMatch(std::string_view pattern, std::string_view text);

// Reads a fault configuration from JSON (the /_sim/faults body).
Result<FaultConfig> ParseFaultConfigJson(std::string_view body);

}  // namespace loopwarden::sim
