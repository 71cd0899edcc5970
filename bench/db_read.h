#pragma once
// Reads a finished run's loopwarden database directly (read-only SQLite).

#include <sqlite3.h>

#include <functional>
#include <stdexcept>
#include <string>

namespace loopwarden::bench {

class DbReader {
 public:
  explicit DbReader(const std::string& path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
      throw std::runtime_error("cannot open " + path);
    }
  }
  ~DbReader() { sqlite3_close(db_); }
  // Calls `row` for each result row of `sql` with ?1 bound to `arg`.
  void Query(const std::string& sql, int64_t arg, const std::function<void(sqlite3_stmt*)>& row) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
      throw std::runtime_error(std::string("bad query: ") + sqlite3_errmsg(db_));
    }
    sqlite3_bind_int64(st, 1, arg);
    while (sqlite3_step(st) == SQLITE_ROW) row(st);
    sqlite3_finalize(st);
  }

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace loopwarden::bench
