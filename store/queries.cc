// Spend, status and report queries, and retention roll-ups.
#include <algorithm>
#include <map>

#include "store/ledger_scan.h"
#include "store/period_spend.h"
#include "store/sqlite.h"
#include "store/store.h"

namespace loopwarden::store {
namespace {

__extension__ typedef __int128 Int128;  // exact proportional splits of large products
constexpr int64_t kUsPerHour = 3'600'000'000;

using Row = LedgerRow;

struct Attrs {
  std::string provider, account, kind, model, owner;
  // Known only for resources still in memory; roll-ups of pruned ones keep neither.
  std::optional<std::string> team;
  const FlatMap<Interned, std::string>* labels = nullptr;
};

std::string GroupValue(const Attrs& a, const Grouping& g) {
  switch (g.by) {
    case GroupBy::kTeam:
      if (!a.team) return "(rolled up)";
      return a.team->empty() ? "(none)" : *a.team;
    case GroupBy::kLabel: {
      if (!a.labels) return "(rolled up)";
      auto it = a.labels->find(g.label);
      return it == a.labels->end() || it->second.empty() ? "(none)" : it->second;
    }
    case GroupBy::kProvider: return a.provider;
    case GroupBy::kAccount: return a.provider + "/" + a.account;
    case GroupBy::kKind: return a.kind;
    case GroupBy::kModel: return a.model.empty() ? "(none)" : a.model;
    case GroupBy::kOwner: return a.owner.empty() ? "(unknown)" : a.owner;
  }
  return "";
}


Attrs AttrsOf(const ResourceState& st) {
  const Resource& r = st.resource;
  return {r.provider, r.account, std::string(KindName(r.kind)), r.base_model, r.owner, r.team, &r.labels};
}

bool Matches(const Attrs& a, const SpendFilter& f) {
  if (!f.provider.empty() && a.provider != f.provider) return false;
  if (!f.account.empty() && a.account != f.account) return false;
  if (f.kind && a.kind != KindName(*f.kind)) return false;
  return true;
}

// Hourly and daily roll-ups inside [since, now), with their attributes.
struct RolledRow {
  Attrs attrs;
  Time at;
  Money cost;
  Money idle_cost;
};

Result<std::vector<RolledRow>> RolledRows(Db& db, const StateSet& states,
                                          Time since, Time now) {
  std::vector<RolledRow> out;
  // A bucket counts when it starts inside the range: roll-ups are hour- and day-grained.
  LW_ASSIGN_OR_RETURN(Stmt h, db.Prepare(
      "SELECT resource, hour, cost, idle_cost FROM ledger_hourly WHERE hour >= ?1 AND hour < ?2"));
  h.Bind(1, ToUnixMicros(since)).Bind(2, ToUnixMicros(now));
  while (true) {
    LW_ASSIGN_OR_RETURN(bool row, h.Step());
    if (!row) break;
    auto it = states.find(h.TextView(0));
    Attrs a = it != states.end() ? AttrsOf(*it) : Attrs{"(pruned)", "(pruned)", "(pruned)", "", ""};
    out.push_back({a, FromUnixMicros(h.Int(1)), Money::FromMicros(h.Int(2)), Money::FromMicros(h.Int(3))});
  }
  LW_ASSIGN_OR_RETURN(Stmt d, db.Prepare(
      "SELECT provider, account, kind, model, owner, day, cost, idle_cost FROM ledger_daily WHERE day >= ?1 AND day < ?2"));
  d.Bind(1, ToUnixMicros(since)).Bind(2, ToUnixMicros(now));
  while (true) {
    LW_ASSIGN_OR_RETURN(bool row, d.Step());
    if (!row) break;
    out.push_back({{d.Text(0), d.Text(1), d.Text(2), d.Text(3), d.Text(4)}, FromUnixMicros(d.Int(5)),
                   Money::FromMicros(d.Int(6)), Money::FromMicros(d.Int(7))});
  }
  return out;
}

// Every final ledger row and roll-up bucket ending in [from, until) into `totals`:
// added to every period, or, after a Rebase, refilled into the periods that moved.
// Rows of resources no longer in memory are left out, as every spend query does.
Status FeedPeriodSpend(Db& db, const StateSet& states, Time from, Time until,
                       PeriodSpend& totals, bool refill) {
  LW_RETURN_IF_ERROR(ForEachLedgerRow(db, "l.end_at IS NOT NULL AND l.end_at >= ?1 AND l.end_at < ?2", from, until,
                                      [&](const Row& r) {
    auto it = states.find(std::string_view(r.resource));
    if (it == states.end()) return;
    if (refill) {
      totals.Refill(*it, r);
    } else {
      totals.AddFinal(*it, r);
    }
  }));
  LW_ASSIGN_OR_RETURN(std::vector<RolledRow> rolled, RolledRows(db, states, from, until));
  for (const RolledRow& b : rolled) totals.AddRolled(b.attrs.provider, b.attrs.account, b.attrs.kind, b.at, b.cost, refill);
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<PeriodSpend>> Store::BuildPeriodSpend(std::span<const Time> starts, Time now) {
  auto totals = std::make_unique<PeriodSpend>(std::vector<Time>(starts.begin(), starts.end()), now);
  if (starts.empty()) return totals;
  // Final rows only: open intervals are priced from memory at every read.
  const Time earliest = *std::min_element(starts.begin(), starts.end());
  LW_RETURN_IF_ERROR(FeedPeriodSpend(*db_, states_, earliest, Time::max(), *totals, /*refill=*/false));
  return totals;
}

Result<std::vector<SpendCell>> Store::SpendSince(std::span<const Time> starts, Time now) {
  if (period_spend_ && !period_spend_->Serves(starts, now)) {
    // A new day, week or month: only the periods that moved are read again, from the
    // rows since their new start (minutes of ledger, not the month). Half refilled is
    // wrong, so any failure builds anew.
    std::optional<Time> from = period_spend_->Rebase({starts.begin(), starts.end()}, now);
    if (!from || !FeedPeriodSpend(*db_, states_, *from, now, *period_spend_, /*refill=*/true).ok()) {
      period_spend_.reset();
    }
  }
  if (!period_spend_) {
    LW_ASSIGN_OR_RETURN(period_spend_, BuildPeriodSpend(starts, now));
  }
  return period_spend_->At(now, resources());
}

Result<Money> Store::Spend(const SpendFilter& filter, Time since, Time now) {
  // Built for this question alone: the cycle's running totals keep their own periods.
  const Time starts[] = {since};
  LW_ASSIGN_OR_RETURN(std::unique_ptr<PeriodSpend> totals, BuildPeriodSpend(starts, now));
  std::vector<SpendCell> cells = totals->At(now, resources());
  Money total;
  for (const SpendCell& c : cells) {
    if (Matches({c.provider, c.account, c.kind, "", ""}, filter)) total += c.since[0];
  }
  return total;
}

Result<StatusView> Store::QueryStatus(Time now, Duration idle_threshold) {
  StatusView v;
  v.now = now;
  std::map<std::tuple<std::string, std::string, std::string>, int64_t> counts;
  for (const ResourceState& st : resources()) {
    const Resource& r = st.resource;
    ++counts[{r.provider, std::string(KindName(r.kind)), std::string(LifecycleName(r.lifecycle))}];
    const auto idle = st.IdleSince();
    if (r.lifecycle == Lifecycle::kRunning && idle && now - *idle >= idle_threshold) {
      v.idle.push_back({r.Key(), r.name, std::string(KindName(r.kind)), now - *idle, st.BurnPerHour()});
    }
    if (st.unpriced && !st.deleted_at && r.lifecycle != Lifecycle::kDeleted) v.unpriced.push_back(r.Key());
  }
  std::sort(v.unpriced.begin(), v.unpriced.end());
  for (const auto& [k, n] : counts) v.counts.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), n});
  std::sort(v.idle.begin(), v.idle.end(), [](const IdleResource& a, const IdleResource& b) {
    if (a.burn_per_hour != b.burn_per_hour) return a.burn_per_hour > b.burn_per_hour;
    return a.idle_for > b.idle_for;
  });
  for (const auto& [k, m] : marks_) v.marks.push_back(m);
  std::sort(v.marks.begin(), v.marks.end(), [](const Mark& a, const Mark& b) { return a.act_after < b.act_after; });
  return v;
}

