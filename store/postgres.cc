#include "store/postgres.h"

#include <cctype>
#include <cstdlib>

#include "core/secrets.h"
#include "core/strings.h"
#include "store/libpq.h"

namespace loopwarden::store::pg {

namespace {

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// The statement's first keyword, upper-cased.
std::string FirstWord(std::string_view sql) {
  size_t i = 0;
  while (i < sql.size() && std::isspace(static_cast<unsigned char>(sql[i]))) ++i;
  size_t j = i;
  while (j < sql.size() && std::isalpha(static_cast<unsigned char>(sql[j]))) ++j;
  return Upper(sql.substr(i, j - i));
}

bool IsWrite(std::string_view sql) {
  const std::string w = FirstWord(sql);
  return w == "INSERT" || w == "UPDATE" || w == "DELETE" || w == "CREATE" || w == "DROP" || w == "ALTER";
}

// Tables whose rows have an integer id the store asks for after an insert.
bool HasRowId(std::string_view sql) {
  for (std::string_view t : {"resources ", "transitions ", "ledger ", "exemptions ", "intents "}) {
    if (sql.starts_with(std::string("INSERT INTO ") + std::string(t))) return true;
  }
  return false;
}

std::string Trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  return std::string(s);
}

}  // namespace

bool IsDsn(std::string_view path) { return path.starts_with("postgres://") || path.starts_with("postgresql://"); }

namespace {

// The password a DSN carries, if any: the log redactor is told it.
std::string DsnPassword(std::string_view dsn) {
  const size_t scheme = dsn.find("://");
  if (scheme != std::string_view::npos) {
    const size_t at = dsn.find('@', scheme + 3);
    const size_t colon = dsn.find(':', scheme + 3);
    if (at != std::string_view::npos && colon != std::string_view::npos && colon < at) {
      return std::string(dsn.substr(colon + 1, at - colon - 1));
    }
  }
  if (const size_t p = dsn.find("password="); p != std::string_view::npos) {
    const size_t end = dsn.find('&', p);
    return std::string(dsn.substr(p + 9, end == std::string_view::npos ? std::string_view::npos : end - p - 9));
  }
  return "";
}

}  // namespace

std::string RedactDsn(std::string_view dsn) {
  // scheme://user:password@host/… → scheme://user@host/…; a password=… parameter too.
  std::string s(dsn);
  const size_t scheme = s.find("://");
  if (scheme != std::string::npos) {
    const size_t at = s.find('@', scheme + 3);
    const size_t colon = s.find(':', scheme + 3);
    if (at != std::string::npos && colon != std::string::npos && colon < at) s.erase(colon, at - colon);
  }
  for (size_t p = s.find("password="); p != std::string::npos; p = s.find("password=", p + 1)) {
    size_t end = s.find('&', p);
    if (end == std::string::npos) end = s.size();
    s.replace(p, end - p, "password=***");
  }
  return s;
}

std::string Translate(std::string_view sql, bool* returns_id) {
  std::string s = Trimmed(sql);
  const std::string up = Upper(s.substr(0, 40));
  if (up.starts_with("PRAGMA INTEGRITY_CHECK")) return "SELECT 'ok'";
  if (up.starts_with("PRAGMA USER_VERSION")) return "SELECT version FROM lw_schema";
  if (up.starts_with("PRAGMA")) return "";
  bool ignore = false;
  if (up.starts_with("INSERT OR IGNORE INTO")) {
    s = "INSERT INTO" + s.substr(21);
    ignore = true;
  }
  std::string out;
  out.reserve(s.size() + 24);
  int next = 1;
  bool quoted = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '\'') quoted = !quoted;
    if (c != '?' || quoted) {
      out += c;
      continue;
    }
    if (i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
      out += '$';
    } else {
      out += '$' + std::to_string(next++);
    }
  }
  if (ignore) out += " ON CONFLICT DO NOTHING";
  const bool id = HasRowId(out);
  if (id) out += " RETURNING id";
  if (returns_id) *returns_id = id;
  return out;
}

