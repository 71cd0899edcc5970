// store/sqlite.h: a statement reset for reuse keeps nothing of its last use, and a
// statement's journal stays in memory.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <string>

#include "store/sqlite.h"
#include "tests/testing/temp_dir.h"

using namespace loopwarden;
using namespace loopwarden::testing;

TEST_CASE("a statement reset after a bind or a step starts over with nothing bound, however often it is reset") {
  TempDir dir;
  auto db = store::Db::Open(dir.File("stmt.db"), true, false);
  REQUIRE(db.ok());
  REQUIRE((*db)->Exec("CREATE TABLE t (v INTEGER)").ok());
  REQUIRE((*db)->Exec("INSERT INTO t VALUES (1), (2), (3)").ok());

  // A bind, then a reset: the parameter is unbound (NULL) again.
  auto echo = (*db)->Prepare("SELECT ?1");
  REQUIRE(echo.ok());
  echo->Bind(1, int64_t{42});
  echo->Reset();
  REQUIRE(echo->Step().value());
  CHECK(echo->IsNull(0));
  // Reset twice in a row (as Run() then the store's statement cache do), then bound
  // and read: the second reset must not keep the statement from starting over.
  echo->Reset();
  echo->Reset();
  echo->Bind(1, std::string_view("x"));
  REQUIRE(echo->Step().value());
  CHECK(echo->TextView(0) == "x");
  echo->Reset();
  REQUIRE(echo->Step().value());
  CHECK(echo->IsNull(0));

  // A query stepped part way, then reset: the next step reads its first row again.
  auto rows = (*db)->Prepare("SELECT v FROM t ORDER BY v");
  REQUIRE(rows.ok());
  REQUIRE(rows->Step().value());
  REQUIRE(rows->Step().value());
  CHECK(rows->Int(0) == 2);
  rows->Reset();
  REQUIRE(rows->Step().value());
  CHECK(rows->Int(0) == 1);

  // Run() resets: a statement run with a value, then run with none bound, inserts NULL.
  auto insert = (*db)->Prepare("INSERT INTO t VALUES (?1)");
  REQUIRE(insert.ok());
  REQUIRE(insert->Bind(1, int64_t{7}).Run().ok());
  REQUIRE(insert->Run().ok());
  auto count = (*db)->Prepare("SELECT COUNT(*) FROM t WHERE v IS NULL");
  REQUIRE(count.ok());
  REQUIRE(count->Step().value());
  CHECK(count->Int(0) == 1);
}

namespace {

// The default VFS with its opens counted by kind: how a test sees SQLite make a file.
struct CountingVfs {
  static inline sqlite3_vfs* base = nullptr;
  static inline int subjournals = 0;
  static int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags, int* out) {
    if (flags & SQLITE_OPEN_SUBJOURNAL) ++subjournals;
    return base->xOpen(base, name, f, flags, out);
  }
  sqlite3_vfs vfs{};
  CountingVfs() {
    base = sqlite3_vfs_find(nullptr);
    vfs = *base;  // its methods and their pAppData, under another name
    vfs.zName = "lw-counting";
    vfs.xOpen = &CountingVfs::Open;
    subjournals = 0;
    REQUIRE(sqlite3_vfs_register(&vfs, 1) == SQLITE_OK);
  }
  ~CountingVfs() { sqlite3_vfs_unregister(&vfs); }
};

}  // namespace

TEST_CASE("a batch of rows that changes many stored pages keeps its statement journal in memory, not in a file") {
  TempDir dir;
  // The first open configures SQLite (before anything else initializes it).
  REQUIRE(store::Db::Open(dir.File("first.db"), true, false).ok());
  CountingVfs counting;
  auto db = store::Db::Open(dir.File("batch.db"), true, false);
  REQUIRE(db.ok());
  REQUIRE((*db)->Exec("PRAGMA journal_mode = WAL").ok());
  REQUIRE((*db)->Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT NOT NULL UNIQUE, pad TEXT)").ok());
  // 4,000 keys of 100 characters over about 130 pages of the unique index: 64 more
  // between them change about 64 of those pages, each copied into the statement
  // journal first (a multi-row insert that may fail on a duplicate undoes its
  // statement alone): some 260 KB.
  REQUIRE((*db)->Exec("WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 3999) "
                      "INSERT INTO t (k, pad) SELECT printf('%0100d', i * 64), 'p' FROM n").ok());
  const int before = CountingVfs::subjournals;
  REQUIRE((*db)->Exec("BEGIN IMMEDIATE").ok());
  REQUIRE((*db)->Exec("WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 63) "
                      "INSERT INTO t (k, pad) SELECT printf('%0100d', i * 3968 + 1), 'p' FROM n").ok());
  auto rows = (*db)->QueryInt("SELECT COUNT(*) FROM t");
  REQUIRE((*db)->Exec("COMMIT").ok());
  REQUIRE(rows.ok());
  CHECK(*rows == 4064);
  CHECK(CountingVfs::subjournals - before == 0);  // SQLite's own default moved it to a file past 64 KB
}
