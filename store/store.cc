#include "store/store.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <type_traits>

#include <sys/stat.h>

#include "core/log.h"
#include "core/secrets.h"
#include "store/schema.h"
#include "store/period_spend.h"
#include "store/postgres.h"
#include "store/sqlite.h"

#include <sqlite3.h>

namespace loopwarden::store {

namespace {

constexpr int64_t kUsPerHour = 3'600'000'000;
// The page size of a database Open creates (see Open).
constexpr int64_t kNewPageSize = 8192;

std::string DirectoryOf(const std::string& path) {
  const auto dir = std::filesystem::path(path).parent_path();
  return dir.empty() ? std::string(".") : dir.string();
}

std::string Hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

uint64_t FromHex(const std::string& s) { return std::strtoull(s.c_str(), nullptr, 16); }

Money GpuCost(Money unit_price, int64_t gpus, Duration d) {
  if (d <= Duration::zero() || gpus <= 0) return Money();
  return ScalePrice(unit_price, gpus * d.count(), kUsPerHour);
}

std::optional<int64_t> Us(const std::optional<Time>& t) {
  if (!t) return std::nullopt;
  return ToUnixMicros(*t);
}
std::optional<Time> FromUs(std::optional<int64_t> v) {
  if (!v) return std::nullopt;
  return FromUnixMicros(*v);
}

// Every table of `from` into the same, empty tables of `to`, parents first: plan's
// scratch copy of a PostgreSQL store. Columns are matched by name.
Status CopyTables(Db& from, Db& to) {
  static constexpr const char* kTables[] = {"resources", "transitions", "activity", "ledger", "marks",
                                            "exemptions", "intents", "notifications", "counters", "ledger_hourly",
                                            "ledger_daily", "spend_totals", "transitions_daily", "meta", "details",
                                            "usage_days"};
  return InTransaction(to, [&]() -> Status {
    for (const char* table : kTables) {
      LW_ASSIGN_OR_RETURN(Stmt rows, from.Prepare(std::string("SELECT * FROM ") + table));
      std::optional<Stmt> insert;
      for (;;) {
        LW_ASSIGN_OR_RETURN(bool row, rows.Step());
        if (!row) break;
        if (!insert) {
          std::string cols, marks;
          for (int c = 0; c < rows.Columns(); ++c) {
            cols += (c ? ", " : "") + rows.ColumnName(c);
            marks += (c ? ", ?" : "?") + std::to_string(c + 1);
          }
          LW_ASSIGN_OR_RETURN(Stmt st, to.Prepare(std::string("INSERT INTO ") + table + " (" + cols + ") VALUES (" +
                                                  marks + ")"));
          insert.emplace(std::move(st));
        }
        for (int c = 0; c < rows.Columns(); ++c) {
          if (rows.IsNull(c)) {
            insert->BindNull(c + 1);
          } else {
            insert->Bind(c + 1, rows.TextView(c));
          }
        }
        LW_RETURN_IF_ERROR(insert->Run());
      }
    }
    return Status::Ok();
  });
}

}  // namespace

Money ResourceState::SpendAt(Time now) const {
  Money m = closed_spend;
  if (open_gpu) m += GpuCost(open_gpu->unit_price, open_gpu->gpus, now - open_gpu->start);
  return m;
}

Money ResourceState::IdleSpendAt(Time now) const {
  Money m = idle_spend_closed;
  if (open_gpu && open_gpu->idle) m += GpuCost(open_gpu->unit_price, open_gpu->gpus, now - open_gpu->start);
  return m;
}

Money ResourceState::BurnPerHour() const {
  if (!open_gpu) return Money();
  return ScalePrice(open_gpu->unit_price, open_gpu->gpus, 1);
}

namespace {

template <class Map, class Key>
const typename Map::mapped_type* Find(const Map& m, const Key& k) {
  auto it = m.find(k);
  return it == m.end() ? nullptr : &it->second;
}

std::optional<Money> MeterPrice(const std::map<std::string, std::map<std::string, Money>>& card,
                                const std::string& model, const std::string& meter) {
  const auto* meters = Find(card, model);
  if (!meters) return std::nullopt;
  const Money* p = Find(*meters, meter);
  return p ? std::optional<Money>(*p) : std::nullopt;
}

}  // namespace

std::optional<Money> PriceBook::GpuHour(const Resource& r) const {
  if (r.billing.price_per_gpu_hour) return r.billing.price_per_gpu_hour;
  if (const Money* p = Find(gpu_hour, r.billing.gpu_type)) return *p;
  if (const auto* card = Find(list_gpu_hour, r.provider_type)) {
    if (const Money* p = Find(*card, r.billing.gpu_type)) return *p;
  }
  return std::nullopt;
}

std::optional<Money> PriceBook::TokenPrice(const Resource& r, const std::string& meter) const {
  if (auto p = MeterPrice(tokens_per_million, r.base_model, meter)) return p;
  if (const auto* card = Find(list_tokens_per_million, r.provider_type)) return MeterPrice(*card, r.base_model, meter);
  return std::nullopt;
}

std::optional<Grouping> ParseGroupBy(std::string_view s) {
  if (s == "provider") return Grouping{GroupBy::kProvider, ""};
  if (s == "account") return Grouping{GroupBy::kAccount, ""};
  if (s == "kind") return Grouping{GroupBy::kKind, ""};
  if (s == "model") return Grouping{GroupBy::kModel, ""};
  if (s == "owner") return Grouping{GroupBy::kOwner, ""};
  if (s == "team") return Grouping{GroupBy::kTeam, ""};
  if (s.starts_with("label:") && s.size() > 6) return Grouping{GroupBy::kLabel, std::string(s.substr(6))};
  return std::nullopt;
}

Store::Store(std::unique_ptr<Db> db, std::string path, bool read_only)
    : db_(std::move(db)), path_(std::move(path)), read_only_(read_only) {}

Store::~Store() = default;

Result<std::unique_ptr<Store>> Store::Open(const StoreOptions& options) {
  if (pg::IsDsn(options.path)) return OpenPostgres(options);
  const std::string& path = options.path;
  std::error_code fec;
  const bool exists = std::filesystem::exists(path, fec);
  if (!exists && (options.read_only || !options.create)) {
    return NotFound("database " + path + " does not exist (loopwarden run creates it)");
  }
  if (!exists) {
    // Fail early and clearly when the directory is missing or unwritable.
    const auto dir = std::filesystem::path(path).parent_path();
    if (!dir.empty() && !std::filesystem::is_directory(dir, fec)) {
      return NotFound("cannot create database " + path + ": directory " + dir.string() + " does not exist");
    }
  }
  // An empty file is not a new database: something truncated it (or a crash hit its
  // creation), and treating it as new would forget every intent and mark it held.
  if (exists && std::filesystem::is_regular_file(path, fec) && std::filesystem::file_size(path, fec) == 0 && !fec) {
    return DataLoss("database " + path + " is empty (0 bytes), not a loopwarden database; it was left untouched. "
                    "Restore a backup, or remove it to start afresh");
  }
  // One writer per database, decided before anything (a migration, say) is written.
  std::optional<InstanceLock> lock;
  if (!options.read_only) {
    LW_ASSIGN_OR_RETURN(InstanceLock l, InstanceLock::Acquire(path));
    lock.emplace(std::move(l));
  }
  LW_ASSIGN_OR_RETURN(std::unique_ptr<Db> db, Db::Open(path, options.create, options.read_only));
  // Read the version before changing anything: a newer or damaged file is never written.
  Result<int64_t> version = db->QueryInt("PRAGMA user_version");
  if (!version.ok() && version.status().code() == StatusCode::kPermissionDenied) {
    // Not damage: in WAL mode even a reader writes the -shm index beside the file.
    return PermissionDenied("cannot read database " + path + " as this user: " + version.status().message() +
                            ". Readers need write access to its directory " + DirectoryOf(path) +
                            " (SQLite's WAL index lives there): run as the user that runs loopwarden");
  }
  if (!version.ok()) {
    return DataLoss("database " + path + " is not a loopwarden database or is damaged (" + version.status().message() +
                    "); it was left untouched");
  }
  if (*version > kSchemaVersion) {
    return FailedPrecondition("database " + path + " was written by a newer loopwarden (schema version " +
                              std::to_string(*version) + "; this one knows up to " + std::to_string(kSchemaVersion) +
                              "); refusing to open it, and nothing was changed");
  }
  LW_RETURN_IF_ERROR(db->Exec("PRAGMA busy_timeout = " +
                              std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(options.busy_timeout).count())));
  if (exists) {
    // integrity_check, not quick_check: only it compares every index with its table, and a
    // damaged index would otherwise be written through (about a second per 100 MB).
    auto check = db->Prepare("PRAGMA integrity_check(1)");
    std::string verdict = "unreadable";
    if (check.ok() && check->Step().value_or(false)) verdict = check->Text(0);
    if (verdict != "ok") {
      return DataLoss("database " + path + " is damaged (" + verdict +
                      "); loopwarden will not write to it. Move it aside to start afresh, or restore a backup");
    }
  }
  if (!options.read_only) {
    if (!exists) {
      // Only a new file can take these. 8 KB pages, not SQLite's 4 KB: the first poll of
      // 100k resources writes 425,000 rows in one transaction, and with half as many
      // pages to read, log and copy back it took about 8 % less CPU (in the kernel:
      // instructions fell under 1 %) and left a file 2 % smaller (bench/README.md). The
      // page cache's size is set in bytes, so memory is the same. A database made with
      // 4 KB pages keeps them.
      LW_RETURN_IF_ERROR(db->Exec("PRAGMA page_size = " + std::to_string(kNewPageSize)));
      // auto_vacuum lets retention give pages back.
      LW_RETURN_IF_ERROR(db->Exec("PRAGMA auto_vacuum = INCREMENTAL"));
    }
    LW_RETURN_IF_ERROR(db->Exec("PRAGMA journal_mode = WAL"));
    // A big transaction (the first poll of a large fleet) grows the WAL to its size, and
    // SQLite keeps that file however little later cycles write: cut back to 1 MB at
    // each checkpoint that empties it, and checkpoint at 1 MB (not SQLite's 1,000
    // pages), so the WAL beside a quiet database stays about 1 MB instead of 4 or 8.
    LW_ASSIGN_OR_RETURN(const int64_t page_size, db->QueryInt("PRAGMA page_size"));
    const int64_t pages_per_mb = (1 << 20) / std::max<int64_t>(page_size, 512);
    LW_RETURN_IF_ERROR(db->Exec("PRAGMA wal_autocheckpoint = " + std::to_string(pages_per_mb)));
    LW_RETURN_IF_ERROR(db->Exec("PRAGMA journal_size_limit = 1048576"));
    LW_RETURN_IF_ERROR(db->Exec("PRAGMA synchronous = NORMAL"));
    LW_RETURN_IF_ERROR(db->Exec("PRAGMA foreign_keys = ON"));
    LW_RETURN_IF_ERROR(Migrate(*db));
  } else if (*version < kSchemaVersion) {
    return FailedPrecondition("database " + path + " is at schema version " + std::to_string(*version) +
                              "; start loopwarden run once to migrate it to version " + std::to_string(kSchemaVersion));
  }
  std::unique_ptr<Store> store(new Store(std::move(db), path, options.read_only));
  store->lock_ = std::move(lock);
  if (struct stat st {}; ::stat(path.c_str(), &st) == 0) {
    store->device_ = static_cast<uint64_t>(st.st_dev);
    store->inode_ = static_cast<uint64_t>(st.st_ino);
  }
  LW_RETURN_IF_ERROR(store->Load());
  return store;
}