Result<Report> Store::QueryReport(Time since, Time now, const Grouping& by) {
  Report rep;
  rep.since = since;
  rep.until = now;
  rep.by = by;
  std::map<std::string, ReportRow> groups;
  LW_RETURN_IF_ERROR(ForEachLedgerRow(*db_, "l.start_at < ?2 AND COALESCE(l.end_at, ?2) >= ?1", since, now,
                                      [&](const Row& r) {
    auto it = states_.find(std::string_view(r.resource));
    if (it == states_.end()) return;
    Time until = now;
    if (!r.end) {
      until = SpendHorizon(*it, now);
      if (until < now && (!rep.open_counted_until || until < *rep.open_counted_until)) rep.open_counted_until = until;
    }
    const Money c = CostWithin(r, since, until);
    ReportRow& g = groups[GroupValue(AttrsOf(*it), by)];
    g.spend += c;
    if (r.idle) g.idle_spend += c;
  }));
  LW_ASSIGN_OR_RETURN(std::vector<RolledRow> rolled, RolledRows(*db_, states_, since, now));
  for (const RolledRow& r : rolled) {
    ReportRow& g = groups[GroupValue(r.attrs, by)];
    g.spend += r.cost;
    g.idle_spend += r.idle_cost;
  }
  // Actions taken for real, and what they saved: the burn rate at the time of acting,
  // for as long as the resource would otherwise have run (capped by the provider's own
  // reaper when it has one, and by now).
  LW_ASSIGN_OR_RETURN(Stmt q, db_->Prepare(
      "SELECT resource, action, finished_at, burn_per_hour, savings_cap_us FROM intents "
      "WHERE state = 'done' AND dry_run = 0 AND finished_at >= ?1 AND finished_at < ?2"));
  q.Bind(1, ToUnixMicros(since)).Bind(2, ToUnixMicros(now));
  while (true) {
    LW_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    auto it = states_.find(q.TextView(0));
    Attrs a;
    if (it != states_.end()) {
      a = AttrsOf(*it);
    } else {
      a.provider = a.kind = "(pruned)";
    }
    ReportRow& g = groups[GroupValue(a, by)];
    if (q.Text(1) == "notify") continue;
    ++g.actions;
    const Time acted = FromUnixMicros(q.Int(2));
    Duration ran = now - acted;
    if (auto cap = q.OptInt(4)) ran = std::min(ran, Duration(*cap));
    if (ran > Duration::zero()) g.savings += ScalePrice(Money::FromMicros(q.Int(3)), ran.count(), kUsPerHour);
  }
  for (auto& [name, row] : groups) {
    row.group = name;
    rep.total.spend += row.spend;
    rep.total.idle_spend += row.idle_spend;
    rep.total.actions += row.actions;
    rep.total.savings += row.savings;
    rep.rows.push_back(row);
  }
  rep.total.group = "total";
  std::sort(rep.rows.begin(), rep.rows.end(), [](const ReportRow& a, const ReportRow& b) { return a.spend > b.spend; });
  return rep;
}

