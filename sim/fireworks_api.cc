// The Fireworks control plane and serverless gateway, as shared/providers/fireworks.md
// specifies them.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <regex>

#include "core/json.h"
#include "core/strings.h"
#include "sim/api.h"

namespace loopwarden::sim {
namespace {

using net::HttpResponse;

int HttpForGrpc(int code) {
  switch (code) {
    case 3: case 9: case 11: return 400;
    case 16: return 401;
    case 7: return 403;
    case 5: return 404;
    case 6: case 10: return 409;
    case 8: return 429;
    case 12: return 501;
    case 14: return 503;
    case 4: return 504;
    default: return 500;
  }
}

// Error shape 1: google.rpc.Status on /v1.
HttpResponse Rpc(int code, const std::string& msg, const std::string& reason = "") {
  bj::array details;
  if (!reason.empty()) {
    details.push_back(bj::object{{"@type", "type.googleapis.com/google.rpc.ErrorInfo"},
                                 {"reason", reason},
                                 {"domain", "fireworks.ai"},
                                 {"metadata", bj::object{{"version", "1"}}}});
  }
  return net::JsonResponse(HttpForGrpc(code), Json(bj::object{{"code", code}, {"message", msg}, {"details", details}}));
}

// Error shape 2: the serverless gateway.
HttpResponse Gateway(int status, const std::string& code, const std::string& msg, World& w) {
  return net::JsonResponse(status, Json(bj::object{{"error", bj::object{{"message", msg}, {"param", nullptr},
                                                                        {"code", code}, {"type", "error"}}},
                                                   {"request_id", w.NewId("", 32)}}));
}

HttpResponse Ok(const bj::value& v) { return net::JsonResponse(200, Json(v)); }

// S3: whole seconds and microseconds mix within one response.
std::string Ts(Time t) { return FormatTimeSeconds(t); }
std::string TsMicro(Time t) {
  std::string s = FormatTime(t);
  if (s.find('.') == std::string::npos) s.insert(s.size() - 1, ".000000");
  return s;
}

bj::object StatusOk() { return bj::object{{"code", "OK"}, {"message", ""}}; }

struct Caller {
  FwAccount* account = nullptr;
  const FwKey* key = nullptr;
};

std::optional<HttpResponse> Authenticate(ApiContext& ctx, Caller& out, bool gateway) {
  std::string key;
  const std::string auth(ctx.req.Header("authorization"));
  if (auth.rfind("Bearer ", 0) == 0) key = auth.substr(7);
  if (key.empty()) key = std::string(ctx.req.Header("x-api-key"));
  auto deny = [&](const std::string& msg) {
    return gateway ? Gateway(401, "UNAUTHENTICATED", msg, ctx.world) : Rpc(16, msg);
  };
  if (key.empty()) return deny("missing API key (Authorization: Bearer <key> or X-Api-Key: <key>)");
  for (FwAccount& a : ctx.world.accounts) {
    for (const FwKey& k : a.keys) {
      if (k.key == key) {
        out.account = &a;
        out.key = &k;
        return std::nullopt;
      }
    }
  }
  return deny("invalid API key");
}

std::string Name(const FwAccount& a, const std::string& coll, const std::string& id) {
  return "accounts/" + a.id + "/" + coll + "/" + id;
}

// ---- pagination (S5) ----

struct Page {
  size_t offset = 0;
  size_t size = 50;
};

uint64_t Fnv(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return h;
}

std::string QueryFingerprint(const net::HttpRequest& req) {
  std::string u = req.url;
  size_t q = u.find('?');
  if (q == std::string::npos) return "";
  std::vector<std::string> parts = Split(u.substr(q + 1), '&');
  std::erase_if(parts, [](const std::string& p) { return p.rfind("pageToken=", 0) == 0; });
  std::sort(parts.begin(), parts.end());
  return Join(parts, "&");
}

std::optional<HttpResponse> ReadPage(ApiContext& ctx, Page& p) {
  if (auto s = ctx.req.Query("pageSize")) {
    long long n = std::atoll(s->c_str());
    p.size = n <= 0 ? 50 : static_cast<size_t>(std::min<long long>(n, 200));
  }
  const auto token = ctx.req.Query("pageToken");
  if (!token || token->empty()) return std::nullopt;
  if (ctx.world.switches.page_token_integer) {
    p.offset = static_cast<size_t>(std::atoll(token->c_str()));
    return std::nullopt;
  }
  const auto dot = token->find('.');
  if (token->size() < 3 || (*token)[0] != 'p' || dot == std::string::npos) {
    return Rpc(3, "invalid page token");
  }
  const uint64_t fp = std::strtoull(token->substr(dot + 1).c_str(), nullptr, 16);
  if (fp != Fnv(QueryFingerprint(ctx.req))) {
    return Rpc(3, "page token does not match the request parameters");
  }
  p.offset = static_cast<size_t>(std::strtoull(token->substr(1, dot - 1).c_str(), nullptr, 16));
  return std::nullopt;
}

std::string NextToken(ApiContext& ctx, size_t offset) {
  if (ctx.world.switches.page_token_integer) return std::to_string(offset);
  char buf[64];
  std::snprintf(buf, sizeof buf, "p%zx.%llx", offset, static_cast<unsigned long long>(Fnv(QueryFingerprint(ctx.req))));
  return buf;
}

template <class T>
HttpResponse List(ApiContext& ctx, const std::string& key, const std::vector<const T*>& items,
                  const std::function<bj::value(const T&)>& render) {
  Page p;
  if (auto bad = ReadPage(ctx, p)) return *bad;
  bj::array out;
  const size_t end = std::min(items.size(), p.offset + p.size);
  for (size_t i = p.offset; i < end; ++i) out.push_back(render(*items[i]));
  bj::object body{{key, std::move(out)}};
  body["nextPageToken"] = end < items.size() ? NextToken(ctx, end) : "";
  body["totalSize"] = static_cast<int64_t>(items.size());
  return Ok(body);
}

// ---- rendering ----

bj::value SessionJson(ApiContext& ctx, const FwAccount& a, const FwSession& s) {
  const Switches& sw = ctx.world.switches;
  bj::object o{{"name", Name(a, "trainingSessions", s.id)},
               {"displayName", s.display_name},
               {"baseModel", s.base_model},
               {"createTime", Ts(s.created)},
               {"updateTime", TsMicro(SessionUpdateTime(s, sw, ctx.now))},
               {"createdBy", s.owner},
               {"state", SessionState(s, sw, ctx.now)},
               {"status", StatusOk()}};
  if (!s.leaked) o["referenceState"] = "ADAPTER";
  return o;
}

bj::value CheckpointJson(const std::string& parent, const FwCheckpoint& c, bool rlor) {
  bj::object o{{"name", parent + "/checkpoints/" + c.name},
               {"checkpointType", c.promotable ? "CHECKPOINT_TYPE_INFERENCE_LORA" : "CHECKPOINT_TYPE_TRAINING_LORA"},
               {"promotable", c.promotable},
               {"createTime", Ts(c.at)},
               {"updateTime", Ts(c.at)},
               {"availability", bj::array{bj::object{{"availabilityClass", "SINGLE_REGION"}, {"createTime", Ts(c.at)},
                                                     {"updateTime", Ts(c.at)}}}}};
  if (rlor) {
    o["restoreReference"] = c.name;
  } else {
    o["checkpointName"] = c.name;
  }
  return o;
}

bj::value JobJson(ApiContext& ctx, const FwAccount& a, const FwRlorJob& j) {
  const Switches& sw = ctx.world.switches;
  const std::string state = JobState(j, sw, ctx.now);
  bj::object accel;
  accel[j.accelerator] = std::to_string(JobAcceleratorSecondsPublished(j, sw, ctx.now));
  const Duration timeout = j.inactivity_timeout.value_or(sw.rlor_inactivity_timeout);
  bj::object o{{"name", Name(a, "rlorTrainerJobs", j.id)},
               {"displayName", j.display_name},
               {"createTime", Ts(j.created)},
               {"createdBy", j.owner},
               {"state", state},
               {"status", StatusOk()},
               {"acceleratorSeconds", accel},
               {"trainingConfig", bj::object{{"baseModel", j.base_model}, {"loraRank", 16}, {"learningRate", 1e-05},
                                             {"maxContextLength", 4096}, {"acceleratorType", j.accelerator},
                                             {"acceleratorCount", j.accelerator_count}}},
               {"nodeCount", j.nodes},
               {"trainerReplicaCount", 1},
               {"serviceMode", true},
               {"keepAlive", false},
               {"inactivityTimeout", std::to_string(std::chrono::duration_cast<std::chrono::seconds>(timeout).count()) + "s"},
               {"disableInactivityCleanup", j.disable_inactivity_cleanup},
               {"purpose", "PURPOSE_UNSPECIFIED"},
               {"jobProgress", bj::object{{"currentStep", std::to_string(JobProgressSteps(j, ctx.now))}}}};
  if (!j.hot_load_deployment.empty()) o["hotLoadDeploymentId"] = j.hot_load_deployment;
  if (state == "JOB_STATE_CANCELLED" || state == "JOB_STATE_EXPIRED") o["completedTime"] = TsMicro(ctx.now);
  return o;
}

bj::value DeploymentJson(ApiContext& ctx, const FwAccount& a, const FwDeployment& d) {
  const auto [mn, mx] = FwMinMax(d, ctx.now);
  const int replicas = FwReplicas(d, ctx.now);
  const std::string state = FwDeploymentState(d, ctx.now);
  Time updated = d.created;
  for (const FwPatch& p : d.patches) {
    if (p.at <= ctx.now) updated = p.at;
  }
  bj::object o{{"name", d.listed_name.empty() ? Name(a, "deployments", d.id) : d.listed_name},
               {"displayName", d.display_name},
               {"baseModel", d.base_model},
               {"createTime", Ts(d.created)},
               {"updateTime", TsMicro(updated)},
               {"state", state},
               {"status", StatusOk()},
               {"minReplicaCount", mn},
               {"maxReplicaCount", mx},
               {"desiredReplicaCount", replicas},
               {"replicaCount", replicas},
               {"replicaStats", bj::object{{"pendingSchedulingReplicaCount", 0}, {"downloadingModelReplicaCount", 0},
                                           {"initializingReplicaCount", state == "CREATING" ? replicas : 0},
                                           {"readyReplicaCount", state == "CREATING" ? 0 : replicas},
                                           {"revocableReplicaCount", 0},
                                           {"effectiveReplicaCount", static_cast<double>(replicas)}}},
               {"autoscalingPolicy", bj::object{{"scaleUpWindow", "30s"}, {"scaleDownWindow", "600s"},
                                                {"scaleToZeroWindow",
                                                 std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                                                    d.scale_to_zero_window).count()) + "s"},
                                                {"loadTargets", bj::object{{"default", 0.8}}}}},
               {"acceleratorType", d.accelerator},
               {"acceleratorCount", d.accelerator_count},
               {"enableHotLoad", !d.hot_load_trainer_job.empty()}};
  if (!d.hot_load_trainer_job.empty()) o["hotLoadTrainerJob"] = Name(a, "rlorTrainerJobs", d.hot_load_trainer_job);
  if (d.managed_rollout) o["annotations"] = bj::object{{"fireworks-training-sdk/managed-rollout", "true"}};
  if (state == "DELETED") {
    o["deleteTime"] = Ts(*d.soft_deleted_at);
    o["purgeTime"] = Ts(*d.soft_deleted_at + ctx.world.switches.purge_delay);
  }
  return o;
}

