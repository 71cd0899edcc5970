// The ledger reconciled with the providers' bills per resource and UTC day: backfill
// before first sight, drift on watched days, once, and revisions as differences.
#include <doctest/doctest.h>

#include "store/sqlite.h"
#include "tests/store/fixtures.h"
#include "tests/testing/temp_dir.h"

using namespace loopwarden;
using namespace loopwarden::testing;
using namespace std::chrono_literals;

namespace {

const Time kJul29 = kT0 - 72h, kJul30 = kT0 - 48h, kJul31 = kT0 - 24h;
Money Usd(const char* s) { return ParseMoney(s).value(); }

UsageRow Billed(const std::string& id, Time day, const char* usd) {
  return UsageRow{.resource_id = id, .day = day, .meter = "minutes", .quantity = 0, .cost = Usd(usd)};
}

Money Day(store::Store& s, Time day) {
  auto m = s.Spend({.provider = "bt"}, day, day + 24h);
  REQUIRE(m.ok());
  return *m;
}

int64_t Count(const std::string& path, const std::string& sql) {
  auto db = store::Db::Open(path, false, true);
  REQUIRE(db.ok());
  auto n = (*db)->QueryInt(sql);
  REQUIRE(n.ok());
  return *n;
}

}  // namespace

TEST_CASE("reconciliation backfills what came before first sight and books drift on watched days, once") {
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  // 8 H100s at $6.50: $52 an hour. Created Jul 29 22:00, first seen Jul 30 01:00, and
  // billing without a break until the last listing, Aug 1 02:00.
  ListedResource r = Run("r1");
  r.created_at = kJul29 + 22h;
  REQUIRE((*s)->Ingest(std::vector{Snap({r})}, kJul30 + 1h, Prices()).ok());
  REQUIRE((*s)->Ingest(std::vector{Snap({r})}, kT0 + 2h, Prices()).ok());
  const Time now = kT0 + 3h;
  // The running totals are live, so the bookings must reach them too.
  const std::vector<Time> starts = {kJul29, kJul31};
  REQUIRE((*s)->SpendSince(starts, now).ok());
  CHECK(Day(**s, kJul29) == Money());
  CHECK(Day(**s, kJul30) == Usd("1196"));  // 23 hours watched
  CHECK(Day(**s, kJul31) == Usd("1248"));

  const std::vector<UsageRow> bill = {Billed("r1", kJul29, "104"), Billed("r1", kJul30, "1248"),
                                      Billed("r1", kJul31, "1250.60"), Billed("gone", kJul31, "99"),
                                      {.resource_id = "r1", .day = kJul31, .meter = "minutes", .quantity = 60}};
  // Before: the comparison shows what the polls could not see.
  auto before = (*s)->CompareUsage("bt", "bt", bill, kJul29, kT0, Prices());
  REQUIRE(before.ok());
  REQUIRE(before->size() == 3);
  CHECK((*before)[1].resource == "bt/baseten.run/r1");
  CHECK((*before)[1].day == kJul30);
  CHECK((*before)[1].ledger == Usd("1196"));
  CHECK((*before)[1].billed == Usd("1248"));
  auto st = (*s)->ReconcileUsage("bt", "bt", bill, kJul29, kT0, now, Prices(), 10min);
  REQUIRE_MESSAGE(st.ok(), st.status().message());
  auto after = (*s)->CompareUsage("bt", "bt", bill, kJul29, kT0, Prices());
  REQUIRE(after.ok());
  REQUIRE(after->size() == 3);
  for (const store::UsageComparison& c : *after) CHECK(c.ledger == c.billed);
  CHECK(st->compared == 3);
  CHECK(st->revised == 0);
  CHECK(st->unmatched == 1);
  CHECK(st->unpriced == 1);  // minutes without money: nothing to price them with
  CHECK(st->backfilled == Usd("156"));  // Jul 29's two hours and Jul 30's first
  CHECK(st->corrected == Usd("2.60"));
  // Every day now says what the bill says.
  CHECK(Day(**s, kJul29) == Usd("104"));
  CHECK(Day(**s, kJul30) == Usd("1248"));
  CHECK(Day(**s, kJul31) == Usd("1250.60"));
  // The running totals took the bookings; a fresh scan agrees.
  auto running = (*s)->SpendSince(starts, now);
  REQUIRE(running.ok());
  REQUIRE(running->size() == 1);
  auto fresh = (*s)->Spend({.provider = "bt"}, kJul29, now);
  REQUIRE(fresh.ok());
  CHECK((*running)[0].since[0] == *fresh);
  CHECK((*s)->Find("bt/baseten.run/r1")->SpendAt(now) == *fresh);
  // Only the watched day is drift.
  auto drift = (*s)->QueryUsageDrift("bt", kJul29);
  REQUIRE(drift.ok());
  CHECK(drift->days == 1);
  CHECK(drift->ledger == Usd("1248"));
  CHECK(drift->billed == Usd("1250.60"));
  CHECK(*drift->Ratio() < 0);

  // The same bill again books nothing.
  const std::string path = dir.File("lw.db");
  const int64_t rows = Count(path, "SELECT COUNT(*) FROM ledger");
  auto again = (*s)->ReconcileUsage("bt", "bt", bill, kJul29, kT0, now + 1h, Prices(), 10min);
  REQUIRE(again.ok());
  CHECK(again->compared == 0);
  CHECK(again->revised == 0);
  CHECK(Count(path, "SELECT COUNT(*) FROM ledger") == rows);
  CHECK(Day(**s, kJul31) == Usd("1250.60"));

  // A revised bill books only its change; the drift keeps the ledger's first figure.
  auto revised = (*s)->ReconcileUsage("bt", "bt", std::vector{Billed("r1", kJul31, "1251")}, kJul29, kT0, now + 2h,
                                         Prices(), 10min);
  REQUIRE(revised.ok());
  CHECK(revised->revised == 1);
  CHECK(Day(**s, kJul31) == Usd("1251"));
  CHECK(Count(path, "SELECT COUNT(*) FROM ledger") == rows + 1);
  drift = (*s)->QueryUsageDrift("bt", kJul29);
  REQUIRE(drift.ok());
  CHECK(drift->ledger == Usd("1248"));
  CHECK(drift->billed == Usd("1251"));

  // All of it survives a restart.
  s->reset();
  auto reopened = store::Store::Open({.path = path});
  REQUIRE(reopened.ok());
  CHECK(Day(**reopened, kJul29) == Usd("104"));
  CHECK(Day(**reopened, kJul31) == Usd("1251"));
  CHECK((*reopened)->Find("bt/baseten.run/r1")->SpendAt(now) == Day(**reopened, kJul29) + Day(**reopened, kJul30) +
                                                                     Day(**reopened, kJul31) +
                                                                     (*reopened)->Spend({.provider = "bt"}, kT0, now).value());
}

