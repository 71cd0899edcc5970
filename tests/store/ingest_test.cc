#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <set>

#include "core/hash.h"
#include "store/sqlite.h"
#include "tests/store/fixtures.h"
#include "tests/testing/temp_dir.h"

using namespace loopwarden;
using namespace loopwarden::testing;
using namespace std::chrono_literals;

TEST_CASE("ingest writes what changed and nothing for an unchanged fleet") {
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  std::vector<ListedResource> fleet;
  for (int i = 0; i < 1000; ++i) fleet.push_back(Run("r" + std::to_string(i), 8, i % 3 == 0));
  auto snap = Snap(fleet);
  auto first = (*s)->Ingest({&snap, 1}, kT0, Prices());
  REQUIRE(first.ok());
  CHECK(first->resources_inserted == 1000);
  CHECK(first->transitions == 1000);
  auto again = (*s)->Ingest({&snap, 1}, kT0 + 60s, Prices());
  REQUIRE(again.ok());
  CHECK(again->rows_written() == 0);
  fleet[3].native_status = "INACTIVE";  // r3 was billing (3 % 3 == 0)
  fleet[3].lifecycle = Lifecycle::kStopped;
  fleet[3].billing.billable = false;
  snap = Snap(fleet);
  auto changed = (*s)->Ingest({&snap, 1}, kT0 + 120s, Prices());
  REQUIRE(changed.ok());
  CHECK(changed->resources_updated == 1);
  CHECK(changed->transitions == 1);
  CHECK(changed->ledger_rows == 1);  // its interval closes
  fleet[4].billing.billable = true;
  snap = Snap(fleet);
  auto billing = (*s)->Ingest({&snap, 1}, kT0 + 180s, Prices());
  CHECK(billing->resources_updated == 1);
  CHECK(billing->transitions == 0);  // lifecycle and status unchanged
  CHECK(billing->ledger_rows == 1);  // an interval opens
}

TEST_CASE("transitions are written in batches, every one of them, with its fields, the batch's tail included") {
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  // 150 first sights: two full batches and a tail written one by one.
  std::vector<ListedResource> fleet;
  for (int i = 0; i < 150; ++i) fleet.push_back(Run("r" + std::to_string(i)));
  auto snap = Snap(fleet);
  REQUIRE((*s)->Ingest({&snap, 1}, kT0, Prices()).ok());
  // Then a stop in the first batch and in the tail, and one gone from the listing.
  for (int i : {0, 149}) {
    fleet[i].native_status = "INACTIVE";
    fleet[i].lifecycle = Lifecycle::kStopped;
    fleet[i].billing.billable = false;
  }
  fleet.erase(fleet.begin() + 100);
  snap = Snap(fleet);
  auto second = (*s)->Ingest({&snap, 1}, kT0 + 60s, Prices());
  REQUIRE(second.ok());
  CHECK(second->transitions == 3);
  auto db = store::Db::Open(dir.File("lw.db"), false, true);
  REQUIRE(db.ok());
  CHECK((*db)->QueryInt("SELECT COUNT(*) FROM transitions").value() == 153);
  auto row = [&](const std::string& id, int64_t at) {
    auto q = (*db)->Prepare("SELECT COALESCE(t.from_lifecycle, '-') || ' ' || COALESCE(t.from_status, '-') || ' ' || "
                            "t.to_lifecycle || ' ' || t.to_status FROM transitions t JOIN resources r ON r.id = t.rid "
                            "WHERE r.native_id = ?1 AND t.at = ?2");
    REQUIRE(q.ok());
    q->Bind(1, id).Bind(2, at);
    auto more = q->Step();
    REQUIRE(more.ok());
    return *more ? q->Text(0) : std::string("none");
  };
  const int64_t t0 = ToUnixMicros(kT0), t1 = ToUnixMicros(kT0 + 60s);
  CHECK(row("r0", t0) == "- - running ACTIVE");
  CHECK(row("r63", t0) == "- - running ACTIVE");
  CHECK(row("r64", t0) == "- - running ACTIVE");
  CHECK(row("r149", t0) == "- - running ACTIVE");
  CHECK(row("r0", t1) == "running ACTIVE stopped INACTIVE");
  CHECK(row("r149", t1) == "running ACTIVE stopped INACTIVE");
  CHECK(row("r100", t1) == "running ACTIVE deleted ACTIVE");
}

