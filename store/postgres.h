#pragma once
// PostgreSQL beneath the store's Db and Stmt (store/sqlite.h): one libpq connection,
// the store's SQLite dialect translated to PostgreSQL's, and fencing.
//
// The store speaks one dialect, SQLite's, and this file translates the little of it
// PostgreSQL does not (?N parameters, INSERT OR IGNORE, the rowid of an insert,
// PRAGMAs), so every query is written once. Values travel as text, as psql sends them.
//
// Fencing: a connection given a lease token (SetFence) writes only while that token
// holds the leader lease (store/leader_lease.h). Each write transaction first takes a
// share lock on the lease row with the token and an unexpired lease as its condition;
// a follower's takeover must wait for that lock, so no write of a deposed leader can
// commit after the takeover, and none starts after it. A write refused so is
// kFailedPrecondition, and the connection's fence_lost hook runs once.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

struct pg_conn;
struct pg_result;

namespace loopwarden::store::pg {

// "postgres://…" or "postgresql://…": a PostgreSQL store rather than a SQLite file.
bool IsDsn(std::string_view path);
// The DSN without its password, for logs and errors.
std::string RedactDsn(std::string_view dsn);
// The store's SQLite statement in PostgreSQL's dialect; `returns_id` when the caller
// will ask for the inserted row's id.
std::string Translate(std::string_view sql, bool* returns_id = nullptr);

class Conn {
 public:
  static Result<std::unique_ptr<Conn>> Connect(const std::string& dsn, std::string_view application);
  ~Conn();
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  // Runs SQL without parameters (one or more statements), translated.
  Status Exec(std::string_view sql);
  // Runs one translated statement with text parameters; the result is the caller's to
  // free (PQclear) when `out` is given.
  Status Run(const std::string& sql, const std::vector<std::optional<std::string>>& params, pg_result** out,
             std::string_view what);

  void SetFence(int64_t token, std::function<void(const Status&)> lost) {
    fence_ = token;
    fence_lost_ = std::move(lost);
  }
  std::optional<int64_t> fence() const { return fence_; }
  // How long the lease the fence names still holds, by the server's clock;
  // kFailedPrecondition when it is no longer this connection's.
  Result<double> LeaseSecondsLeft();

  int64_t last_id() const { return last_id_; }
  int changes() const { return changes_; }
  const std::string& name() const { return name_; }  // the redacted DSN
  pg_conn* raw() { return conn_; }

 private:
  Conn(pg_conn* c, std::string name) : conn_(c), name_(std::move(name)) {}
  Status Begin();
  Status CheckFence();
  Status Fenced(std::string_view why);
  Status ResultStatus(pg_result* r, std::string_view what);

  pg_conn* conn_;
  std::string name_;
  bool in_txn_ = false;
  std::optional<int64_t> fence_;
  std::function<void(const Status&)> fence_lost_;
  bool fence_reported_ = false;
  int64_t last_id_ = 0;
  int changes_ = 0;
};

// One statement's parameters and, once run, its rows.
class Statement {
 public:
  Statement(Conn* conn, std::string sql) : conn_(conn), sql_(std::move(sql)) {}
  ~Statement();
  void Bind(int i, std::optional<std::string> v);
  Result<bool> Step();
  void Reset();
  int Columns() const;
  std::string_view ColumnName(int col) const;
  bool IsNull(int col) const;
  std::string_view Value(int col) const;
  int64_t Int(int col) const;
  double Double(int col) const;

 private:
  Conn* conn_;
  std::string sql_;
  std::vector<std::optional<std::string>> params_;
  pg_result* res_ = nullptr;
  int row_ = -1;
};

// Creates the store's tables when absent (the latest schema, in one transaction that
// concurrent replicas serialise on), or checks the version of those present.
Status EnsureSchema(Conn& conn, int version, bool read_only);

}  // namespace loopwarden::store::pg
