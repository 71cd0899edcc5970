// Marks, snoozes, intents, notifications, and the status and report queries.
#include <doctest/doctest.h>

#include "tests/store/fixtures.h"
#include "tests/testing/temp_dir.h"

using namespace loopwarden;
using namespace loopwarden::testing;
using namespace std::chrono_literals;

TEST_CASE("marks persist with their deadlines and notification time") {
  TempDir dir;
  {
    auto s = store::Store::Open({.path = dir.File("lw.db")});
    REQUIRE((*s)->PutMark({"idle", "bt/baseten.run/a", kT0, kT0 + 10min, {}, "idle 47m >= 20m", "deactivate"}).ok());
    REQUIRE((*s)->PutMark({"idle", "bt/baseten.run/b", kT0, kT0 + 5min, {}, "", "deactivate"}).ok());
    REQUIRE((*s)->MarkNotified("idle", "bt/baseten.run/a", kT0 + 1s).ok());
    REQUIRE((*s)->RemoveMark("idle", "bt/baseten.run/b").ok());
  }
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE((*s)->marks().size() == 1);
  const store::Mark& m = (*s)->marks().begin()->second;
  CHECK(m.act_after == kT0 + 10min);
  CHECK(m.notified_at == kT0 + 1s);
  CHECK(m.reason == "idle 47m >= 20m");
}

TEST_CASE("snoozes are active until their time") {
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE((*s)->AddSnooze({0, "bt/baseten.run/a", "", kT0 + 2h, "long eval", "ana", kT0}).ok());
  REQUIRE((*s)->AddSnooze({0, "bt/baseten.run/b", "idle", std::nullopt, "forever", "bo", kT0}).ok());
  CHECK((*s)->ActiveSnoozes(kT0 + 1h)->size() == 2);
  auto later = (*s)->ActiveSnoozes(kT0 + 3h);
  REQUIRE(later->size() == 1);
  CHECK(later->at(0).policy == "idle");
}

TEST_CASE("intents: written before the call, unique per idempotency key, listed while open") {
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  store::Intent in;
  in.idempotency_key = "idle|bt/baseten.run/a|deactivate|1";
  in.resource = "bt/baseten.run/a";
  in.policy = "idle";
  in.action = "deactivate";
  in.request = "POST /v1/loops/runs/a/deactivate";
  in.created_at = kT0;
  auto id = (*s)->BeginIntent(in);
  REQUIRE(id.ok());
  CHECK((*s)->BeginIntent(in).status().code() == StatusCode::kAlreadyExists);
  auto open = (*s)->OpenIntents();
  REQUIRE(open->size() == 1);
  CHECK(open->at(0).request == in.request);
  REQUIRE((*s)->FinishIntent(*id, store::IntentState::kDone, "deactivated", "{\"id\":\"a\"}", "", kT0 + 1s).ok());
  CHECK((*s)->OpenIntents()->empty());
  auto all = (*s)->IntentsSince(kT0 - 1h);
  CHECK(all->at(0).state == store::IntentState::kDone);
  CHECK(all->at(0).finished_at == kT0 + 1s);
}

TEST_CASE("notifications are deduplicated by key across restarts") {
  TempDir dir;
  {
    auto s = store::Store::Open({.path = dir.File("lw.db")});
    CHECK((*s)->RecordNotification("mark|idle|a", "ml-slack", kT0, "sent").value());
    CHECK_FALSE((*s)->RecordNotification("mark|idle|a", "ml-slack", kT0 + 1s, "sent").value());
  }
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  CHECK_FALSE((*s)->RecordNotification("mark|idle|a", "ml-slack", kT0 + 2s, "sent").value());
}

TEST_CASE("status: counts by provider, kind and lifecycle, idle resources by burn, pending marks by time") {
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  ListedResource busy = Run("busy"), idle = Run("idle", 16), stopped = Run("stopped", 8, false);
  busy.activity.busy_now = true;
  idle.activity.last_active_at = kT0 - 47min;
  auto snap = Snap({busy, idle, stopped});
  REQUIRE((*s)->Ingest({&snap, 1}, kT0, Prices()).ok());
  REQUIRE((*s)->PutMark({"idle", "bt/baseten.run/idle", kT0, kT0 + 10min, {}, "", "deactivate"}).ok());
  auto v = (*s)->QueryStatus(kT0, 20min);
  REQUIRE(v.ok());
  REQUIRE(v->counts.size() == 2);
  CHECK(v->counts[0].lifecycle == "running");
  CHECK(v->counts[0].count == 2);
  CHECK(v->counts[1].lifecycle == "stopped");
  REQUIRE(v->idle.size() == 1);
  CHECK(v->idle[0].resource == "bt/baseten.run/idle");
  CHECK(v->idle[0].idle_for == 47min);
  CHECK(v->idle[0].burn_per_hour.micros() == 104'000'000);
  REQUIRE(v->marks.size() == 1);
  CHECK(v->marks[0].act_after == kT0 + 10min);
}