TEST_CASE("reconciliation: a Baseten bill by deployment id covers the run and the loops deployment it bills through") {
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  // The run billed its loops deployment's GPUs in the morning; after the run ended the
  // deployment billed them itself (a leftover). The bill names the deployment only.
  ListedResource run = Run("r1");
  run.created_at = kJul31 - 1h;
  run.refs["deployment_id"] = "ld1";
  ListedResource dep = Run("ld1");
  dep.kind = Kind::kBasetenLoopsDeployment;
  dep.created_at = run.created_at;
  dep.billing.billable = false;
  dep.lifecycle = Lifecycle::kRunning;
  REQUIRE((*s)->Ingest(std::vector{Snap({run, dep})}, kJul31, Prices()).ok());
  run.billing.billable = false;
  run.lifecycle = Lifecycle::kStopped;
  dep.billing.billable = true;
  REQUIRE((*s)->Ingest(std::vector{Snap({run, dep})}, kJul31 + 12h, Prices()).ok());
  REQUIRE((*s)->Ingest(std::vector{Snap({run, dep})}, kT0 + 1h, Prices()).ok());
  auto st = (*s)->ReconcileUsage("bt", "bt", std::vector{Billed("ld1", kJul31, "1248")}, kJul31, kT0, kT0 + 4h,
                                     Prices(), 10min);
  REQUIRE(st.ok());
  CHECK(st->compared == 1);
  CHECK(st->unmatched == 0);
  // Both halves together are the bill: nothing to book.
  CHECK(st->corrected == Money());
  CHECK(st->backfilled == Money());
  // The day's record belongs to the deployment the bill names.
  CHECK(Count(dir.File("lw.db"), "SELECT COUNT(*) FROM usage_days u JOIN resources r ON r.id = u.rid "
                                 "WHERE r.native_id = 'ld1' AND u.watched = 1 AND u.ledger = 1248000000") == 1);
}