TEST_CASE("missing from a complete listing is deleted, from a partial one, unknown") {
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  auto snap = Snap({Run("a"), Run("b"), Run("c")});
  REQUIRE((*s)->Ingest({&snap, 1}, kT0, Prices()).ok());
  auto partial = Snap({Run("a")}, /*complete=*/false);
  auto p = (*s)->Ingest({&partial, 1}, kT0 + 60s, Prices());
  REQUIRE(p.ok());
  CHECK(p->unknown == 2);
  CHECK(p->deleted == 0);
  const auto* b = (*s)->Find("bt/baseten.run/b");
  REQUIRE(b);
  CHECK(b->resource.lifecycle == Lifecycle::kUnknown);
  CHECK_FALSE(b->deleted_at.has_value());
  CHECK(b->open_gpu.has_value());  // unknown is not gone: its billing is kept
  auto complete = Snap({Run("a"), Run("b")});
  auto c = (*s)->Ingest({&complete, 1}, kT0 + 120s, Prices());
  CHECK(c->deleted == 1);
  CHECK((*s)->Find("bt/baseten.run/b")->resource.lifecycle == Lifecycle::kRunning);  // back from unknown
  const auto* gone = (*s)->Find("bt/baseten.run/c");
  CHECK(gone->resource.lifecycle == Lifecycle::kDeleted);
  CHECK(gone->deleted_at == kT0 + 120s);
  CHECK_FALSE(gone->open_gpu.has_value());
  // Another provider's listing never deletes this one's resources.
  store::Snapshot other{.provider = "fw", .account = "acme", .complete = true, .resources = {}};
  auto o = (*s)->Ingest({&other, 1}, kT0 + 180s, Prices());
  CHECK(o->deleted == 0);
}

TEST_CASE("idle_since comes from activity evidence, a missing signal is unknown, not idle") {
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  ListedResource r = Run("x");
  r.created_at = kT0 - 3h;
  r.activity.window_start = kT0 - 1h;  // metrics cover the last hour, all idle
  auto snap = Snap({r});
  REQUIRE((*s)->Ingest({&snap, 1}, kT0, Prices()).ok());
  const std::string key = "bt/baseten.run/x";
  CHECK((*s)->Find(key)->IdleSince() == kT0 - 1h);  // at least since the window began

  r.activity.last_active_at = kT0 - 20min;  // the provider shows work 20 minutes ago
  snap = Snap({r});
  REQUIRE((*s)->Ingest({&snap, 1}, kT0 + 1min, Prices()).ok());
  CHECK((*s)->Find(key)->IdleSince() == kT0 - 20min);

  r.activity.counters_fingerprint = CountersFingerprint("steps=100");
  snap = Snap({r});
  REQUIRE((*s)->Ingest({&snap, 1}, kT0 + 2min, Prices()).ok());
  r.activity.counters_fingerprint = CountersFingerprint("steps=120");  // a counter moved between polls
  snap = Snap({r});
  REQUIRE((*s)->Ingest({&snap, 1}, kT0 + 3min, Prices()).ok());
  CHECK((*s)->Find(key)->IdleSince() == kT0 + 3min);

  r.activity.known = false;  // the metrics call failed
  snap = Snap({r});
  auto st = (*s)->Ingest({&snap, 1}, kT0 + 4min, Prices());
  CHECK(st->activity_rows == 1);
  CHECK_FALSE((*s)->Find(key)->IdleSince().has_value());
  r.activity.known = true;
  snap = Snap({r});
  REQUIRE((*s)->Ingest({&snap, 1}, kT0 + 5min, Prices()).ok());
  CHECK((*s)->Find(key)->IdleSince() == kT0 + 3min);  // evidence is kept across the gap

  // It all survives a restart.
  s->reset();
  auto again = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(again.ok());
  CHECK((*again)->Find(key)->IdleSince() == kT0 + 3min);
  CHECK((*again)->Find(key)->activity_fingerprint == CountersFingerprint("steps=120"));
}

