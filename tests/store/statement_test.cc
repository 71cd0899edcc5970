// store/sqlite.h: a statement reset for reuse keeps nothing of its last use.
#include <doctest/doctest.h>

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
