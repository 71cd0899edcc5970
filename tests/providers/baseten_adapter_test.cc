// The Baseten adapter against loopwarden-sim over HTTP and HTTPS.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "tests/providers/provider_fixture.h"

using namespace loopwarden;
using namespace loopwarden::testing;
using namespace std::chrono_literals;

namespace {

const char* kScenario = R"(
baseten:
  - org: acme
    keys: [{key: bt-key, owner: ana@example.com}, {key: bt-noorg, owner: bo@example.com, org_visible: false}]
    runs:
      - {id: rbusy01, mode: dedicated, created: -2h, instance_type: H100x8, activity: [{from: -2h, to: forever, gpu_util: 0.9, requests_per_min: 30}]}
      - id: rforgot
        mode: dedicated
        created: -100m
        instance_type: H100x8
        nodes: 2
        activity: [{from: -100m, to: -60m, gpu_util: 0.88}]
        keepalive: [{from: -100m, to: forever}]
        sampler: {id: smppair, at: -95m}
        checkpoints: [{id: ck1, name: step-50, at: -70m}]
      - {id: rsrvls1, mode: serverless, created: -3h, checkpoints: [{id: ck2, name: final, at: -150m}]}
    samplers:
      - {id: smpstd1, created: -5h, traffic: [{from: -5h, to: -4h, requests_per_min: 20}]}
    models:
      - id: mtickets
        name: tickets-step-100
        created: -6h
        deployments:
          - {id: dtick01, created: -6h, min_replica: 1, max_replica: 1, traffic: [{from: -6h, to: -3h, requests_per_min: 15}]}
)";

}  // namespace

TEST_CASE("baseten adapter: the inventory maps modes, GPUs, prices, pairing and activity") {
  for (bool tls : {false, true}) {
    CAPTURE(tls);
    ProviderFixture f(kScenario, {.tls = tls});
    auto inv = f.List();
    CHECK(inv.complete);
    CHECK(inv.failures.empty());
    const ListedResource* busy = f.Find(inv, "rbusy01");
    REQUIRE(busy);
    CHECK(busy->kind == Kind::kBasetenRun);
    CHECK(busy->mode == Mode::kDedicated);
    CHECK(busy->lifecycle == Lifecycle::kRunning);
    CHECK(busy->billing.billable);
    CHECK(busy->billing.gpus() == 8);
    // The price list is USD per minute with five decimals (0.86667 for 8 H100s):
    // per GPU-hour that is 0.86667 x 60 / 8.
    CHECK(busy->billing.price_per_gpu_hour->micros() == 6'500'025);
    CHECK(busy->activity.known);
    CHECK(busy->activity.busy_now);
    CHECK_FALSE(busy->HasFlag("kept_alive_idle"));

    const ListedResource* forgot = f.Find(inv, "rforgot");
    REQUIRE(forgot);
    CHECK(forgot->billing.gpus() == 16);  // 8 GPUs x 2 nodes
    CHECK(forgot->activity.known);
    CHECK_FALSE(forgot->activity.busy_now);
    // No busy point in the last hour's window: idle since at least its start.
    CHECK(forgot->activity.window_start.has_value());
    CHECK(forgot->HasFlag("kept_alive_idle"));
    CHECK(forgot->checkpoints->known);
    CHECK(forgot->checkpoints->count == 1);

    const ListedResource* serverless = f.Find(inv, "rsrvls1");
    REQUIRE(serverless);
    CHECK(serverless->mode == Mode::kServerless);
    CHECK(serverless->billing.meter == Meter::kTokens);
    CHECK_FALSE(serverless->billing.billable);
    CHECK(serverless->activity.last_active_at == kEpoch - 150min);

    const ListedResource* paired = f.Find(inv, "smppair");
    REQUIRE(paired);
    CHECK(paired->HasFlag("paired"));
    CHECK(paired->parent_id == "rforgot");
    CHECK(paired->billing.billable);
    const ListedResource* std1 = f.Find(inv, "smpstd1");
    REQUIRE(std1);
    CHECK(std1->HasFlag("standalone"));
    CHECK(std1->activity.traffic_known);

    // The Loops deployment of an active run does not bill twice.
    int loops = 0;
    for (const Resource& r : inv.resources) {
      if (r.kind == Kind::kBasetenLoopsDeployment) {
        ++loops;
        CHECK_FALSE(r.billing.billable);
        CHECK_FALSE(r.HasFlag("orphaned"));
      }
    }
    CHECK(loops == 2);

    const ListedResource* dep = f.Find(inv, "dtick01");
    REQUIRE(dep);
    CHECK(dep->kind == Kind::kBasetenDeployment);
    CHECK(dep->billing.replicas == 1);
    CHECK(dep->billing.gpus() == 1);
    CHECK(dep->billing.billable);
    CHECK(dep->refs.at("model_id") == "mtickets");
    CHECK(dep->name == "tickets-step-100/deployment-1");
    CHECK(dep->activity.traffic_known);
    CHECK_FALSE(dep->activity.last_traffic_at.has_value());  // none in the last hour
  }
}

