#include "providers/baseten/parse.h"

#include <algorithm>
#include <boost/json/serialize.hpp>


#include "core/json.h"
#include "core/json_elements.h"
#include "providers/gpu.h"
#include "providers/list_items.h"
#include "providers/simd_json.h"

namespace loopwarden::providers::baseten {
namespace {

namespace bj = boost::json;

// A creator's email, from an object's `user` member. Pooled (Interned) by every caller:
// a view into the DOM, not a copy.
std::string_view Email(const std::optional<sj::element>& user) {
  if (auto u = sj::AsObj(user)) return sj::View(*u, "email").value_or("");
  return "";
}

// From an object's `instance_type` member.
std::optional<InstanceType> ReadInstanceType(const std::optional<sj::element>& member) {
  const auto obj = sj::AsObj(member);
  if (!obj) return std::nullopt;
  const sj::Members it(*obj);  // a few members: scanned
  InstanceType t;
  t.id = sj::View(it, "id").value_or("");
  t.name = sj::View(it, "name").value_or(t.id.view());
  t.gpu_count = static_cast<int>(sj::Int(it, "gpu_count").value_or(0));
  t.gpu_type = NormalizeGpuType(sj::View(it, "gpu_type").value_or(""));
  return t;
}

// Each listed object's members are found in one walk (sj::Pick), the keys each reader
// takes listed beside it.
constexpr sj::Keys kSamplerKeys("id", "model_id", "deployment_id", "base_model", "status", "user", "created_at",
                                "instance_type", "node_count");

Sampler ReadSampler(const sj::object& obj) {
  constexpr const auto& k = kSamplerKeys;
  const auto o = sj::Pick(obj, k);
  Sampler s;
  s.id = sj::AsView(o[k("id")]).value_or("");
  s.model_id = sj::AsView(o[k("model_id")]).value_or("");
  s.deployment_id = sj::AsView(o[k("deployment_id")]).value_or("");
  s.base_model = sj::AsView(o[k("base_model")]).value_or("");
  s.status = sj::AsStatusName(o[k("status")]).value_or("");
  s.owner = Email(o[k("user")]);
  s.created_at = sj::AsTime(o[k("created_at")]);
  s.instance_type = ReadInstanceType(o[k("instance_type")]);
  s.node_count = static_cast<int>(sj::AsInt(o[k("node_count")]).value_or(1));
  return s;
}

constexpr sj::Keys kRunKeys("id", "session_id", "deployment_id", "name", "base_model", "status", "user", "created_at",
                            "sampler");

Run ReadRun(const sj::object& obj) {
  constexpr const auto& k = kRunKeys;
  const auto o = sj::Pick(obj, k);
  Run r;
  r.id = sj::AsView(o[k("id")]).value_or("");
  r.session_id = sj::AsView(o[k("session_id")]).value_or("");
  r.deployment_id = sj::AsView(o[k("deployment_id")]).value_or("");
  r.name = sj::AsView(o[k("name")]).value_or("");
  r.base_model = sj::AsView(o[k("base_model")]).value_or("");
  r.status = sj::AsStatusName(o[k("status")]).value_or("");
  r.owner = Email(o[k("user")]);
  r.created_at = sj::AsTime(o[k("created_at")]);
  if (auto s = sj::AsObj(o[k("sampler")])) r.sampler = ReadSampler(*s);
  return r;
}

constexpr sj::Keys kLoopsDeploymentKeys("id", "active_run_id", "latest_run_id", "base_model", "status", "user",
                                        "created_at", "availability_model", "instance_type", "node_count", "sampler");

LoopsDeployment ReadLoopsDeployment(const sj::object& obj) {
  constexpr const auto& k = kLoopsDeploymentKeys;
  const auto o = sj::Pick(obj, k);
  LoopsDeployment d;
  d.id = sj::AsView(o[k("id")]).value_or("");
  d.active_run_id = sj::AsView(o[k("active_run_id")]).value_or("");
  d.latest_run_id = sj::AsView(o[k("latest_run_id")]).value_or("");
  d.base_model = sj::AsView(o[k("base_model")]).value_or("");
  d.status = sj::AsStatusName(o[k("status")]).value_or("");
  d.owner = Email(o[k("user")]);
  d.created_at = sj::AsTime(o[k("created_at")]);
  d.availability = sj::AsView(o[k("availability_model")]).value_or("dedicated");
  d.instance_type = ReadInstanceType(o[k("instance_type")]);
  d.node_count = static_cast<int>(sj::AsInt(o[k("node_count")]).value_or(1));
  if (auto s = sj::AsObj(o[k("sampler")])) d.sampler = ReadSampler(*s);
  return d;
}

constexpr sj::Keys kDeploymentKeys("id", "name", "model_id", "status", "active_replica_count", "is_production",
                                   "created_at", "instance_type_name", "autoscaling_settings", "labels");
constexpr sj::Keys kAutoscalingKeys("min_replica", "max_replica");

Deployment ReadDeployment(const sj::object& obj) {
  constexpr const auto& k = kDeploymentKeys;
  const auto o = sj::Pick(obj, k);
  Deployment d;
  d.id = sj::AsView(o[k("id")]).value_or("");
  d.name = sj::AsView(o[k("name")]).value_or("");
  d.model_id = sj::AsView(o[k("model_id")]).value_or("");
  d.status = sj::AsStatusName(o[k("status")]).value_or("");
  d.active_replica_count = static_cast<int>(sj::AsInt(o[k("active_replica_count")]).value_or(0));
  d.is_production = sj::AsBool(o[k("is_production")]).value_or(false);
  d.created_at = sj::AsTime(o[k("created_at")]);
  d.instance_type_name = sj::AsView(o[k("instance_type_name")]).value_or("");
  if (auto a = sj::AsObj(o[k("autoscaling_settings")])) {
    constexpr const auto& ak = kAutoscalingKeys;
    const auto as = sj::Pick(*a, ak);
    if (auto v = sj::AsInt(as[ak("min_replica")])) d.min_replica = static_cast<int>(*v);
    if (auto v = sj::AsInt(as[ak("max_replica")])) d.max_replica = static_cast<int>(*v);
  }
  if (auto l = sj::AsObj(o[k("labels")])) {
    // Of a label given twice the last copy counts, as everywhere else.
    for (const auto& m : *l) {
      if (auto v = sj::AsView(m.value)) d.labels[Interned(m.key)] = std::string(*v);
    }
  }
  return d;
}

constexpr sj::Keys kCheckpointKeys("id", "checkpoint_id", "run_id", "target", "created_at", "size_bytes",
                                   "sync_status");

Checkpoint ReadCheckpoint(const sj::object& obj) {
  constexpr const auto& k = kCheckpointKeys;
  const auto o = sj::Pick(obj, k);
  Checkpoint c;
  c.id = sj::AsView(o[k("id")]).value_or("");
  c.name = sj::AsView(o[k("checkpoint_id")]).value_or("");
  c.run_id = sj::AsView(o[k("run_id")]).value_or("");
  c.target = sj::AsView(o[k("target")]).value_or("");
  c.created_at = sj::AsTime(o[k("created_at")]);
  c.size_bytes = sj::AsInt(o[k("size_bytes")]).value_or(0);
  c.syncing = sj::AsView(o[k("sync_status")]).value_or("") == "SYNCING";
  return c;
}

// The array at body[key] (valid until the thread's next sj::Parse).
Result<sj::array> ArrayAt(const std::string& text, std::string_view what, std::string_view key) {
  auto body = sj::Parse(text, what);
  if (!body.ok()) return body.status();
  sj::object o;
  std::optional<sj::array> arr;
  if (!body->get_object().get(o)) arr = sj::Arr(o, key);
  if (!arr) return InvalidArgument("expected {\"" + std::string(key) + "\": [...]}");
  return *arr;
}

template <class T, class Fn>
Result<Parsed<T>> ListText(const std::string& text, std::string_view what, std::string_view key, Fn read) {
  auto arr = ArrayAt(text, what, key);
  if (!arr.ok()) return arr.status();
  Parsed<T> out;
  out.items = sj::ReadListItems<T>(*arr, read, out.dropped);
  return out;
}

template <class T, class Fn>
Result<T> OneText(const std::string& text, std::string_view what, std::string_view key, Fn read) {
  auto body = sj::Parse(text, what);
  if (!body.ok()) return body.status();
  sj::object top;
  std::optional<sj::object> o;
  if (!body->get_object().get(top)) o = key.empty() ? top : sj::Obj(top, key);
  if (!o) return InvalidArgument(key.empty() ? "expected an object" : "expected {\"" + std::string(key) + "\": {...}}");
  T item = read(*o);
  if (item.id.empty()) return InvalidArgument("object without an id");
  return item;
}

}  // namespace

Result<Parsed<Run>> ParseRuns(const std::string& b, std::string_view what) { return ListText<Run>(b, what, "runs", ReadRun); }
Result<Run> ParseRunBody(const std::string& b, std::string_view what) { return OneText<Run>(b, what, "run", ReadRun); }
Result<Parsed<Sampler>> ParseSamplers(const std::string& b, std::string_view what) {
  return ListText<Sampler>(b, what, "samplers", ReadSampler);
}
Result<Sampler> ParseSamplerBody(const std::string& b, std::string_view what) {
  return OneText<Sampler>(b, what, "sampler", ReadSampler);
}
Result<Parsed<LoopsDeployment>> ParseLoopsDeployments(const std::string& b, std::string_view what) {
  return ListText<LoopsDeployment>(b, what, "deployments", ReadLoopsDeployment);
}
Result<LoopsDeployment> ParseLoopsDeploymentBody(const std::string& b, std::string_view what) {
  return OneText<LoopsDeployment>(b, what, "deployment", ReadLoopsDeployment);
}
Result<Parsed<Model>> ParseModels(const std::string& b, std::string_view what) {
  static constexpr sj::Keys k("id", "name", "team_name", "created_at", "deployments_count");
  return ListText<Model>(b, what, "models", [](const sj::object& obj) {
    const auto o = sj::Pick(obj, k);
    Model m;
    m.id = sj::AsView(o[k("id")]).value_or("");
    m.name = sj::AsView(o[k("name")]).value_or("");
    m.team = sj::AsView(o[k("team_name")]).value_or("");
    m.created_at = sj::AsTime(o[k("created_at")]);
    m.deployments_count = static_cast<int>(sj::AsInt(o[k("deployments_count")]).value_or(0));
    return m;
  });
}
Result<Parsed<Deployment>> ParseDeployments(const std::string& b, std::string_view what) {
  return ListText<Deployment>(b, what, "deployments", ReadDeployment);
}
Result<Deployment> ParseDeploymentBody(const std::string& b, std::string_view what) {
  return OneText<Deployment>(b, what, "", ReadDeployment);
}
Result<Parsed<Checkpoint>> ParseCheckpoints(const std::string& b, std::string_view what) {
  return ListText<Checkpoint>(b, what, "checkpoints", ReadCheckpoint);
}

namespace {

// Copies, of each object of body[list_key], the members `keys` names (the last copy of
// each, which is the one the reader takes); of the member keys[nested], an object, only
// the members `inner` names. The reader's own Keys are passed, so a member it reads
// cannot be left out of the stored copy (tests/providers hold each trimmed listing to
// parse to the same items as the whole one). An unreadable body trims to "".
template <size_t N, size_t M>
std::string TrimList(const std::string& text, std::string_view list_key, const sj::Keys<N>& keys, size_t nested,
                     const sj::Keys<M>& inner) {
  auto arr = ArrayAt(text, "a listing to trim", list_key);
  if (!arr.ok()) return "";
  std::string out;
  out.reserve(text.size());  // the trimmed copy is shorter: one allocation
  out += "{\"";
  out += list_key;
  out += "\":[";
  bool first_item = true;
  for (sj::element v : *arr) {
    sj::object o;
    if (v.get_object().get(o)) continue;
    out += first_item ? "{" : ",{";
    first_item = false;
    const auto picked = sj::Pick(o, keys);
    bool first = true;
    auto name = [&out](bool& is_first, std::string_view key) {
      out += is_first ? "\"" : ",\"";
      is_first = false;
      out += key;  // the readers' keys need no escaping
      out += "\":";
    };
    for (size_t i = 0; i < N; ++i) {
      const auto value = picked[i];
      if (!value) continue;
      if (i != nested) {
        name(first, keys.Name(i));
        sj::AppendJson(out, *value);
        continue;
      }
      const auto obj = sj::AsObj(value);
      if (!obj) continue;
      const auto kept = sj::Pick(*obj, inner);
      bool first_inner = true;
      for (size_t j = 0; j < M; ++j) {
        if (!kept[j]) continue;
        if (first_inner) {
          name(first, keys.Name(i));
          out += "{";
        }
        name(first_inner, inner.Name(j));
        sj::AppendJson(out, *kept[j]);
      }
      if (!first_inner) out += "}";
    }
    out += "}";
  }
  out += "]}";
  return out;
}

}  // namespace

std::string TrimDeploymentsBody(const std::string& body) {
  return TrimList(body, "deployments", kDeploymentKeys, kDeploymentKeys("autoscaling_settings"), kAutoscalingKeys);
}

std::string TrimCheckpointsBody(const std::string& body) {
  // Nothing nested is cut down: no member is kCheckpointKeys.size().
  return TrimList(body, "checkpoints", kCheckpointKeys, kCheckpointKeys.size(), kCheckpointKeys);
}

Result<std::map<std::string, std::pair<InstanceType, double>>> ParsePrices(const std::string& text, std::string_view what) {
  auto arr = ArrayAt(text, what, "instance_types");
  if (!arr.ok()) return arr.status();
  std::map<std::string, std::pair<InstanceType, double>> out;
  for (sj::element v : *arr) {
    sj::object o;
    if (v.get_object().get(o)) continue;
    const sj::Members m(o);
    auto it = ReadInstanceType(sj::Get(m, "instance_type"));
    auto price = sj::Num(m, "price");
    if (!it || it->id.empty() || !price || *price < 0) continue;
    out[it->id] = {*it, *price};
    if (!it->name.empty()) out[it->name] = {*it, *price};
  }
  return out;
}

namespace {

std::optional<Money> MoneyValue(const bj::value* v) {
  if (!v) return std::nullopt;
  if (v->is_string()) {
    auto m = ParseMoney(std::string_view(v->get_string()));
    return m.ok() ? std::optional<Money>(*m) : std::nullopt;
  }
  auto n = json::AsNum(*v);
  return n ? std::optional<Money>(Money::FromDouble(*n)) : std::nullopt;
}

}  // namespace

Result<std::vector<UsageDay>> ParseUsageSummary(std::string_view body) {
  std::vector<UsageDay> out;
  Status bad;  // the first unusable row: rows after it are not read
  size_t index[2] = {0, 0};
  auto row = [&](std::string_view path, const bj::value& v) {
    const bool dedicated = path.starts_with("dedicated_usage");
    const size_t row_index = index[dedicated ? 0 : 1]++;
    if (!bad.ok()) return;
    // Where a row is, for its error only: these strings were made for every row and
    // every day of it, and dropped unused.
    auto where = [&] {
      return std::string(dedicated ? "dedicated_usage" : "training_usage") + ".breakdown[" +
             std::to_string(row_index) + "]";
    };
    const bj::object* r = v.if_object();
    const bj::object* br = r ? json::Obj(*r, "billable_resource") : nullptr;
    const std::string id = br ? json::Str(*br, "id").value_or("") : "";
    if (id.empty()) {
      bad = InvalidArgument(where() + ": no billable_resource.id");
      return;
    }
    const bj::array* daily = json::Arr(*r, "daily");
    if (!daily) {
      bad = InvalidArgument(where() + ": no daily array");
      return;
    }
    for (size_t k = 0; k < daily->size(); ++k) {
      auto at = [&] { return where() + ".daily[" + std::to_string(k) + "]"; };
      const bj::object* d = (*daily)[k].if_object();
      const std::string date = d ? json::Str(*d, "date").value_or("") : "";
      Result<Time> day = ParseTime(date + "T00:00:00Z");
      if (date.size() != 10 || !day.ok()) {
        bad = InvalidArgument(at() + ": date is not YYYY-MM-DD");
        return;
      }
      std::optional<Money> cost = MoneyValue(json::Get(*d, "subtotal"));
      if (!cost) {
        bad = InvalidArgument(at() + ": subtotal is not an amount");
        return;
      }
      out.push_back({id, json::Str(*br, "kind").value_or(""), *day, json::Int(*d, "minutes").value_or(0), *cost});
    }
  };
  // Row by row, never the whole DOM (json_elements.h): 8.4 MB for one account's body at
  // 100k resources. Of each row, only the members read above are built.
  LW_ASSIGN_OR_RETURN(std::vector<json::Found> found,
                      json::ForEachElement(body, "usage_summary",
                                           {"dedicated_usage", "dedicated_usage/breakdown", "training_usage",
                                            "training_usage/breakdown"},
                                           row, {"billable_resource", "daily"}));
  LW_RETURN_IF_ERROR(bad);
  for (size_t s = 0; s < 2; ++s) {
    const json::Found section = found[2 * s], rows = found[2 * s + 1];
    if (section == json::Found::kAbsent || section == json::Found::kNull) continue;
    if (rows != json::Found::kArray) {
      return InvalidArgument(std::string(s == 0 ? "dedicated_usage" : "training_usage") +
                             ": expected an object with a breakdown array");
    }
  }
  return out;
}

namespace {

struct Point {
  Time t;
  double v;
};

std::vector<Point> Series(const bj::value* v) {
  std::vector<Point> out;
  if (!v || !v->is_array()) return out;
  for (const bj::value& p : v->get_array()) {
    if (!p.is_object()) continue;
    auto t = json::TimeField(p.get_object(), "timestamp");
    const bj::value* val = json::Get(p.get_object(), "value");
    auto n = val ? json::AsNum(*val) : std::nullopt;
    if (t && n) out.push_back({*t, *n});
  }
  return out;
}

const bj::object* MetricsObject(const bj::value& body) {
  if (!body.is_object()) return nullptr;
  return json::Obj(body.get_object(), "metrics");
}

}  // namespace

ActivitySummary SummarizeTrainerMetrics(const bj::value& body, double threshold, Time now, Duration fresh) {
  ActivitySummary s;
  const bj::object* m = MetricsObject(body);
  if (!m) return s;
  std::map<Time, bool> busy;  // per timestamp: any rank busy or any volume
  std::optional<Time> latest;
  if (const bj::object* util = json::Obj(*m, "gpu_utilization")) {
    for (const auto& kv : *util) {
      for (const Point& p : Series(&kv.value())) {
        const double u = p.v > 1.0 ? p.v / 100.0 : p.v;  // the scale is unconfirmed: >1 reads as percent
        s.max_gpu = std::max(s.max_gpu, u);
        busy[p.t] = busy[p.t] || u > threshold;
        if (!latest || p.t > *latest) latest = p.t;
      }
    }
  }
  for (const Point& p : Series(json::Get(*m, "inference_volume"))) {
    s.total_volume += p.v;
    busy[p.t] = busy[p.t] || p.v > 0;
    if (!latest || p.t > *latest) latest = p.t;
  }
  if (busy.empty() || !latest || now - *latest > fresh) return s;  // no fresh data: missing, not idle
  s.present = true;
  s.first_point = busy.begin()->first;
  for (const auto& [t, b] : busy) {
    if (b) s.last_busy = t;
  }
  s.busy_latest = busy.rbegin()->second;
  return s;
}

Result<RequestCounts> ParseRequestCounts(const bj::value& body) {
  if (!body.is_object()) return InvalidArgument("deployment metrics: not an object");
  const bj::object& o = body.get_object();
  auto start = json::Int(o, "start_epoch_millis");
  auto end = json::Int(o, "end_epoch_millis");
  if (!start || !end) return InvalidArgument("deployment metrics: no start_epoch_millis / end_epoch_millis");
  RequestCounts c{FromUnixMillis(*start), FromUnixMillis(*end), json::Int(o, "step_seconds"), {}};
  const bj::array* descriptors = json::Arr(o, "metric_descriptors");
  const bj::array* values = json::Arr(o, "metric_values");
  if (!descriptors || !values) return InvalidArgument("deployment metrics: no metric_descriptors / metric_values");
  std::optional<size_t> index;
  for (size_t i = 0; i < descriptors->size(); ++i) {
    const bj::value& d = (*descriptors)[i];
    if (d.is_object() && json::Str(d.get_object(), "name") == "baseten_inference_requests_total") index = i;
  }
  // Not served for this deployment: every set is missing.
  for (const bj::value& v : *values) {
    if (!v.is_object()) return InvalidArgument("deployment metrics: a value set is not an object");
    auto at = json::Int(v.get_object(), "start_epoch_millis");
    const bj::array* per_descriptor = json::Arr(v.get_object(), "values");
    if (!at || !per_descriptor) return InvalidArgument("deployment metrics: a value set has no start_epoch_millis / values");
    RequestCounts::Set set{FromUnixMillis(*at), std::nullopt};
    if (index && *index < per_descriptor->size() && (*per_descriptor)[*index].is_array()) {
      for (const bj::value& x : (*per_descriptor)[*index].get_array()) {
        if (auto n = json::AsNum(x)) set.requests = set.requests.value_or(0) + std::max(0.0, *n);
      }
    }
    c.sets.push_back(set);
  }
  std::sort(c.sets.begin(), c.sets.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
  return c;
}

ActivitySummary SummarizeRequestCounts(const RequestCounts& c) {
  ActivitySummary s;
  s.first_point = c.start;
  for (size_t i = 0; i < c.sets.size(); ++i) {
    const RequestCounts::Set& set = c.sets[i];
    if (!set.requests) continue;
    s.present = true;
    s.total_volume += *set.requests;
    if (*set.requests > 0) {
      // The set ends where the next begins (SERIES) or at the window's end (SUMMARY).
      s.last_busy = i + 1 < c.sets.size() ? c.sets[i + 1].start : c.end;
    }
  }
  if (!c.sets.empty() && c.sets.back().requests) s.busy_latest = *c.sets.back().requests > 0;
  return s;
}

StatusMapping RunLifecycle(std::string_view st) {
  if (st == "ACTIVE") return {Lifecycle::kRunning, false, true};
  if (st == "INACTIVE") return {Lifecycle::kStopped, false, false};
  return {Lifecycle::kUnknown, false, false};
}

StatusMapping LoopsDeploymentLifecycle(std::string_view st) {
  if (st == "CREATED" || st == "DEPLOYING") return {Lifecycle::kStarting, true, true};
  if (st == "RUNNING") return {Lifecycle::kRunning, false, true};
  if (st == "SCALED_TO_ZERO") return {Lifecycle::kScaledToZero, false, false};
  if (st == "STOPPED" || st == "PREEMPTED") return {Lifecycle::kStopped, false, false};
  if (st == "FAILED") return {Lifecycle::kFailed, false, false};
  return {Lifecycle::kUnknown, false, false};
}

StatusMapping DeploymentStatusLifecycle(std::string_view st) {
  if (st == "BUILDING" || st == "DEPLOYING" || st == "LOADING_MODEL" || st == "WAKING_UP") {
    return {Lifecycle::kStarting, true, true};
  }
  if (st == "UPDATING") return {Lifecycle::kRunning, true, true};
  if (st == "ACTIVE" || st == "UNHEALTHY") return {Lifecycle::kRunning, false, true};
  if (st == "DEACTIVATING") return {Lifecycle::kStopped, true, true};  // still holding GPUs: upper bound
  if (st == "SCALED_TO_ZERO") return {Lifecycle::kScaledToZero, false, false};
  if (st == "INACTIVE" || st == "BUILD_STOPPED") return {Lifecycle::kStopped, false, false};
  if (st == "FAILED" || st == "DEPLOY_FAILED" || st == "BUILD_FAILED") return {Lifecycle::kFailed, false, false};
  return {Lifecycle::kUnknown, false, false};
}

}  // namespace loopwarden::providers::baseten