Result<std::unique_ptr<Store>> Store::OpenPostgres(const StoreOptions& options) {
  LW_ASSIGN_OR_RETURN(std::unique_ptr<Db> db, Db::OpenPostgres(options.path));
  pg::Conn& conn = *db->postgres();
  if (!options.read_only) {
    if (!options.fence) {
      return FailedPrecondition("a writer on PostgreSQL (" + db->path() +
                                ") must hold the leader lease; loopwarden run takes it");
    }
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(options.idle_transaction_timeout).count();
    LW_RETURN_IF_ERROR(conn.Exec("SET idle_in_transaction_session_timeout = " + std::to_string(std::max<int64_t>(ms, 1))));
    conn.SetFence(*options.fence, options.fence_lost);
  }
  LW_RETURN_IF_ERROR(pg::EnsureSchema(conn, kSchemaVersion, options.read_only));
  const std::string name = db->path();
  std::unique_ptr<Store> store(new Store(std::move(db), name, options.read_only));
  LW_RETURN_IF_ERROR(store->Load());
  return store;
}

bool Store::postgres() const { return db_->postgres() != nullptr; }

Result<Duration> Store::LeaseLeft() {
  pg::Conn* conn = db_->postgres();
  if (conn == nullptr || !conn->fence()) return Duration::max();
  LW_ASSIGN_OR_RETURN(double left, conn->LeaseSecondsLeft());
  return Duration(static_cast<int64_t>(left * 1e6));
}

Status Store::CheckFile() const {
  if (db_->postgres()) return Status::Ok();  // no file: the server keeps it
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) {
    return DataLoss("database " + path_ + " was deleted while loopwarden was running; restart it (nothing more is "
                    "written to the unlinked file)");
  }
  if (inode_ != 0 && (static_cast<uint64_t>(st.st_ino) != inode_ || static_cast<uint64_t>(st.st_dev) != device_)) {
    return DataLoss("database " + path_ + " was replaced by another file while loopwarden was running; restart it");
  }
  return Status::Ok();
}

Result<std::unique_ptr<Store>> Store::OpenCopy(const std::string& source, const std::string& scratch) {
  std::error_code ec;
  std::filesystem::remove(scratch, ec);
  std::filesystem::remove(scratch + "-wal", ec);
  std::filesystem::remove(scratch + "-shm", ec);
  if (pg::IsDsn(source)) {
    LW_ASSIGN_OR_RETURN(std::unique_ptr<Store> copy, Open({.path = scratch}));
    LW_ASSIGN_OR_RETURN(std::unique_ptr<Db> src, Db::OpenPostgres(source));
    LW_RETURN_IF_ERROR(pg::EnsureSchema(*src->postgres(), kSchemaVersion, true));
    LW_RETURN_IF_ERROR(CopyTables(*src, *copy->db_).WithContext("copying " + src->path()));
    LW_RETURN_IF_ERROR(copy->Load());
    return copy;
  }
  if (std::filesystem::exists(source, ec)) {
    LW_ASSIGN_OR_RETURN(std::unique_ptr<Db> src, Db::Open(source, false, true));
    LW_ASSIGN_OR_RETURN(std::unique_ptr<Db> dst, Db::Open(scratch, true, false));
    sqlite3_backup* b = sqlite3_backup_init(dst->raw(), "main", src->raw(), "main");
    if (b == nullptr) return dst->Error(1, "copying " + source);
    const int rc = sqlite3_backup_step(b, -1);
    sqlite3_backup_finish(b);
    if (rc != SQLITE_DONE) return SqliteStatus(rc, "copying " + source, "backup failed", source);
  }
  return Open({.path = scratch});
}

