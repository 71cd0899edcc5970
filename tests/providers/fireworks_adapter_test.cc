// The Fireworks adapter against loopwarden-sim over HTTP and HTTPS.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "core/hash.h"
#include "providers/fireworks/parse.h"
#include "tests/providers/provider_fixture.h"

using namespace loopwarden;
using namespace loopwarden::testing;
using namespace std::chrono_literals;

namespace {

const char* kScenario = R"(
fireworks:
  - account: acme-ml
    keys: [{key: fw-key, owner: ana@example.com}]
    sessions:
      - id: ts-5bb4c28c5434412f8ce3f4317d23b0e8
        name: tickets
        created: -2h
        activity: [{from: -2h, to: -50m, tokens_per_min: {prefill: 1000, sample: 500, train: 2000}}]
        checkpoints:
          - {name: step-0100, at: -80m, promotable: false}
          - {name: final, at: -52m, promotable: true}
      - {id: ts-11111111111111111111111111111111, created: -30m, leaked: true}
    rlor_jobs:
      - {id: training-api-service-1a2b3c4d, created: -3h, accelerator: NVIDIA_H200_141GB, accelerator_count: 8,
         disable_inactivity_cleanup: true, activity: [{from: -175m, to: -100m}], checkpoints: [{name: step-200, at: -110m}]}
    deployments:
      - {id: rollout-1, created: -3h, managed_rollout: true, hot_load_trainer_job: training-api-service-1a2b3c4d}
      - {id: busy-dep, created: -3h, min_replicas: 1, max_replicas: 2, traffic: [{from: -3h, to: forever, requests_per_min: 120}]}
)";

}  // namespace

TEST_CASE("fireworks adapter: sessions, checkpoints and promotion status, jobs, deployments, tokens") {
  for (bool tls : {false, true}) {
    CAPTURE(tls);
    ProviderFixture f(kScenario, {.type = ProviderType::kFireworks, .key = "fw-key", .account = "acme-ml", .tls = tls});
    f.clock().Jump(2h);  // usage lands an hour late
    auto inv = f.List();
    CHECK(inv.complete);
    const ListedResource* s = f.Find(inv, "ts-5bb4c28c5434412f8ce3f4317d23b0e8");
    REQUIRE(s);
    CHECK(s->lifecycle == Lifecycle::kRunning);
    CHECK(s->billing.meter == Meter::kTokens);
    CHECK(s->tokens.at("train") == 70 * 2000);
    // The counters' fingerprint is the hash of the text earlier versions stored.
    CHECK(s->activity.counters_fingerprint == CountersFingerprint("prefill=70000,sample=35000,train=140000"));
    CHECK(s->checkpoints->known);
    CHECK(s->checkpoints->count == 2);
    CHECK(s->checkpoints->promotable == 1);
    CHECK(s->checkpoints->unpromoted == 1);
    CHECK(s->checkpoints->newest_promotable_name == "final");
    CHECK_FALSE(s->checkpoints->newest_promotable_promoted);
    CHECK(s->activity.known);
    // Token spend ended at -50m, inside the hour the first read checks: the hourly row's
    // end bounds it from the busy side, never earlier than the truth.
    REQUIRE(s->activity.last_active_at.has_value());
    CHECK(*s->activity.last_active_at >= kEpoch - 50min);

    const ListedResource* leaked = f.Find(inv, "ts-11111111111111111111111111111111");
    REQUIRE(leaked);
    CHECK(leaked->lifecycle == Lifecycle::kUnknown);
    CHECK(leaked->HasFlag("leaked"));

    const ListedResource* job = f.Find(inv, "training-api-service-1a2b3c4d");
    REQUIRE(job);
    CHECK(job->lifecycle == Lifecycle::kRunning);
    CHECK(job->native_status == "JOB_STATE_IDLE");
    CHECK(job->billing.gpus() == 8);
    CHECK(job->billing.gpu_type == "H200");
    CHECK(job->billing.price_per_gpu_hour->micros() == 7'000'000);
    CHECK(job->HasFlag("no_native_reaper"));
    CHECK_FALSE(job->native_timeout.has_value());

    const ListedResource* roll = f.Find(inv, "rollout-1");
    REQUIRE(roll);
    CHECK(roll->HasFlag("rollout"));
    CHECK_FALSE(roll->HasFlag("orphaned"));  // its trainer is alive
    CHECK(roll->billing.billable);
    CHECK(roll->activity.traffic_known);
    CHECK_FALSE(roll->activity.busy_now);
    const ListedResource* busy = f.Find(inv, "busy-dep");
    REQUIRE(busy);
    CHECK(busy->activity.busy_now);
    // Every name here is the one the account, kind and id make: none is kept, and the
    // deployment's replica bounds (for undo) are.
    for (const ListedResource* r : {s, leaked, job, roll, busy}) CHECK_FALSE(r->refs.contains("name"));
    CHECK(busy->refs.at("min_replica_count") == "1");
    CHECK(busy->refs.at("max_replica_count") == "2");
  }
}

