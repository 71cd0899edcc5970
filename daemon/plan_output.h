#pragma once
// Decisions as people read them: the `plan` table, and the JSON of `plan --json` and
// GET /v1/plan.

#include <string>
#include <vector>

#include "policies/engine.h"
#include "store/store.h"

namespace loopwarden::daemon {

// RESOURCE  POLICY  DECISION  WHEN  REASON, acts first; budget and blast-radius notices
// have "-" for a resource. Dry-run acts read "would act".
std::string FormatPlanTable(const std::vector<policies::Decision>& decisions, const store::Store& store);

// {"at": …, "dry_run": …, "would_act": N, "decisions": [{resource, name, policy,
// decision, action, reason, act_after, dry_run}]}
std::string PlanJson(const std::vector<policies::Decision>& decisions, const store::Store& store, Time at,
                     bool dry_run);

// Something would change at a provider: an act, or a mark for a mutating action (it
// acts when its grace ends). `plan`'s exit code 2.
bool WouldChange(const std::vector<policies::Decision>& decisions);

}  // namespace loopwarden::daemon
