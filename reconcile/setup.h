#pragma once
// Everything derived from one configuration: the engine, one provider client per
// configured account and the price book. Built whole at start and on SIGHUP, and
// swapped between cycles only, so a reload never changes what a running cycle uses.

#include <boost/asio/io_context.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/clock.h"
#include "policies/engine.h"
#include "providers/provider.h"
#include "store/store.h"

namespace loopwarden::reconcile {

struct Setup {
  config::Config config;
  policies::Engine engine;
  std::vector<std::unique_ptr<providers::Provider>> providers;
  store::PriceBook prices;

  providers::Provider* Find(const std::string& name) const;
  // Slot caps by "provider/account".
  std::map<std::string, int64_t> SlotCaps() const;
};

// A provider that cannot be built (a CA file that does not load) is an error naming it.
// `send_gate`, when set, is asked before every call that changes something at a
// provider (the leader lease, with more than one replica).
Result<std::unique_ptr<Setup>> MakeSetup(boost::asio::io_context& ioc, Clock& clock, config::Config config,
                                         const providers::SendGate& send_gate = {});

}  // namespace loopwarden::reconcile
