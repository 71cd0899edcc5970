#pragma once
// The policy language: what operators write under `policies:`, `exemptions:` and
// `limits:`, as loaded and validated by policies/loader.h.
//
// Plain data, no behaviour; the engine (policies/engine.h) interprets it.

#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "core/config_tree.h"
#include "core/money.h"
#include "core/resource.h"
#include "core/time.h"
#include "core/timezone.h"

namespace re2 {
class RE2;
}

namespace loopwarden::policies {

enum class CmpOp { kGe, kGt, kLe, kLt, kEq, kNe };

// ">= 20m", "< 2h", "20m" (means >=).
struct DurationCmp {
  CmpOp op = CmpOp::kGe;
  Duration value{0};
};
struct MoneyCmp {
  CmpOp op = CmpOp::kGe;
  Money value;
};
struct IntCmp {
  CmpOp op = CmpOp::kGe;
  int64_t value = 0;
};

std::string_view CmpOpText(CmpOp op);  // ">="

// A compiled regular expression (RE2: linear time in the text, so a hostile name from a
// provider cannot stall a cycle) that remembers its source text.
struct Pattern {
  std::string text;
  std::shared_ptr<const re2::RE2> re;
};
// Whether `p` matches anywhere in `text` (search, not full match).
bool Matches(const Pattern& p, std::string_view text);

// One node of a `where` expression. Leaves test one field; and / or / not combine.
// Evaluation is three-valued: a fact that is unknown (no activity signal, say) makes
// its leaf unknown, `not unknown` stays unknown, and only a definite true matches. So
// "unknown is not idle" holds under negation too.
struct Filter {
  enum class Op { kAll, kAnd, kOr, kNot, kLeaf };
  enum class Field {
    kLifecycle,
    kMode,
    kAvailability,
    kIdleFor,
    kNoTrafficFor,
    kAge,
    kSpendUsd,
    kBurnUsdPerHour,
    kGpus,
    kReplicas,
    kBaseModel,
    kName,
    kOwner,
    kLabels,
    kFlags,
    kProvider,
    kUnpromotedCheckpoints,
  };

  Op op = Op::kAll;  // kAll: an absent `where` matches everything
  std::vector<Filter> children;
  Field field = Field::kLifecycle;
  SourceMark mark;
  // Leaf operands; which one is set depends on `field`.
  std::vector<Lifecycle> lifecycles;
  std::vector<std::string> strings;  // mode, availability, base_model, flags, provider
  DurationCmp duration;
  MoneyCmp money;
  IntCmp integer;
  std::optional<Pattern> pattern;                 // name, owner
  std::map<std::string, std::string> labels;      // value "*" means "present"
};

// `when:` conditions over the account the resource belongs to. All must hold.
struct When {
  std::optional<IntCmp> account_active_sessions;
  std::optional<IntCmp> account_slot_headroom;
  std::optional<MoneyCmp> account_spend_day_usd;
  std::optional<MoneyCmp> account_spend_week_usd;
  std::optional<MoneyCmp> account_spend_month_usd;
  bool empty() const {
    return !account_active_sessions && !account_slot_headroom && !account_spend_day_usd &&
           !account_spend_week_usd && !account_spend_month_usd;
  }
};

enum class CheckpointMode { kRefuse, kPromoteLatest, kIgnore };
std::string_view CheckpointModeName(CheckpointMode m);

enum class Period { kDay, kWeek, kMonth };
std::string_view PeriodName(Period p);
// The start of the period containing `now`, at local midnight in `tz` (UTC when null;
// weeks start on Monday), and the start of the next one.
Time PeriodStart(Period p, Time now, const TimeZone* tz = nullptr);
Time PeriodEnd(Period p, Time now, const TimeZone* tz = nullptr);

enum class BudgetOrder { kIdleLongest, kBurnHighest, kNewest };
std::string_view BudgetOrderName(BudgetOrder o);

struct Budget {
  std::string provider;  // empty: every provider
  std::optional<Kind> kind;
  Period period = Period::kDay;
  // Periods start at midnight here (`timezone:`, an IANA name; default UTC).
  std::shared_ptr<const TimeZone> tz;
  Money limit;
  double warn_at = 0.8;  // fraction of the limit that sends a warning
  // For `action: deactivate`: which billable resources go first.
  BudgetOrder order = BudgetOrder::kIdleLongest;
  // The current period in the budget's own zone: every caller (spend, forecast,
  // notice dedupe) goes through these, so none can fall back to UTC by omission.
  Time Start(Time now) const { return PeriodStart(period, now, tz.get()); }
  Time End(Time now) const { return PeriodEnd(period, now, tz.get()); }
};

struct ExemptionMatch {
  std::optional<Pattern> name;
  std::optional<Pattern> owner;
  std::string id;
  std::string provider;
  std::optional<Kind> kind;
  std::map<std::string, std::string> labels;
};

struct Exemption {
  ExemptionMatch match;  // `id:` at the top level is shorthand for match.id
  std::optional<Time> until;
  std::string reason;
  std::string by;  // who added it (snoozes)
  std::string policy;  // empty: every policy
  SourceMark mark;
};

struct Limits {
  int64_t max_actions_per_cycle = 10;
  int64_t max_actions_percent = 20;  // of the live resources loopwarden governs
};

struct Policy {
  std::string name;
  std::string description;
  std::optional<Kind> resource;  // every policy but a budget has one
  Filter where;
  When when;
  ActionType action = ActionType::kNotify;
  Duration grace = std::chrono::minutes(15);
  std::vector<std::string> notify;
  bool allow_irreversible = false;
  CheckpointMode checkpoints = CheckpointMode::kRefuse;
  std::optional<Budget> budget;
  std::vector<Exemption> exemptions;
  std::optional<bool> dry_run;  // overrides the global dry_run for this policy
  SourceMark mark;
};

struct PolicySet {
  std::vector<Policy> policies;
  std::vector<Exemption> exemptions;
  Limits limits;
};

}  // namespace loopwarden::policies