TEST_CASE("activity: a counter's fingerprint is kept through a listing without counters and a restart, so its move is still seen") {
  TempDir dir;
  const std::string key = "bt/baseten.run/x";
  ListedResource r = Run("x");
  r.created_at = kT0 - 3h;
  r.activity.window_start = kT0 - 1h;
  r.activity.last_active_at = kT0 - 30min;
  {
    auto s = store::Store::Open({.path = dir.File("lw.db")});
    REQUIRE(s.ok());
    r.activity.counters_fingerprint = CountersFingerprint("cached_prefill=5000,prefill=20000,sample=8000,train=30000");  // longer than SSO
    auto snap = Snap({r});
    REQUIRE((*s)->Ingest({&snap, 1}, kT0, Prices()).ok());
    CHECK((*s)->Find(key)->IdleSince() == kT0 - 30min);
    // A poll whose signals were not read: no fingerprint, and unknown (the row is
    // written: `known` changed).
    r.activity.counters_fingerprint = 0;
    r.activity.known = false;
    snap = Snap({r});
    auto unread = (*s)->Ingest({&snap, 1}, kT0 + 1min, Prices());
    REQUIRE(unread.ok());
    CHECK(unread->activity_rows == 1);
    CHECK_FALSE((*s)->Find(key)->IdleSince().has_value());
    CHECK((*s)->Find(key)->activity_fingerprint ==
          CountersFingerprint("cached_prefill=5000,prefill=20000,sample=8000,train=30000"));
  }
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  CHECK((*s)->Find(key)->activity_fingerprint ==
        CountersFingerprint("cached_prefill=5000,prefill=20000,sample=8000,train=30000"));
  // The same counters after the restart: not activity.
  r.activity.known = true;
  r.activity.counters_fingerprint = CountersFingerprint("cached_prefill=5000,prefill=20000,sample=8000,train=30000");
  auto snap = Snap({r});
  REQUIRE((*s)->Ingest({&snap, 1}, kT0 + 2min, Prices()).ok());
  CHECK((*s)->Find(key)->IdleSince() == kT0 - 30min);
  // One moved: activity when it was seen.
  r.activity.counters_fingerprint = CountersFingerprint("cached_prefill=5000,prefill=20000,sample=8000,train=30100");
  snap = Snap({r});
  REQUIRE((*s)->Ingest({&snap, 1}, kT0 + 3min, Prices()).ok());
  CHECK((*s)->Find(key)->IdleSince() == kT0 + 3min);
}

