// The store on PostgreSQL: the same state as on SQLite, and fencing by the leader
// lease. Runs against the server ctest's `postgres` fixture starts on 127.0.0.1.
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <set>

#include "core/secrets.h"
#include "store/leader_lease.h"
#include "store/libpq.h"
#include "store/postgres.h"
#include "store/sqlite.h"
#include "tests/store/fixtures.h"
#include "tests/testing/postgres.h"
#include "tests/testing/temp_dir.h"

using namespace loopwarden;
using namespace loopwarden::testing;
using namespace std::chrono_literals;

namespace {

Money Usd(const char* s) { return ParseMoney(s).value(); }

// What a store holds, in a form two stores can be compared by.
struct Digest {
  size_t resources = 0;
  int64_t spend_us = 0, report_us = 0, day_us = 0;
  std::vector<std::string> marks;
  std::vector<std::string> intents;
  std::vector<std::string> snoozes;
  std::optional<std::string> meta;
  size_t attempts = 0;  // intents by key prefix
  bool operator==(const Digest&) const = default;
};

Digest Read(store::Store& s, Time now) {
  Digest d;
  d.resources = s.resources().size();
  d.spend_us = s.Spend({.provider = "bt"}, kT0 - 24h, now)->micros();
  d.report_us = s.QueryReport(kT0 - 24h, now, {store::GroupBy::kOwner, ""})->total.spend.micros();
  d.day_us = s.Spend({.provider = "bt"}, kT0, kT0 + 24h)->micros();
  for (const auto& [k, m] : s.marks()) d.marks.push_back(k.first + "|" + k.second + "|" + m.reason);
  auto intents = s.IntentsSince(Time{});
  REQUIRE(intents.ok());
  for (const auto& i : *intents) d.intents.push_back(i.idempotency_key + "|" + std::string(store::IntentStateName(i.state)) + "|" + i.outcome);
  auto snoozes = s.ActiveSnoozes(now);
  REQUIRE(snoozes.ok());
  for (const auto& z : *snoozes) d.snoozes.push_back(z.resource + "|" + z.reason);
  d.meta = *s.GetMeta("k");
  auto attempts = s.IntentsWithKeyPrefix("k");
  REQUIRE(attempts.ok());
  d.attempts = attempts->size();
  return d;
}

// One scripted day of a store's life: listings that open and close GPU intervals,
// marks, intents, a snooze, a bill, and retention.
Time Script(store::Store& s) {
  const auto prices = Prices();
  Time now = kT0;
  std::vector<ListedResource> rs = {Run("a"), Run("b", 4), Run("c", 8, false)};
  // Stopped runs enough for a full batch of first-sight transitions (one statement of
  // 64 rows) as well as the rows written one by one.
  std::vector<ListedResource> first = rs;
  for (int i = 0; i < 70; ++i) first.push_back(Run("s" + std::to_string(i), 8, false));
  REQUIRE(s.Ingest(std::vector{Snap(first)}, now, prices).ok());
  now += 2h;
  rs[1].lifecycle = Lifecycle::kStopped;
  rs[1].native_status = "INACTIVE";
  rs[1].billing.billable = false;
  {
    // The poll's path: resource by resource, in one transaction (Store::Listing).
    auto listing = s.BeginListing("bt", "bt", now, prices);
    for (const ListedResource& r : rs) listing->Add(ListedResource(r));
    auto listed = listing->Finish(true);
    REQUIRE(listed.ok());
    CHECK(listed->deleted == 70);
  }
  REQUIRE(s.PutMark({.policy = "idle", .resource = rs[0].Key(), .marked_at = now, .act_after = now + 1h,
                     .reason = "idle 2h", .action = "deactivate"}).ok());
  auto id = s.BeginIntent({.idempotency_key = "k1", .resource = rs[0].Key(), .policy = "idle", .action = "deactivate",
                           .request = "deactivate bt/run/a", .created_at = now});
  REQUIRE(id.ok());
  CHECK(s.BeginIntent({.idempotency_key = "k1", .resource = rs[0].Key(), .policy = "idle", .action = "deactivate",
                       .request = "again", .created_at = now}).status().code() == StatusCode::kAlreadyExists);
  REQUIRE(s.FinishIntent(*id, store::IntentState::kDone, "done", "{}", "", now + 1min).ok());
  REQUIRE(s.AddSnooze({.resource = rs[2].Key(), .reason = "demo on Friday", .by = "ana", .created_at = now}).ok());
  REQUIRE(s.PutMeta("k", "v1").ok());
  REQUIRE(s.PutMeta("k", "v2").ok());
  CHECK(*s.RecordNotification("n1", "slack", now, "sent"));
  CHECK_FALSE(*s.RecordNotification("n1", "slack", now, "sent"));
  now += 22h;
  rs.erase(rs.begin() + 2);  // c is gone
  REQUIRE(s.Ingest(std::vector{Snap(rs)}, now, prices).ok());
  const std::vector<UsageRow> bill = {{.resource_id = "a", .day = kT0, .meter = "minutes", .cost = Usd("1300")},
                                      {.resource_id = "b", .day = kT0, .meter = "minutes", .cost = Usd("60")}};
  auto rec = s.ReconcileUsage("bt", "bt", bill, kT0, kT0 + 24h, now + 4h, prices, 10min);
  REQUIRE(rec.ok());
  CHECK(rec->compared == 2);
  now += 30 * 24h;
  REQUIRE(s.Ingest(std::vector{Snap(rs)}, now, prices).ok());
  auto rolled = s.ApplyRetention(now, 7 * 24h);
  REQUIRE(rolled.ok());
  // Every transition is past the week kept: 73 first sights, b's stop, c and the
  // stopped runs gone.
  CHECK(rolled->transitions_rolled == 145);
  return now;
}

Result<std::unique_ptr<store::Store>> Leader(const std::string& dsn, store::LeaderLease& lease,
                                             std::function<void(const Status&)> lost = {}) {
  auto token = lease.TryAcquire();
  if (!token.ok()) return token.status();
  if (!*token) return FailedPrecondition("lease held by another");
  return store::Store::Open({.path = dsn, .fence = **token, .fence_lost = std::move(lost)});
}

// Ends the lease now, as its expiry would, without waiting for it.
void Expire(const std::string& dsn) {
  auto c = store::pg::Conn::Connect(dsn, "test");
  REQUIRE(c.ok());
  REQUIRE((*c)->Exec("UPDATE lw_lease SET expires_at = clock_timestamp() - interval '1 second'").ok());
}

}  // namespace

