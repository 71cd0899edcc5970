// The simulator's Fireworks API against shared/providers/fireworks.md: camelCase,
// int64 as strings, pagination, gRPC-style errors and provider-side behaviour.
#include <doctest/doctest.h>

#include "tests/sim/sim_fixture.h"

using namespace loopwarden;
using namespace loopwarden::testing;
using namespace std::chrono_literals;
using V = std::vector<std::string>;

namespace {

const char* kScenario = R"(
switches: {delete_latency: 5s}
fireworks:
  - account: acme-ml
    keys:
      - {key: fw-key, owner: ana@example.com}
      - {key: fw-infer, owner: bo@example.com, training: false}
    slot_cap: 3
    sessions:
      - id: ts-5bb4c28c5434412f8ce3f4317d23b0e8
        name: tickets
        created: -2h
        activity: [{from: -2h, to: -50m, tokens_per_min: {prefill: 1000, cached_prefill: 100, sample: 500, train: 2000}}]
        checkpoints:
          - {name: step-0100, at: -80m, promotable: false}
          - {name: final, at: -52m, promotable: true}
          - {name: a-very-long-checkpoint-name, at: -51m, promotable: true}
      - {id: ts-0c1de2f3a4b5c6d7e8f90a1b2c3d4e5f, created: -1h, activity: [{from: -1h, to: forever, tokens_per_min: {train: 100}}]}
      - {id: ts-11111111111111111111111111111111, created: -30m, leaked: true}
    rlor_jobs:
      - id: training-api-service-1a2b3c4d
        name: grpo
        created: -3h
        accelerator: NVIDIA_H200_141GB
        accelerator_count: 8
        activity: [{from: -175m, to: -100m}]
        disable_inactivity_cleanup: true
        checkpoints: [{name: step-200, at: -110m}]
      - id: training-api-service-55555555
        created: -20m
        placement_delay: 2m
    deployments:
      - {id: rollout-1, created: -3h, managed_rollout: true, hot_load_trainer_job: training-api-service-1a2b3c4d}
      - {id: idle-dep, created: -3h, min_replicas: 0, max_replicas: 2, traffic: [{from: -3h, to: -30m, requests_per_min: 60}]}
)";

}  // namespace

TEST_CASE("fireworks: sessions paginate with opaque tokens, totalSize, and a 200 cap on pageSize") {
  SimFixture f(kScenario);
  auto p1 = f.Fw("GET", "/v1/accounts/acme-ml/trainingSessions?pageSize=2");
  REQUIRE(p1.status == 200);
  CHECK(Keys(p1.json) == V{"nextPageToken", "totalSize", "trainingSessions"});
  CHECK(p1.obj().at("totalSize").as_int64() == 3);
  CHECK(p1.obj().at("trainingSessions").as_array().size() == 2);
  const std::string token = Str(p1.obj().at("nextPageToken"));
  REQUIRE_FALSE(token.empty());
  auto p2 = f.Fw("GET", "/v1/accounts/acme-ml/trainingSessions?pageSize=2&pageToken=" + token);
  CHECK(p2.obj().at("trainingSessions").as_array().size() == 1);
  CHECK(Str(p2.obj().at("nextPageToken")).empty());
  // A token reused with other parameters is INVALID_ARGUMENT.
  auto mismatch = f.Fw("GET", "/v1/accounts/acme-ml/trainingSessions?pageSize=3&pageToken=" + token);
  CHECK(mismatch.status == 400);
  CHECK(Keys(mismatch.json) == V{"code", "details", "message"});
  CHECK(mismatch.obj().at("code").as_int64() == 3);

  const auto& s = p1.obj().at("trainingSessions").at(0).as_object();
  CHECK(Keys(s) == V{"baseModel", "createTime", "createdBy", "displayName", "name", "referenceState", "state",
                     "status", "updateTime"});
  CHECK(Str(s.at("name")) == "accounts/acme-ml/trainingSessions/ts-5bb4c28c5434412f8ce3f4317d23b0e8");
  CHECK(Str(s.at("state")) == "READY");
  CHECK(Str(s.at("status").at("code")) == "OK");
  CHECK(Str(s.at("createTime")) == "2026-08-01T10:00:00Z");               // whole seconds
  CHECK(Str(s.at("updateTime")) == "2026-08-01T11:10:00.000000Z");        // microseconds
  const auto& leaked = p2.obj().at("trainingSessions").at(0).as_object();
  CHECK(Str(leaked.at("state")) == "TRAINING_SESSION_STATE_UNSPECIFIED");
  CHECK(Str(leaked.at("baseModel")).empty());
}

