#pragma once
// What the policy engine sees, built from the store: each resource with the source of
// its derived facts, the account aggregates, the spend of every budget's period, marks
// and snoozes.
// Pure functions of the store's contents and `now`, so `plan`, the daemon and tests
// build exactly the same input.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "policies/engine.h"
#include "store/store.h"

namespace loopwarden::reconcile {

// Facts of one resource at `now`: idle_for and no_traffic_for stay unknown when the
// store has no reliable activity signal for it (unknown is not idle).
policies::Facts FactsOf(const store::ResourceState& st, Time now);

// How long a policy leaves a resource it acted on alone while the provider converges.
inline constexpr Duration kActionCooldown = std::chrono::hours(1);

// The facts of stored resources at one instant, worked out when the engine reads them:
// a view's item is its ResourceState.
class StateFacts final : public policies::FactsSource {
 public:
  explicit StateFacts(Time now) : now_(now) {}
  policies::Facts Of(const void* item) const override {
    return FactsOf(*static_cast<const store::ResourceState*>(item), now_);
  }
  // A view of `st` whose facts are read from here, so it must not outlive this.
  policies::ResourceView View(const store::ResourceState& st) const { return {&st.resource, &st, this}; }

 private:
  Time now_;
};

// The engine's input, owning what EvalInput points at.
struct EvalContext {
  explicit EvalContext(Time now) : facts(now) {}
  StateFacts facts;  // every view's source
  std::vector<policies::ResourceView> views;
  policies::EvalInput input;
};

// Slot caps by "provider/account" (from the providers); accounts the store knows but
// no provider reports get 0.
Result<std::unique_ptr<EvalContext>> BuildEvalContext(store::Store& store, const policies::PolicySet& set,
                                                      const std::map<std::string, int64_t>& slot_caps, Time now,
                                                      bool global_dry_run);

}  // namespace loopwarden::reconcile
