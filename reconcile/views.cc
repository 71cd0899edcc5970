#include "reconcile/views.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/flat_hash.h"

namespace loopwarden::reconcile {

policies::Facts FactsOf(const store::ResourceState& st, Time now) {
  policies::Facts f;
  if (auto idle = st.IdleSince()) {
    f.idle_for = std::max(Duration::zero(), now - *idle);
    f.idle_at_least = st.observed_since && *idle <= *st.observed_since;
  }
  if (auto quiet = st.NoTrafficSince()) {
    f.no_traffic_for = std::max(Duration::zero(), now - *quiet);
    f.no_traffic_at_least = st.observed_since && *quiet <= *st.observed_since;
  }
  if (st.resource.created_at) f.age = std::max(Duration::zero(), now - *st.resource.created_at);
  f.spend = st.SpendAt(now);
  f.burn_per_hour = st.BurnPerHour();
  return f;
}

namespace {

// "At this rate": the higher of the period's average so far and what runs in scope
// burns right now (`burn_micros_per_hour`), so a fleet just started shows up at once
// and a quiet hour does not hide a day's pace. Token spend enters through the average
// (it has no running rate).
policies::EvalInput::BudgetForecast Forecast(const policies::Budget& b, Money spent, double burn_micros_per_hour,
                                             Time now) {
  using Hours = std::chrono::duration<double, std::ratio<3600>>;
  policies::EvalInput::BudgetForecast f;
  f.ends_at = b.End(now);
  const double elapsed_h = Hours(now - b.Start(now)).count();
  const double average = elapsed_h > 0 ? static_cast<double>(spent.micros()) / elapsed_h : 0;
  const double rate = std::max(average, burn_micros_per_hour);
  const double left_h = std::max(0.0, Hours(f.ends_at - now).count());
  f.period_end = Money::FromMicros(spent.micros() + std::llround(rate * left_h));
  if (spent < b.limit && rate > 0 && f.period_end >= b.limit) {
    const double to_limit_h = static_cast<double>((b.limit - spent).micros()) / rate;
    f.crosses_at = now + std::chrono::duration_cast<Duration>(Hours(to_limit_h));
  }
  return f;
}

bool InScope(const policies::Budget& b, const Resource& r) {
  return (b.provider.empty() || r.provider == b.provider) && (!b.kind || r.kind == *b.kind);
}

}  // namespace

Result<std::unique_ptr<EvalContext>> BuildEvalContext(store::Store& store, const policies::PolicySet& set,
                                                      const std::map<std::string, int64_t>& slot_caps, Time now,
                                                      bool global_dry_run) {
  auto ctx = std::make_unique<EvalContext>(now);
  policies::EvalInput& in = ctx->input;
  in.now = now;
  in.global_dry_run = global_dry_run;
  ctx->views.reserve(store.resources().size());
  std::vector<const policies::Policy*> budgets;
  for (const policies::Policy& p : set.policies) {
    if (p.budget) budgets.push_back(&p);
  }
  std::vector<double> burn(budgets.size(), 0);  // micro-USD per hour in each budget's scope
  // Each resource's account aggregates, found by its pooled provider and account names'
  // identity (equal text is one pooled entry): building "provider/account" and looking
  // it up in the ordered map for every resource was a third of this loop at 100k.
  HashMap<std::pair<const char*, const char*>, policies::AccountAggregates*> account_of;
  for (const store::ResourceState& st : store.resources()) {
    // Deleted resources are not in the world any more; their marks resolve to unmark.
    if (st.deleted_at || st.resource.lifecycle == Lifecycle::kDeleted) continue;
    ctx->views.push_back(ctx->facts.View(st));
    if (const Money b = st.BurnPerHour(); b.micros() != 0) {
      for (size_t i = 0; i < budgets.size(); ++i) {
        if (InScope(*budgets[i]->budget, st.resource)) burn[i] += static_cast<double>(b.micros());
      }
    }
    auto [known, fresh] = account_of.try_emplace({st.resource.provider.data(), st.resource.account.data()}, nullptr);
    if (fresh) known->second = &in.accounts[policies::AccountKey(st.resource)];  // map nodes stay put
    if (HoldsSlot(st.resource)) ++known->second->active_sessions;
  }
  in.resources = ctx->views;
  // Every total the policies can ask for, from one pass over the ledger.
  std::vector<Time> starts = {policies::PeriodStart(policies::Period::kDay, now),
                              policies::PeriodStart(policies::Period::kWeek, now),
                              policies::PeriodStart(policies::Period::kMonth, now)};
  for (const policies::Policy* p : budgets) starts.push_back(p->budget->Start(now));
  LW_ASSIGN_OR_RETURN(std::vector<store::SpendCell> cells, store.SpendSince(starts, now));
  for (auto& [account, agg] : in.accounts) {
    auto it = slot_caps.find(account);
    agg.slot_cap = it == slot_caps.end() ? 0 : it->second;
  }
  for (const store::SpendCell& c : cells) {
    auto it = in.accounts.find(c.provider + "/" + c.account);
    if (it == in.accounts.end()) continue;
    it->second.spend_day += c.since[0];
    it->second.spend_week += c.since[1];
    it->second.spend_month += c.since[2];
  }
  for (size_t i = 0; i < budgets.size(); ++i) {
    const policies::Policy& p = *budgets[i];
    const size_t column = 3 + i;
    Money spent;
    for (const store::SpendCell& c : cells) {
      if (!p.budget->provider.empty() && c.provider != p.budget->provider) continue;
      if (p.budget->kind && c.kind != KindName(*p.budget->kind)) continue;
      spent += c.since[column];
    }
    in.budget_spend[p.name] = spent;
    in.budget_forecast[p.name] = Forecast(*p.budget, spent, burn[i], now);
  }
  for (const auto& [k, m] : store.marks()) {
    in.marks[k] = policies::MarkView{.marked_at = m.marked_at, .act_after = m.act_after, .notified_at = m.notified_at};
  }
  LW_ASSIGN_OR_RETURN(std::vector<store::Intent> done, store.DoneSince(now - kActionCooldown));
  for (const store::Intent& i : done) {
    // A promotion is a step of a delete, not the policy's action.
    if (i.action == "promote_checkpoint" || !i.finished_at) continue;
    Time& last = in.recent_acts[{i.policy, i.resource}];
    last = std::max(last, *i.finished_at);
  }
  LW_ASSIGN_OR_RETURN(std::vector<store::Snooze> snoozes, store.ActiveSnoozes(now));
  for (const store::Snooze& s : snoozes) {
    in.snoozes.push_back({.resource = s.resource, .policy = s.policy, .until = s.until, .reason = s.reason, .by = s.by});
  }
  return ctx;
}

}  // namespace loopwarden::reconcile
