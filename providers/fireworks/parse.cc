#include "providers/fireworks/parse.h"

#include <cstring>

#include "core/json.h"
#include "core/json_elements.h"
#include "providers/list_items.h"
#include "providers/simd_json.h"

namespace loopwarden::providers::fireworks {
namespace {

namespace bj = boost::json;

// IdFromName's id as a view into `name`: most ids land in a ShortString, which copies
// the view itself (a std::string between was a malloc and free for each object).
std::string_view LastSegment(std::string_view name) {
  // memrchr compares a vector of bytes at a time; rfind compared the 30-odd bytes of a
  // session's id one by one (0.7 % of a steady cycle's instructions at 100k).
  const void* slash = name.empty() ? nullptr : ::memrchr(name.data(), '/', name.size());
  if (slash == nullptr) return name;
  return name.substr(static_cast<size_t>(static_cast<const char*>(slash) - name.data()) + 1);
}

template <class T, class Fn>
Result<Page<T>> ParsePage(const std::string& text, std::string_view what, std::initializer_list<std::string_view> keys,
                          Fn read) {
  auto body = sj::Parse(text, what);
  if (!body.ok()) return body.status();
  sj::object top;
  if (body->get_object().get(top)) return InvalidArgument("expected a JSON object");
  const sj::Members o(top);
  std::optional<sj::array> arr;
  for (std::string_view k : keys) {
    if ((arr = sj::Arr(o, k))) break;
  }
  Page<T> out;
  out.next_page_token = sj::Str(o, "nextPageToken").value_or("");
  out.total_size = sj::Int(o, "totalSize").value_or(-1);
  if (!arr) {
    // An empty page may omit the list altogether.
    if (top.size() == 0 || sj::Get(o, "nextPageToken") || sj::Get(o, "totalSize")) return out;
    return InvalidArgument("expected {\"" + std::string(*keys.begin()) + "\": [...]}");
  }
  out.items = sj::ReadListItems<T>(*arr, read, out.dropped);
  return out;
}

// A single object's body, read by `read`; `a_kind` ("a Deployment") names it in errors.
template <class T, class Fn>
Result<T> ParseOne(const std::string& text, std::string_view what, std::string_view a_kind, Fn read) {
  auto body = sj::Parse(text, what);
  if (!body.ok()) return body.status();
  sj::object o;
  if (body->get_object().get(o)) return InvalidArgument("expected " + std::string(a_kind) + " object");
  T t = read(o);
  if (t.id.empty()) return InvalidArgument(std::string(a_kind.substr(a_kind.find(' ') + 1)) + " without a name");
  return t;
}

// Each listed object's members are found in one walk (sj::Pick), the keys each reader
// takes listed beside it.
constexpr sj::Keys kSessionKeys("name", "displayName", "baseModel", "createdBy", "state", "createTime", "updateTime");

Session ReadSession(const sj::object& obj) {
  constexpr const auto& k = kSessionKeys;
  const auto o = sj::Pick(obj, k);
  Session s;
  const std::string_view name = sj::AsView(o[k("name")]).value_or("");
  s.id = LastSegment(name);
  s.name = ObjectName::Of(name, Kind::kFireworksTrainingSession, s.id.view());
  s.display_name = sj::AsView(o[k("displayName")]).value_or("");
  s.base_model = sj::AsView(o[k("baseModel")]).value_or("");
  s.owner = sj::AsView(o[k("createdBy")]).value_or("");
  s.state = sj::AsView(o[k("state")]).value_or("");
  s.created = sj::AsTime(o[k("createTime")]);
  s.updated = sj::AsTime(o[k("updateTime")]);
  return s;
}

constexpr sj::Keys kJobKeys("name", "displayName", "createdBy", "state", "createTime", "trainingConfig", "nodeCount",
                            "inactivityTimeout", "disableInactivityCleanup", "jobProgress", "hotLoadDeploymentId");

Job ReadJob(const sj::object& obj) {
  constexpr const auto& k = kJobKeys;
  const auto o = sj::Pick(obj, k);
  Job j;
  const std::string_view name = sj::AsView(o[k("name")]).value_or("");
  j.id = LastSegment(name);
  j.name = ObjectName::Of(name, Kind::kFireworksRlorJob, j.id.view());
  j.display_name = sj::AsView(o[k("displayName")]).value_or("");
  j.owner = sj::AsView(o[k("createdBy")]).value_or("");
  j.state = sj::AsView(o[k("state")]).value_or("");
  j.created = sj::AsTime(o[k("createTime")]);
  if (auto tc = sj::AsObj(o[k("trainingConfig")])) {
    const sj::Members c(*tc);  // a few members: scanned
    j.base_model = sj::View(c, "baseModel").value_or("");
    j.accelerator_type = sj::View(c, "acceleratorType").value_or("");
    j.accelerator_count = static_cast<int>(sj::Int(c, "acceleratorCount").value_or(0));
  }
  j.node_count = static_cast<int>(sj::AsInt(o[k("nodeCount")]).value_or(1));
  // acceleratorSeconds is not read: it rises while a job idles, so it says nothing of
  // activity, and spend comes from billingUsage (R15). Read, it was a map per job per poll.
  if (auto t = sj::AsView(o[k("inactivityTimeout")])) {
    if (auto d = ParseProtoDuration(*t); d.ok() && *d > Duration::zero()) j.inactivity_timeout = *d;
  }
  j.disable_inactivity_cleanup = sj::AsBool(o[k("disableInactivityCleanup")]).value_or(false);
  if (auto p = o[k("jobProgress")]) sj::AppendJson(j.progress, *p);
  j.hot_load_deployment = sj::AsView(o[k("hotLoadDeploymentId")]).value_or("");
  return j;
}

constexpr sj::Keys kDeploymentKeys("name", "displayName", "baseModel", "state", "createTime", "minReplicaCount",
                                   "maxReplicaCount", "replicaCount", "replicaStats", "acceleratorType",
                                   "acceleratorCount", "hotLoadTrainerJob", "annotations");

Deployment ReadDeployment(const sj::object& obj) {
  constexpr const auto& k = kDeploymentKeys;
  const auto o = sj::Pick(obj, k);
  Deployment d;
  const std::string_view name = sj::AsView(o[k("name")]).value_or("");
  d.id = LastSegment(name);
  d.name = ObjectName::Of(name, Kind::kFireworksDeployment, d.id.view());
  d.display_name = sj::AsView(o[k("displayName")]).value_or("");
  d.base_model = sj::AsView(o[k("baseModel")]).value_or("");
  d.state = sj::AsView(o[k("state")]).value_or("");
  d.created = sj::AsTime(o[k("createTime")]);
  d.min_replicas = static_cast<int>(sj::AsInt(o[k("minReplicaCount")]).value_or(0));
  d.max_replicas = static_cast<int>(sj::AsInt(o[k("maxReplicaCount")]).value_or(std::max(d.min_replicas, 1)));
  d.replica_count = static_cast<int>(sj::AsInt(o[k("replicaCount")]).value_or(0));
  if (auto rs = sj::AsObj(o[k("replicaStats")])) {
    const sj::Members r(*rs);
    d.billed_replicas = static_cast<int>(sj::Int(r, "readyReplicaCount").value_or(0) +
                                         sj::Int(r, "initializingReplicaCount").value_or(0) +
                                         sj::Int(r, "downloadingModelReplicaCount").value_or(0));
  } else {
    d.billed_replicas = d.replica_count;
  }
  d.accelerator_type = sj::AsView(o[k("acceleratorType")]).value_or("");
  d.accelerator_count = static_cast<int>(sj::AsInt(o[k("acceleratorCount")]).value_or(0));
  d.hot_load_trainer_job = LastSegment(sj::AsView(o[k("hotLoadTrainerJob")]).value_or(""));
  if (auto a = sj::AsObj(o[k("annotations")])) {
    d.managed_rollout = sj::View(*a, "fireworks-training-sdk/managed-rollout").value_or("") == "true";
    for (const auto& kv : *a) {
      if (d.annotations.size() >= 64) break;  // a bound on what one object can make us keep
      if (auto v = sj::AsView(kv.value)) d.annotations[std::string(kv.key)] = std::string(*v);
    }
  }
  return d;
}

constexpr sj::Keys kCheckpointKeys("name", "checkpointName", "promotable", "createTime");

Checkpoint ReadCheckpoint(const sj::object& obj) {
  constexpr const auto& k = kCheckpointKeys;
  const auto o = sj::Pick(obj, k);
  Checkpoint c;
  c.name = sj::AsView(o[k("name")]).value_or("");
  c.id = IdFromName(c.name);
  if (auto server = sj::AsView(o[k("checkpointName")])) {
    c.server_name = *server;
  } else {
    c.server_name = c.id;
  }
  c.promotable = sj::AsBool(o[k("promotable")]).value_or(false);
  c.created = sj::AsTime(o[k("createTime")]);
  return c;
}

}  // namespace

std::string IdFromName(std::string_view name) { return std::string(LastSegment(name)); }

ObjectName ObjectName::Of(std::string_view name, Kind kind, std::string_view id) {
  // "accounts/" + account + "/" + collection + "/" + id, with the account's text between.
  const std::string_view collection = FireworksCollection(kind);
  constexpr std::string_view kAccounts = "accounts/";
  const size_t fixed = kAccounts.size() + 1 + collection.size() + 1 + id.size();
  ObjectName out;
  if (!collection.empty() && name.size() >= fixed && name.starts_with(kAccounts) && name.ends_with(id)) {
    const std::string_view rest = name.substr(0, name.size() - id.size());  // "accounts/<account>/<collection>/"
    const std::string_view tail = rest.substr(rest.size() - (collection.size() + 2));  // "/<collection>/"
    const std::string_view account = rest.substr(kAccounts.size(), rest.size() - kAccounts.size() - tail.size());
    if (tail.front() == '/' && tail.back() == '/' && tail.substr(1, collection.size()) == collection &&
        !account.empty()) {
      out.account = account;
      return out;
    }
  }
  out.whole = name;
  return out;
}

std::string ObjectName::KeptFor(const Interned& acct, Kind kind, std::string_view id) const {
  if (account.empty()) return std::string(whole.view());
  if (account == acct) return "";
  return FireworksResourceName(kind, account.view(), id);
}

Result<Page<Session>> ParseSessions(const std::string& b, std::string_view what) {
  return ParsePage<Session>(b, what, {"trainingSessions"}, ReadSession);
}

Result<Session> ParseSession(const std::string& b, std::string_view what) {
  return ParseOne<Session>(b, what, "a TrainingSession", ReadSession);
}

Result<Page<TrainingRun>> ParseTrainingRuns(const std::string& b, std::string_view what) {
  static constexpr sj::Keys k("name", "sourceTrainingSessionId", "state", "updateTime");
  return ParsePage<TrainingRun>(b, what, {"trainingRuns"}, [](const sj::object& obj) {
    const auto o = sj::Pick(obj, k);
    TrainingRun r;
    r.id = LastSegment(sj::AsView(o[k("name")]).value_or(""));
    r.session_id = LastSegment(sj::AsView(o[k("sourceTrainingSessionId")]).value_or(""));
    r.state = sj::AsView(o[k("state")]).value_or("");
    r.updated = sj::AsTime(o[k("updateTime")]);
    return r;
  });
}

Result<Page<Checkpoint>> ParseCheckpoints(const std::string& b, std::string_view what) {
  return ParsePage<Checkpoint>(
      b, what, {"trainingSessionCheckpoints", "training_session_checkpoints", "checkpoints", "rlorTrainerJobCheckpoints"},
      ReadCheckpoint);
}

Result<Page<Job>> ParseJobs(const std::string& b, std::string_view what) {
  return ParsePage<Job>(b, what, {"rlorTrainerJobs"}, ReadJob);
}

Result<Job> ParseJob(const std::string& b, std::string_view what) {
  return ParseOne<Job>(b, what, "an RlorTrainerJob", ReadJob);
}

Result<Page<Deployment>> ParseDeployments(const std::string& b, std::string_view what) {
  return ParsePage<Deployment>(b, what, {"deployments"}, ReadDeployment);
}

Result<Deployment> ParseDeployment(const std::string& b, std::string_view what) {
  return ParseOne<Deployment>(b, what, "a Deployment", ReadDeployment);
}

Result<Page<Model>> ParseModels(const std::string& b, std::string_view what) {
  static constexpr sj::Keys k("name", "kind", "createTime");
  return ParsePage<Model>(b, what, {"models"}, [](const sj::object& obj) {
    const auto o = sj::Pick(obj, k);
    Model m;
    m.id = IdFromName(sj::AsView(o[k("name")]).value_or(""));
    m.kind = sj::AsView(o[k("kind")]).value_or("");
    m.created = sj::AsTime(o[k("createTime")]);
    return m;
  });
}

Result<Usage> ParseBillingUsage(std::string_view body) {
  Usage u;
  // Ids are looked up as views of the row: a row names an id the map nearly always has.
  auto add = [](auto& totals, std::string_view id) -> auto& {
    auto it = totals.find(id);
    if (it == totals.end()) it = totals.try_emplace(std::string(id)).first;
    return it->second;
  };
  auto row = [&](std::string_view list, const bj::value& v) {
    if (!v.is_object()) return;
    const bj::object& r = v.get_object();
    if (list == "dedicatedCosts") {
      const std::string_view dep = LastSegment(json::View(r, "deploymentId").value_or(""));
      const int64_t secs = json::Int(r, "acceleratorSeconds").value_or(0);
      if (!dep.empty() && secs > 0) add(u.deployment_accelerator_seconds, dep) += secs;
      return;
    }
    const std::string_view session = LastSegment(json::View(r, "trainingSessionId").value_or(""));
    const int64_t tokens = json::Int(r, "tokens").value_or(0);
    if (!session.empty() && tokens > 0) {
      // The per-meter split rides in `group` in the simulator; without it, training.
      std::string_view meter = json::View(r, "group").value_or("");
      if (meter != "prefill" && meter != "cached_prefill" && meter != "sample" && meter != "train") meter = "train";
      add(u.session_tokens, session)[std::string(meter)] += tokens;
    }
    const std::string_view job = LastSegment(json::View(r, "jobId").value_or(""));
    const int64_t secs = json::Int(r, "acceleratorSeconds").value_or(0);
    if (!job.empty() && secs > 0) add(u.job_accelerator_seconds, job) += secs;
  };
  // Row by row, never the whole DOM, and of each row only the members read above
  // (json_elements.h).
  LW_RETURN_IF_ERROR(json::ForEachElement(body, "billingUsage", {"trainingCosts", "dedicatedCosts"}, row,
                                          {"deploymentId", "acceleratorSeconds", "trainingSessionId", "tokens", "group",
                                           "jobId"})
                         .status());
  return u;
}

StatusMapping SessionLifecycle(std::string_view st) {
  if (st == "READY") return {Lifecycle::kRunning, false, false};
  if (st == "TRAINING_SESSION_STATE_UNSPECIFIED") return {Lifecycle::kUnknown, false, false};
  if (st == "DELETING") return {Lifecycle::kDeleted, true, false};
  if (st == "EXPIRED") return {Lifecycle::kStopped, false, false};
  if (st == "FAILED") return {Lifecycle::kFailed, false, false};
  return {Lifecycle::kUnknown, false, false};
}

StatusMapping JobLifecycle(std::string_view st) {
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

StatusMapping DeploymentLifecycle(std::string_view st, int billed) {
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
