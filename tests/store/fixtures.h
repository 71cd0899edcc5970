#pragma once
#include "core/resource.h"
#include "store/store.h"

namespace loopwarden::testing {

inline const Time kT0 = ParseTime("2026-08-01T00:00:00Z").value();

// A dedicated Baseten run billing `gpus` H100s at $6.50/GPU-hour unless told otherwise.
inline ListedResource Run(const std::string& id, int gpus = 8, bool billable = true) {
  ListedResource r;
  r.provider_type = ProviderType::kBaseten;
  r.provider = "bt";
  r.account = "bt";
  r.kind = Kind::kBasetenRun;
  r.id = id;
  r.name = "run-" + id;
  r.owner = "ana@example.com";
  r.base_model = "Qwen/Qwen3-8B";
  r.native_status = billable ? "ACTIVE" : "INACTIVE";
  r.lifecycle = billable ? Lifecycle::kRunning : Lifecycle::kStopped;
  r.mode = Mode::kDedicated;
  r.billing.meter = Meter::kGpuTime;
  r.billing.gpu_type = "H100";
  r.billing.gpus_per_replica = gpus;
  r.billing.replicas = 1;
  r.billing.billable = billable;
  r.created_at = kT0 - std::chrono::hours(1);
  r.activity.known = true;
  r.activity.window_start = kT0 - std::chrono::hours(1);
  return r;
}

// A running Fireworks serverless session on qwen3p8-27b, metered in tokens.
inline ListedResource Session(const std::string& id, const std::string& provider = "fw", const std::string& account = "acme") {
  ListedResource x;
  x.provider_type = ProviderType::kFireworks;
  x.provider = provider;
  x.account = account;
  x.kind = Kind::kFireworksTrainingSession;
  x.id = id;
  x.base_model = "accounts/fireworks/models/qwen3p8-27b";
  x.lifecycle = Lifecycle::kRunning;
  x.billing.meter = Meter::kTokens;
  return x;
}

inline store::Snapshot Snap(std::vector<ListedResource> rs, bool complete = true) {
  return store::Snapshot{.provider = "bt", .account = "bt", .complete = complete, .resources = std::move(rs)};
}

inline store::PriceBook Prices() {
  store::PriceBook p;
  p.gpu_hour["H100"] = ParseMoney("6.50").value();
  p.tokens_per_million["accounts/fireworks/models/qwen3p8-27b"] = {
      {"prefill", ParseMoney("1.86").value()},
      {"cached_prefill", ParseMoney("0.372").value()},
      {"sample", ParseMoney("5.595").value()},
      {"train", ParseMoney("4.103").value()}};
  return p;
}

}  // namespace loopwarden::testing
