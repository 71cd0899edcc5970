// Reconciliation of the ledger with the providers' bills, per resource and UTC day.
//
// The ledger is what loopwarden saw: GPU intervals from its polls and token deltas of
// the counters it read. The bill is what the provider charged. They differ by what no
// poll could see (the time before first sight, the minutes between a change and the
// poll that noticed it) and by anything loopwarden models wrongly (a price, a meter).
// The first is backfill, the second drift; both are booked so the ledger agrees with
// the bill, and the first comparison of each watched day is kept to measure drift.
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "core/log.h"
#include "store/ledger_scan.h"
#include "store/period_spend.h"
#include "store/sqlite.h"
#include "store/store.h"

namespace loopwarden::store {
namespace {

constexpr Duration kDay = std::chrono::hours(24);

// What the provider billed for one row: its money, or its quantity at our price.
std::optional<Money> BilledCost(const UsageRow& u, const Resource& r, const PriceBook& prices) {
  if (u.cost) return *u.cost;
  if (u.meter == "gpu_seconds") {
    const std::optional<Money> hour = prices.GpuHour(r);
    if (!hour) return std::nullopt;
    return ScalePrice(*hour, u.quantity, 3600);
  }
  if (u.meter.starts_with("tokens.")) {
    const std::optional<Money> million = prices.TokenPrice(r, u.meter.substr(7));
    if (!million) return std::nullopt;
    return ScalePrice(*million, u.quantity, 1'000'000);
  }
  return std::nullopt;
}

}  // namespace

Result<ReconcileStats> Store::ReconcileUsage(const std::string& provider, const std::string& account,
                                             std::span<const UsageRow> rows, Time now, const PriceBook& prices,
                                             Duration first_sight_slack) {
  if (read_only_) return FailedPrecondition("store opened read-only");
  ReconcileStats stats;
  // The provider's billing ids of this account's resources: the resource's own id, and
  // the deployment a Baseten run or sampler bills through. The resource whose own id
  // it is holds the day's record; otherwise the first that bills through it.
  std::unordered_map<std::string, std::vector<ResourceState*>> by_billing_id;
  for (auto& [key, st] : states_) {
    const Resource& r = st.resource;
    if (r.provider != provider || r.account != account) continue;
    by_billing_id[r.id].insert(by_billing_id[r.id].begin(), &st);
    auto dep = r.refs.find("deployment_id");
    if (dep != r.refs.end() && !dep->second.empty() && dep->second != r.id) by_billing_id[dep->second].push_back(&st);
  }
  // The bill per (billing id, day).
  std::map<std::pair<std::string, Time>, Money> billed;
  for (const UsageRow& u : rows) {
    auto found = by_billing_id.find(u.resource_id);
    if (found == by_billing_id.end()) {
      ++stats.unmatched;
      continue;
    }
    const std::optional<Money> cost = BilledCost(u, found->second.front()->resource, prices);
    if (!cost) {
      ++stats.unpriced;
      continue;
    }
    billed[{u.resource_id, FloorToDay(u.day)}] += *cost;
  }
  if (billed.empty()) return stats;

  // What was billed when each day was compared before.
  std::map<std::pair<int64_t, Time>, Money> known;
  {
    Time first = billed.begin()->first.second, last = first;
    for (const auto& [k, cost] : billed) {
      first = std::min(first, k.second);
      last = std::max(last, k.second);
    }
    LW_ASSIGN_OR_RETURN(Stmt q, db_->Prepare("SELECT rid, day, billed FROM usage_days WHERE day >= ?1 AND day <= ?2"));
    q.Bind(1, ToUnixMicros(first)).Bind(2, ToUnixMicros(last));
    while (true) {
      LW_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) break;
      known[{q.Int(0), FromUnixMicros(q.Int(1))}] = Money::FromMicros(q.Int(2));
    }
  }

  // What the ledger holds on the days compared for the first time, per resource key.
  std::set<Time> new_days;
  std::set<std::string> keys;
  for (const auto& [k, cost] : billed) {
    const ResourceState* owner = by_billing_id[k.first].front();
    if (known.contains({owner->row_id, k.second})) continue;
    new_days.insert(k.second);
    for (const ResourceState* st : by_billing_id[k.first]) keys.insert(st->resource.Key());
  }
  std::map<std::pair<std::string, Time>, Money> ledger;
  if (!new_days.empty()) {
    const Time lo = *new_days.begin(), hi = *new_days.rbegin() + kDay;
    LW_RETURN_IF_ERROR(ForEachLedgerRow(*db_, "l.start_at < ?2 AND COALESCE(l.end_at, ?2) >= ?1", lo, hi,
                                        [&](const LedgerRow& r) {
      if (!keys.contains(r.resource)) return;
      for (Time d : new_days) {
        if (Money c = CostWithin(r, d, d + kDay); c.micros() != 0) ledger[{r.resource, d}] += c;
      }
    }));
    // Detail older than the retention age lives on as hourly roll-ups.
    LW_ASSIGN_OR_RETURN(Stmt h, db_->Prepare("SELECT resource, hour, cost FROM ledger_hourly WHERE hour >= ?1 AND hour < ?2"));
    h.Bind(1, ToUnixMicros(lo)).Bind(2, ToUnixMicros(hi));
    while (true) {
      LW_ASSIGN_OR_RETURN(bool row, h.Step());
      if (!row) break;
      std::string key = h.Text(0);
      if (!keys.contains(key)) continue;
      ledger[{std::move(key), FloorToDay(FromUnixMicros(h.Int(1)))}] += Money::FromMicros(h.Int(2));
    }
  }

