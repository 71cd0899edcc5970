#include "policies/thresholds.h"

#include <algorithm>

namespace loopwarden::policies {
namespace {

// Under and / or / not alike: a negated threshold still needs the same history to be
// known rather than unknown.
void Collect(const Filter& f, Duration& longest) {
  if (f.op == Filter::Op::kLeaf) {
    if (f.field == Filter::Field::kIdleFor || f.field == Filter::Field::kNoTrafficFor) {
      longest = std::max(longest, f.duration.value);
    }
    return;
  }
  for (const Filter& c : f.children) Collect(c, longest);
}

}  // namespace

std::map<Kind, Duration> QuietThresholds(const PolicySet& set) {
  std::map<Kind, Duration> out;
  for (const Policy& p : set.policies) {
    if (!p.resource) continue;
    Duration longest{0};
    Collect(p.where, longest);
    if (longest <= Duration::zero()) continue;
    Duration& slot = out[*p.resource];
    slot = std::max(slot, longest);
  }
  return out;
}

}  // namespace loopwarden::policies
