#pragma once
// What a provider bills one resource for one UTC day: the truth the ledger is
// reconciled with (Baseten R21 usage_summary, Fireworks R15 billingUsage). Providers
// produce it and the store consumes it, so it lives below both.

#include <cstdint>
#include <optional>

#include "core/interned.h"
#include "core/money.h"
#include "core/short_string.h"
#include "core/time.h"

namespace loopwarden {

// 56 bytes, where two std::string made 96 and a heap block for every meter past 15
// characters ("tokens.cached_prefill"): a cold cycle reads a week of bills for
// poll_concurrency accounts at once, and those rows were the largest part of its peak
// memory. The id is not pooled: a pool keeps the text of ids nobody holds until its
// next sweep, and a bill's ids stayed resident after the bill (2.3 MB at 100k).
struct UsageRow {
  // The provider's billing id: a Baseten deployment (a Loops trainer bills through its
  // loops deployment, a sampler through its deployment), a Fireworks session, job or
  // deployment.
  ShortString resource_id;
  Time day;        // the UTC midnight the day starts at
  Interned meter;  // gpu_seconds, minutes, tokens.train, …: a few names, pooled
  int64_t quantity = 0;
  std::optional<Money> cost;  // what the provider bills, when it reports money (Baseten)
};
static_assert(sizeof(UsageRow) == 56);

}  // namespace loopwarden