TEST_CASE("fireworks: pageSize above 200 is coerced to 200") {
  std::string yaml = "fireworks:\n  - account: big\n    keys: [{key: fw-key}]\n    deployments:\n";
  for (int i = 0; i < 250; ++i) yaml += "      - {id: d" + std::to_string(i) + ", created: -1h}\n";
  SimFixture f(yaml);
  auto r = f.Fw("GET", "/v1/accounts/big/deployments?pageSize=500");
  CHECK(r.obj().at("deployments").as_array().size() == 200);
  CHECK(r.obj().at("totalSize").as_int64() == 250);
  auto d = f.Fw("GET", "/v1/accounts/big/deployments");
  CHECK(d.obj().at("deployments").as_array().size() == 50);  // the default
}

TEST_CASE("fireworks: Bearer and X-Api-Key both authenticate, errors are google.rpc.Status") {
  SimFixture f(kScenario);
  CHECK(f.Call("GET", "/v1/accounts/acme-ml/deployments", {{"Authorization", "Bearer fw-key"}}).status == 200);
  auto bad = f.Fw("GET", "/v1/accounts/acme-ml/deployments", "", "nope");
  CHECK(bad.status == 401);
  CHECK(bad.obj().at("code").as_int64() == 16);
  auto infer = f.Fw("GET", "/v1/accounts/acme-ml/trainingSessions", "", "fw-infer");
  CHECK(infer.status == 401);  // inference-only key on a training route
  CHECK(f.Fw("GET", "/v1/accounts/acme-ml/deployments", "", "fw-infer").status == 200);
  CHECK(f.Fw("GET", "/v1/accounts/other/deployments").status == 403);
  auto accounts = f.Fw("GET", "/v1/accounts?pageSize=2");
  CHECK(Str(accounts.obj().at("accounts").at(0).at("name")) == "accounts/acme-ml");
}