Status Store::Load() {
  period_spend_.reset();
  // Child tables name their resource by resources.id.
  std::unordered_map<int64_t, ResourceState*> by_rid;
  auto state_of = [&](int64_t rid) -> ResourceState* {
    auto it = by_rid.find(rid);
    return it == by_rid.end() ? nullptr : it->second;
  };
  {
    LW_ASSIGN_OR_RETURN(Stmt st, db_->Prepare(
        "SELECT key, data, first_seen, updated_at, deleted_at, fingerprint, provider, account, kind, native_id, name, "
        "owner, base_model, lifecycle, native_status, created_at, id FROM resources"));
    while (true) {
      LW_ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      const std::string provider = st.Text(6), account = st.Text(7), kind = st.Text(8), id = st.Text(9),
                        name = st.Text(10), owner = st.Text(11), base_model = st.Text(12), lifecycle = st.Text(13),
                        native_status = st.Text(14);
      Result<Resource> r = ResourceFromRow({provider, account, kind, id, name, owner, base_model, lifecycle,
                                            native_status, FromUs(st.OptInt(15))},
                                           st.Text(1));
      if (!r.ok()) return DataLoss("resource " + st.Text(0) + " in " + path_ + ": " + r.status().message());
      ResourceState s;
      s.resource = std::move(*r);
      s.first_seen = FromUnixMicros(st.Int(2));
      s.updated_at = FromUnixMicros(st.Int(3));
      s.deleted_at = FromUs(st.OptInt(4));
      s.fingerprint = FromHex(st.Text(5));
      s.row_id = st.Int(16);
      // The set finds a resource by the key its parts make; the ledger and marks name it
      // by the stored key. They were always written together.
      if (!StateKeyEq{}(st.TextView(0), s)) {
        return DataLoss("resource " + st.Text(0) + " in " + path_ + " has provider, kind and id that make another key (" +
                        s.resource.Key() + ")");
      }
      auto [it, inserted] = states_.insert(std::move(s));
      if (!inserted) return DataLoss("resource " + st.Text(0) + " in " + path_ + " is stored twice");
      by_rid.emplace(it->row_id, &MutableState(*it));
    }
  }
  {
    LW_ASSIGN_OR_RETURN(Stmt st, db_->Prepare(
        "SELECT rid, known, traffic_known, fingerprint, last_active_at, last_traffic_at, observed_since FROM activity"));
    while (true) {
      LW_ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      ResourceState* s = state_of(st.Int(0));
      if (!s) continue;
      s->activity_known = st.Int(1) != 0;
      s->traffic_known = st.Int(2) != 0;
      s->activity_fingerprint = StoredCountersFingerprint(st.Text(3));
      s->last_active_at = FromUs(st.OptInt(4));
      s->last_traffic_at = FromUs(st.OptInt(5));
      s->observed_since = FromUs(st.OptInt(6));
    }
  }
  {
    LW_ASSIGN_OR_RETURN(Stmt st, db_->Prepare("SELECT rid, meter, value FROM counters"));
    while (true) {
      LW_ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      if (ResourceState* s = state_of(st.Int(0))) s->counters[st.Text(1)] = st.Int(2);
    }
  }
  {
    LW_ASSIGN_OR_RETURN(Stmt st, db_->Prepare(
        "SELECT rid, SUM(cost), SUM(CASE WHEN idle <> 0 THEN cost ELSE 0 END) FROM ledger "
        "WHERE end_at IS NOT NULL GROUP BY rid"));
    while (true) {
      LW_ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      ResourceState* s = state_of(st.Int(0));
      if (!s) continue;
      s->closed_spend += Money::FromMicros(st.Int(1));
      s->idle_spend_closed += Money::FromMicros(st.Int(2));
    }
  }
  {
    LW_ASSIGN_OR_RETURN(Stmt st, db_->Prepare(
        "SELECT resource, SUM(cost), SUM(idle_cost) FROM (SELECT resource, cost, idle_cost FROM ledger_hourly "
        "UNION ALL SELECT resource, cost, idle_cost FROM spend_totals) AS rolled GROUP BY resource"));
    while (true) {
      LW_ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      auto it = states_.find(st.TextView(0));
      if (it == states_.end()) continue;
      ResourceState& rolled = MutableState(*it);
      rolled.closed_spend += Money::FromMicros(st.Int(1));
      rolled.idle_spend_closed += Money::FromMicros(st.Int(2));
    }
  }
  {
    LW_ASSIGN_OR_RETURN(Stmt st, db_->Prepare(
        "SELECT id, rid, start_at, quantity_rate, unit_price, idle FROM ledger "
        "WHERE end_at IS NULL AND meter = 'gpu_seconds'"));
    while (true) {
      LW_ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      ResourceState* s = state_of(st.Int(1));
      if (!s) continue;
      s->open_gpu = ResourceState::OpenInterval{st.Int(0), FromUnixMicros(st.Int(2)), Money::FromMicros(st.Int(4)),
                                                static_cast<int32_t>(st.Int(3)), st.Int(5) != 0};
      // Billing GPUs at price 0 means no price was known when the interval opened.
      s->unpriced = st.Int(4) == 0 && st.Int(3) > 0;
    }
  }
  {
    LW_ASSIGN_OR_RETURN(Stmt st, db_->Prepare(
        "SELECT policy, resource, marked_at, act_after, notified_at, reason, action FROM marks"));
    while (true) {
      LW_ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      Mark m{st.Text(0), st.Text(1), FromUnixMicros(st.Int(2)), FromUnixMicros(st.Int(3)),
             FromUs(st.OptInt(4)), st.Text(5), st.Text(6)};
      marks_[{m.policy, m.resource}] = m;
    }
  }
  {
    LW_ASSIGN_OR_RETURN(Stmt st, db_->Prepare("SELECT k, v FROM meta WHERE k LIKE 'observed_until%'"));
    while (true) {
      LW_ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      const std::string k = st.Text(0);
      const size_t a = k.find('\t'), b = a == std::string::npos ? a : k.find('\t', a + 1);
      char* end = nullptr;
      const std::string v = st.Text(1);
      const long long us = std::strtoll(v.c_str(), &end, 10);
      // A malformed entry only loses the bound (open intervals then run to "now").
      if (b == std::string::npos || end == v.c_str() || *end != '\0') continue;
      observed_until_[{k.substr(a + 1, b - a - 1), k.substr(b + 1)}] = FromUnixMicros(us);
    }
  }
  return Status::Ok();
}

std::string Store::ObservedKey(const std::string& provider, const std::string& account) {
  return "observed_until\t" + provider + "\t" + account;
}

Time Store::SpendHorizon(const ResourceState& st, Time now) const {
  auto it = observed_until_.find({st.resource.provider, st.resource.account});
  return it == observed_until_.end() ? now : std::min(now, it->second);
}

Result<Stmt*> Store::Cached(std::string_view sql) {
  auto it = stmts_.find(sql);
  if (it != stmts_.end()) {
    it->second->Reset();
    return it->second.get();
  }
  LW_ASSIGN_OR_RETURN(Stmt st, db_->Prepare(sql));
  auto owned = std::make_unique<Stmt>(std::move(st));
  Stmt* raw = owned.get();
  stmts_.emplace(std::string(sql), std::move(owned));
  return raw;
}

Result<Stmt*> Store::CachedLiteral(std::string_view sql) {
  if (auto it = stmts_by_address_.find(sql.data()); it != stmts_by_address_.end() && it->second.text == sql) {
    it->second.stmt->Reset();
    return it->second.stmt;
  }
  LW_ASSIGN_OR_RETURN(Stmt * st, Cached(sql));
  stmts_by_address_[sql.data()] = {stmts_.find(sql)->first, st};
  return st;
}

const ResourceState* Store::Find(const std::string& key) const {
  auto it = states_.find(std::string_view(key));
  return it == states_.end() ? nullptr : &*it;
}

size_t StateKeyHash::operator()(std::string_view key) const { return std::hash<std::string_view>{}(key); }

size_t StateKeyHash::operator()(const ResourceState& st) const {
  // The key's text in a buffer kept by the thread: hashed as a lookup by text is.
  thread_local std::string key;
  ResourceKeyInto(key, st.resource.provider.view(), st.resource.kind, st.resource.id);
  return (*this)(std::string_view(key));
}

bool StateKeyEq::operator()(const ResourceState& a, const ResourceState& b) const noexcept {
  return a.resource.kind == b.resource.kind && a.resource.id == b.resource.id &&
         a.resource.provider.view() == b.resource.provider.view();
}

bool StateKeyEq::operator()(std::string_view key, const ResourceState& st) const noexcept {
  // "provider/kind/id", compared part by part.
  const Resource& r = st.resource;
  const std::string_view provider = r.provider.view(), kind = KindName(r.kind), id = r.id;
  if (key.size() != provider.size() + kind.size() + id.size() + 2) return false;
  return key.substr(0, provider.size()) == provider && key[provider.size()] == '/' &&
         key.substr(provider.size() + 1, kind.size()) == kind && key[provider.size() + 1 + kind.size()] == '/' &&
         key.substr(provider.size() + kind.size() + 2) == id;
}

