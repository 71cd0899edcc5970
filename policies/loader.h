#pragma once
// Reads and validates `policies:`, `exemptions:` and `limits:` from a configuration tree.
//
// Validation is strict and complete: every error carries file:line:col and the key
// path, a misspelt kind, field, action or key gets the nearest valid one, and rules
// that protect resources are enforced here, before anything runs:
//   - an action must exist for the policy's kind;
//   - delete and promote_then_delete need allow_irreversible: true;
//   - deleting a Baseten run (which destroys its unused checkpoints) needs
//     checkpoints: ignore, and Baseten has no promote_latest;
//   - where-fields must be measured for the kind (no no_traffic_for on a trainer).
// Names the policy set refers to outside itself (notifiers, providers) are checked by
// the caller, which knows them (CheckReferences).

#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "core/schema.h"
#include "policies/model.h"

namespace loopwarden::policies {

schema::Type<std::vector<Policy>> PoliciesType();
schema::Type<std::vector<Exemption>> ExemptionsType();
schema::Type<Limits> LimitsType();
// The JSON Schema of one `where` expression, for the configuration schema's $defs.
boost::json::object WhereJsonSchema();

// Checks what needs the whole set: unique policy names, and that every `notify:`
// entry names a notifier and every provider reference names a provider.
void CheckReferences(schema::Context& ctx, const ConfigNode& policies_node, const PolicySet& set,
                     const std::vector<std::string>& notifier_names, const std::vector<std::string>& provider_names);

// The resolved policy set, defaults filled in, for `loopwarden check --explain`.
std::string Explain(const PolicySet& set, bool global_dry_run);
// One line describing a `where` expression: "mode = dedicated and idle_for >= 20m".
std::string DescribeFilter(const Filter& f);

// Parses a comparison operand such as ">= 20m" into the operator and the rest; a bare
// operand means >=.
std::pair<CmpOp, std::string> SplitComparison(std::string_view text);

}  // namespace loopwarden::policies
