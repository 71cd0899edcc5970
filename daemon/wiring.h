#pragma once
// From the configuration's shapes to the modules' options.

#include "daemon/config.h"
#include "providers/provider.h"
#include "store/store.h"

namespace loopwarden::daemon {

providers::ProviderOptions ToProviderOptions(const config::ProviderConfig& p, const config::Pricing& pricing);
store::PriceBook ToPriceBook(const config::Pricing& pricing);

}  // namespace loopwarden::daemon