Result<IngestStats> Store::Ingest(std::span<const Snapshot> snapshots, Time now, const PriceBook& prices,
                                  const IngestOptions& options) {
  return IngestWith(snapshots, now, [&](IngestStats& stats) -> Status {
    for (const Snapshot& snap : snapshots) {
      IngestCursor cursor;
      for (const ListedResource& r : snap.resources) {
        LW_RETURN_IF_ERROR(IngestResource(cursor, r, now, prices, options, stats));
      }
    }
    return Status::Ok();
  });
}

Result<IngestStats> Store::Ingest(Snapshot&& snapshot, Time now, const PriceBook& prices, const IngestOptions& options) {
  return IngestWith(std::span<const Snapshot>(&snapshot, 1), now, [&](IngestStats& stats) -> Status {
    IngestCursor cursor;
    for (ListedResource& r : snapshot.resources) {
      LW_RETURN_IF_ERROR(IngestResource(cursor, r, now, prices, options, stats));
    }
    return Status::Ok();
  });
}

Result<IngestStats> Store::IngestWith(std::span<const Snapshot> snapshots, Time now,
                                      const std::function<Status(IngestStats&)>& record) {
  LW_RETURN_IF_ERROR(CanIngest());
  IngestStats stats;
  Status s = BeginIngest();
  if (s.ok()) s = record(stats);
  return EndIngest(std::move(s), snapshots, now, stats);
}

Status Store::CanIngest() const {
  if (read_only_) return FailedPrecondition("store opened read-only");
  if (listing_open_) return FailedPrecondition("another account's listing is being recorded");
  return Status::Ok();
}

Status Store::BeginIngest() {
  ++ingest_serial_;
  return db_->Exec("BEGIN IMMEDIATE");
}

Result<IngestStats> Store::EndIngest(Status s, std::span<const Snapshot> snapshots, Time now,
                                     const IngestStats& recorded) {
  IngestStats stats = recorded;
  if (s.ok()) {
    s = [&]() -> Status {
      for (const Snapshot& snap : snapshots) {
        if (!snap.partial_update) {
          observed_until_[{snap.provider, snap.account}] = now;
          LW_RETURN_IF_ERROR(PutMeta(ObservedKey(snap.provider, snap.account), std::to_string(ToUnixMicros(now))));
        }
      }
      LW_RETURN_IF_ERROR(IngestMissing(snapshots, now, stats));
      return FlushTransitions();
    }();
  }
  s = EndTransaction(*db_, std::move(s));
  // Rolled back, or written: nothing of this transaction is left queued.
  pending_transitions_.clear();
  if (!s.ok()) {
    // The transaction rolled back; reload so memory never runs ahead of the file (Load
    // drops the running spend totals, which took this transaction's rows).
    states_.clear();
    by_account_stale_ = true;
    marks_.clear();
    observed_until_.clear();
    Status reload = Load();
    if (!reload.ok()) return reload.WithContext("reloading after a failed poll record");
    return s.WithContext("recording the poll");
  }
  return stats;
}

std::unique_ptr<Store::Listing> Store::BeginListing(std::string provider, std::string account, Time now,
                                                    const PriceBook& prices, const IngestOptions& options) {
  return std::unique_ptr<Listing>(new Listing(*this, std::move(provider), std::move(account), now, prices, options));
}

Store::Listing::Listing(Store& store, std::string provider, std::string account, Time now, const PriceBook& prices,
                        const IngestOptions& options)
    : store_(store),
      account_{.provider = std::move(provider), .account = std::move(account), .complete = true,
               .partial_update = false, .resources = {}},
      now_(now),
      prices_(prices),
      options_(options) {}

Store::Listing::~Listing() {
  if (!begun_ || finished_) return;
  // Only an exception between the first Add and Finish gets here: undo what was added.
  store_.listing_open_ = false;
  auto undone = store_.EndIngest(Cancelled("the listing was not finished"), std::span<const Snapshot>(&account_, 1),
                                 now_, stats_);
  Log().Warn("an unfinished listing was rolled back", {{"provider", account_.provider}, {"err", undone.status()}});
}

Status Store::Listing::Open() {
  LW_RETURN_IF_ERROR(store_.CanIngest());
  begun_ = true;
  store_.listing_open_ = true;
  return store_.BeginIngest();
}

void Store::Listing::Add(ListedResource&& r) {
  if (!status_.ok() || finished_) return;
  // The transaction is opened here, not when the listing began: by now the adapter has
  // made all its requests, and nothing else runs before Finish.
  if (!begun_ && !(status_ = Open()).ok()) return;
  status_ = store_.IngestResource(cursor_, r, now_, prices_, options_, stats_);
}

Result<IngestStats> Store::Listing::Finish(bool complete) {
  if (finished_) return FailedPrecondition("the listing of " + account_.provider + " was already finished");
  finished_ = true;
  // An empty listing opens its transaction here: it still says what is gone.
  if (!begun_ && status_.ok()) status_ = Open();
  if (!begun_) return status_.WithContext("recording the poll");  // refused: nothing was written
  store_.listing_open_ = false;
  account_.complete = complete;
  return store_.EndIngest(std::move(status_), std::span<const Snapshot>(&account_, 1), now_, stats_);
}

Status Store::WriteResource(ResourceState& st, bool insert, Time now) {
  const Resource& r = st.resource;
  const std::string key = r.Key();
  // Provider strings can carry anything; a registered secret never reaches the file.
  const std::string data = Redact(ResourceDataJson(r));
  LW_ASSIGN_OR_RETURN(Stmt* q_ptr,
                      insert ? Cached("INSERT INTO resources (provider, account, kind, native_id, name, owner, "
                                      "base_model, lifecycle, native_status, created_at, first_seen, updated_at, "
                                      "deleted_at, fingerprint, data, key) "
                                      "VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16)")
                             : Cached("UPDATE resources SET provider=?1, account=?2, kind=?3, native_id=?4, name=?5, "
                                      "owner=?6, base_model=?7, lifecycle=?8, native_status=?9, created_at=?10, "
                                      "first_seen=?11, updated_at=?12, deleted_at=?13, fingerprint=?14, data=?15 "
                                      "WHERE id=?16"));
  Stmt& q = *q_ptr;
  // Bound as views (no copies): every string here lives until Run() below.
  const std::string name = Redact(r.name), owner = Redact(r.owner), base_model = Redact(r.base_model);
  const std::string native_status = Redact(r.native_status), fingerprint = Hex(st.fingerprint);
  q.BindView(1, r.provider.view()).BindView(2, r.account.view()).BindView(3, KindName(r.kind)).BindView(4, r.id.view());
  q.BindView(5, name).BindView(6, owner).BindView(7, base_model).BindView(8, LifecycleName(r.lifecycle));
  q.BindView(9, native_status).Bind(10, Us(r.created_at));
  q.Bind(11, ToUnixMicros(st.first_seen)).Bind(12, ToUnixMicros(now)).Bind(13, Us(st.deleted_at));
  q.BindView(14, fingerprint).BindView(15, data);
  if (insert) {
    q.BindView(16, key);
  } else {
    q.Bind(16, st.row_id);
  }
  st.updated_at = now;
  LW_RETURN_IF_ERROR(q.Run());
  if (insert) st.row_id = db_->LastInsertRowId();
  return Status::Ok();
}

Status Store::RecordTransition(const ResourceState& st, const Resource* before, const Resource& after,
                               Time now, IngestStats& stats) {
  PendingTransition t{.rid = st.row_id, .at = ToUnixMicros(now), .from_lifecycle = {},
                      .to_lifecycle = LifecycleName(after.lifecycle), .from_status = {},
                      .to_status = after.native_status};
  if (before) {
    t.from_lifecycle = LifecycleName(before->lifecycle);
    t.from_status = before->native_status;
  }
  pending_transitions_.push_back(std::move(t));
  ++stats.transitions;
  return pending_transitions_.size() >= kRowsPerInsert ? FlushTransitions() : Status::Ok();
}

