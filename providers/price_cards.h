#pragma once
// The list prices the providers publish (shared/providers/*.md, as of 2026-12), built in
// so that spend is not USD 0 on a configuration that names no prices. `pricing:` in
// the configuration overrides any of them; a provider's own price list (Baseten's
// instance_type_prices) wins over both. What none of them prices is reported as
// unpriced (metric, log, `status`), never silently counted as free.

#include <map>
#include <string>

#include "core/money.h"
#include "core/resource.h"

namespace loopwarden::providers {

struct PriceCard {
  std::string as_of;  // the date of the provider page the figures come from
  std::map<std::string, Money> gpu_hour;  // per GPU-hour, by NormalizeGpuType() name
  std::map<std::string, std::map<std::string, Money>> tokens_per_million;  // model id -> meter -> USD
};

const PriceCard& BuiltInPriceCard(ProviderType type);

}  // namespace loopwarden::providers