TEST_CASE("fireworks: session checkpoints oldest first, promote validates ids and the 17-character rule") {
  SimFixture f(kScenario);
  const std::string s = "/v1/accounts/acme-ml/trainingSessions/ts-5bb4c28c5434412f8ce3f4317d23b0e8";
  auto c = f.Fw("GET", s + "/checkpoints");
  REQUIRE(c.status == 200);
  const auto& list = c.obj().at("trainingSessionCheckpoints").as_array();
  REQUIRE(list.size() == 3);
  CHECK(Keys(list[0]) == V{"availability", "checkpointName", "checkpointType", "createTime", "name", "promotable",
                           "updateTime"});
  CHECK_FALSE(list[0].at("promotable").as_bool());
  const std::string training = Str(list[0].at("checkpointName"));
  const std::string final_ckpt = Str(list[1].at("checkpointName"));
  const std::string long_ckpt = Str(list[2].at("checkpointName"));
  CHECK(final_ckpt.find("-final-") != std::string::npos);
  CHECK(final_ckpt.rfind("run-", 0) == 0);

  auto promote = [&](const std::string& ckpt, const std::string& body) {
    return f.Fw("POST", s + "/checkpoints/" + ckpt + ":promote", body);
  };
  auto missing = promote(final_ckpt, "{}");
  CHECK(missing.status == 400);
  CHECK(Str(missing.obj().at("message")) == "output_model_id is required");
  auto chars = promote(final_ckpt, R"({"outputModel":"accounts/acme-ml/models/Bad_Name"})");
  CHECK(Str(chars.obj().at("message")) ==
        "output_model_id 'Bad_Name' contains invalid characters. Must be lowercase a-z, 0-9, or hyphen.");
  const std::string long_id(64, 'a');
  auto too_long = promote(final_ckpt, "{\"outputModel\":\"accounts/acme-ml/models/" + long_id + "\"}");
  CHECK(Str(too_long.obj().at("message")) ==
        "output_model_id '" + long_id + "' is too long (64 chars). Maximum is 63 characters.");
  CHECK(promote(training, R"({"outputModel":"accounts/acme-ml/models/x"})").status == 400);
  auto long_name = promote(long_ckpt, R"({"outputModel":"accounts/acme-ml/models/x"})");
  CHECK(long_name.status == 400);
  CHECK(Str(long_name.obj().at("message")).find("too long (27 chars)") != std::string::npos);
  auto ok = promote(final_ckpt, R"({"output_model":"accounts/acme-ml/models/lw-tickets-final","base_model":"x"})");
  REQUIRE(ok.status == 200);
  CHECK(Str(ok.obj().at("model").at("kind")) == "HF_PEFT_ADDON");
  auto again = promote(final_ckpt, R"({"outputModel":"accounts/acme-ml/models/lw-tickets-final"})");
  CHECK(again.status == 409);
  CHECK(again.obj().at("code").as_int64() == 6);
  CHECK(f.Fw("GET", "/v1/accounts/acme-ml/models/lw-tickets-final").status == 200);
}

TEST_CASE("fireworks: deleting a session frees its slot and takes its checkpoints out of reach") {
  SimFixture f(kScenario);
  const std::string s = "/v1/accounts/acme-ml/trainingSessions/ts-5bb4c28c5434412f8ce3f4317d23b0e8";
  CHECK(f.Fw("DELETE", s).body == "{}");
  CHECK(Str(f.Fw("GET", s).obj().at("state")) == "DELETING");
  CHECK(f.Fw("GET", s + "/checkpoints").status == 404);
  CHECK(f.Fw("POST", s + "/checkpoints/x:promote", R"({"outputModel":"accounts/acme-ml/models/y"})").status == 404);
  f.Advance(6s);
  CHECK(f.Fw("GET", s).status == 404);
  CHECK(f.Fw("DELETE", s).status == 404);
  // The EXPIRED end-state switch.
  SimFixture g(std::string("switches: {delete_final_state: EXPIRED}\n") +
               std::string(kScenario).substr(std::string(kScenario).find("fireworks:")));
  g.Fw("DELETE", s);
  g.Advance(10s);
  CHECK(Str(g.Fw("GET", s).obj().at("state")) == "EXPIRED");
}

TEST_CASE("fireworks: the slot cap answers 429 RATE_LIMIT_EXCEEDED from the gateway, in its error shape") {
  SimFixture f(kScenario);
  // Three slots, three holders (READY, READY, the leaked UNSPECIFIED one).
  auto full = f.Fw("POST", "/training/v1/serverless/create_session", R"({"base_model":"accounts/fireworks/models/qwen3p8-27b"})");
  REQUIRE(full.status == 200);  // sessions unit: runs; the session itself takes no slot yet
  const std::string sid = Str(full.obj().at("session_id"));
  CHECK(sid.rfind("ts-", 0) == 0);
  CHECK(sid.size() == 35);
  auto run = f.Fw("POST", "/training/v1/serverless/create_model", "{\"session_id\":\"" + sid + "\"}");
  CHECK(run.status == 429);
  CHECK(Keys(run.json) == V{"error", "request_id"});
  CHECK(Str(run.obj().at("error").at("code")) == "RATE_LIMIT_EXCEEDED");
  CHECK(Str(run.obj().at("error").at("message")) ==
        "maximum concurrent serverless training runs exceeded: in use 3, limit 3");
  REQUIRE(f.Fw("DELETE", "/v1/accounts/acme-ml/trainingSessions/ts-11111111111111111111111111111111").status == 200);
  CHECK(f.Fw("POST", "/training/v1/serverless/create_model", "{\"session_id\":\"" + sid + "\"}").status == 200);
  auto gone = f.Fw("POST", "/training/v1/serverless/create_model", R"({"session_id":"ts-deadbeef"})");
  CHECK(gone.status == 404);
  CHECK(Str(gone.obj().at("error").at("message")) ==
        "create_model: TrainingSession accounts/acme-ml/trainingSessions/ts-deadbeef not found");
}

