// The simulator's Baseten API against shared/providers/baseten.md: wrappers, fields,
// status encodings, errors and provider-side behaviour, over real loopback HTTP(S).
#include <doctest/doctest.h>

#include "tests/sim/sim_fixture.h"

using namespace loopwarden;
using namespace loopwarden::testing;
using namespace std::chrono_literals;
using V = std::vector<std::string>;

namespace {

const char* kScenario = R"(
baseten:
  - org: acme
    keys:
      - {key: bt-key, owner: ana@example.com}
      - {key: bt-bo, owner: bo@example.com, org_visible: false}
    runs:
      - id: k4q95w5
        name: grpo-tickets
        owner: ana@example.com
        mode: dedicated
        created: -2h
        instance_type: H100x8
        nodes: 2
        activity: [{from: -2h, to: -30m, gpu_util: 0.9, requests_per_min: 30}]
        keepalive: [{from: -2h, to: forever}]
        sampler: {id: smp82kq, at: -110m}
        checkpoints:
          - {id: ckp9a1, name: step-100, at: -90m}
          - {id: ckp7b2, name: step-50, target: trainer, at: -100m}
      - id: sft0001
        owner: bo@example.com
        mode: serverless
        created: -3h
        checkpoints: [{id: ckpsv1, name: final, at: -2h}]
      - id: idle001
        owner: ana@example.com
        mode: dedicated
        created: -1m
    samplers:
      - {id: smpstd1, owner: ana@example.com, created: -5h, traffic: [{from: -5h, to: -4h, requests_per_min: 20}]}
    models:
      - id: wnpkzp03
        name: tickets-step-100
        created: -6h
        deployments:
          - {id: qrpg2r0, created: -6h, min_replica: 1, max_replica: 1, traffic: [{from: -6h, to: -3h, requests_per_min: 15}]}
      - id: mprod001
        name: prod-chat
        created: -30d
        deployments:
          - {id: dprod01, created: -30d, production: true, min_replica: 0, max_replica: 2,
             traffic: [{from: -30d, to: -20m, requests_per_min: 100}]}
)";

const V kRunFields{"base_model", "base_url", "created_at", "deployment_id", "id", "name", "sampler",
                   "session_id", "status", "user"};
const V kSamplerFields{"base_model", "base_url", "created_at", "deployment_id", "id", "instance_type",
                       "model_id", "node_count", "status", "user"};
const V kInstanceTypeFields{"gpu_count", "gpu_memory_limit_mib", "gpu_type", "id", "memory_limit_mib",
                            "millicpu_limit", "name"};

}  // namespace

TEST_CASE("baseten: runs list and get use the documented wrappers, fields and status objects") {
  SimFixture f(kScenario);
  auto list = f.Bt("GET", "/v1/loops/runs?scope=org");
  REQUIRE(list.status == 200);
  REQUIRE(Keys(list.json) == V{"runs"});
  const auto& runs = list.obj().at("runs").as_array();
  CHECK(runs.size() == 3);
  const auto& r = runs[0].as_object();
  CHECK(Keys(runs[0]) == kRunFields);
  CHECK(Str(r.at("id")) == "k4q95w5");
  CHECK(Str(r.at("status").at("name")) == "ACTIVE");
  CHECK(Str(r.at("user").at("email")) == "ana@example.com");
  CHECK(Str(r.at("created_at")) == "2026-08-01T10:00:00.000Z");
  CHECK(Keys(r.at("sampler")) == kSamplerFields);
  CHECK(Keys(r.at("sampler").at("instance_type")) == kInstanceTypeFields);
  CHECK(runs[1].at("deployment_id").is_null());  // serverless
  CHECK(runs[1].at("sampler").is_null());

  auto one = f.Bt("GET", "/v1/loops/runs/k4q95w5");
  REQUIRE(one.status == 200);
  CHECK(Keys(one.json) == V{"run"});
  CHECK(Keys(one.obj().at("run")) == kRunFields);
  auto missing = f.Bt("GET", "/v1/loops/runs/nope123");
  CHECK(missing.status == 404);
  CHECK(Keys(missing.json) == V{"error"});

  // Without scope=org only the key owner's runs; filters narrow further.
  CHECK(f.Bt("GET", "/v1/loops/runs").obj().at("runs").as_array().size() == 2);
  CHECK(f.Bt("GET", "/v1/loops/runs?scope=org&run_id=sft0001").obj().at("runs").as_array().size() == 1);
}