TEST_CASE("reconciliation: Fireworks quantities are priced as the ledger prices them") {
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  ListedResource x = Session("ts-1");
  x.created_at = kJul31 + 6h;
  REQUIRE((*s)->Ingest(std::vector{store::Snapshot{.provider = "fw", .account = "acme", .resources = {x}}},
                       kJul31 + 7h, Prices()).ok());
  // A million train tokens at $4.103 and 2 GPU-hours of a job the account does not
  // show (deleted before first sight): the second is unmatched, not guessed at.
  const std::vector<UsageRow> bill = {
      {.resource_id = "ts-1", .day = kJul31, .meter = "tokens.train", .quantity = 1'000'000},
      {.resource_id = "ts-1", .day = kJul31, .meter = "tokens.sample", .quantity = 2'000'000},
      {.resource_id = "job-gone", .day = kJul31, .meter = "gpu_seconds", .quantity = 7200}};
  auto st = (*s)->ReconcileUsage("fw", "acme", bill, kJul31, kT0, kT0 + 4h, Prices(), 10min);
  REQUIRE(st.ok());
  CHECK(st->unmatched == 1);
  CHECK(st->backfilled == Usd("4.103") + Usd("11.19"));
  auto m = (*s)->Spend({.provider = "fw"}, kJul31, kT0);
  REQUIRE(m.ok());
  CHECK(*m == Usd("15.293"));
  // Another account's bill never touches this one.
  auto other = (*s)->ReconcileUsage("fw", "other", bill, kJul31, kT0, kT0 + 4h, Prices(), 10min);
  REQUIRE(other.ok());
  CHECK(other->unmatched == 3);
  CHECK(other->compared == 0);
}