TEST_CASE("fireworks: a resource name is recognised as an object's own only when it is exactly that") {
  CHECK(IsFireworksResourceName("accounts/acme/deployments/d-1", Kind::kFireworksDeployment, "acme", "d-1"));
  CHECK(FireworksResourceName(Kind::kFireworksRlorJob, "acme", "j") == "accounts/acme/rlorTrainerJobs/j");
  CHECK(IsFireworksResourceName(FireworksResourceName(Kind::kFireworksTrainingSession, "a", "ts-1"),
                                Kind::kFireworksTrainingSession, "a", "ts-1"));
  CHECK_FALSE(IsFireworksResourceName("accounts/other/deployments/d-1", Kind::kFireworksDeployment, "acme", "d-1"));
  CHECK_FALSE(IsFireworksResourceName("accounts/acme/deployments/d-10", Kind::kFireworksDeployment, "acme", "d-1"));
  CHECK_FALSE(IsFireworksResourceName("accounts/acme/deployments/d", Kind::kFireworksDeployment, "acme", "d-1"));
  CHECK_FALSE(IsFireworksResourceName("accounts/acme/trainingSessions/d-1", Kind::kFireworksDeployment, "acme", "d-1"));
  CHECK_FALSE(IsFireworksResourceName("x/accounts/acme/deployments/d-1", Kind::kFireworksDeployment, "acme", "d-1"));
  CHECK_FALSE(IsFireworksResourceName("accounts/acme/deployments/d-1", Kind::kBasetenDeployment, "acme", "d-1"));
  CHECK(FireworksResourceName(Kind::kBasetenRun, "acme", "r") == "");
}

TEST_CASE("fireworks: a listed name keeps only its account when usual, and reads back as the name listed") {
  // Against IsFireworksResourceName, the test the adapter made of the whole text: the
  // name is kept (refs["name"]) exactly when that says it is not the usual one, and
  // what is kept is the text listed.
  using providers::fireworks::IdFromName;
  using providers::fireworks::ObjectName;
  const std::vector<std::string> names = {
      "accounts/acme/deployments/d-1",   "accounts/other/deployments/d-1", "accounts/acme/trainingSessions/d-1",
      "x/accounts/acme/deployments/d-1", "accounts/a/b/deployments/d-1",   "accounts//deployments/d-1",
      "accounts/acme/deployments/",      "accounts/acme/deployments",      "d-1",
      "accounts/acme/rlorTrainerJobs/training-api-service-1a2b3c4d",       "accounts/acme-ml/deployments/d-1",
      "accounts/acme/deploymentsX/d-1",  "accounts/acme/Xdeployments/d-1", "accounts/deployments/d-1"};
  int usual = 0;
  for (Kind kind : {Kind::kFireworksDeployment, Kind::kFireworksTrainingSession, Kind::kFireworksRlorJob}) {
    for (const std::string& name : names) {
      const std::string id = IdFromName(name);
      const ObjectName n = ObjectName::Of(name, kind, id);
      usual += n.account.empty() ? 0 : 1;
      for (const char* account : {"acme", "other", "a/b", "acme-ml"}) {
        CAPTURE(name);
        CAPTURE(account);
        const std::string kept = n.KeptFor(Interned(account), kind, id);
        CHECK(kept.empty() == IsFireworksResourceName(name, kind, account, id));
        if (!kept.empty()) CHECK(kept == name);
      }
    }
  }
  CHECK(usual >= 6);  // the usual form was taken apart, not only kept whole
  CHECK(ObjectName::Of("accounts/acme/deployments/d-1", Kind::kFireworksDeployment, "d-1").account == "acme");
}