TEST_CASE("activity: the row keeps the counters' fingerprint, and a row an older version wrote with their text reads the same") {
  TempDir dir;
  const std::string key = "bt/baseten.run/x";
  const std::string counters = "cached_prefill=5000,prefill=20000,sample=8000,train=30000";
  ListedResource r = Run("x");
  r.created_at = kT0 - 3h;
  r.activity.window_start = kT0 - 1h;
  r.activity.last_active_at = kT0 - 30min;
  r.activity.counters_fingerprint = CountersFingerprint(counters);
  {
    auto s = store::Store::Open({.path = dir.File("lw.db")});
    REQUIRE(s.ok());
    auto snap = Snap({r});
    REQUIRE((*s)->Ingest({&snap, 1}, kT0, Prices()).ok());
  }
  {
    auto db = store::Db::Open(dir.File("lw.db"), false, false);
    REQUIRE(db.ok());
    auto q = (*db)->Prepare("SELECT fingerprint FROM activity");
    REQUIRE(q.ok());
    REQUIRE(q->Step().value());
    CHECK(q->Text(0).size() == 17);  // "#" and 16 hex digits, not the text
    CHECK(store::StoredCountersFingerprint(q->Text(0)) == CountersFingerprint(counters));
    // What a loopwarden before this one wrote: the text itself, and the resource's
    // token counts in its data.
    REQUIRE((*db)->Exec("UPDATE activity SET fingerprint = '" + counters + "'").ok());
    REQUIRE((*db)->Exec("UPDATE resources SET data = json_set(data, '$.tokens', json('{\"train\":5}'))").ok());
  }
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  CHECK((*s)->Find(key)->activity_fingerprint == CountersFingerprint(counters));
  CHECK((*s)->Find(key)->resource.name == r.name);  // the data's "tokens" is left unread
  // The same counters listed again: not activity.
  auto snap = Snap({r});
  REQUIRE((*s)->Ingest({&snap, 1}, kT0 + 1min, Prices()).ok());
  CHECK((*s)->Find(key)->IdleSince() == kT0 - 30min);
  // A moved one is.
  r.activity.counters_fingerprint = CountersFingerprint("cached_prefill=5000,prefill=20000,sample=8000,train=30100");
  snap = Snap({r});
  REQUIRE((*s)->Ingest({&snap, 1}, kT0 + 2min, Prices()).ok());
  CHECK((*s)->Find(key)->IdleSince() == kT0 + 2min);
  CHECK(store::StoredCountersText(0).empty());
  CHECK(store::StoredCountersFingerprint("#zz00000000000000") == CountersFingerprint("#zz00000000000000"));
}

TEST_CASE("activity: evidence older than the signals' window bounds nothing, and a window after creation is a lower bound that survives a restart") {
  TempDir dir;
  {
    auto s = store::Store::Open({.path = dir.File("lw.db")});
    REQUIRE(s.ok());
    ListedResource old = Run("old");
    old.created_at = kT0 - 10h;
    old.activity.known = true;
    old.activity.window_start = kT0 - 1h;
    // A frozen updateTime from long ago: the signals only cover the last hour.
    old.activity.last_active_at = kT0 - 9h;
    ListedResource young = Run("young");
    young.created_at = kT0 - 20min;
    young.activity.known = true;
    young.activity.window_start = kT0 - 1h;
    auto snap = Snap({old, young});
    REQUIRE((*s)->Ingest({&snap, 1}, kT0, Prices()).ok());
    const store::ResourceState* o = (*s)->Find(old.Key());
    REQUIRE(o);
    CHECK(o->IdleSince() == kT0 - 1h);       // not 9 h: nothing before the window was seen
    CHECK(o->observed_since == kT0 - 1h);    // ...so "idle 1 h" means at least 1 h
    const store::ResourceState* y = (*s)->Find(young.Key());
    REQUIRE(y);
    CHECK(y->IdleSince() == kT0 - 20min);    // since creation: exact
    CHECK_FALSE(y->observed_since.has_value());
  }
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  const store::ResourceState* o = (*s)->Find(Run("old").Key());
  REQUIRE(o);
  CHECK(o->observed_since == kT0 - 1h);
  CHECK(o->IdleSince() == kT0 - 1h);
}

