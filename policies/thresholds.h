#pragma once
// What the policies ask of activity history: per resource kind, the longest
// `idle_for` / `no_traffic_for` any policy compares against. Adapters whose provider
// serves history read that far back on first sight (baseten.md §6), and `plan` says
// how long a kind without history stays unknown.

#include <map>

#include "core/resource.h"
#include "core/time.h"
#include "policies/model.h"

namespace loopwarden::policies {

std::map<Kind, Duration> QuietThresholds(const PolicySet& set);

}  // namespace loopwarden::policies