TEST_CASE("baseten adapter: actions on each kind, the paired-sampler 409 and repeats") {
  ProviderFixture f(std::string("switches: {repeat_deactivate_status: 404}\n") + kScenario, {});
  auto inv = f.List();
  const Resource run = *f.Find(inv, "rforgot");
  auto paired = f.Act(*f.Find(inv, "smppair"), ActionType::kDeactivate);
  CHECK(paired.outcome == providers::Outcome::kRefused);
  CHECK(paired.detail == "paired to run rforgot; a paired sampler stops with its run");
  CHECK(paired.error.http_status == 409);

  auto a1 = f.Act(run, ActionType::kDeactivate);
  CHECK(a1.outcome == providers::Outcome::kDone);
  CHECK(a1.request == "POST /v1/loops/runs/rforgot/deactivate");
  auto repeat = f.Act(run, ActionType::kDeactivate);
  CHECK(repeat.outcome == providers::Outcome::kAlreadyDone);  // the 404-on-repeat switch
  auto fresh = f.Refresh(run);
  REQUIRE(fresh.ok());
  CHECK(fresh->resource->lifecycle == Lifecycle::kStopped);
  CHECK_FALSE(fresh->resource->billing.billable);

  CHECK(f.Act(*f.Find(inv, "smpstd1"), ActionType::kDeactivate).outcome == providers::Outcome::kDone);
  const Resource dep = *f.Find(inv, "dtick01");
  auto stz = f.Act(dep, ActionType::kScaleToZero);
  CHECK(stz.outcome == providers::Outcome::kDone);
  CHECK(stz.restore.at("min_replica") == "1");
  CHECK(f.Act(dep, ActionType::kDeactivate).outcome == providers::Outcome::kDone);
  CHECK(f.Act(dep, ActionType::kDelete).outcome == providers::Outcome::kDone);
  CHECK(f.Act(dep, ActionType::kDelete).outcome == providers::Outcome::kAlreadyDone);
  auto gone = f.Refresh(dep);
  REQUIRE(gone.ok());
  CHECK(gone->gone);
  const Resource busy = *f.Find(inv, "rbusy01");
  for (const Resource& r : inv.resources) {
    if (r.kind == Kind::kBasetenLoopsDeployment && r.parent_id == "rbusy01") {
      CHECK(f.Act(r, ActionType::kDeactivate).outcome == providers::Outcome::kDone);
    }
  }
  CHECK(f.Refresh(busy)->resource->lifecycle == Lifecycle::kStopped);
  CHECK(f.Act(*f.Find(inv, "rsrvls1"), ActionType::kDelete).outcome == providers::Outcome::kDone);
  CHECK(f.Act(*f.Find(inv, "rsrvls1"), ActionType::kDelete).outcome == providers::Outcome::kAlreadyDone);
  CHECK(f.Act(run, ActionType::kScaleToZero).outcome == providers::Outcome::kRefused);  // not a run action
}

TEST_CASE("baseten adapter: a refused org listing is partial, not empty") {
  ProviderFixture f(kScenario, {.key = "bt-noorg"});
  auto inv = f.List();
  CHECK_FALSE(inv.complete);
  REQUIRE_FALSE(inv.failures.empty());
  CHECK(inv.failures[0].error.cls == providers::ErrorClass::kAuth);
  for (const Resource& r : inv.resources) CHECK(r.kind == Kind::kBasetenDeployment);  // /v1/models needs no scope=org
}

TEST_CASE("baseten adapter: a certificate the client does not trust is refused with a clear error") {
  ProviderFixture f(kScenario, {.tls = true, .trust = false});
  auto inv = f.List();
  CHECK_FALSE(inv.complete);
  REQUIRE_FALSE(inv.failures.empty());
  CHECK(inv.failures[0].error.cls == providers::ErrorClass::kAuth);
  CHECK(inv.failures[0].error.message.find("TLS certificate of 127.0.0.1:") == 0);
  CHECK(inv.failures[0].error.message.find("not trusted") != std::string::npos);
}

TEST_CASE("baseten adapter: org_cap and capacity refusals classify from create calls' bodies") {
  ProviderFixture f(kScenario, {});
  net::HttpRequest req;
  req.method = "POST";
  req.url = "/v1/loops/trainers";
  req.headers = {{"Authorization", "Bearer bt-key"}};
  req.body = "{}";
  auto capped = f.sim().Handle(req);  // 5 live slot holders > the default cap of 4
  CHECK(providers::ClassifyBaseten(capped, kEpoch).detail == "org_cap");
  CHECK(providers::ClassifyBaseten(capped, kEpoch).cls == providers::ErrorClass::kQuota);
}

