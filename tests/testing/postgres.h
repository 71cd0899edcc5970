#pragma once
// A PostgreSQL schema of its own for one test, in the server scripts/test-postgres.sh
// started for this build tree (ctest's `postgres` fixture writes its DSN to
// <build>/postgres/dsn). Dropped, with everything in it, when the test ends.

#include <doctest/doctest.h>

#include <fstream>
#include <random>
#include <string>

#include "store/postgres.h"

namespace loopwarden::testing {

inline std::string PostgresServerDsn() {
  const char* b = std::getenv("LOOPWARDEN_BUILD_DIR");
  std::ifstream in(std::string(b && *b ? b : "build") + "/postgres/dsn");
  std::string dsn;
  std::getline(in, dsn);
  return dsn;
}

class PgSchema {
 public:
  PgSchema() {
    server_ = PostgresServerDsn();
    REQUIRE_MESSAGE(!server_.empty(), "no test PostgreSQL: run ctest (its postgres fixture starts one), or "
                                      "scripts/test-postgres.sh start <build>/postgres");
    std::random_device rd;
    name_ = "t" + std::to_string(rd()) + std::to_string(rd());
    auto c = store::pg::Conn::Connect(server_, "loopwarden test");
    REQUIRE_MESSAGE(c.ok(), c.status().message());
    REQUIRE((*c)->Exec("CREATE SCHEMA " + name_).ok());
    dsn_ = server_ + "?options=-csearch_path%3D" + name_;
  }
  ~PgSchema() {
    auto c = store::pg::Conn::Connect(server_, "loopwarden test");
    if (c.ok()) (void)(*c)->Exec("DROP SCHEMA " + name_ + " CASCADE");
  }
  PgSchema(const PgSchema&) = delete;
  PgSchema& operator=(const PgSchema&) = delete;
  // The DSN whose tables live in this schema.
  const std::string& dsn() const { return dsn_; }
  const std::string& name() const { return name_; }

 private:
  std::string server_, name_, dsn_;
};

}  // namespace loopwarden::testing