Result<RetentionStats> Store::ApplyRetention(Time now, Duration detail_age) {
  if (read_only_) return FailedPrecondition("store opened read-only");
  RetentionStats stats;
  const Time cutoff = now - detail_age;
  const Time daily_cutoff = now - 3 * detail_age;
  Status s = InTransaction(*db_, [&]() -> Status {
    // 1. Closed ledger rows older than the cutoff -> hourly totals, split exactly.
    struct Key {
      std::string resource, meter;
      int64_t hour;
      bool operator<(const Key& o) const { return std::tie(resource, meter, hour) < std::tie(o.resource, o.meter, o.hour); }
    };
    std::map<Key, std::tuple<int64_t, Money, Money>> hourly;  // quantity, cost, idle cost
    std::vector<int64_t> done;
    {
      LW_ASSIGN_OR_RETURN(Stmt q, db_->Prepare(
          "SELECT l.id, r.key, l.meter, l.start_at, l.end_at, l.quantity, l.cost, l.idle FROM ledger l "
          "JOIN resources r ON r.id = l.rid WHERE l.end_at IS NOT NULL AND l.end_at < ?1"));
      q.Bind(1, ToUnixMicros(cutoff));
      while (true) {
        LW_ASSIGN_OR_RETURN(bool row, q.Step());
        if (!row) break;
        const int64_t start = q.Int(3), end = q.Int(4), quantity = q.Int(5), cost = q.Int(6);
        const bool idle = q.Int(7) != 0;
        const std::string resource = q.Text(1), meter = q.Text(2);
        done.push_back(q.Int(0));
        // Split across the hours it spans, proportionally; the last hour takes the
        // remainder so the totals stay exact.
        int64_t h = start / kUsPerHour * kUsPerHour;
        int64_t given_q = 0, given_c = 0;
        const int64_t span = std::max<int64_t>(end - start, 1);
        while (true) {
          const int64_t h_end = h + kUsPerHour;
          const bool last = h_end >= end;
          int64_t part_q, part_c;
          if (last) {
            part_q = quantity - given_q;
            part_c = cost - given_c;
          } else {
            const int64_t overlap = std::min(end, h_end) - std::max(start, h);
            part_q = static_cast<int64_t>(static_cast<Int128>(quantity) * overlap / span);
            part_c = static_cast<int64_t>(static_cast<Int128>(cost) * overlap / span);
          }
          given_q += part_q;
          given_c += part_c;
          auto& [hq, hc, hi] = hourly[{resource, meter, h}];
          hq += part_q;
          hc += Money::FromMicros(part_c);
          if (idle) hi += Money::FromMicros(part_c);
          if (last) break;
          h = h_end;
        }
      }
    }
    LW_ASSIGN_OR_RETURN(Stmt up, db_->Prepare(
        "INSERT INTO ledger_hourly (resource, meter, hour, quantity, cost, idle_cost) VALUES (?1,?2,?3,?4,?5,?6) "
        "ON CONFLICT(hour, resource, meter) DO UPDATE SET quantity = ledger_hourly.quantity + ?4, "
        "cost = ledger_hourly.cost + ?5, "
        "idle_cost = ledger_hourly.idle_cost + ?6"));
    for (const auto& [k, v] : hourly) {
      up.Bind(1, k.resource).Bind(2, k.meter).Bind(3, k.hour).Bind(4, std::get<0>(v)).Bind(5, std::get<1>(v).micros());
      up.Bind(6, std::get<2>(v).micros());
      LW_RETURN_IF_ERROR(up.Run());
    }
    LW_ASSIGN_OR_RETURN(Stmt del, db_->Prepare("DELETE FROM ledger WHERE id = ?1"));
    for (int64_t id : done) {
      del.Bind(1, id);
      LW_RETURN_IF_ERROR(del.Run());
    }
    stats.intervals_rolled = static_cast<int64_t>(done.size());

    // 2. Hourly totals older than 3x the age -> daily totals by reporting attributes,
    //    and into each resource's rolled-up spend.
    const std::string dc = std::to_string(ToUnixMicros(daily_cutoff));
    LW_RETURN_IF_ERROR(db_->Exec(
        "INSERT INTO ledger_daily (day, provider, account, kind, model, owner, meter, quantity, cost, idle_cost) "
        "SELECT (h.hour / 86400000000) * 86400000000, COALESCE(r.provider, '(pruned)'), COALESCE(r.account, ''), "
        "COALESCE(r.kind, ''), COALESCE(r.base_model, ''), COALESCE(r.owner, ''), h.meter, SUM(h.quantity), "
        "SUM(h.cost), SUM(h.idle_cost) FROM ledger_hourly h LEFT JOIN resources r ON r.key = h.resource "
        "WHERE h.hour < " + dc + " GROUP BY 1, 2, 3, 4, 5, 6, 7 "
        "ON CONFLICT(day, provider, account, kind, model, owner, meter) DO UPDATE SET "
        "quantity = ledger_daily.quantity + excluded.quantity, cost = ledger_daily.cost + excluded.cost, "
        "idle_cost = ledger_daily.idle_cost + excluded.idle_cost"));
    LW_RETURN_IF_ERROR(db_->Exec(
        "INSERT INTO spend_totals (resource, cost, idle_cost) SELECT resource, SUM(cost), SUM(idle_cost) "
        "FROM ledger_hourly WHERE hour < " + dc + " GROUP BY resource ON CONFLICT(resource) DO UPDATE SET "
        "cost = spend_totals.cost + excluded.cost, idle_cost = spend_totals.idle_cost + excluded.idle_cost"));
    LW_ASSIGN_OR_RETURN(int64_t hourly_old, db_->QueryInt("SELECT COUNT(*) FROM ledger_hourly WHERE hour < " + dc));
    LW_RETURN_IF_ERROR(db_->Exec("DELETE FROM ledger_hourly WHERE hour < " + dc));
    stats.hourly_rolled = hourly_old;

    // 3. Transitions older than the cutoff -> daily counts.
    const std::string c = std::to_string(ToUnixMicros(cutoff));
    LW_RETURN_IF_ERROR(db_->Exec(
        "INSERT INTO transitions_daily (provider, kind, to_lifecycle, day, count) "
        "SELECT r.provider, r.kind, t.to_lifecycle, (t.at / 86400000000) * 86400000000, COUNT(*) FROM transitions t "
        "JOIN resources r ON r.id = t.rid WHERE t.at < " + c +
        " GROUP BY r.provider, r.kind, t.to_lifecycle, (t.at / 86400000000) "
        "ON CONFLICT(provider, kind, to_lifecycle, day) DO UPDATE SET count = transitions_daily.count + excluded.count"));
    LW_ASSIGN_OR_RETURN(int64_t tr, db_->QueryInt("SELECT COUNT(*) FROM transitions WHERE at < " + c));
    LW_RETURN_IF_ERROR(db_->Exec("DELETE FROM transitions WHERE at < " + c));
    stats.transitions_rolled = tr;

    // 4. Resources deleted before 3x the age: by then their spend lives in daily totals.
    const std::string gone = "SELECT key FROM resources WHERE deleted_at IS NOT NULL AND deleted_at < " + dc +
                             " AND id NOT IN (SELECT rid FROM ledger) AND key NOT IN (SELECT resource FROM "
                             "ledger_hourly)";
    LW_ASSIGN_OR_RETURN(int64_t pruned, db_->QueryInt("SELECT COUNT(*) FROM (" + gone + ") AS gone"));
    LW_RETURN_IF_ERROR(db_->Exec("DELETE FROM marks WHERE resource IN (" + gone + ")"));
    LW_RETURN_IF_ERROR(db_->Exec("DELETE FROM spend_totals WHERE resource IN (" + gone + ")"));
    LW_RETURN_IF_ERROR(db_->Exec("DELETE FROM resources WHERE key IN (" + gone + ")"));
    stats.resources_pruned = pruned;
    LW_RETURN_IF_ERROR(db_->Exec("DELETE FROM notifications WHERE sent_at < " + c));
    return Status::Ok();
  });
  // Ledger rows that became roll-ups, or resources that left memory, invalidate the
  // running period totals: they start over from the database. A pass that moved nothing
  // (most of them) keeps them, so the next cycle does not re-read the period's ledger.
  if (!s.ok() || stats.intervals_rolled > 0 || stats.hourly_rolled > 0 || stats.resources_pruned > 0) {
    period_spend_.reset();
  }
  if (!s.ok()) return s.WithContext("applying retention");
  // Keep memory in step with what was pruned.
  for (auto it = states_.begin(); it != states_.end();) {
    if (it->deleted_at && *it->deleted_at < daily_cutoff && !it->open_gpu) {
      period_spend_.reset();
      const std::string key = it->resource.Key();
      for (auto m = marks_.begin(); m != marks_.end();) {
        m = m->first.second == key ? marks_.erase(m) : std::next(m);
      }
      it = states_.erase(it);
      by_account_stale_ = true;
    } else {
      ++it;
    }
  }
  // Return freed pages to the file system: a full VACUUM would block the loop, an
  // incremental one per retention pass is enough (the file is created auto_vacuum=INCREMENTAL).
  (void)db_->Exec("PRAGMA incremental_vacuum");
  (void)db_->Exec("PRAGMA wal_checkpoint(TRUNCATE)");
  return stats;
}

}  // namespace loopwarden::store