bj::value ModelJson(const FwAccount& a, const FwModel& m) {
  return bj::object{{"name", Name(a, "models", m.id)},
                    {"displayName", m.id},
                    {"kind", m.kind},
                    {"state", "READY"},
                    {"status", StatusOk()},
                    {"peftDetails", bj::object{{"baseModel", m.base_model}, {"r", 8},
                                               {"targetModules", bj::array{"q_proj", "v_proj"}}}},
                    {"deployedModelRefs", bj::array{}},
                    {"createTime", Ts(m.created)},
                    {"updateTime", Ts(m.created)}};
}

// ---- lookups ----

FwSession* FindSession(ApiContext& ctx, FwAccount& a, const std::string& id) {
  auto it = a.session_index.find(id);
  if (it == a.session_index.end()) return nullptr;
  FwSession& s = a.sessions[it->second];
  return SessionVisible(s, ctx.world.switches, ctx.now) ? &s : nullptr;
}

FwRlorJob* FindJob(ApiContext& ctx, FwAccount& a, const std::string& id) {
  auto it = a.job_index.find(id);
  if (it == a.job_index.end()) return nullptr;
  FwRlorJob& j = a.jobs[it->second];
  if (j.created > ctx.now) return nullptr;
  if (j.deleted_at && ctx.now >= *j.deleted_at + ctx.world.switches.tombstone_retention) return nullptr;
  return &j;
}