Store::RowsInsert::RowsInsert(std::string_view head, int columns) : columns(columns) {
  auto sql = [&](size_t rows) {
    std::string text(head);
    for (size_t i = 0; i < rows; ++i) {
      const size_t first = static_cast<size_t>(columns) * i;
      text += (i ? ", (?" : "(?") + std::to_string(first + 1);
      for (size_t c = 2; c <= static_cast<size_t>(columns); ++c) text += ", ?" + std::to_string(first + c);
      text += ')';
    }
    return text;
  };
  batch = sql(kRowsPerInsert);
  one = sql(1);
}

Status Store::InsertRows(const RowsInsert& sql, size_t rows, const std::function<void(Stmt&, size_t, int)>& bind) {
  // A full batch in one statement, the few left over one by one: two statements cached,
  // not one for every length.
  for (size_t done = 0; done < rows;) {
    const size_t n = rows - done >= kRowsPerInsert ? kRowsPerInsert : 1;
    LW_ASSIGN_OR_RETURN(Stmt* q, Cached(n == 1 ? sql.one : sql.batch));
    for (size_t i = 0; i < n; ++i) bind(*q, done + i, static_cast<int>(static_cast<size_t>(sql.columns) * i));
    LW_RETURN_IF_ERROR(q->Run());
    done += n;
  }
  return Status::Ok();
}

Status Store::FlushTransitions() {
  static const RowsInsert kSql(
      "INSERT INTO transitions (rid, at, from_lifecycle, to_lifecycle, from_status, to_status) VALUES ", 6);
  // On an error the queue is left for Ingest, which clears it when its transaction
  // rolls back.
  LW_RETURN_IF_ERROR(InsertRows(kSql, pending_transitions_.size(), [&](Stmt& q, size_t row, int c) {
    const PendingTransition& t = pending_transitions_[row];
    // Views: the names are static or held in the queue until the statement runs.
    q.Bind(c + 1, t.rid).Bind(c + 2, t.at).BindView(c + 4, t.to_lifecycle).BindView(c + 6, t.to_status.view());
    if (t.from_lifecycle.empty()) {
      q.BindNull(c + 3).BindNull(c + 5);
    } else {
      q.BindView(c + 3, t.from_lifecycle).BindView(c + 5, t.from_status.view());
    }
  }));
  pending_transitions_.clear();
  return Status::Ok();
}

template <class R>
Status Store::IngestResource(IngestCursor& c, R& r, Time now, const PriceBook& prices, const IngestOptions& options,
                             IngestStats& stats) {
  // A resource the caller gives up (a Listing's, Ingest(Snapshot&&)'s) is moved into the
  // store, which on a 100k fleet's first cycle saved copying every resource.
  constexpr bool kConsume = !std::is_const_v<R>;
  // The account's states in the order they were first stored, which for a listing that
  // keeps its order (both providers' do) is the order its resources arrive in: the
  // state at the hint's cursor is nearly always the one, found without hashing the key
  // or reading a bucket and a node at random (at 300k resources, the set's lookups were
  // 8 % of a steady cycle's time). A hint is only a guess: it is taken when the
  // provider, kind and id match, and the set is asked otherwise.
  if (!c.started) {
    c.started = true;
    c.generation = index_generation_;
    if (!by_account_stale_) {
      auto h = by_account_.find({r.provider.str(), r.account.str()});
      if (h != by_account_.end()) c.hint = &h->second;
    }
  }
  auto hinted = [&]() -> ResourceState* {
    // The indexes are only read while nothing has marked or rebuilt them, so every
    // pointer in the hint is to a live state.
    if (c.hint == nullptr || by_account_stale_ || index_generation_ != c.generation) return nullptr;
    // A few places ahead as well: a resource gone from the listing skips one.
    for (size_t i = c.next; i < c.hint->size() && i < c.next + 4; ++i) {
      ResourceState* st = (*c.hint)[i];
      if (st->resource.id == r.id && st->resource.kind == r.kind && st->resource.provider == r.provider) {
        c.next = i + 1;
        return st;
      }
    }
    return nullptr;
  };
  // Only the Resource part moves (or is copied) into the store: the poll's signals (the
  // ListedResource's own members) stay in `r`, and are folded into the state's fields
  // below.
  auto adopt = [&](ResourceState& st) {
    if constexpr (kConsume) {
      st.resource = std::move(static_cast<Resource&>(r));
    } else {
      st.resource = static_cast<const Resource&>(r);
    }
  };
  const uint64_t fp = Fingerprint(r);
  ResourceState* known = hinted();
  if (known == nullptr) {
    ResourceKeyInto(c.key, r.provider, r.kind, r.id);
    if (auto it = states_.find(std::string_view(c.key)); it != states_.end()) known = &MutableState(*it);
  }
  if (known == nullptr) {
    ResourceState fresh;
    adopt(fresh);
    fresh.first_seen = now;
    fresh.fingerprint = fp;
    auto it = states_.insert(std::move(fresh)).first;
    ResourceState& st = MutableState(*it);
    known = &st;
    Index(st);
    LW_RETURN_IF_ERROR(WriteResource(st, true, now));
    ++stats.resources_inserted;
    LW_RETURN_IF_ERROR(RecordTransition(st, nullptr, st.resource, now, stats));
  } else {
    // The resource moves out and the listed one, with the same key, moves in: no set
    // operation runs between the two.
    ResourceState& st = *known;
    if (fp != st.fingerprint || st.deleted_at) {
      Resource before = std::move(st.resource);
      if (before.account != r.account || before.provider != r.provider) by_account_stale_ = true;
      adopt(st);
      st.fingerprint = fp;
      st.deleted_at.reset();
      LW_RETURN_IF_ERROR(WriteResource(st, false, now));
      ++stats.resources_updated;
      if (before.lifecycle != st.resource.lifecycle || before.native_status != st.resource.native_status) {
        LW_RETURN_IF_ERROR(RecordTransition(st, &before, st.resource, now, stats));
      }
    }
    // Unchanged: nothing to write. Every field the activity and ledger read below is
    // fingerprinted, so the stored resource stands for `r`.
  }
  ResourceState& st = *known;
  st.listed_in = ingest_serial_;
  LW_RETURN_IF_ERROR(UpdateActivity(st, st.resource, r.activity, now, stats));
  return UpdateLedger(st, st.resource, r.tokens, now, prices, options, stats);
}

void Store::Index(ResourceState& st) {
  if (by_account_stale_) return;
  by_account_[{st.resource.provider, st.resource.account}].push_back(&st);
  in_order_.push_back(&st);
}

void Store::RebuildIndexesIfStale() const {
  if (!by_account_stale_) return;
  ++index_generation_;
  in_order_.clear();
  in_order_.reserve(states_.size());
  for (const ResourceState& st : states_) in_order_.push_back(&MutableState(st));
  std::sort(in_order_.begin(), in_order_.end(),
            [](const ResourceState* a, const ResourceState* b) { return a->row_id < b->row_id; });
  by_account_.clear();
  for (ResourceState* st : in_order_) by_account_[{st->resource.provider, st->resource.account}].push_back(st);
  by_account_stale_ = false;
}

StateList Store::resources() const {
  RebuildIndexesIfStale();
  return StateList(in_order_);
}

std::span<ResourceState* const> Store::AccountResources(const std::string& provider, const std::string& account) {
  RebuildIndexesIfStale();
  auto found = by_account_.find({provider, account});
  if (found == by_account_.end()) return {};
  return found->second;
}

std::vector<const ResourceState*> Store::ProviderResources(const std::string& provider) {
  RebuildIndexesIfStale();
  std::vector<const ResourceState*> out;
  for (auto it = by_account_.lower_bound({provider, std::string()});
       it != by_account_.end() && it->first.first == provider; ++it) {
    out.insert(out.end(), it->second.begin(), it->second.end());
  }
  return out;
}

