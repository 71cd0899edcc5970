#include "store/leader_lease.h"

#include "store/libpq.h"

namespace loopwarden::store {

namespace {

std::string Interval(Duration d) { return std::to_string(d.count()) + " microseconds"; }

}  // namespace

Result<std::unique_ptr<LeaderLease>> LeaderLease::Open(const std::string& dsn, std::string holder, Duration lease) {
  LW_ASSIGN_OR_RETURN(std::unique_ptr<pg::Conn> conn, pg::Conn::Connect(dsn, "loopwarden lease"));
  // A takeover waits at most this long behind a leader's write in flight, then retries.
  LW_RETURN_IF_ERROR(conn->Exec("SET lock_timeout = '1s'"));
  LW_RETURN_IF_ERROR(conn->Exec("BEGIN"));
  Status s = conn->Exec("SELECT pg_advisory_xact_lock(7364202)");
  if (s.ok()) {
    s = conn->Exec(
        "CREATE TABLE IF NOT EXISTS lw_lease (name TEXT PRIMARY KEY, holder TEXT NOT NULL, token BIGINT NOT NULL, "
        "expires_at TIMESTAMPTZ NOT NULL, acquired_at TIMESTAMPTZ NOT NULL)");
  }
  // Who led when: the audit trail of every takeover.
  if (s.ok()) {
    s = conn->Exec("CREATE TABLE IF NOT EXISTS lw_lease_log (token BIGINT PRIMARY KEY, holder TEXT NOT NULL, "
                   "acquired_at TIMESTAMPTZ NOT NULL)");
  }
  if (!s.ok()) {
    (void)conn->Exec("ROLLBACK");
    return s.WithContext("creating the leader lease table");
  }
  LW_RETURN_IF_ERROR(conn->Exec("COMMIT"));
  return std::unique_ptr<LeaderLease>(new LeaderLease(std::move(conn), std::move(holder), lease));
}

Result<std::optional<int64_t>> LeaderLease::TryAcquire() {
  // A running lease is seen without locking its row: the upsert below locks it, and
  // would wait behind every write of the leader (each holds a share lock on it).
  LW_ASSIGN_OR_RETURN(std::optional<Holder> current, Current());
  if (current && current->seconds_left > 0) return std::optional<int64_t>();
  pg_result* r = nullptr;
  Status s = conn_->Run(
      "WITH taken AS (INSERT INTO lw_lease (name, holder, token, expires_at, acquired_at) "
      "VALUES ('leader', $1, 1, clock_timestamp() + $2::interval, clock_timestamp()) "
      "ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, token = lw_lease.token + 1, "
      "expires_at = EXCLUDED.expires_at, acquired_at = EXCLUDED.acquired_at "
      "WHERE lw_lease.expires_at < clock_timestamp() RETURNING token, holder, acquired_at) "
      "INSERT INTO lw_lease_log (token, holder, acquired_at) SELECT token, holder, acquired_at FROM taken "
      "RETURNING token",
      {holder_, Interval(lease_)}, &r, "taking the leader lease");
  if (!s.ok()) {
    // Waiting behind the leader's write is a busy lease, not a failure.
    if (s.code() == StatusCode::kUnavailable && s.message().find("55P03") != std::string::npos) {
      return std::optional<int64_t>();
    }
    return s;
  }
  std::optional<int64_t> token;
  if (pg::Pq().PQntuples(r) == 1) token = std::strtoll(pg::Pq().PQgetvalue(r, 0, 0), nullptr, 10);
  pg::Pq().PQclear(r);
  if (token) token_ = token;
  return token;
}

Result<bool> LeaderLease::Renew() {
  if (!token_) return false;
  pg_result* r = nullptr;
  // An expired lease is not renewed even when nobody took it yet: a follower may be
  // taking it this moment, and leadership ended at the expiry either way.
  LW_RETURN_IF_ERROR(conn_->Run(
      "UPDATE lw_lease SET expires_at = clock_timestamp() + $2::interval "
      "WHERE name = 'leader' AND token = $1::bigint AND expires_at > clock_timestamp()",
      {std::to_string(*token_), Interval(lease_)}, &r, "renewing the leader lease"));
  const bool held = std::string_view(pg::Pq().PQcmdTuples(r)) == "1";
  pg::Pq().PQclear(r);
  if (!held) token_.reset();
  return held;
}

Status LeaderLease::Release() {
  if (!token_) return Status::Ok();
  Status s = conn_->Run("UPDATE lw_lease SET expires_at = clock_timestamp() WHERE name = 'leader' AND token = $1::bigint",
                        {std::to_string(*token_)}, nullptr, "giving up the leader lease");
  token_.reset();
  return s;
}

Result<std::optional<LeaderLease::Holder>> LeaderLease::Current() {
  pg_result* r = nullptr;
  LW_RETURN_IF_ERROR(conn_->Run(
      "SELECT holder, token, EXTRACT(EPOCH FROM expires_at - clock_timestamp())::float8 FROM lw_lease "
      "WHERE name = 'leader'",
      {}, &r, "reading the leader lease"));
  std::optional<Holder> out;
  if (pg::Pq().PQntuples(r) == 1) {
    out = Holder{.holder = pg::Pq().PQgetvalue(r, 0, 0), .token = std::strtoll(pg::Pq().PQgetvalue(r, 0, 1), nullptr, 10),
                 .seconds_left = std::strtod(pg::Pq().PQgetvalue(r, 0, 2), nullptr)};
  }
  pg::Pq().PQclear(r);
  return out;
}

Result<std::vector<LeaderLease::Term>> LeaderLease::History() {
  pg_result* r = nullptr;
  LW_RETURN_IF_ERROR(conn_->Run("SELECT token, holder, EXTRACT(EPOCH FROM acquired_at)::float8 FROM lw_lease_log "
                                "ORDER BY token",
                                {}, &r, "reading the leader lease's history"));
  std::vector<Term> out;
  for (int i = 0; i < pg::Pq().PQntuples(r); ++i) {
    out.push_back({.token = std::strtoll(pg::Pq().PQgetvalue(r, i, 0), nullptr, 10), .holder = pg::Pq().PQgetvalue(r, i, 1),
                   .acquired_unix = std::strtod(pg::Pq().PQgetvalue(r, i, 2), nullptr)});
  }
  pg::Pq().PQclear(r);
  return out;
}

}  // namespace loopwarden::store
