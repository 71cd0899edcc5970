#include "providers/fireworks/parse.h"

#include <boost/json/serialize.hpp>


#include "core/json.h"
#include "core/json_elements.h"
#include "providers/list_items.h"

namespace loopwarden::providers::fireworks {
namespace {

namespace bj = boost::json;

template <class T, class Fn>
Result<Page<T>> ParsePage(const bj::value& body, std::initializer_list<std::string_view> keys, Fn read) {
  if (!body.is_object()) return InvalidArgument("expected a JSON object");
  const bj::object& o = body.get_object();
  const bj::array* arr = nullptr;
  for (std::string_view k : keys) {
    if ((arr = json::Arr(o, k))) break;
  }
  Page<T> out;
  out.next_page_token = json::Str(o, "nextPageToken").value_or("");
  out.total_size = json::Int(o, "totalSize").value_or(-1);
  if (!arr) {
    // An empty page may omit the list altogether.
    if (o.empty() || o.contains("nextPageToken") || o.contains("totalSize")) return out;
    return InvalidArgument("expected {\"" + std::string(*keys.begin()) + "\": [...]}");
  }
  out.items = ReadListItems<T>(*arr, read, out.dropped);
  return out;
}

Session ReadSession(const bj::object& o) {
  Session s;
  s.name = json::Str(o, "name").value_or("");
  s.id = IdFromName(s.name);
  s.display_name = json::Str(o, "displayName").value_or("");
  s.base_model = json::View(o, "baseModel").value_or("");
  s.owner = json::View(o, "createdBy").value_or("");
  s.state = json::View(o, "state").value_or("");
  s.created = json::TimeField(o, "createTime");
  s.updated = json::TimeField(o, "updateTime");
  return s;
}

Job ReadJob(const bj::object& o) {
  Job j;
  j.name = json::Str(o, "name").value_or("");
  j.id = IdFromName(j.name);
  j.display_name = json::Str(o, "displayName").value_or("");
  j.owner = json::View(o, "createdBy").value_or("");
  j.state = json::View(o, "state").value_or("");
  j.created = json::TimeField(o, "createTime");
  if (const bj::object* tc = json::Obj(o, "trainingConfig")) {
    j.base_model = json::View(*tc, "baseModel").value_or("");
    j.accelerator_type = json::View(*tc, "acceleratorType").value_or("");
    j.accelerator_count = static_cast<int>(json::Int(*tc, "acceleratorCount").value_or(0));
  }
  j.node_count = static_cast<int>(json::Int(o, "nodeCount").value_or(1));
  if (const bj::object* a = json::Obj(o, "acceleratorSeconds")) {
    for (const auto& kv : *a) {
      if (auto n = json::AsInt(kv.value())) j.accelerator_seconds[std::string(kv.key())] = *n;
    }
  }
  if (auto t = json::Str(o, "inactivityTimeout")) {
    if (auto d = ParseProtoDuration(*t); d.ok() && *d > Duration::zero()) j.inactivity_timeout = *d;
  }
  j.disable_inactivity_cleanup = json::Bool(o, "disableInactivityCleanup").value_or(false);
  if (const bj::value* p = json::Get(o, "jobProgress")) j.progress = bj::serialize(*p);
  j.hot_load_deployment = json::Str(o, "hotLoadDeploymentId").value_or("");
  return j;
}

Deployment ReadDeployment(const bj::object& o) {
  Deployment d;
  d.name = json::Str(o, "name").value_or("");
  d.id = IdFromName(d.name);
  d.display_name = json::Str(o, "displayName").value_or("");
  d.base_model = json::View(o, "baseModel").value_or("");
  d.state = json::View(o, "state").value_or("");
  d.created = json::TimeField(o, "createTime");
  d.min_replicas = static_cast<int>(json::Int(o, "minReplicaCount").value_or(0));
  d.max_replicas = static_cast<int>(json::Int(o, "maxReplicaCount").value_or(std::max(d.min_replicas, 1)));
  d.replica_count = static_cast<int>(json::Int(o, "replicaCount").value_or(0));
  if (const bj::object* rs = json::Obj(o, "replicaStats")) {
    d.billed_replicas = static_cast<int>(json::Int(*rs, "readyReplicaCount").value_or(0) +
                                         json::Int(*rs, "initializingReplicaCount").value_or(0) +
                                         json::Int(*rs, "downloadingModelReplicaCount").value_or(0));
  } else {
    d.billed_replicas = d.replica_count;
  }
  d.accelerator_type = json::View(o, "acceleratorType").value_or("");
  d.accelerator_count = static_cast<int>(json::Int(o, "acceleratorCount").value_or(0));
  d.hot_load_trainer_job = IdFromName(json::View(o, "hotLoadTrainerJob").value_or(""));
  if (const bj::object* a = json::Obj(o, "annotations")) {
    d.managed_rollout = json::View(*a, "fireworks-training-sdk/managed-rollout").value_or("") == "true";
    for (const auto& kv : *a) {
      if (d.annotations.size() >= 64) break;  // a bound on what one object can make us keep
      if (kv.value().is_string()) d.annotations[std::string(kv.key())] = std::string(kv.value().get_string());
    }
  }
  return d;
}

Checkpoint ReadCheckpoint(const bj::object& o) {
  Checkpoint c;
  c.name = json::Str(o, "name").value_or("");
  c.id = IdFromName(c.name);
  c.server_name = json::Str(o, "checkpointName").value_or(c.id);
  c.promotable = json::Bool(o, "promotable").value_or(false);
  c.created = json::TimeField(o, "createTime");
  return c;
}

}  // namespace

std::string IdFromName(std::string_view name) {
  const size_t slash = name.rfind('/');
  return std::string(slash == std::string_view::npos ? name : name.substr(slash + 1));
}

Result<Page<Session>> ParseSessions(const bj::value& b) { return ParsePage<Session>(b, {"trainingSessions"}, ReadSession); }

Result<Session> ParseSession(const bj::value& b) {
  if (!b.is_object()) return InvalidArgument("expected a TrainingSession object");
  Session s = ReadSession(b.get_object());
  if (s.id.empty()) return InvalidArgument("TrainingSession without a name");
  return s;
}

Result<Page<TrainingRun>> ParseTrainingRuns(const bj::value& b) {
  return ParsePage<TrainingRun>(b, {"trainingRuns"}, [](const bj::object& o) {
    TrainingRun r;
    r.id = IdFromName(json::View(o, "name").value_or(""));
    r.session_id = IdFromName(json::View(o, "sourceTrainingSessionId").value_or(""));
    r.state = json::View(o, "state").value_or("");
    r.updated = json::TimeField(o, "updateTime");
    return r;
  });
}

Result<Page<Checkpoint>> ParseCheckpoints(const bj::value& b) {
  return ParsePage<Checkpoint>(
      b, {"trainingSessionCheckpoints", "training_session_checkpoints", "checkpoints", "rlorTrainerJobCheckpoints"},
      ReadCheckpoint);
}

Result<Page<Job>> ParseJobs(const bj::value& b) { return ParsePage<Job>(b, {"rlorTrainerJobs"}, ReadJob); }

Result<Job> ParseJob(const bj::value& b) {
  if (!b.is_object()) return InvalidArgument("expected an RlorTrainerJob object");
  Job j = ReadJob(b.get_object());
  if (j.id.empty()) return InvalidArgument("RlorTrainerJob without a name");
  return j;
}

Result<Page<Deployment>> ParseDeployments(const bj::value& b) {
  return ParsePage<Deployment>(b, {"deployments"}, ReadDeployment);
}

Result<Deployment> ParseDeployment(const bj::value& b) {
  if (!b.is_object()) return InvalidArgument("expected a Deployment object");
  Deployment d = ReadDeployment(b.get_object());
  if (d.id.empty()) return InvalidArgument("Deployment without a name");
  return d;
}

Result<Page<Model>> ParseModels(const bj::value& b) {
  return ParsePage<Model>(b, {"models"}, [](const bj::object& o) {
    Model m;
    m.id = IdFromName(json::View(o, "name").value_or(""));
    m.kind = json::Str(o, "kind").value_or("");
    m.created = json::TimeField(o, "createTime");
    return m;
  });
}

Result<Usage> ParseBillingUsage(std::string_view body) {
  Usage u;
  auto row = [&u](std::string_view list, const bj::value& v) {
    if (!v.is_object()) return;
    const bj::object& r = v.get_object();
    if (list == "dedicatedCosts") {
      const std::string dep = IdFromName(json::View(r, "deploymentId").value_or(""));
      const int64_t secs = json::Int(r, "acceleratorSeconds").value_or(0);
      if (!dep.empty() && secs > 0) u.deployment_accelerator_seconds[dep] += secs;
      return;
    }
    const std::string session = IdFromName(json::View(r, "trainingSessionId").value_or(""));
    const int64_t tokens = json::Int(r, "tokens").value_or(0);
    if (!session.empty() && tokens > 0) {
      // The per-meter split rides in `group` in the simulator; without it, training.
      std::string meter = json::Str(r, "group").value_or("");
      if (meter != "prefill" && meter != "cached_prefill" && meter != "sample" && meter != "train") meter = "train";
      u.session_tokens[session][meter] += tokens;
    }
    const std::string job = IdFromName(json::View(r, "jobId").value_or(""));
    const int64_t secs = json::Int(r, "acceleratorSeconds").value_or(0);
    if (!job.empty() && secs > 0) u.job_accelerator_seconds[job] += secs;
  };
  // Row by row, never the whole DOM (json_elements.h).
  LW_RETURN_IF_ERROR(json::ForEachElement(body, "billingUsage", {"trainingCosts", "dedicatedCosts"}, row).status());
  return u;
}

StatusMapping SessionLifecycle(const std::string& st) {
  if (st == "READY") return {Lifecycle::kRunning, false, false};
  if (st == "TRAINING_SESSION_STATE_UNSPECIFIED") return {Lifecycle::kUnknown, false, false};
  if (st == "DELETING") return {Lifecycle::kDeleted, true, false};
  if (st == "EXPIRED") return {Lifecycle::kStopped, false, false};
  if (st == "FAILED") return {Lifecycle::kFailed, false, false};
  return {Lifecycle::kUnknown, false, false};
}

StatusMapping JobLifecycle(const std::string& st) {
  if (st == "JOB_STATE_CREATING") return {Lifecycle::kStarting, true, true};
  if (st == "JOB_STATE_PENDING" || st == "JOB_STATE_VALIDATING" || st == "JOB_STATE_RE_QUEUEING" ||
      st == "JOB_STATE_CREATING_INPUT_DATASET") {
    return {Lifecycle::kStarting, true, false};
  }
  if (st == "JOB_STATE_RUNNING" || st == "JOB_STATE_IDLE") return {Lifecycle::kRunning, false, true};
  if (st == "JOB_STATE_WRITING_RESULTS") return {Lifecycle::kRunning, true, true};
  if (st == "JOB_STATE_CANCELLING") return {Lifecycle::kStopped, true, true};
  if (st == "JOB_STATE_DELETING" || st == "JOB_STATE_DELETING_CLEANING_UP") return {Lifecycle::kDeleted, true, true};
  if (st == "JOB_STATE_COMPLETED" || st == "JOB_STATE_CANCELLED" || st == "JOB_STATE_EARLY_STOPPED" ||
      st == "JOB_STATE_EXPIRED" || st == "JOB_STATE_PAUSED") {
    return {Lifecycle::kStopped, false, false};
  }
  if (st == "JOB_STATE_FAILED") return {Lifecycle::kFailed, false, false};
  if (st == "JOB_STATE_DELETED" || st == "JOB_STATE_ARCHIVED") return {Lifecycle::kDeleted, false, false};
  return {Lifecycle::kUnknown, false, false};
}

StatusMapping DeploymentLifecycle(const std::string& st, int billed) {
  if (st == "CREATING") return {Lifecycle::kStarting, true, billed > 0};
  if (st == "READY") return {billed > 0 ? Lifecycle::kRunning : Lifecycle::kScaledToZero, false, billed > 0};
  if (st == "UPDATING") return {Lifecycle::kRunning, true, billed > 0};
  if (st == "DELETING") return {Lifecycle::kDeleted, true, billed > 0};
  if (st == "DELETED") return {Lifecycle::kDeleted, false, false};
  if (st == "FAILED") return {Lifecycle::kFailed, false, false};
  return {Lifecycle::kUnknown, false, false};
}

namespace {

std::optional<double> MoneyUsd(const bj::value* v) {
  if (!v || !v->is_object()) return std::nullopt;
  const bj::object& o = v->get_object();
  const bj::value* units = json::Get(o, "units");
  const bj::value* nanos = json::Get(o, "nanos");
  if (!units && !nanos) return 0.0;
  const std::optional<int64_t> u = units ? json::AsInt(*units) : std::optional<int64_t>(0);
  const std::optional<int64_t> n = nanos ? json::AsInt(*nanos) : std::optional<int64_t>(0);
  if (!u || !n) return std::nullopt;
  return static_cast<double>(*u) + static_cast<double>(*n) / 1e9;
}

}  // namespace

Result<UsageCosts> ParseUsageCosts(const bj::value& body) {
  if (!body.is_object()) return InvalidArgument("usageCosts: not an object");
  const bj::object& o = body.get_object();
  UsageCosts out;
  if (const bj::array* rows = json::Arr(o, "rows")) {
    for (const bj::value& row : *rows) {
      if (!row.is_object()) return InvalidArgument("usageCosts: a row is not an object");
      UsageCosts::Row r;
      if (const bj::object* d = json::Obj(row.get_object(), "dimensions")) r.start = json::TimeField(*d, "startTime");
      auto usd = MoneyUsd(json::Get(row.get_object(), "subtotal"));
      if (!usd) return InvalidArgument("usageCosts: a row's subtotal is not Money");
      r.usd = *usd;
      out.rows.push_back(r);
    }
  }
  auto total = MoneyUsd(json::Get(o, "subtotal"));
  if (!total) return InvalidArgument("usageCosts: subtotal is not Money");
  out.subtotal_usd = *total;
  out.evaluated = json::TimeField(o, "evaluationTime");
  out.complete = json::View(o, "attributionCompleteness").value_or("") == "COMPLETE";
  out.next_page_token = json::Str(o, "nextPageToken").value_or("");
  return out;
}

}  // namespace loopwarden::providers::fireworks
