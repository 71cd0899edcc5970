#pragma once
// What a provider bills one resource for one UTC day: the truth the ledger is
// reconciled with (Baseten R21 usage_summary, Fireworks R15 billingUsage). Providers
// produce it and the store consumes it, so it lives below both.

#include <cstdint>
#include <optional>
#include <string>

#include "core/money.h"
#include "core/time.h"

namespace loopwarden {

struct UsageRow {
  // The provider's billing id: a Baseten deployment (a Loops trainer bills through its
  // loops deployment, a sampler through its deployment), a Fireworks session, job or
  // deployment.
  std::string resource_id;
  Time day;             // the UTC midnight the day starts at
  std::string meter;    // gpu_seconds, minutes, tokens.train, …
  int64_t quantity = 0;
  std::optional<Money> cost;  // what the provider bills, when it reports money (Baseten)
};

}  // namespace loopwarden