TEST_CASE("baseten: both Authorization forms work, others are 401, a key without org visibility gets 403") {
  SimFixture f(kScenario);
  CHECK(f.Call("GET", "/v1/loops/runs", {{"Authorization", "Api-Key bt-key"}}).status == 200);
  auto bad_scheme = f.Call("GET", "/v1/loops/runs", {{"Authorization", "Token bt-key"}});
  CHECK(bad_scheme.status == 401);
  CHECK(Keys(bad_scheme.json) == V{"error"});
  CHECK(f.Bt("GET", "/v1/loops/runs", "", "wrong").status == 401);
  auto no_org = f.Bt("GET", "/v1/loops/runs?scope=org", "", "bt-bo");
  CHECK(no_org.status == 403);
  CHECK(Str(no_org.obj().at("error")).find("scope=org") != std::string::npos);
  CHECK(f.Bt("GET", "/v1/loops/runs", "", "bt-bo").obj().at("runs").as_array().size() == 1);
}

TEST_CASE("baseten: samplers newest first, Loops deployments with live statuses and GPU shape") {
  SimFixture f(kScenario);
  auto smp = f.Bt("GET", "/v1/loops/samplers?scope=org");
  REQUIRE(Keys(smp.json) == V{"samplers"});
  const auto& s = smp.obj().at("samplers").as_array();
  REQUIRE(s.size() == 2);
  CHECK(Str(s[0].at("id")) == "smp82kq");  // -110m is newer than -5h
  CHECK(Str(s[0].at("status").at("name")) == "ACTIVE");
  CHECK(Keys(f.Bt("GET", "/v1/loops/samplers/smpstd1").json) == V{"sampler"});

  auto deps = f.Bt("GET", "/v1/loops/deployments?scope=org");
  REQUIRE(Keys(deps.json) == V{"deployments"});
  const auto& d = deps.obj().at("deployments").as_array();
  REQUIRE(d.size() == 2);
  CHECK(Keys(d[0]) == V{"active_run_id", "availability_model", "base_model", "base_url", "created_at", "id",
                        "instance_type", "latest_run_id", "node_count", "sampler", "status", "user"});
  CHECK(Str(d[0].at("status").at("name")) == "RUNNING");
  CHECK(Str(d[0].at("active_run_id")) == "k4q95w5");
  CHECK(d[0].at("instance_type").at("gpu_count").as_int64() == 8);
  CHECK(d[0].at("node_count").as_int64() == 2);
  CHECK(Str(d[1].at("status").at("name")) == "DEPLOYING");  // created a minute ago
  const std::string dep_id = Str(d[0].at("id"));
  CHECK(Keys(f.Bt("GET", "/v1/loops/deployments/" + dep_id).json) == V{"deployment"});
}