TEST_CASE("baseten adapter: first sight reads as far back as the policies need, then only what is new") {
  providers::ProviderOptions o;
  o.quiet_thresholds = {{Kind::kBasetenDeployment, 4h}, {Kind::kBasetenSampler, 90min}};
  CHECK(providers::FirstSightWindow(o, Kind::kBasetenDeployment) == 4h + 10min);
  CHECK(providers::FirstSightWindow(o, Kind::kBasetenRun) == 1h);  // activity_window is the floor
  o.quiet_thresholds[Kind::kBasetenRun] = 30 * 24h;
  CHECK(providers::FirstSightWindow(o, Kind::kBasetenRun) == providers::kMaxHistory);  // what R8/R18 serve

  ProviderFixture f(kScenario, {.tweak = [](providers::ProviderOptions& po) {
                                  po.quiet_thresholds = {{Kind::kBasetenDeployment, 4h}, {Kind::kBasetenSampler, 90min}};
                                }});
  auto inv = f.List();
  // dtick01 stopped serving 3 h ago: the 4h10m window shows its last requests, which
  // SERIES places at -3h (a one-minute step ends a minute later).
  const ListedResource* dep = f.Find(inv, "dtick01");
  REQUIRE(dep);
  CHECK(dep->activity.traffic_known);
  REQUIRE(dep->activity.last_traffic_at.has_value());
  CHECK(*dep->activity.last_traffic_at >= kEpoch - 3h);
  CHECK(*dep->activity.last_traffic_at <= kEpoch - 3h + 2min);
  CHECK(*dep->activity.window_start <= kEpoch - 4h);
  CHECK(dep->activity.detail.find("over 4h10m") != std::string::npos);
  // smpstd1's traffic ended 4 h ago, before its 1h40m window: quiet since the window began.
  const ListedResource* smp = f.Find(inv, "smpstd1");
  REQUIRE(smp);
  CHECK(smp->activity.traffic_known);
  CHECK_FALSE(smp->activity.last_traffic_at.has_value());
  CHECK(*smp->activity.window_start <= kEpoch - 100min + 5s);
  CHECK(*smp->activity.window_start >= kEpoch - 100min - 5s);

  // The next read covers only the time since the last one (with a small overlap).
  f.clock().Jump(5min);
  auto again = f.List();
  const ListedResource* dep2 = f.Find(again, "dtick01");
  REQUIRE(dep2);
  CHECK(dep2->activity.traffic_known);
  INFO(dep2->activity.detail);
  CHECK(dep2->activity.detail == "requests 0 over 7m");
  CHECK(*dep2->activity.window_start >= kEpoch - 2min);
}

TEST_CASE("baseten adapter: details of resources gone from the listings are forgotten once, the others kept") {
  ProviderFixture f(kScenario, {});
  auto keys = [](const std::vector<DetailRecord>& changes, bool deleted) {
    std::set<std::string> out;
    for (const DetailRecord& c : changes) {
      if (c.body.empty() == deleted) out.insert(c.key);
    }
    return out;
  };
  auto inv = f.List();
  REQUIRE(inv.complete);
  const std::set<std::string> read = keys(f.provider().TakeDetailChanges(), false);
  const ListedResource* forgot = f.Find(inv, "rforgot");
  REQUIRE(forgot);
  const std::string forgot_dep = "m:" + forgot->refs.at("deployment_id");
  // What the first poll read: metrics, checkpoints and a model's deployments.
  for (const std::string& k : {std::string("c:rforgot"), forgot_dep, std::string("m:smpstd1"),
                               std::string("d:mtickets"), std::string("m:dtick01"), std::string("c:rbusy01")}) {
    CAPTURE(k);
    CHECK(read.count(k) == 1);
  }

  // A run (and with it its Loops deployment), a sampler and a model with its deployment go.
  sim::BtOrg& org = f.sim().world().orgs.at(0);
  std::erase_if(org.runs, [](const sim::BtRun& r) { return r.id == "rforgot"; });
  std::erase_if(org.samplers, [](const sim::BtSampler& s) { return s.id == "smpstd1"; });
  std::erase_if(org.models, [](const sim::BtModel& m) { return m.id == "mtickets"; });
  std::erase_if(org.deployments, [](const sim::BtDeployment& d) { return d.id == "dtick01"; });
  org.Reindex();
  f.clock().Jump(1min);
  auto after = f.List();
  REQUIRE(after.complete);
  CHECK(f.Find(after, "rforgot") == nullptr);
  CHECK(f.Find(after, "rbusy01") != nullptr);
  const std::set<std::string> gone = keys(f.provider().TakeDetailChanges(), true);
  CHECK(gone == std::set<std::string>{"c:rforgot", forgot_dep, "m:smpstd1", "d:mtickets", "m:dtick01"});

  // Nothing more goes: a poll that lists the same resources forgets nothing.
  f.clock().Jump(1min);
  CHECK(f.List().complete);
  CHECK(keys(f.provider().TakeDetailChanges(), true).empty());
}

TEST_CASE("baseten adapter: a listing given a sink hands it every resource List() would keep") {
  ProviderFixture f(kScenario, {});
  CheckSinkGetsWhatListKeeps(f);
}
