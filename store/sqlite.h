#pragma once
// A thin RAII layer over the SQLite C API, or over libpq when the store lives in
// PostgreSQL (store/postgres.h translates the SQL). Every failure is a Status naming
// the operation and the database; the code says what kind of failure it is:
// kDataLoss (damaged or not a database), kResourceExhausted (disk full),
// kUnavailable (busy or locked, or the server unreachable), kInternal (a bug: bad SQL).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/short_string.h"
#include "core/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace loopwarden::store {

namespace pg {
class Conn;
class Statement;
}  // namespace pg

class Stmt {
 public:
  Stmt() = default;
  Stmt(sqlite3_stmt* s, std::string path);
  explicit Stmt(std::unique_ptr<pg::Statement> p);
  Stmt(Stmt&& o) noexcept;
  Stmt& operator=(Stmt&& o) noexcept;
  ~Stmt();

  // Parameters are 1-based, as in SQLite.
  Stmt& Bind(int i, int64_t v);
  Stmt& Bind(int i, int v) { return Bind(i, static_cast<int64_t>(v)); }
  Stmt& Bind(int i, double v);
  Stmt& Bind(int i, std::string_view v);
  Stmt& Bind(int i, const char* v) { return Bind(i, std::string_view(v)); }
  Stmt& Bind(int i, const std::string& v) { return Bind(i, std::string_view(v)); }
  Stmt& Bind(int i, const ShortString& v) { return Bind(i, v.view()); }
  // Binds text without SQLite's copy of it: `v` must stay unchanged until the next
  // Run() or Reset(), which clear the binding. For the first poll's inserts, where
  // the copies (and their frees) were about 2 % of the cycle's instructions at 100k.
  Stmt& BindView(int i, std::string_view v);
  Stmt& BindNull(int i);
  template <class T>
  Stmt& Bind(int i, const std::optional<T>& v) {
    return v ? Bind(i, *v) : BindNull(i);
  }
  // Runs to the next row: true when a row is available, false when done.
  Result<bool> Step();
  // Runs a statement that returns no rows, then resets it for reuse.
  Status Run();
  void Reset();

  int64_t Int(int col) const;
  double Double(int col) const;
  std::string Text(int col) const;
  // Valid until the next Step or Reset: for hot loops that would otherwise allocate.
  std::string_view TextView(int col) const;
  bool IsNull(int col) const;
  std::optional<int64_t> OptInt(int col) const;
  int Columns() const;
  std::string ColumnName(int col) const;

 private:
  sqlite3_stmt* s_ = nullptr;
  std::unique_ptr<pg::Statement> pg_;
  std::string path_;
  bool dirty_ = false;  // bound or stepped since the last Reset (SQLite)
};

class Db {
 public:
  // Opens (read-write, creating when `create`) without changing the file: pragmas
  // and migrations are the caller's.
  static Result<std::unique_ptr<Db>> Open(const std::string& path, bool create, bool read_only);
  // A PostgreSQL database ("postgresql://…"); the password comes from the DSN, or as
  // libpq reads it (PGPASSWORD, ~/.pgpass).
  static Result<std::unique_ptr<Db>> OpenPostgres(const std::string& dsn);
  ~Db();

  Status Exec(std::string_view sql);
  Result<Stmt> Prepare(std::string_view sql);
  // One integer from a one-row query ("PRAGMA user_version").
  Result<int64_t> QueryInt(std::string_view sql);
  int64_t LastInsertRowId() const;
  int Changes() const;
  const std::string& path() const { return path_; }
  sqlite3* raw() { return db_; }
  pg::Conn* postgres() { return pg_.get(); }

  // The Status for the connection's current error, for `what`.
  Status Error(int code, std::string_view what) const;

 private:
  Db(sqlite3* db, std::string path);
  Db(std::unique_ptr<pg::Conn> conn, std::string name);
  sqlite3* db_ = nullptr;
  std::unique_ptr<pg::Conn> pg_;
  std::string path_;
};

// Maps a SQLite result code to a Status.
Status SqliteStatus(int code, std::string_view what, std::string_view detail, std::string_view path);

// Ends a transaction begun with BEGIN IMMEDIATE: commits when `s`, the outcome of its
// work, is ok; rolls back when it is not or when the commit fails.
inline Status EndTransaction(Db& db, Status s) {
  if (!s.ok()) {
    (void)db.Exec("ROLLBACK");
    return s;
  }
  Status c = db.Exec("COMMIT");
  if (!c.ok()) (void)db.Exec("ROLLBACK");
  return c;
}

// Runs `fn` inside BEGIN IMMEDIATE … COMMIT; rolls back when it fails.
template <class Fn>
Status InTransaction(Db& db, Fn&& fn) {
  LW_RETURN_IF_ERROR(db.Exec("BEGIN IMMEDIATE"));
  return EndTransaction(db, fn());
}

}  // namespace loopwarden::store