Status Store::IngestMissing(std::span<const Snapshot> snapshots, Time now, IngestStats& stats) {
  for (const Snapshot& snap : snapshots) {
    if (snap.partial_update) continue;
    for (ResourceState* st_ptr : AccountResources(snap.provider, snap.account)) {
      ResourceState& st = *st_ptr;
      if (st.listed_in == ingest_serial_ || st.deleted_at) continue;
      const Resource before = st.resource;
      if (snap.complete) {
        st.resource.lifecycle = Lifecycle::kDeleted;
        st.resource.transitional = false;
        st.resource.billing.billable = false;
        st.deleted_at = now;
        LW_RETURN_IF_ERROR(CloseGpu(st, now, stats));
        ++stats.deleted;
      } else {
        if (st.resource.lifecycle == Lifecycle::kUnknown) continue;
        st.resource.lifecycle = Lifecycle::kUnknown;
        st.activity_known = false;
        ++stats.unknown;
      }
      st.fingerprint = Fingerprint(st.resource);
      LW_RETURN_IF_ERROR(WriteResource(st, false, now));
      ++stats.resources_updated;
      LW_RETURN_IF_ERROR(RecordTransition(st, &before, st.resource, now, stats));
    }
  }
  return Status::Ok();
}

// Where a first sight's evidence begins: the signals' window, or the creation if later.
// When the window began after the creation, quiet time counted from it is only a lower
// bound, and `observed` says from where.
Time Store::FirstSightBase(const Activity& a, const Resource& r, Time now, std::optional<Time>& observed) {
  Time base = a.window_start.value_or(now);
  if (r.created_at && *r.created_at >= base) {
    base = *r.created_at;
  } else if (!observed || base < *observed) {
    observed = std::min(base, now);
  }
  return std::min(base, now);
}

Status Store::UpdateActivity(ResourceState& st, const Resource& r, const Activity& a, Time now, IngestStats& stats) {
  const uint64_t listed_fp = a.counters_fingerprint;
  std::optional<Time> observed = st.observed_since;
  std::optional<Time> last = st.last_active_at;
  std::optional<Time> last_traffic = st.last_traffic_at;
  auto later = [](std::optional<Time>& into, std::optional<Time> t) {
    if (t && (!into || *t > *into)) into = t;
  };
  // Evidence from before the signals' window (a frozen updateTime, an old checkpoint)
  // cannot show the resource was idle since then: nothing before the window was looked
  // at. On first sight the window's start is the bound instead (a lower bound).
  auto within = [&](std::optional<Time> t) {
    return t && a.window_start && *t < *a.window_start ? std::nullopt : t;
  };
  if (a.known) {
    later(last, within(a.last_active_at));
    if (a.busy_now) later(last, now);
    // A counter that moved since the last poll is activity when it was seen.
    if (st.activity_fingerprint != 0 && listed_fp != 0 && listed_fp != st.activity_fingerprint) {
      later(last, now);
    }
    if (!last) {
      // First sight with no evidence of work: idle at least since the signals' window
      // began (or since creation, if later). Never earlier than what was observed.
      last = FirstSightBase(a, r, now, observed);
    }
  }
  if (a.traffic_known) {
    later(last_traffic, within(a.last_traffic_at));
    if (!last_traffic) last_traffic = FirstSightBase(a, r, now, observed);
  }
  const uint64_t fp = listed_fp == 0 ? st.activity_fingerprint : listed_fp;
  if (a.known == st.activity_known && a.traffic_known == st.traffic_known && fp == st.activity_fingerprint &&
      last == st.last_active_at && last_traffic == st.last_traffic_at && observed == st.observed_since) {
    return Status::Ok();
  }
  st.observed_since = observed;
  st.activity_known = a.known;
  st.traffic_known = a.traffic_known;
  st.activity_fingerprint = fp;
  st.last_active_at = last;
  st.last_traffic_at = last_traffic;
  // A listing without counters keeps the last one's fingerprint (`fp`), so a restart
  // still sees a counter that moved while they were missing.
  LW_ASSIGN_OR_RETURN(Stmt* q_ptr, Cached(
      "INSERT INTO activity (rid, known, traffic_known, fingerprint, last_active_at, last_traffic_at, updated_at, "
      "detail, observed_since) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9) ON CONFLICT(rid) DO UPDATE SET known=?2, "
      "traffic_known=?3, fingerprint=?4, last_active_at=?5, last_traffic_at=?6, updated_at=?7, detail=?8, "
      "observed_since=?9"));
  Stmt& q = *q_ptr;
  q.Bind(1, st.row_id).Bind(2, a.known ? 1 : 0).Bind(3, a.traffic_known ? 1 : 0).Bind(4, StoredCountersText(fp));
  q.Bind(5, Us(last)).Bind(6, Us(last_traffic)).Bind(7, ToUnixMicros(now)).Bind(8, Redact(a.detail));
  q.Bind(9, Us(observed));
  ++stats.activity_rows;
  return q.Run();
}

Status Store::CloseGpu(ResourceState& st, Time at, IngestStats& stats) {
  if (!st.open_gpu) return Status::Ok();
  const ResourceState::OpenInterval o = *st.open_gpu;
  const Time end = std::max(at, o.start);
  const Duration d = end - o.start;
  const Money cost = GpuCost(o.unit_price, o.gpus, d);
  LW_ASSIGN_OR_RETURN(Stmt* q_ptr, Cached("UPDATE ledger SET end_at=?1, quantity=?2, cost=?3 WHERE id=?4"));
  Stmt& q = *q_ptr;
  q.Bind(1, ToUnixMicros(end)).Bind(2, o.gpus * std::chrono::duration_cast<std::chrono::seconds>(d).count());
  q.Bind(3, cost.micros()).Bind(4, o.id);
  LW_RETURN_IF_ERROR(q.Run());
  st.closed_spend += cost;
  if (o.idle) st.idle_spend_closed += cost;
  if (period_spend_) {
    period_spend_->AddFinal(st, {.id = o.id, .meter = "gpu_seconds", .start = o.start, .end = end, .rate = o.gpus,
                                 .unit_price = o.unit_price, .cost = cost, .idle = o.idle});
  }
  st.open_gpu.reset();
  ++stats.ledger_rows;
  return Status::Ok();
}

void Store::WarnUnpriced(const Resource& r, const std::string& what, const std::string& setting) {
  // Once per provider and price a process: the metric and `status` carry it after that.
  if (!unpriced_warned_.insert(std::string(ProviderTypeName(r.provider_type)) + "|" + what).second) return;
  Log().Warn("no price known: its spend is recorded as USD 0 until one is configured",
             {{"provider", r.provider.view()}, {"what", what}, {"resource", r.Key()}, {"set", setting}});
}