TEST_CASE("fireworks adapter: promote then delete, repeats, the rollout orphaned once its trainer is gone") {
  ProviderFixture f(kScenario, {.type = ProviderType::kFireworks, .key = "fw-key", .account = "acme-ml"});
  auto inv = f.List();
  const Resource s = *f.Find(inv, "ts-5bb4c28c5434412f8ce3f4317d23b0e8");
  const std::string model = providers::PromotedModelId(s.id, s.checkpoints->newest_promotable_name);
  CHECK(model == "lw-5bb4c28c-final");
  auto p = f.Await(f.provider().PromoteCheckpoint(s, s.checkpoints->newest_promotable, model));
  CHECK(p.outcome == providers::Outcome::kDone);
  auto again = f.Await(f.provider().PromoteCheckpoint(s, s.checkpoints->newest_promotable, model));
  CHECK(again.outcome == providers::Outcome::kAlreadyDone);  // 409, verified by reading the model
  auto fresh = f.Refresh(s);
  REQUIRE(fresh.ok());
  CHECK(fresh->resource->checkpoints->unpromoted == 0);
  CHECK(fresh->resource->checkpoints->newest_promotable_promoted);
  CHECK(f.Act(s, ActionType::kDelete).outcome == providers::Outcome::kDone);
  CHECK(f.Act(s, ActionType::kDelete).outcome == providers::Outcome::kAlreadyDone);  // 404 on repeat
  // After deletion the checkpoints are out of reach.
  auto late = f.Await(f.provider().PromoteCheckpoint(s, s.checkpoints->newest_promotable, "lw-late"));
  CHECK(late.outcome == providers::Outcome::kRefused);

  const Resource job = *f.Find(inv, "training-api-service-1a2b3c4d");
  CHECK(f.Act(job, ActionType::kCancel).outcome == providers::Outcome::kDone);
  CHECK(f.Act(job, ActionType::kDelete).outcome == providers::Outcome::kDone);
  CHECK(f.Act(job, ActionType::kDelete).outcome == providers::Outcome::kDone);  // a no-op repeat
  CHECK(f.Act(job, ActionType::kCancel).outcome == providers::Outcome::kAlreadyDone);  // terminal: done already
  auto after = f.List();
  CHECK(f.Find(after, "rollout-1")->HasFlag("orphaned"));

  const Resource roll = *f.Find(after, "rollout-1");
  auto off = f.Act(roll, ActionType::kDeactivate);
  CHECK(off.outcome == providers::Outcome::kDone);
  CHECK(off.restore.at("min_replica_count") == "1");
  CHECK(off.request == "PATCH /v1/accounts/acme-ml/deployments/rollout-1?updateMask=min_replica_count,max_replica_count");
  CHECK(f.Refresh(roll)->resource->billing.replicas == 0);
  // scale_to_zero stops billing now: max as well as min to 0, both recorded for undo.
  const Resource busy = *f.Find(after, "busy-dep");
  REQUIRE(busy.billing.replicas > 0);
  auto zero = f.Act(busy, ActionType::kScaleToZero);
  CHECK(zero.outcome == providers::Outcome::kDone);
  CHECK(zero.request == "PATCH /v1/accounts/acme-ml/deployments/busy-dep?updateMask=min_replica_count,max_replica_count");
  CHECK(zero.restore.count("min_replica_count") == 1);
  CHECK(zero.restore.count("max_replica_count") == 1);
  CHECK(f.Refresh(busy)->resource->billing.replicas == 0);
  CHECK(f.Act(roll, ActionType::kDelete).outcome == providers::Outcome::kDone);
  CHECK(f.Refresh(roll)->resource->lifecycle == Lifecycle::kDeleted);
}

