#pragma once
// The policy engine: pure. Resources with their facts, marks, exemptions, account
// aggregates and `now` go in; decisions come out. No I/O, no clock, no store, so tests
// are tables of cases and the daemon's plan is exactly what it would do.
//
// The lifecycle of a resource under a policy:
//   match          -> mark (act_after = now + grace), notify when the policy notifies
//   still matching -> skip "marked; acts at 10:42Z" until the grace ends, then act
//   compliant      -> unmark
//   facts unknown  -> skip, keeping the mark; unknown is never idle
// Acting never happens on unknown or transitional lifecycles, on exempt resources,
// or on a delete whose checkpoints the policy protects. When a cycle's acts exceed a
// blast-radius cap, every act becomes a skip and one alert is raised instead.
//
// The engine is the only decider: `plan`, a dry run and a live run act on exactly the
// decisions it returns. So it applies the cooldown after an action (EvalInput::
// recent_acts), and a policy whose `when` reads the account's sessions marks and acts
// on only as many resources as bring the account to its condition: candidates are
// ranked (deadline, then longest idle) and each is checked against the counts the ones
// before it leave. Those policies are evaluated after the others, so they count the
// slots the others' acts free this cycle.

#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/resource.h"
#include "policies/model.h"

namespace loopwarden::policies {

// A resource's numbers as the policies read them, worked out when read (FactsSource).
struct Facts {
  OptionalDuration idle_for;        // unknown when an activity signal was missing
  OptionalDuration no_traffic_for;  // unknown when traffic is not measured or was missing
  OptionalDuration age;
  Money spend;          // recorded for the resource so far
  Money burn_per_hour;  // current GPU burn
  // The quiet time began where observation began (the provider serves no history from
  // before first sight): the value is only a lower bound, so a threshold it has not
  // reached yet is unknown, not false.
  bool idle_at_least = false;
  bool no_traffic_at_least = false;
};

// Where a view's facts come from. The engine reads them where a policy asks (a running
// resource of a kind some policy selects, a candidate's order), so a cycle holds no
// Facts per resource: 48 bytes in each of a cycle's views were 5.5 MB at 100k resources,
// the largest block an evaluation allocated.
class FactsSource {
 public:
  virtual Facts Of(const void* item) const = 0;

 protected:
  ~FactsSource() = default;
};

// Facts given outright: a view's item is the Facts (tests, a one-resource re-check).
class GivenFacts final : public FactsSource {
 public:
  Facts Of(const void* item) const override { return *static_cast<const Facts*>(item); }
  static const GivenFacts& Get();
};

// 24 bytes: the engine builds a resource's key only where it needs one (a decision, a
// mark, a recent act), so a view holds none, and reads its facts from the source.
struct ResourceView {
  const Resource* resource = nullptr;
  const void* item = nullptr;  // what `source` reads the facts from
  const FactsSource* source = nullptr;

