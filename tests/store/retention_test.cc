// Retention: roll-ups keep totals exact and the file bounded over 90 days of a 1k fleet.
#include <doctest/doctest.h>

#include <filesystem>
#include <random>

#include "tests/store/fixtures.h"
#include "tests/testing/temp_dir.h"

using namespace loopwarden;
using namespace loopwarden::testing;
using namespace std::chrono_literals;

namespace {

int64_t FileBytes(const std::string& path) {
  int64_t n = 0;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::error_code ec;
    auto s = std::filesystem::file_size(path + suffix, ec);
    if (!ec) n += static_cast<int64_t>(s);
  }
  return n;
}

}  // namespace

TEST_CASE("roll-ups preserve spend exactly") {
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  ListedResource r = Run("x");
  r.activity.busy_now = true;
  for (int h = 0; h < 48; ++h) {
    r.billing.billable = h % 3 != 2;  // start/stop every few hours: many intervals
    r.lifecycle = r.billing.billable ? Lifecycle::kRunning : Lifecycle::kStopped;
    auto snap = Snap({r});
    REQUIRE((*s)->Ingest({&snap, 1}, kT0 + std::chrono::minutes(h * 60 + 17), Prices()).ok());
  }
  const Time end = kT0 + 49h;
  const int64_t before = (*s)->QueryReport(kT0 - 1h, end, store::GroupBy::kProvider)->total.spend.micros();
  const int64_t in_memory = (*s)->Find("bt/baseten.run/x")->SpendAt(end).micros();
  CHECK(before == in_memory);
  auto stats = (*s)->ApplyRetention(end, 12h);
  REQUIRE(stats.ok());
  CHECK(stats->intervals_rolled > 10);
  const int64_t after = (*s)->QueryReport(kT0 - 1h, end, store::GroupBy::kProvider)->total.spend.micros();
  CHECK(after == before);
  // Survives a restart too (memory is rebuilt from detail + roll-ups).
  s->reset();
  auto again = store::Store::Open({.path = dir.File("lw.db")});
  CHECK((*again)->Find("bt/baseten.run/x")->SpendAt(end).micros() == in_memory);
  // Hourly -> daily keeps the total as well.
  REQUIRE((*again)->ApplyRetention(end + 24h * 10, 12h).ok());
  CHECK((*again)->QueryReport(kT0 - 1h, end, store::GroupBy::kProvider)->total.spend.micros() == before);
}

TEST_CASE("90 days of a 1k-resource fleet stays under 16 MB and stops growing") {
  TempDir dir;
  const std::string path = dir.File("lw.db");
  auto s = store::Store::Open({.path = path});
  REQUIRE(s.ok());
  std::mt19937_64 rng(42);
  std::vector<ListedResource> fleet;
  for (int i = 0; i < 1000; ++i) fleet.push_back(Run("f" + std::to_string(i), 8, i % 3 == 0));
  int64_t size_day60 = 0;
  int next_id = 1000;
  for (int hour = 0; hour < 90 * 24; ++hour) {
    const Time now = kT0 + std::chrono::hours(hour);
    for (int k = 0; k < 20; ++k) {  // churn: starts, stops and idleness
      ListedResource& r = fleet[rng() % fleet.size()];
      r.billing.billable = !r.billing.billable;
      r.lifecycle = r.billing.billable ? Lifecycle::kRunning : Lifecycle::kStopped;
      r.activity.last_active_at = now - std::chrono::minutes(rng() % 120);
    }
    if (hour % 6 == 0) fleet[rng() % fleet.size()] = Run("f" + std::to_string(next_id++));  // replaced runs
    auto snap = Snap(fleet);
    REQUIRE((*s)->Ingest({&snap, 1}, now, Prices()).ok());
    if (hour % 24 == 23) REQUIRE((*s)->ApplyRetention(now, 7 * 24h).ok());
    if (hour == 60 * 24) size_day60 = FileBytes(path);
  }
  REQUIRE((*s)->IntegrityCheck().ok());
  const int64_t size = FileBytes(path);
  MESSAGE("database after 90 days: " << size / 1024 << " KiB (day 60: " << size_day60 / 1024 << " KiB)");
  CHECK(size < 16 * 1024 * 1024);
  // Bounded, not growing: the last month adds almost nothing.
  CHECK(size < size_day60 * 11 / 10);
}
