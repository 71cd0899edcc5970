// Reconciliation of the ledger with the providers' bills, per resource and UTC day.
//
// The ledger is what loopwarden saw: GPU intervals from its polls and token deltas of
// the counters it read. The bill is what the provider charged. They differ by what no
// poll could see (the time before first sight, the minutes between a change and the
// poll that noticed it) and by anything loopwarden models wrongly (a price, a meter).
// On a day that began before first sight the difference is backfill; on a day watched
// throughout it is drift. Both are booked so the ledger agrees with the bill, and each
// day's first comparison is kept in usage_days to measure the drift.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "core/flat_hash.h"
#include "store/ledger_scan.h"
#include "store/period_spend.h"
#include "store/sqlite.h"
#include "store/store.h"

namespace loopwarden::store {
namespace {

constexpr Duration kDay = std::chrono::hours(24);

// A statement names at most this many resources, as bound parameters, so one prepared
// statement serves every run of them. With the ids written into the text, each run
// was a statement of its own, and SQLite parsed every id of the account or provider
// for each of four reads: 1.2 G instructions, 4 % of a first poll over 100k resources.
// One IN list over a whole large account could also pass SQLite's limit on parameters
// (32,766 unless it was built with another).
constexpr int kRidsPerStatement = 1000;

// "<column> IN (?first, …)": kRidsPerStatement placeholders, numbered on from the
// statement's own parameters (PostgreSQL wants every number up to the last used).
std::string RidsIn(std::string_view column, int first) {
  std::string out(column);
  out += " IN (";
  for (int i = 0; i < kRidsPerStatement; ++i) {
    if (i > 0) out += ',';
    out += '?';
    out += std::to_string(first + i);
  }
  out += ')';
  return out;
}

// Calls `fn` with each run of at most kRidsPerStatement of `rids`, so that only these
// resources' rows are read, through an index or key that starts with the resource (a
// busy fleet writes a million token rows a day; a bill concerns one account's
// resources). A statement per run, not per resource: on PostgreSQL each is a round
// trip. No resources, no call.
template <class Fn>
Status ForEachRidRun(const std::set<int64_t>& rids, Fn fn) {
  std::vector<int64_t> run;
  run.reserve(std::min<size_t>(rids.size(), kRidsPerStatement));
  for (auto it = rids.begin(); it != rids.end();) {
    run.clear();
    for (; it != rids.end() && run.size() < kRidsPerStatement; ++it) run.push_back(*it);
    LW_RETURN_IF_ERROR(fn(std::span<const int64_t>(run)));
  }
  return Status::Ok();
}

// Binds a run to RidsIn's placeholders from `first`. A short run repeats its last id
// to the end: IN takes a value once however often it is listed.
void BindRids(Stmt& q, int first, std::span<const int64_t> run) {
  for (int i = 0; i < kRidsPerStatement; ++i) {
    q.Bind(first + i, run[std::min<size_t>(static_cast<size_t>(i), run.size() - 1)]);
  }
}

// Every ledger row of `rids` matching `where` (?1 and ?2 bound to `lo` and `hi`),
// through `q`: a cached statement of LedgerOfRids(where). Rows carry their resource's
// row id, not its key: the bills' resources are in memory, found by row id.
std::string LedgerOfRids(std::string_view where) {
  return std::string(kLedgerRowsByRidSelect) + RidsIn("l.rid", 3) + " AND " + std::string(where);
}
template <typename Visit>
Status ReadLedgerOfRids(Stmt& q, const std::set<int64_t>& rids, Time lo, Time hi, Visit visit) {
  return ForEachRidRun(rids, [&](std::span<const int64_t> run) -> Status {
    q.Reset();
    q.Bind(1, ToUnixMicros(lo)).Bind(2, ToUnixMicros(hi));
    BindRids(q, 3, run);
    return ReadLedgerRows(q, visit, /*with_rid=*/true);
  });
}

template <class States>
std::set<int64_t> RowIds(const States& states) {
  std::set<int64_t> rids;
  for (const ResourceState* st : states) rids.insert(st->row_id);
  return rids;
}

// What the provider billed for one row: its money, or its quantity at our price.
std::optional<Money> BilledCost(const UsageRow& u, const Resource& r, const PriceBook& prices) {
  if (u.cost) return *u.cost;
  if (u.meter == "gpu_seconds") {
    const std::optional<Money> hour = prices.GpuHour(r);
    if (!hour) return std::nullopt;
    return ScalePrice(*hour, u.quantity, 3600);
  }
  if (u.meter.view().starts_with("tokens.")) {
    const std::optional<Money> million = prices.TokenPrice(r, u.meter.str().substr(7));
    if (!million) return std::nullopt;
    return ScalePrice(*million, u.quantity, 1'000'000);
  }
  return std::nullopt;
}

}  // namespace

TextMap<std::vector<ResourceState*>> Store::BillingIndex(const std::string& provider, const std::string& account) {
  // The provider's billing ids of this account's resources: the resource's own id, and
  // the deployment a Baseten run or sampler bills through. The resource whose own id
  // it is comes first: it holds the day's record.
  TextMap<std::vector<ResourceState*>> by_billing_id;
  for (ResourceState* st : AccountResources(provider, account)) {
    const Resource& r = st->resource;
    by_billing_id[r.id].insert(by_billing_id[r.id].begin(), st);
    auto dep = r.refs.find("deployment_id");
    if (dep != r.refs.end() && !dep->second.empty() && dep->second != r.id) by_billing_id[dep->second].push_back(st);
  }
  return by_billing_id;
}

Result<std::vector<Store::BilledDay>> Store::MatchBill(const std::string& provider, const std::string& account,
                                                      std::span<const UsageRow> rows, const PriceBook& prices,
                                                      Time from, Time to, const std::set<Time>& first_bill_days,
                                                      ReconcileStats& stats) {
  TextMap<std::vector<ResourceState*>> by_billing_id = BillingIndex(provider, account);
  // Billed per (billing id, day), the id a view of the row's own text (the rows outlive
  // this call), so the ledger scan below looks days up without building a string.
  HashMap<std::pair<std::string_view, int64_t>, Money> billed;
  for (const UsageRow& u : rows) {
    if (u.day < from || u.day >= to) continue;  // outside the days asked about
    auto found = by_billing_id.find(u.resource_id.view());  // no std::string built for the id
    if (found == by_billing_id.end()) {
      ++stats.unmatched;
      continue;
    }
    const std::optional<Money> cost = BilledCost(u, found->second.front()->resource, prices);
    if (!cost) {
      ++stats.unpriced;
      continue;
    }
    billed[{u.resource_id, ToUnixMicros(FloorToDay(u.day))}] += *cost;
  }
  std::vector<BilledDay> out;
  out.reserve(billed.size());
  for (const auto& [k, cost] : billed) {
    out.push_back({std::string(k.first), FromUnixMicros(k.second), cost, by_billing_id[std::string(k.first)]});
  }
  // In (id, day) order, as the bill's days are reported and compared.
  std::sort(out.begin(), out.end(),
            [](const BilledDay& a, const BilledDay& b) { return std::tie(a.id, a.day) < std::tie(b.id, b.day); });
  // A day the bill says nothing about at all is not read as "billed nothing": a
  // provider's billing pipeline can lag or fail without saying so.
  std::set<Time> days;
  for (const BilledDay& b : out) {
    if (first_bill_days.contains(b.day)) days.insert(b.day);
  }
  if (days.empty()) return out;
  // GPU time of the account's resources on those days, found by row id, with no key
  // built and hashed for every resource and every ledger row.
  HashMap<int64_t, const ResourceState*> by_rid;
  std::set<int64_t> rids;
  for (const auto& [id, states] : by_billing_id) {
    for (const ResourceState* st : states) {
      if (by_rid.emplace(st->row_id, st).second) rids.insert(st->row_id);
    }
  }
  const Time lo = *days.begin(), hi = *days.rbegin() + kDay;
  std::set<std::pair<std::string, Time>> unbilled;
  auto visit = [&](const LedgerRow& r) {
    auto it = by_rid.find(r.rid);
    if (it == by_rid.end()) return;
    const Resource& res = it->second->resource;
    auto dep = res.refs.find("deployment_id");
    const std::string_view id = dep != res.refs.end() && !dep->second.empty() ? std::string_view(dep->second) : res.id.view();
    for (Time d = std::max(lo, FloorToDay(r.start)); d < hi && d < r.end.value_or(hi); d += kDay) {
      if (!days.contains(d) || CostWithin(r, d, d + kDay).micros() <= 0) continue;
      const int64_t day = ToUnixMicros(d);
      if (billed.contains({res.id.view(), day}) || billed.contains({id, day})) continue;
      unbilled.insert({std::string(id), d});
    }
  };
  LW_ASSIGN_OR_RETURN(Stmt* q, Cached(LedgerOfRids("l.meter = 'gpu_seconds' AND (l.end_at IS NULL OR l.end_at >= ?1) "
                                                   "AND l.start_at < ?2")));
  LW_RETURN_IF_ERROR(ReadLedgerOfRids(*q, rids, lo, hi, visit));
  for (const auto& [id, day] : unbilled) out.push_back({id, day, Money(), by_billing_id.at(id)});
  return out;
}

Result<std::vector<Money>> Store::LedgerOn(const std::vector<BilledDay>& bills, const std::vector<bool>& wanted) {
  std::vector<Money> out(bills.size());
  std::set<Time> days;
  std::set<int64_t> rids;
  for (size_t i = 0; i < bills.size(); ++i) {
    if (!wanted.empty() && !wanted[i]) continue;
    days.insert(bills[i].day);
    for (const ResourceState* st : bills[i].resources) rids.insert(st->row_id);
  }
  if (days.empty()) return out;
  // Held per (row id, day): a key's text per ledger row, in an ordered map, was the
  // larger part of this outside SQLite on a first poll.
  HashMap<std::pair<int64_t, int64_t>, Money> held;
  const Time lo = *days.begin(), hi = *days.rbegin() + kDay;
  auto visit = [&](const LedgerRow& r) {
    for (Time d : days) {
      if (Money c = CostWithin(r, d, d + kDay); c.micros() != 0) held[{r.rid, ToUnixMicros(d)}] += c;
    }
  };
  LW_ASSIGN_OR_RETURN(Stmt* q, Cached(LedgerOfRids("l.start_at < ?2 AND COALESCE(l.end_at, ?2) >= ?1")));
  LW_RETURN_IF_ERROR(ReadLedgerOfRids(*q, rids, lo, hi, visit));
  // Detail older than the retention age lives on as hourly roll-ups.
  LW_ASSIGN_OR_RETURN(Stmt h, db_->Prepare("SELECT resource, hour, cost FROM ledger_hourly WHERE hour >= ?1 AND hour < ?2"));
  h.Bind(1, ToUnixMicros(lo)).Bind(2, ToUnixMicros(hi));
  // The roll-ups name resources by key: the bills' keys are built only if there are any.
  std::optional<HashMap<std::string, int64_t>> rid_of_key;
  while (true) {
    LW_ASSIGN_OR_RETURN(bool row, h.Step());
    if (!row) break;
    if (!rid_of_key) {
      rid_of_key.emplace();
      for (size_t i = 0; i < bills.size(); ++i) {
        if (!wanted.empty() && !wanted[i]) continue;
        for (const ResourceState* st : bills[i].resources) rid_of_key->emplace(st->resource.Key(), st->row_id);
      }
    }
    auto rid = rid_of_key->find(std::string(h.TextView(0)));
    if (rid == rid_of_key->end()) continue;
    held[{rid->second, ToUnixMicros(FloorToDay(FromUnixMicros(h.Int(1))))}] += Money::FromMicros(h.Int(2));
  }
  for (size_t i = 0; i < bills.size(); ++i) {
    for (const ResourceState* st : bills[i].resources) {
      auto l = held.find({st->row_id, ToUnixMicros(bills[i].day)});
      if (l != held.end()) out[i] += l->second;
    }
  }
  return out;
}

Result<std::vector<UsageComparison>> Store::CompareUsage(const std::string& provider, const std::string& account,
                                                         std::span<const UsageRow> rows, Time from, Time to,
                                                         const PriceBook& prices) {
  ReconcileStats ignored;
  std::set<Time> every_day;
  for (Time d = from; d < to; d += kDay) every_day.insert(d);
  LW_ASSIGN_OR_RETURN(const std::vector<BilledDay> bills,
                      MatchBill(provider, account, rows, prices, from, to, every_day, ignored));
  LW_ASSIGN_OR_RETURN(std::vector<Money> held, LedgerOn(bills));
  std::vector<UsageComparison> out;
  for (size_t i = 0; i < bills.size(); ++i) {
    out.push_back({bills[i].resources.front()->resource.Key(), bills[i].day, bills[i].billed, held[i]});
  }
  return out;
}

Result<ReconcileStats> Store::ReconcileUsage(const std::string& provider, const std::string& account,
                                             std::span<const UsageRow> rows, Time from, Time to, Time now,
                                             const PriceBook& prices, Duration first_sight_slack) {
  if (read_only_) return FailedPrecondition("store opened read-only");
  ReconcileStats stats;
  // What was billed when each day was compared before. A day none of this account's
  // resources was compared on gets its first bill now: only then is GPU time on a day
  // the bill does not name looked for (later, a resource-day missing from a revised
  // bill is for drift to show).
  std::map<std::pair<int64_t, Time>, Money> known;
  std::set<Time> first_bill_days;
  for (Time d = from; d < to; d += kDay) first_bill_days.insert(d);
  {
    // The account's own resources, through the poll's index, read by usage_days' (rid,
    // day) key: work in proportion to the account, where a scan of every account's days
    // (by day, then each row by its key) grew with the whole fleet, for each account.
    const std::set<int64_t> rids = RowIds(AccountResources(provider, account));
    LW_ASSIGN_OR_RETURN(Stmt* q, Cached("SELECT rid, day, billed FROM usage_days WHERE " + RidsIn("rid", 3) +
                                        " AND day >= ?1 AND day < ?2"));
    LW_RETURN_IF_ERROR(ForEachRidRun(rids, [&](std::span<const int64_t> run) -> Status {
      q->Reset();
      q->Bind(1, ToUnixMicros(from)).Bind(2, ToUnixMicros(to));
      BindRids(*q, 3, run);
      while (true) {
        LW_ASSIGN_OR_RETURN(bool row, q->Step());
        if (!row) break;
        const Time day = FromUnixMicros(q->Int(1));
        known[{q->Int(0), day}] = Money::FromMicros(q->Int(2));
        first_bill_days.erase(day);
      }
      return Status::Ok();
    }));
  }
  LW_ASSIGN_OR_RETURN(const std::vector<BilledDay> bills,
                      MatchBill(provider, account, rows, prices, from, to, first_bill_days, stats));
  if (bills.empty()) return stats;
  // The ledger is read only for the days compared for the first time.
  std::vector<bool> fresh(bills.size());
  for (size_t i = 0; i < bills.size(); ++i) fresh[i] = !known.contains({bills[i].resources.front()->row_id, bills[i].day});
  LW_ASSIGN_OR_RETURN(std::vector<Money> held, LedgerOn(bills, fresh));

  struct Booking {
    ResourceState* st;
    LedgerRow row;
  };
  std::vector<Booking> booked;
  // Written in (resource row, day) order, the order of usage_days' key and the
  // ledger's (rid, end_at) index: each insert lands beside the one before, on pages
  // already in SQLite's cache, where the bill's order (by id text) scattered them.
  std::vector<size_t> order(bills.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::pair(bills[a].resources.front()->row_id, bills[a].day) <
           std::pair(bills[b].resources.front()->row_id, bills[b].day);
  });
  // usage_days rows, written kRowsPerInsert to a statement after the loop (a first
  // bill has one for every resource and day: 89,000 at 100k).
  struct DayRow {
    int64_t rid, day, billed, ledger;
    bool watched;
  };
  std::vector<DayRow> days;
  Status s = InTransaction(*db_, [&]() -> Status {
    for (size_t i : order) {
      const BilledDay& b = bills[i];
      ResourceState& owner = *b.resources.front();
      Money diff;
      if (!fresh[i]) {
        diff = b.billed - known.at({owner.row_id, b.day});
        if (diff.micros() == 0) continue;
        ++stats.revised;
        LW_ASSIGN_OR_RETURN(Stmt* q, Cached("UPDATE usage_days SET billed=?3, checked_at=?4 WHERE rid=?1 AND day=?2"));
        q->Bind(1, owner.row_id).Bind(2, ToUnixMicros(b.day)).Bind(3, b.billed.micros()).Bind(4, ToUnixMicros(now));
        LW_RETURN_IF_ERROR(q->Run());
      } else {
        const Time began = std::max(b.day, owner.resource.created_at.value_or(b.day));
        const bool watched = owner.first_seen <= began + first_sight_slack;
        diff = b.billed - held[i];
        ++stats.compared;
        (watched ? stats.corrected : stats.backfilled) += diff;
        days.push_back({owner.row_id, ToUnixMicros(b.day), b.billed.micros(), held[i].micros(), watched});
        if (diff.micros() == 0) continue;
      }
      // Spread over the part of the day the resource existed, so a budget period that
      // starts inside the day takes its share.
      const Time end = b.day + kDay;
      const Time start = std::clamp(owner.resource.created_at.value_or(b.day), b.day, end - std::chrono::seconds(1));
      LW_ASSIGN_OR_RETURN(Stmt* q, Cached(
          "INSERT INTO ledger (rid, meter, start_at, end_at, quantity_rate, quantity, unit_price, cost, idle) "
          "VALUES (?1, 'billed', ?2, ?3, 0, 0, 0, ?4, 0)"));
      q->Bind(1, owner.row_id).Bind(2, ToUnixMicros(start)).Bind(3, ToUnixMicros(end)).Bind(4, diff.micros());
      LW_RETURN_IF_ERROR(q->Run());
      booked.push_back({&owner, {.id = db_->LastInsertRowId(), .resource = owner.resource.Key(), .meter = "billed",
                                 .start = start, .end = end, .cost = diff}});
    }
    static const RowsInsert kDays("INSERT INTO usage_days (rid, day, billed, ledger, watched, checked_at) VALUES ", 6);
    const int64_t checked_at = ToUnixMicros(now);
    return InsertRows(kDays, days.size(), [&](Stmt& q, size_t row, int c) {
      const DayRow& d = days[row];
      q.Bind(c + 1, d.rid).Bind(c + 2, d.day).Bind(c + 3, d.billed).Bind(c + 4, d.ledger);
      q.Bind(c + 5, d.watched ? 1 : 0).Bind(c + 6, checked_at);
    });
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
  // The provider's resources, read by usage_days' (rid, day) key. A join from the days
  // to the resources looked up the resource row of every provider's every watched day
  // at random in the largest table, once for each provider.
  UsageDrift d;
  LW_ASSIGN_OR_RETURN(Stmt* q, Cached("SELECT COALESCE(SUM(ledger), 0), COALESCE(SUM(billed), 0), COUNT(*) "
                                      "FROM usage_days WHERE " + RidsIn("rid", 2) + " AND day >= ?1 AND watched = 1"));
  LW_RETURN_IF_ERROR(ForEachRidRun(RowIds(ProviderResources(provider)), [&](std::span<const int64_t> run) -> Status {
    q->Reset();
    q->Bind(1, ToUnixMicros(since));
    BindRids(*q, 2, run);
    LW_ASSIGN_OR_RETURN(bool row, q->Step());
    if (row) {
      d.ledger += Money::FromMicros(q->Int(0));
      d.billed += Money::FromMicros(q->Int(1));
      d.days += q->Int(2);
    }
    q->Reset();  // stepped once, not to its end: a statement left open holds its read snapshot
    return Status::Ok();
  }));
  return d;
}

}  // namespace loopwarden::store