FwDeployment* FindDeployment(ApiContext& ctx, FwAccount& a, const std::string& id) {
  auto it = a.deployment_index.find(id);
  if (it == a.deployment_index.end()) return nullptr;
  FwDeployment& d = a.deployments[it->second];
  return FwDeploymentVisible(d, ctx.now, true) ? &d : nullptr;
}

int SlotsInUse(ApiContext& ctx, const FwAccount& a, const std::string& base_model) {
  int n = 0;
  for (const FwSession& s : a.sessions) {
    if (!SessionHoldsSlot(s, ctx.world.switches, ctx.now)) continue;
    if (ctx.world.switches.slot_unit == "runs" && s.run_id.empty()) continue;
    if (!base_model.empty() && s.base_model != base_model) continue;
    ++n;
  }
  return n;
}

std::optional<HttpResponse> SlotCheck(ApiContext& ctx, FwAccount& a, const std::string& base_model) {
  const Switches& sw = ctx.world.switches;
  const std::string model_short = base_model.substr(base_model.rfind('/') + 1);
  if (auto it = sw.slot_cap_per_model.find(model_short); it != sw.slot_cap_per_model.end()) {
    const int used = SlotsInUse(ctx, a, base_model);
    if (used >= it->second) {
      return Gateway(429, "RATE_LIMIT_EXCEEDED",
                     "maximum concurrent serverless training runs for base model " + base_model +
                         " exceeded: in use " + std::to_string(used) + ", limit " + std::to_string(it->second),
                     ctx.world);
    }
  }
  const int cap = a.slot_cap.value_or(sw.slot_cap);
  const int used = SlotsInUse(ctx, a, "");
  if (used >= cap) {
    return Gateway(429, "RATE_LIMIT_EXCEEDED",
                   "maximum concurrent serverless training runs exceeded: in use " + std::to_string(used) + ", limit " +
                       std::to_string(cap),
                   ctx.world);
  }
  return std::nullopt;
}

// Promote id rules (fireworks.md §5.5, texts from §4).
std::optional<HttpResponse> CheckOutputModel(const std::string& id) {
  if (id.empty()) return Rpc(3, "output_model_id is required");
  if (id.size() > 63) {
    return Rpc(3, "output_model_id '" + id + "' is too long (" + std::to_string(id.size()) +
                      " chars). Maximum is 63 characters.");
  }
  for (char c : id) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
      return Rpc(3, "output_model_id '" + id + "' contains invalid characters. Must be lowercase a-z, 0-9, or hyphen.");
    }
  }
  if (id.front() == '-' || id.back() == '-') {
    return Rpc(3, "output_model_id '" + id + "' must not start or end with a hyphen.");
  }
  return std::nullopt;
}

std::string BodyField(const bj::object& o, const char* camel, const char* snake) {
  if (auto v = json::Str(o, camel)) return *v;
  if (auto v = json::Str(o, snake)) return *v;
  return "";
}

struct TokenRate {
  double prefill, cached_prefill, sample, train;
};

TokenRate RateFor(const std::string& model) {
  if (model.find("muse-glimmer-30b") != std::string::npos) return {1.96, 0.39, 4.88, 5.86};
  return {1.86, 0.372, 5.595, 4.103};  // qwen3p8-27b
}

double TokenCost(const std::string& model, const std::map<std::string, int64_t>& tokens) {
  const TokenRate r = RateFor(model);
  double usd = 0;
  for (const auto& [m, n] : tokens) {
    const double per_m = m == "prefill" ? r.prefill : m == "cached_prefill" ? r.cached_prefill
                         : m == "sample"  ? r.sample
                                          : r.train;
    usd += per_m * static_cast<double>(n) / 1e6;
  }
  return usd;
}

