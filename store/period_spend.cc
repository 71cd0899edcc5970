#include "store/period_spend.h"

#include <algorithm>

namespace loopwarden::store {
namespace {
__extension__ typedef __int128 Int128;  // exact proportional splits of large products
constexpr int64_t kUsPerHour = 3'600'000'000;
}  // namespace

Money CostWithin(const LedgerRow& r, Time a, Time b) {
  if (r.meter != "gpu_seconds") {
    if (!r.end || *r.end <= r.start) return (r.start >= a && r.start < b) ? r.cost : Money();
    // Tokens spent before first sight are spread over the time they were spent in, so
    // history does not land in today's budget: count the part inside [a, b).
    const Time lo = std::max(a, r.start);
    const Time hi = std::min(b, *r.end);
    if (hi <= lo) return Money();
    if (lo == r.start && hi == *r.end) return r.cost;
    return Money::FromMicros(static_cast<int64_t>(static_cast<Int128>(r.cost.micros()) * (hi - lo).count() /
                                                  (*r.end - r.start).count()));
  }
  const Time lo = std::max(a, r.start);
  const Time hi = std::min(b, r.end.value_or(b));
  if (hi <= lo) return Money();
  if (r.end && lo == r.start && hi == *r.end) return r.cost;  // whole interval: exactly what was recorded
  return ScalePrice(r.unit_price, r.rate * (hi - lo).count(), kUsPerHour);
}

size_t PeriodSpend::Cell(const std::string& provider, const std::string& account, std::string_view kind) {
  auto [it, fresh] = index_.try_emplace({provider, account, std::string(kind)}, cells_.size());
  if (fresh) cells_.push_back({provider, account, std::string(kind), std::vector<Money>(starts_.size())});
  return it->second;
}

size_t PeriodSpend::CellOf(const ResourceState& st) {
  const Resource& r = st.resource;
  const std::tuple<const char*, const char*, int> key{r.provider.data(), r.account.data(), static_cast<int>(r.kind)};
  if (auto it = cell_by_names_.find(key); it != cell_by_names_.end()) {
    const SpendCell& c = cells_[it->second];
    if (c.provider == r.provider.view() && c.account == r.account.view() && c.kind == KindName(r.kind)) {
      return it->second;
    }
  }
  const size_t cell = Cell(r.provider, r.account, KindName(r.kind));
  cell_by_names_.insert_or_assign(key, cell);
  return cell;
}

void PeriodSpend::Add(size_t cell, const LedgerRow& r) {
  // Ended before the latest read: its share of every period is final.
  if (r.end && *r.end < now_) {
    std::vector<Money>& since = cells_[cell].since;
    for (size_t i = 0; i < starts_.size(); ++i) since[i] += CostWithin(r, starts_[i], now_);
  } else {
    pending_.push_back({cell, r});
  }
}

void PeriodSpend::AddFinal(const ResourceState& st, const LedgerRow& r) { Add(CellOf(st), r); }

void PeriodSpend::AddRolled(const std::string& provider, const std::string& account, const std::string& kind,
                            Time at, Money cost, bool refill) {
  // A bucket counts when it starts inside the period: a point row at its start.
  const LedgerRow bucket{.meter = "rolled", .start = at, .end = at, .cost = cost};
  const size_t cell = Cell(provider, account, kind);
  if (refill) {
    RefillCell(cell, bucket);
  } else {
    Add(cell, bucket);
  }
}

void PeriodSpend::Advance(Time now) {
  now_ = now;
  std::vector<Pending> waiting;
  for (Pending& p : pending_) {
    if (p.row.end && *p.row.end < now_) {
      Add(p.cell, p.row);
    } else {
      waiting.push_back(std::move(p));
    }
  }
  pending_ = std::move(waiting);
}

std::optional<Time> PeriodSpend::Rebase(std::vector<Time> starts, Time now) {
  if (now < now_ || starts.size() != starts_.size()) return std::nullopt;
  // Rows that ended before `now` are folded under the old starts first; the emptied
  // columns then get every such row again from the ledger, and rows ending later stay
  // pending, priced at each read under the new starts.
  Advance(now);
  refill_.clear();
  Time from = now;
  for (size_t i = 0; i < starts.size(); ++i) {
    if (starts[i] == starts_[i]) continue;
    refill_.push_back(i);
    for (SpendCell& c : cells_) c.since[i] = Money();
    from = std::min(from, starts[i]);
  }
  starts_ = std::move(starts);
  return from;
}

void PeriodSpend::RefillCell(size_t cell, const LedgerRow& r) {
  for (size_t i : refill_) cells_[cell].since[i] += CostWithin(r, starts_[i], now_);
}

void PeriodSpend::Refill(const ResourceState& st, const LedgerRow& r) { RefillCell(CellOf(st), r); }

std::vector<SpendCell> PeriodSpend::At(Time now, const StateList& states) {
  Advance(now);
  // Open intervals bill until a poll shows otherwise (budgets run inside the daemon:
  // an alert late is worse than one early; acting still needs a confirming read).
  LedgerRow open{.meter = "gpu_seconds"};
  std::vector<std::pair<size_t, const ResourceState*>> open_states;
  for (const ResourceState& st : states) {
    if (st.open_gpu) open_states.emplace_back(CellOf(st), &st);
  }
  std::vector<SpendCell> out = cells_;
  for (const Pending& p : pending_) {
    for (size_t i = 0; i < starts_.size(); ++i) out[p.cell].since[i] += CostWithin(p.row, starts_[i], now);
  }
  for (const auto& [cell, st] : open_states) {
    open.start = st->open_gpu->start;
    open.rate = st->open_gpu->gpus;
    open.unit_price = st->open_gpu->unit_price;
    for (size_t i = 0; i < starts_.size(); ++i) out[cell].since[i] += CostWithin(open, starts_[i], now);
  }
  return out;
}

}  // namespace loopwarden::store