TEST_CASE("reconciliation: GPU time on a day the bill does not name was billed nothing, unless the bill is silent") {
  // r1 stopped just before midnight and the poll saw it 5 minutes after; r2 ran on.
  auto build = [](TempDir& dir) {
    auto s = store::Store::Open({.path = dir.File("lw.db")});
    REQUIRE(s.ok());
    ListedResource r1 = Run("r1"), r2 = Run("r2");
    r1.created_at = r2.created_at = kJul30 + 20h;
    REQUIRE((*s)->Ingest(std::vector{Snap({r1, r2})}, kJul30 + 20h, Prices()).ok());
    r1.billing.billable = false;
    r1.lifecycle = Lifecycle::kStopped;
    REQUIRE((*s)->Ingest(std::vector{Snap({r1, r2})}, kJul31 + 5min, Prices()).ok());
    REQUIRE((*s)->Ingest(std::vector{Snap({r1, r2})}, kT0 + 1h, Prices()).ok());
    return std::move(*s);
  };
  const std::vector<UsageRow> jul30 = {Billed("r1", kJul30, "208"), Billed("r2", kJul30, "208")};
  std::vector<UsageRow> both = jul30;
  both.push_back(Billed("r2", kJul31, "1248"));
  {
    TempDir dir;
    auto s = build(dir);
    CHECK(Day(*s, kJul31) == Usd("1248") + Usd("4.333333"));
    auto st = s->ReconcileUsage("bt", "bt", both, kJul30, kT0, kT0 + 4h, Prices(), 10min);
    REQUIRE(st.ok());
    CHECK(st->compared == 4);  // three billed resource-days and r1's unbilled Jul 31
    CHECK(st->corrected == Money() - Usd("4.333333"));
    CHECK(Day(*s, kJul31) == Usd("1248"));
    auto cmp = s->CompareUsage("bt", "bt", both, kJul30, kT0, Prices());
    REQUIRE(cmp.ok());
    CHECK(cmp->size() == 4);
    for (const store::UsageComparison& c : *cmp) CHECK(c.ledger == c.billed);
    // Only a day's first bill is read that way: a later one without r2's row (r1's is
    // there, at the 0 booked) zeroes nothing.
    std::vector<UsageRow> later = jul30;
    later.push_back(Billed("r1", kJul31, "0"));
    auto again = s->ReconcileUsage("bt", "bt", later, kJul30, kT0, kT0 + 5h, Prices(), 10min);
    REQUIRE(again.ok());
    CHECK(again->compared == 0);
    CHECK(Day(*s, kJul31) == Usd("1248"));
  }
  {
    // A bill with nothing at all on Jul 31 is not read as "nothing billed".
    TempDir dir;
    auto s = build(dir);
    auto st = s->ReconcileUsage("bt", "bt", jul30, kJul30, kT0, kT0 + 4h, Prices(), 10min);
    REQUIRE(st.ok());
    CHECK(st->compared == 2);
    CHECK(Day(*s, kJul31) == Usd("1248") + Usd("4.333333"));
    // When Jul 31's bill lands it is that day's first, and r1's minutes go.
    auto landed = s->ReconcileUsage("bt", "bt", both, kJul30, kT0, kT0 + 5h, Prices(), 10min);
    REQUIRE(landed.ok());
    CHECK(landed->compared == 2);  // r2's Jul 31, and r1's unbilled one
    CHECK(Day(*s, kJul31) == Usd("1248"));
  }
}

TEST_CASE("reconciliation: drift and the days already compared are each provider's and account's own") {
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  // The same native id under two providers, and a second account of the first, each
  // watched from Jul 30 on.
  ListedResource a = Run("r1"), b = Run("r1"), c = Run("r2");
  b.provider = "bt-eu";
  b.account = "bt-eu";
  c.account = "bt-2";
  for (Resource* r : {&a, &b, &c}) r->created_at = kJul30 + 1h;
  std::vector<store::Snapshot> snaps = {Snap({a}), Snap({b}), Snap({c})};
  snaps[1].provider = snaps[1].account = "bt-eu";
  snaps[2].account = "bt-2";
  REQUIRE((*s)->Ingest(snaps, kJul30 + 1h, Prices()).ok());
  REQUIRE((*s)->Ingest(snaps, kT0 + 2h, Prices()).ok());
  const Time now = kT0 + 3h;
  // Each bills Jul 31 ($1,248 in the ledger) differently.
  REQUIRE((*s)->ReconcileUsage("bt", "bt", std::vector{Billed("r1", kJul31, "1250")}, kJul31, kT0, now, Prices(), 10min).ok());
  REQUIRE((*s)->ReconcileUsage("bt-eu", "bt-eu", std::vector{Billed("r1", kJul31, "1300")}, kJul31, kT0, now, Prices(),
                               10min).ok());
  // bt's second account: its first bill is compared (not taken as already known from
  // the first account's same day).
  auto second = (*s)->ReconcileUsage("bt", "bt-2", std::vector{Billed("r2", kJul31, "1260")}, kJul31, kT0, now,
                                     Prices(), 10min);
  REQUIRE(second.ok());
  CHECK(second->compared == 1);
  CHECK(second->revised == 0);

  auto bt = (*s)->QueryUsageDrift("bt", kJul29);
  REQUIRE(bt.ok());
  CHECK(bt->days == 2);  // both of bt's accounts, none of bt-eu's
  CHECK(bt->ledger == Usd("2496"));
  CHECK(bt->billed == Usd("2510"));
  auto eu = (*s)->QueryUsageDrift("bt-eu", kJul29);
  REQUIRE(eu.ok());
  CHECK(eu->days == 1);
  CHECK(eu->billed == Usd("1300"));
  // A provider with nothing watched, and days before `since` left out.
  auto none = (*s)->QueryUsageDrift("fw", kJul29);
  REQUIRE(none.ok());
  CHECK(none->days == 0);
  auto later = (*s)->QueryUsageDrift("bt", kT0);
  REQUIRE(later.ok());
  CHECK(later->days == 0);
}

