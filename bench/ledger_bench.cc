// A ledger as long as a budget period, and the cycle's spend question over it.
//
// Every cycle asks for each account's spend since the day, week and month began and
// each budget's since its period began. Until issue 14's running totals that was
// answered by scanning every ledger row since the earliest start, and a busy serverless
// session writes a row per meter each poll its token counts move. This builds such a
// ledger directly in a store (no simulator: the question is the store's) and times the
// cycle's question answered from the running totals against a fresh scan, which is
// what each cycle did before.
#include <chrono>
#include <ctime>
#include <stdexcept>

#include <boost/json/object.hpp>

#include "bench/bench.h"
#include "core/money.h"
#include "store/store.h"

namespace loopwarden::bench {
namespace {

namespace bj = boost::json;

double CpuSeconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

}  // namespace

bj::object RunLedger(const Options& o) {
  constexpr int kSessions = 1000;
  constexpr int kPolls = 720;  // a day at 2-minute polls
  const Time t0 = ParseTime("2026-08-01T00:00:00Z").value();
  auto store = store::Store::Open({.path = o.work_dir + "/ledger.db"});
  if (!store.ok()) throw std::runtime_error(store.status().message());
  store::PriceBook prices;
  prices.tokens_per_million["m"] = {{"train", Money::FromMicros(4'103'000)}, {"sample", Money::FromMicros(5'595'000)}};
  std::vector<ListedResource> fleet(kSessions);
  for (int i = 0; i < kSessions; ++i) {
    ListedResource& r = fleet[i];
    r.provider_type = ProviderType::kFireworks;
    r.provider = r.account = "fw";
    r.kind = Kind::kFireworksTrainingSession;
    r.id = "ts-" + std::to_string(i);
    r.base_model = "m";
    r.lifecycle = Lifecycle::kRunning;
    r.billing.meter = Meter::kTokens;
    r.created_at = t0;
  }
  const std::vector<Time> starts = {t0, t0 - std::chrono::days(3), t0 - std::chrono::days(20)};
  Time now = t0;
  double running_s = 0;  // the cycle's question after every poll, as the daemon asks it
  for (int poll = 1; poll <= kPolls; ++poll) {
    now = t0 + std::chrono::minutes(2 * poll);
    for (ListedResource& r : fleet) {
      r.tokens["train"] += 40'000;
      r.tokens["sample"] += 9'000;
    }
    store::Snapshot snap{.provider = "fw", .account = "fw", .complete = true, .resources = fleet};
    auto st = (*store)->Ingest({&snap, 1}, now, prices);
    if (!st.ok()) throw std::runtime_error(st.status().message());
    const double asked = CpuSeconds();
    if (auto cells = (*store)->SpendSince(starts, now); !cells.ok()) throw std::runtime_error(cells.status().message());
    if (poll > 1) running_s += CpuSeconds() - asked;  // the first builds the totals from the ledger
  }
  auto running = (*store)->SpendSince(starts, now);
  // The same answer from a scan of every row, as each cycle computed it before.
  const double scan_started = CpuSeconds();
  auto scanned = (*store)->Spend({}, starts[2], now);
  const double scan_s = CpuSeconds() - scan_started;
  if (!running.ok() || !scanned.ok()) throw std::runtime_error("spend query failed");
  Money running_total;
  for (const store::SpendCell& c : *running) running_total += c.since[2];
  if (running_total != *scanned) throw std::runtime_error("running totals disagree with the scan");
  return {{"sessions", kSessions},
          {"polls", kPolls},
          {"ledger_rows", kSessions * kPolls * 2},
          {"running_totals_ms", running_s * 1000 / (kPolls - 1)},
          {"full_scan_ms", scan_s * 1000},
          {"spend_usd", FormatUsd(*scanned)}};
}

}  // namespace loopwarden::bench
