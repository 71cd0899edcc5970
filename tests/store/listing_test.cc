// Store::Listing: one account's listing recorded resource by resource, as the poll's
// adapters build them, in one transaction.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "store/sqlite.h"
#include "tests/store/fixtures.h"
#include "tests/testing/temp_dir.h"

using namespace loopwarden;
using namespace loopwarden::testing;
using namespace std::chrono_literals;

namespace {

// Records `fleet` as one listing of account bt, resource by resource.
Result<store::IngestStats> RecordListing(store::Store& s, std::vector<ListedResource> fleet, Time now,
                                         const store::PriceBook& prices, bool complete = true) {
  auto listing = s.BeginListing("bt", "bt", now, prices);
  for (ListedResource& r : fleet) listing->Add(std::move(r));
  return listing->Finish(complete);
}

int64_t Count(const std::string& path, const std::string& table) {
  auto db = store::Db::Open(path, false, true);
  REQUIRE(db.ok());
  return (*db)->QueryInt("SELECT COUNT(*) FROM " + table).value();
}

void CheckSameStats(const store::IngestStats& a, const store::IngestStats& b) {
  CHECK(a.resources_inserted == b.resources_inserted);
  CHECK(a.resources_updated == b.resources_updated);
  CHECK(a.transitions == b.transitions);
  CHECK(a.activity_rows == b.activity_rows);
  CHECK(a.ledger_rows == b.ledger_rows);
  CHECK(a.counter_rows == b.counter_rows);
  CHECK(a.deleted == b.deleted);
  CHECK(a.unknown == b.unknown);
}

}  // namespace

TEST_CASE("a listing recorded resource by resource leaves what one Ingest of the same listing leaves") {
  TempDir dir;
  const store::PriceBook prices = Prices();
  auto batch = store::Store::Open({.path = dir.File("batch.db")});
  auto streamed = store::Store::Open({.path = dir.File("streamed.db")});
  REQUIRE(batch.ok());
  REQUIRE(streamed.ok());
  std::vector<ListedResource> fleet;
  for (int i = 0; i < 200; ++i) fleet.push_back(Run("r" + std::to_string(i), 8, i % 3 == 0));
  auto both = [&](Time now, bool complete) {
    auto a = (*batch)->Ingest(Snap(fleet, complete), now, prices);
    auto b = RecordListing(**streamed, fleet, now, prices, complete);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CheckSameStats(*a, *b);
    return *b;
  };
  CHECK(both(kT0, true).resources_inserted == 200);
  // A stop, a resource gone from a complete listing and a new one.
  fleet[3].native_status = "INACTIVE";
  fleet[3].lifecycle = Lifecycle::kStopped;
  fleet[3].billing.billable = false;
  fleet.erase(fleet.begin() + 10);
  fleet.push_back(Run("r500"));
  const store::IngestStats second = both(kT0 + 60s, true);
  CHECK(second.deleted == 1);
  CHECK(second.resources_inserted == 1);
  CHECK(second.transitions == 3);
  // One more missing from a partial listing: unknown, not gone.
  fleet.erase(fleet.begin() + 20);
  CHECK(both(kT0 + 120s, false).unknown == 1);
  // The same states, in memory and in the file.
  REQUIRE((*batch)->resources().size() == 201);
  REQUIRE((*streamed)->resources().size() == 201);
  for (const store::ResourceState& st : (*batch)->resources()) {
    const store::ResourceState* a = &st;
    const store::ResourceState* b = (*streamed)->Find(a->resource.Key());
    REQUIRE(b != nullptr);
    CHECK(b->fingerprint == a->fingerprint);
    CHECK(b->resource.lifecycle == a->resource.lifecycle);
    CHECK(b->deleted_at.has_value() == a->deleted_at.has_value());
    CHECK(b->open_gpu.has_value() == a->open_gpu.has_value());
  }
  for (const char* table : {"resources", "transitions", "ledger", "activity"}) {
    CAPTURE(table);
    CHECK(Count(dir.File("streamed.db"), table) == Count(dir.File("batch.db"), table));
  }
}

TEST_CASE("while a listing is being recorded, another listing and an Ingest are refused, and the first still commits") {
  TempDir dir;
  const store::PriceBook prices = Prices();
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  auto first = (*s)->BeginListing("bt", "bt", kT0, prices);
  first->Add(Run("r1"));
  // A second account's listing begun meanwhile does not join the open transaction.
  auto second = (*s)->BeginListing("bt", "other", kT0, prices);
  second->Add(Run("x1"));
  auto refused = second->Finish(true);
  CHECK(refused.status().code() == StatusCode::kFailedPrecondition);
  auto snap = Snap({Run("x2")});
  CHECK((*s)->Ingest(std::move(snap), kT0, prices).status().code() == StatusCode::kFailedPrecondition);
  auto done = first->Finish(true);
  REQUIRE(done.ok());
  CHECK(done->resources_inserted == 1);
  CHECK((*s)->resources().size() == 1);
  CHECK(Count(dir.File("lw.db"), "resources") == 1);
  // Finished once only; and with the transaction closed, the next listing records.
  CHECK_FALSE(first->Finish(true).ok());
  auto next = RecordListing(**s, {Run("r1"), Run("r2")}, kT0 + 60s, prices);
  REQUIRE(next.ok());
  CHECK(next->resources_inserted == 1);
}

TEST_CASE("a listing dropped unfinished is rolled back: nothing it added stays, in memory or in the file") {
  TempDir dir;
  const store::PriceBook prices = Prices();
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  REQUIRE(RecordListing(**s, {Run("r1")}, kT0, prices).ok());
  {
    auto abandoned = (*s)->BeginListing("bt", "bt", kT0 + 60s, prices);
    abandoned->Add(Run("r2"));
    abandoned->Add(Run("r3"));
    CHECK((*s)->resources().size() == 3);  // in the open transaction
  }
  CHECK((*s)->resources().size() == 1);
  CHECK((*s)->Find(Run("r2").Key()) == nullptr);
  CHECK(Count(dir.File("lw.db"), "resources") == 1);
  CHECK(Count(dir.File("lw.db"), "transitions") == 1);
  // r1 was not judged missing by the listing that never finished.
  const store::ResourceState* r1 = (*s)->Find(Run("r1").Key());
  REQUIRE(r1 != nullptr);
  CHECK_FALSE(r1->deleted_at.has_value());
  auto next = RecordListing(**s, {Run("r1"), Run("r2")}, kT0 + 120s, prices);
  REQUIRE(next.ok());
  CHECK(next->resources_inserted == 1);
}

TEST_CASE("an empty listing still says what is gone, and a read-only store refuses a listing") {
  TempDir dir;
  const store::PriceBook prices = Prices();
  {
    auto s = store::Store::Open({.path = dir.File("lw.db")});
    REQUIRE(s.ok());
    REQUIRE(RecordListing(**s, {Run("r1"), Run("r2")}, kT0, prices).ok());
    auto empty = RecordListing(**s, {}, kT0 + 60s, prices);
    REQUIRE(empty.ok());
    CHECK(empty->deleted == 2);
    for (const store::ResourceState& st : (*s)->resources()) CHECK(st.deleted_at.has_value());
  }
  auto ro = store::Store::Open({.path = dir.File("lw.db"), .read_only = true});
  REQUIRE(ro.ok());
  auto refused = RecordListing(**ro, {Run("r3")}, kT0 + 120s, prices);
  CHECK(refused.status().code() == StatusCode::kFailedPrecondition);
  CHECK(Count(dir.File("lw.db"), "resources") == 2);
}