Result<std::unique_ptr<Conn>> Conn::Connect(const std::string& dsn, std::string_view application) {
  LW_RETURN_IF_ERROR(LoadLibpq().status());
  if (std::string pw = DsnPassword(dsn); !pw.empty()) RegisterSecret(pw);
  const std::string app(application);
  const char* keys[] = {"dbname", "application_name", "connect_timeout", nullptr};
  const char* values[] = {dsn.c_str(), app.c_str(), "10", nullptr};
  PGconn* c = Pq().PQconnectdbParams(keys, values, 1);
  if (c == nullptr) return ResourceExhausted("connecting to PostgreSQL: out of memory");
  if (Pq().PQstatus(c) != CONNECTION_OK) {
    std::string why = Trimmed(Pq().PQerrorMessage(c));
    Pq().PQfinish(c);
    return Unavailable("connecting to PostgreSQL at " + RedactDsn(dsn) + ": " + why);
  }
  auto conn = std::unique_ptr<Conn>(new Conn(c, RedactDsn(dsn)));
  // Quiet NOTICEs ("relation already exists, skipping") stay off stderr.
  Pq().PQsetNoticeProcessor(c, [](void*, const char*) {}, nullptr);
  LW_RETURN_IF_ERROR(conn->Exec("SET client_min_messages = warning"));
  return conn;
}

Conn::~Conn() { Pq().PQfinish(conn_); }

Status Conn::ResultStatus(PGresult* r, std::string_view what) {
  const ExecStatusType t = r ? Pq().PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (t == PGRES_COMMAND_OK || t == PGRES_TUPLES_OK) return Status::Ok();
  std::string msg = r ? Trimmed(Pq().PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) ? Pq().PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY)
                                                                                 : Pq().PQresultErrorMessage(r))
                      : Trimmed(Pq().PQerrorMessage(conn_));
  const char* state = r ? Pq().PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  const std::string code = state ? state : "";
  const std::string full = std::string(what) + ": " + msg + (code.empty() ? "" : " [" + code + "]") + " (" + name_ + ")";
  if (Pq().PQstatus(conn_) != CONNECTION_OK || code.starts_with("08") || code.starts_with("57P") || code == "53300") {
    return Unavailable(full);
  }
  if (code == "23505") return AlreadyExists(full);
  if (code == "53100") return ResourceExhausted(full);
  if (code == "40001" || code == "40P01" || code == "55P03" || code == "57014" || code == "25P03") {
    return Unavailable(full);
  }
  if (code == "42501") return PermissionDenied(full);
  return Internal(full);
}

Status Conn::Fenced(std::string_view why) {
  Status s = FailedPrecondition("this loopwarden is no longer the leader (lease token " + std::to_string(*fence_) +
                                " " + std::string(why) + "); it writes and acts on nothing more");
  if (fence_lost_ && !fence_reported_) {
    fence_reported_ = true;
    fence_lost_(s);
  }
  return s;
}

Status Conn::CheckFence() {
  if (!fence_) return Status::Ok();
  const std::string token = std::to_string(*fence_);
  const char* v[] = {token.c_str()};
  // FOR SHARE: a takeover (an UPDATE of this row) waits until this transaction ends.
  PGresult* r = Pq().PQexecParams(conn_,
                             "SELECT 1 FROM lw_lease WHERE name = 'leader' AND token = $1::bigint "
                             "AND expires_at > clock_timestamp() FOR SHARE",
                             1, nullptr, v, nullptr, nullptr, 0);
  Status s = ResultStatus(r, "checking the leader lease");
  const bool held = s.ok() && Pq().PQntuples(r) == 1;
  Pq().PQclear(r);
  if (!s.ok()) return s;
  if (!held) return Fenced("has expired or was taken over");
  return Status::Ok();
}

Status Conn::Begin() {
  if (Pq().PQstatus(conn_) != CONNECTION_OK) Pq().PQreset(conn_);
  PGresult* r = Pq().PQexec(conn_, "BEGIN");
  Status s = ResultStatus(r, "BEGIN");
  Pq().PQclear(r);
  if (!s.ok()) return s;
  in_txn_ = true;
  if (Status f = CheckFence(); !f.ok()) {
    Pq().PQclear(Pq().PQexec(conn_, "ROLLBACK"));
    in_txn_ = false;
    return f;
  }
  return Status::Ok();
}

Status Conn::Exec(std::string_view sql) {
  const std::string up = Upper(Trimmed(sql).substr(0, 20));
  if (up == "BEGIN" || up == "BEGIN IMMEDIATE") return Begin();
  if (up == "COMMIT" || up == "ROLLBACK") {
    PGresult* r = Pq().PQexec(conn_, up.c_str());
    Status s = ResultStatus(r, up);
    Pq().PQclear(r);
    in_txn_ = false;
    return s;
  }
  const std::string translated = Translate(sql);
  if (translated.empty()) return Status::Ok();  // a PRAGMA: SQLite's business only
  return Run(translated, {}, nullptr, "executing " + translated.substr(0, 40));
}