TEST_CASE("fireworks adapter: the account is discovered from the key when not configured") {
  ProviderFixture f(kScenario, {.type = ProviderType::kFireworks, .key = "fw-key"});
  auto inv = f.List();
  CHECK(inv.complete);
  CHECK(f.provider().account() == "acme-ml");
  CHECK(inv.resources.size() == 5);
}

TEST_CASE("fireworks adapter: a failing page in the middle of a listing makes it partial") {
  std::string yaml = "fireworks:\n  - account: big\n    keys: [{key: fw-key}]\n    deployments:\n";
  for (int i = 0; i < 450; ++i) yaml += "      - {id: d" + std::to_string(i) + ", created: -1h}\n";
  ProviderFixture f(yaml, {.type = ProviderType::kFireworks, .key = "fw-key", .account = "big"});
  REQUIRE(f.Sim("POST", "/_sim/faults", R"({"rules":[{"match":"/v1/accounts/big/deployments","fail_page":2}]})").status == 200);
  auto inv = f.List();
  CHECK_FALSE(inv.complete);
  REQUIRE_FALSE(inv.failures.empty());
  CHECK(inv.failures[0].what == "GET /v1/accounts/big/deployments (page 2)");
  CHECK(inv.resources.size() == 200);  // page 1 only
  REQUIRE(f.Sim("POST", "/_sim/faults", "{}").status == 200);
  auto full = f.List();
  CHECK(full.complete);
  CHECK(full.resources.size() == 450);
}

TEST_CASE("fireworks adapter: a session gone from the listing has its spend window forgotten once") {
  ProviderFixture f(kScenario, {.type = ProviderType::kFireworks, .key = "fw-key", .account = "acme-ml"});
  const std::string id = "ts-5bb4c28c5434412f8ce3f4317d23b0e8";
  auto records = [&](bool deleted) {
    std::set<std::string> out;
    for (const DetailRecord& c : f.provider().TakeDetailChanges()) {
      if (c.body.empty() == deleted) out.insert(c.key);
    }
    return out;
  };
  f.clock().Jump(2h);
  REQUIRE(f.List().complete);
  CHECK(records(false).count("u:" + id) == 1);

  // The next poll lists the same sessions: nothing is forgotten.
  f.clock().Jump(1min);
  REQUIRE(f.List().complete);
  CHECK(records(true).empty());

  sim::FwAccount& account = f.sim().world().accounts.at(0);
  std::erase_if(account.sessions, [&](const sim::FwSession& s) { return s.id == id; });
  account.Reindex();
  f.clock().Jump(1min);
  auto inv = f.List();
  REQUIRE(inv.complete);
  CHECK(f.Find(inv, id) == nullptr);
  CHECK(records(true) == std::set<std::string>{"u:" + id});
  f.clock().Jump(1min);
  REQUIRE(f.List().complete);
  CHECK(records(true).empty());
}

