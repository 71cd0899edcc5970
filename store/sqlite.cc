#include "store/sqlite.h"

#include <sqlite3.h>

#include "store/postgres.h"

namespace loopwarden::store {

Status SqliteStatus(int code, std::string_view what, std::string_view detail, std::string_view path) {
  const std::string msg = std::string(what) + ": " + std::string(detail) + " (" + std::string(path) + ")";
  switch (code & 0xFF) {
    case SQLITE_OK:
    case SQLITE_ROW:
    case SQLITE_DONE: return Status::Ok();
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: return DataLoss(msg);
    case SQLITE_FULL: return ResourceExhausted(msg);
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return Unavailable(msg);
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_READONLY: return PermissionDenied(msg);
    case SQLITE_IOERR: return Unavailable(msg);
    default: return Internal(msg);
  }
}

Stmt::Stmt(sqlite3_stmt* s, std::string path) : s_(s), path_(std::move(path)) {}
Stmt::Stmt(std::unique_ptr<pg::Statement> p) : pg_(std::move(p)) {}
Stmt::Stmt(Stmt&& o) noexcept : s_(o.s_), pg_(std::move(o.pg_)), path_(std::move(o.path_)), dirty_(o.dirty_) {
  o.s_ = nullptr;
}

Stmt& Stmt::operator=(Stmt&& o) noexcept {
  if (this != &o) {
    if (s_) sqlite3_finalize(s_);
    s_ = o.s_;
    pg_ = std::move(o.pg_);
    path_ = std::move(o.path_);
    dirty_ = o.dirty_;
    o.s_ = nullptr;
  }
  return *this;
}

Stmt::~Stmt() {
  if (s_) sqlite3_finalize(s_);
}

Stmt& Stmt::Bind(int i, int64_t v) {
  if (pg_) {
    pg_->Bind(i, std::to_string(v));
  } else {
    sqlite3_bind_int64(s_, i, v);
    dirty_ = true;
  }
  return *this;
}
Stmt& Stmt::Bind(int i, double v) {
  if (pg_) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    pg_->Bind(i, std::string(buf));
  } else {
    sqlite3_bind_double(s_, i, v);
    dirty_ = true;
  }
  return *this;
}
Stmt& Stmt::Bind(int i, std::string_view v) {
  if (pg_) {
    pg_->Bind(i, std::string(v));
  } else {
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    dirty_ = true;
  }
  return *this;
}
Stmt& Stmt::BindView(int i, std::string_view v) {
  if (pg_) return Bind(i, v);  // libpq takes its own copy
  sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
  dirty_ = true;
  return *this;
}
Stmt& Stmt::BindNull(int i) {
  if (pg_) {
    pg_->Bind(i, std::nullopt);
  } else {
    sqlite3_bind_null(s_, i);
    dirty_ = true;
  }
  return *this;
}

Result<bool> Stmt::Step() {
  if (pg_) {
    Result<bool> r = pg_->Step();
    if (!r.ok()) pg_->Reset();
    return r;
  }
  dirty_ = true;
  const int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3* db = sqlite3_db_handle(s_);
  Status s = SqliteStatus(rc, "executing", sqlite3_errmsg(db), path_);
  sqlite3_reset(s_);
  return s;
}

Status Stmt::Run() {
  Result<bool> r = Step();
  Reset();
  if (!r.ok()) return r.status();
  return Status::Ok();
}

void Stmt::Reset() {
  if (pg_) {
    pg_->Reset();
    return;
  }
  // Nothing bound or stepped since the last reset: already reset and clear. A cached
  // statement was reset twice, by Run() and again by the cache on its next use: 620,000
  // resets of a first poll at 100k did nothing.
  if (!dirty_) return;
  sqlite3_reset(s_);
  sqlite3_clear_bindings(s_);
  dirty_ = false;
}

int64_t Stmt::Int(int col) const { return pg_ ? pg_->Int(col) : sqlite3_column_int64(s_, col); }
double Stmt::Double(int col) const { return pg_ ? pg_->Double(col) : sqlite3_column_double(s_, col); }
std::string Stmt::Text(int col) const {
  if (pg_) return std::string(pg_->Value(col));
  const unsigned char* t = sqlite3_column_text(s_, col);
  return t ? std::string(reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(s_, col))) : "";
}
std::string_view Stmt::TextView(int col) const {
  if (pg_) return pg_->Value(col);
  const unsigned char* t = sqlite3_column_text(s_, col);
  return t ? std::string_view(reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(s_, col)))
           : std::string_view();
}
bool Stmt::IsNull(int col) const { return pg_ ? pg_->IsNull(col) : sqlite3_column_type(s_, col) == SQLITE_NULL; }
int Stmt::Columns() const { return pg_ ? pg_->Columns() : sqlite3_column_count(s_); }
std::string Stmt::ColumnName(int col) const {
  if (pg_) return std::string(pg_->ColumnName(col));
  const char* n = sqlite3_column_name(s_, col);
  return n ? n : "";
}
std::optional<int64_t> Stmt::OptInt(int col) const {
  if (IsNull(col)) return std::nullopt;
  return Int(col);
}

