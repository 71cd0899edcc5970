// Once per usage_interval, each provider account's billed usage of the last
// reconcile_days finished UTC days is read and the ledger made to agree with it
// (store/usage_reconcile.cc): history before first sight is backfilled, and what the
// ledger missed on watched days is booked as drift and exported.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "core/log.h"
#include "net/parallel.h"
#include "reconcile/reconciler.h"

namespace loopwarden::reconcile {
namespace {

// The providers book a day's usage late (Baseten's daily buckets lag about an hour):
// a day is read once it ended this long ago.
constexpr Duration kUsageSettle = std::chrono::hours(3);

double Unix(Time t) { return static_cast<double>(ToUnixMicros(t)) / 1e6; }

std::string DriftText(std::optional<double> ratio) {
  if (!ratio) return "none yet (no day watched in full)";
  char b[32];
  std::snprintf(b, sizeof b, "%+.3f%%", *ratio * 100);
  return b;
}

}  // namespace

boost::asio::awaitable<void> Reconciler::ReconcileUsage(Time now) {
  const Setup& s = *setup_;
  // Accounts' bills are read `poll_concurrency` at a time and each reconciled as it
  // arrives, like the poll: read one after another, 20 accounts' week of bills kept a
  // cold cycle waiting 13 s; read all at once, the rows of every account's week were
  // held together and set the cold cycle's peak memory. The store is written from this
  // thread only, between the reads.
  std::vector<net::Task> tasks;
  for (size_t i = 0; i < s.providers.size() && i < s.config.providers.size(); ++i) {
    const config::ProviderConfig& pc = s.config.providers[i];
    if (pc.reconcile_days <= 0) continue;
    tasks.push_back([this, &s, i, now]() -> boost::asio::awaitable<void> {
      co_await ReconcileAccountUsage(*s.providers[i], s.config.providers[i], now);
    });
  }
  const size_t accounts = tasks.size();
  if (accounts > 0) {
    co_await net::RunAll(std::move(tasks), std::min(accounts, static_cast<size_t>(std::max<int64_t>(1, s.config.poll_concurrency))));
  }
}

boost::asio::awaitable<void> Reconciler::ReconcileAccountUsage(providers::Provider& p, const config::ProviderConfig& pc,
                                                               Time now) {
  const Setup& s = *setup_;
  if (stopping_) co_return;
  // Kept in meta so `run --once` from cron reads the bill once an interval too; read
  // from it once a process, not every cycle.
  const std::string key = "usage_reconciled_us|" + p.name();
  auto [read_at, fresh] = usage_read_at_.try_emplace(p.name());
  if (fresh) read_at->second = MetaTime(key);
  const std::optional<Time> last = read_at->second;
  if (last && *last <= now && now - *last < pc.usage_interval) co_return;
  // Tried or not, the next attempt waits an interval: a failing billing endpoint is
  // not asked every cycle.
  read_at->second = now;
  if (Status st = store_.PutMeta(key, std::to_string(ToUnixMicros(now))); !st.ok()) {
    Log().Warn("bill reading time not recorded; a new process reads the bill again", {{"provider", p.name()}, {"err", st}});
  }
  const Time end = FloorToDay(now - kUsageSettle);
  const Time start = end - std::chrono::hours(24) * pc.reconcile_days;
  auto usage = co_await p.Usage(start, end);
  if (!usage.ok()) {
    Log().Warn("billed usage not read; the ledger is reconciled at the next usage_interval",
               {{"provider", p.name()}, {"err", usage.status()}});
    co_return;
  }
  // A resource found by the poll after the one that could first have seen it was
  // still watched from its start.
  const Duration slack = 2 * s.config.poll_interval;
  auto stats = store_.ReconcileUsage(p.name(), p.account(), usage->rows, start, end, now, s.prices, slack);
  if (!stats.ok()) {
    Log().Error("usage reconciliation failed", {{"provider", p.name()}, {"err", stats.status()}});
    co_return;
  }
  auto drift = store_.QueryUsageDrift(p.name(), start);
  const std::optional<double> ratio = drift.ok() ? drift->Ratio() : std::nullopt;
  metrics_.SetUsageReconciled(p.name(), ratio, Unix(now));
  Log().Info("usage reconciled", {{"provider", p.name()},
                                  {"days", stats->compared},
                                  {"revised", stats->revised},
                                  {"backfilled_usd", FormatMoney(stats->backfilled)},
                                  {"corrected_usd", FormatMoney(stats->corrected)},
                                  {"unmatched", stats->unmatched},
                                  {"unpriced", stats->unpriced},
                                  {"drift", DriftText(ratio)}});
}

}  // namespace loopwarden::reconcile
