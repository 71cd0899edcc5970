#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/hash.h"
#include "store/schema.h"
#include "store/sqlite.h"
#include "tests/store/fixtures.h"
#include "tests/testing/temp_dir.h"

using namespace loopwarden;
using namespace loopwarden::testing;
using namespace std::chrono_literals;

namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Builds a database at `version` with one resource, one mark and one ledger row written
// the way that version's code would have.
void BuildOld(const std::string& path, int version) {
  auto db = store::Db::Open(path, true, false);
  REQUIRE(db.ok());
  REQUIRE((*db)->Exec("PRAGMA auto_vacuum = INCREMENTAL").ok());  // as the store creates files
  REQUIRE((*db)->Exec("PRAGMA journal_mode = WAL").ok());
  REQUIRE(store::Migrate(**db, version).ok());
  ListedResource r = Run("old1");
  const std::string data = store::ResourceToJson(r);
  // Before schema 5 the columns and `data` both held identity, names and lifecycle.
  auto q = (*db)->Prepare("INSERT INTO resources (key, provider, account, kind, native_id, name, owner, base_model, "
                          "lifecycle, native_status, created_at, first_seen, updated_at, fingerprint, data) VALUES "
                          "('bt/baseten.run/old1', 'bt', 'bt', 'baseten.run', 'old1', ?2, ?3, ?4, 'running', ?5, ?6, "
                          "1, 1, '0', ?1)");
  REQUIRE(q.ok());
  q->Bind(1, data).Bind(2, r.name).Bind(3, r.owner.view()).Bind(4, r.base_model.view()).Bind(5, r.native_status.view());
  q->Bind(6, ToUnixMicros(*r.created_at));
  REQUIRE(q->Run().ok());
  REQUIRE((*db)->Exec("INSERT INTO marks (policy, resource, marked_at, act_after) VALUES ('p', 'bt/baseten.run/old1', "
                      "10, 20)").ok());
  // From schema 6 the children name a resource by its integer id, not its key.
  const std::string ref = version >= 6 ? "rid" : "resource";
  const std::string who = version >= 6 ? "(SELECT id FROM resources WHERE key = 'bt/baseten.run/old1')"
                                        : "'bt/baseten.run/old1'";
  REQUIRE((*db)->Exec("INSERT INTO ledger (" + ref + ", meter, start_at, end_at, quantity_rate, quantity, unit_price, "
                      "cost) VALUES (" + who + ", 'gpu_seconds', 0, 3600000000, 8, 28800, 6500000, 52000000)").ok());
  REQUIRE((*db)->Exec("INSERT INTO activity (" + ref + ", known, traffic_known, fingerprint, last_active_at, "
                      "updated_at) VALUES (" + who + ", 1, 0, 'fp', 5000000, 1)").ok());
  if (version >= 2) {  // counters came in schema 2
    REQUIRE((*db)->Exec("INSERT INTO counters (" + ref + ", meter, value, updated_at) VALUES (" + who +
                        ", 'train', 1234, 1)").ok());
  }
}

}  // namespace

TEST_CASE("a new database is created at the current schema version with WAL, 8 KB pages and foreign keys") {
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("new.db")});
  REQUIRE(s.ok());
  s->reset();
  auto db = store::Db::Open(dir.File("new.db"), false, true);
  CHECK((*db)->QueryInt("PRAGMA user_version").value() == store::kSchemaVersion);
  CHECK((*db)->QueryInt("PRAGMA page_size").value() == 8192);
  CHECK((*db)->QueryInt("PRAGMA auto_vacuum").value() == 2);  // incremental: set along with the page size
  CHECK((*db)->QueryInt("SELECT COUNT(*) FROM sqlite_master WHERE name = 'ledger_by_start'").value() == 0);
  auto mode = (*db)->Prepare("PRAGMA journal_mode");
  REQUIRE(mode->Step().value());
  CHECK(mode->Text(0) == "wal");
}

