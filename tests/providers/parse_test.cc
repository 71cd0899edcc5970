// The adapters' parsers on the example bodies of shared/providers/*.md, and the
// normalized lifecycle for every native status.
#include <doctest/doctest.h>

#include <boost/json/parse.hpp>
#include <tuple>

#include "providers/baseten/parse.h"
#include "providers/fireworks/account_metrics.h"
#include "providers/fireworks/parse.h"
#include "providers/gpu.h"
#include "providers/provider.h"

using namespace loopwarden;
using namespace loopwarden::providers;
using namespace std::chrono_literals;

namespace {
boost::json::value J(const char* s) { return boost::json::parse(s); }
const Time kNow = ParseTime("2026-07-21T00:00:00Z").value();
}  // namespace

TEST_CASE("Baseten example bodies parse field for field") {
  auto runs = baseten::ParseRuns(std::string(
      R"({"runs":[{"id":"k4q95w5","session_id":"abc1234","deployment_id":"def456","name":"grpo-tickets","base_model":"Qwen/Qwen3-8B","base_url":"https://trainer-def456.api.baseten.co/trainer","created_at":"2026-07-20T22:51:58.115Z","status":{"name":"ACTIVE"},"user":{"email":"ana@example.com"},"sampler":null}]})"));
  REQUIRE(runs.ok());
  REQUIRE(runs->items.size() == 1);
  const auto& r = runs->items[0];
  CHECK(r.id == "k4q95w5");
  CHECK(r.deployment_id == "def456");
  CHECK(r.status == "ACTIVE");
  CHECK(r.owner == "ana@example.com");
  CHECK(r.created_at == ParseTime("2026-07-20T22:51:58.115Z").value());
  CHECK_FALSE(r.sampler.has_value());

  auto run = baseten::ParseRunBody(std::string(
      R"({"run":{"id":"k4q95w5","session_id":"abc1234","deployment_id":null,"name":"sft-small","base_model":"Qwen/Qwen3.6-35B-A3B","base_url":"https://serverless.api.baseten.co/loops/k4q95w5","created_at":"2026-07-21T08:00:00Z","status":{"name":"INACTIVE"},"user":{"email":null},"sampler":null}})"));
  REQUIRE(run.ok());
  CHECK(run->deployment_id.empty());
  CHECK(run->owner.empty());

  auto samplers = baseten::ParseSamplers(std::string(
      R"({"samplers":[{"id":"smp82kq","base_url":"https://model-wnpkzp03.api.baseten.co/sampler","base_model":"Qwen/Qwen3-8B","created_at":"2026-07-20T23:02:10Z","model_id":"wnpkzp03","deployment_id":"qrpg2r0","status":{"name":"ACTIVE"},"user":{"email":"ana@example.com"},"instance_type":{"id":"H100x26x234","name":"H100x26x234","memory_limit_mib":239616,"millicpu_limit":26000,"gpu_count":1,"gpu_type":"H100","gpu_memory_limit_mib":81920},"node_count":1}]})"));
  REQUIRE(samplers.ok());
  CHECK(samplers->items[0].instance_type->gpu_count == 1);
  CHECK(samplers->items[0].instance_type->gpu_type == "H100");

  auto deps = baseten::ParseLoopsDeployments(std::string(
      R"({"deployments":[{"id":"def456","active_run_id":"k4q95w5","latest_run_id":"k4q95w5","base_model":"Qwen/Qwen3-8B","base_url":"https://trainer-def456.api.baseten.co/trainer","status":{"name":"RUNNING"},"user":{"email":"ana@example.com"},"created_at":"2026-07-20T22:51:58Z","availability_model":"dedicated","instance_type":{"id":"H100x8","name":"H100x8","memory_limit_mib":1843200,"millicpu_limit":208000,"gpu_count":8,"gpu_type":"H100","gpu_memory_limit_mib":81920},"node_count":2,"sampler":{"id":"smp82kq","status":{"name":"ACTIVE"},"model_id":"wnpkzp03","deployment_id":"qrpg2r0","base_model":"Qwen/Qwen3-8B","base_url":"https://x","created_at":"2026-07-20T23:02:10Z","user":{"email":"ana@example.com"},"instance_type":null,"node_count":1}}]})"));
  REQUIRE(deps.ok());
  const auto& d = deps->items[0];
  CHECK(d.instance_type->gpu_count * d.node_count == 16);  // GPUs = gpu_count x node_count
  CHECK(d.sampler->id == "smp82kq");
  CHECK_FALSE(d.sampler->instance_type.has_value());

  auto cks = baseten::ParseCheckpoints(std::string(
      R"({"checkpoints":[{"id":"ckp9a1","checkpoint_id":"step-100","run_id":"k4q95w5","target":"sampler","checkpoint_type":"lora","base_model":"Qwen/Qwen3-8B","lora_adapter_config":{"r":64},"size_bytes":167772160,"created_at":"2026-07-20T23:40:00Z","sync_status":"COMPLETE"}]})"));
  REQUIRE(cks.ok());
  CHECK(cks->items[0].name == "step-100");
  CHECK_FALSE(cks->items[0].syncing);

  auto infer = baseten::ParseDeploymentBody(std::string(
      R"({"id":"qrpg2r0","created_at":"2026-07-21T01:00:00Z","name":"deployment-1","model_id":"wnpkzp03","is_production":false,"is_development":true,"status":"ACTIVE","active_replica_count":1,"autoscaling_settings":{"min_replica":0,"max_replica":1,"autoscaling_window":60,"scale_down_delay":900,"concurrency_target":1,"target_utilization_percentage":null,"target_in_flight_tokens":null,"max_scale_down_rate":null},"instance_type_name":"H100x26x234","environment":null,"labels":null,"region":null,"request_backpressure_settings":{"policy":null}})"));
  REQUIRE(infer.ok());
  CHECK(infer->status == "ACTIVE");  // a bare string here
  CHECK(infer->active_replica_count == 1);
  CHECK(infer->min_replica == 0);

  auto prices = baseten::ParsePrices(std::string(
      R"({"instance_types":[{"instance_type":{"id":"H100x26x234","name":"H100x26x234","memory_limit_mib":239616,"millicpu_limit":26000,"gpu_count":1,"gpu_type":"H100","gpu_memory_limit_mib":81920},"price":0.10833}]})"));
  REQUIRE(prices.ok());
  CHECK(prices->at("H100x26x234").second == doctest::Approx(0.10833));

  CHECK_FALSE(baseten::ParseRuns(std::string(R"({"run":{}})")).ok());  // wrong wrapper
  auto dropped = baseten::ParseRuns(std::string(R"({"runs":[{"name":"no id"},{"id":"ok1"}]})"));
  CHECK(dropped->items.size() == 1);
  CHECK(dropped->dropped == 1);
}

TEST_CASE("Baseten metrics: idle when every rank is at or below the threshold, missing when stale") {
  auto body = J(
      R"({"deployment_id":"def456","metrics":{"inference_volume":[{"value":0,"timestamp":"2026-07-20T23:58:00Z"},{"value":0,"timestamp":"2026-07-20T23:59:00Z"}],"gpu_utilization":{"0":[{"value":0.02,"timestamp":"2026-07-20T23:58:00Z"},{"value":0.02,"timestamp":"2026-07-20T23:59:00Z"}],"1":[{"value":40,"timestamp":"2026-07-20T23:58:00Z"},{"value":0.0,"timestamp":"2026-07-20T23:59:00Z"}]}}})");
  auto s = baseten::SummarizeTrainerMetrics(body, 0.05, kNow, 3min);
  CHECK(s.present);
  CHECK(s.last_busy == ParseTime("2026-07-20T23:58:00Z").value());  // rank 1 at 40 (percent) was busy
  CHECK_FALSE(s.busy_latest);
  auto stale = baseten::SummarizeTrainerMetrics(body, 0.05, kNow + 10min, 3min);
  CHECK_FALSE(stale.present);
  auto empty = baseten::SummarizeTrainerMetrics(J(R"({"metrics":{"gpu_utilization":{},"inference_volume":[]}})"), 0.05, kNow, 3min);
  CHECK_FALSE(empty.present);
}

TEST_CASE("Baseten lifecycle for every native status") {
  using L = Lifecycle;
  struct Case {
    const char* status;
    L lc;
    bool transitional;
    bool bills;
  };
  for (const Case& c : std::initializer_list<Case>{{"ACTIVE", L::kRunning, false, true}, {"INACTIVE", L::kStopped, false, false}}) {
    auto m = baseten::RunLifecycle(c.status);
    CHECK(m.lifecycle == c.lc);
  }
  for (const Case& c : std::initializer_list<Case>{{"CREATED", L::kStarting, true, true},
                                                  {"DEPLOYING", L::kStarting, true, true},
                                                  {"RUNNING", L::kRunning, false, true},
                                                  {"SCALED_TO_ZERO", L::kScaledToZero, false, false},
                                                  {"STOPPED", L::kStopped, false, false},
                                                  {"PREEMPTED", L::kStopped, false, false},
                                                  {"FAILED", L::kFailed, false, false}}) {
    CAPTURE(c.status);
    auto m = baseten::LoopsDeploymentLifecycle(c.status);
    CHECK(m.lifecycle == c.lc);
    CHECK(m.transitional == c.transitional);
    CHECK(m.bills == c.bills);
  }
  for (const Case& c : std::initializer_list<Case>{{"BUILDING", L::kStarting, true, true},
                                                  {"DEPLOYING", L::kStarting, true, true},
                                                  {"LOADING_MODEL", L::kStarting, true, true},
                                                  {"WAKING_UP", L::kStarting, true, true},
                                                  {"UPDATING", L::kRunning, true, true},
                                                  {"ACTIVE", L::kRunning, false, true},
                                                  {"UNHEALTHY", L::kRunning, false, true},
                                                  {"DEACTIVATING", L::kStopped, true, true},
                                                  {"SCALED_TO_ZERO", L::kScaledToZero, false, false},
                                                  {"INACTIVE", L::kStopped, false, false},
                                                  {"BUILD_STOPPED", L::kStopped, false, false},
                                                  {"FAILED", L::kFailed, false, false},
                                                  {"DEPLOY_FAILED", L::kFailed, false, false},
                                                  {"BUILD_FAILED", L::kFailed, false, false},
                                                  {"SOMETHING_NEW", L::kUnknown, false, false}}) {
    CAPTURE(c.status);
    auto m = baseten::DeploymentStatusLifecycle(c.status);
    CHECK(m.lifecycle == c.lc);
    CHECK(m.transitional == c.transitional);
    CHECK(m.bills == c.bills);
  }
}

TEST_CASE("Fireworks example bodies parse: camelCase, int64 strings, full names") {
  auto sessions = fireworks::ParseSessions(std::string(
      R"({"trainingSessions":[{"name":"accounts/acme-ml/trainingSessions/ts-5bb4c28c5434412f8ce3f4317d23b0e8","displayName":"","baseModel":"accounts/fireworks/models/qwen3p8-27b","createTime":"2026-08-01T09:00:13Z","updateTime":"2026-08-01T09:41:02.123456Z","createdBy":"ana@example.com","state":"READY","referenceState":"ADAPTER","status":{"code":"OK","message":""}},{"name":"accounts/acme-ml/trainingSessions/ts-0c1de2f3a4b5c6d7e8f90a1b2c3d4e5f","baseModel":"","createTime":"2026-08-01T10:02:00Z","updateTime":"2026-08-01T10:02:00Z","createdBy":"bo@example.com","state":"TRAINING_SESSION_STATE_UNSPECIFIED","status":{"code":"OK","message":""}}],"nextPageToken":"","totalSize":2})"));
  REQUIRE(sessions.ok());
  REQUIRE(sessions->items.size() == 2);
  CHECK(sessions->items[0].id == "ts-5bb4c28c5434412f8ce3f4317d23b0e8");
  CHECK(sessions->items[0].updated == ParseTime("2026-08-01T09:41:02.123456Z").value());
  CHECK(sessions->items[1].base_model.empty());
  CHECK(sessions->next_page_token.empty());

  auto cks = fireworks::ParseCheckpoints(std::string(
      R"({"trainingSessionCheckpoints":[{"name":"accounts/acme-ml/trainingSessions/ts-5bb4/checkpoints/run-3f9c2a7e5b1d4c8a9e0f6b2d7c4a1e35-step-0100","checkpointName":"run-3f9c2a7e5b1d4c8a9e0f6b2d7c4a1e35-step-0100","checkpointType":"CHECKPOINT_TYPE_TRAINING_LORA","promotable":false,"createTime":"2026-08-01T09:30:00Z","updateTime":"2026-08-01T09:30:00Z","availability":[]},{"name":"accounts/acme-ml/trainingSessions/ts-5bb4/checkpoints/run-3f9c2a7e5b1d4c8a9e0f6b2d7c4a1e35-final-1a2b3c4d","checkpointName":"run-3f9c2a7e5b1d4c8a9e0f6b2d7c4a1e35-final-1a2b3c4d","checkpointType":"CHECKPOINT_TYPE_INFERENCE_LORA","promotable":true,"createTime":"2026-08-01T09:40:11.5Z","updateTime":"2026-08-01T09:40:11.5Z","availability":[{"availabilityClass":"SINGLE_REGION","createTime":"2026-08-01T09:40:11Z","updateTime":"2026-08-01T09:40:11Z"}]}],"nextPageToken":"","totalSize":2})"));
  REQUIRE(cks.ok());
  CHECK(cks->items[1].promotable);
  CHECK(LogicalCheckpointName(cks->items[1].server_name, true) == "final");
  CHECK(LogicalCheckpointName(cks->items[0].server_name, false) == "step-0100");
  // The other documented list keys.
  CHECK(fireworks::ParseCheckpoints(std::string(R"({"checkpoints":[{"name":"a/b/c","promotable":true}]})"))->items.size() == 1);
  CHECK(fireworks::ParseCheckpoints(std::string(R"({"training_session_checkpoints":[{"name":"a/b/c"}]})"))->items.size() == 1);

  auto jobs = fireworks::ParseJobs(std::string(
      R"({"rlorTrainerJobs":[{"name":"accounts/acme-ml/rlorTrainerJobs/training-api-service-1a2b3c4d","displayName":"grpo-policy-trainer","createTime":"2026-08-01T08:00:00Z","createdBy":"ana@example.com","state":"JOB_STATE_RUNNING","status":{"code":"OK","message":""},"acceleratorSeconds":{"NVIDIA_H200_141GB":"86400"},"trainingConfig":{"baseModel":"accounts/fireworks/models/qwen3-8b","loraRank":16,"learningRate":1e-05,"maxContextLength":4096,"acceleratorType":"NVIDIA_H200_141GB","acceleratorCount":8},"nodeCount":1,"serviceMode":true,"keepAlive":false,"hotLoadDeploymentId":"qwen3-8b-1754035200","inactivityTimeout":"3600s","disableInactivityCleanup":false,"purpose":"PURPOSE_UNSPECIFIED"}],"nextPageToken":"","totalSize":1})"));
  REQUIRE(jobs.ok());
  const auto& j = jobs->items[0];
  CHECK(j.accelerator_count == 8);
  CHECK(j.inactivity_timeout == Duration(1h));
  CHECK(NormalizeGpuType(j.accelerator_type) == "H200");

  auto deps = fireworks::ParseDeployments(std::string(
      R"({"deployments":[{"name":"accounts/acme-ml/deployments/qwen3-8b-1754035200","displayName":"","baseModel":"accounts/fireworks/models/qwen3-8b","createTime":"2026-08-01T08:01:00Z","updateTime":"2026-08-01T08:20:00.482913Z","state":"READY","status":{"code":"OK","message":""},"minReplicaCount":1,"maxReplicaCount":1,"desiredReplicaCount":1,"replicaCount":1,"replicaStats":{"pendingSchedulingReplicaCount":0,"downloadingModelReplicaCount":0,"initializingReplicaCount":0,"readyReplicaCount":1,"revocableReplicaCount":0,"effectiveReplicaCount":1.0},"autoscalingPolicy":{"scaleUpWindow":"30s","scaleDownWindow":"600s","scaleToZeroWindow":"3600s","loadTargets":{"default":0.8}},"acceleratorType":"NVIDIA_H100_80GB","acceleratorCount":1,"enableHotLoad":true,"hotLoadTrainerJob":"accounts/acme-ml/rlorTrainerJobs/training-api-service-1a2b3c4d","annotations":{"fireworks-training-sdk/managed-rollout":"true"}},{"name":"accounts/acme-ml/deployments/old-eval","baseModel":"accounts/acme-ml/models/lw-tickets-final","state":"DELETED","deleteTime":"2026-07-30T12:00:00Z","purgeTime":"2026-08-06T12:00:00Z","minReplicaCount":0,"maxReplicaCount":1,"replicaCount":0,"acceleratorType":"NVIDIA_A100_80GB","acceleratorCount":1}],"nextPageToken":"","totalSize":2})"));
  REQUIRE(deps.ok());
  CHECK(deps->items[0].managed_rollout);
  // Annotations become labels (`report --by label:KEY`).
  CHECK(deps->items[0].annotations == loopwarden::FlatMap<loopwarden::Interned, std::string>{{"fireworks-training-sdk/managed-rollout", "true"}});
  CHECK(deps->total_size == 2);  // room for the whole list is taken from the first page
  CHECK(deps->items[1].annotations.empty());
  CHECK(deps->items[0].hot_load_trainer_job == "training-api-service-1a2b3c4d");
  CHECK(deps->items[0].billed_replicas == 1);
  CHECK(deps->items[1].billed_replicas == 0);

  auto usage = fireworks::ParseBillingUsage(
      R"({"serverlessCosts":[],"dedicatedCosts":[{"acceleratorSeconds":"7200","acceleratorType":"NVIDIA_H100_80GB","baseModel":"accounts/fireworks/models/qwen3-8b","deploymentId":"qwen3-8b-1754035200","startTime":"2026-08-01T00:00:00Z","endTime":"2026-08-02T00:00:00Z","usageType":"DEDICATED_DEPLOYMENT"}],"trainingCosts":[{"acceleratorSeconds":"0","acceleratorType":"","baseModel":"accounts/fireworks/models/qwen3p8-27b","jobId":"","jobType":"","tokens":"3924000","trainingSessionId":"ts-5bb4c28c5434412f8ce3f4317d23b0e8","startTime":"2026-08-01T00:00:00Z","endTime":"2026-08-02T00:00:00Z","usageType":"TRAINING"}]})");
  REQUIRE(usage.ok());
  CHECK(usage->session_tokens.at("ts-5bb4c28c5434412f8ce3f4317d23b0e8").at("train") == 3'924'000);
  CHECK(usage->deployment_accelerator_seconds.at("qwen3-8b-1754035200") == 7200);
}

TEST_CASE("Fireworks ids: the last segment of a resource name, or the whole of a bare id") {
  using providers::fireworks::IdFromName;
  CHECK(IdFromName("accounts/acme/trainingSessions/ts-5bb4c28c5434412f8ce3f4317d23b0e8") ==
        "ts-5bb4c28c5434412f8ce3f4317d23b0e8");
  CHECK(IdFromName("ts-1") == "ts-1");
  CHECK(IdFromName("") == "");
  CHECK(IdFromName("accounts/acme/") == "");
  CHECK(IdFromName("/x") == "x");
  CHECK(IdFromName("a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x/y/z/0123456789abcdef0123456789abcdef") ==
        "0123456789abcdef0123456789abcdef");
}

TEST_CASE("Fireworks lifecycle for every native state") {
  using L = Lifecycle;
  struct Case {
    const char* state;
    L lc;
    bool transitional;
  };
  for (const Case& c : std::initializer_list<Case>{{"READY", L::kRunning, false},
                                                  {"TRAINING_SESSION_STATE_UNSPECIFIED", L::kUnknown, false},
                                                  {"DELETING", L::kDeleted, true},
                                                  {"EXPIRED", L::kStopped, false},
                                                  {"FAILED", L::kFailed, false}}) {
    CAPTURE(c.state);
    CHECK(fireworks::SessionLifecycle(c.state).lifecycle == c.lc);
    CHECK(fireworks::SessionLifecycle(c.state).transitional == c.transitional);
  }
  for (const Case& c : std::initializer_list<Case>{{"JOB_STATE_CREATING", L::kStarting, true},
                                                  {"JOB_STATE_PENDING", L::kStarting, true},
                                                  {"JOB_STATE_VALIDATING", L::kStarting, true},
                                                  {"JOB_STATE_RE_QUEUEING", L::kStarting, true},
                                                  {"JOB_STATE_CREATING_INPUT_DATASET", L::kStarting, true},
                                                  {"JOB_STATE_RUNNING", L::kRunning, false},
                                                  {"JOB_STATE_IDLE", L::kRunning, false},
                                                  {"JOB_STATE_WRITING_RESULTS", L::kRunning, true},
                                                  {"JOB_STATE_CANCELLING", L::kStopped, true},
                                                  {"JOB_STATE_DELETING", L::kDeleted, true},
                                                  {"JOB_STATE_DELETING_CLEANING_UP", L::kDeleted, true},
                                                  {"JOB_STATE_COMPLETED", L::kStopped, false},
                                                  {"JOB_STATE_CANCELLED", L::kStopped, false},
                                                  {"JOB_STATE_EARLY_STOPPED", L::kStopped, false},
                                                  {"JOB_STATE_EXPIRED", L::kStopped, false},
                                                  {"JOB_STATE_PAUSED", L::kStopped, false},
                                                  {"JOB_STATE_FAILED", L::kFailed, false},
                                                  {"JOB_STATE_DELETED", L::kDeleted, false},
                                                  {"JOB_STATE_ARCHIVED", L::kDeleted, false},
                                                  {"JOB_STATE_UNSPECIFIED", L::kUnknown, false}}) {
    CAPTURE(c.state);
    CHECK(fireworks::JobLifecycle(c.state).lifecycle == c.lc);
    CHECK(fireworks::JobLifecycle(c.state).transitional == c.transitional);
  }
  CHECK(fireworks::DeploymentLifecycle("READY", 1).lifecycle == L::kRunning);
  CHECK(fireworks::DeploymentLifecycle("READY", 0).lifecycle == L::kScaledToZero);
  CHECK(fireworks::DeploymentLifecycle("CREATING", 1).transitional);
  CHECK(fireworks::DeploymentLifecycle("UPDATING", 1).transitional);
  CHECK(fireworks::DeploymentLifecycle("DELETING", 0).lifecycle == L::kDeleted);
  CHECK(fireworks::DeploymentLifecycle("DELETED", 0).lifecycle == L::kDeleted);
  CHECK(fireworks::DeploymentLifecycle("FAILED", 0).lifecycle == L::kFailed);
  CHECK(fireworks::DeploymentLifecycle("STATE_UNSPECIFIED", 0).lifecycle == L::kUnknown);
}

TEST_CASE("promoted model ids follow the output_model_id rules") {
  CHECK(PromotedModelId("ts-5bb4c28c5434412f8ce3f4317d23b0e8", "final") == "lw-5bb4c28c-final");
  CHECK(PromotedModelId("ts-5bb4c28c5434412f8ce3f4317d23b0e8", "Step_0100") == "lw-5bb4c28c-step-0100");
  const std::string id = PromotedModelId("ts-abc", std::string(80, 'x') + "-");
  CHECK(id.size() <= 63);
  CHECK(id.back() != '-');
}

TEST_CASE("Baseten R18: the documented example, summed over label sets, null is missing not zero") {
  // shared/providers/baseten.md §3, the R18 example.
  auto c = baseten::ParseRequestCounts(J(
      R"({"start_epoch_millis":1753046400000,"end_epoch_millis":1753053600000,"mode":"SUMMARY","step_seconds":null,"metric_descriptors":[{"name":"baseten_replicas_active","unit_hint":"COUNT","kind":"GAUGE","label_sets":[{}]},{"name":"baseten_inference_requests_total","unit_hint":"COUNT","kind":"COUNTER","label_sets":[{}]}],"metric_values":[{"start_epoch_millis":1753046400000,"values":[[1.0],[0.0]]}]})"));
  REQUIRE(c.ok());
  REQUIRE(c->sets.size() == 1);
  CHECK(c->sets[0].requests == std::optional<double>(0.0));
  auto s = baseten::SummarizeRequestCounts(*c);
  CHECK(s.present);
  CHECK_FALSE(s.last_busy.has_value());
  CHECK(s.first_point == FromUnixMillis(1753046400000));

  // Two label sets summed; a set whose every value is null has no data.
  auto series = baseten::ParseRequestCounts(J(
      R"({"start_epoch_millis":0,"end_epoch_millis":180000,"mode":"SERIES","step_seconds":60,"metric_descriptors":[{"name":"baseten_inference_requests_total","label_sets":[{"status_code":"2xx"},{"status_code":"5xx"}]}],"metric_values":[{"start_epoch_millis":0,"values":[[3,1]]},{"start_epoch_millis":60000,"values":[[null,2]]},{"start_epoch_millis":120000,"values":[[null,null]]}]})"));
  REQUIRE(series.ok());
  CHECK(series->sets[0].requests == std::optional<double>(4.0));
  CHECK(series->sets[1].requests == std::optional<double>(2.0));
  CHECK_FALSE(series->sets[2].requests.has_value());
  auto ss = baseten::SummarizeRequestCounts(*series);
  CHECK(ss.present);
  CHECK(ss.total_volume == 6);
  // The newest set with requests ends where the next begins.
  CHECK(ss.last_busy == FromUnixMillis(120000));
  CHECK_FALSE(ss.busy_latest);

  // All null: missing, never idle.
  auto none = baseten::ParseRequestCounts(J(
      R"({"start_epoch_millis":0,"end_epoch_millis":60000,"mode":"SUMMARY","step_seconds":null,"metric_descriptors":[{"name":"baseten_inference_requests_total","label_sets":[{}]}],"metric_values":[{"start_epoch_millis":0,"values":[[null]]}]})"));
  REQUIRE(none.ok());
  CHECK_FALSE(baseten::SummarizeRequestCounts(*none).present);
  // The old Loops-series shape is not this route's answer.
  CHECK_FALSE(baseten::ParseRequestCounts(J(R"({"deployment_id":"d","metrics":{"inference_volume":[]}})")).ok());
}

TEST_CASE("Fireworks R12b: request rates per deployment from the Prometheus text, bad lines named") {
  auto m = fireworks::ParseAccountMetrics(
      "# HELP request_counter_total:sum_by_deployment Request rate\n"
      "# TYPE request_counter_total:sum_by_deployment gauge\n"
      "request_counter_total:sum_by_deployment{base_model=\"accounts/fireworks/models/qwen3-8b\","
      "deployment=\"accounts/acme-ml/deployments/busy\",deployment_account=\"acme-ml\",deployment_id=\"busy\"} 2.5\n"
      "request_counter_total:sum_by_deployment{deployment=\"accounts/acme-ml/deployments/quiet\"} 0 1753046400000\n"
      "tokens_prompt_total:sum_by_deployment{deployment_id=\"busy\"} 900\n"
      "request_counter_total:sum_by_deployment{deployment_id=\"odd\",note=\"a \\\"quoted\\\" value\"} NaN\n");
  REQUIRE(m.ok());
  CHECK(m->size() == 3);
  CHECK(m->at("busy") == doctest::Approx(2.5));
  CHECK(m->at("quiet") == 0);  // named by its full path only
  CHECK(m->at("odd") == 0);
  auto bad = fireworks::ParseAccountMetrics("# ok\nrequest_counter_total{deployment_id=\"x\"} twelve\n");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("line 2") != std::string::npos);
  CHECK_FALSE(fireworks::ParseAccountMetrics("request_counter_total{deployment_id=\"x} 1\n").ok());
  CHECK(fireworks::ParseAccountMetrics("")->empty());
}

TEST_CASE("Fireworks R17: the documented example, Money as units and nanos") {
  auto u = fireworks::ParseUsageCosts(J(
      R"({"rows":[{"dimensions":{"startTime":"2026-08-01T09:00:00Z","model":"accounts/fireworks/models/qwen3p8-27b"},"subtotal":{"currencyCode":"USD","units":"2","nanos":930000000}}],"subtotal":{"currencyCode":"USD","units":"2","nanos":930000000},"nextPageToken":"","evaluationTime":"2026-08-01T11:05:00Z","attributionCompleteness":"COMPLETE"})"));
  REQUIRE(u.ok());
  REQUIRE(u->rows.size() == 1);
  CHECK(u->rows[0].usd == doctest::Approx(2.93));
  CHECK(u->rows[0].start == ParseTime("2026-08-01T09:00:00Z").value());
  CHECK(u->subtotal_usd == doctest::Approx(2.93));
  CHECK(u->evaluated == ParseTime("2026-08-01T11:05:00Z").value());
  CHECK(u->complete);
  CHECK_FALSE(fireworks::ParseUsageCosts(J(R"({"rows":[{"subtotal":{"units":"x"}}],"subtotal":{}})")).ok());
}

TEST_CASE("hardening: provider text is bounded: ids past 128 bytes are malformed, names cut on a UTF-8 boundary") {
  const std::string long_id(200, 'x');
  auto runs = baseten::ParseRuns(std::string(("{\"runs\":[{\"id\":\"" + long_id + "\"},{\"id\":\"ok1\"}]}").c_str()));
  REQUIRE(runs.ok());
  CHECK(runs->items.size() == 1);
  CHECK(runs->dropped == 1);  // the listing is then partial: nothing it misses is deleted
  Resource r;
  r.name = std::string(kMaxTextBytes - 1, 'a') + "\xC3\xA9" + std::string(200'000, 'b');  // é across the cut
  r.owner = "ana@example.com";
  BoundProviderText(r);
  CHECK(r.name.size() == kMaxTextBytes - 1 + 3);
  CHECK(r.name.substr(r.name.size() - 3) == "\xE2\x80\xA6");
  CHECK(r.owner == "ana@example.com");
  // A slot-cap message with absurd numbers neither throws nor overflows.
  auto e = ClassifyFireworks(net::HttpResponse{429, {}, R"({"code":8,"message":"maximum concurrent serverless training runs exceeded: in use 99999999999999999999, limit 8"})"}, kNow);
  CHECK(e.cls == ErrorClass::kQuota);
  CHECK_FALSE(e.in_use.has_value());
}

TEST_CASE("hardening: one id listed twice with conflicting states is unknown, not either state") {
  auto runs = baseten::ParseRuns(std::string(
      R"({"runs":[{"id":"r1","status":{"name":"ACTIVE"}},{"id":"r2","status":{"name":"ACTIVE"}},{"id":"r1","status":{"name":"INACTIVE"}},{"id":"r2","status":{"name":"ACTIVE"}}]})"));
  REQUIRE(runs.ok());
  REQUIRE(runs->items.size() == 1);  // r2's identical copy collapses; r1 disagrees with itself
  CHECK(runs->items[0].id == "r2");
  CHECK(runs->dropped >= 1);         // the listing is partial: r1 is unknown, never gone
  auto sessions = fireworks::ParseSessions(std::string(
      R"({"trainingSessions":[{"name":"accounts/a/trainingSessions/ts-1","state":"READY"},{"name":"accounts/a/trainingSessions/ts-1","state":"DELETING"}],"nextPageToken":""})"));
  REQUIRE(sessions.ok());
  CHECK(sessions->items.empty());
  CHECK(sessions->dropped >= 1);
}

TEST_CASE("Baseten R21: the documented example per day, money as a number or a string, bad rows named") {
  // The example of shared/providers/baseten.md §3, with a second day written as strings.
  auto days = baseten::ParseUsageSummary(
      R"({"dedicated_usage":{"subtotal":"12.40","credits_used":"0","total":"12.40","minutes":114,"breakdown":[{"billable_resource":{"id":"qrpg2r0","kind":"MODEL_DEPLOYMENT","name":"deployment-1","model_name":"tickets-step-100","is_deleted":false,"instance_type":"H100x26x234","environment_name":null,"chain_metadata":null,"team_id":"t1","team_name":"ml"},"subtotal":12.4,"compute_cost":12.4,"surcharge_cost":0,"minutes":114,"inference_requests":0,"daily":[{"date":"2026-07-20","subtotal":12.4,"compute_cost":12.4,"surcharge_cost":0,"minutes":114,"inference_requests":0},{"date":"2026-07-21","subtotal":"0.25","minutes":"3"}]}]},"training_usage":null,"model_apis_usage":null})");
  REQUIRE_MESSAGE(days.ok(), days.status().message());
  REQUIRE(days->size() == 2);
  CHECK((*days)[0].resource_id == "qrpg2r0");
  CHECK((*days)[0].kind == "MODEL_DEPLOYMENT");
  CHECK((*days)[0].day == ParseTime("2026-07-20T00:00:00Z").value());
  CHECK((*days)[0].minutes == 114);
  CHECK((*days)[0].cost == ParseMoney("12.40").value());
  CHECK((*days)[1].day == ParseTime("2026-07-21T00:00:00Z").value());
  CHECK((*days)[1].cost == ParseMoney("0.25").value());
  CHECK((*days)[1].minutes == 3);
  // An empty bill is no rows, not an error.
  auto none = baseten::ParseUsageSummary(R"({"dedicated_usage":null,"training_usage":null,"model_apis_usage":null})");
  REQUIRE(none.ok());
  CHECK(none->empty());
  // Part of a bill is refused whole, naming the row.
  auto no_date = baseten::ParseUsageSummary(
      R"({"training_usage":{"breakdown":[{"billable_resource":{"id":"d1"},"daily":[{"date":"2026-07-20","subtotal":1},{"subtotal":2}]}]}})");
  REQUIRE_FALSE(no_date.ok());
  CHECK(no_date.status().message().find("training_usage.breakdown[0].daily[1]") != std::string::npos);
  auto bad_money = baseten::ParseUsageSummary(
      R"({"dedicated_usage":{"breakdown":[{"billable_resource":{"id":"d1"},"daily":[{"date":"2026-07-20","subtotal":"12,40"}]}]}})");
  REQUIRE_FALSE(bad_money.ok());
  CHECK(bad_money.status().message().find("subtotal") != std::string::npos);
  CHECK_FALSE(baseten::ParseUsageSummary(R"({"dedicated_usage":{"breakdown":[{"daily":[]}]}})").ok());
  CHECK_FALSE(baseten::ParseUsageSummary(R"([])").ok());
  // A section that is there must hold its rows: read as empty, it would book the bill's
  // spend as drift.
  for (const char* body : {R"({"dedicated_usage":{}})", R"({"training_usage":{"breakdown":null}})",
                           R"({"dedicated_usage":[]})", R"({"training_usage":{"breakdown":{}}})"}) {
    CAPTURE(body);
    auto r = baseten::ParseUsageSummary(body);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("expected an object with a breakdown array") != std::string::npos);
  }
  auto second = baseten::ParseUsageSummary(
      R"({"dedicated_usage":{"breakdown":[{"billable_resource":{"id":"d1"},"daily":[]},{"billable_resource":{}}]}})");
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().message() == "dedicated_usage.breakdown[1]: no billable_resource.id");
}

TEST_CASE("Baseten detail cache: a trimmed listing parses to the same items, in fewer bytes") {
  const std::string deps_text =
      R"({"deployments":[{"id":"qrpg2r0","created_at":"2026-07-21T01:00:00Z","name":"deployment-1","model_id":"wnpkzp03","is_production":true,"is_development":true,"status":{"name":"ACTIVE"},"active_replica_count":2,"autoscaling_settings":{"min_replica":1,"max_replica":3,"autoscaling_window":60,"scale_down_delay":900,"concurrency_target":1,"target_utilization_percentage":null},"instance_type_name":"H100x26x234","environment":null,"labels":{"team":"ml","cost-center":"42"},"region":null,"request_backpressure_settings":{"policy":null}},)"
      R"({"id":"x2","status":"INACTIVE","active_replica_count":0,"autoscaling_settings":null,"labels":null},)"
      // Members given twice (the last copy counts, wrong-typed or not), a label that is
      // not a string, an escaped name, settings with neither replica bound.
      R"({"id":"x3","name":"a \"quoted\" name","status":"ACTIVE","status":{"name":"SCALED_TO_ZERO"},)"
      R"("active_replica_count":1,"active_replica_count":"4","is_production":true,"is_production":"no",)"
      R"("autoscaling_settings":{"max_replica":2,"max_replica":5,"min_replica":0,"window":9},)"
      R"("labels":{"a":"1","b":2,"a":"3"},"created_at":"2026-07-21T01:00:00Z","created_at":7},)"
      R"({"id":"x4","autoscaling_settings":{"window":9},"instance_type_name":"A10G","instance_type_name":null}]})";
  const std::string trimmed = baseten::TrimDeploymentsBody(deps_text);
  CHECK(trimmed.size() * 3 < deps_text.size() * 2);
  auto a = baseten::ParseDeployments(deps_text);
  auto b = baseten::ParseDeployments(trimmed);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE(a->items.size() == 4);
  REQUIRE(b->items.size() == 4);
  auto fields = [](const baseten::Deployment& d) {
    return std::tie(d.id, d.name, d.model_id, d.status, d.active_replica_count, d.is_production, d.created_at,
                    d.instance_type_name, d.min_replica, d.max_replica, d.labels);
  };
  for (size_t i = 0; i < 4; ++i) CHECK(fields(a->items[i]) == fields(b->items[i]));
  CHECK(b->items[0].labels.at("cost-center") == "42");
  CHECK(b->items[0].max_replica == 3);
  CHECK(b->items[0].status == "ACTIVE");
  const baseten::Deployment& x3 = b->items[2];
  CHECK(x3.name == "a \"quoted\" name");
  CHECK(x3.status == "SCALED_TO_ZERO");
  CHECK(x3.active_replica_count == 4);  // an int64 string
  CHECK_FALSE(x3.is_production);
  CHECK(x3.min_replica == 0);
  CHECK(x3.max_replica == 5);
  CHECK(x3.labels.size() == 1);
  CHECK(x3.labels.at("a") == "3");
  CHECK_FALSE(x3.created_at.has_value());
  CHECK_FALSE(b->items[3].min_replica.has_value());
  CHECK(b->items[3].instance_type_name.empty());
  // The trim keeps nothing a reader does not take.
  CHECK(trimmed.find("window") == std::string::npos);
  CHECK(trimmed.find("region") == std::string::npos);
  CHECK(baseten::TrimDeploymentsBody("not json").empty());
  CHECK(baseten::TrimDeploymentsBody(R"({"checkpoints":[]})").empty());

  const std::string cks =
      R"({"checkpoints":[{"id":"ckp9a1","checkpoint_id":"step-100","run_id":"k4q95w5","target":"sampler",)"
      R"("checkpoint_type":"lora","base_model":"Qwen/Qwen3-8B","lora_adapter_config":{"r":64},"size_bytes":167772160,)"
      R"("created_at":"2026-07-20T23:40:00Z","sync_status":"SYNCING"},)"
      R"({"id":"ckp2","sync_status":"SYNCING","sync_status":"COMPLETE","size_bytes":1,"size_bytes":"20"}]})";
  auto c = baseten::ParseCheckpoints(cks);
  auto d = baseten::ParseCheckpoints(baseten::TrimCheckpointsBody(cks));
  REQUIRE(c.ok());
  REQUIRE(d.ok());
  REQUIRE(d->items.size() == 2);
  auto ck = [](const baseten::Checkpoint& x) { return std::tie(x.id, x.name, x.run_id, x.target, x.created_at, x.size_bytes, x.syncing); };
  for (size_t i = 0; i < 2; ++i) CHECK(ck(c->items[i]) == ck(d->items[i]));
  CHECK(d->items[0].syncing);
  CHECK_FALSE(d->items[1].syncing);
  CHECK(d->items[1].size_bytes == 20);
}

TEST_CASE("listed objects: a member given twice counts with its last copy, a last copy of the wrong type as nothing") {
  // Each reader's members twice: first a usable copy, then one that is not (or another
  // value). A reader that kept the first copy of any of them reads differently.
  auto jobs = fireworks::ParseJobs(std::string(
      R"({"rlorTrainerJobs":[{"name":"accounts/a/rlorTrainerJobs/j-first","displayName":"first",)"
      R"("createdBy":"x@example.com","state":"JOB_STATE_RUNNING","createTime":"2026-08-01T08:00:00Z",)"
      R"("trainingConfig":{"baseModel":"m","acceleratorType":"NVIDIA_H100_80GB","acceleratorCount":8},"nodeCount":4,)"
      R"("inactivityTimeout":"3600s","disableInactivityCleanup":true,"jobProgress":{"step":1},)"
      R"("hotLoadDeploymentId":"d1",)"
      R"("name":"accounts/a/rlorTrainerJobs/j-last","displayName":7,"createdBy":null,"state":{"s":1},)"
      R"("createTime":"not a time","trainingConfig":[],"nodeCount":"two","inactivityTimeout":3600,)"
      R"("disableInactivityCleanup":"yes","hotLoadDeploymentId":false}]})"));
  REQUIRE(jobs.ok());
  REQUIRE(jobs->items.size() == 1);
  const fireworks::Job& j = jobs->items[0];
  CHECK(j.id == "j-last");
  CHECK(j.display_name.empty());
  CHECK(j.owner.empty());
  CHECK(j.state.empty());
  CHECK_FALSE(j.created.has_value());
  CHECK(j.base_model.empty());
  CHECK(j.accelerator_count == 0);
  CHECK(j.node_count == 1);
  CHECK_FALSE(j.inactivity_timeout.has_value());
  CHECK_FALSE(j.disable_inactivity_cleanup);
  CHECK(j.progress == R"({"step":1})");  // given once: kept
  CHECK(j.hot_load_deployment.empty());

  auto sessions = fireworks::ParseSessions(std::string(
      R"({"trainingSessions":[{"name":"accounts/a/trainingSessions/ts-1","displayName":"d","baseModel":"m",)"
      R"("createdBy":"x","state":"READY","createTime":"2026-08-01T08:00:00Z","updateTime":"2026-08-01T09:00:00Z",)"
      R"("displayName":1,"baseModel":2,"createdBy":3,"state":"EXPIRED","createTime":4,)"
      R"("updateTime":"2026-08-01T10:00:00Z"}]})"));
  REQUIRE(sessions.ok());
  REQUIRE(sessions->items.size() == 1);
  const fireworks::Session& s = sessions->items[0];
  CHECK(s.display_name.empty());
  CHECK(s.base_model.empty());
  CHECK(s.owner.empty());
  CHECK(s.state == "EXPIRED");
  CHECK_FALSE(s.created.has_value());
  CHECK(s.updated == ParseTime("2026-08-01T10:00:00Z").value());

  auto deps = fireworks::ParseDeployments(std::string(
      R"({"deployments":[{"name":"accounts/a/deployments/d1","displayName":"x","baseModel":"m","state":"READY",)"
      R"("createTime":"2026-08-01T08:00:00Z","minReplicaCount":2,"maxReplicaCount":3,"replicaCount":2,)"
      R"("replicaStats":{"readyReplicaCount":2},"acceleratorType":"NVIDIA_H100_80GB","acceleratorCount":1,)"
      R"("hotLoadTrainerJob":"accounts/a/rlorTrainerJobs/j1","annotations":{"k":"v"},)"
      R"("displayName":[],"baseModel":{},"state":null,"createTime":"","minReplicaCount":"x","maxReplicaCount":null,)"
      R"("replicaCount":5,"replicaStats":7,"acceleratorType":1,"acceleratorCount":"9","hotLoadTrainerJob":1,)"
      R"("annotations":"none"}]})"));
  REQUIRE(deps.ok());
  REQUIRE(deps->items.size() == 1);
  const fireworks::Deployment& d = deps->items[0];
  CHECK(d.display_name.empty());
  CHECK(d.base_model.empty());
  CHECK(d.state.empty());
  CHECK_FALSE(d.created.has_value());
  CHECK(d.min_replicas == 0);
  CHECK(d.max_replicas == 1);
  CHECK(d.replica_count == 5);
  CHECK(d.billed_replicas == 5);  // no replicaStats object: the replica count
  CHECK(d.accelerator_type.empty());
  CHECK(d.accelerator_count == 9);  // an int64 string
  CHECK(d.hot_load_trainer_job.empty());
  CHECK(d.annotations.empty());

  auto runs = fireworks::ParseTrainingRuns(std::string(
      R"({"trainingRuns":[{"name":"r1","sourceTrainingSessionId":"ts-1","state":"RUNNING",)"
      R"("updateTime":"2026-08-01T08:00:00Z","name":"r2","sourceTrainingSessionId":1,"state":2,"updateTime":3}]})"));
  REQUIRE(runs.ok());
  REQUIRE(runs->items.size() == 1);
  CHECK(runs->items[0].id == "r2");
  CHECK(runs->items[0].session_id.empty());
  CHECK(runs->items[0].state.empty());
  CHECK_FALSE(runs->items[0].updated.has_value());

  auto cks = fireworks::ParseCheckpoints(std::string(
      R"({"checkpoints":[{"name":"a/b/c1","checkpointName":"run-x-final-1","promotable":true,)"
      R"("createTime":"2026-08-01T08:00:00Z",)"
      R"("name":"a/b/c2","checkpointName":null,"promotable":"true","createTime":[]}]})"));
  REQUIRE(cks.ok());
  REQUIRE(cks->items.size() == 1);
  CHECK(cks->items[0].id == "c2");
  CHECK(cks->items[0].server_name == "c2");  // not a string: the id
  CHECK_FALSE(cks->items[0].promotable);
  CHECK_FALSE(cks->items[0].created.has_value());

  auto fw_models = fireworks::ParseModels(std::string(
      R"({"models":[{"name":"accounts/a/models/m1","kind":"HF_BASE_MODEL","createTime":"2026-08-01T08:00:00Z",)"
      R"("name":"accounts/a/models/m2","kind":1,"createTime":2}]})"));
  REQUIRE(fw_models.ok());
  REQUIRE(fw_models->items.size() == 1);
  CHECK(fw_models->items[0].id == "m2");
  CHECK(fw_models->items[0].kind.empty());
  CHECK_FALSE(fw_models->items[0].created.has_value());

  auto bt = baseten::ParseRuns(std::string(
      R"({"runs":[{"id":"r1","session_id":"s","deployment_id":"d","name":"n","base_model":"m","status":"RUNNING",)"
      R"("user":{"email":"x@example.com"},"created_at":"2026-08-01T08:00:00Z","sampler":{"id":"sm1","status":"ACTIVE",)"
      R"("instance_type":{"id":"H100x1","gpu_count":1,"gpu_type":"H100"},"node_count":2},)"
      R"("session_id":1,"deployment_id":null,"name":2,"base_model":3,"status":{"name":"INACTIVE"},"user":"x",)"
      R"("created_at":5,"sampler":[]}]})"));
  REQUIRE(bt.ok());
  REQUIRE(bt->items.size() == 1);
  const baseten::Run& r = bt->items[0];
  CHECK(r.session_id.empty());
  CHECK(r.deployment_id.empty());
  CHECK(r.name.empty());
  CHECK(r.base_model.empty());
  CHECK(r.status == "INACTIVE");  // the {"name": ...} form
  CHECK(r.owner.empty());
  CHECK_FALSE(r.created_at.has_value());
  CHECK_FALSE(r.sampler.has_value());

  auto lds = baseten::ParseLoopsDeployments(std::string(
      R"({"deployments":[{"id":"ld1","active_run_id":"r1","latest_run_id":"r1","base_model":"m","status":"ACTIVE",)"
      R"("user":{"email":"x"},"created_at":"2026-08-01T08:00:00Z","availability_model":"serverless",)"
      R"("instance_type":{"id":"H100x1"},"node_count":3,"sampler":{"id":"sm1"},)"
      R"("active_run_id":1,"latest_run_id":"r2","base_model":null,"status":1,"user":{},"created_at":"x",)"
      R"("availability_model":2,"instance_type":"H100x1","node_count":"many","sampler":"sm1"}]})"));
  REQUIRE(lds.ok());
  REQUIRE(lds->items.size() == 1);
  const baseten::LoopsDeployment& ld = lds->items[0];
  CHECK(ld.active_run_id.empty());
  CHECK(ld.latest_run_id == "r2");
  CHECK(ld.base_model.empty());
  CHECK(ld.status.empty());
  CHECK(ld.owner.empty());
  CHECK_FALSE(ld.created_at.has_value());
  CHECK(ld.availability == "dedicated");  // the default when it is not a string
  CHECK_FALSE(ld.instance_type.has_value());
  CHECK(ld.node_count == 1);
  CHECK_FALSE(ld.sampler.has_value());

  auto samplers = baseten::ParseSamplers(std::string(
      R"({"samplers":[{"id":"sm1","model_id":"m1","deployment_id":"d1","base_model":"b","status":"ACTIVE",)"
      R"("user":{"email":"x"},"created_at":"2026-08-01T08:00:00Z","instance_type":{"id":"H100x1"},"node_count":2,)"
      R"("model_id":1,"deployment_id":2,"base_model":3,"status":4,"user":5,"created_at":6,"instance_type":7,)"
      R"("node_count":"3"}]})"));
  REQUIRE(samplers.ok());
  REQUIRE(samplers->items.size() == 1);
  const baseten::Sampler& sm = samplers->items[0];
  CHECK(sm.model_id.empty());
  CHECK(sm.deployment_id.empty());
  CHECK(sm.base_model.empty());
  CHECK(sm.status.empty());
  CHECK(sm.owner.empty());
  CHECK_FALSE(sm.created_at.has_value());
  CHECK_FALSE(sm.instance_type.has_value());
  CHECK(sm.node_count == 3);

  auto models = baseten::ParseModels(std::string(
      R"({"models":[{"id":"m1","name":"n","team_name":"t","created_at":"2026-08-01T08:00:00Z","deployments_count":2,)"
      R"("name":1,"team_name":2,"created_at":3,"deployments_count":"4"}]})"));
  REQUIRE(models.ok());
  REQUIRE(models->items.size() == 1);
  CHECK(models->items[0].name.empty());
  CHECK(models->items[0].team.empty());
  CHECK_FALSE(models->items[0].created_at.has_value());
  CHECK(models->items[0].deployments_count == 4);
}
