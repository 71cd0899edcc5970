#include "providers/price_cards.h"

namespace loopwarden::providers {

namespace {

Money Usd(double v) { return Money::FromDouble(v); }

std::map<std::string, Money> Meters(double prefill, double cached_prefill, double sample, double train) {
  return {{"prefill", Usd(prefill)}, {"cached_prefill", Usd(cached_prefill)}, {"sample", Usd(sample)}, {"train", Usd(train)}};
}

PriceCard Fireworks() {
  PriceCard c;
  c.as_of = "2026-12";
  // Dedicated GPUs, on demand (deployments, RLOR trainers).
  c.gpu_hour = {{"H100", Usd(7.00)}, {"H200", Usd(7.00)}, {"B200", Usd(10.00)}, {"B300", Usd(12.00)},
                {"A100", Usd(3.89)}};
  // Serverless training, per million tokens. Only the models whose ids the docs give;
  // the others are named by marketing names loopwarden cannot match to a model id.
  c.tokens_per_million = {
      {"accounts/fireworks/models/qwen3p8-27b", Meters(1.86, 0.372, 5.595, 4.103)},
      {"accounts/fireworks/models/muse-glimmer-30b", Meters(1.96, 0.39, 4.88, 5.86)},
  };
  return c;
}

PriceCard Baseten() {
  PriceCard c;
  c.as_of = "2026-12";
  // Only when GET /v1/instance_type_prices fails: the dated public list prices.
  c.gpu_hour = {{"H100", Usd(6.50)}, {"A100", Usd(4.00)}};
  // Serverless token rates are not published: configure pricing.tokens_per_million_usd.
  return c;
}

}  // namespace

const PriceCard& BuiltInPriceCard(ProviderType type) {
  static const PriceCard kFireworks = Fireworks();
  static const PriceCard kBaseten = Baseten();
  return type == ProviderType::kFireworks ? kFireworks : kBaseten;
}

}  // namespace loopwarden::providers