Status Store::UpdateLedger(ResourceState& st, const Resource& r, const FlatMap<std::string, int64_t>& tokens,
                           Time now, const PriceBook& prices, const IngestOptions& options, IngestStats& stats) {
  // GPU time: one open interval per billing state.
  const bool billable = r.billing.meter == Meter::kGpuTime && r.billing.billable && r.billing.gpus() > 0 &&
                        r.lifecycle != Lifecycle::kDeleted;
  const int64_t gpus = r.billing.gpus();
  const std::optional<Money> known_price = prices.GpuHour(r);
  const Money price = known_price.value_or(Money());
  st.unpriced = billable && !known_price;
  if (st.unpriced) WarnUnpriced(r, "GPU type " + (r.billing.gpu_type.empty() ? "(none)" : r.billing.gpu_type),
                                "pricing.gpu_hour_usd." + r.billing.gpu_type);
  const std::optional<Time> idle_since = st.IdleSince();
  const bool idle = idle_since && now - *idle_since >= options.idle_after;
  std::optional<Time> reopen_at;
  if (st.open_gpu) {
    const auto& o = *st.open_gpu;
    if (!billable || o.gpus != gpus || o.unit_price != price || o.idle != idle) {
      // Split where the state really changed when the signals say so: idleness starts
      // idle_after past the last activity; activity resumes at its evidence.
      Time split = now;
      if (billable && o.gpus == gpus && o.unit_price == price) {
        if (idle && idle_since) split = *idle_since + options.idle_after;
        if (!idle && st.last_active_at) split = *st.last_active_at;
        split = std::clamp(split, o.start, now);
      }
      LW_RETURN_IF_ERROR(CloseGpu(st, split, stats));
      reopen_at = split;
    }
  }
  if (billable && !st.open_gpu) {
    const Time start = reopen_at.value_or(now);
    LW_ASSIGN_OR_RETURN(Stmt* q_ptr, Cached(
        "INSERT INTO ledger (rid, meter, start_at, end_at, quantity_rate, quantity, unit_price, cost, idle) "
        "VALUES (?1, 'gpu_seconds', ?2, NULL, ?3, 0, ?4, 0, ?5)"));
    Stmt& q = *q_ptr;
    q.Bind(1, st.row_id).Bind(2, ToUnixMicros(start)).Bind(3, gpus).Bind(4, price.micros()).Bind(5, idle ? 1 : 0);
    LW_RETURN_IF_ERROR(q.Run());
    st.open_gpu = ResourceState::OpenInterval{db_->LastInsertRowId(), start, price, static_cast<int32_t>(gpus), idle};
    ++stats.ledger_rows;
  }
  // Tokens: deltas of the provider's cumulative counts, per meter at its own rate.
  // The first usage ever read for a resource is history (spent since its creation); a
  // meter that appears later beside tracked ones is new spend.
  const bool first_usage = st.counters.empty();
  for (const auto& [meter, total] : tokens) {
    const std::optional<Money> known_unit = prices.TokenPrice(r, meter);
    if (total > 0 && !known_unit) {
      st.unpriced = true;
      WarnUnpriced(r, "tokens of " + (r.base_model.empty() ? "(no model)" : r.base_model) + " (" + meter + ")",
                   "pricing.tokens_per_million_usd[\"" + r.base_model + "\"]." + meter);
    }
    auto prev_it = st.counters.find(meter);
    const int64_t prev = prev_it == st.counters.end() ? 0 : prev_it->second;
    if (prev_it != st.counters.end() && total == prev) continue;
    const int64_t delta = total - prev;
    if (delta > 0) {
      const Money unit = known_unit.value_or(Money());
      const Money cost = ScalePrice(unit, delta, 1'000'000);
      // History is booked over the span it was spent in, not now (bounded to a year,
      // should created_at be wrong).
      Time start = now;
      if (first_usage && r.created_at && *r.created_at < now) {
        start = std::max(*r.created_at, now - std::chrono::days(366));
      }
      LW_ASSIGN_OR_RETURN(Stmt* q_ptr, Cached(
          "INSERT INTO ledger (rid, meter, start_at, end_at, quantity_rate, quantity, unit_price, cost, idle) "
          "VALUES (?1, ?2, ?3, ?7, 0, ?4, ?5, ?6, 0)"));
      Stmt& q = *q_ptr;
      q.Bind(1, st.row_id).Bind(2, "tokens." + meter).Bind(3, ToUnixMicros(start)).Bind(4, delta).Bind(5, unit.micros());
      q.Bind(6, cost.micros()).Bind(7, ToUnixMicros(now));
      LW_RETURN_IF_ERROR(q.Run());
      st.closed_spend += cost;
      if (period_spend_) {
        period_spend_->AddFinal(st, {.id = db_->LastInsertRowId(), .meter = "tokens." + meter, .start = start,
                                     .end = now, .quantity = delta, .unit_price = unit, .cost = cost});
      }
      ++stats.ledger_rows;
    }
    // A total that went down is a provider-side reset (its usage window moved): re-base.
    st.counters[meter] = total;
    LW_ASSIGN_OR_RETURN(Stmt* c_ptr, Cached(
        "INSERT INTO counters (rid, meter, value, updated_at) VALUES (?1, ?2, ?3, ?4) "
        "ON CONFLICT(rid, meter) DO UPDATE SET value=?3, updated_at=?4"));
    Stmt& c = *c_ptr;
    c.Bind(1, st.row_id).Bind(2, meter).Bind(3, total).Bind(4, ToUnixMicros(now));
    LW_RETURN_IF_ERROR(c.Run());
    ++stats.counter_rows;
  }
  return Status::Ok();
}

// ---- marks, snoozes, intents, notifications ----

Status Store::PutMark(const Mark& m) {
  LW_ASSIGN_OR_RETURN(Stmt q, db_->Prepare(
      "INSERT INTO marks (policy, resource, marked_at, act_after, notified_at, reason, action) VALUES (?1,?2,?3,?4,?5,?6,?7) "
      "ON CONFLICT(policy, resource) DO UPDATE SET marked_at=?3, act_after=?4, notified_at=?5, reason=?6, action=?7"));
  q.Bind(1, m.policy).Bind(2, m.resource).Bind(3, ToUnixMicros(m.marked_at)).Bind(4, ToUnixMicros(m.act_after));
  q.Bind(5, Us(m.notified_at)).Bind(6, Redact(m.reason)).Bind(7, m.action);
  LW_RETURN_IF_ERROR(q.Run());
  marks_[{m.policy, m.resource}] = m;
  return Status::Ok();
}

Status Store::RemoveMark(const std::string& policy, const std::string& resource) {
  LW_ASSIGN_OR_RETURN(Stmt q, db_->Prepare("DELETE FROM marks WHERE policy=?1 AND resource=?2"));
  q.Bind(1, policy).Bind(2, resource);
  LW_RETURN_IF_ERROR(q.Run());
  marks_.erase({policy, resource});
  return Status::Ok();
}

Status Store::MarkNotified(const std::string& policy, const std::string& resource, Time at) {
  LW_ASSIGN_OR_RETURN(Stmt q, db_->Prepare("UPDATE marks SET notified_at=?1 WHERE policy=?2 AND resource=?3"));
  q.Bind(1, ToUnixMicros(at)).Bind(2, policy).Bind(3, resource);
  LW_RETURN_IF_ERROR(q.Run());
  if (auto it = marks_.find({policy, resource}); it != marks_.end()) it->second.notified_at = at;
  return Status::Ok();
}

Result<int64_t> Store::AddSnooze(const Snooze& s) {
  LW_ASSIGN_OR_RETURN(Stmt q, db_->Prepare(
      "INSERT INTO exemptions (resource, policy, until, reason, by, created_at) VALUES (?1,?2,?3,?4,?5,?6)"));
  q.Bind(1, s.resource).Bind(2, s.policy).Bind(3, Us(s.until)).Bind(4, Redact(s.reason)).Bind(5, Redact(s.by));
  q.Bind(6, ToUnixMicros(s.created_at));
  LW_RETURN_IF_ERROR(q.Run());
  return db_->LastInsertRowId();
}

Result<std::vector<Snooze>> Store::ActiveSnoozes(Time now) {
  LW_ASSIGN_OR_RETURN(Stmt q, db_->Prepare(
      "SELECT id, resource, policy, until, reason, by, created_at FROM exemptions WHERE until IS NULL OR until > ?1 "
      "ORDER BY id"));
  q.Bind(1, ToUnixMicros(now));
  std::vector<Snooze> out;
  while (true) {
    LW_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    out.push_back({q.Int(0), q.Text(1), q.Text(2), FromUs(q.OptInt(3)), q.Text(4), q.Text(5), FromUnixMicros(q.Int(6))});
  }
  return out;
}

namespace {
Result<Intent> ReadIntent(const Stmt& q) {
  Intent i;
  i.id = q.Int(0);
  i.idempotency_key = q.Text(1);
  i.resource = q.Text(2);
  i.policy = q.Text(3);
  i.action = q.Text(4);
  i.request = q.Text(5);
  i.created_at = FromUnixMicros(q.Int(6));
  const std::string state = q.Text(7);
  if (auto st = ParseIntentState(state)) {
    i.state = *st;
  } else {
    return DataLoss("intent " + std::to_string(i.id) + " (" + i.idempotency_key + ") has an unknown state '" +
                    state.substr(0, 32) + "'");
  }
  i.outcome = q.Text(8);
  i.response = q.Text(9);
  i.error = q.Text(10);
  i.finished_at = FromUs(q.OptInt(11));
  i.dry_run = q.Int(12) != 0;
  i.burn_per_hour = Money::FromMicros(q.Int(13));
  if (auto c = q.OptInt(14)) i.savings_cap = Duration(*c);
  i.fence = q.OptInt(15);
  return i;
}
// Every row a query over kIntentColumns returns.
Result<std::vector<Intent>> ReadIntents(Stmt& q) {
  std::vector<Intent> out;
  while (true) {
    LW_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    LW_ASSIGN_OR_RETURN(Intent i, ReadIntent(q));
    out.push_back(std::move(i));
  }
  return out;
}
constexpr const char* kIntentColumns =
    "id, idempotency_key, resource, policy, action, request, created_at, state, outcome, response, error, finished_at, "
    "dry_run, burn_per_hour, savings_cap_us, fence";
}  // namespace

