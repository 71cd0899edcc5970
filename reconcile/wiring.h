#pragma once
// From the configuration's shapes to the modules' options.

#include "config/config.h"
#include "providers/provider.h"
#include "store/store.h"

namespace loopwarden::reconcile {

providers::ProviderOptions ToProviderOptions(const config::ProviderConfig& p, const config::Pricing& pricing);
store::PriceBook ToPriceBook(const config::Pricing& pricing);

}  // namespace loopwarden::reconcile
