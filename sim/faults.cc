#include "sim/faults.h"

#include <algorithm>

#include "core/json.h"

namespace loopwarden::sim {

std::string_view FaultKindName(FaultKind k) {
  switch (k) {
    case FaultKind::kNone: return "none";
    case FaultKind::kError: return "error_5xx";
    case FaultKind::kRateLimit: return "rate_limit_429";
    case FaultKind::kReset: return "connection_reset";
    case FaultKind::kTruncate: return "truncated_body";
    case FaultKind::kMalformed: return "malformed_json";
    case FaultKind::kLatency: return "latency";
    case FaultKind::kFailPage: return "failed_page";
  }
  return "none";
}

bool GlobMatch(std::string_view p, std::string_view t) {
  // Iterative '*' matching with backtracking to the last star.
  size_t pi = 0, ti = 0, star = std::string_view::npos, mark = 0;
  while (ti < t.size()) {
    if (pi < p.size() && (p[pi] == t[ti] || p[pi] == '?')) {
      ++pi;
      ++ti;
    } else if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = ti;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      ti = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

uint64_t Faults::total() const {
  uint64_t n = 0;
  for (const auto& [k, v] : counts_) n += v;
  return n;
}

FaultDecision Faults::Decide(std::string_view method, std::string_view path, Time now, int page) {
  FaultDecision d;
  std::uniform_real_distribution<double> u(0, 1);
  for (const FaultRule& r : config_.rules) {
    if (!GlobMatch(r.match, path)) continue;
    if (!r.methods.empty() && std::find(r.methods.begin(), r.methods.end(), method) == r.methods.end()) continue;
    if (d.latency == Duration::zero() && r.latency_rate > 0 && u(rng_) < r.latency_rate) {
      d.latency = r.latency;
      ++counts_[std::string(FaultKindName(FaultKind::kLatency))];
    }
    if (d.kind != FaultKind::kNone) continue;
    if (r.fail_page && page > 0 && page == *r.fail_page) {
      d.kind = FaultKind::kFailPage;
      d.status = 503;
    } else if (r.burst_every && r.burst_every->count() > 0 &&
               (now.time_since_epoch().count() % r.burst_every->count()) < r.burst_length.count()) {
      d.kind = FaultKind::kRateLimit;
      d.status = 429;
      d.retry_after = r.retry_after;
    } else if (r.rate_limit_rate > 0 && u(rng_) < r.rate_limit_rate) {
      d.kind = FaultKind::kRateLimit;
      d.status = 429;
      d.retry_after = r.retry_after;
    } else if (r.error_rate > 0 && u(rng_) < r.error_rate) {
      static constexpr int kStatuses[] = {500, 502, 503};
      d.kind = FaultKind::kError;
      d.status = kStatuses[std::uniform_int_distribution<int>(0, 2)(rng_)];
    } else if (r.reset_rate > 0 && u(rng_) < r.reset_rate) {
      d.kind = FaultKind::kReset;
    } else if (r.truncate_rate > 0 && u(rng_) < r.truncate_rate) {
      d.kind = FaultKind::kTruncate;
    } else if (r.malformed_rate > 0 && u(rng_) < r.malformed_rate) {
      d.kind = FaultKind::kMalformed;
    }
    if (d.kind != FaultKind::kNone) ++counts_[std::string(FaultKindName(d.kind))];
  }
  return d;
}

Result<FaultConfig> ParseFaultConfigJson(std::string_view body) {
  LW_ASSIGN_OR_RETURN(boost::json::value v, json::Parse(body, "fault configuration"));
  if (!v.is_object()) return InvalidArgument("fault configuration: expected an object");
  const auto& o = v.get_object();
  FaultConfig c;
  if (auto s = json::Int(o, "seed")) c.seed = static_cast<uint64_t>(*s);
  if (auto s = json::Num(o, "stale_reads_seconds")) c.stale_reads = Duration(static_cast<int64_t>(*s * 1e6));
  if (const auto* rules = json::Arr(o, "rules")) {
    for (const auto& rv : *rules) {
      if (!rv.is_object()) return InvalidArgument("fault configuration: every rule must be an object");
      const auto& ro = rv.get_object();
      FaultRule r;
      for (const auto& member : ro) {
        // A plain variable, not a structured binding: clang 14 (the fuzz build's) cannot
        // capture a binding in a lambda.
        const std::string_view key = member.key();
        static const char* kKnown[] = {"match",        "methods",      "error_rate",   "rate_limit_rate",
                                       "retry_after_seconds", "burst_every_seconds", "burst_length_seconds",
                                       "reset_rate",   "truncate_rate", "malformed_rate", "latency_rate",
                                       "latency_seconds", "fail_page"};
        if (std::none_of(std::begin(kKnown), std::end(kKnown), [&](const char* k) { return key == k; })) {
          return InvalidArgument("fault configuration: unknown rule key '" + std::string(key) + "'");
        }
      }
      if (auto m = json::Str(ro, "match")) r.match = *m;
      if (const auto* ms = json::Arr(ro, "methods")) {
        for (const auto& m : *ms) {
          if (m.is_string()) r.methods.emplace_back(m.get_string());
        }
      }
      auto secs = [](double s) { return Duration(static_cast<int64_t>(s * 1e6)); };
      r.error_rate = json::Num(ro, "error_rate").value_or(0);
      r.rate_limit_rate = json::Num(ro, "rate_limit_rate").value_or(0);
      if (auto s = json::Num(ro, "retry_after_seconds")) r.retry_after = secs(*s);
      if (auto s = json::Num(ro, "burst_every_seconds")) r.burst_every = secs(*s);
      if (auto s = json::Num(ro, "burst_length_seconds")) r.burst_length = secs(*s);
      r.reset_rate = json::Num(ro, "reset_rate").value_or(0);
      r.truncate_rate = json::Num(ro, "truncate_rate").value_or(0);
      r.malformed_rate = json::Num(ro, "malformed_rate").value_or(0);
      r.latency_rate = json::Num(ro, "latency_rate").value_or(0);
      if (auto s = json::Num(ro, "latency_seconds")) r.latency = secs(*s);
      if (auto p = json::Int(ro, "fail_page")) r.fail_page = static_cast<int>(*p);
      c.rules.push_back(std::move(r));
    }
  }
  return c;
}

}  // namespace loopwarden::sim