TEST_CASE("postgres: SQLite statements translate, parameters and inserted ids included") {
  bool id = false;
  CHECK(store::pg::Translate("SELECT v FROM meta WHERE k=?1", &id) == "SELECT v FROM meta WHERE k=$1");
  CHECK_FALSE(id);
  CHECK(store::pg::Translate("INSERT OR IGNORE INTO notifications (a, b) VALUES (?1,?2)") ==
        "INSERT INTO notifications (a, b) VALUES ($1,$2) ON CONFLICT DO NOTHING");
  CHECK(store::pg::Translate("INSERT INTO ledger (rid) VALUES (?1)", &id) == "INSERT INTO ledger (rid) VALUES ($1) RETURNING id");
  CHECK(id);
  CHECK(store::pg::Translate("INSERT INTO ledger_hourly (x) VALUES (?1)", &id) == "INSERT INTO ledger_hourly (x) VALUES ($1)");
  CHECK_FALSE(id);
  CHECK(store::pg::Translate("SELECT '?' FROM t WHERE a = ?") == "SELECT '?' FROM t WHERE a = $1");
  CHECK(store::pg::Translate("PRAGMA synchronous = FULL").empty());
}

TEST_CASE("postgres: a DSN's password never reaches a message") {
  CHECK(store::pg::RedactDsn("postgresql://lw:s3cret-MARKER@db:5432/lw") == "postgresql://lw@db:5432/lw");
  CHECK(store::pg::RedactDsn("postgres://db/lw?password=s3cret-MARKER&sslmode=require") ==
        "postgres://db/lw?password=***&sslmode=require");
  // Nothing listens on port 1: the error names the server, not the password.
  auto s = store::Store::Open({.path = "postgresql://lw:s3cret-MARKER@127.0.0.1:1/lw", .read_only = true});
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == StatusCode::kUnavailable);
  CHECK(s.status().message().find("127.0.0.1:1") != std::string::npos);
  CHECK(s.status().message().find("MARKER") == std::string::npos);
  // And the log redactor knows it from then on.
  CHECK(Redact("saw s3cret-MARKER here").find("s3cret-MARKER") == std::string::npos);
}

