#include "reconcile/setup.h"

#include "policies/thresholds.h"
#include "reconcile/wiring.h"

namespace loopwarden::reconcile {

providers::Provider* Setup::Find(const std::string& name) const {
  for (const auto& p : providers) {
    if (p->name() == name) return p.get();
  }
  return nullptr;
}

std::map<std::string, int64_t> Setup::SlotCaps() const {
  std::map<std::string, int64_t> caps;
  for (const auto& p : providers) caps[p->name() + "/" + p->account()] = p->slot_cap();
  return caps;
}

Result<std::unique_ptr<Setup>> MakeSetup(boost::asio::io_context& ioc, Clock& clock, config::Config config,
                                         const providers::SendGate& send_gate) {
  policies::PolicySet set = config.policy_set;
  auto s = std::make_unique<Setup>(Setup{.config = std::move(config), .engine = policies::Engine(std::move(set)),
                                         .providers = {}, .prices = {}});
  s->prices = ToPriceBook(s->config.pricing);
  const std::map<Kind, Duration> quiet = policies::QuietThresholds(s->config.policy_set);
  for (const config::ProviderConfig& pc : s->config.providers) {
    providers::ProviderOptions options = ToProviderOptions(pc, s->config.pricing);
    options.quiet_thresholds = quiet;
    options.send_gate = send_gate;
    auto p = providers::MakeProvider(ioc, clock, options);
    if (!p.ok()) return InvalidArgument("provider " + pc.name + ": " + p.status().message());
    s->providers.push_back(std::move(*p));
  }
  return s;
}

}  // namespace loopwarden::reconcile
