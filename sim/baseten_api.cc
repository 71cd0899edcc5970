// The Baseten management and Loops API, as shared/providers/baseten.md specifies it.
#include <algorithm>
#include <cmath>

#include "core/json.h"
#include "sim/api.h"
#include "sim/deployment_metrics.h"

namespace loopwarden::sim {
namespace {

using net::HttpResponse;

HttpResponse Error(int status, const std::string& msg) {
  return net::JsonResponse(status, Json(bj::object{{"error", msg}}));
}

HttpResponse Ok(const bj::value& v) { return net::JsonResponse(200, Json(v)); }

// S5: some objects carry whole seconds, some milliseconds.
bj::value T(Time t, bool millis) { return bj::value(millis ? FormatTimeMillis(t) : FormatTimeSeconds(t)); }

bj::value Email(const std::string& e) {
  return bj::object{{"email", e.empty() ? bj::value(nullptr) : bj::value(e)}};
}

bj::object InstanceTypeJson(const InstanceType& it) {
  bj::object o{{"id", it.id},
               {"name", it.name},
               {"memory_limit_mib", it.memory_mib},
               {"millicpu_limit", it.millicpu},
               {"gpu_count", it.gpu_count}};
  o["gpu_type"] = it.gpu_type.empty() ? bj::value(nullptr) : bj::value(it.gpu_type);
  o["gpu_memory_limit_mib"] = it.gpu_memory_mib ? bj::value(it.gpu_memory_mib) : bj::value(nullptr);
  return o;
}

bj::value InstanceTypeOrNull(const World& w, const std::string& id) {
  const InstanceType* it = w.FindInstanceType(id);
  return it ? bj::value(InstanceTypeJson(*it)) : bj::value(nullptr);
}

struct Caller {
  BtOrg* org = nullptr;
  const BtKey* key = nullptr;
};

// S1: "Bearer <k>" or "Api-Key <k>"; anything else is 401.
std::optional<HttpResponse> Authenticate(ApiContext& ctx, Caller& out) {
  const std::string auth(ctx.req.Header("authorization"));
  std::string key;
  if (auth.rfind("Bearer ", 0) == 0) key = auth.substr(7);
  if (auth.rfind("Api-Key ", 0) == 0) key = auth.substr(8);
  if (key.empty()) {
    return Error(401, "Missing or malformed Authorization header; use 'Bearer <api key>' or 'Api-Key <api key>'");
  }
  for (BtOrg& org : ctx.world.orgs) {
    for (const BtKey& k : org.keys) {
      if (k.key == key) {
        out.org = &org;
        out.key = &k;
        return std::nullopt;
      }
    }
  }
  return Error(401, "Invalid API key");
}

std::string BaseUrl(const std::string& kind, const std::string& id) {
  return "https://" + kind + "-" + id + ".api.baseten.co";
}

bj::value SamplerJson(ApiContext& ctx, const BtOrg& org, const BtSampler& s) {
  const Switches& sw = ctx.world.switches;
  return bj::object{{"id", s.id},
                    {"base_url", BaseUrl("model", s.model_id) + "/sampler"},
                    {"base_model", s.base_model},
                    {"created_at", T(s.created, false)},
                    {"model_id", s.model_id},
                    {"deployment_id", s.deployment_id},
                    {"status", bj::object{{"name", SamplerStatus(s, org, sw, ctx.now)}}},
                    {"user", Email(s.owner)},
                    {"instance_type", InstanceTypeOrNull(ctx.world, s.instance_type)},
                    {"node_count", s.nodes}};
}

const BtSampler* PairedSampler(const BtOrg& org, const BtRun& r, Time now) {
  if (!r.sampler) return nullptr;
  auto it = org.sampler_index.find(*r.sampler);
  if (it == org.sampler_index.end()) return nullptr;
  const BtSampler& s = org.samplers[it->second];
  return s.created <= now ? &s : nullptr;
}

bj::value RunJson(ApiContext& ctx, const BtOrg& org, const BtRun& r) {
  const BtSampler* s = PairedSampler(org, r, ctx.now);
  return bj::object{
      {"id", r.id},
      {"session_id", r.session_id},
      {"deployment_id", r.dedicated ? bj::value(r.deployment_id) : bj::value(nullptr)},
      {"name", r.name},
      {"base_model", r.base_model},
      {"base_url", r.dedicated ? BaseUrl("trainer", r.deployment_id) + "/trainer"
                               : "https://serverless.api.baseten.co/loops/" + r.id},
      {"created_at", T(r.created, true)},
      {"status", bj::object{{"name", RunStatus(r, ctx.world.switches, ctx.now)}}},
      {"user", Email(r.owner)},
      {"sampler", s ? SamplerJson(ctx, org, *s) : bj::value(nullptr)},
  };
}

bj::value LoopsDeploymentJson(ApiContext& ctx, const BtOrg& org, const BtRun& r) {
  const std::string st = LoopsDeploymentStatus(r, ctx.world.switches, ctx.now);
  const BtSampler* s = PairedSampler(org, r, ctx.now);
  return bj::object{{"id", r.deployment_id},
                    {"active_run_id", LoopsDeploymentBills(st) ? bj::value(r.id) : bj::value(nullptr)},
                    {"latest_run_id", r.id},
                    {"base_model", r.base_model},
                    {"base_url", BaseUrl("trainer", r.deployment_id) + "/trainer"},
                    {"status", bj::object{{"name", st}}},
                    {"user", Email(r.owner)},
                    {"created_at", T(r.created, false)},
                    {"availability_model", r.availability},
                    {"instance_type", InstanceTypeOrNull(ctx.world, r.instance_type)},
                    {"node_count", r.nodes},
                    {"sampler", s ? SamplerJson(ctx, org, *s) : bj::value(nullptr)}};
}

bj::value AutoscalingJson(const Autoscaling& a, const Switches& sw) {
  return bj::object{{"min_replica", a.min_replica},
                    {"max_replica", a.max_replica},
                    {"autoscaling_window", a.autoscaling_window},
                    {"scale_down_delay", a.scale_down_delay.value_or(static_cast<int>(
                                             std::chrono::duration_cast<std::chrono::seconds>(sw.inference_scale_down_delay).count()))},
                    {"concurrency_target", a.concurrency_target},
                    {"target_utilization_percentage", nullptr},
                    {"target_in_flight_tokens", nullptr},
                    {"max_scale_down_rate", nullptr}};
}

bj::value DeploymentJson(ApiContext& ctx, const BtDeployment& d) {
  const Switches& sw = ctx.world.switches;
  bj::object labels;
  for (const auto& [k, v] : d.labels) labels[k] = v;
  return bj::object{{"id", d.id},
                    {"created_at", T(d.created, true)},
                    {"name", d.name},
                    {"model_id", d.model_id},
                    {"is_production", d.is_production},
                    {"is_development", d.is_development},
                    {"status", DeploymentStatus(d, sw, ctx.now)},
                    {"active_replica_count", DeploymentReplicas(d, sw, ctx.now)},
                    {"autoscaling_settings", AutoscalingJson(SettingsAt(d, ctx.now), sw)},
                    {"instance_type_name", d.instance_type},
                    {"environment", d.is_production ? bj::value("production") : bj::value(nullptr)},
                    {"labels", d.labels.empty() ? bj::value(nullptr) : bj::value(labels)},
                    {"region", nullptr},
                    {"request_backpressure_settings", bj::object{{"policy", nullptr}}}};
}

bool Visible(const Caller& c, const std::string& owner, bool org_scope) { return org_scope || owner == c.key->owner; }

// ---- metrics ----

struct Window {
  int64_t start_ms;
  int64_t end_ms;
  int64_t step_s;
};

// R8 reads its window from the JSON body.
std::optional<HttpResponse> ReadWindow(ApiContext& ctx, Window& w) {
  const int64_t now_ms = ToUnixMillis(ctx.now);
  w = {now_ms - 3600'000, now_ms, 60};
  if (!ctx.req.body.empty()) {
    auto v = json::Parse(ctx.req.body, "metrics request");
    if (!v.ok() || !v->is_object()) return Error(400, "request body must be a JSON object");
    const auto& o = v->get_object();
    if (auto x = json::Int(o, "start_epoch_millis")) w.start_ms = *x;
    if (auto x = json::Int(o, "end_epoch_millis")) w.end_ms = *x;
    if (auto x = json::Int(o, "step_seconds")) w.step_s = *x;
  }
  if (w.step_s <= 0 || w.end_ms <= w.start_ms) return Error(400, "invalid metrics window");
  if (w.end_ms - w.start_ms > 7LL * 86400'000) return Error(400, "metrics window longer than 7 days");
  if ((w.end_ms - w.start_ms) / (w.step_s * 1000) > 1500) return Error(400, "too many points; raise step_seconds");
  return std::nullopt;
}

// Deterministic small noise for idle GPUs: 1-3 %.
double IdleNoise(int64_t t_ms, int rank) {
  uint64_t z = static_cast<uint64_t>(t_ms / 1000) * 1315423911ULL + static_cast<uint64_t>(rank) * 2654435761ULL;
  z ^= z >> 13;
  return 0.01 + static_cast<double>(z % 200) / 10000.0;
}

bj::array Series(const std::vector<std::pair<Time, double>>& pts) {
  bj::array a;
  for (const auto& [t, v] : pts) a.push_back(bj::object{{"value", v}, {"timestamp", FormatTimeSeconds(t)}});
  return a;
}

bj::value TrainerMetrics(ApiContext& ctx, const BtRun& r, const Window& w) {
  const InstanceType* it = ctx.world.FindInstanceType(r.instance_type);
  const int ranks = std::min(64, (it ? it->gpu_count : 1) * r.nodes);
  std::vector<std::vector<std::pair<Time, double>>> gpu(static_cast<size_t>(ranks));
  std::vector<std::pair<Time, double>> volume, concurrent;
  const int64_t step_ms = w.step_s * 1000;
  const int64_t first = (w.start_ms + step_ms - 1) / step_ms * step_ms;
  for (int64_t t_ms = first; t_ms <= w.end_ms; t_ms += step_ms) {
    const Time t = FromUnixMillis(t_ms);
    if (t > ctx.now) break;
    // Points exist only while the trainer pods run: a gap is missing data, not zero.
    if (LoopsDeploymentStatus(r, ctx.world.switches, t) != "RUNNING") continue;
    const Interval* act = At(r.activity, t);
    for (int k = 0; k < ranks; ++k) {
      double u = act ? std::min(1.0, act->level) : IdleNoise(t_ms, k);
      if (ctx.world.switches.gpu_util_percent) u *= 100;
      gpu[static_cast<size_t>(k)].push_back({t, std::round(u * 1000) / 1000});
    }
    volume.push_back({t, act ? std::round(act->rate * static_cast<double>(w.step_s) / 60.0) : 0.0});
    concurrent.push_back({t, act ? std::max(1.0, std::round(act->rate / 30)) : 0.0});
  }
  bj::object util, mem;
  for (int k = 0; k < ranks; ++k) {
    util[std::to_string(k)] = Series(gpu[static_cast<size_t>(k)]);
    std::vector<std::pair<Time, double>> m;
    for (const auto& [t, v] : gpu[static_cast<size_t>(k)]) m.push_back({t, 6.12e10});
    mem[std::to_string(k)] = Series(m);
  }
  return bj::object{{"inference_volume", Series(volume)},
                    {"concurrent_requests", Series(concurrent)},
                    {"gpu_utilization", util},
                    {"gpu_memory_usage_bytes", mem},
                    {"cpu_usage", bj::array{}},
                    {"cpu_memory_usage_bytes", bj::array{}},
                    {"response_time_stats", bj::array{}},
                    {"inference_volume_by_status", bj::array{}},
                    {"ephemeral_storage", bj::object{{"usage_bytes", bj::array{}}, {"utilization", bj::array{}}}},
                    {"per_node_metrics", bj::array{}}};
}

// ---- helpers for lookups ----

BtRun* FindRun(BtOrg& org, const std::string& id, Time now) {
  auto it = org.run_index.find(id);
  if (it == org.run_index.end()) return nullptr;
  BtRun& r = org.runs[it->second];
  return RunExists(r, now) ? &r : nullptr;
}

BtRun* FindRunByLoopsDeployment(BtOrg& org, const std::string& dep, Time now) {
  auto it = org.loops_deployment_to_run.find(dep);
  if (it == org.loops_deployment_to_run.end()) return nullptr;
  return FindRun(org, it->second, now);
}

BtSampler* FindSampler(BtOrg& org, const std::string& id, Time now) {
  auto it = org.sampler_index.find(id);
  if (it == org.sampler_index.end()) return nullptr;
  BtSampler& s = org.samplers[it->second];
  if (s.created > now) return nullptr;
  if (!s.paired_run.empty()) {
    auto r = org.run_index.find(s.paired_run);
    if (r != org.run_index.end() && !RunExists(org.runs[r->second], now)) return nullptr;
  }
  return &s;
}

BtModel* FindModel(BtOrg& org, const std::string& id, Time now) {
  auto it = org.model_index.find(id);
  if (it == org.model_index.end()) return nullptr;
  BtModel& m = org.models[it->second];
  if (m.created > now || (m.deleted_at && *m.deleted_at <= now)) return nullptr;
  return &m;
}

BtDeployment* FindDeployment(BtOrg& org, BtModel& m, const std::string& which, Time now) {
  for (const std::string& id : m.deployments) {
    auto it = org.deployment_index.find(id);
    if (it == org.deployment_index.end()) continue;
    BtDeployment& d = org.deployments[it->second];
    if (!DeploymentExists(d, now)) continue;
    if (d.id == which || (which == "production" && d.is_production) ||
        (which == "development" && d.is_development)) {
      return &d;
    }
  }
  return nullptr;
}

std::string CheckpointPath(const BtCheckpoint& c, const std::string& run) {
  return "bt://loops:" + run + (c.target == "sampler" ? "/sampler_weights/" : "/weights/") + c.name;
}

bj::value CheckpointJson(ApiContext& ctx, const BtRun& r, const BtCheckpoint& c) {
  return bj::object{{"id", c.id},
                    {"checkpoint_id", c.name},
                    {"run_id", r.id},
                    {"target", c.target},
                    {"checkpoint_type", "lora"},
                    {"base_model", r.base_model},
                    {"lora_adapter_config", bj::object{{"r", 64}}},
                    {"size_bytes", c.size_bytes},
                    {"created_at", T(c.at, false)},
                    {"sync_status", CheckpointSyncing(c, ctx.world.switches, ctx.now) ? "SYNCING" : "COMPLETE"}};
}

bool CheckpointInUse(const BtOrg& org, const BtCheckpoint& c, Time now) {
  if (c.deployed_to.empty()) return false;
  auto it = org.deployment_index.find(c.deployed_to);
  return it != org.deployment_index.end() && DeploymentExists(org.deployments[it->second], now);
}

bj::value MoneyJson(double usd, bool as_string, const Switches& sw) {
  const bool str = sw.money_as == "string" || (sw.money_as == "mixed" && as_string);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", usd);
  return str ? bj::value(buf) : bj::value(std::round(usd * 100) / 100);
}

// Per-minute metering (billing docs): every minute a replica is up is charged.
HttpResponse UsageSummary(ApiContext& ctx, BtOrg& org) {
  auto s = ctx.req.Query("start_date"), e = ctx.req.Query("end_date");
  if (!s || !e) return Error(400, "start_date and end_date are required");
  auto start = ParseTime(*s), end = ParseTime(*e);
  if (!start.ok() || !end.ok()) return Error(400, "start_date and end_date must be ISO 8601 UTC");
  if (*end <= *start || *end - *start > std::chrono::hours(24 * 31)) {
    return Error(400, "the range must be positive and at most 31 days");
  }
  if (*start < ParseTime("2026-01-01T00:00:00Z").value()) return Error(400, "usage before 2026-01-01 is not available");
  const Switches& sw = ctx.world.switches;
  const Time until = std::min(*end, ctx.now - sw.usage_lag);
  struct Row {
    std::string id, kind, name, model, instance;
    bool deleted;
    std::map<std::string, std::pair<int64_t, double>> daily;  // date -> minutes, cost
  };
  std::vector<Row> dedicated, training;
  auto integrate = [&](Row& row, const InstanceType* it, const std::function<int(Time)>& replicas, Time from) {
    for (Time t = std::chrono::floor<std::chrono::minutes>(std::max(*start, from)); t < until; t += std::chrono::minutes(1)) {
      const int n = replicas(t);
      if (n <= 0) continue;
      auto& [mins, cost] = row.daily[FormatTime(FloorToDay(t)).substr(0, 10)];
      mins += n;
      cost += n * (it ? it->price_per_minute : 0);
    }
  };
  for (const BtRun& r : org.runs) {
    if (!r.dedicated || r.created >= until) continue;
    auto end_at = RunEnd(r, sw);
    if (end_at && *end_at <= *start) continue;
    Row row{r.deployment_id, "TRAINING_JOB", r.name, r.base_model, r.instance_type, r.deleted_at.has_value(), {}};
    const InstanceType* it = ctx.world.FindInstanceType(r.instance_type);
    integrate(row, it, [&](Time t) { return LoopsDeploymentBills(LoopsDeploymentStatus(r, sw, t)) ? r.nodes : 0; },
              r.created);
    if (!row.daily.empty()) training.push_back(std::move(row));
  }
  for (const BtSampler& smp : org.samplers) {
    if (smp.created >= until) continue;
    Row row{smp.deployment_id, "MODEL_DEPLOYMENT", "sampler-" + smp.id, smp.base_model, smp.instance_type, false, {}};
    const InstanceType* it = ctx.world.FindInstanceType(smp.instance_type);
    integrate(row, it, [&](Time t) { return SamplerBills(SamplerStatus(smp, org, sw, t)) ? smp.nodes : 0; },
              smp.created);
    if (!row.daily.empty()) dedicated.push_back(std::move(row));
  }
  for (const BtDeployment& d : org.deployments) {
    if (d.created >= until) continue;
    Row row{d.id, "MODEL_DEPLOYMENT", d.name, d.model_id, d.instance_type, d.deleted_at.has_value(), {}};
    const InstanceType* it = ctx.world.FindInstanceType(d.instance_type);
    integrate(row, it, [&](Time t) { return DeploymentReplicas(d, sw, t); }, d.created);
    if (!row.daily.empty()) dedicated.push_back(std::move(row));
  }
  auto section = [&](const std::vector<Row>& rows) -> bj::value {
    if (rows.empty()) return nullptr;
    double total = 0;
    int64_t minutes = 0;
    bj::array breakdown;
    for (const Row& r : rows) {
      double sub = 0;
      int64_t mins = 0;
      bj::array daily;
      for (const auto& [date, mc] : r.daily) {
        sub += mc.second;
        mins += mc.first;
        daily.push_back(bj::object{{"date", date}, {"subtotal", MoneyJson(mc.second, false, sw)},
                                   {"compute_cost", MoneyJson(mc.second, false, sw)}, {"surcharge_cost", 0},
                                   {"minutes", mc.first}, {"inference_requests", 0}});
      }
      total += sub;
      minutes += mins;
      breakdown.push_back(bj::object{
          {"billable_resource",
           bj::object{{"id", r.id}, {"kind", r.kind}, {"name", r.name}, {"model_name", r.model},
                      {"is_deleted", r.deleted}, {"instance_type", r.instance}, {"environment_name", nullptr},
                      {"chain_metadata", nullptr}, {"team_id", "t1"}, {"team_name", "ml"}}},
          {"subtotal", MoneyJson(sub, false, sw)},
          {"compute_cost", MoneyJson(sub, false, sw)},
          {"surcharge_cost", 0},
          {"minutes", mins},
          {"inference_requests", 0},
          {"daily", daily}});
    }
    return bj::object{{"subtotal", MoneyJson(total, true, sw)}, {"credits_used", MoneyJson(0, true, sw)},
                      {"total", MoneyJson(total, true, sw)}, {"minutes", minutes}, {"breakdown", breakdown}};
  };
  return Ok(bj::object{{"dedicated_usage", section(dedicated)}, {"training_usage", section(training)},
                       {"model_apis_usage", nullptr}});
}

int LiveSlotHolders(const BtOrg& org, const Switches& sw, Time now) {
  int n = 0;
  for (const BtRun& r : org.runs) {
    if (RunExists(r, now) && RunStatus(r, sw, now) == "ACTIVE") ++n;
  }
  for (const BtSampler& s : org.samplers) {
    if (s.paired_run.empty() && s.created <= now && SamplerBills(SamplerStatus(s, org, sw, now))) ++n;
  }
  return n;
}

HttpResponse CreateRun(ApiContext& ctx, BtOrg& org, const Caller& caller, bool trainer) {
  auto body = json::Parse(ctx.req.body.empty() ? "{}" : ctx.req.body, "create request");
  if (!body.ok() || !body->is_object()) return Error(400, "request body must be a JSON object");
  const auto& o = body->get_object();
  const Switches& sw = ctx.world.switches;
  std::optional<int64_t> delay = json::Int(o, "scale_down_delay_seconds");
  if (delay && (*delay < 1 || *delay > 3600)) return Error(400, "scale_down_delay_seconds must be between 1 and 3600");
  const std::string scope = json::Str(o, "scope").value_or(trainer ? "deployment" : "");
  if (ctx.capacity_full) {
    return net::JsonResponse(429, Json(bj::object{{"error", "No capacity available for the requested GPUs; try again later"},
                                                  {"details", bj::object{{"limit", "capacity"}}}}));
  }
  if (LiveSlotHolders(org, sw, ctx.now) >= sw.baseten_org_cap) {
    return net::JsonResponse(429, Json(bj::object{{"error", "Organization limit of concurrent trainers and samplers reached"},
                                                  {"details", bj::object{{"limit", "org_cap"}}}}));
  }
  BtRun r;
  r.id = ctx.world.NewId("r", 7);
  r.session_id = ctx.world.NewId("s", 6);
  r.name = json::Str(o, "name").value_or(r.id);
  r.owner = caller.key->owner;
  r.base_model = json::Str(o, "base_model").value_or("Qwen/Qwen3-8B");
  r.created = ctx.now;
  r.dedicated = scope == "deployment" || trainer;
  if (r.dedicated) {
    r.deployment_id = ctx.world.NewId("ld", 5);
    r.instance_type = "H100x8";
    r.nodes = static_cast<int>(json::Int(o, "replicas").value_or(1));
    r.availability = json::Str(o, "availability_model").value_or("dedicated");
  }
  if (delay) r.scale_down_delay = std::chrono::seconds(*delay);
  org.runs.push_back(r);
  org.Reindex();
  ctx.mutated = true;
  bj::object out{{"id", r.id},
                 {"session_id", r.session_id},
                 {"deployment_id", r.dedicated ? bj::value(r.deployment_id) : bj::value(nullptr)},
                 {"name", r.name},
                 {"base_model", r.base_model},
                 {"base_url", r.dedicated ? BaseUrl("trainer", r.deployment_id) + "/trainer"
                                          : "https://serverless.api.baseten.co/loops/" + r.id},
                 {"created_at", T(r.created, true)}};
  // S6: create responses omit status and user unless the switch asks for them.
  if (sw.full_create_response) {
    out["status"] = bj::object{{"name", "ACTIVE"}};
    out["user"] = Email(r.owner);
    out["sampler"] = nullptr;
  }
  return Ok(out);
}

HttpResponse RateLimited(ApiContext& ctx, int64_t wait) {
  HttpResponse r = net::JsonResponse(
      429, Json(bj::object{{"error", "Rate limit exceeded. Please try again later."}, {"retry_after", wait}}));
  if (ctx.world.switches.retry_after_header) r.headers.emplace_back("Retry-After", std::to_string(wait));
  return r;
}

}  // namespace

HttpResponse HandleBaseten(ApiContext& ctx) {
  Caller caller;
  if (auto denied = Authenticate(ctx, caller)) return *denied;
  BtOrg& org = *caller.org;
  const Switches& sw = ctx.world.switches;
  const std::string& method = ctx.req.method;
  const std::vector<std::string> seg = Segments(ctx.req.Path());
  const bool org_scope = ctx.req.Query("scope").value_or("") == "org";
  if (org_scope && !caller.key->org_visible) {
    return Error(403, "This API key cannot read organization-wide resources (scope=org)");
  }
  // S17: 100 requests/s per key and endpoint; 20/min on model deployment (de)activation.
  const bool activation = seg.size() == 6 && seg[1] == "models" && (seg[5] == "activate" || seg[5] == "deactivate");
  {
    std::string cls = activation ? "activation" : (seg.size() > 2 ? seg[1] + "/" + seg[2] : ctx.req.Path());
    const int64_t wait = activation ? ctx.rates.Hit(caller.key->key + "|" + cls, ctx.now, 20, std::chrono::minutes(1))
                                    : ctx.rates.Hit(caller.key->key + "|" + cls, ctx.now, 100, std::chrono::seconds(1));
    if (wait > 0) return RateLimited(ctx, wait);
  }
  auto path_is = [&](std::initializer_list<const char*> parts) {
    if (seg.size() != parts.size()) return false;
    size_t i = 0;
    for (const char* p : parts) {
      if (std::string_view(p) != "*" && seg[i] != p) return false;
      ++i;
    }
    return true;
  };
  const Time now = ctx.now;

  if (method == "GET" && path_is({"v1", "teams"})) {
    return Ok(bj::object{{"teams", bj::array{bj::object{{"id", "t1"}, {"name", "ml"}, {"default", true},
                                                        {"created_at", "2026-01-05T10:00:00Z"}}}}});
  }
  if (method == "GET" && path_is({"v1", "loops", "runs"})) {
    const auto run_id = ctx.req.Query("run_id");
    const auto base_model = ctx.req.Query("base_model");
    bj::array runs;
    for (const BtRun& src : org.runs) {
      if (!RunExists(src, now) || !Visible(caller, src.owner, org_scope)) continue;
      if (run_id && src.id != *run_id) continue;
      if (base_model && src.base_model != *base_model) continue;
      if (ctx.list_cutoff < now) {
        BtRun r = src;
        MaskEvents(r, ctx.list_cutoff);
        runs.push_back(RunJson(ctx, org, r));
      } else {
        runs.push_back(RunJson(ctx, org, src));
      }
    }
    return Ok(bj::object{{"runs", std::move(runs)}});
  }
  if (method == "GET" && path_is({"v1", "loops", "runs", "*"})) {
    BtRun* r = FindRun(org, seg[3], now);
    if (!r) return Error(404, "Run " + seg[3] + " not found");
    return Ok(bj::object{{"run", RunJson(ctx, org, *r)}});
  }
  if (method == "POST" && path_is({"v1", "loops", "runs", "*", "deactivate"})) {
    BtRun* r = FindRun(org, seg[3], now);
    if (!r) return Error(404, "Run " + seg[3] + " not found");
    ctx.mutated = true;
    if (RunStatus(*r, sw, now) == "INACTIVE") {
      if (sw.repeat_deactivate_status == 404) return Error(404, "Run " + seg[3] + " is not active");
    } else {
      r->deactivated_at = now;
    }
    return Ok(bj::object{{"id", r->id}, {"base_model", r->base_model}, {"user", Email(r->owner)}});
  }
  if (method == "DELETE" && path_is({"v1", "loops", "runs", "*"})) {
    BtRun* r = FindRun(org, seg[3], now);
    if (!r) return Error(404, "Run " + seg[3] + " not found");
    ctx.mutated = true;
    r->deleted_at = now;
    bj::array kept;
    for (BtCheckpoint& c : r->checkpoints) {
      if (c.at > now || (c.deleted_at && *c.deleted_at <= now)) continue;
      if (CheckpointInUse(org, c, now)) {
        if (sw.kept_checkpoints_as_ids) {
          kept.push_back(bj::value(c.id));
        } else {
          kept.push_back(bj::object{{"id", c.id}, {"checkpoint_id", c.name}, {"target", c.target},
                                    {"path", CheckpointPath(c, r->id)}});
        }
      } else {
        c.deleted_at = now;
      }
    }
    return Ok(bj::object{{"id", r->id}, {"kept_checkpoints", kept}});
  }
  if (method == "POST" && (path_is({"v1", "loops", "trainers"}) || path_is({"v1", "loops", "runs"}))) {
    return CreateRun(ctx, org, caller, seg[2] == "trainers");
  }
  if (method == "GET" && path_is({"v1", "loops", "samplers"})) {
    std::vector<const BtSampler*> list;
    for (const BtSampler& s : org.samplers) {
      if (FindSampler(org, s.id, now) && Visible(caller, s.owner, org_scope)) list.push_back(&s);
    }
    std::sort(list.begin(), list.end(), [](const BtSampler* a, const BtSampler* b) { return a->created > b->created; });
    bj::array out;
    for (const BtSampler* s : list) {
      if (ctx.list_cutoff < now) {
        BtSampler copy = *s;
        MaskEvents(copy, ctx.list_cutoff);
        out.push_back(SamplerJson(ctx, org, copy));
      } else {
        out.push_back(SamplerJson(ctx, org, *s));
      }
    }
    return Ok(bj::object{{"samplers", std::move(out)}});
  }
  if (method == "GET" && path_is({"v1", "loops", "samplers", "*"})) {
    BtSampler* s = FindSampler(org, seg[3], now);
    if (!s) return Error(404, "Sampler " + seg[3] + " not found");
    return Ok(bj::object{{"sampler", SamplerJson(ctx, org, *s)}});
  }
  if (method == "POST" && path_is({"v1", "loops", "samplers", "*", "deactivate"})) {
    BtSampler* s = FindSampler(org, seg[3], now);
    if (!s) return Error(404, "Sampler " + seg[3] + " not found");
    if (!s->paired_run.empty()) {
      bj::object body{{"error", "Sampler " + s->id + " is paired to run " + s->paired_run + "; deactivate the run"}};
      if (sw.conflict_body_run_id) body["run_id"] = s->paired_run;
      return net::JsonResponse(409, Json(body));
    }
    ctx.mutated = true;
    if (!s->deactivated_at) s->deactivated_at = now;
    return Ok(bj::object{{"id", s->id}, {"success", true}});
  }
  if (method == "GET" && path_is({"v1", "loops", "deployments"})) {
    bj::array out;
    for (const BtRun& src : org.runs) {
      if (!src.dedicated || !RunExists(src, now) || !Visible(caller, src.owner, org_scope)) continue;
      BtRun r = src;
      if (ctx.list_cutoff < now) MaskEvents(r, ctx.list_cutoff);
      if (sw.deployments_hide_stopped && LoopsDeploymentStatus(r, sw, now) == "STOPPED") continue;
      out.push_back(LoopsDeploymentJson(ctx, org, r));
    }
    return Ok(bj::object{{"deployments", std::move(out)}});
  }
  if (method == "GET" && path_is({"v1", "loops", "deployments", "*"})) {
    BtRun* r = FindRunByLoopsDeployment(org, seg[3], now);
    if (!r) return Error(404, "Deployment " + seg[3] + " not found");
    return Ok(bj::object{{"deployment", LoopsDeploymentJson(ctx, org, *r)}});
  }
  if (method == "POST" && path_is({"v1", "loops", "deployments", "*", "metrics"})) {
    BtRun* r = FindRunByLoopsDeployment(org, seg[3], now);
    if (!r) return Error(404, "Deployment " + seg[3] + " not found");
    Window w;
    if (auto bad = ReadWindow(ctx, w)) return *bad;
    return Ok(bj::object{{"deployment_id", r->deployment_id}, {"metrics", TrainerMetrics(ctx, *r, w)}});
  }
  if (method == "POST" && path_is({"v1", "loops", "deployments", "*", "deactivate"})) {
    BtRun* r = FindRunByLoopsDeployment(org, seg[3], now);
    if (!r) return Error(404, "Deployment " + seg[3] + " not found");
    ctx.mutated = true;
    if (LoopsDeploymentBills(LoopsDeploymentStatus(*r, sw, now))) {
      r->deployment_deactivated_at = now;
    } else if (sw.repeat_deactivate_status == 404) {
      return Error(404, "Deployment " + seg[3] + " is not active");
    }
    return Ok(bj::object{{"id", r->deployment_id}, {"base_model", r->base_model}, {"user", Email(r->owner)}});
  }
  if (method == "GET" && path_is({"v1", "loops", "checkpoints"})) {
    const auto run_id = ctx.req.Query("run_id");
    const auto base_model = ctx.req.Query("base_model");
    const auto path = ctx.req.Query("checkpoint_path");
    if (static_cast<int>(run_id.has_value()) + static_cast<int>(base_model.has_value()) +
            static_cast<int>(path.has_value()) != 1) {
      return Error(400, "Specify exactly one of run_id, base_model, checkpoint_path");
    }
    std::vector<std::pair<const BtRun*, const BtCheckpoint*>> found;
    for (const BtRun& r : org.runs) {
      if (r.created > now) continue;
      if (run_id && r.id != *run_id) continue;
      if (base_model && (r.base_model != *base_model || r.owner != caller.key->owner)) continue;
      for (const BtCheckpoint& c : r.checkpoints) {
        if (c.at > now || (c.deleted_at && *c.deleted_at <= now)) continue;
        if (path && CheckpointPath(c, r.id) != *path) continue;
        found.push_back({&r, &c});
      }
    }
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.second->at > b.second->at; });
    bj::array out;
    for (const auto& [r, c] : found) out.push_back(CheckpointJson(ctx, *r, *c));
    return Ok(bj::object{{"checkpoints", std::move(out)}});
  }
  if (method == "DELETE" && path_is({"v1", "loops", "checkpoints", "*"})) {
    for (BtRun& r : org.runs) {
      for (BtCheckpoint& c : r.checkpoints) {
        if (c.id != seg[3] || c.at > now) continue;
        bj::object tomb{{"id", c.id}, {"run_id", r.id}, {"checkpoint_id", c.name}, {"target", c.target},
                        {"path", CheckpointPath(c, r.id)}};
        if (c.deleted_at && *c.deleted_at <= now) return Ok(tomb);  // S14: the same tombstone on repeat
        if (CheckpointInUse(org, c, now)) {
          return Error(sw.in_use_status, "Checkpoint " + c.id + " is in use: deployed as " + c.deployed_to);
        }
        ctx.mutated = true;
        c.deleted_at = now;
        return Ok(tomb);
      }
    }
    return Error(404, "Checkpoint " + seg[3] + " not found");
  }
  if (method == "POST" && path_is({"v1", "loops", "checkpoints", "deploy"})) {
    auto body = json::Parse(ctx.req.body, "deploy request");
    if (!body.ok() || !body->is_object()) return Error(400, "request body must be a JSON object");
    const auto* ids = json::Arr(body->get_object(), "checkpoint_ids");
    if (!ids || ids->empty()) return Error(400, "checkpoint_ids is required");
    BtCheckpoint* ck = nullptr;
    for (BtRun& r : org.runs) {
      for (BtCheckpoint& c : r.checkpoints) {
        if (ids->at(0).is_string() && c.id == ids->at(0).get_string() && c.at <= now && !c.deleted_at) ck = &c;
      }
    }
    if (!ck) return Error(404, "Checkpoint not found");
    if (ck->target != "sampler") return Error(400, "Only sampler checkpoints can be deployed");
    // S15: not idempotent; every call makes a new model and deployment.
    ctx.mutated = true;
    BtModel m;
    m.id = ctx.world.NewId("m", 7);
    m.name = json::Str(body->get_object(), "model_name").value_or("from-" + ck->name);
    m.created = now;
    BtDeployment d;
    d.id = ctx.world.NewId("d", 6);
    d.model_id = m.id;
    d.name = "deployment-1";
    d.created = now;
    d.instance_type = json::Str(body->get_object(), "instance_type_id").value_or("H100x26x234");
    Autoscaling as;
    as.min_replica = 1;
    d.settings.push_back({now, as});
    m.deployments.push_back(d.id);
    ck->deployed_to = d.id;
    org.models.push_back(m);
    org.deployments.push_back(d);
    org.Reindex();
    return Ok(bj::object{{"model_id", m.id}, {"deployment_id", d.id}});
  }
  if (method == "GET" && path_is({"v1", "loops", "capabilities"})) {
    bj::array models;
    for (const char* m : {"Qwen/Qwen3.6-35B-A3B", "zai-org/GLM-5.3", "zai-org/GLM-5.3-Flash"}) {
      models.push_back(bj::object{{"model_name", m}, {"max_context_length", 262144},
                                  {"supports_vision_language", true}, {"serverless", true}});
    }
    models.push_back(bj::object{{"model_name", "Qwen/Qwen3-8B"}, {"max_context_length", 32768},
                                {"supports_vision_language", false}, {"serverless", false}});
    return Ok(bj::object{{"supported_models", models}});
  }
  if (method == "GET" && path_is({"v1", "models"})) {
    const auto name = ctx.req.Query("name");
    bj::array out;
    for (BtModel& m : org.models) {
      if (!FindModel(org, m.id, now)) continue;
      if (name && m.name != *name) continue;
      int count = 0;
      bj::value prod = nullptr, dev = nullptr;
      std::string instance;
      for (const std::string& id : m.deployments) {
        const BtDeployment& d = org.deployments[org.deployment_index[id]];
        if (!DeploymentExists(d, now)) continue;
        ++count;
        instance = d.instance_type;
        if (d.is_production) prod = bj::value(d.id);
        if (d.is_development) dev = bj::value(d.id);
      }
      out.push_back(bj::object{{"id", m.id}, {"created_at", T(m.created, false)}, {"name", m.name},
                               {"deployments_count", count}, {"production_deployment_id", prod},
                               {"development_deployment_id", dev}, {"instance_type_name", instance},
                               {"team_name", m.team}});
    }
    return Ok(bj::object{{"models", std::move(out)}});
  }
  if (seg.size() == 6 && seg[1] == "models" && seg[3] == "deployments" && seg[5] == "metrics" && method == "GET") {
    // The sampler's metrics route: its model_id and deployment_id (baseten.md R18).
    for (BtSampler& smp : org.samplers) {
      if (smp.model_id != seg[2] || smp.deployment_id != seg[4] || !FindSampler(org, smp.id, now)) continue;
      MetricsSource src{&smp.traffic, smp.created, [&](Time t) {
                          return SamplerBills(SamplerStatus(smp, org, sw, t)) ? smp.nodes : 0;
                        }};
      return DeploymentMetricsV1(ctx.req, now, src);
    }
  }
  if (seg.size() >= 3 && seg[0] == "v1" && seg[1] == "models") {
    BtModel* m = FindModel(org, seg[2], now);
    if (!m) return Error(404, "Model " + seg[2] + " not found");
    if (method == "DELETE" && seg.size() == 3) {
      ctx.mutated = true;
      m->deleted_at = now;
      for (const std::string& id : m->deployments) {
        BtDeployment& d = org.deployments[org.deployment_index[id]];
        if (!d.deleted_at) d.deleted_at = now;
      }
      return Ok(bj::object{{"id", m->id}, {"deleted", true}});
    }
    if (method == "GET" && seg.size() == 4 && seg[3] == "deployments") {
      bj::array out;
      for (const std::string& id : m->deployments) {
        BtDeployment& src = org.deployments[org.deployment_index[id]];
        if (!DeploymentExists(src, now)) continue;
        if (ctx.list_cutoff < now) {
          BtDeployment d = src;
          MaskEvents(d, ctx.list_cutoff);
          out.push_back(DeploymentJson(ctx, d));
        } else {
          out.push_back(DeploymentJson(ctx, src));
        }
      }
      return Ok(bj::object{{"deployments", std::move(out)}});
    }
    if (seg.size() >= 5 && seg[3] == "deployments") {
      BtDeployment* d = FindDeployment(org, *m, seg[4], now);
      if (!d) return Error(404, "Deployment " + seg[4] + " not found");
      if (method == "GET" && seg.size() == 5) return Ok(DeploymentJson(ctx, *d));
      if (method == "DELETE" && seg.size() == 5) {
        if (d->is_production) {
          return Error(400, "Cannot delete the production deployment; promote another deployment or delete the model");
        }
        ctx.mutated = true;
        d->deleted_at = now;
        return Ok(bj::object{{"id", d->id}, {"deleted", true}, {"model_id", m->id}});
      }
      if (method == "GET" && seg.size() == 6 && seg[5] == "metrics") {
        MetricsSource src{&d->traffic, d->created, [&](Time t) { return DeploymentReplicas(*d, sw, t); }};
        return DeploymentMetricsV1(ctx.req, now, src);
      }
      if (method == "POST" && seg.size() == 6 && (seg[5] == "deactivate" || seg[5] == "activate")) {
        const bool activate = seg[5] == "activate";
        const bool active_now = DeploymentStatus(*d, sw, now) != "INACTIVE";
        ctx.mutated = true;
        if (active_now != activate) d->activations.push_back({now, activate});
        return Ok(bj::object{{"success", true}});
      }
      if (method == "PATCH" && seg.size() == 6 && seg[5] == "autoscaling_settings") {
        auto body = json::Parse(ctx.req.body, "autoscaling settings");
        if (!body.ok() || !body->is_object()) return Error(400, "request body must be a JSON object");
        const auto& o = body->get_object();
        Autoscaling next = SettingsAt(*d, now);
        const Autoscaling before = next;
        if (auto v = json::Int(o, "min_replica")) next.min_replica = static_cast<int>(*v);
        if (auto v = json::Int(o, "max_replica")) next.max_replica = static_cast<int>(*v);
        if (auto v = json::Int(o, "autoscaling_window")) next.autoscaling_window = static_cast<int>(*v);
        if (auto v = json::Int(o, "scale_down_delay")) next.scale_down_delay = static_cast<int>(*v);
        if (auto v = json::Int(o, "concurrency_target")) next.concurrency_target = static_cast<int>(*v);
        if (next.min_replica < 0 || next.max_replica < next.min_replica) {
          return Error(400, "min_replica must be between 0 and max_replica");
        }
        ctx.mutated = true;
        if (next.min_replica == before.min_replica && next.max_replica == before.max_replica &&
            next.autoscaling_window == before.autoscaling_window && next.scale_down_delay == before.scale_down_delay &&
            next.concurrency_target == before.concurrency_target) {
          return Ok(bj::object{{"status", "UNCHANGED"}, {"message", "Autoscaling settings unchanged"}});
        }
        d->settings.push_back({now, next});
        return Ok(bj::object{{"status", "ACCEPTED"}, {"message", "Autoscaling settings update accepted"}});
      }
    }
    return Error(404, "Not found");
  }
  if (method == "GET" && path_is({"v1", "instance_type_prices"})) {
    bj::array out;
    for (const InstanceType& it : ctx.world.instance_types) {
      out.push_back(bj::object{{"instance_type", InstanceTypeJson(it)},
                               {"price", std::round(it.price_per_minute * 1e5) / 1e5}});
    }
    return Ok(bj::object{{"instance_types", std::move(out)}});
  }
  if (method == "GET" && path_is({"v1", "instance_types"})) {
    bj::array out;
    for (const InstanceType& it : ctx.world.instance_types) out.push_back(InstanceTypeJson(it));
    return Ok(bj::object{{"instance_types", std::move(out)}});
  }
  if (method == "GET" && path_is({"v1", "billing", "usage_summary"})) return UsageSummary(ctx, org);
  if (method == "GET" && path_is({"v1", "training", "capacity"})) {
    return Ok(bj::object{{"gpu_capacities", bj::array{bj::object{{"gpu_type", "H100"}, {"baseline", 8}, {"limit", 16},
                                                                 {"usage_count", 0}, {"dedicated_usage_count", 0},
                                                                 {"spot_usage_count", 0}}}},
                         {"team_gpu_capacities", bj::array{}}});
  }
  return Error(404, "No route for " + method + " " + ctx.req.Path());
}

}  // namespace loopwarden::sim