TEST_CASE("a snapshot the caller gives up is moved in, and the store ends up as with a copy") {
  TempDir dir;
  auto copied = store::Store::Open({.path = dir.File("copied.db")});
  auto moved = store::Store::Open({.path = dir.File("moved.db")});
  REQUIRE(copied.ok());
  REQUIRE(moved.ok());
  // First sight, then unchanged but for activity and tokens, then changed, then one gone.
  std::vector<ListedResource> fleet = {Run("a"), Run("b", 8, false), Run("c")};
  std::vector<std::vector<ListedResource>> polls;
  polls.push_back(fleet);
  fleet[0].activity.counters_fingerprint = CountersFingerprint("steps=40");
  fleet[1].tokens = {{"train", 1000}};
  fleet[1].activity.detail = "gpu util max 2% over 60m";
  polls.push_back(fleet);
  fleet[1].lifecycle = Lifecycle::kStopped;
  fleet[1].native_status = "INACTIVE";
  fleet[1].name = "run-b, renamed";  // b was stopped already: this is its change
  polls.push_back(fleet);
  fleet.pop_back();
  polls.push_back(fleet);
  for (size_t i = 0; i < polls.size(); ++i) {
    CAPTURE(i);
    const Time at = kT0 + std::chrono::minutes(i);
    store::Snapshot a = Snap(polls[i]);
    auto from_copy = (*copied)->Ingest({&a, 1}, at, Prices());
    auto from_move = (*moved)->Ingest(Snap(polls[i]), at, Prices());
    REQUIRE(from_copy.ok());
    REQUIRE(from_move.ok());
    CHECK(from_move->rows_written() == from_copy->rows_written());
    CHECK(from_move->deleted == from_copy->deleted);
    REQUIRE(a.resources.size() == polls[i].size());  // the const path leaves the caller's snapshot alone
    for (size_t j = 0; j < a.resources.size(); ++j) {
      CHECK(store::ResourceToJson(a.resources[j]) == store::ResourceToJson(polls[i][j]));
    }
    REQUIRE((*moved)->resources().size() == (*copied)->resources().size());
    for (const store::ResourceState& st : (*copied)->resources()) {
      const store::ResourceState* m = (*moved)->Find(st.resource.Key());
      REQUIRE(m != nullptr);
      CHECK(store::ResourceToJson(m->resource) == store::ResourceToJson(st.resource));
      CHECK(m->activity_fingerprint == st.activity_fingerprint);
      CHECK(m->counters == st.counters);
      CHECK(m->SpendAt(at) == st.SpendAt(at));
    }
  }
  // The poll's signals, which the stored Resource has no room for, are in the state's fields.
  for (const auto* s : {&*moved, &*copied}) {
    const store::ResourceState* b = (*s)->Find("bt/baseten.run/b");
    CHECK(b->activity_known);
    CHECK(b->counters.at("train") == 1000);
  }
  CHECK((*moved)->Find("bt/baseten.run/c")->resource.lifecycle == Lifecycle::kDeleted);
}