TEST_CASE("postgres: libpq is loaded by the first PostgreSQL store, never by a SQLite one") {
  // Its own process under ctest, so nothing before this case loaded libpq.
  TempDir dir;
  {
    auto s = store::Store::Open({.path = dir.File("lw.db")});
    REQUIRE(s.ok());
  }
  CHECK(::dlopen("libpq.so.5", RTLD_LAZY | RTLD_NOLOAD) == nullptr);
  auto s = store::Store::Open({.path = "postgresql://lw@127.0.0.1:1/lw", .read_only = true});
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == StatusCode::kUnavailable);  // reached libpq, which found no server
  void* lib = ::dlopen("libpq.so.5", RTLD_LAZY | RTLD_NOLOAD);
  CHECK(lib != nullptr);
  if (lib) ::dlclose(lib);
}

TEST_CASE("postgres: a missing or wrong libpq is an error that names it") {
  auto missing = store::pg::LoadLibpqFrom("libpq-absent.so.9");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kFailedPrecondition);
  CHECK(missing.status().message().find("libpq-absent.so.9") != std::string::npos);
  CHECK(missing.status().message().find("apt-get install libpq5") != std::string::npos);
  // A library that loads but is not libpq.
  auto wrong = store::pg::LoadLibpqFrom("libm.so.6");
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.status().message().find("libm.so.6 has no PQconnectdbParams") != std::string::npos);
  auto right = store::pg::LoadLibpqFrom("libpq.so.5");
  REQUIRE(right.ok());
  CHECK(static_cast<bool>((*right)->PQconnectdbParams));
  CHECK(static_cast<bool>((*right)->PQcmdTuples));
}

TEST_CASE("postgres: a day of ingest, marks, intents, snoozes, bills and retention leaves the state SQLite holds") {
  TempDir dir;
  PgSchema schema;
  auto lite = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(lite.ok());
  auto lease = store::LeaderLease::Open(schema.dsn(), "test", 1h);
  REQUIRE(lease.ok());
  auto pg = Leader(schema.dsn(), **lease);
  REQUIRE_MESSAGE(pg.ok(), pg.status().message());
  const Time a = Script(**lite);
  const Time b = Script(**pg);
  REQUIRE(a == b);
  const Digest want = Read(**lite, a);
  CHECK(want.spend_us > 0);
  CHECK(want.marks.size() == 1);
  CHECK(want.attempts == 1);
  CHECK(Read(**pg, b) == want);
  // Each intent carries the lease token it was written under; SQLite's have none.
  auto fenced = (*pg)->IntentsSince(Time{});
  REQUIRE(fenced.ok());
  REQUIRE(fenced->size() == 1);
  CHECK(fenced->front().fence == (*lease)->token());
  CHECK((*lite)->IntentsSince(Time{})->front().fence == std::nullopt);
  // What was written is what a fresh process reads back, and what plan's copy holds.
  pg->reset();
  auto reader = store::Store::Open({.path = schema.dsn(), .read_only = true});
  REQUIRE_MESSAGE(reader.ok(), reader.status().message());
  CHECK(Read(**reader, b) == want);
  auto copy = store::Store::OpenCopy(schema.dsn(), dir.File("plan.db"));
  REQUIRE_MESSAGE(copy.ok(), copy.status().message());
  CHECK(Read(**copy, b) == want);
}

