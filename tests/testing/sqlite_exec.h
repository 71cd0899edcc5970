#pragma once
// Runs SQL on a SQLite database beside the store's own connection: tests inject faults
// on the real file with triggers ("writing the outcome fails") and drop them again.

#include <doctest/doctest.h>
#include <sqlite3.h>

#include <string>

namespace loopwarden::testing {

inline void SqliteExec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  const std::string message = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  REQUIRE_MESSAGE(rc == SQLITE_OK, message);
}

}  // namespace loopwarden::testing