TEST_CASE("the change fingerprint moves with every field it covers, and only with those") {
  const Resource base = Run("fp");
  const uint64_t fp = store::Fingerprint(base);
  CHECK(store::Fingerprint(Run("fp")) == fp);
  struct Change {
    const char* what;
    std::function<void(Resource&)> apply;
  };
  const Change changes[] = {
      {"name", [](Resource& r) { r.name = r.name + "x"; }},
      {"owner", [](Resource& r) { r.owner = "bo@example.com"; }},
      {"team", [](Resource& r) { r.team = "ml"; }},
      {"base_model", [](Resource& r) { r.base_model = "Qwen/Qwen3-32B"; }},
      {"native_status", [](Resource& r) { r.native_status = "INACTIVE"; }},
      {"lifecycle", [](Resource& r) { r.lifecycle = Lifecycle::kStopped; }},
      {"transitional", [](Resource& r) { r.transitional = !r.transitional; }},
      {"replicas", [](Resource& r) { r.billing.replicas += 1; }},
      {"gpus_per_replica", [](Resource& r) { r.billing.gpus_per_replica += 1; }},
      {"billable", [](Resource& r) { r.billing.billable = !r.billing.billable; }},
      {"price", [](Resource& r) { r.billing.price_per_gpu_hour = Money::FromDollars(1); }},
      {"created_at", [](Resource& r) { r.created_at = kT0 - std::chrono::seconds(1); }},
      {"checkpoints.count", [](Resource& r) { r.checkpoints.Mutable().count += 1; }},
      {"checkpoints.unpromoted", [](Resource& r) { r.checkpoints.Mutable().unpromoted += 1; }},
      {"labels", [](Resource& r) { r.labels["env"] = "prod"; }},
      {"flags", [](Resource& r) { r.flags.insert(Flag::kOrphaned); }},
      {"parent_id", [](Resource& r) { r.parent_id = "ld1"; }},
      {"native_timeout", [](Resource& r) { r.native_timeout = std::chrono::minutes(15); }},
      {"refs", [](Resource& r) { r.refs["deployment_id"] = "ld1"; }},
      // Strings past one word: apart in the second word's first byte, then its last.
      {"name abcdefghXjk", [](Resource& r) { r.name = "abcdefghXjk"; }},
      {"name abcdefghYjk", [](Resource& r) { r.name = "abcdefghYjk"; }},
      {"name abcdefghYjz", [](Resource& r) { r.name = "abcdefghYjz"; }},
  };
  std::set<uint64_t> seen = {fp};
  for (const Change& c : changes) {
    CAPTURE(c.what);
    ListedResource r = Run("fp");
    c.apply(r);
    CHECK(seen.insert(store::Fingerprint(r)).second);
  }
  // Where one field ends and the next begins is part of what is hashed.
  ListedResource ab = Run("fp"), a = Run("fp");
  ab.name = "ab";
  ab.owner = "c";
  a.name = "a";
  a.owner = "bc";
  CHECK(store::Fingerprint(ab) != store::Fingerprint(a));
  // Activity and token counts are tracked apart: they leave it alone.
  ListedResource busy = Run("fp");
  busy.activity.counters_fingerprint = CountersFingerprint("steps=9");
  busy.tokens["train"] = 5;
  CHECK(store::Fingerprint(busy) == fp);
}

TEST_CASE("stored resources are walked in the order they were first stored, across a reopen and new arrivals") {
  TempDir dir;
  // Listed in an order no hash follows: r0 r7 r14 ... (i * 7 mod 200).
  std::vector<std::string> listed;
  std::vector<ListedResource> fleet;
  for (int i = 0; i < 200; ++i) {
    listed.push_back("r" + std::to_string(i * 7 % 200));
    fleet.push_back(Run(listed.back()));
  }
  auto walked = [](const store::Store& s) {
    std::vector<std::string> ids;
    int64_t last = 0;
    for (const store::ResourceState& st : s.resources()) {
      CHECK(st.row_id > last);
      last = st.row_id;
      ids.push_back(std::string(st.resource.id.view()));
    }
    return ids;
  };
  {
    auto s = store::Store::Open({.path = dir.File("lw.db")});
    REQUIRE(s.ok());
    auto snap = Snap(fleet);
    REQUIRE((*s)->Ingest({&snap, 1}, kT0, Prices()).ok());
    CHECK(walked(**s) == listed);
  }
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  CHECK(walked(**s) == listed);  // loaded, not inserted: the order is the rows'
  fleet.insert(fleet.begin(), Run("late"));
  auto snap = Snap(fleet);
  REQUIRE((*s)->Ingest({&snap, 1}, kT0 + 60s, Prices()).ok());
  listed.push_back("late");
  CHECK(walked(**s) == listed);
}