TEST_CASE("reconciliation: an account too large for one statement is read in runs of resources, none left out") {
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  // 2,050 resources: three runs of those one statement names (1,000), the last short
  // (its list is filled out by repeating its last id). The first and the last bill; the
  // rest are stopped, so the bill's silence about them is not GPU time missed.
  std::vector<ListedResource> fleet;
  for (int i = 0; i < 2'050; ++i) fleet.push_back(Run("r" + std::to_string(i), 8, i == 0 || i == 2'049));
  REQUIRE((*s)->Ingest(std::vector{Snap(fleet)}, kJul30 + 1h, Prices()).ok());
  REQUIRE((*s)->Ingest(std::vector{Snap(fleet)}, kT0 + 2h, Prices()).ok());
  const Time now = kT0 + 3h;
  const std::vector<UsageRow> bill = {Billed("r0", kJul31, "1250"), Billed("r2049", kJul31, "1251")};
  auto st = (*s)->ReconcileUsage("bt", "bt", bill, kJul31, kT0, now, Prices(), 10min);
  REQUIRE_MESSAGE(st.ok(), st.status().message());
  CHECK(st->compared == 2);
  CHECK(st->unmatched == 0);
  CHECK(Day(**s, kJul31) == Usd("2501"));
  // The drift covers both runs of resources.
  auto drift = (*s)->QueryUsageDrift("bt", kJul31);
  REQUIRE(drift.ok());
  CHECK(drift->days == 2);
  CHECK(drift->billed == Usd("2501"));
  CHECK(drift->ledger == Usd("2496"));  // 24 hours at $52, twice, watched throughout
  // Both days are known the second time, wherever their resource falls.
  auto again = (*s)->ReconcileUsage("bt", "bt", bill, kJul31, kT0, now + 1h, Prices(), 10min);
  REQUIRE(again.ok());
  CHECK(again->compared == 0);
  CHECK(again->revised == 0);
}