TEST_CASE("postgres: a writer needs the lease, and a deposed leader's writes are refused") {
  PgSchema schema;
  auto unfenced = store::Store::Open({.path = schema.dsn()});
  REQUIRE_FALSE(unfenced.ok());
  CHECK(unfenced.status().message().find("leader lease") != std::string::npos);

  auto first = store::LeaderLease::Open(schema.dsn(), "first", 1h);
  auto second = store::LeaderLease::Open(schema.dsn(), "second", 1h);
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  int lost = 0;
  auto leader = Leader(schema.dsn(), **first, [&](const Status&) { ++lost; });
  REQUIRE(leader.ok());
  const int64_t token = *(*first)->token();
  CHECK((*leader)->PutMeta("k", "by first").ok());
  CHECK((*leader)->LeaseLeft()->count() > 0);
  // A running lease is not taken over.
  CHECK_FALSE((*second)->TryAcquire()->has_value());
  CHECK(*(*first)->Renew());

  Expire(schema.dsn());
  CHECK_FALSE(*(*first)->Renew());  // an expired lease is not renewed
  auto next = (*second)->TryAcquire();
  REQUIRE(next.ok());
  REQUIRE(next->has_value());
  CHECK(**next == token + 1);
  auto holder = (*second)->Current();
  REQUIRE(holder.ok());
  CHECK((*holder)->holder == "second");

  // The deposed leader: every write refused, the hook told once, the lease named.
  Status w = (*leader)->PutMeta("k", "by first, deposed");
  CHECK(w.code() == StatusCode::kFailedPrecondition);
  CHECK(w.message().find("no longer the leader") != std::string::npos);
  CHECK((*leader)->Ingest(std::vector{Snap({Run("x")})}, kT0, Prices()).status().code() ==
        StatusCode::kFailedPrecondition);
  CHECK((*leader)->LeaseLeft().status().code() == StatusCode::kFailedPrecondition);
  CHECK(lost == 1);

  auto now_leader = store::Store::Open({.path = schema.dsn(), .fence = **next});
  REQUIRE(now_leader.ok());
  CHECK(*(*now_leader)->GetMeta("k") == std::optional<std::string>("by first"));
  CHECK((*now_leader)->resources().empty());  // the refused ingest left nothing
  // A clean shutdown hands over at once.
  CHECK((*second)->Release().ok());
  CHECK((*first)->TryAcquire()->value_or(0) == token + 2);
}

TEST_CASE("postgres: every table has the columns the SQLite schema gives it, so a migration cannot forget one") {
  TempDir dir;
  PgSchema schema;
  auto lease = store::LeaderLease::Open(schema.dsn(), "test", 1h);
  REQUIRE(lease.ok());
  REQUIRE(Leader(schema.dsn(), **lease).ok());
  REQUIRE(store::Store::Open({.path = dir.File("lw.db")}).ok());
  auto lite = store::Db::Open(dir.File("lw.db"), false, true);
  auto pg = store::Db::OpenPostgres(schema.dsn());
  REQUIRE(lite.ok());
  REQUIRE(pg.ok());
  auto columns = [](store::Db& db, const std::string& sql) {
    std::set<std::string> out;
    auto q = db.Prepare(sql);
    REQUIRE_MESSAGE(q.ok(), q.status().message());
    while (q->Step().value_or(false)) out.insert(q->Text(0));
    return out;
  };
  const std::set<std::string> tables =
      columns(**lite, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
  CHECK(tables.size() >= 16);
  for (const std::string& t : tables) {
    INFO(t);
    const auto want = columns(**lite, "SELECT name FROM pragma_table_info('" + t + "')");
    CHECK_FALSE(want.empty());
    CHECK(columns(**pg, "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
                        "AND table_name = '" + t + "'") == want);
  }
}

TEST_CASE("postgres: a database from a newer loopwarden is refused and left as it was") {
  PgSchema schema;
  auto lease = store::LeaderLease::Open(schema.dsn(), "test", 1h);
  REQUIRE(lease.ok());
  REQUIRE(Leader(schema.dsn(), **lease).ok());
  auto c = store::pg::Conn::Connect(schema.dsn(), "test");
  REQUIRE(c.ok());
  REQUIRE((*c)->Exec("UPDATE lw_schema SET version = 999").ok());
  auto again = store::Store::Open({.path = schema.dsn(), .read_only = true});
  REQUIRE_FALSE(again.ok());
  CHECK(again.status().code() == StatusCode::kFailedPrecondition);
  CHECK(again.status().message().find("newer loopwarden") != std::string::npos);
}