TEST_CASE("fireworks: per-model slot caps name the model") {
  const std::string rest = std::string(kScenario).substr(std::string(kScenario).find("fireworks:"));
  SimFixture f("switches: {slot_cap_per_model: {qwen3p8-27b: 1}}\n" + rest);
  auto sid = Str(f.Fw("POST", "/training/v1/serverless/create_session",
                      R"({"baseModel":"accounts/fireworks/models/qwen3p8-27b"})").obj().at("session_id"));
  auto r = f.Fw("POST", "/training/v1/serverless/create_model", "{\"sessionId\":\"" + sid + "\"}");
  CHECK(r.status == 429);
  CHECK(Str(r.obj().at("error").at("message")) ==
        "maximum concurrent serverless training runs for base model accounts/fireworks/models/qwen3p8-27b exceeded: "
        "in use 2, limit 1");
}

TEST_CASE("fireworks: RLOR jobs: states, int64 accelerator-seconds as strings, cancel, tombstones") {
  SimFixture f(kScenario);
  auto list = f.Fw("GET", "/v1/accounts/acme-ml/rlorTrainerJobs?pageSize=200");
  REQUIRE(list.status == 200);
  const auto& jobs = list.obj().at("rlorTrainerJobs").as_array();
  REQUIRE(jobs.size() == 2);
  const auto& j = jobs[0].as_object();
  CHECK(Str(j.at("state")) == "JOB_STATE_IDLE");
  CHECK(j.at("acceleratorSeconds").at("NVIDIA_H200_141GB").is_string());
  CHECK(Str(j.at("inactivityTimeout")) == "3600s");
  CHECK(j.at("disableInactivityCleanup").as_bool());
  CHECK(Str(jobs[1].at("state")) == "JOB_STATE_IDLE");  // created 20m ago, placed, no training yet
  const std::string base = "/v1/accounts/acme-ml/rlorTrainerJobs/training-api-service-1a2b3c4d";
  CHECK(Str(f.Fw("GET", base + "/checkpoints").obj().at("checkpoints").at(0).at("restoreReference")) == "step-200");
  CHECK(f.Fw("POST", base + ":cancel", "{}").body == "{}");
  CHECK(Str(f.Fw("GET", base).obj().at("state")) == "JOB_STATE_CANCELLING");
  f.Advance(11s);
  CHECK(Str(f.Fw("GET", base).obj().at("state")) == "JOB_STATE_CANCELLED");
  const std::string seconds = Str(f.Fw("GET", base).obj().at("acceleratorSeconds").at("NVIDIA_H200_141GB"));
  f.Advance(10min);
  CHECK(Str(f.Fw("GET", base).obj().at("acceleratorSeconds").at("NVIDIA_H200_141GB")) == seconds);  // stopped billing
  CHECK(f.Fw("POST", base + ":resume", "{}").status == 200);
  CHECK(f.Fw("DELETE", base).body == "{}");
  CHECK(f.Fw("DELETE", base).body == "{}");  // no-op repeat
  CHECK(f.Fw("GET", "/v1/accounts/acme-ml/rlorTrainerJobs").obj().at("rlorTrainerJobs").as_array().size() == 1);
  CHECK(f.Fw("GET", "/v1/accounts/acme-ml/rlorTrainerJobs?includeArchived=true")
            .obj().at("rlorTrainerJobs").as_array().size() == 2);
  CHECK(Str(f.Fw("GET", base).obj().at("state")) == "JOB_STATE_DELETED");
  CHECK(f.Fw("GET", base + "/checkpoints").status == 200);  // readable during retention
  auto cancel = f.Fw("POST", base + ":cancel", "{}");
  CHECK(cancel.status == 400);
  CHECK(Str(cancel.obj().at("message")) == "cannot cancel job in state: JOB_STATE_DELETED");
  CHECK(f.Fw("POST", "/v1/accounts/acme-ml/rlorTrainerJobs?rlorTrainerJobId=training-api-service-1a2b3c4d", "{}").status ==
        409);
  f.Advance(31 * 24h);
  CHECK(f.Fw("GET", base).status == 404);
}

