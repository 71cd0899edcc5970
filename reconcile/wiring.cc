#include "reconcile/wiring.h"

#include "providers/price_cards.h"

namespace loopwarden::reconcile {

providers::ProviderOptions ToProviderOptions(const config::ProviderConfig& p, const config::Pricing& pricing) {
  providers::ProviderOptions o;
  o.name = p.name;
  o.type = p.type;
  o.base_url = p.base_url;
  o.account = p.account;
  o.api_key = p.api_key.value;
  o.auth = p.auth;
  o.ca_file = p.ca_file;
  o.max_concurrency = static_cast<int>(p.max_concurrency);
  o.requests_per_minute = static_cast<double>(p.requests_per_minute);
  o.request_timeout = p.request_timeout;
  o.max_response_bytes = static_cast<size_t>(p.max_response_mib) << 20;
  o.activity_window = p.activity_window;
  o.gpu_idle_threshold = p.gpu_idle_threshold;
  o.scale_down_delay = p.scale_down_delay;
  o.slot_cap = p.slot_cap;
  o.usage_interval = p.usage_interval;
  o.max_detail_calls = static_cast<int>(p.detail_calls_per_poll);
  o.detail_max_age = p.detail_max_age;
  o.gpu_hour_usd = pricing.gpu_hour_usd;
  return o;
}

store::PriceBook ToPriceBook(const config::Pricing& pricing) {
  store::PriceBook b;
  b.gpu_hour = pricing.gpu_hour_usd;
  for (const auto& [model, rates] : pricing.tokens_per_million_usd) {
    auto& m = b.tokens_per_million[model];
    if (rates.prefill) m["prefill"] = *rates.prefill;
    if (rates.cached_prefill) m["cached_prefill"] = *rates.cached_prefill;
    if (rates.sample) m["sample"] = *rates.sample;
    if (rates.train) m["train"] = *rates.train;
  }
  for (ProviderType t : {ProviderType::kBaseten, ProviderType::kFireworks}) {
    const providers::PriceCard& card = providers::BuiltInPriceCard(t);
    b.list_gpu_hour[t] = card.gpu_hour;
    b.list_tokens_per_million[t] = card.tokens_per_million;
  }
  return b;
}

}  // namespace loopwarden::reconcile