TEST_CASE("stored resources are found by their key's text, and a row whose key its parts do not make is refused") {
  TempDir dir;
  std::vector<ListedResource> fleet;
  for (int i = 0; i < 300; ++i) fleet.push_back(Run("r" + std::to_string(i), 8, i % 2 == 0));
  {
    auto s = store::Store::Open({.path = dir.File("lw.db")});
    REQUIRE(s.ok());
    auto snap = Snap(fleet);
    REQUIRE((*s)->Ingest({&snap, 1}, kT0, Prices()).ok());
    REQUIRE((*s)->resources().size() == 300);
    // By the key's text, part by part: a key that differs anywhere finds nothing.
    const store::ResourceState* found = (*s)->Find("bt/baseten.run/r17");
    REQUIRE(found != nullptr);
    CHECK(found->resource.id == "r17");
    CHECK((*s)->Find("bt/baseten.run/r1") != found);
    CHECK((*s)->Find("bt/baseten.run/r3000") == nullptr);
    CHECK((*s)->Find("bt/baseten.sampler/r17") == nullptr);
    CHECK((*s)->Find("bx/baseten.run/r17") == nullptr);
    CHECK((*s)->Find("bt/baseten.run/r17/") == nullptr);
    CHECK((*s)->Find("bt/baseten.runr17") == nullptr);
    CHECK((*s)->Find("") == nullptr);
  }
  {
    auto s = store::Store::Open({.path = dir.File("lw.db")});
    REQUIRE(s.ok());
    CHECK((*s)->resources().size() == 300);
    REQUIRE((*s)->Find("bt/baseten.run/r299") != nullptr);
    CHECK((*s)->Find("bt/baseten.run/r299")->row_id > 0);
  }
  {
    auto db = store::Db::Open(dir.File("lw.db"), false, false);
    REQUIRE(db.ok());
    REQUIRE((*db)->Exec("UPDATE resources SET native_id = 'r9000' WHERE key = 'bt/baseten.run/r5'").ok());
  }
  auto damaged = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE_FALSE(damaged.ok());
  CHECK(damaged.status().code() == StatusCode::kDataLoss);
  CHECK(damaged.status().message().find("bt/baseten.run/r5") != std::string::npos);
  CHECK(damaged.status().message().find("bt/baseten.run/r9000") != std::string::npos);
}

TEST_CASE("a listing that changed its order, lost resources and gained new ones between them updates each resource's own state") {
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  std::vector<ListedResource> fleet;
  for (int i = 0; i < 10; ++i) fleet.push_back(Run("r" + std::to_string(i)));
  auto snap = Snap(fleet);
  REQUIRE((*s)->Ingest({&snap, 1}, kT0, Prices()).ok());
  auto gpus = [&] {
    std::map<std::string, int> by_id;
    for (const store::ResourceState& st : (*s)->resources()) {
      by_id[std::string(st.resource.id.view())] = st.deleted_at ? -1 : st.resource.billing.gpus_per_replica;
    }
    return by_id;
  };
  REQUIRE(gpus().size() == 10);  // walking the store also builds the account's index, which Ingest takes hints from
  // Each listed resource gets its own GPU count, so a state that took another's listing shows.
  std::vector<std::string> order = {"r9", "r0", "n1", "r2", "r5", "n2", "n3", "r4", "r3", "r8"};  // r1, r6, r7 gone
  std::vector<ListedResource> relisted;
  for (size_t i = 0; i < order.size(); ++i) relisted.push_back(Run(order[i], static_cast<int>(i) + 1));
  snap = Snap(relisted);
  auto second = (*s)->Ingest({&snap, 1}, kT0 + 60s, Prices());
  REQUIRE(second.ok());
  CHECK(second->resources_inserted == 3);
  std::map<std::string, int> want = {{"r1", -1}, {"r6", -1}, {"r7", -1}};
  for (size_t i = 0; i < order.size(); ++i) want[order[i]] = static_cast<int>(i) + 1;
  CHECK(gpus() == want);
  // And back in the first order, with the new ones at the end.
  std::vector<ListedResource> third;
  for (int i = 0; i < 10; ++i) third.push_back(Run("r" + std::to_string(i), 20 + i));
  for (const char* n : {"n1", "n2", "n3"}) third.push_back(Run(n, 40));
  snap = Snap(third);
  REQUIRE((*s)->Ingest({&snap, 1}, kT0 + 120s, Prices()).ok());
  want.clear();
  for (int i = 0; i < 10; ++i) want["r" + std::to_string(i)] = 20 + i;
  for (const char* n : {"n1", "n2", "n3"}) want[n] = 40;
  CHECK(gpus() == want);
}