TEST_CASE("forward migrations from every earlier version keep the data") {
  for (int v = 1; v < store::kSchemaVersion; ++v) {
    CAPTURE(v);
    TempDir dir;
    const std::string path = dir.File("old.db");
    BuildOld(path, v);
    auto s = store::Store::Open({.path = path});
    REQUIRE_MESSAGE(s.ok(), s.status().message());
    const auto* st = (*s)->Find("bt/baseten.run/old1");
    REQUIRE(st);
    CHECK(st->resource.billing.gpus_per_replica == 8);
    CHECK(st->resource.name == "run-old1");
    CHECK(st->resource.owner == "ana@example.com");
    CHECK(st->resource.base_model == "Qwen/Qwen3-8B");
    CHECK(st->resource.lifecycle == Lifecycle::kRunning);
    CHECK(st->resource.created_at == kT0 - std::chrono::hours(1));
    CHECK(st->SpendAt(kT0).micros() == 52'000'000);
    CHECK(st->activity_known);
    CHECK(st->last_active_at == FromUnixMicros(5'000'000));
    CHECK(st->activity_fingerprint == CountersFingerprint("fp"));  // the counters' text, as rows held it then
    if (v >= 2) CHECK(st->counters.at("train") == 1234);
    CHECK((*s)->marks().size() == 1);
    // The newer tables work.
    CHECK((*s)->RecordNotification("k", "slack", kT0, "sent").value());
    CHECK((*s)->PutMeta("x", "y").ok());
    s->reset();
    auto db = store::Db::Open(path, false, true);
    CHECK((*db)->QueryInt("PRAGMA user_version").value() == store::kSchemaVersion);
    // A database made with 4 KB pages keeps them: only a new file takes the store's size.
    CHECK((*db)->QueryInt("PRAGMA page_size").value() == 4096);
    // Schema 9 dropped the ledger's index by start time; the one by resource stays.
    CHECK((*db)->QueryInt("SELECT COUNT(*) FROM sqlite_master WHERE name = 'ledger_by_start'").value() == 0);
    CHECK((*db)->QueryInt("SELECT COUNT(*) FROM sqlite_master WHERE name = 'ledger_by_resource'").value() == 1);
    // Schema 5 took what the columns hold out of `data`; the rest stayed.
    auto row = (*db)->Prepare("SELECT data FROM resources");
    REQUIRE(row->Step().value());
    const std::string data = row->Text(0);
    if (v < 5) {
      CHECK(data.find("\"name\"") == std::string::npos);
      CHECK(data.find("\"provider\"") == std::string::npos);
    }
    CHECK(data.find("\"gpus_per_replica\":8") != std::string::npos);
    // Schema 6: the rows about it name it by resources.id, and the old key columns are gone.
    CHECK((*db)->QueryInt("SELECT COUNT(*) FROM ledger l JOIN resources r ON r.id = l.rid "
                          "WHERE r.key = 'bt/baseten.run/old1'").value() == 1);
    CHECK((*db)->QueryInt("SELECT COUNT(*) FROM activity a JOIN resources r ON r.id = a.rid").value() == 1);
    CHECK((*db)->QueryInt("SELECT COUNT(*) FROM pragma_table_info('ledger') WHERE name = 'resource'").value() == 0);
    CHECK((*db)->QueryInt("SELECT COUNT(*) FROM pragma_foreign_key_check").value() == 0);
    CHECK((*db)->QueryInt("PRAGMA freelist_count").value() == 0);  // the rebuilt tables' old pages went back
    for (const char* child : {"ledger", "transitions", "activity", "counters", "usage_days"}) {
      CAPTURE(child);  // the renamed tables' references follow the rename
      CHECK((*db)->QueryInt(std::string("SELECT COUNT(*) FROM pragma_foreign_key_list('") + child +
                            "') WHERE \"table\" = 'resources' AND \"to\" = 'id'").value() == 1);
    }
  }
}

