// The daemon's ledger against the simulator's bill, per UTC day: reconciliation reads
// R21 and R15 once per usage_interval, backfills what came before first sight and
// books what the polls missed, so each finished day says what the provider billed.
#include <boost/json.hpp>

#include "providers/baseten/parse.h"
#include "store/sqlite.h"
#include "tests/daemon/daemon_fixture.h"

namespace loopwarden::testing {
namespace {

using namespace std::chrono_literals;
namespace bj = boost::json;

const Time kAug1 = ParseTime("2026-08-01T00:00:00Z").value();
const Time kAug2 = kAug1 + 24h;

// What the simulated Baseten organization billed from `from` to `to` (R21), as the
// adapter's parser reads it.
std::vector<providers::baseten::UsageDay> BasetenBill(DaemonFixture& f, Time from, Time to) {
  auto r = f.Sim("GET", "/v1/billing/usage_summary?start_date=" + FormatTimeSeconds(from) +
                            "&end_date=" + FormatTimeSeconds(to),
                 "", {{"Authorization", "Api-Key bt-demo-key"}});
  REQUIRE(r.status == 200);
  auto days = providers::baseten::ParseUsageSummary(r.body);
  REQUIRE(days.ok());
  return *days;
}

Money Total(const std::vector<providers::baseten::UsageDay>& days, Time day) {
  Money total;
  for (const auto& d : days) {
    if (d.day == day) total += d.cost;
  }
  return total;
}

int64_t Query(const std::string& path, const std::string& sql) {
  auto db = store::Db::Open(path, false, true);
  REQUIRE(db.ok());
  auto n = db.value()->QueryInt(sql);
  REQUIRE_MESSAGE(n.ok(), n.status().message());
  return *n;
}

TEST_CASE("spend truth: each finished day's ledger is the simulator's bill, history before first sight included") {
  DaemonFixture f("  []\n", "dry_run: true\n");
  // First sight at Aug 1 12:00 of a fleet created hours before; then a poll an hour
  // until Aug 3 04:00, when Aug 2 has settled.
  f.Cycle();
  for (int i = 0; i < 40; ++i) {
    f.Advance(1h);
    f.Cycle();
  }
  const std::string db = f.store().path();
  const std::string day1 = std::to_string(ToUnixMicros(kAug1)), day2 = std::to_string(ToUnixMicros(kAug2));
  for (Time day : {kAug1, kAug2}) {
    CAPTURE(FormatTime(day));
    const Money bill = Total(BasetenBill(f, day, day + 24h), day);
    REQUIRE(bill > Money());
    auto ledger = f.store().Spend({.provider = "bt"}, day, day + 24h);
    REQUIRE(ledger.ok());
    // Exact but for the rounding of open intervals split at midnight: under a cent.
    CHECK(std::abs(ledger->micros() - bill.micros()) < 10'000);
    // Fireworks bills quantities; the ledger priced them, day by day.
    auto fw = f.store().Spend({.provider = "fw"}, day, day + 24h);
    REQUIRE(fw.ok());
    const int64_t fw_billed = Query(db, "SELECT COALESCE(SUM(u.billed), 0) FROM usage_days u JOIN resources r "
                                        "ON r.id = u.rid WHERE r.provider = 'fw' AND u.day = " +
                                            std::to_string(ToUnixMicros(day)));
    CHECK(fw_billed > 0);
    CHECK(std::abs(fw->micros() - fw_billed) < 10'000);
  }
  // Resource by resource too: every (resource, day) of the Baseten bill, as the adapter
  // parses it, against the ledger now.
  std::vector<UsageRow> rows;
  for (const auto& d : BasetenBill(f, kAug1, kAug2 + 24h)) rows.push_back({d.resource_id, d.day, "minutes", d.minutes, d.cost});
  const providers::Provider& bt = *f.reconciler().setup()->providers.at(0);
  auto cmp = f.store().CompareUsage(bt.name(), bt.account(), rows, kAug1, kAug2 + 24h,
                                    f.reconciler().setup()->prices);
  REQUIRE(cmp.ok());
  CHECK(cmp->size() >= 10);
  for (const store::UsageComparison& c : *cmp) {
    CAPTURE(c.resource);
    CHECK(std::abs(c.ledger.micros() - c.billed.micros()) < 10'000);
  }
  // Aug 1 began before first sight: backfill. Aug 2 was watched: its difference is drift.
  CHECK(Query(db, "SELECT COUNT(*) FROM usage_days WHERE watched = 0 AND day = " + day1) > 0);
  CHECK(Query(db, "SELECT COUNT(*) FROM usage_days WHERE watched = 1 AND day = " + day1) == 0);
  CHECK(Query(db, "SELECT COUNT(*) FROM usage_days WHERE watched = 1 AND day = " + day2) > 0);
  CHECK(Query(db, "SELECT COUNT(*) FROM ledger WHERE meter = 'billed'") > 0);
  const std::string text = f.metrics().RenderText();
  CHECK(text.find("loopwarden_spend_drift_ratio{provider=\"bt\"}") != std::string::npos);
  CHECK(text.find("loopwarden_usage_reconciled_timestamp_seconds{provider=\"fw\"}") != std::string::npos);
  // The bill is read once per usage_interval (1h), not every cycle; a repeat books
  // nothing.
  auto reconciled_at = [&] {
    const std::string m = f.metrics().RenderText();
    const std::string key = "loopwarden_usage_reconciled_timestamp_seconds{provider=\"bt\"} ";
    const size_t at = m.find(key);
    REQUIRE(at != std::string::npos);
    return std::stod(m.substr(at + key.size()));
  };
  const double last = reconciled_at();
  const int64_t booked = Query(db, "SELECT COUNT(*) FROM ledger WHERE meter = 'billed'");
  f.Advance(10min);
  f.Cycle();
  CHECK(reconciled_at() == last);
  f.Advance(1h);
  f.Cycle();
  CHECK(reconciled_at() > last);
  CHECK(Query(db, "SELECT COUNT(*) FROM ledger WHERE meter = 'billed'") == booked);
}

}  // namespace
}  // namespace loopwarden::testing