TEST_CASE("fireworks: the trainer's inactivity auto-stop after 60 minutes") {
  SimFixture f(kScenario);
  const std::string base = "/v1/accounts/acme-ml/rlorTrainerJobs/training-api-service-55555555";
  // Placed at -18m, never trained: the reaper stops it 60 minutes after placement + 1m.
  f.Advance(42min);
  CHECK(Str(f.Fw("GET", base).obj().at("state")) == "JOB_STATE_IDLE");
  f.Advance(2min);
  CHECK(Str(f.Fw("GET", base).obj().at("state")) == "JOB_STATE_CANCELLED");
}

TEST_CASE("fireworks: deployments: replicas, PATCH with and without updateMask, soft and hard delete, :scale") {
  SimFixture f(kScenario);
  const std::string base = "/v1/accounts/acme-ml/deployments/idle-dep";
  auto d = f.Fw("GET", base);
  REQUIRE(d.status == 200);
  CHECK(d.obj().at("replicaCount").as_int64() == 1);
  CHECK(Keys(d.obj().at("replicaStats")) ==
        V{"downloadingModelReplicaCount", "effectiveReplicaCount", "initializingReplicaCount",
          "pendingSchedulingReplicaCount", "readyReplicaCount", "revocableReplicaCount"});
  CHECK(Str(d.obj().at("autoscalingPolicy").at("scaleToZeroWindow")) == "3600s");
  // S18: min 0 and no traffic for scaleToZeroWindow: zero replicas.
  f.Advance(31min);
  CHECK(f.Fw("GET", base).obj().at("replicaCount").as_int64() == 0);
  CHECK(f.Fw("GET", base + ":metrics").obj().at("metrics").at("requests_per_second").as_double() == 0.0);

  const std::string roll = "/v1/accounts/acme-ml/deployments/rollout-1";
  CHECK(f.Fw("GET", roll).obj().at("annotations").at("fireworks-training-sdk/managed-rollout") == "true");
  CHECK(f.Fw("GET", roll).obj().at("replicaCount").as_int64() == 1);  // never scales to zero
  auto patched = f.Fw("PATCH", roll + "?updateMask=min_replica_count,max_replica_count",
                      R"({"minReplicaCount":0,"maxReplicaCount":0})");
  REQUIRE(patched.status == 200);
  CHECK(patched.obj().at("replicaCount").as_int64() == 0);
  CHECK(f.Fw("PATCH", roll + "?updateMask=min_replica_count,max_replica_count",
             R"({"minReplicaCount":0,"maxReplicaCount":0})").status == 200);  // idempotent
  // S19: without updateMask, unspecified fields reset (max back to the default).
  auto replaced = f.Fw("PATCH", roll, R"({"minReplicaCount":1})");
  CHECK(replaced.obj().at("maxReplicaCount").as_int64() == 1);
  CHECK(f.Fw("PATCH", roll + "?updateMask=display_name", "{}").status == 400);

  // The rollout serves a live trainer: delete without ignoreChecks is refused.
  SimFixture g(kScenario);
  g.Fw("POST", "/_sim/activity", R"({"id":"training-api-service-1a2b3c4d","from_seconds":0,"to_seconds":"forever"})");
  CHECK(g.Fw("DELETE", roll).status == 400);

  CHECK(f.Fw("DELETE", base).body == "{}");
  CHECK(f.Fw("GET", "/v1/accounts/acme-ml/deployments").obj().at("deployments").as_array().size() == 1);
  auto shown = f.Fw("GET", "/v1/accounts/acme-ml/deployments?showDeleted=true");
  const auto& del = shown.obj().at("deployments").at(1).as_object();
  CHECK(Str(del.at("state")) == "DELETED");
  CHECK(del.contains("deleteTime"));
  CHECK(del.contains("purgeTime"));
  CHECK(f.Fw("POST", base + ":undelete", "{}").status == 200);
  CHECK(Str(f.Fw("GET", base).obj().at("state")) == "READY");
  CHECK(f.Fw("PATCH", base + ":scale", R"({"replicaCount":2})").obj().at("replicaCount").as_int64() == 2);
  CHECK(f.Fw("DELETE", base + "?hard=true").status == 200);
  CHECK(f.Fw("GET", base).status == 404);
}