  Facts facts() const { return source->Of(item); }
  // A view of `r` with `f` as its facts; `f` must outlive the view.
  static ResourceView With(const Resource* r, const Facts* f) { return {r, f, &GivenFacts::Get()}; }
};

struct AccountAggregates {
  int64_t active_sessions = 0;  // slot holders (Fireworks sessions; Baseten live runs and samplers)
  int64_t slot_cap = 0;
  Money spend_day;
  Money spend_week;
  Money spend_month;
};

// "provider/account", the key of EvalInput::accounts.
std::string AccountKey(const Resource& r);

struct MarkView {
  Time marked_at;
  Time act_after;
  std::optional<Time> notified_at;
};

// A snooze from `loopwarden snooze` (the store's exemptions table).
struct Snooze {
  std::string resource;  // resource key or native id
  std::string policy;    // empty: every policy
  std::optional<Time> until;
  std::string reason;
  std::string by;
};

struct EvalInput {
  std::span<const ResourceView> resources;
  std::map<std::pair<std::string, std::string>, MarkView> marks;  // (policy, resource key)
  std::vector<Snooze> snoozes;
  std::map<std::string, AccountAggregates> accounts;  // by AccountKey
  std::map<std::string, Money> budget_spend;          // by budget policy name: spend in its current period
  // "At this rate": where each budget's period ends, and when it crosses its limit.
  struct BudgetForecast {
    Money period_end;                   // spend forecast at the period's end
    Time ends_at;                       // the period's end
    std::optional<Time> crosses_at;     // when the limit is reached at this rate, if before ends_at
  };
  std::map<std::string, BudgetForecast> budget_forecast;
  // What each policy did to each resource within the cooldown, (policy, resource key)
  // -> when it finished: the provider may not show the effect yet, so the engine neither
  // marks nor acts again, and counts a slot so freed as free.
  std::map<std::pair<std::string, std::string>, Time> recent_acts;
  Time now;
  bool global_dry_run = true;
};

enum class DecisionType { kMark, kNotify, kAct, kUnmark, kSkip };
std::string_view DecisionName(DecisionType t);

// What a notify decision is about.
enum class Notice { kNone, kMarked, kBudgetWarning, kBudgetExceeded, kBlastRadius };
std::string_view NoticeName(Notice n);

struct Decision {
  DecisionType type = DecisionType::kSkip;
  std::string policy;
  std::string resource;  // key; empty for budget and blast-radius notices
  ActionType action = ActionType::kNotify;
  std::string reason;
  std::optional<Time> act_after;
  bool dry_run = true;
  Notice notice = Notice::kNone;
  CheckpointMode checkpoints = CheckpointMode::kRefuse;
  std::vector<std::string> notify;  // notifier names
};

struct EvalOutput {
  std::vector<Decision> decisions;
  bool blast_radius_abort = false;
  std::string abort_reason;
  int64_t acts = 0;  // acts that survived the caps
  // Indices of the kAct decisions in the order to carry them out: deadline first, then
  // the longest idle (the order the account counts were worked out in).
  std::vector<size_t> act_order;
};

enum class Tri { kFalse, kTrue, kUnknown };

// Whether a policy matches one resource now, with the reason. Used for evaluation and
// for re-verifying the provider's fresh object before acting.
struct Verdict {
  Tri match = Tri::kUnknown;
  std::string reason;
  // Unknown only because quiet time is a lower bound still under its threshold: the
  // provider serves no history, and loopwarden has not watched long enough yet. `plan`
  // shows these ("unknown until observed for X") rather than leaving them out.
  bool awaiting_history = false;
};

class Engine {
 public:
  explicit Engine(PolicySet set) : set_(std::move(set)) {}
  const PolicySet& set() const { return set_; }

  EvalOutput Evaluate(const EvalInput& in) const;

  // Does `policy` (a resource policy) match `view` now? Exemptions and marks are not
  // considered; the checkpoint rule is (a delete it protects does not match).
  Verdict Check(const Policy& policy, const ResourceView& view, const AccountAggregates* account, Time now) const;
  // The same, but a resource that does not match gets no reason (the cycle's common
  // case: a compliant resource with no mark to take back needs none).
  Verdict CheckMatchOnly(const Policy& policy, const ResourceView& view, const AccountAggregates* account) const;
  // The active exemption covering (policy, resource) at `now`, if any: its reason.
  std::optional<std::string> Exempt(const Policy& policy, const Resource& r, std::span<const Snooze> snoozes,
                                    Time now) const;
  const Policy* FindPolicy(const std::string& name) const;

  // The checkpoint rule for a delete: empty when allowed, else why not.
  static std::string CheckpointRefusal(const Policy& policy, const Resource& r);

 private:
  PolicySet set_;
};

// Three-valued evaluation of a `where` expression; `why` collects the facts that decided it.
Tri EvalFilter(const Filter& f, const ResourceView& v, std::vector<std::string>& why);
Tri EvalWhen(const When& w, const AccountAggregates* a, std::vector<std::string>& why);

}  // namespace loopwarden::policies