  struct Booking {
    ResourceState* st;
    LedgerRow row;
  };
  std::vector<Booking> booked;
  Status s = InTransaction(*db_, [&]() -> Status {
    for (const auto& [k, bill] : billed) {
      const auto& [id, day] = k;
      const std::vector<ResourceState*>& mapped = by_billing_id[id];
      ResourceState& owner = *mapped.front();
      Money diff;
      auto prior = known.find({owner.row_id, day});
      if (prior != known.end()) {
        diff = bill - prior->second;
        if (diff.micros() == 0) continue;
        ++stats.revised;
        LW_ASSIGN_OR_RETURN(Stmt* q, Cached("UPDATE usage_days SET billed=?3, checked_at=?4 WHERE rid=?1 AND day=?2"));
        q->Bind(1, owner.row_id).Bind(2, ToUnixMicros(day)).Bind(3, bill.micros()).Bind(4, ToUnixMicros(now));
        LW_RETURN_IF_ERROR(q->Run());
      } else {
        Money held;
        for (const ResourceState* st : mapped) {
          auto l = ledger.find({st->resource.Key(), day});
          if (l != ledger.end()) held += l->second;
        }
        const Time began = std::max(day, owner.resource.created_at.value_or(day));
        const bool watched = owner.first_seen <= began + first_sight_slack;
        diff = bill - held;
        ++stats.compared;
        (watched ? stats.corrected : stats.backfilled) += diff;
        LW_ASSIGN_OR_RETURN(Stmt* q, Cached(
            "INSERT INTO usage_days (rid, day, billed, ledger, watched, checked_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
        q->Bind(1, owner.row_id).Bind(2, ToUnixMicros(day)).Bind(3, bill.micros()).Bind(4, held.micros());
        q->Bind(5, watched ? 1 : 0).Bind(6, ToUnixMicros(now));
        LW_RETURN_IF_ERROR(q->Run());
        if (diff.micros() == 0) continue;
      }
      // Spread over the part of the day the resource existed, so a budget period that
      // starts inside the day takes its share.
      const Time start = std::clamp(owner.resource.created_at.value_or(day), day, day + kDay - std::chrono::seconds(1));
      LW_ASSIGN_OR_RETURN(Stmt* q, Cached(
          "INSERT INTO ledger (rid, meter, start_at, end_at, quantity_rate, quantity, unit_price, cost, idle) "
          "VALUES (?1, 'billed', ?2, ?3, 0, 0, 0, ?4, 0)"));
      q->Bind(1, owner.row_id).Bind(2, ToUnixMicros(start)).Bind(3, ToUnixMicros(day + kDay)).Bind(4, diff.micros());
      LW_RETURN_IF_ERROR(q->Run());
      booked.push_back({&owner, {.id = db_->LastInsertRowId(), .resource = owner.resource.Key(), .meter = "billed",
                                 .start = start, .end = day + kDay, .cost = diff}});
    }
    return Status::Ok();
  });
  if (!s.ok()) return s.WithContext("reconciling " + provider + " usage");
  // Committed: the in-memory totals take the same rows.
  for (const Booking& b : booked) {
    b.st->closed_spend += b.row.cost;
    if (period_spend_) period_spend_->AddFinal(*b.st, b.row);
  }
  return stats;
}

Result<UsageDrift> Store::QueryUsageDrift(const std::string& provider, Time since) {
  LW_ASSIGN_OR_RETURN(Stmt q, db_->Prepare(
      "SELECT COALESCE(SUM(u.ledger), 0), COALESCE(SUM(u.billed), 0), COUNT(*) FROM usage_days u "
      "JOIN resources r ON r.id = u.rid WHERE r.provider = ?1 AND u.watched = 1 AND u.day >= ?2"));
  q.Bind(1, provider).Bind(2, ToUnixMicros(since));
  LW_ASSIGN_OR_RETURN(bool row, q.Step());
  UsageDrift d;
  if (row) {
    d.ledger = Money::FromMicros(q.Int(0));
    d.billed = Money::FromMicros(q.Int(1));
    d.days = q.Int(2);
  }
  return d;
}

}  // namespace loopwarden::store