TEST_CASE("a database from a newer loopwarden is refused and left untouched") {
  TempDir dir;
  const std::string path = dir.File("future.db");
  {
    auto db = store::Db::Open(path, true, false);
    REQUIRE((*db)->Exec("CREATE TABLE x (a INTEGER); PRAGMA user_version = 99;").ok());
  }
  const std::string before = Slurp(path);
  auto s = store::Store::Open({.path = path});
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == StatusCode::kFailedPrecondition);
  CHECK(s.status().message() == "database " + path +
                                    " was written by a newer loopwarden (schema version 99; this one knows up to " + std::to_string(store::kSchemaVersion) + "); "
                                    "refusing to open it, and nothing was changed");
  CHECK(Slurp(path) == before);
}

TEST_CASE("a corrupt or foreign file is refused with a clear error and left untouched") {
  TempDir dir;
  const std::string path = dir.File("junk.db");
  { std::ofstream(path) << std::string(8192, 'x'); }
  const std::string before = Slurp(path);
  auto s = store::Store::Open({.path = path});
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == StatusCode::kDataLoss);
  CHECK(s.status().message().find("database " + path + " is not a loopwarden database or is damaged") == 0);
  CHECK(Slurp(path) == before);

  // A real database whose pages were damaged.
  const std::string good = dir.File("damaged.db");
  {
    auto st = store::Store::Open({.path = good});
    REQUIRE(st.ok());
    std::vector<ListedResource> fleet;
    for (int i = 0; i < 300; ++i) fleet.push_back(Run("d" + std::to_string(i)));
    auto snap = Snap(fleet);
    REQUIRE((*st)->Ingest({&snap, 1}, kT0, Prices()).ok());
  }
  {
    auto db = store::Db::Open(good, false, false);
    REQUIRE((*db)->Exec("PRAGMA wal_checkpoint(TRUNCATE)").ok());
  }
  std::string bytes = Slurp(good);
  REQUIRE(bytes.size() > 20000);
  for (size_t i = 8192; i < 16384; ++i) bytes[i] = static_cast<char>(i * 7);
  { std::ofstream(good, std::ios::binary | std::ios::trunc) << bytes; }
  auto damaged = store::Store::Open({.path = good});
  REQUIRE_FALSE(damaged.ok());
  CHECK(damaged.status().code() == StatusCode::kDataLoss);
  CHECK(damaged.status().message().find("is damaged") != std::string::npos);
  CHECK(Slurp(good) == bytes);
}

TEST_CASE("read-only opens never create or migrate") {
  TempDir dir;
  auto missing = store::Store::Open({.path = dir.File("none.db"), .read_only = true});
  CHECK(missing.status().code() == StatusCode::kNotFound);
  const std::string path = dir.File("v1.db");
  BuildOld(path, 1);
  auto ro = store::Store::Open({.path = path, .read_only = true});
  CHECK(ro.status().code() == StatusCode::kFailedPrecondition);
  auto bad_dir = store::Store::Open({.path = dir.File("no/such/dir/x.db")});
  CHECK(bad_dir.status().code() == StatusCode::kNotFound);
}

TEST_CASE("hardening: an empty (0-byte) database file is refused and left as it is, not taken for a new one") {
  TempDir dir;
  const std::string path = dir.File("empty.db");
  std::ofstream(path).close();
  auto s = store::Store::Open({.path = path});
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == StatusCode::kDataLoss);
  CHECK(s.status().message().find("is empty (0 bytes)") != std::string::npos);
  CHECK(std::filesystem::file_size(path) == 0);
  CHECK_FALSE(std::filesystem::exists(path + "-wal"));
}

TEST_CASE("hardening: an index that disagrees with its table is found at open, and nothing is written") {
  TempDir dir;
  const std::string path = dir.File("skewed.db");
  {
    auto s = store::Store::Open({.path = path});
    REQUIRE(s.ok());
    auto snap = Snap({Run("a"), Run("b"), Run("c")});
    REQUIRE((*s)->Ingest({&snap, 1}, kT0, Prices()).ok());
  }
  {
    // Rewrite the index's declared columns under it: its b-tree no longer matches the
    // table, which quick_check does not look at and integrity_check does.
    auto db = store::Db::Open(path, false, false);
    REQUIRE(db.ok());
    REQUIRE((*db)->Exec("PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = "
                        "'CREATE INDEX transitions_by_resource ON transitions(at)' "
                        "WHERE name = 'transitions_by_resource'; PRAGMA writable_schema = OFF;").ok());
  }
  const std::string before = Slurp(path);
  auto s = store::Store::Open({.path = path});
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == StatusCode::kDataLoss);
  CHECK(s.status().message().find("is damaged") != std::string::npos);
  CHECK(Slurp(path) == before);
}