TEST_CASE("a resource that retention dropped from memory is a new resource when it is listed again") {
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  auto snap = Snap({Run("a", 8, false), Run("b", 8, false), Run("c", 8, false)});
  REQUIRE((*s)->Ingest({&snap, 1}, kT0, Prices()).ok());
  REQUIRE((*s)->resources().size() == 3);  // builds the account's index (Ingest's hints)
  snap = Snap({Run("a", 8, false), Run("c", 8, false)});
  REQUIRE((*s)->Ingest({&snap, 1}, kT0 + 60s, Prices()).ok());  // b deleted
  REQUIRE((*s)->resources().size() == 3);
  // Long after, retention drops b from memory. The index still lists it until rebuilt:
  // a hint taken from it would be a state that no longer exists.
  const Time later = kT0 + 24h * 30;
  REQUIRE((*s)->ApplyRetention(later, 24h).ok());
  snap = Snap({Run("a", 8, false), Run("b", 4, false), Run("c", 8, false)});
  auto again = (*s)->Ingest({&snap, 1}, later + 60s, Prices());
  REQUIRE(again.ok());
  CHECK(again->resources_inserted == 1);
  const store::ResourceState* b = (*s)->Find("bt/baseten.run/b");
  REQUIRE(b != nullptr);
  CHECK(b->resource.billing.gpus_per_replica == 4);
  CHECK_FALSE(b->deleted_at.has_value());
  CHECK((*s)->resources().size() == 3);
}

TEST_CASE("only what a resource has is held out of line: an open GPU interval, a checkpoint summary, across a reopen") {
  TempDir dir;
  const std::string path = dir.File("lw.db");
  // r0 bills and has its checkpoints listed; r1 is stopped and has neither.
  std::vector<ListedResource> fleet{Run("r0"), Run("r1", 8, false)};
  fleet[0].checkpoints.Mutable().known = true;
  fleet[0].checkpoints.Mutable().count = 2;
  auto check = [](const store::Store& s, bool r0_open) {
    const store::ResourceState* r0 = s.Find("bt/baseten.run/r0");
    const store::ResourceState* r1 = s.Find("bt/baseten.run/r1");
    REQUIRE(r0);
    REQUIRE(r1);
    CHECK(r0->open_gpu.has_value() == r0_open);
    if (r0_open) {
      CHECK(r0->open_gpu->gpus == 8);
      CHECK(r0->open_gpu->unit_price == ParseMoney("6.50").value());
    }
    CHECK(r0->resource.checkpoints.boxed());
    CHECK(r0->resource.checkpoints->count == 2);
    CHECK_FALSE(r1->open_gpu.has_value());
    CHECK_FALSE(r1->resource.checkpoints.boxed());  // nothing written, nothing allocated
    CHECK(r1->resource.checkpoints->reachable);
  };
  {
    auto s = store::Store::Open({.path = path});
    REQUIRE(s.ok());
    auto snap = Snap(fleet);
    REQUIRE((*s)->Ingest({&snap, 1}, kT0, Prices()).ok());
    check(**s, true);
  }
  {
    auto s = store::Store::Open({.path = path});  // read back from the file
    REQUIRE(s.ok());
    check(**s, true);
    fleet[0].native_status = "INACTIVE";
    fleet[0].lifecycle = Lifecycle::kStopped;
    fleet[0].billing.billable = false;
    auto snap = Snap(fleet);
    auto stopped = (*s)->Ingest({&snap, 1}, kT0 + 60s, Prices());
    REQUIRE(stopped.ok());
    CHECK(stopped->ledger_rows == 1);  // the interval closed, and its box went with it
    check(**s, false);
  }
}
