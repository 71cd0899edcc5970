#pragma once
// Loads a policy document (the policies/exemptions/limits keys of a configuration) the
// way the daemon's loader does, with fixed notifier and provider names.

#include <doctest/doctest.h>

#include "core/schema.h"
#include "policies/engine.h"
#include "policies/loader.h"

namespace loopwarden::testing {

struct Loaded {
  std::optional<policies::PolicySet> set;
  std::string errors;  // every diagnostic, one per line
};

inline Loaded LoadPolicies(const std::string& yaml) {
  Loaded out;
  auto root = ParseConfigText(yaml, "p.yaml");
  if (!root.ok()) {
    out.errors = root.status().message();
    return out;
  }
  schema::Context ctx("p.yaml");
  policies::PolicySet set;
  auto read = [&](const char* key, auto type, auto& into) {
    if (const ConfigNode* n = root->Find(key)) {
      schema::PathScope scope(ctx, key);
      type.read(ctx, *n, into);
    }
  };
  read("policies", policies::PoliciesType(), set.policies);
  read("exemptions", policies::ExemptionsType(), set.exemptions);
  read("limits", policies::LimitsType(), set.limits);
  if (ctx.error_count() == 0) {
    static const ConfigNode kEmpty;
    const ConfigNode* pn = root->Find("policies");
    policies::CheckReferences(ctx, pn ? *pn : kEmpty, set, {"ml-slack", "audit"}, {"bt", "fw"});
  }
  for (const auto& d : ctx.diagnostics()) out.errors += (out.errors.empty() ? "" : "\n") + d.ToString();
  if (ctx.error_count() == 0) out.set = std::move(set);
  return out;
}

}  // namespace loopwarden::testing