namespace {

// Every field that is stored, compared one by one (Resource has no operator==).
void CheckSame(const Resource& a, const Resource& b) {
  CHECK(a.provider_type == b.provider_type);
  CHECK(a.provider == b.provider);
  CHECK(a.account == b.account);
  CHECK(a.kind == b.kind);
  CHECK(a.id == b.id);
  CHECK(a.lifecycle == b.lifecycle);
  CHECK(a.checkpoints->promotable == b.checkpoints->promotable);
  CHECK(a.checkpoints->newest_promotable_name == b.checkpoints->newest_promotable_name);
  CHECK(a.checkpoints->newest_promotable_at == b.checkpoints->newest_promotable_at);
  // Everything else goes into the fingerprint.
  CHECK(store::Fingerprint(a) == store::Fingerprint(b));
}

// The resources table's columns for `r`, as WriteResource binds them.
store::ResourceColumns Columns(const Resource& r) {
  return {r.provider, r.account, KindName(r.kind), r.id, r.name, r.owner, r.base_model, LifecycleName(r.lifecycle),
          r.native_status, r.created_at};
}

}  // namespace

TEST_CASE("stored resources: only non-defaults are written, and full rows from before read the same") {
  // The codec the store uses: the resources table's columns plus `data`.
  // Defaults only, apart from identity (all in columns): an empty object.
  Resource bare{.kind = Kind::kBasetenRun, .lifecycle = Lifecycle::kStopped, .provider = "bt", .account = "bt", .id = "r1"};
  const std::string bare_json = store::ResourceDataJson(bare);
  CHECK(bare_json == "{}");
  auto back = store::ResourceFromRow(Columns(bare), bare_json);
  REQUIRE(back.ok());
  CheckSame(bare, *back);
  CHECK(back->checkpoints->reachable);  // true unless written otherwise

  // Every field away from its default.
  Resource full = bare;
  full.provider_type = ProviderType::kFireworks;
  full.kind = Kind::kFireworksTrainingSession;
  full.name = "n";
  full.owner = "o@example.com";
  full.team = "t";
  full.base_model = "m";
  full.native_status = "RUNNING";
  full.lifecycle = Lifecycle::kRunning;
  full.transitional = true;
  full.mode = Mode::kDedicated;
  full.availability = "spot";
  full.billing = Billing{.meter = Meter::kGpuTime, .gpus_per_replica = 8, .replicas = 2, .billable = true,
                         .gpu_type = "H100", .price_per_gpu_hour = Money::FromMicros(6'500'000)};
  full.created_at = FromUnixMicros(1'000'000);
  full.checkpoints = Checkpoints{.known = true, .reachable = false, .syncing = true, .newest_promotable_promoted = true,
                                 .count = 3, .promotable = 2, .unpromoted = 1, .newest_at = FromUnixMicros(2'000'000),
                                 .newest_promotable = "c3",
                                 .newest_promotable_name = "final", .newest_promotable_at = FromUnixMicros(3'000'000)};
  full.labels = {{"team", "rl"}};
  full.flags = {Flag::kRollout, Flag::kSpot};
  full.parent_id = "p";
  full.native_timeout = std::chrono::minutes(15);
  full.refs = {{"deployment_id", "d"}};
  auto full_back = store::ResourceFromRow(Columns(full), store::ResourceDataJson(full));
  REQUIRE(full_back.ok());
  CheckSame(full, *full_back);
  CHECK_FALSE(full_back->checkpoints->reachable);

  // A Fireworks object's own resource name is left out when it is the one its kind,
  // account and id make, and reads back as the adapter lists it: without one. Any other
  // name, and none at all, stay as they are.
  Resource fw{.provider_type = ProviderType::kFireworks, .kind = Kind::kFireworksDeployment,
              .lifecycle = Lifecycle::kRunning, .provider = "fw", .account = "acme", .id = "dep-1"};
  fw.refs = {{"name", "accounts/acme/deployments/dep-1"}, {"min_replica_count", "0"}};
  const std::string fw_json = store::ResourceDataJson(fw);
  CHECK(fw_json.find("accounts/acme") == std::string::npos);
  auto fw_back = store::ResourceFromRow(Columns(fw), fw_json);
  REQUIRE(fw_back.ok());
  CHECK_FALSE(fw_back->refs.contains("name"));
  CHECK(fw_back->refs.at("min_replica_count") == "0");
  fw.refs = {{"min_replica_count", "0"}};
  CheckSame(fw, *fw_back);
  // A row from before, which kept no name because it was this one, reads the same.
  auto older = store::ResourceFromRow(Columns(fw), R"({"refs":{"min_replica_count":"0"}})");
  REQUIRE(older.ok());
  CheckSame(fw, *older);
  for (const std::map<std::string, std::string>& refs :
       {std::map<std::string, std::string>{{"name", "accounts/other/deployments/dep-1"}},
        std::map<std::string, std::string>{}}) {
    fw.refs.assign(refs);
    auto kept = store::ResourceFromRow(Columns(fw), store::ResourceDataJson(fw));
    REQUIRE(kept.ok());
    CheckSame(fw, *kept);
  }

  // A row as loopwarden wrote it before schema 2's compact rows and schema 5's columns
  // (every key in `data`, defaults included) reads as before; its columns agree.
  const std::string old_row =
      R"({"provider_type":"baseten","provider":"bt0","account":"bt0","kind":"baseten.run","id":"r53cb9f0",)"
      R"("name":"eval-53cb","owner":"dara@example.com","team":"","base_model":"Qwen/Qwen3-8B",)"
      R"("native_status":"INACTIVE/SCALED_TO_ZERO","lifecycle":"stopped","transitional":false,"mode":"dedicated",)"
      R"("availability":"dedicated","billing":{"meter":"gpu_time","gpu_type":"H100","gpus_per_replica":4,"replicas":1,)"
      R"("billable":false,"price_per_gpu_hour":6499950},"created_at":1796100416076000,"checkpoints":{"known":false,)"
      R"("reachable":true,"count":0,"newest_at":null,"promotable":0,"unpromoted":0,"syncing":false,"newest_promotable":"",)"
      R"("newest_promotable_name":"","newest_promotable_at":null,"newest_promotable_promoted":false},"labels":{},)"
      R"("flags":[],"parent_id":"ldc5841","tokens":{},"native_timeout_us":900000000,"refs":{"deployment_id":"ldc5841"}})";
  auto old = store::ResourceFromJson(old_row);
  REQUIRE(old.ok());
  auto old_stored = store::ResourceFromRow(Columns(*old), old_row);
  REQUIRE(old_stored.ok());
  CheckSame(*old, *old_stored);
  CHECK(old_stored->name == "eval-53cb");
  CHECK(old_stored->billing.gpus_per_replica == 4);
  CHECK(old_stored->parent_id == "ldc5841");
  const std::string rewritten = store::ResourceDataJson(*old_stored);
  CHECK(rewritten.size() * 3 < old_row.size());  // about 250 bytes instead of 828
  auto again = store::ResourceFromRow(Columns(*old_stored), rewritten);
  REQUIRE(again.ok());
  CheckSame(*old, *again);
}