TEST_CASE("reconciliation: GPU time the retention pass rolled into hourly buckets is still what the ledger held") {
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  // $52 an hour from Jul 30 00:00 to 10:00, then stopped: $520 on Jul 30.
  ListedResource r = Run("r1");
  r.created_at = kJul30;
  REQUIRE((*s)->Ingest(std::vector{Snap({r})}, kJul30, Prices()).ok());
  ListedResource stopped = Run("r1", 8, /*billable=*/false);
  stopped.created_at = kJul30;
  REQUIRE((*s)->Ingest(std::vector{Snap({stopped})}, kJul30 + 10h, Prices()).ok());
  // Detail older than 20 hours becomes hourly roll-ups, keyed by the resource's key (and
  // hours older than 60, daily ones that name no resource: Jul 30 is younger).
  auto rolled = (*s)->ApplyRetention(kT0 + 3h, 20h);
  REQUIRE(rolled.ok());
  REQUIRE(rolled->intervals_rolled == 1);
  REQUIRE(Count(dir.File("lw.db"), "SELECT COUNT(*) FROM ledger WHERE meter = 'gpu_seconds'") == 0);
  REQUIRE(Count(dir.File("lw.db"), "SELECT COUNT(*) FROM ledger_hourly") == 10);
  auto cmp = (*s)->CompareUsage("bt", "bt", std::vector{Billed("r1", kJul30, "530")}, kJul30, kJul31, Prices());
  REQUIRE(cmp.ok());
  REQUIRE(cmp->size() == 1);
  CHECK((*cmp)[0].ledger == Usd("520"));
  CHECK((*cmp)[0].billed == Usd("530"));
  auto st = (*s)->ReconcileUsage("bt", "bt", std::vector{Billed("r1", kJul30, "530")}, kJul30, kJul31, kT0 + 3h,
                                 Prices(), 10min);
  REQUIRE(st.ok());
  CHECK(st->corrected == Usd("10"));  // watched from creation: the difference is drift
  CHECK(Day(**s, kJul30) == Usd("530"));
}

TEST_CASE("a bill's days are written in batches, every one with its fields, the batch's tail included") {
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  // 35 runs billed on two days: 70 days compared, a full batch of 64 and a tail of six.
  std::vector<ListedResource> fleet;
  std::vector<UsageRow> bill;
  for (int i = 0; i < 35; ++i) {
    const std::string id = "r" + std::to_string(i);
    fleet.push_back(Run(id));
    fleet.back().created_at = kJul30;
    bill.push_back(Billed(id, kJul30, "100"));
    bill.push_back(Billed(id, kJul31, i == 34 ? "300.50" : "200"));
  }
  // Watched from their first minutes, one run unwatched: first seen a day late.
  std::vector<ListedResource> late = {fleet.back()};
  fleet.pop_back();
  REQUIRE((*s)->Ingest(std::vector{Snap(fleet)}, kJul30 + 5min, Prices()).ok());
  fleet.push_back(late.front());
  REQUIRE((*s)->Ingest(std::vector{Snap(fleet)}, kJul31 + 1h, Prices()).ok());
  auto st = (*s)->ReconcileUsage("bt", "bt", bill, kJul30, kT0, kT0 + 3h, Prices(), 10min);
  REQUIRE_MESSAGE(st.ok(), st.status().message());
  CHECK(st->compared == 70);
  CHECK(Count(dir.File("lw.db"), "SELECT COUNT(*) FROM usage_days") == 70);
  CHECK(Count(dir.File("lw.db"), "SELECT COUNT(DISTINCT rid) FROM usage_days") == 35);
  // Each row's own values: the first of the batch (watched), and the last of the tail
  // (r34's second day, billed differently, first seen an hour into it).
  auto row = [&](const std::string& id, Time day) {
    return Count(dir.File("lw.db"), "SELECT u.billed + 10 * u.watched FROM usage_days u JOIN resources r "
                                    "ON r.id = u.rid WHERE r.native_id = '" + id + "' AND u.day = " +
                                    std::to_string(ToUnixMicros(day)));
  };
  CHECK(row("r0", kJul30) == Usd("100").micros() + 10);
  CHECK(row("r34", kJul31) == Usd("300.50").micros());
  CHECK(Count(dir.File("lw.db"), "SELECT COUNT(*) FROM usage_days WHERE checked_at = " +
                                     std::to_string(ToUnixMicros(kT0 + 3h))) == 70);
  // Read back: a second reading of the same bill finds every day compared already.
  auto again = (*s)->ReconcileUsage("bt", "bt", bill, kJul30, kT0, kT0 + 4h, Prices(), 10min);
  REQUIRE(again.ok());
  CHECK(again->compared == 0);
  CHECK(again->revised == 0);
}
