#pragma once
// A thin RAII layer over the SQLite C API. Every failure is a Status naming the
// operation and the database path; the code says what kind of failure it is:
// kDataLoss (damaged or not a database), kResourceExhausted (disk full),
// kUnavailable (busy or locked), kInternal (a bug: bad SQL).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace loopwarden::store {

class Stmt {
 public:
  Stmt() = default;
  Stmt(sqlite3_stmt* s, std::string path) : s_(s), path_(std::move(path)) {}
  Stmt(Stmt&& o) noexcept : s_(o.s_), path_(std::move(o.path_)) { o.s_ = nullptr; }
  Stmt& operator=(Stmt&& o) noexcept;
  ~Stmt();

  // Parameters are 1-based, as in SQLite.
  Stmt& Bind(int i, int64_t v);
  Stmt& Bind(int i, int v) { return Bind(i, static_cast<int64_t>(v)); }
  Stmt& Bind(int i, double v);
  Stmt& Bind(int i, std::string_view v);
  Stmt& Bind(int i, const char* v) { return Bind(i, std::string_view(v)); }
  Stmt& Bind(int i, const std::string& v) { return Bind(i, std::string_view(v)); }
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

 private:
  sqlite3_stmt* s_ = nullptr;
  std::string path_;
};

class Db {
 public:
  // Opens (read-write, creating when `create`) without changing the file: pragmas
  // and migrations are the caller's.
  static Result<std::unique_ptr<Db>> Open(const std::string& path, bool create, bool read_only);
  ~Db();

  Status Exec(std::string_view sql);
  Result<Stmt> Prepare(std::string_view sql);
  // One integer from a one-row query ("PRAGMA user_version").
  Result<int64_t> QueryInt(std::string_view sql);
  int64_t LastInsertRowId() const;
  int Changes() const;
  const std::string& path() const { return path_; }
  sqlite3* raw() { return db_; }

  // The Status for the connection's current error, for `what`.
  Status Error(int code, std::string_view what) const;

 private:
  Db(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_;
  std::string path_;
};

// Maps a SQLite result code to a Status.
Status SqliteStatus(int code, std::string_view what, std::string_view detail, std::string_view path);

// Runs `fn` inside BEGIN IMMEDIATE … COMMIT; rolls back when it fails.
template <class Fn>
Status InTransaction(Db& db, Fn&& fn) {
  LW_RETURN_IF_ERROR(db.Exec("BEGIN IMMEDIATE"));
  Status s = fn();
  if (!s.ok()) {
    (void)db.Exec("ROLLBACK");
    return s;
  }
  Status c = db.Exec("COMMIT");
  if (!c.ok()) (void)db.Exec("ROLLBACK");
  return c;
}

}  // namespace loopwarden::store