TEST_CASE("a stored resource keeps identity and names in columns only, and reads back whole") {
  TempDir dir;
  const std::string path = dir.File("cols.db");
  ListedResource r = Run("c1");
  r.team = "rl";
  r.labels = {{"env", "prod"}};
  r.refs = {{"deployment_id", "d1"}};
  {
    auto s = store::Store::Open({.path = path});
    REQUIRE(s.ok());
    auto snap = Snap({r});
    REQUIRE((*s)->Ingest({&snap, 1}, kT0, Prices()).ok());
  }
  {
    auto db = store::Db::Open(path, false, true);
    auto row = (*db)->Prepare("SELECT data, name, owner FROM resources");
    REQUIRE(row->Step().value());
    const std::string data = row->Text(0);
    for (const char* key : {"\"provider\"", "\"account\"", "\"kind\"", "\"id\"", "\"name\"", "\"owner\"",
                            "\"base_model\"", "\"lifecycle\"", "\"native_status\"", "\"created_at\""}) {
      CAPTURE(key);
      CHECK(data.find(key) == std::string::npos);
    }
    CHECK(row->Text(1) == "run-c1");
    CHECK(row->Text(2) == "ana@example.com");
  }
  auto s = store::Store::Open({.path = path});
  REQUIRE(s.ok());
  const auto* st = (*s)->Find(r.Key());
  REQUIRE(st);
  CheckSame(r, st->resource);
  CHECK(st->resource.provider_type == ProviderType::kBaseten);
  CHECK(st->resource.labels == r.labels);
  CHECK(st->fingerprint == store::Fingerprint(r));
}

