// The action journal's typed protocol: intent states and idempotency keys, and the
// reads the executor decides on.
#include <doctest/doctest.h>

#include "tests/store/fixtures.h"
#include "tests/testing/sqlite_exec.h"
#include "tests/testing/temp_dir.h"

using namespace loopwarden;
using namespace loopwarden::testing;
using namespace std::chrono_literals;
using store::IntentKey;
using store::IntentState;

namespace {

store::Intent IntentFor(const IntentKey& k) {
  return store::Intent{.idempotency_key = k.ToString(), .resource = "bt/baseten.run/a", .policy = "idle",
                       .action = "deactivate", .request = "POST …", .created_at = kT0};
}

}  // namespace

TEST_CASE("intent keys: every attempt and promotion of a mark round-trips and shares its mark") {
  // A policy name may hold '|', and an id '#': the key is read from its end.
  const IntentKey first = IntentKey::ForMark("idle|gpu", "bt/baseten.run/a#1", ActionType::kPromoteThenDelete, kT0);
  CHECK(first.ToString() == "idle|gpu|bt/baseten.run/a#1|promote_then_delete|" + std::to_string(ToUnixMicros(kT0)));
  for (const IntentKey& k : {first, first.Attempt(2), first.Attempt(3).Promotion(1), first.Attempt(3).Promotion(4)}) {
    CAPTURE(k.ToString());
    auto parsed = IntentKey::Parse(k.ToString());
    REQUIRE(parsed.has_value());
    CHECK(*parsed == k);
    CHECK(parsed->mark() == first.mark());
  }
  CHECK(IntentKey::Parse(first.Attempt(3).Promotion(4).ToString())->attempt() == 3);
  CHECK(IntentKey::Parse(first.Attempt(3).Promotion(4).ToString())->promotion());
  CHECK_FALSE(IntentKey::Parse(first.Attempt(2).ToString())->promotion());
  for (std::string bad : {"", "idle", "idle|a|deactivate|", "idle|a|fly|12", "|deactivate|12", "idle|a|deactivate|12#1",
                          "idle|a|deactivate|12#x|promote#0"}) {
    CAPTURE(bad);
    CHECK_FALSE(IntentKey::Parse(bad).has_value());
  }
  for (IntentState s : {IntentState::kOpen, IntentState::kDone, IntentState::kFailed, IntentState::kSkipped,
                        IntentState::kAbandoned}) {
    CHECK(store::ParseIntentState(store::IntentStateName(s)) == s);
  }
  CHECK_FALSE(store::ParseIntentState("finished").has_value());
}

TEST_CASE("intents of a mark: all its attempts and promotions, not a mark whose time merely starts the same") {
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  const IntentKey mark = IntentKey::ForMark("idle", "bt/baseten.run/a", ActionType::kDeactivate, kT0);
  // Marked at kT0 and at kT0 + 1 µs x 10: the second's text starts with the first's.
  const IntentKey other = IntentKey::ForMark("idle", "bt/baseten.run/a", ActionType::kDeactivate,
                                             FromUnixMicros(ToUnixMicros(kT0) * 10 + 1));
  REQUIRE(other.ToString().starts_with(mark.ToString()));
  for (const IntentKey& k : {mark, mark.Attempt(2), mark.Attempt(2).Promotion(1), other}) {
    REQUIRE((*s)->BeginIntent(IntentFor(k)).ok());
  }
  auto of = (*s)->IntentsOfMark(mark);
  REQUIRE(of.ok());
  REQUIRE(of->size() == 3);
  for (const store::Intent& i : *of) CHECK(IntentKey::Parse(i.idempotency_key)->mark() == mark.mark());
  // A key of this mark that no longer reads could be an attempt that took effect:
  // an error, so nothing is called on its strength.
  SqliteExec((*s)->path(), "UPDATE intents SET idempotency_key = '" + mark.ToString() + "#0' WHERE id = 2");
  auto damaged = (*s)->IntentsOfMark(mark);
  REQUIRE_FALSE(damaged.ok());
  CHECK(damaged.status().code() == StatusCode::kDataLoss);
  CHECK(damaged.status().message().find("intent 2") != std::string::npos);
}

TEST_CASE("an intent row with a state loopwarden never writes is named, not read as open or done") {
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  auto id = (*s)->BeginIntent(IntentFor(IntentKey::ForMark("idle", "bt/baseten.run/a", ActionType::kDeactivate, kT0)));
  REQUIRE(id.ok());
  SqliteExec((*s)->path(), "UPDATE intents SET state = 'finished'");
  auto all = (*s)->IntentsSince(kT0 - 1h);
  REQUIRE_FALSE(all.ok());
  CHECK(all.status().message().find("unknown state 'finished'") != std::string::npos);
}
