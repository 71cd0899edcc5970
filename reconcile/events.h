#pragma once
// Every event loopwarden hands to its notifiers is built here, from what decided it: a
// mark, an act's outcome, or one of the engine's notices (budgets, the blast radius).
// The dedupe keys are made here too, so an event rebuilt after a crash or on a later
// cycle is still delivered once.

#include <string>

#include "core/resource.h"
#include "core/time.h"
#include "exporters/notice.h"
#include "policies/engine.h"
#include "store/store.h"

namespace loopwarden::reconcile {

// "marked": `r` is null when the store no longer holds the resource.
exporters::Event MarkedEvent(const store::Mark& m, const policies::Policy& p, const Resource* r, bool dry_run);

// What an act came to: "acted", "would_act", "refused" or "failed"; `dedupe` is the
// act's idempotency key, so each outcome of one mark is announced once.
exporters::Event ActEvent(std::string type, const policies::Policy& p, const Resource& r, const std::string& dedupe,
                          std::string reason, Time at);

// A notify decision that is not a mark's: budget warnings and excesses (once per
// period), the blast-radius alert (once an hour while it lasts), anything else once.
// `p` is the decision's policy, when it still exists.
exporters::Event NoticeEvent(const policies::Decision& d, const policies::Policy* p, Time now);

}  // namespace loopwarden::reconcile
