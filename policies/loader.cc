#include "policies/loader.h"

#include <re2/re2.h>

#include <algorithm>
#include <array>

#include "core/strings.h"

namespace loopwarden::policies {
namespace {

using schema::Context;
using schema::PathScope;
using schema::Type;
namespace bj = boost::json;

struct FieldInfo {
  std::string_view name;
  Filter::Field field;
  std::string_view description;
};

constexpr std::array<FieldInfo, 17> kFields{{
    {"lifecycle", Filter::Field::kLifecycle, "normalized lifecycle, one value or a list"},
    {"mode", Filter::Field::kMode, "billing mode of a Baseten run: serverless or dedicated"},
    {"availability", Filter::Field::kAvailability, "dedicated or spot GPUs (Baseten Loops)"},
    {"idle_for", Filter::Field::kIdleFor, "time since the last change of any activity signal, e.g. \">= 20m\""},
    {"no_traffic_for", Filter::Field::kNoTrafficFor, "time since the last request, e.g. \">= 2h\""},
    {"age", Filter::Field::kAge, "time since creation, e.g. \">= 1h\""},
    {"spend_usd", Filter::Field::kSpendUsd, "spend recorded for the resource so far, e.g. \">= 50\""},
    {"burn_usd_per_hour", Filter::Field::kBurnUsdPerHour, "current GPU burn rate, e.g. \">= 10\""},
    {"gpus", Filter::Field::kGpus, "GPUs billed now (replicas x GPUs per replica), e.g. \">= 8\""},
    {"replicas", Filter::Field::kReplicas, "replicas billed now, e.g. \">= 2\""},
    {"base_model", Filter::Field::kBaseModel, "exact base model id, one value or a list"},
    {"name", Filter::Field::kName, "regular expression over the display name"},
    {"owner", Filter::Field::kOwner, "regular expression over the owner's email"},
    {"labels", Filter::Field::kLabels, "map of label values that must all match (\"*\": present)"},
    {"flags", Filter::Field::kFlags, "derived flags that must all be set, e.g. [kept_alive_idle]"},
    {"provider", Filter::Field::kProvider, "configured provider name, one value or a list"},
    {"unpromoted_checkpoints", Filter::Field::kUnpromotedCheckpoints,
     "count of promotable checkpoints nobody promoted, e.g. \">= 1\""},
}};


std::string_view FieldName(Filter::Field f) {
  for (const FieldInfo& i : kFields) {
    if (i.field == f) return i.name;
  }
  return "?";
}

// Which where-fields each kind measures. A field that is never measured for a kind
// would leave every leaf unknown and the policy silently inert, so it is rejected.
bool FieldApplies(Filter::Field f, Kind k) {
  switch (f) {
    case Filter::Field::kMode: return k == Kind::kBasetenRun;
    case Filter::Field::kAvailability: return k == Kind::kBasetenRun || k == Kind::kBasetenLoopsDeployment;
    case Filter::Field::kNoTrafficFor:
      return k == Kind::kBasetenDeployment || k == Kind::kBasetenSampler || k == Kind::kFireworksDeployment;
    case Filter::Field::kUnpromotedCheckpoints:
      return k == Kind::kFireworksTrainingSession || k == Kind::kFireworksRlorJob;
    default: return true;
  }
}

std::string KindsWhere(Filter::Field f) {
  std::vector<std::string> names;
  for (Kind k : AllKinds()) {
    if (FieldApplies(f, k)) names.emplace_back(KindName(k));
  }
  return Join(names, ", ");
}

template <class Cmp, class Parse>
Type<Cmp> CmpType(std::string expected, Parse parse, bj::object json) {
  Type<Cmp> t;
  t.read = [expected, parse](Context& c, const ConfigNode& n, Cmp& out) {
    auto text = c.ScalarText(n, expected);
    if (!text) return false;
    auto [op, rest] = SplitComparison(*text);
    auto v = parse(rest);
    if (!v.ok()) {
      c.Error(n.mark, v.status().message());
      return false;
    }
    out.op = op;
    out.value = *v;
    return true;
  };
  t.json = [json] { return json; };
  return t;
}

Type<DurationCmp> DurationCmpType() {
  return CmpType<DurationCmp>(
      "a comparison like \">= 20m\"", [](const std::string& s) { return ParseDuration(s); },
      bj::object{{"type", "string"}, {"pattern", "^(>=|>|<=|<|==|!=)?\\s*[0-9][0-9wdhms]*$"}});
}

Type<MoneyCmp> MoneyCmpType() {
  return CmpType<MoneyCmp>(
      "a comparison like \">= 50\"", [](const std::string& s) { return ParseMoney(s); },
      bj::object{{"type", {"string", "number"}}, {"pattern", "^(>=|>|<=|<|==|!=)?\\s*\\$?[0-9]+(\\.[0-9]+)?$"}});
}

Result<int64_t> ParseInt(const std::string& s) {
  if (s.empty() || s.size() > 12 || s.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgument("expected a whole number, got '" + s + "'");
  }
  return std::stoll(s);
}

Type<IntCmp> IntCmpType() {
  return CmpType<IntCmp>("a comparison like \">= 7\"", ParseInt,
                         bj::object{{"type", {"string", "integer"}}, {"pattern", "^(>=|>|<=|<|==|!=)?\\s*[0-9]+$"}});
}

Type<Kind> KindType() {
  std::vector<std::pair<std::string, Kind>> v;
  for (Kind k : AllKinds()) v.emplace_back(std::string(KindName(k)), k);
  return schema::Enum(std::move(v));
}

Type<ActionType> ActionEnum() {
  std::vector<std::pair<std::string, ActionType>> v;
  for (ActionType a : {ActionType::kNotify, ActionType::kDeactivate, ActionType::kScaleToZero, ActionType::kCancel,
                       ActionType::kDelete, ActionType::kPromoteThenDelete}) {
    v.emplace_back(std::string(ActionName(a)), a);
  }
  return schema::Enum(std::move(v));
}

Type<Pattern> PatternType() {
  Type<Pattern> t;
  auto re = schema::Regex();
  t.read = [re](Context& c, const ConfigNode& n, Pattern& out) {
    std::string text;
    if (!re.read(c, n, text)) return false;
    RE2::Options options;
    options.set_log_errors(false);
    auto compiled = std::make_shared<const RE2>(text, options);
    if (!compiled->ok()) {
      c.Error(n.mark, "invalid regular expression '" + text + "': " + compiled->error());
      return false;
    }
    out.text = text;
    out.re = std::move(compiled);
    return true;
  };
  t.json = re.json;
  return t;
}

Type<std::shared_ptr<const TimeZone>> TimeZoneType() {
  Type<std::shared_ptr<const TimeZone>> t;
  auto str = schema::String();
  t.read = [str](Context& c, const ConfigNode& n, std::shared_ptr<const TimeZone>& out) {
    std::string text;
    if (!str.read(c, n, text)) return false;
    auto tz = TimeZone::Load(text);
    if (!tz.ok()) {
      c.Error(n.mark, tz.status().message());
      return false;
    }
    out = std::move(*tz);
    return true;
  };
  t.json = str.json;
  return t;
}

Type<std::map<std::string, std::string>> LabelsType() { return schema::MapOf(schema::String()); }

bool ReadStrings(Context& c, const ConfigNode& n, std::vector<std::string>& out) {
  return schema::StringList().read(c, n, out);
}

bool ReadLeaf(Context& c, const ConfigNode::Entry& e, const FieldInfo& info, Filter& out) {
  out.op = Filter::Op::kLeaf;
  out.field = info.field;
  out.mark = e.key_mark;
  PathScope scope(c, e.key);
  const ConfigNode& v = e.value;
  switch (info.field) {
    case Filter::Field::kLifecycle: {
      std::vector<std::string> names;
      if (!ReadStrings(c, v, names)) return false;
      std::vector<std::string> all;
      for (Lifecycle l : AllLifecycles()) all.emplace_back(LifecycleName(l));
      bool ok = true;
      for (const std::string& s : names) {
        if (auto l = ParseLifecycle(s)) {
          out.lifecycles.push_back(*l);
        } else {
          schema::ReportEnumError(c, v, s, all);
          ok = false;
        }
      }
      return ok;
    }
    case Filter::Field::kMode:
    case Filter::Field::kAvailability:
    case Filter::Field::kFlags: {
      if (!ReadStrings(c, v, out.strings)) return false;
      std::vector<std::string> allowed;
      if (info.field == Filter::Field::kMode) {
        allowed = {"serverless", "dedicated"};
      } else if (info.field == Filter::Field::kAvailability) {
        allowed = {"dedicated", "spot"};
      } else {
        for (Flag f : AllFlags()) allowed.emplace_back(FlagName(f));  // every flag an adapter sets
      }
      bool ok = true;
      for (const std::string& s : out.strings) {
        if (std::find(allowed.begin(), allowed.end(), s) == allowed.end()) {
          schema::ReportEnumError(c, v, s, allowed);
          ok = false;
        }
      }
      return ok;
    }
    case Filter::Field::kBaseModel:
    case Filter::Field::kProvider: return ReadStrings(c, v, out.strings);
    case Filter::Field::kIdleFor:
    case Filter::Field::kNoTrafficFor:
    case Filter::Field::kAge: return DurationCmpType().read(c, v, out.duration);
    case Filter::Field::kSpendUsd:
    case Filter::Field::kBurnUsdPerHour: return MoneyCmpType().read(c, v, out.money);
    case Filter::Field::kGpus:
    case Filter::Field::kReplicas:
    case Filter::Field::kUnpromotedCheckpoints: return IntCmpType().read(c, v, out.integer);
    case Filter::Field::kName:
    case Filter::Field::kOwner: {
      Pattern p;
      if (!PatternType().read(c, v, p)) return false;
      out.pattern = std::move(p);
      return true;
    }
    case Filter::Field::kLabels: return LabelsType().read(c, v, out.labels);
  }
  return false;
}

bool ReadFilter(Context& c, const ConfigNode& n, Filter& out, int depth);

bool ReadEntry(Context& c, const ConfigNode::Entry& e, Filter& out, int depth) {
  if (e.key == "and" || e.key == "or") {
    PathScope scope(c, e.key);
    out.op = e.key == "and" ? Filter::Op::kAnd : Filter::Op::kOr;
    out.mark = e.key_mark;
    if (!e.value.IsSequence() || e.value.items.empty()) {
      c.Error(e.value.mark, "expected a non-empty list of conditions, got " + e.value.Describe());
      return false;
    }
    bool ok = true;
    for (size_t i = 0; i < e.value.items.size(); ++i) {
      PathScope item(c, i);
      Filter child;
      ok = ReadFilter(c, e.value.items[i], child, depth + 1) && ok;
      out.children.push_back(std::move(child));
    }
    return ok;
  }
  if (e.key == "not") {
    PathScope scope(c, e.key);
    out.op = Filter::Op::kNot;
    out.mark = e.key_mark;
    Filter child;
    bool ok = ReadFilter(c, e.value, child, depth + 1);
    out.children.push_back(std::move(child));
    return ok;
  }
  for (const FieldInfo& info : kFields) {
    if (info.name == e.key) return ReadLeaf(c, e, info, out);
  }
  std::vector<std::string> known{"and", "or", "not"};
  for (const FieldInfo& info : kFields) known.emplace_back(info.name);
  schema::UnknownKey(c, e, known);
  return false;
}

bool ReadFilter(Context& c, const ConfigNode& n, Filter& out, int depth) {
  if (depth > 16) {
    c.Error(n.mark, "conditions nested more than 16 levels deep");
    return false;
  }
  if (!n.IsMap() || n.entries.empty()) {
    c.Error(n.mark, "expected a map of conditions, got " + n.Describe());
    return false;
  }
  if (!schema::CheckDuplicateKeys(c, n)) return false;
  if (n.entries.size() == 1) return ReadEntry(c, n.entries[0], out, depth);
  // Several keys in one map: all must hold.
  out.op = Filter::Op::kAnd;
  out.mark = n.mark;
  bool ok = true;
  for (const ConfigNode::Entry& e : n.entries) {
    Filter child;
    ok = ReadEntry(c, e, child, depth) && ok;
    out.children.push_back(std::move(child));
  }
  return ok;
}

Type<Filter> WhereType() {
  Type<Filter> t;
  t.read = [](Context& c, const ConfigNode& n, Filter& out) { return ReadFilter(c, n, out, 0); };
  t.json = [] { return bj::object{{"$ref", "#/$defs/where"}}; };
  return t;
}

Type<When> WhenType() {
  schema::Object<When> o("Conditions over the resource's account; all must hold");
  o.Optional("account_active_sessions", &When::account_active_sessions, IntCmpType(),
             {.description = "slot holders in the account (Fireworks sessions; Baseten live runs and samplers)"});
  o.Optional("account_slot_headroom", &When::account_slot_headroom, IntCmpType(),
             {.description = "free slots under the account's cap"});
  o.Optional("account_spend_day_usd", &When::account_spend_day_usd, MoneyCmpType(),
             {.description = "account spend since 00:00 UTC"});
  o.Optional("account_spend_week_usd", &When::account_spend_week_usd, MoneyCmpType(),
             {.description = "account spend since Monday 00:00 UTC"});
  o.Optional("account_spend_month_usd", &When::account_spend_month_usd, MoneyCmpType(),
             {.description = "account spend since the 1st, 00:00 UTC"});
  return o.Build();
}

Type<Budget> BudgetType() {
  schema::Object<Budget> o("A spend budget over a period");
  o.Field("provider", &Budget::provider, schema::String(), {.description = "configured provider name; all if absent"});
  o.Optional("kind", &Budget::kind, KindType(), {.description = "only this kind's spend"});
  o.Field("period", &Budget::period,
          schema::Enum<Period>({{"day", Period::kDay}, {"week", Period::kWeek}, {"month", Period::kMonth}}),
          {.required = true, .description = "day, ISO week or calendar month, from midnight in timezone"});
  o.Field("timezone", &Budget::tz, TimeZoneType(),
          {.description = "IANA time zone whose midnight starts each period (default UTC), e.g. America/New_York"});
  o.Field("limit_usd", &Budget::limit, schema::MoneyType(), {.required = true, .description = "the limit in USD"});
  o.Field("warn_at", &Budget::warn_at, schema::Number(0.0, 1.0),
          {.description = "fraction of the limit that sends a warning (default 0.8)"});
  o.Field("order", &Budget::order,
          schema::Enum<BudgetOrder>({{"idle_longest", BudgetOrder::kIdleLongest},
                                     {"burn_highest", BudgetOrder::kBurnHighest},
                                     {"newest", BudgetOrder::kNewest}}),
          {.description = "with action deactivate: which billable resources go first (default idle_longest)"});
  return o.Build();
}

Type<ExemptionMatch> MatchType() {
  schema::Object<ExemptionMatch> o("Which resources an exemption covers; all given keys must match");
  o.Optional("name", &ExemptionMatch::name, PatternType(), {.description = "regular expression over the name"});
  o.Optional("owner", &ExemptionMatch::owner, PatternType(), {.description = "regular expression over the owner"});
  o.Field("id", &ExemptionMatch::id, schema::String(), {.description = "exact provider id"});
  o.Field("provider", &ExemptionMatch::provider, schema::String(), {.description = "configured provider name"});
  o.Optional("kind", &ExemptionMatch::kind, KindType());
  o.Field("labels", &ExemptionMatch::labels, LabelsType());
  return o.Build();
}

Type<Exemption> ExemptionType() {
  schema::Object<Exemption> o("Resources no policy acts on, optionally until a time");
  o.Field("match", &Exemption::match, MatchType());
  o.Field("id", &Exemption::match, [] {
    // `id: x` at the top level is shorthand for `match: {id: x}`.
    Type<ExemptionMatch> t;
    t.read = [](Context& c, const ConfigNode& n, ExemptionMatch& m) { return schema::String().read(c, n, m.id); };
    t.json = [] { return bj::object{{"type", "string"}}; };
    return t;
  }(), {.description = "shorthand for match: {id: …}"});
  o.Optional("until", &Exemption::until, schema::TimeType(), {.description = "the exemption ends at this time"});
  o.Field("reason", &Exemption::reason, schema::String(), {.required = true, .description = "why (shown in plans)"});
  o.Field("by", &Exemption::by, schema::String(), {.description = "who added it"});
  o.Field("policy", &Exemption::policy, schema::String(), {.description = "only this policy; every policy if absent"});
  o.Check([](Context& c, const ConfigNode& n, Exemption& e) {
    e.mark = n.mark;
    if (n.Find("match") && n.Find("id")) {
      c.Error(n.mark, "use either 'match' or 'id', not both");
      return;
    }
    const ExemptionMatch& m = e.match;
    if (!m.name && !m.owner && m.id.empty() && m.provider.empty() && !m.kind && m.labels.empty()) {
      c.Error(n.mark, "an exemption needs 'id' or a non-empty 'match'");
    }
  });
  return o.Build();
}

void CheckFilterKinds(Context& c, const Filter& f, Kind kind) {
  if (f.op == Filter::Op::kLeaf) {
    if (!FieldApplies(f.field, kind)) {
      c.Error(f.mark, "'" + std::string(FieldName(f.field)) + "' is not measured for " + std::string(KindName(kind)) +
                          " (it applies to " + KindsWhere(f.field) + ")");
    }
    return;
  }
  for (const Filter& ch : f.children) CheckFilterKinds(c, ch, kind);
}

void ValidatePolicy(Context& c, const ConfigNode& n, Policy& p) {
  p.mark = n.mark;
  const bool explicit_checkpoints = n.Find("checkpoints") != nullptr;
  if (p.budget) {
    if (p.action != ActionType::kNotify && p.action != ActionType::kDeactivate) {
      c.KeyError(n, "action", "a budget policy's action must be notify or deactivate");
    }
    if (p.resource && p.budget->kind && *p.resource != *p.budget->kind) {
      c.KeyError(n, "resource", "resource and budget.kind disagree");
    }
    if (!p.resource && p.budget->kind) p.resource = p.budget->kind;
    if (p.resource && !KindSupports(*p.resource, p.action)) {
      c.KeyError(n, "action", "action '" + std::string(ActionName(p.action)) + "' is not available for " +
                                       std::string(KindName(*p.resource)));
    }
    if (p.action == ActionType::kDeactivate && !p.resource) {
      c.KeyError(n, "action", "a budget that deactivates needs 'resource' (or budget.kind) to say what to stop");
    }
    if (p.resource) CheckFilterKinds(c, p.where, *p.resource);
    return;
  }
  if (!p.resource) {
    c.Error(n.mark, "missing required key 'resource' (or 'budget' for a budget policy)");
    return;
  }
  const Kind kind = *p.resource;
  if (!KindSupports(kind, p.action)) {
    std::vector<std::string> names;
    for (ActionType a : SupportedActions(kind)) names.emplace_back(ActionName(a));
    c.KeyError(n, "action", "action '" + std::string(ActionName(p.action)) + "' is not available for " +
                                     std::string(KindName(kind)) + " (supported: " + Join(names, ", ") + ")");
    return;
  }
  if (IsIrreversible(p.action) && !p.allow_irreversible) {
    c.KeyError(n, "action", "action '" + std::string(ActionName(p.action)) +
                                     "' is irreversible; set allow_irreversible: true to allow it");
  }
  if (!IsIrreversible(p.action) && explicit_checkpoints && p.checkpoints != CheckpointMode::kRefuse) {
    c.KeyError(n, "checkpoints", "'checkpoints' only applies to delete and promote_then_delete");
  }
  if (p.action == ActionType::kPromoteThenDelete) {
    if (explicit_checkpoints && p.checkpoints != CheckpointMode::kPromoteLatest) {
      c.KeyError(n, "checkpoints", "promote_then_delete always promotes the newest checkpoint; "
                                        "remove 'checkpoints' or set it to promote_latest");
    }
    p.checkpoints = CheckpointMode::kPromoteLatest;
  }
  if (KindProvider(kind) == ProviderType::kBaseten && p.checkpoints == CheckpointMode::kPromoteLatest) {
    c.KeyError(n, "checkpoints", "Baseten has no checkpoint promotion (deploying one bills a new deployment); "
                                      "use checkpoints: refuse or ignore");
  }
  if (kind == Kind::kBasetenRun && p.action == ActionType::kDelete && p.checkpoints != CheckpointMode::kIgnore) {
    c.KeyError(n, "action", "deleting a Baseten run destroys every checkpoint nothing else uses; "
                                 "set checkpoints: ignore to accept that, or use deactivate (keeps them)");
  }
  CheckFilterKinds(c, p.where, kind);
  if (p.dry_run && !*p.dry_run) {
    c.KeyError(n, "dry_run", "a policy's dry_run can only make it safer: set true or remove it "
                                  "(the global dry_run decides otherwise)");
  }
}

Type<Policy> PolicyType() {
  schema::Object<Policy> o("A policy: which resources, under what conditions, what to do and when");
  o.Field("name", &Policy::name, schema::String(), {.required = true, .description = "unique name; used in metrics and alerts"});
  o.Field("description", &Policy::description, schema::String());
  o.Optional("resource", &Policy::resource, KindType(), {.description = "the kind this policy governs"});
  o.Field("where", &Policy::where, WhereType(), {.description = "conditions on each resource"});
  o.Field("when", &Policy::when, WhenType(), {.description = "conditions on the resource's account"});
  o.Field("action", &Policy::action, ActionEnum(), {.required = true, .description = "what to do once grace has passed"});
  o.Field("grace", &Policy::grace, schema::DurationType(), {.description = "time between mark and act (default 15m)"});
  o.Field("notify", &Policy::notify, schema::StringList(), {.description = "notifier names"});
  o.Field("allow_irreversible", &Policy::allow_irreversible, schema::Bool(),
          {.description = "required for delete and promote_then_delete"});
  o.Field("checkpoints", &Policy::checkpoints,
          schema::Enum<CheckpointMode>({{"refuse", CheckpointMode::kRefuse},
                                        {"promote_latest", CheckpointMode::kPromoteLatest},
                                        {"ignore", CheckpointMode::kIgnore}}),
          {.description = "before a delete: refuse while an unpromoted checkpoint exists (default), promote the "
                          "newest first, or ignore"});
  o.Optional("budget", &Policy::budget, BudgetType(), {.description = "makes this a budget policy"});
  o.Field("exemptions", &Policy::exemptions, schema::ListOf(ExemptionType()),
          {.description = "exemptions for this policy only"});
  o.Optional("dry_run", &Policy::dry_run, schema::Bool(), {.description = "true: this policy never acts"});
  o.Check(ValidatePolicy);
  return o.Build();
}

std::string Cmp(CmpOp op, const std::string& v) { return std::string(CmpOpText(op)) + " " + v; }

}  // namespace

std::pair<CmpOp, std::string> SplitComparison(std::string_view text) {
  std::string_view t = Trim(text);
  static constexpr std::pair<std::string_view, CmpOp> kOps[] = {
      {">=", CmpOp::kGe}, {"<=", CmpOp::kLe}, {"==", CmpOp::kEq}, {"!=", CmpOp::kNe},
      {">", CmpOp::kGt},  {"<", CmpOp::kLt},  {"=", CmpOp::kEq}};
  for (const auto& [s, op] : kOps) {
    if (t.substr(0, s.size()) == s) return {op, std::string(Trim(t.substr(s.size())))};
  }
  return {CmpOp::kGe, std::string(t)};
}

schema::Type<std::vector<Policy>> PoliciesType() { return schema::ListOf(PolicyType()); }
schema::Type<std::vector<Exemption>> ExemptionsType() { return schema::ListOf(ExemptionType()); }

schema::Type<Limits> LimitsType() {
  schema::Object<Limits> o("Blast-radius caps: a cycle that would exceed either acts on nothing and alerts");
  o.Field("max_actions_per_cycle", &Limits::max_actions_per_cycle, schema::Integer(0, 100000),
          {.description = "most mutating actions in one cycle (default 10)"});
  o.Field("max_actions_percent", &Limits::max_actions_percent, schema::Integer(0, 100),
          {.description = "most mutating actions in one cycle as a percentage of live governed resources, at least "
                          "one (default 20)"});
  return o.Build();
}

bj::object WhereJsonSchema() {
  bj::object props;
  props["and"] = bj::object{{"type", "array"}, {"items", {{"$ref", "#/$defs/where"}}}};
  props["or"] = bj::object{{"type", "array"}, {"items", {{"$ref", "#/$defs/where"}}}};
  props["not"] = bj::object{{"$ref", "#/$defs/where"}};
  for (const FieldInfo& info : kFields) {
    bj::object o;
    switch (info.field) {
      case Filter::Field::kIdleFor:
      case Filter::Field::kNoTrafficFor:
      case Filter::Field::kAge: o = DurationCmpType().json(); break;
      case Filter::Field::kSpendUsd:
      case Filter::Field::kBurnUsdPerHour: o = MoneyCmpType().json(); break;
      case Filter::Field::kGpus:
      case Filter::Field::kReplicas:
      case Filter::Field::kUnpromotedCheckpoints: o = IntCmpType().json(); break;
      case Filter::Field::kLabels: o = LabelsType().json(); break;
      case Filter::Field::kName:
      case Filter::Field::kOwner: o = bj::object{{"type", "string"}, {"format", "regex"}}; break;
      default: o = schema::StringList().json(); break;
    }
    o["description"] = std::string(info.description);
    props[info.name] = std::move(o);
  }
  return bj::object{{"type", "object"}, {"additionalProperties", false}, {"minProperties", 1}, {"properties", props}};
}

void CheckReferences(Context& ctx, const ConfigNode& policies_node, const PolicySet& set,
                     const std::vector<std::string>& notifier_names, const std::vector<std::string>& provider_names) {
  static const ConfigNode kNone;
  for (size_t i = 0; i < set.policies.size(); ++i) {
    const Policy& p = set.policies[i];
    const ConfigNode& node = i < policies_node.items.size() ? policies_node.items[i] : kNone;
    schema::PathScope root(ctx, "policies");
    schema::PathScope scope(ctx, i);
    for (size_t j = 0; j < i; ++j) {
      if (set.policies[j].name == p.name) {
        ctx.KeyError(node, "name", "duplicate policy name '" + p.name + "' (first at line " +
                                       std::to_string(set.policies[j].mark.line) + ")");
      }
    }
    for (const std::string& n : p.notify) {
      if (std::find(notifier_names.begin(), notifier_names.end(), n) == notifier_names.end()) {
        std::string msg = "no notifier named '" + n + "'";
        if (auto s = Suggest(n, notifier_names)) msg += " (did you mean '" + *s + "'?)";
        ctx.KeyError(node, "notify", msg);
      }
    }
    if (p.budget && !p.budget->provider.empty() &&
        std::find(provider_names.begin(), provider_names.end(), p.budget->provider) == provider_names.end()) {
      std::string msg = "no provider named '" + p.budget->provider + "'";
      if (auto s = Suggest(p.budget->provider, provider_names)) msg += " (did you mean '" + *s + "'?)";
      const ConfigNode* b = node.Find("budget");
      schema::PathScope budget(ctx, "budget");
      ctx.KeyError(b ? *b : node, "provider", msg);
    }
  }
}

std::string_view CmpOpText(CmpOp op) {
  switch (op) {
    case CmpOp::kGe: return ">=";
    case CmpOp::kGt: return ">";
    case CmpOp::kLe: return "<=";
    case CmpOp::kLt: return "<";
    case CmpOp::kEq: return "==";
    case CmpOp::kNe: return "!=";
  }
  return ">=";
}

std::string DescribeFilter(const Filter& f) {
  switch (f.op) {
    case Filter::Op::kAll: return "(every resource)";
    case Filter::Op::kNot: return "not (" + DescribeFilter(f.children.at(0)) + ")";
    case Filter::Op::kAnd:
    case Filter::Op::kOr: {
      std::vector<std::string> parts;
      for (const Filter& c : f.children) {
        std::string s = DescribeFilter(c);
        parts.push_back(c.op == Filter::Op::kAnd || c.op == Filter::Op::kOr ? "(" + s + ")" : s);
      }
      return Join(parts, f.op == Filter::Op::kAnd ? " and " : " or ");
    }
    case Filter::Op::kLeaf: break;
  }
  const std::string name(FieldName(f.field));
  switch (f.field) {
    case Filter::Field::kLifecycle: {
      std::vector<std::string> v;
      for (Lifecycle l : f.lifecycles) v.emplace_back(LifecycleName(l));
      return v.size() == 1 ? name + " = " + v[0] : name + " in [" + Join(v, ", ") + "]";
    }
    case Filter::Field::kIdleFor:
    case Filter::Field::kNoTrafficFor:
    case Filter::Field::kAge: return name + " " + Cmp(f.duration.op, FormatDuration(f.duration.value));
    case Filter::Field::kSpendUsd:
    case Filter::Field::kBurnUsdPerHour: return name + " " + Cmp(f.money.op, FormatMoney(f.money.value));
    case Filter::Field::kGpus:
    case Filter::Field::kReplicas:
    case Filter::Field::kUnpromotedCheckpoints: return name + " " + Cmp(f.integer.op, std::to_string(f.integer.value));
    case Filter::Field::kName:
    case Filter::Field::kOwner: return name + " ~ /" + (f.pattern ? f.pattern->text : "") + "/";
    case Filter::Field::kLabels: {
      std::vector<std::string> v;
      for (const auto& [k, val] : f.labels) v.push_back(k + "=" + val);
      return "labels {" + Join(v, ", ") + "}";
    }
    case Filter::Field::kFlags: return "flags include [" + Join(f.strings, ", ") + "]";
    default:
      return f.strings.size() == 1 ? name + " = " + f.strings[0] : name + " in [" + Join(f.strings, ", ") + "]";
  }
}

std::string Explain(const PolicySet& set, bool global_dry_run) {
  std::string out;
  auto line = [&](std::string_view k, const std::string& v) { out += "  " + std::string(k) + ": " + v + "\n"; };
  for (const Policy& p : set.policies) {
    out += "policy " + p.name + "\n";
    if (!p.description.empty()) line("description", p.description);
    if (p.budget) {
      const Budget& b = *p.budget;
      line("budget", std::string(PeriodName(b.period)) + " limit $" + FormatMoney(b.limit) + " on " +
                         (b.provider.empty() ? "every provider" : b.provider) +
                         (b.kind ? " (" + std::string(KindName(*b.kind)) + ")" : "") + ", warn at " +
                         std::to_string(static_cast<int>(b.warn_at * 100 + 0.5)) + "%, periods from midnight " +
                         (b.tz ? b.tz->name() : "UTC"));
      if (p.action == ActionType::kDeactivate) line("order", std::string(BudgetOrderName(b.order)));
    }
    if (p.resource) line("resource", std::string(KindName(*p.resource)));
    line("where", DescribeFilter(p.where));
    {
      std::vector<std::string> w;
      auto add_i = [&](const char* k, const std::optional<IntCmp>& c) {
        if (c) w.push_back(std::string(k) + " " + Cmp(c->op, std::to_string(c->value)));
      };
      auto add_m = [&](const char* k, const std::optional<MoneyCmp>& c) {
        if (c) w.push_back(std::string(k) + " " + Cmp(c->op, FormatMoney(c->value)));
      };
      add_i("account_active_sessions", p.when.account_active_sessions);
      add_i("account_slot_headroom", p.when.account_slot_headroom);
      add_m("account_spend_day_usd", p.when.account_spend_day_usd);
      add_m("account_spend_week_usd", p.when.account_spend_week_usd);
      add_m("account_spend_month_usd", p.when.account_spend_month_usd);
      line("when", w.empty() ? "(always)" : Join(w, " and "));
    }
    std::string action = std::string(ActionName(p.action));
    action += IsIrreversible(p.action) ? " (irreversible, allowed)" : IsMutating(p.action) ? " (reversible first)" : "";
    line("action", action);
    line("grace", FormatDuration(p.grace));
    if (IsIrreversible(p.action)) line("checkpoints", std::string(CheckpointModeName(p.checkpoints)));
    line("notify", p.notify.empty() ? "(none)" : Join(p.notify, ", "));
    const bool dry = global_dry_run || p.dry_run.value_or(false);
    line("dry_run", dry ? (p.dry_run.value_or(false) ? "yes (this policy)" : "yes (global)") : "no: acts for real");
    if (!p.exemptions.empty()) line("exemptions", std::to_string(p.exemptions.size()));
    out += "\n";
  }
  out += "limits: at most " + std::to_string(set.limits.max_actions_per_cycle) + " actions and " +
         std::to_string(set.limits.max_actions_percent) + "% of live resources per cycle\n";
  out += "exemptions: " + std::to_string(set.exemptions.size()) + " global\n";
  return out;
}

std::string_view CheckpointModeName(CheckpointMode m) {
  switch (m) {
    case CheckpointMode::kRefuse: return "refuse";
    case CheckpointMode::kPromoteLatest: return "promote_latest";
    case CheckpointMode::kIgnore: return "ignore";
  }
  return "refuse";
}

std::string_view PeriodName(Period p) {
  switch (p) {
    case Period::kDay: return "day";
    case Period::kWeek: return "week";
    case Period::kMonth: return "month";
  }
  return "day";
}

std::string_view BudgetOrderName(BudgetOrder o) {
  switch (o) {
    case BudgetOrder::kIdleLongest: return "idle_longest";
    case BudgetOrder::kBurnHighest: return "burn_highest";
    case BudgetOrder::kNewest: return "newest";
  }
  return "idle_longest";
}

namespace {

Time PeriodStartUtc(Period p, Time now) {
  const auto day = std::chrono::floor<std::chrono::days>(now);
  switch (p) {
    case Period::kDay: return day;
    case Period::kWeek: {
      // 1970-01-01 was a Thursday; Monday-based weeks.
      const std::chrono::weekday wd{day};
      const int since_monday = (static_cast<int>(wd.c_encoding()) + 6) % 7;
      return day - std::chrono::days(since_monday);
    }
    case Period::kMonth: {
      const std::chrono::year_month_day ymd{day};
      return std::chrono::sys_days(ymd.year() / ymd.month() / std::chrono::day(1));
    }
  }
  return day;
}

Time NextPeriodStartUtc(Period p, Time start) {
  switch (p) {
    case Period::kDay: return start + std::chrono::days(1);
    case Period::kWeek: return start + std::chrono::days(7);
    case Period::kMonth: {
      const std::chrono::year_month_day ymd{std::chrono::floor<std::chrono::days>(start)};
      return std::chrono::sys_days((ymd.year() / ymd.month() / std::chrono::day(1)) + std::chrono::months(1));
    }
  }
  return start + std::chrono::days(1);
}

}  // namespace

Time PeriodStart(Period p, Time now, const TimeZone* tz) {
  if (!tz) return PeriodStartUtc(p, now);
  // Local midnight: the period's start on the local calendar, back to UTC.
  return tz->FromLocal(PeriodStartUtc(p, now + tz->OffsetAt(now)));
}

Time PeriodEnd(Period p, Time now, const TimeZone* tz) {
  if (!tz) return NextPeriodStartUtc(p, PeriodStartUtc(p, now));
  return tz->FromLocal(NextPeriodStartUtc(p, PeriodStartUtc(p, now + tz->OffsetAt(now))));
}

}  // namespace loopwarden::policies