namespace {

// Settings SQLite takes only before it initializes; if something initialized it first,
// they stay at SQLite's defaults and nothing else changes.
//
// SQLite counts every allocation for sqlite3_memory_used() under one global mutex:
// a lock and an unlock around each of the millions of mallocs and frees a first poll
// of a large fleet makes (about 4 % of its CPU). Nothing here reads those counts.
//
// A statement that writes several rows inside a transaction copies each stored page
// it changes to a statement journal first, so a failing row undoes its statement
// alone. Past 64 KB (eight 8 KB pages) SQLite moved that journal to a temporary file,
// and every batch of 64 transitions or bill days went past it: the first poll at 100k
// resources wrote about 270 MB to temporary files (/var/tmp) in 68,000 pwrite calls,
// though no batch's journal was over 0.21 MB. Up to 1 MB now stays in memory, freed
// when the statement ends; a larger one still goes to a file.
void ConfigureOnce() {
  static const bool once = [] {
    (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    (void)sqlite3_config(SQLITE_CONFIG_STMTJRNL_SPILL, 1 << 20);
    return true;
  }();
  (void)once;
}

}  // namespace

Result<std::unique_ptr<Db>> Db::Open(const std::string& path, bool create, bool read_only) {
  ConfigureOnce();
  sqlite3* db = nullptr;
  int flags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  if (create && !read_only) flags |= SQLITE_OPEN_CREATE;
  flags |= SQLITE_OPEN_NOMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    Status s = SqliteStatus(rc, "opening the database", db ? sqlite3_errmsg(db) : "out of memory", path);
    sqlite3_close(db);
    return s;
  }
  sqlite3_extended_result_codes(db, 1);
  // SQLite quietly opens a file it may not write read-only; every write would then fail.
  if (!read_only && sqlite3_db_readonly(db, "main") == 1) {
    sqlite3_close(db);
    return PermissionDenied("database " + path + " is not writable by this user: run loopwarden as the user that "
                            "owns it (plan, status and report only read)");
  }
  return std::unique_ptr<Db>(new Db(db, path));
}

Result<std::unique_ptr<Db>> Db::OpenPostgres(const std::string& dsn) {
  LW_ASSIGN_OR_RETURN(std::unique_ptr<pg::Conn> conn, pg::Conn::Connect(dsn, "loopwarden"));
  return std::unique_ptr<Db>(new Db(std::move(conn), pg::RedactDsn(dsn)));
}

Db::Db(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
Db::Db(std::unique_ptr<pg::Conn> conn, std::string name) : pg_(std::move(conn)), path_(std::move(name)) {}

Db::~Db() {
  if (db_) sqlite3_close_v2(db_);
}

Status Db::Error(int code, std::string_view what) const {
  if (pg_) return Internal(std::string(what) + " (" + path_ + ")");
  return SqliteStatus(code, what, sqlite3_errmsg(db_), path_);
}

Status Db::Exec(std::string_view sql) {
  if (pg_) return pg_->Exec(sql);
  char* err = nullptr;
  const std::string s(sql);
  const int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string detail = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    return SqliteStatus(rc, "executing " + s.substr(0, 40), detail, path_);
  }
  return Status::Ok();
}

Result<Stmt> Db::Prepare(std::string_view sql) {
  if (pg_) {
    std::string translated = pg::Translate(sql);
    if (translated.empty()) return Internal("no PostgreSQL form of " + std::string(sql.substr(0, 60)));
    return Stmt(std::make_unique<pg::Statement>(pg_.get(), std::move(translated)));
  }
  sqlite3_stmt* st = nullptr;
  const int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &st, nullptr);
  if (rc != SQLITE_OK) return Error(rc, "preparing " + std::string(sql.substr(0, 60)));
  return Stmt(st, path_);
}

Result<int64_t> Db::QueryInt(std::string_view sql) {
  LW_ASSIGN_OR_RETURN(Stmt st, Prepare(sql));
  LW_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return Internal("query returned no row: " + std::string(sql));
  return st.Int(0);
}

int64_t Db::LastInsertRowId() const { return pg_ ? pg_->last_id() : sqlite3_last_insert_rowid(db_); }
int Db::Changes() const { return pg_ ? pg_->changes() : sqlite3_changes(db_); }

}  // namespace loopwarden::store