TEST_CASE("fireworks: billingUsage reports tokens per session and meter as strings, an hour late") {
  SimFixture f(kScenario);
  auto u = f.Fw("GET", "/v1/accounts/acme-ml/billingUsage?startTime=2026-08-01T00:00:00Z&endTime=2026-08-02T00:00:00Z");
  REQUIRE(u.status == 200);
  CHECK(Keys(u.json) == V{"dedicatedCosts", "serverlessCosts", "trainingCosts"});
  int64_t train = 0;
  for (const auto& row : u.obj().at("trainingCosts").as_array()) {
    if (Str(row.at("trainingSessionId")) == "ts-5bb4c28c5434412f8ce3f4317d23b0e8" && Str(row.at("group")) == "train") {
      CHECK(row.at("tokens").is_string());
      train = std::stoll(Str(row.at("tokens")));
    }
  }
  // Activity ran 10:00–11:10; usage up to 11:00 (now minus the hour of lag) has landed.
  CHECK(train == 60 * 2000);
  f.Advance(2h);
  const auto later = f.Fw("GET", "/v1/accounts/acme-ml/billingUsage?startTime=2026-08-01T00:00:00Z&endTime="
                                 "2026-08-02T00:00:00Z");
  for (const auto& row : later.obj().at("trainingCosts").as_array()) {
    if (Str(row.at("trainingSessionId")) == "ts-5bb4c28c5434412f8ce3f4317d23b0e8" && Str(row.at("group")) == "train") {
      CHECK(std::stoll(Str(row.at("tokens"))) == 70 * 2000);
    }
  }
  CHECK(f.Fw("GET", "/v1/accounts/acme-ml/billingUsage").status == 400);
  auto costs = f.Fw("POST", "/v1/accounts/acme-ml/usageCosts:query",
                    R"({"startTime":"2026-08-01T00:00:00Z","endTime":"2026-08-02T00:00:00Z","filter":{"sessionId":"ts-5bb4c28c5434412f8ce3f4317d23b0e8"}})");
  REQUIRE(costs.status == 200);
  CHECK(Keys(costs.obj().at("subtotal")) == V{"currencyCode", "nanos", "units"});
  CHECK(Str(costs.obj().at("attributionCompleteness")) == "INCOMPLETE");
}

TEST_CASE("fireworks: the account request ceiling answers 429 with Retry-After") {
  const std::string rest = std::string(kScenario).substr(std::string(kScenario).find("fireworks:"));
  SimFixture f("switches: {fireworks_rpm: 5}\n" + rest);
  for (int i = 0; i < 5; ++i) REQUIRE(f.Fw("GET", "/v1/accounts/acme-ml/deployments").status == 200);
  auto r = f.Fw("GET", "/v1/accounts/acme-ml/deployments");
  CHECK(r.status == 429);
  CHECK_FALSE(r.Header("Retry-After").empty());
  CHECK(r.obj().at("details").at(0).at("reason") == "RATE_LIMIT_EXCEEDED");
}