TEST_CASE("report: spend, idle spend, actions and estimated savings grouped by owner and model") {
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  ListedResource a = Run("a"), b = Run("b", 16);
  a.owner = "ana@example.com";
  b.owner = "bo@example.com";
  b.base_model = "Qwen/Qwen3-32B";
  b.team = "ml";
  a.labels["cost-center"] = "research";
  a.activity.busy_now = true;
  b.activity.last_active_at = kT0 - 1h;  // idle from the start
  auto snap = Snap({a, b});
  REQUIRE((*s)->Ingest({&snap, 1}, kT0, Prices()).ok());
  b.billing.billable = false;
  b.lifecycle = Lifecycle::kStopped;
  snap = Snap({a, b});
  REQUIRE((*s)->Ingest({&snap, 1}, kT0 + 1h, Prices()).ok());
  store::Intent in{0, "k1", "bt/baseten.run/b", "idle", "deactivate", "POST …", kT0 + 1h};
  in.burn_per_hour = Money::FromDollars(104);
  in.savings_cap = 2h;
  auto id = (*s)->BeginIntent(in);
  REQUIRE((*s)->FinishIntent(*id, store::IntentState::kDone, "deactivated", "", "", kT0 + 1h).ok());
  REQUIRE((*s)->Ingest({&snap, 1}, kT0 + 5h, Prices()).ok());  // a is still running at the last poll
  auto r = (*s)->QueryReport(kT0 - 1h, kT0 + 5h, store::GroupBy::kOwner);
  REQUIRE(r.ok());
  REQUIRE(r->rows.size() == 2);
  // a: 8 GPUs x 5 h x $6.50 = $260 (still running); b: 16 x 1 h x $6.50 = $104, all idle.
  CHECK(r->rows[0].group == "ana@example.com");
  CHECK(r->rows[0].spend.micros() == 260'000'000);
  CHECK(r->rows[1].group == "bo@example.com");
  CHECK(r->rows[1].spend.micros() == 104'000'000);
  CHECK(r->rows[1].idle_spend.micros() == 104'000'000);
  CHECK(r->rows[1].actions == 1);
  CHECK(r->rows[1].savings.micros() == 208'000'000);  // $104/h for min(4 h since, 2 h cap)
  CHECK(r->total.spend.micros() == 364'000'000);
  auto by_model = (*s)->QueryReport(kT0 - 1h, kT0 + 5h, store::GroupBy::kModel);
  CHECK(by_model->rows.size() == 2);
  // By team and by one label: b is a team's, a carries the label, neither has the other.
  auto by_team = (*s)->QueryReport(kT0 - 1h, kT0 + 5h, store::GroupBy::kTeam);
  REQUIRE(by_team->rows.size() == 2);
  CHECK(by_team->rows[0].group == "(none)");
  CHECK(by_team->rows[0].spend.micros() == 260'000'000);
  CHECK(by_team->rows[1].group == "ml");
  CHECK(by_team->rows[1].spend.micros() == 104'000'000);
  CHECK(by_team->rows[1].actions == 1);
  auto by_label = (*s)->QueryReport(kT0 - 1h, kT0 + 5h, store::Grouping(store::GroupBy::kLabel, "cost-center"));
  REQUIRE(by_label->rows.size() == 2);
  CHECK(by_label->rows[0].group == "research");
  CHECK(by_label->rows[1].group == "(none)");
  CHECK(by_label->total.spend.micros() == 364'000'000);
  CHECK(store::ParseGroupBy("owner") == store::GroupBy::kOwner);
  CHECK(store::ParseGroupBy("team") == store::GroupBy::kTeam);
  CHECK(store::ParseGroupBy("label:cost-center") == store::Grouping(store::GroupBy::kLabel, "cost-center"));
  CHECK_FALSE(store::ParseGroupBy("label:").has_value());
  CHECK_FALSE(store::ParseGroupBy("teams").has_value());
}