Result<int64_t> Store::BeginIntent(const Intent& in) {
  // The intent is the exactly-once record: make this commit reach the disk.
  LW_RETURN_IF_ERROR(db_->Exec("PRAGMA synchronous = FULL"));
  LW_ASSIGN_OR_RETURN(Stmt q, db_->Prepare(
      "INSERT INTO intents (idempotency_key, resource, policy, action, request, created_at, state, dry_run, "
      "burn_per_hour, savings_cap_us, fence) VALUES (?1,?2,?3,?4,?5,?6,'open',?7,?8,?9,?10)"));
  q.Bind(1, in.idempotency_key).Bind(2, in.resource).Bind(3, in.policy).Bind(4, in.action).Bind(5, Redact(in.request));
  q.Bind(6, ToUnixMicros(in.created_at)).Bind(7, in.dry_run ? 1 : 0).Bind(8, in.burn_per_hour.micros());
  if (in.savings_cap) {
    q.Bind(9, in.savings_cap->count());
  } else {
    q.BindNull(9);
  }
  // Fenced: on PostgreSQL this insert commits only while the token holds the lease.
  const pg::Conn* conn = db_->postgres();
  q.Bind(10, conn ? conn->fence() : std::nullopt);
  Status s = q.Run();
  (void)db_->Exec("PRAGMA synchronous = NORMAL");
  if (!s.ok()) {
    if (s.message().find("UNIQUE") != std::string::npos) {
      return AlreadyExists("intent " + in.idempotency_key + " already recorded");
    }
    return s;
  }
  return db_->LastInsertRowId();
}

Status Store::FinishIntent(int64_t id, IntentState state, std::string_view outcome, std::string_view response,
                           std::string_view error, Time at) {
  LW_RETURN_IF_ERROR(db_->Exec("PRAGMA synchronous = FULL"));
  LW_ASSIGN_OR_RETURN(Stmt q, db_->Prepare(
      "UPDATE intents SET state=?1, outcome=?2, response=?3, error=?4, finished_at=?5 WHERE id=?6"));
  q.Bind(1, IntentStateName(state)).Bind(2, Redact(outcome)).Bind(3, Redact(response.substr(0, 4096))).Bind(4, Redact(error));
  q.Bind(5, ToUnixMicros(at)).Bind(6, id);
  Status s = q.Run();
  (void)db_->Exec("PRAGMA synchronous = NORMAL");
  return s;
}

Result<std::vector<Intent>> Store::OpenIntents() {
  LW_ASSIGN_OR_RETURN(Stmt q, db_->Prepare(std::string("SELECT ") + kIntentColumns +
                                           " FROM intents WHERE state='open' ORDER BY id"));
  return ReadIntents(q);
}

Result<std::vector<Intent>> Store::IntentsSince(Time since) {
  LW_ASSIGN_OR_RETURN(Stmt q, db_->Prepare(std::string("SELECT ") + kIntentColumns +
                                           " FROM intents WHERE created_at >= ?1 ORDER BY id"));
  q.Bind(1, ToUnixMicros(since));
  return ReadIntents(q);
}

Result<std::vector<Intent>> Store::DoneSince(Time since) {
  LW_ASSIGN_OR_RETURN(Stmt q, db_->Prepare(std::string("SELECT ") + kIntentColumns +
                                           " FROM intents WHERE finished_at >= ?1 AND state = 'done' AND dry_run = 0"
                                           " ORDER BY id"));
  q.Bind(1, ToUnixMicros(since));
  return ReadIntents(q);
}

Result<std::vector<Intent>> Store::IntentsWithKeyPrefix(const std::string& prefix) {
  // A range over the UNIQUE index rather than LIKE, whose wildcards the key may contain.
  // The bound is U+10FFFF, the last code point: valid UTF-8 (PostgreSQL takes no other),
  // and after every key's next character byte-wise (PostgreSQL compares this column
  // in the "C" collation).
  LW_ASSIGN_OR_RETURN(Stmt* q, Cached(std::string("SELECT ") + kIntentColumns +
                                      " FROM intents WHERE idempotency_key >= ?1 AND idempotency_key < ?2 ORDER BY id"));
  q->Reset();
  q->Bind(1, prefix).Bind(2, prefix + "\xf4\x8f\xbf\xbf");
  return ReadIntents(*q);
}

Result<std::vector<Intent>> Store::IntentsOfMark(const IntentKey& key) {
  // Every key of the mark starts with its text; one that merely starts the same way
  // (a longer marked_at) is someone else's and is left out.
  LW_ASSIGN_OR_RETURN(std::vector<Intent> candidates, IntentsWithKeyPrefix(key.mark()));
  std::vector<Intent> out;
  for (Intent& i : candidates) {
    auto parsed = IntentKey::Parse(i.idempotency_key);
    if (!parsed) {
      if (i.idempotency_key.size() > key.mark().size() && (i.idempotency_key[key.mark().size()] == '#' ||
                                                           i.idempotency_key[key.mark().size()] == '|')) {
        return DataLoss("intent " + std::to_string(i.id) + " has an unreadable idempotency key '" +
                        i.idempotency_key.substr(0, 256) + "'");
      }
      continue;
    }
    if (parsed->mark() == key.mark()) out.push_back(std::move(i));
  }
  return out;
}

Result<bool> Store::RecordNotification(const std::string& dedupe_key, const std::string& notifier, Time at,
                                       const std::string& status) {
  LW_ASSIGN_OR_RETURN(Stmt q, db_->Prepare(
      "INSERT OR IGNORE INTO notifications (dedupe_key, notifier, sent_at, status) VALUES (?1,?2,?3,?4)"));
  q.Bind(1, dedupe_key).Bind(2, notifier).Bind(3, ToUnixMicros(at)).Bind(4, status);
  LW_RETURN_IF_ERROR(q.Run());
  return db_->Changes() > 0;
}

Result<bool> Store::NotificationRecorded(const std::string& dedupe_key) {
  LW_ASSIGN_OR_RETURN(Stmt q, db_->Prepare("SELECT 1 FROM notifications WHERE dedupe_key=?1"));
  q.Bind(1, dedupe_key);
  return q.Step();
}

Status Store::PutMeta(const std::string& k, const std::string& v) {
  LW_ASSIGN_OR_RETURN(Stmt * q, Cached("INSERT INTO meta (k, v) VALUES (?1, ?2) ON CONFLICT(k) DO UPDATE SET v=?2"));
  q->Bind(1, k).Bind(2, v);
  return q->Run();
}

Result<std::optional<std::string>> Store::GetMeta(const std::string& k) {
  LW_ASSIGN_OR_RETURN(Stmt q, db_->Prepare("SELECT v FROM meta WHERE k=?1"));
  q.Bind(1, k);
  LW_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(q.Text(0));
}

Status Store::IntegrityCheck() {
  if (db_->postgres()) return Status::Ok();  // the server checks its own pages
  LW_ASSIGN_OR_RETURN(Stmt q, db_->Prepare("PRAGMA integrity_check"));
  LW_ASSIGN_OR_RETURN(bool row, q.Step());
  const std::string verdict = row ? q.Text(0) : "no answer";
  if (verdict != "ok") return DataLoss("integrity_check of " + path_ + ": " + verdict);
  return Status::Ok();
}

}  // namespace loopwarden::store