TEST_CASE("stored resources: provider text that needs escaping is written as JSON and reads back as it was") {
  Resource r{.kind = Kind::kBasetenDeployment, .lifecycle = Lifecycle::kRunning, .provider = "bt", .account = "bt",
             .id = "d1"};
  r.team = "t\"eam";
  r.availability = "back\\slash";
  r.checkpoints.Mutable().newest_promotable = "line\nbreak\ttab\x01";
  r.labels = {{"k\"ey", "caf\xc3\xa9"}, {"plain", ""}};
  r.refs = {{"model_id", "m\\1"}, {"deployment_id", "d1"}};
  r.flags = {Flag::kSpot, Flag::kRollout};
  r.native_timeout = std::chrono::seconds(90);
  const std::string json = store::ResourceDataJson(r);
  // Members in a fixed order, empty objects and default values left out, flags in Flag order.
  CHECK(json ==
        R"({"team":"t\"eam","availability":"back\\slash","checkpoints":{"newest_promotable":"line\nbreak\ttab\u0001"},)"
        R"("labels":{"k\"ey":"café","plain":""},"flags":["rollout","spot"],"native_timeout_us":90000000,)"
        R"("refs":{"deployment_id":"d1","model_id":"m\\1"}})");
  auto back = store::ResourceFromRow(Columns(r), json);
  REQUIRE(back.ok());
  CheckSame(r, *back);
  CHECK(back->team == r.team);
  CHECK(back->checkpoints->newest_promotable == r.checkpoints->newest_promotable);
  CHECK(back->labels.at("k\"ey") == "caf\xc3\xa9");
  CHECK(back->refs.at("model_id") == "m\\1");
  CHECK(back->HasFlag(Flag::kSpot));
  CHECK(back->HasFlag(Flag::kRollout));

  // A Fireworks session as the adapter lists it (no name: its own is the usual one)
  // writes no refs and reads none back, as does one with exactly that name; a row from
  // before that wrote null for "none" reads the same.
  Resource fw{.provider_type = ProviderType::kFireworks, .kind = Kind::kFireworksTrainingSession,
              .lifecycle = Lifecycle::kRunning, .provider = "fw", .account = "acme", .id = "ts-1"};
  CHECK(store::ResourceDataJson(fw) == "{}");
  for (std::string_view row : {std::string_view("{}"), std::string_view(R"({"refs":{"name":null}})")}) {
    auto none = store::ResourceFromRow(Columns(fw), row);
    REQUIRE(none.ok());
    CHECK(none->refs.empty());
  }
  fw.refs = {{"name", "accounts/acme/trainingSessions/ts-1"}};
  CHECK(store::ResourceDataJson(fw) == "{}");
  fw.refs = {{"name", "accounts/acme/trainingSessions/ts-10"}};  // another object's: kept
  CHECK(store::ResourceDataJson(fw) == R"({"refs":{"name":"accounts/acme/trainingSessions/ts-10"}})");
}
