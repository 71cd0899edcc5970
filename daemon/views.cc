#include "daemon/views.h"

namespace loopwarden::daemon {

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

policies::ResourceView ViewOf(const store::ResourceState& st, Time now) {
  return policies::ResourceView{.resource = &st.resource, .facts = FactsOf(st, now)};
}

bool HoldsSlot(const Resource& r) {
  const bool live = r.lifecycle == Lifecycle::kRunning || r.lifecycle == Lifecycle::kStarting;
  switch (r.kind) {
    case Kind::kFireworksTrainingSession:
    case Kind::kBasetenRun:
    case Kind::kBasetenSampler: return live;
    default: return false;
  }
}

Result<std::unique_ptr<EvalContext>> BuildEvalContext(store::Store& store, const policies::PolicySet& set,
                                                      const std::map<std::string, int64_t>& slot_caps, Time now,
                                                      bool global_dry_run) {
  auto ctx = std::make_unique<EvalContext>();
  policies::EvalInput& in = ctx->input;
  in.now = now;
  in.global_dry_run = global_dry_run;
  ctx->views.reserve(store.resources().size());
  for (const auto& [key, st] : store.resources()) {
    // Deleted resources are not in the world any more; their marks resolve to unmark.
    if (st.deleted_at || st.resource.lifecycle == Lifecycle::kDeleted) continue;
    ctx->views.push_back(ViewOf(st, now));
    ctx->views.back().key = key;
    auto& agg = in.accounts[policies::AccountKey(st.resource)];
    if (HoldsSlot(st.resource)) ++agg.active_sessions;
  }
  in.resources = ctx->views;
  // Every total the policies can ask for, from one pass over the ledger.
  std::vector<Time> starts = {policies::PeriodStart(policies::Period::kDay, now),
                              policies::PeriodStart(policies::Period::kWeek, now),
                              policies::PeriodStart(policies::Period::kMonth, now)};
  for (const policies::Policy& p : set.policies) {
    if (p.budget) starts.push_back(policies::PeriodStart(p.budget->period, now));
  }
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
  size_t column = 3;
  for (const policies::Policy& p : set.policies) {
    if (!p.budget) continue;
    Money spent;
    for (const store::SpendCell& c : cells) {
      if (!p.budget->provider.empty() && c.provider != p.budget->provider) continue;
      if (p.budget->kind && c.kind != KindName(*p.budget->kind)) continue;
      spent += c.since[column];
    }
    in.budget_spend[p.name] = spent;
    ++column;
  }
  for (const auto& [k, m] : store.marks()) {
    in.marks[k] = policies::MarkView{.marked_at = m.marked_at, .act_after = m.act_after, .notified_at = m.notified_at};
  }
  LW_ASSIGN_OR_RETURN(std::vector<store::Snooze> snoozes, store.ActiveSnoozes(now));
  for (const store::Snooze& s : snoozes) {
    in.snoozes.push_back({.resource = s.resource, .policy = s.policy, .until = s.until, .reason = s.reason, .by = s.by});
  }
  return ctx;
}

}  // namespace loopwarden::daemon