TEST_CASE("baseten: trainer metrics are series per GPU rank with gaps where pods did not run") {
  SimFixture f(kScenario);
  const std::string dep = Str(f.Bt("GET", "/v1/loops/runs/k4q95w5").obj().at("run").at("deployment_id"));
  const int64_t end = ToUnixMillis(f.Now());
  auto m = f.Bt("POST", "/v1/loops/deployments/" + dep + "/metrics",
                "{\"start_epoch_millis\":" + std::to_string(end - 3 * 3600'000) + ",\"end_epoch_millis\":" +
                    std::to_string(end) + ",\"step_seconds\":600}");
  REQUIRE(m.status == 200);
  CHECK(Keys(m.json) == V{"deployment_id", "metrics"});
  const auto& metrics = m.obj().at("metrics").as_object();
  CHECK(Keys(metrics) == V{"concurrent_requests", "cpu_memory_usage_bytes", "cpu_usage", "ephemeral_storage",
                           "gpu_memory_usage_bytes", "gpu_utilization", "inference_volume",
                           "inference_volume_by_status", "per_node_metrics", "response_time_stats"});
  const auto& util = metrics.at("gpu_utilization").as_object();
  CHECK(util.size() == 16);  // 8 GPUs x 2 nodes
  const auto& rank0 = util.at("0").as_array();
  // The run started 2h ago and was deploying for 3 minutes: no points before that.
  CHECK(rank0.size() == 12);
  CHECK(Keys(rank0[0]) == V{"timestamp", "value"});
  CHECK(rank0.front().at("value").as_double() == doctest::Approx(0.9));
  CHECK(rank0.back().at("value").as_double() < 0.05);  // idle since 30 minutes
  const auto& vol = metrics.at("inference_volume").as_array();
  CHECK(vol.front().at("value").to_number<double>() == doctest::Approx(300));
  CHECK(vol.back().at("value").to_number<double>() == 0);
  auto bad = f.Bt("POST", "/v1/loops/deployments/" + dep + "/metrics", "{\"step_seconds\":0}");
  CHECK(bad.status == 400);
}

TEST_CASE("baseten: deployment metrics (R18) follow the documented modes, and refuse the old call shape") {
  SimFixture f(kScenario);
  const std::string base = "/v1/models/wnpkzp03/deployments/qrpg2r0/metrics";
  const int64_t now = ToUnixMillis(f.Now());
  auto ms = [&](Duration ago) { return std::to_string(now - std::chrono::duration_cast<std::chrono::milliseconds>(ago).count()); };
  // A window without a mode: the default CURRENT refuses it.
  auto old = f.Bt("GET", base + "?start_epoch_millis=" + ms(2h) + "&end_epoch_millis=" + ms(0h) + "&step_seconds=60");
  CHECK(old.status == 400);
  CHECK(Str(old.obj().at("error")).find("CURRENT") != std::string::npos);
  CHECK(f.Bt("GET", base + "?mode=SOMETIMES").status == 400);
  CHECK(f.Bt("GET", base + "?mode=SUMMARY&metrics=gpu_fun").status == 400);
  CHECK(f.Bt("GET", base + "?mode=SUMMARY&start_epoch_millis=" + ms(8 * 24h)).status == 400);

  auto current = f.Bt("GET", base);
  REQUIRE(current.status == 200);
  CHECK(Keys(current.json) == V{"end_epoch_millis", "metric_descriptors", "metric_values", "mode", "start_epoch_millis",
                                "step_seconds"});
  CHECK(Str(current.obj().at("mode")) == "CURRENT");
  CHECK(current.obj().at("step_seconds").is_null());
  // The default set, index-mapped: one values entry per descriptor, one value per label set.
  const auto& ds = current.obj().at("metric_descriptors").as_array();
  REQUIRE(ds.size() == 3);
  CHECK(Keys(ds[0]) == V{"kind", "label_sets", "name", "unit_hint"});
  const auto& set = current.obj().at("metric_values").as_array();
  REQUIRE(set.size() == 1);
  REQUIRE(set[0].at("values").as_array().size() == 3);
  for (size_t i = 0; i < ds.size(); ++i) {
    CHECK(set[0].at("values").at(i).as_array().size() == ds[i].at("label_sets").as_array().size());
  }

  // No traffic for 3 h but a replica up: 0, not null.
  auto quiet = f.Bt("GET", base + "?mode=SUMMARY&metrics=baseten_inference_requests_total&start_epoch_millis=" + ms(2h));
  REQUIRE(quiet.status == 200);
  REQUIRE(quiet.obj().at("metric_values").as_array().size() == 1);
  for (const auto& v : quiet.obj().at("metric_values").at(0).at("values").at(0).as_array()) CHECK(v.to_number<double>() == 0);
  // 15 requests a minute for the hour from -5h.
  auto busy = f.Bt("GET", base + "?mode=SUMMARY&metrics=baseten_inference_requests_total&start_epoch_millis=" + ms(5h) +
                              "&end_epoch_millis=" + ms(4h));
  CHECK(busy.obj().at("metric_values").at(0).at("values").at(0).at(0).to_number<double>() == doctest::Approx(900));
  // SERIES: the server picks the step; sets are evenly spaced.
  auto series = f.Bt("GET", base + "?mode=SERIES&metrics=baseten_inference_requests_total&start_epoch_millis=" + ms(6h));
  REQUIRE(series.status == 200);
  CHECK(series.obj().at("step_seconds").as_int64() == 60);
  CHECK(series.obj().at("metric_values").as_array().size() == 360);

  // Scaled to zero (no traffic since -20m, 15 minutes' delay): no data is null, not zero.
  auto gone = f.Bt("GET", "/v1/models/mprod001/deployments/dprod01/metrics?mode=SUMMARY&start_epoch_millis=" + ms(3min));
  REQUIRE(gone.status == 200);
  CHECK(gone.obj().at("metric_values").at(0).at("values").at(1).at(0).is_null());
}

TEST_CASE("baseten: checkpoints newest first by run_id, exactly one filter, SYNCING while saving") {
  SimFixture f(kScenario);
  auto c = f.Bt("GET", "/v1/loops/checkpoints?run_id=k4q95w5");
  REQUIRE(Keys(c.json) == V{"checkpoints"});
  const auto& list = c.obj().at("checkpoints").as_array();
  REQUIRE(list.size() == 2);
  CHECK(Keys(list[0]) == V{"base_model", "checkpoint_id", "checkpoint_type", "created_at", "id",
                           "lora_adapter_config", "run_id", "size_bytes", "sync_status", "target"});
  CHECK(Str(list[0].at("id")) == "ckp9a1");
  CHECK(Str(list[0].at("sync_status")) == "COMPLETE");
  CHECK(f.Bt("GET", "/v1/loops/checkpoints").status == 400);
  CHECK(f.Bt("GET", "/v1/loops/checkpoints?run_id=k4q95w5&base_model=x").status == 400);
}

TEST_CASE("baseten: models, inference deployments (bare, bare status string) and prices") {
  SimFixture f(kScenario);
  auto models = f.Bt("GET", "/v1/models");
  REQUIRE(Keys(models.json) == V{"models"});
  CHECK(Keys(models.obj().at("models").at(0)) ==
        V{"created_at", "deployments_count", "development_deployment_id", "id", "instance_type_name", "name",
          "production_deployment_id", "team_name"});
  auto deps = f.Bt("GET", "/v1/models/wnpkzp03/deployments");
  REQUIRE(Keys(deps.json) == V{"deployments"});
  const V dep_fields{"active_replica_count", "autoscaling_settings", "created_at", "environment", "id",
                     "instance_type_name", "is_development", "is_production", "labels", "model_id", "name",
                     "region", "request_backpressure_settings", "status"};
  CHECK(Keys(deps.obj().at("deployments").at(0)) == dep_fields);
  auto bare = f.Bt("GET", "/v1/models/wnpkzp03/deployments/qrpg2r0");
  CHECK(Keys(bare.json) == dep_fields);
  CHECK(bare.obj().at("status").is_string());
  CHECK(Str(bare.obj().at("status")) == "ACTIVE");
  CHECK(bare.obj().at("active_replica_count").as_int64() == 1);
  CHECK(Keys(bare.obj().at("autoscaling_settings")) ==
        V{"autoscaling_window", "concurrency_target", "max_replica", "max_scale_down_rate", "min_replica",
          "scale_down_delay", "target_in_flight_tokens", "target_utilization_percentage"});
  CHECK(Str(f.Bt("GET", "/v1/models/mprod001/deployments/production").obj().at("id")) == "dprod01");
  auto prices = f.Bt("GET", "/v1/instance_type_prices");
  REQUIRE(Keys(prices.json) == V{"instance_types"});
  const auto& p0 = prices.obj().at("instance_types").at(0);
  CHECK(Keys(p0) == V{"instance_type", "price"});
  CHECK(p0.at("price").as_double() == doctest::Approx(6.50 / 60).epsilon(1e-4));  // USD per minute
}

TEST_CASE("baseten: deactivating a run ends trainer and paired sampler, keeps checkpoints, repeats are 200") {
  SimFixture f(kScenario);
  auto a1 = f.Bt("POST", "/v1/loops/runs/k4q95w5/deactivate");
  REQUIRE(a1.status == 200);
  CHECK(Keys(a1.json) == V{"base_model", "id", "user"});
  CHECK(Str(f.Bt("GET", "/v1/loops/runs/k4q95w5").obj().at("run").at("status").at("name")) == "INACTIVE");
  const auto deps = f.Bt("GET", "/v1/loops/deployments?scope=org");
  const auto& d = deps.obj().at("deployments").at(0);
  CHECK(Str(d.at("status").at("name")) == "STOPPED");
  CHECK(d.at("active_run_id").is_null());
  CHECK(Str(f.Bt("GET", "/v1/loops/samplers/smp82kq").obj().at("sampler").at("status").at("name")) == "INACTIVE");
  CHECK(f.Bt("GET", "/v1/loops/checkpoints?run_id=k4q95w5").obj().at("checkpoints").as_array().size() == 2);
  auto again = f.Bt("POST", "/v1/loops/runs/k4q95w5/deactivate");
  CHECK(again.status == 200);
  CHECK(again.body == a1.body);
  CHECK(f.sim().world().journal.size() == 2);
}

TEST_CASE("baseten: repeat_deactivate: 404 switch") {
  SimFixture f(std::string("switches: {repeat_deactivate_status: 404}\n") + kScenario);
  CHECK(f.Bt("POST", "/v1/loops/runs/k4q95w5/deactivate").status == 200);
  CHECK(f.Bt("POST", "/v1/loops/runs/k4q95w5/deactivate").status == 404);
}

TEST_CASE("baseten: a paired sampler refuses deactivation with 409 naming the run, a standalone one stops") {
  SimFixture f(kScenario);
  auto conflict = f.Bt("POST", "/v1/loops/samplers/smp82kq/deactivate");
  CHECK(conflict.status == 409);
  CHECK(Str(conflict.obj().at("error")) == "Sampler smp82kq is paired to run k4q95w5; deactivate the run");
  CHECK(Str(conflict.obj().at("run_id")) == "k4q95w5");
  CHECK(f.Bt("POST", "/v1/loops/samplers/smpstd1/deactivate").status == 200);
  f.Advance(1min);
  CHECK(Str(f.Bt("GET", "/v1/loops/samplers/smpstd1").obj().at("sampler").at("status").at("name")) == "INACTIVE");
  CHECK(f.Bt("POST", "/v1/loops/samplers/smpstd1/deactivate").status == 200);  // idempotent
  SimFixture g(std::string("switches: {conflict_body_run_id: false}\n") + kScenario);
  CHECK(Keys(g.Bt("POST", "/v1/loops/samplers/smp82kq/deactivate").json) == V{"error"});
}

TEST_CASE("baseten: delete run keeps in-use checkpoints, destroys the rest, then 404") {
  SimFixture f(kScenario);
  auto dep = f.Bt("POST", "/v1/loops/checkpoints/deploy", R"({"checkpoint_ids":["ckp9a1"],"model_name":"m"})");
  REQUIRE(dep.status == 200);
  CHECK(Keys(dep.json) == V{"deployment_id", "model_id"});
  auto del = f.Bt("DELETE", "/v1/loops/runs/k4q95w5");
  REQUIRE(del.status == 200);
  const auto& kept = del.obj().at("kept_checkpoints").as_array();
  REQUIRE(kept.size() == 1);
  CHECK(Str(kept[0].at("id")) == "ckp9a1");
  CHECK(Str(kept[0].at("path")) == "bt://loops:k4q95w5/sampler_weights/step-100");
  CHECK(f.Bt("GET", "/v1/loops/runs/k4q95w5").status == 404);
  CHECK(f.Bt("DELETE", "/v1/loops/runs/k4q95w5").status == 404);
  // The in-use checkpoint cannot be deleted; the trainer one is already gone.
  CHECK(f.Bt("DELETE", "/v1/loops/checkpoints/ckp9a1").status == 409);
  CHECK(f.Bt("DELETE", "/v1/loops/checkpoints/ckp7b2").status == 200);  // the same tombstone again
}

TEST_CASE("baseten: checkpoint deploy is not idempotent, delete checkpoint returns the same tombstone") {
  SimFixture f(kScenario);
  auto a = f.Bt("POST", "/v1/loops/checkpoints/deploy", R"({"checkpoint_ids":["ckp9a1"]})");
  auto b = f.Bt("POST", "/v1/loops/checkpoints/deploy", R"({"checkpoint_ids":["ckp9a1"]})");
  CHECK(a.obj().at("deployment_id") != b.obj().at("deployment_id"));
  auto t1 = f.Bt("DELETE", "/v1/loops/checkpoints/ckp7b2");
  auto t2 = f.Bt("DELETE", "/v1/loops/checkpoints/ckp7b2");
  CHECK(t1.status == 200);
  CHECK(Keys(t1.json) == V{"checkpoint_id", "id", "path", "run_id", "target"});
  CHECK(t2.body == t1.body);
}

TEST_CASE("baseten: inference deployment deactivate, activate, autoscaling PATCH and delete") {
  SimFixture f(kScenario);
  const std::string base = "/v1/models/wnpkzp03/deployments/qrpg2r0";
  auto off = f.Bt("POST", base + "/deactivate");
  CHECK(off.body == "{\"success\":true}");
  CHECK(Str(f.Bt("GET", base).obj().at("status")) == "INACTIVE");
  CHECK(f.Bt("GET", base).obj().at("active_replica_count").as_int64() == 0);
  CHECK(f.Bt("POST", base + "/activate").status == 200);
  CHECK(Str(f.Bt("GET", base).obj().at("status")) == "WAKING_UP");
  f.Advance(2min);
  CHECK(Str(f.Bt("GET", base).obj().at("status")) == "ACTIVE");
  auto patch = f.Bt("PATCH", base + "/autoscaling_settings", R"({"min_replica":0})");
  CHECK(Str(patch.obj().at("status")) == "ACCEPTED");
  CHECK(Str(f.Bt("PATCH", base + "/autoscaling_settings", R"({"min_replica":0})").obj().at("status")) == "UNCHANGED");
  // S16: no traffic, min 0: scaled to zero after scale_down_delay (900 s).
  f.Advance(899s);
  CHECK(Str(f.Bt("GET", base).obj().at("status")) == "ACTIVE");
  f.Advance(2s);
  CHECK(Str(f.Bt("GET", base).obj().at("status")) == "SCALED_TO_ZERO");
  CHECK(f.Bt("PATCH", base + "/autoscaling_settings", R"({"min_replica":5,"max_replica":1})").status == 400);
  auto prod_del = f.Bt("DELETE", "/v1/models/mprod001/deployments/dprod01");
  CHECK(prod_del.status == 400);
  auto del = f.Bt("DELETE", base);
  CHECK(Keys(del.json) == V{"deleted", "id", "model_id"});
  CHECK(f.Bt("GET", base).status == 404);
  CHECK(f.Bt("DELETE", base).status == 404);
  CHECK(f.Bt("DELETE", "/v1/models/mprod001").obj().at("deleted").as_bool());
}

TEST_CASE("baseten: model deployment activation is rate limited to 20 per minute with retry_after") {
  SimFixture f(kScenario);
  const std::string base = "/v1/models/wnpkzp03/deployments/qrpg2r0";
  for (int i = 0; i < 20; ++i) REQUIRE(f.Bt("POST", base + (i % 2 ? "/activate" : "/deactivate")).status == 200);
  auto limited = f.Bt("POST", base + "/deactivate");
  CHECK(limited.status == 429);
  CHECK(Str(limited.obj().at("error")) == "Rate limit exceeded. Please try again later.");
  CHECK(limited.obj().at("retry_after").as_int64() >= 1);
  CHECK(limited.Header("Retry-After").empty());  // header only with the retry_after_header switch
  f.Advance(61s);
  CHECK(f.Bt("POST", base + "/deactivate").status == 200);
}

TEST_CASE("baseten: dedicated runs end on their own after scale_down_delay without requests or keepalives") {
  SimFixture f(kScenario);
  // idle001 has no activity at all: 900 s after creation it is gone, with its GPUs.
  f.Advance(13min);
  CHECK(Str(f.Bt("GET", "/v1/loops/runs/idle001").obj().at("run").at("status").at("name")) == "ACTIVE");
  f.Advance(2min);
  CHECK(Str(f.Bt("GET", "/v1/loops/runs/idle001").obj().at("run").at("status").at("name")) == "INACTIVE");
  const auto deps = f.Bt("GET", "/v1/loops/deployments?scope=org").obj().at("deployments").as_array();
  CHECK(Str(deps[1].at("status").at("name")) == "SCALED_TO_ZERO");
  CHECK(deps[1].at("active_run_id").is_null());
  // k4q95w5 is held by a keepalive: it never ends by itself.
  f.Advance(48h);
  CHECK(Str(f.Bt("GET", "/v1/loops/runs/k4q95w5").obj().at("run").at("status").at("name")) == "ACTIVE");
  // The 3600 s switch.
  SimFixture g(std::string("switches: {loops_default_scale_down_delay: 3600s}\n") + kScenario);
  g.Advance(30min);
  CHECK(Str(g.Bt("GET", "/v1/loops/runs/idle001").obj().at("run").at("status").at("name")) == "ACTIVE");
  g.Advance(31min);
  CHECK(Str(g.Bt("GET", "/v1/loops/runs/idle001").obj().at("run").at("status").at("name")) == "INACTIVE");
}

TEST_CASE("baseten: create refusals: org_cap and capacity 429s, bad scale_down_delay is 400, S6 omits fields") {
  SimFixture f(std::string("switches: {baseten_org_cap: 4}\n") + kScenario);
  // Live slot holders: k4q95w5, sft0001, idle001 (runs) + smpstd1 (standalone sampler) = 4.
  auto capped = f.Bt("POST", "/v1/loops/trainers", R"({"base_model":"Qwen/Qwen3-8B"})");
  CHECK(capped.status == 429);
  CHECK(Str(capped.obj().at("details").at("limit")) == "org_cap");
  CHECK(f.Bt("POST", "/v1/loops/trainers", R"({"scale_down_delay_seconds":0})").status == 400);
  CHECK(f.Bt("POST", "/v1/loops/trainers", R"({"scale_down_delay_seconds":3601})").status == 400);
  REQUIRE(f.Bt("POST", "/v1/loops/runs/sft0001/deactivate").status == 200);
  auto created = f.Bt("POST", "/v1/loops/trainers", R"({"base_model":"Qwen/Qwen3-8B","scale_down_delay_seconds":60})");
  REQUIRE(created.status == 200);
  CHECK_FALSE(created.obj().contains("status"));
  CHECK_FALSE(created.obj().contains("user"));
  REQUIRE(f.Bt("POST", "/_sim/event", R"({"type":"capacity_full"})").status == 200);
  auto full = f.Bt("POST", "/v1/loops/runs/" + Str(created.obj().at("id")) + "/deactivate");
  CHECK(full.status == 200);
  auto cap = f.Bt("POST", "/v1/loops/trainers", "{}");
  CHECK(cap.status == 429);
  CHECK(Str(cap.obj().at("details").at("limit")) == "capacity");
}

TEST_CASE("baseten: usage summary aggregates per-minute GPU billing with money as strings and numbers") {
  SimFixture f(kScenario);
  f.Advance(2h);  // usage lags an hour
  auto u = f.Bt("GET", "/v1/billing/usage_summary?start_date=2026-08-01T00:00:00Z&end_date=2026-08-02T00:00:00Z");
  REQUIRE(u.status == 200);
  CHECK(Keys(u.json) == V{"dedicated_usage", "model_apis_usage", "training_usage"});
  const auto& t = u.obj().at("training_usage").as_object();
  CHECK(t.at("subtotal").is_string());                      // totals as strings
  CHECK(t.at("breakdown").at(0).at("subtotal").is_number());  // breakdowns as numbers
  CHECK(Str(t.at("breakdown").at(0).at("billable_resource").at("kind")) == "TRAINING_JOB");
  CHECK(f.Bt("GET", "/v1/billing/usage_summary?start_date=2025-12-01T00:00:00Z&end_date=2025-12-02T00:00:00Z").status ==
        400);
  CHECK(f.Bt("GET", "/v1/billing/usage_summary").status == 400);
}

TEST_CASE("baseten over HTTPS with the simulator's own CA") {
  SimFixture f(kScenario, /*tls=*/true);
  auto r = f.Bt("GET", "/v1/loops/runs?scope=org");
  REQUIRE(r.transport.ok());
  CHECK(r.status == 200);
  CHECK(r.obj().at("runs").as_array().size() == 3);
}