Status Conn::Run(const std::string& sql, const std::vector<std::optional<std::string>>& params, PGresult** out,
                 std::string_view what) {
  const bool wrap = fence_ && !in_txn_ && IsWrite(sql);
  if (wrap) {
    LW_RETURN_IF_ERROR(Begin());
  } else if (!in_txn_ && Pq().PQstatus(conn_) != CONNECTION_OK) {
    Pq().PQreset(conn_);
  }
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
  PGresult* r = params.empty() ? Pq().PQexec(conn_, sql.c_str())
                               : Pq().PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr,
                                              values.data(), nullptr, nullptr, 0);
  Status s = ResultStatus(r, what);
  if (s.ok()) {
    changes_ = std::atoi(Pq().PQcmdTuples(r));
    if (sql.ends_with(" RETURNING id") && Pq().PQntuples(r) == 1) last_id_ = std::strtoll(Pq().PQgetvalue(r, 0, 0), nullptr, 10);
  }
  if (wrap) {
    PGresult* end = Pq().PQexec(conn_, s.ok() ? "COMMIT" : "ROLLBACK");
    Status e = ResultStatus(end, "COMMIT");
    Pq().PQclear(end);
    in_txn_ = false;
    if (s.ok()) s = e;
  }
  if (!s.ok() || out == nullptr) {
    Pq().PQclear(r);
    return s;
  }
  *out = r;
  return Status::Ok();
}

Result<double> Conn::LeaseSecondsLeft() {
  if (!fence_) return 1e9;
  const std::string token = std::to_string(*fence_);
  PGresult* r = nullptr;
  LW_RETURN_IF_ERROR(Run("SELECT EXTRACT(EPOCH FROM expires_at - clock_timestamp())::float8 FROM lw_lease "
                         "WHERE name = 'leader' AND token = $1::bigint",
                         {token}, &r, "reading the leader lease"));
  const bool held = Pq().PQntuples(r) == 1;
  const double left = held ? std::strtod(Pq().PQgetvalue(r, 0, 0), nullptr) : 0;
  Pq().PQclear(r);
  if (!held || left <= 0) return Fenced(held ? "has expired" : "was taken over");
  return left;
}

Statement::~Statement() { Pq().PQclear(res_); }

void Statement::Bind(int i, std::optional<std::string> v) {
  if (res_) Reset();
  if (static_cast<int>(params_.size()) < i) params_.resize(static_cast<size_t>(i));
  params_[static_cast<size_t>(i - 1)] = std::move(v);
}

Result<bool> Statement::Step() {
  if (res_ == nullptr) {
    LW_RETURN_IF_ERROR(conn_->Run(sql_, params_, &res_, "executing " + sql_.substr(0, 60)));
    row_ = 0;
  } else {
    ++row_;
  }
  return row_ < Pq().PQntuples(res_);
}

void Statement::Reset() {
  Pq().PQclear(res_);
  res_ = nullptr;
  row_ = -1;
}

int Statement::Columns() const { return res_ ? Pq().PQnfields(res_) : 0; }
std::string_view Statement::ColumnName(int col) const { return res_ ? Pq().PQfname(res_, col) : ""; }
bool Statement::IsNull(int col) const { return res_ == nullptr || Pq().PQgetisnull(res_, row_, col) == 1; }
std::string_view Statement::Value(int col) const {
  if (IsNull(col)) return {};
  return std::string_view(Pq().PQgetvalue(res_, row_, col), static_cast<size_t>(Pq().PQgetlength(res_, row_, col)));
}
int64_t Statement::Int(int col) const {
  const std::string_view v = Value(col);
  if (v == "t") return 1;
  if (v == "f" || v.empty()) return 0;
  // SUM over bigint is numeric, and may print a fraction-free "12.000".
  if (v.find_first_of(".eE") != std::string_view::npos) return static_cast<int64_t>(std::strtod(std::string(v).c_str(), nullptr));
  return std::strtoll(std::string(v).c_str(), nullptr, 10);
}
double Statement::Double(int col) const {
  const std::string_view v = Value(col);
  return v.empty() ? 0 : std::strtod(std::string(v).c_str(), nullptr);
}

}  // namespace loopwarden::store::pg
