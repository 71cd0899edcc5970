// The cycle's running spend totals against a fresh scan of the ledger.
#include <doctest/doctest.h>

#include <cstdint>

#include "tests/store/fixtures.h"
#include "tests/testing/temp_dir.h"

using namespace loopwarden;
using namespace loopwarden::testing;
using namespace std::chrono_literals;

namespace {

// A small deterministic generator, so a failure replays.
struct Lcg {
  uint64_t s = 0x9e3779b97f4a7c15ULL;
  uint32_t Next() {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(s >> 33);
  }
  bool Chance(int percent) { return static_cast<int>(Next() % 100) < percent; }
};

// In the runs' snapshot: a second kind in the same table of cells.
ListedResource BusySession(const std::string& id) {
  ListedResource x = Session(id, "bt", "bt");
  x.created_at = kT0 - 30h;
  return x;
}

std::vector<Time> Starts(Time now) {
  // Calendar periods, as a cycle asks: the day, three days back, and a zone's day.
  const Time day = kT0 + std::chrono::floor<std::chrono::days>(now - kT0);
  return {day, day - 72h, day + 5h + 30min > now ? day - 18h - 30min : day + 5h + 30min};
}

}  // namespace

TEST_CASE("running period spend equals a fresh scan of the ledger through splits, tokens, retention (idle or not) and new days") {
  // Issue 14: every cycle scanned the month's ledger for these totals.
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  Lcg rng;
  std::vector<ListedResource> fleet;
  for (int i = 0; i < 6; ++i) fleet.push_back(Run("g" + std::to_string(i), 1 + i % 4));
  for (int i = 0; i < 4; ++i) fleet.push_back(BusySession("ts-" + std::to_string(i)));
  int compared = 0, nonzero = 0, retention_moved = 0, retention_idle = 0, days = 0;
  std::vector<Time> last_starts;
  Time now = kT0;
  for (int step = 0; step < 400; ++step) {
    now += std::chrono::minutes(7 + rng.Next() % 11);
    for (ListedResource& r : fleet) {
      if (r.billing.meter == Meter::kGpuTime) {
        if (rng.Chance(10)) r.billing.billable = !r.billing.billable;
        r.lifecycle = r.billing.billable ? Lifecycle::kRunning : Lifecycle::kStopped;
        if (rng.Chance(5)) r.billing.replicas = 1 + static_cast<int>(rng.Next() % 3);
        r.activity.busy_now = rng.Chance(50);
        if (r.activity.busy_now) r.activity.last_active_at = now - 1min;
      } else if (rng.Chance(60)) {
        r.tokens["train"] += 1000 + rng.Next() % 50000;
        if (rng.Chance(30)) r.tokens["sample"] += rng.Next() % 9000;
      }
    }
    auto snap = Snap(fleet);
    REQUIRE((*s)->Ingest({&snap, 1}, now, Prices()).ok());
    if (step % 97 == 96) {
      // Twice: the second pass finds nothing left to roll, and the totals it keeps must
      // still be right.
      for (int pass = 0; pass < 2; ++pass) {
        auto rolled = (*s)->ApplyRetention(now, 20h);
        REQUIRE(rolled.ok());
        const bool moved = rolled->intervals_rolled + rolled->hourly_rolled + rolled->resources_pruned > 0;
        ++(moved ? retention_moved : retention_idle);
      }
    }
    const std::vector<Time> starts = Starts(now);
    if (last_starts.empty() || starts[0] != last_starts[0]) ++days;
    last_starts = starts;
    auto cells = (*s)->SpendSince(starts, now);
    REQUIRE(cells.ok());
    for (const store::SpendCell& c : *cells) {
      for (size_t i = 0; i < starts.size(); ++i) {
        auto fresh = (*s)->Spend({.provider = c.provider, .account = c.account, .kind = ParseKind(c.kind)}, starts[i], now);
        REQUIRE(fresh.ok());
        INFO("step " << step << " cell " << c.kind << " start " << i);
        CHECK(c.since[i].micros() == fresh->micros());
        ++compared;
        if (fresh->micros() != 0) ++nonzero;
      }
    }
  }
  CHECK(retention_moved >= 2);  // totals rebuilt after rows became roll-ups
  CHECK(retention_idle >= 4);   // and kept after passes that moved nothing
  CHECK(days >= 3);  // the starts moved at midnight, and stood still in between
  CHECK(compared >= 400 * 2 * 3);  // both kinds, every start, every step
  CHECK(nonzero > compared / 2);
}

TEST_CASE("period spend read at an earlier instant is rebuilt, not served from later totals") {
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  ListedResource r = Run("g8");  // 8 H100 at $6.50: $52 an hour
  auto snap = Snap({r});
  REQUIRE((*s)->Ingest({&snap, 1}, kT0, Prices()).ok());
  r.billing.billable = false;
  r.lifecycle = Lifecycle::kStopped;
  snap = Snap({r});
  REQUIRE((*s)->Ingest({&snap, 1}, kT0 + 2h, Prices()).ok());  // closed: $104
  const Time starts[] = {kT0};
  auto later = (*s)->SpendSince(starts, kT0 + 3h);
  REQUIRE(later.ok());
  REQUIRE(later->size() == 1);
  CHECK(later->front().since[0].micros() == 104'000'000);
  auto earlier = (*s)->SpendSince(starts, kT0 + 1h);  // a clock stepped back
  REQUIRE(earlier.ok());
  REQUIRE(earlier->size() == 1);
  CHECK(earlier->front().since[0].micros() == 52'000'000);
}