TEST_CASE("fireworks adapter: listed text moves into each resource, a short trainer id resolved before it does") {
  // Ids of 15 bytes or fewer sit inline in a ShortString, so a view of a moved-from id
  // reads empty text: a deployment's trainer must be looked up before the jobs move.
  const char* scenario = R"(
fireworks:
  - account: acme-ml
    keys: [{key: fw-key, owner: ana@example.com}]
    sessions:
      - {id: ts-5bb4c28c5434412f8ce3f4317d23b0e8, name: tickets, created: -2h}
      - {id: ts-22222222222222222222222222222222, created: -1h}
    rlor_jobs:
      - {id: j-live, created: -3h, accelerator: NVIDIA_H200_141GB, accelerator_count: 8,
         activity: [{from: -3h, to: forever}]}
      - {id: training-api-service-77777777, name: long-trainer, created: -3h, accelerator: NVIDIA_H200_141GB,
         accelerator_count: 8, activity: [{from: -3h, to: forever}]}
    deployments:
      - {id: d-short, created: -3h, managed_rollout: true, hot_load_trainer_job: j-live}
      - {id: d-long, name: serving, created: -3h, managed_rollout: true,
         hot_load_trainer_job: training-api-service-77777777}
      - {id: d-lost, created: -3h, managed_rollout: true, hot_load_trainer_job: j-missing}
)";
  ProviderFixture f(scenario, {.type = ProviderType::kFireworks, .key = "fw-key", .account = "acme-ml"});
  auto inv = f.List();
  REQUIRE(inv.complete);
  const ListedResource* named = f.Find(inv, "ts-5bb4c28c5434412f8ce3f4317d23b0e8");
  REQUIRE(named);
  CHECK(named->name == "tickets");
  const ListedResource* bare = f.Find(inv, "ts-22222222222222222222222222222222");
  REQUIRE(bare);
  CHECK(bare->name == "ts-22222222222222222222222222222222");  // no display name: the id
  const ListedResource* trainer = f.Find(inv, "training-api-service-77777777");
  REQUIRE(trainer);
  CHECK(trainer->name == "long-trainer");
  CHECK(f.Find(inv, "j-live")->name == "j-live");

  const ListedResource* short_parent = f.Find(inv, "d-short");
  REQUIRE(short_parent);
  CHECK(short_parent->parent_id == "j-live");
  CHECK_FALSE(short_parent->HasFlag("orphaned"));  // its trainer is listed and running
  const ListedResource* long_parent = f.Find(inv, "d-long");
  REQUIRE(long_parent);
  CHECK(long_parent->name == "serving");
  CHECK(long_parent->parent_id == "training-api-service-77777777");
  CHECK_FALSE(long_parent->HasFlag("orphaned"));
  const ListedResource* lost = f.Find(inv, "d-lost");
  REQUIRE(lost);
  CHECK(lost->HasFlag("orphaned"));  // its trainer is not listed
  for (const ListedResource& r : inv.resources) CHECK_FALSE(r.refs.contains("name"));
}

TEST_CASE("fireworks adapter: a listed name other than the usual one is kept as refs[name], the usual one is not") {
  // The usual name (accounts/<this account>/deployments/<id>) is rebuilt from the
  // account and id, so it is not held. Any other name is the provider's word about the
  // object and is kept as listed: another account's, a bare id, another form.
  const char* scenario = R"(
fireworks:
  - account: acme-ml
    keys: [{key: fw-key, owner: ana@example.com}]
    deployments:
      - {id: d-usual, created: -3h}
      - {id: d-other, created: -3h, listed_name: accounts/other-ml/deployments/d-other}
      - {id: d-bare, created: -3h, listed_name: d-bare}
      - {id: d-odd, created: -3h, listed_name: projects/p1/deployments/d-odd}
)";
  ProviderFixture f(scenario, {.type = ProviderType::kFireworks, .key = "fw-key", .account = "acme-ml"});
  auto inv = f.List();
  REQUIRE(inv.complete);
  REQUIRE(inv.resources.size() == 4);
  const auto name_ref = [&](const char* id) -> std::string {
    const ListedResource* r = f.Find(inv, id);
    REQUIRE(r);
    auto it = r->refs.find("name");
    return it == r->refs.end() ? "" : std::string(it->second.view());
  };
  CHECK(name_ref("d-usual").empty());
  CHECK(name_ref("d-other") == "accounts/other-ml/deployments/d-other");
  CHECK(name_ref("d-bare") == "d-bare");
  CHECK(name_ref("d-odd") == "projects/p1/deployments/d-odd");
}

TEST_CASE("fireworks adapter: a listing given a sink hands it every resource List() would keep") {
  ProviderFixture f(kScenario, {.type = ProviderType::kFireworks, .key = "fw-key", .account = "acme-ml"});
  CheckSinkGetsWhatListKeeps(f);
}