bj::object MoneyJson(double usd) {
  const int64_t nanos_total = static_cast<int64_t>(std::llround(usd * 1e9));
  return bj::object{{"currencyCode", "USD"}, {"units", std::to_string(nanos_total / 1'000'000'000)},
                    {"nanos", static_cast<int64_t>(nanos_total % 1'000'000'000)}};
}

HttpResponse BillingUsage(ApiContext& ctx, FwAccount& a) {
  auto s = ctx.req.Query("startTime"), e = ctx.req.Query("endTime");
  if (!s || !e) return Rpc(3, "startTime and endTime are required");
  auto start = ParseTime(*s), end = ParseTime(*e);
  if (!start.ok() || !end.ok() || *end <= *start) return Rpc(3, "startTime and endTime must be RFC 3339, start < end");
  const Switches& sw = ctx.world.switches;
  // S22: usage lands `usage_lag` late; a bucket that has not landed is missing, not zero.
  const Time until = std::min(*end, ctx.now - sw.usage_lag);
  bj::array training, dedicated;
  if (until > *start) {
    for (const FwSession& x : a.sessions) {
      if (x.created >= until) continue;
      for (const auto& [meter, n] : SessionTokens(x, *start, until)) {
        if (n == 0) continue;
        training.push_back(bj::object{{"acceleratorSeconds", "0"}, {"acceleratorType", ""}, {"annotations", bj::object{}},
                                      {"baseModel", x.base_model}, {"startTime", Ts(*start)}, {"endTime", Ts(until)},
                                      {"group", meter}, {"jobId", ""}, {"jobType", ""}, {"tokens", std::to_string(n)},
                                      {"trainingSessionId", x.id}, {"usageType", "TRAINING"}});
      }
    }
    for (const FwRlorJob& j : a.jobs) {
      const int64_t secs = JobAcceleratorSeconds(j, sw, until) - JobAcceleratorSeconds(j, sw, *start);
      if (secs <= 0) continue;
      training.push_back(bj::object{{"acceleratorSeconds", std::to_string(secs)}, {"acceleratorType", j.accelerator},
                                    {"annotations", bj::object{}}, {"baseModel", j.base_model},
                                    {"startTime", Ts(*start)}, {"endTime", Ts(until)}, {"group", ""},
                                    {"jobId", j.id}, {"jobType", "RLOR_TRAINER"}, {"tokens", "0"},
                                    {"trainingSessionId", ""}, {"usageType", "TRAINING"}});
    }
    for (const FwDeployment& d : a.deployments) {
      const int64_t secs = FwDeploymentAcceleratorSeconds(d, *start, until);
      if (secs <= 0) continue;
      dedicated.push_back(bj::object{{"acceleratorSeconds", std::to_string(secs)}, {"acceleratorType", d.accelerator},
                                     {"baseModel", d.base_model}, {"deploymentId", d.id}, {"placement", ""},
                                     {"startTime", Ts(*start)}, {"endTime", Ts(until)}, {"group", ""},
                                     {"usageType", "DEDICATED_DEPLOYMENT"}});
    }
  }
  return Ok(bj::object{{"serverlessCosts", bj::array{}}, {"dedicatedCosts", dedicated}, {"trainingCosts", training}});
}

// R12b: every serving deployment's real-time rates as Prometheus text, refreshed every
// 30 s, at most 6 scrapes a minute per account. The names and labels follow the public
// "Exporting Metrics" page (shared/providers/fireworks.md lists none): per-second rates
// over the last minute, labelled base_model, deployment, deployment_account and
// deployment_id. A deployment with no replica up is absent, not zero.
HttpResponse AccountMetrics(ApiContext& ctx, FwAccount& a) {
  if (int64_t wait = ctx.rates.Hit("fw-metrics|" + a.id, ctx.now, 6, std::chrono::minutes(1)); wait > 0) {
    HttpResponse r = Rpc(8, "metrics endpoint: at most 6 requests per minute per account", "RATE_LIMIT_EXCEEDED");
    r.headers.emplace_back("Retry-After", std::to_string(wait));
    return r;
  }
  const Time at = std::chrono::floor<std::chrono::seconds>(ctx.now) -
                  std::chrono::seconds(std::chrono::floor<std::chrono::seconds>(ctx.now).time_since_epoch().count() % 30);
  struct Row {
    std::string labels;
    double requests, prompt, cached;
  };
  std::vector<Row> rows;
  for (const FwDeployment& d : a.deployments) {
    if (FwReplicas(d, at) <= 0 || FwDeploymentState(d, at) == "DELETED") continue;
    double requests = 0;
    for (Time t = at - std::chrono::seconds(60); t < at; t += std::chrono::seconds(10)) {
      const Interval* i = At(d.traffic, t);
      if (i && FwReplicas(d, t) > 0) requests += i->rate / 60.0 / 6.0;
    }
    const std::string labels = "{base_model=\"" + d.base_model + "\",deployment=\"accounts/" + a.id + "/deployments/" + d.id +
                               "\",deployment_account=\"" + a.id + "\",deployment_id=\"" + d.id + "\"}";
    rows.push_back({labels, requests, requests * 400, requests * 100});
  }
  std::string out;
  auto family = [&](const char* name, const char* help, double Row::*field) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " gauge\n";
    for (const Row& r : rows) {
      char v[64];
      std::snprintf(v, sizeof v, "%.6g", r.*field);
      out += std::string(name) + r.labels + " " + v + "\n";
    }
  };
  family("request_counter_total:sum_by_deployment", "Request rate per deployment (per second, 1m window)", &Row::requests);
  family("tokens_prompt_total:sum_by_deployment", "Prompt tokens per second per deployment", &Row::prompt);
  family("tokens_cached_prompt_total:sum_by_deployment", "Cached prompt tokens per second per deployment", &Row::cached);
  return net::TextResponse(200, std::move(out), "text/plain; version=0.0.4; charset=utf-8");
}

HttpResponse UsageCosts(ApiContext& ctx, FwAccount& a) {
  auto body = json::Parse(ctx.req.body.empty() ? "{}" : ctx.req.body, "usageCosts query");
  if (!body.ok() || !body->is_object()) return Rpc(3, "request body must be a JSON object");
  const auto& o = body->get_object();
  auto start = ParseTime(json::Str(o, "startTime").value_or(""));
  auto end = ParseTime(json::Str(o, "endTime").value_or(""));
  if (!start.ok() || !end.ok() || *end <= *start) return Rpc(3, "startTime and endTime are required");
  std::string session;
  if (const auto* f = json::Obj(o, "filter")) session = json::Str(*f, "sessionId").value_or("");
  // Provisional numbers up to usage_provisional_lag ago; INCOMPLETE until usage_lag has
  // passed over the whole window.
  const Time until = std::min(*end, ctx.now - ctx.world.switches.usage_provisional_lag);
  const bool by_hour = [&] {
    if (const auto* g = json::Arr(o, "groupBy")) {
      for (const auto& v : *g) {
        if (v.is_string() && (v.get_string() == "HOUR" || v.get_string() == "DAY")) return true;
      }
    }
    return false;
  }();
  bj::array rows;
  double total = 0;
  for (Time h = FloorToHour(*start); h < until; h += std::chrono::hours(1)) {
    for (const FwSession& x : a.sessions) {
      if (!session.empty() && x.id != session) continue;
      const double usd = TokenCost(x.base_model, SessionTokens(x, std::max(h, *start), std::min(h + std::chrono::hours(1), until)));
      if (usd <= 0) continue;
      total += usd;
      if (by_hour) {
        rows.push_back(bj::object{{"dimensions", bj::object{{"startTime", Ts(h)}, {"model", x.base_model}}},
                                  {"subtotal", MoneyJson(usd)}});
      }
    }
  }
  return Ok(bj::object{{"rows", rows}, {"subtotal", MoneyJson(total)}, {"nextPageToken", ""},
                       {"evaluationTime", Ts(std::max(*start, until))},
                       {"attributionCompleteness", *end > ctx.now - ctx.world.switches.usage_lag ? "INCOMPLETE" : "COMPLETE"}});
}

HttpResponse HandleGateway(ApiContext& ctx, Caller& caller, const std::vector<std::string>& seg) {
  FwAccount& a = *caller.account;
  if (!caller.key->training) return Gateway(401, "UNAUTHENTICATED", "this API key is not allowed to use training", ctx.world);
  if (seg.size() != 4 || ctx.req.method != "POST") return Gateway(404, "NOT_FOUND", "no such route", ctx.world);
  auto body = json::Parse(ctx.req.body.empty() ? "{}" : ctx.req.body, "request");
  if (!body.ok() || !body->is_object()) return Gateway(400, "BAD_REQUEST", "request body must be a JSON object", ctx.world);
  const auto& o = body->get_object();
  const std::string op = seg[3];
  const Switches& sw = ctx.world.switches;
  if (op == "create_session") {
    const std::string base = BodyField(o, "baseModel", "base_model");
    if (sw.slot_unit == "sessions") {
      if (auto full = SlotCheck(ctx, a, base)) return *full;
    }
    FwSession s;
    s.id = ctx.world.NewId("ts-", 32);
    s.base_model = base;
    s.owner = caller.key->owner;
    s.created = ctx.now;
    a.sessions.push_back(s);
    a.Reindex();
    ctx.mutated = true;
    return Ok(bj::object{{"session_id", s.id}, {"comms", "v2"}});
  }
  const std::string sid = BodyField(o, "sessionId", "session_id");
  FwSession* s = FindSession(ctx, a, sid);
  if (!s || !SessionHoldsSlot(*s, sw, ctx.now)) {
    return Gateway(404, "NOT_FOUND",
                   op + ": TrainingSession accounts/" + a.id + "/trainingSessions/" + sid + " not found", ctx.world);
  }
  if (op == "create_model") {
    if (sw.slot_unit == "runs") {
      if (auto full = SlotCheck(ctx, a, s->base_model)) return *full;
    }
    if (s->run_id.empty()) s->run_id = ctx.world.NewId("run-", 32);
    ctx.mutated = true;
    return Ok(bj::object{{"model_id", s->run_id}});
  }
  if (op == "session_heartbeat") {
    s->heartbeats.push_back(ctx.now);
    return Ok(bj::object{});
  }
  if (op == "save_checkpoint") {
    const std::string logical = json::Str(o, "name").value_or("ckpt");
    const bool promotable = json::Bool(o, "promotable").value_or(true);
    if (s->run_id.empty()) s->run_id = ctx.world.NewId("run-", 32);
    std::string name = s->run_id + "-" + logical;
    if (promotable) name += "-" + ctx.world.NewId("", 8);
    s->checkpoints.push_back({logical, name, promotable, ctx.now});
    ctx.mutated = true;
    return Ok(bj::object{{"checkpoint_name", name}});
  }
  return Gateway(404, "NOT_FOUND", "no such route", ctx.world);
}

}  // namespace

HttpResponse HandleFireworks(ApiContext& ctx) {
  const std::vector<std::string> seg = Segments(ctx.req.Path());
  const bool gateway = seg.size() >= 3 && seg[0] == "training" && seg[1] == "v1" && seg[2] == "serverless";
  Caller caller;
  if (auto denied = Authenticate(ctx, caller, gateway)) return *denied;
  FwAccount& acct = *caller.account;
  const Switches& sw = ctx.world.switches;
  // S23: the account-wide request ceiling.
  if (int64_t wait = ctx.rates.Hit("fw|" + acct.id, ctx.now, static_cast<size_t>(sw.fireworks_rpm), std::chrono::minutes(1));
      wait > 0) {
    HttpResponse r = Rpc(8, "Too many requests. Wait and try again.", "RATE_LIMIT_EXCEEDED");
    r.headers.emplace_back("Retry-After", std::to_string(wait));
    return r;
  }
  if (gateway) return HandleGateway(ctx, caller, seg);
  const std::string& method = ctx.req.method;
  const Time now = ctx.now;

  if (seg.size() >= 6 && seg[0] == "training" && seg[2] == "rlorTrainerJobs") {
    // R9: /training/v1/rlorTrainerJobs/{a}/{j}/api/v1/healthz
    if (seg[3] != acct.id) return Rpc(7, "permission denied on account " + seg[3]);
    FwRlorJob* j = FindJob(ctx, acct, seg[4]);
    if (!j) return Rpc(5, "RlorTrainerJob " + seg[4] + " not found");
    if (!JobHealthy(*j, sw, now)) return net::JsonResponse(503, Json(bj::object{{"status", "unavailable"}}));
    return Ok(bj::object{{"status", "ok"}});
  }
  if (seg.size() < 2 || seg[0] != "v1" || seg[1] != "accounts") return Rpc(5, "no route for " + ctx.req.Path());
  if (seg.size() == 2 && method == "GET") {
    return Ok(bj::object{{"accounts", bj::array{bj::object{{"name", "accounts/" + acct.id}, {"displayName", acct.id}}}},
                         {"nextPageToken", ""}, {"totalSize", 1}});
  }
  if (seg[2] != acct.id) return Rpc(7, "permission denied on account " + seg[2]);
  if (seg.size() < 4) return Rpc(5, "no route for " + ctx.req.Path());
  // "name:verb" in the last segment.
  std::string last = seg.back();
  std::string verb;
  if (size_t colon = last.find(':'); colon != std::string::npos) {
    verb = last.substr(colon + 1);
    last = last.substr(0, colon);
  }
  std::vector<std::string> s = seg;
  s.back() = last;
  const std::string coll = s[3];
  const bool training_route = coll == "trainingSessions" || coll == "trainingRuns" || coll == "rlorTrainerJobs";
  if (training_route && !caller.key->training) return Rpc(16, "this API key is not allowed to use training");

  // ---- training sessions ----
  if (coll == "trainingSessions") {
    if (s.size() == 4 && method == "GET") {
      std::vector<const FwSession*> items;
      std::vector<FwSession> masked;
      masked.reserve(acct.sessions.size());
      for (const FwSession& x : acct.sessions) {
        if (!SessionVisible(x, sw, now)) continue;
        if (ctx.list_cutoff < now) {
          masked.push_back(x);
          MaskEvents(masked.back(), ctx.list_cutoff);
          items.push_back(&masked.back());
        } else {
          items.push_back(&x);
        }
      }
      return List<FwSession>(ctx, "trainingSessions", items,
                             [&](const FwSession& x) { return SessionJson(ctx, acct, x); });
    }
    FwSession* x = s.size() >= 5 ? FindSession(ctx, acct, s[4]) : nullptr;
    if (!x) return Rpc(5, "TrainingSession " + Name(acct, "trainingSessions", s.size() >= 5 ? s[4] : "") + " not found");
    if (s.size() == 5 && method == "GET") return Ok(SessionJson(ctx, acct, *x));
    if (s.size() == 5 && method == "DELETE") {
      if (x->deleted_at) return Rpc(5, "TrainingSession " + Name(acct, "trainingSessions", x->id) + " not found");
      ctx.mutated = true;
      x->deleted_at = now;
      return Ok(bj::object{});
    }
    if (s.size() >= 6 && s[5] == "checkpoints") {
      // S12: gone with the session, or once its trainer drained.
      if (!SessionCheckpointsReachable(*x, now)) {
        return Rpc(5, "TrainingSession " + Name(acct, "trainingSessions", x->id) + " not found");
      }
      const std::string parent = Name(acct, "trainingSessions", x->id);
      if (s.size() == 6 && method == "GET") {
        std::vector<const FwCheckpoint*> items;
        for (const FwCheckpoint& c : x->checkpoints) {
          if (c.at <= now) items.push_back(&c);
        }
        return List<FwCheckpoint>(ctx, sw.checkpoint_list_key, items,
                                  [&](const FwCheckpoint& c) { return CheckpointJson(parent, c, false); });
      }
      if (s.size() == 7 && method == "POST" && verb == "promote") {
        const FwCheckpoint* ck = nullptr;
        for (const FwCheckpoint& c : x->checkpoints) {
          if (c.name == s[6] && c.at <= now) ck = &c;
        }
        if (!ck) return Rpc(5, "checkpoint " + parent + "/checkpoints/" + s[6] + " not found");
        auto body = json::Parse(ctx.req.body.empty() ? "{}" : ctx.req.body, "promote request");
        if (!body.ok() || !body->is_object()) return Rpc(3, "request body must be a JSON object");
        const std::string output = BodyField(body->get_object(), "outputModel", "output_model");
        const std::string prefix = "accounts/" + acct.id + "/models/";
        const std::string id = output.rfind(prefix, 0) == 0 ? output.substr(prefix.size()) : output;
        if (auto bad = CheckOutputModel(id)) return *bad;
        if (!ck->promotable) return Rpc(9, "checkpoint " + ck->name + " is not promotable (training state)", "PREREQUISITE_NOT_MET");
        if (ck->logical.size() > 17) {
          return Rpc(3, "checkpoint name '" + ck->logical + "' is too long (" + std::to_string(ck->logical.size()) +
                            " chars); names longer than 17 characters cannot be promoted");
        }
        if (acct.model_index.count(id)) return Rpc(6, "Model " + prefix + id + " already exists");
        ctx.mutated = true;
        FwModel m{id, x->base_model, "HF_PEFT_ADDON", now, ck->name};
        acct.models.push_back(m);
        acct.Reindex();
        return Ok(bj::object{{"model", ModelJson(acct, m)}});
      }
    }
    return Rpc(5, "no route for " + ctx.req.Path());
  }
  if (coll == "trainingRuns") {
    std::vector<const FwSession*> with_runs;
    for (const FwSession& x : acct.sessions) {
      if (SessionVisible(x, sw, now) && !x.run_id.empty()) with_runs.push_back(&x);
    }
    auto render = [&](const FwSession& x) -> bj::value {
      const std::string st = SessionState(x, sw, now);
      return bj::object{{"name", Name(acct, "trainingRuns", x.run_id)}, {"baseModel", x.base_model},
                        {"createTime", Ts(x.created)}, {"createdBy", x.owner}, {"loraRank", x.lora_rank},
                        {"sourceTrainingSessionId", x.id},
                        {"state", st == "READY" ? "READY" : st == "FAILED" ? "FAILED" : st == "EXPIRED" ? "EXPIRED" : "READY"},
                        {"status", StatusOk()}, {"updateTime", Ts(SessionUpdateTime(x, sw, now))}};
    };
    if (s.size() == 4 && method == "GET") return List<FwSession>(ctx, "trainingRuns", with_runs, render);
    for (const FwSession* x : with_runs) {
      if (s.size() == 5 && x->run_id == s[4]) return Ok(render(*x));
    }
    return Rpc(5, "TrainingRun not found");
  }

  // ---- RLOR trainer jobs ----
  if (coll == "rlorTrainerJobs") {
    if (s.size() == 4 && method == "GET") {
      const bool archived = ctx.req.Query("includeArchived").value_or("false") == "true";
      std::vector<const FwRlorJob*> items;
      std::vector<FwRlorJob> masked;
      masked.reserve(acct.jobs.size());
      for (FwRlorJob& j : acct.jobs) {
        if (!FindJob(ctx, acct, j.id)) continue;
        const FwRlorJob* view = &j;
        if (ctx.list_cutoff < now) {
          masked.push_back(j);
          MaskEvents(masked.back(), ctx.list_cutoff);
          view = &masked.back();
        }
        if (!archived && JobState(*view, sw, now) == "JOB_STATE_DELETED") continue;
        items.push_back(view);
      }
      return List<FwRlorJob>(ctx, "rlorTrainerJobs", items, [&](const FwRlorJob& j) { return JobJson(ctx, acct, j); });
    }
    if (s.size() == 4 && method == "POST") {
      const std::string id = ctx.req.Query("rlorTrainerJobId").value_or(ctx.world.NewId("training-api-service-", 8));
      if (acct.job_index.count(id)) return Rpc(6, "RlorTrainerJob " + Name(acct, "rlorTrainerJobs", id) + " already exists");
      FwRlorJob j;
      j.id = id;
      j.owner = caller.key->owner;
      j.created = now;
      acct.jobs.push_back(j);
      acct.Reindex();
      ctx.mutated = true;
      return Ok(JobJson(ctx, acct, acct.jobs.back()));
    }
    FwRlorJob* j = s.size() >= 5 ? FindJob(ctx, acct, s[4]) : nullptr;
    if (!j) return Rpc(5, "RlorTrainerJob " + Name(acct, "rlorTrainerJobs", s.size() >= 5 ? s[4] : "") + " not found");
    const std::string state = JobState(*j, sw, now);
    if (s.size() == 5 && method == "GET" && verb.empty()) return Ok(JobJson(ctx, acct, *j));
    if (s.size() == 5 && method == "DELETE") {
      ctx.mutated = true;
      if (!j->deleted_at) j->deleted_at = now;  // S16: a repeat is a no-op
      return Ok(bj::object{});
    }
    if (s.size() == 5 && method == "POST" && verb == "cancel") {
      const bool live = state == "JOB_STATE_RUNNING" || state == "JOB_STATE_IDLE" || state == "JOB_STATE_PENDING" ||
                        state == "JOB_STATE_CREATING";
      if (!live) return Rpc(9, "cannot cancel job in state: " + state);
      ctx.mutated = true;
      j->cancels.push_back(now);
      return Ok(bj::object{});
    }
    if (s.size() == 5 && method == "POST" && verb == "resume") {
      if (state != "JOB_STATE_CANCELLED" && state != "JOB_STATE_FAILED" && state != "JOB_STATE_PAUSED" &&
          state != "JOB_STATE_COMPLETED" && state != "JOB_STATE_EXPIRED") {
        return Rpc(9, "cannot resume job in state: " + state);
      }
      ctx.mutated = true;
      j->resumed_at.push_back(now);
      return Ok(JobJson(ctx, acct, *j));
    }
    if (s.size() == 6 && s[5] == "checkpoints" && method == "GET") {
      std::vector<const FwCheckpoint*> items;
      for (const FwCheckpoint& c : j->checkpoints) {
        if (c.at <= now) items.push_back(&c);
      }
      const std::string parent = Name(acct, "rlorTrainerJobs", j->id);
      return List<FwCheckpoint>(ctx, "checkpoints", items,
                                [&](const FwCheckpoint& c) { return CheckpointJson(parent, c, true); });
    }
    return Rpc(5, "no route for " + ctx.req.Path());
  }

  // ---- deployments ----
  if (coll == "deployments") {
    if (s.size() == 4 && method == "GET") {
      const bool show_deleted = ctx.req.Query("showDeleted").value_or("false") == "true";
      std::vector<const FwDeployment*> items;
      std::vector<FwDeployment> masked;
      masked.reserve(acct.deployments.size());
      for (const FwDeployment& d : acct.deployments) {
        const FwDeployment* view = &d;
        if (ctx.list_cutoff < now) {
          masked.push_back(d);
          MaskEvents(masked.back(), ctx.list_cutoff);
          view = &masked.back();
        }
        if (FwDeploymentVisible(*view, now, show_deleted)) items.push_back(view);
      }
      return List<FwDeployment>(ctx, "deployments", items,
                                [&](const FwDeployment& d) { return DeploymentJson(ctx, acct, d); });
    }
    FwDeployment* d = s.size() >= 5 ? FindDeployment(ctx, acct, s[4]) : nullptr;
    if (!d) return Rpc(5, "Deployment " + Name(acct, "deployments", s.size() >= 5 ? s[4] : "") + " not found");
    const bool deleted = FwDeploymentState(*d, now) == "DELETED";
    if (s.size() == 5 && method == "GET" && verb.empty()) return Ok(DeploymentJson(ctx, acct, *d));
    if (s.size() == 5 && method == "GET" && verb == "metrics") {
      const Interval* tr = At(d->traffic, now);
      const bool up = FwReplicas(*d, now) > 0;
      const double rps = tr && up ? tr->rate / 60.0 : 0.0;
      return Ok(bj::object{{"metrics", bj::object{{"requests_per_second", rps}, {"concurrent_requests", rps > 0 ? 1.0 : 0.0},
                                                  {"tokens_generated_per_second", rps * 120}}}});
    }
    if (s.size() == 5 && method == "PATCH" && verb.empty()) {
      if (deleted) return Rpc(9, "deployment is deleted");
      auto body = json::Parse(ctx.req.body.empty() ? "{}" : ctx.req.body, "deployment patch");
      if (!body.ok() || !body->is_object()) return Rpc(3, "request body must be a JSON object");
      const auto& o = body->get_object();
      const std::string mask = ctx.req.Query("updateMask").value_or("");
      FwPatch p{now, {}, {}, {}};
      auto get = [&](const char* camel, const char* snake) -> std::optional<int> {
        if (auto v = json::Int(o, camel)) return static_cast<int>(*v);
        if (auto v = json::Int(o, snake)) return static_cast<int>(*v);
        return std::nullopt;
      };
      const auto mn = get("minReplicaCount", "min_replica_count");
      const auto mx = get("maxReplicaCount", "max_replica_count");
      if (mask.empty()) {
        // S19: without updateMask every mutable field is replaced, unspecified ones reset.
        if (sw.patch_without_mask == "replace") {
          p.min_replicas = mn.value_or(0);
          p.max_replicas = mx.value_or(std::max(1, p.min_replicas.value()));
        } else {
          p.min_replicas = mn;
          p.max_replicas = mx;
        }
      } else {
        for (const std::string& f : Split(mask, ',')) {
          if (f == "min_replica_count" || f == "minReplicaCount") p.min_replicas = mn.value_or(0);
          else if (f == "max_replica_count" || f == "maxReplicaCount") p.max_replicas = mx.value_or(0);
          else return Rpc(3, "updateMask field '" + f + "' is not a mutable field");
        }
      }
      const auto [cur_min, cur_max] = FwMinMax(*d, now);
      if (p.min_replicas.value_or(cur_min) > p.max_replicas.value_or(cur_max)) {
        return Rpc(3, "minReplicaCount must not exceed maxReplicaCount");
      }
      ctx.mutated = true;
      d->patches.push_back(p);
      return Ok(DeploymentJson(ctx, acct, *d));
    }
    if (s.size() == 5 && (method == "PATCH" || method == "POST") && verb == "scale") {
      auto body = json::Parse(ctx.req.body.empty() ? "{}" : ctx.req.body, "scale request");
      if (!body.ok() || !body->is_object()) return Rpc(3, "request body must be a JSON object");
      auto n = json::Int(body->get_object(), "replicaCount");
      if (!n || *n < 0) return Rpc(3, "replicaCount must be >= 0");
      ctx.mutated = true;
      d->patches.push_back({now, {}, {}, static_cast<int>(*n)});
      return Ok(DeploymentJson(ctx, acct, *d));
    }
    if (s.size() == 5 && method == "DELETE") {
      const bool hard = ctx.req.Query("hard").value_or("false") == "true";
      const bool ignore = ctx.req.Query("ignoreChecks").value_or("false") == "true";
      // S20: a deployment still serving a hot-loaded trainer is "in use".
      if (!deleted && !ignore && !d->hot_load_trainer_job.empty()) {
        auto jt = acct.job_index.find(d->hot_load_trainer_job);
        if (jt != acct.job_index.end()) {
          const std::string st = JobState(acct.jobs[jt->second], sw, now);
          if (st == "JOB_STATE_RUNNING" || st == "JOB_STATE_IDLE") {
            return Rpc(9, "deployment is in use by " + Name(acct, "rlorTrainerJobs", d->hot_load_trainer_job) +
                              "; set ignoreChecks=true to delete it anyway");
          }
        }
      }
      ctx.mutated = true;
      if (hard) {
        d->hard_deleted_at = now;
      } else if (!deleted) {
        d->soft_deleted_at = now;
      }
      return Ok(bj::object{});
    }
    if (s.size() == 5 && method == "POST" && verb == "undelete") {
      if (!deleted) return Rpc(9, "deployment is not deleted");
      ctx.mutated = true;
      d->undeleted_at = now;
      return Ok(DeploymentJson(ctx, acct, *d));
    }
    return Rpc(5, "no route for " + ctx.req.Path());
  }
  if (coll == "models") {
    if (s.size() == 4 && method == "GET") {
      std::vector<const FwModel*> items;
      for (const FwModel& m : acct.models) {
        if (m.created <= now) items.push_back(&m);
      }
      return List<FwModel>(ctx, "models", items, [&](const FwModel& m) { return ModelJson(acct, m); });
    }
    if (s.size() == 5 && method == "GET") {
      auto it = acct.model_index.find(s[4]);
      if (it == acct.model_index.end()) return Rpc(5, "Model " + Name(acct, "models", s[4]) + " not found");
      return Ok(ModelJson(acct, acct.models[it->second]));
    }
  }
  if (coll == "deployedModels" && s.size() == 4 && method == "GET") {
    return Ok(bj::object{{"deployedModels", bj::array{}}, {"nextPageToken", ""}, {"totalSize", 0}});
  }
  if (coll == "metrics" && s.size() == 4 && method == "GET") return AccountMetrics(ctx, acct);
  if (coll == "billingUsage" && s.size() == 4 && method == "GET") return BillingUsage(ctx, acct);
  if (coll == "usageCosts" && verb == "query" && method == "POST") return UsageCosts(ctx, acct);
  if (coll == "quotas" && s.size() == 4 && method == "GET") {
    const int cap = acct.slot_cap.value_or(sw.slot_cap);
    return Ok(bj::object{{"quotas", bj::array{bj::object{{"name", Name(acct, "quotas", "serverless-training-runs")},
                                                         {"value", std::to_string(cap)}, {"maxValue", std::to_string(cap)},
                                                         {"usage", SlotsInUse(ctx, acct, "")},
                                                         {"updateTime", Ts(now)}}}},
                         {"nextPageToken", ""}, {"totalSize", 1}});
  }
  if (coll == "checkpoints" && verb == "promote" && method == "POST") {
    // A6: RLOR checkpoint promotion.
    auto body = json::Parse(ctx.req.body.empty() ? "{}" : ctx.req.body, "promote request");
    if (!body.ok() || !body->is_object()) return Rpc(3, "request body must be a JSON object");
    const auto& o = body->get_object();
    if (sw.promote_mode == "sync" && o.contains("async_promotion")) {
      return Rpc(3, "unknown field \"async_promotion\"");
    }
    const std::string output = BodyField(o, "outputModel", "output_model");
    const std::string prefix = "accounts/" + acct.id + "/models/";
    const std::string id = output.rfind(prefix, 0) == 0 ? output.substr(prefix.size()) : output;
    if (auto bad = CheckOutputModel(id)) return *bad;
    if (acct.model_index.count(id)) return Rpc(6, "Model " + prefix + id + " already exists");
    ctx.mutated = true;
    FwModel m{id, BodyField(o, "baseModel", "base_model"), "HF_PEFT_ADDON", now, s.size() > 4 ? s[4] : ""};
    acct.models.push_back(m);
    acct.Reindex();
    return Ok(bj::object{{"model", ModelJson(acct, m)}});
  }
  return Rpc(5, "no route for " + ctx.req.Path());
}

}  // namespace loopwarden::sim
