#include "sim/simulator.h"

#include <boost/json/serialize.hpp>

#include "core/json.h"
#include "core/log.h"
#include "core/strings.h"

namespace loopwarden::sim {

using net::HttpResponse;

std::vector<std::string> Segments(const std::string& path) {
  std::vector<std::string> out;
  for (std::string& s : Split(path, '/')) {
    if (!s.empty()) out.push_back(std::move(s));
  }
  return out;
}

std::string Json(const bj::value& v) { return bj::serialize(v); }

int64_t RateWindows::Hit(const std::string& key, Time now, size_t limit, Duration window) {
  auto& q = windows_[key];
  while (!q.empty() && q.front() <= now - window) q.pop_front();
  if (q.size() >= limit) {
    const Duration wait = q.front() + window - now;
    return std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::seconds>(wait + std::chrono::seconds(1)).count());
  }
  q.push_back(now);
  return 0;
}

namespace {
template <class T>
void DropAfter(std::optional<T>& v, Time cutoff) {
  if (v && *v > cutoff) v.reset();
}
}  // namespace

void MaskEvents(BtRun& r, Time cutoff) {
  DropAfter(r.deactivated_at, cutoff);
  DropAfter(r.deployment_deactivated_at, cutoff);
  DropAfter(r.deleted_at, cutoff);
}
void MaskEvents(BtSampler& s, Time cutoff) { DropAfter(s.deactivated_at, cutoff); }
void MaskEvents(BtDeployment& d, Time cutoff) {
  std::erase_if(d.activations, [&](const auto& a) { return a.first > cutoff; });
  std::erase_if(d.settings, [&](const auto& s) { return s.first > cutoff && s.first != d.created; });
  DropAfter(d.deleted_at, cutoff);
}
void MaskEvents(FwSession& s, Time cutoff) { DropAfter(s.deleted_at, cutoff); }
void MaskEvents(FwRlorJob& j, Time cutoff) {
  std::erase_if(j.cancels, [&](Time t) { return t > cutoff; });
  std::erase_if(j.resumed_at, [&](Time t) { return t > cutoff; });
  DropAfter(j.deleted_at, cutoff);
}
void MaskEvents(FwDeployment& d, Time cutoff) {
  std::erase_if(d.patches, [&](const FwPatch& p) { return p.at > cutoff; });
  DropAfter(d.soft_deleted_at, cutoff);
  DropAfter(d.hard_deleted_at, cutoff);
  DropAfter(d.undeleted_at, cutoff);
}

bool IsFireworksPath(const std::string& path) {
  return path.rfind("/v1/accounts", 0) == 0 || path.rfind("/training/", 0) == 0;
}

Simulator::Simulator(Clock& clock, Scenario scenario, std::function<void(Duration)> jump)
    : clock_(clock), initial_(std::move(scenario)), world_(initial_.world), faults_(initial_.faults), jump_(std::move(jump)) {}

int Simulator::ListingPage(const net::HttpRequest& req, bool fireworks) const {
  if (req.method != "GET") return 0;
  const std::vector<std::string> seg = Segments(req.Path());
  if (!fireworks) {
    // Baseten lists are unpaginated: the whole listing is "page 1".
    static const std::vector<std::vector<std::string>> kLists = {
        {"v1", "loops", "runs"}, {"v1", "loops", "samplers"}, {"v1", "loops", "deployments"}, {"v1", "models"}};
    for (const auto& l : kLists) {
      if (seg == l) return 1;
    }
    if (seg.size() == 4 && seg[1] == "models" && seg[3] == "deployments") return 1;
    return 0;
  }
  if (seg.size() < 4 || seg[0] != "v1") return 0;
  const bool list = seg.size() == 4 || (seg.size() == 6 && seg.back() == "checkpoints");
  if (!list) return 0;
  size_t size = 50;
  if (auto s = req.Query("pageSize")) {
    long long n = std::atoll(s->c_str());
    size = n <= 0 ? 50 : static_cast<size_t>(std::min<long long>(n, 200));
  }
  size_t offset = 0;
  if (auto t = req.Query("pageToken"); t && !t->empty()) {
    if (world_.switches.page_token_integer) {
      offset = static_cast<size_t>(std::atoll(t->c_str()));
    } else if ((*t)[0] == 'p') {
      offset = static_cast<size_t>(std::strtoull(t->substr(1, t->find('.') - 1).c_str(), nullptr, 16));
    }
  }
  return static_cast<int>(offset / size) + 1;
}

HttpResponse Simulator::Handle(const net::HttpRequest& req) {
  ++requests_;
  const std::string path = req.Path();
  if (path.rfind("/_sim/", 0) == 0) return HandleControl(req);
  const Time now = clock_.Now();
  const bool fireworks = IsFireworksPath(path);
  FaultDecision fault = faults_.Decide(req.method, path, now, ListingPage(req, fireworks));
  const bool mutating_method = req.method != "GET";

  auto provider_error = [&](int status, const std::string& msg, Duration retry) {
    HttpResponse r;
    const int64_t secs = std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::seconds>(retry).count());
    if (fireworks) {
      const int code = status == 429 ? 8 : status == 500 ? 13 : 14;
      r = net::JsonResponse(status, Json(bj::object{{"code", code}, {"message", msg}, {"details", bj::array{}}}));
    } else {
      bj::object body{{"error", msg}};
      if (status == 429) body["retry_after"] = secs;
      r = net::JsonResponse(status, Json(body));
    }
    if (status == 429) r.headers.emplace_back("Retry-After", std::to_string(secs));
    r.delay = fault.latency;
    return r;
  };

  switch (fault.kind) {
    case FaultKind::kError: return provider_error(fault.status, "injected server error", {});
    case FaultKind::kFailPage: return provider_error(503, "injected failure of this page", {});
    case FaultKind::kRateLimit:
      return provider_error(429, fireworks ? "Too many requests. Wait and try again."
                                           : "Rate limit exceeded. Please try again later.",
                            fault.retry_after);
    case FaultKind::kReset:
      if (!mutating_method) {
        HttpResponse r;
        r.fault = HttpResponse::Fault::kReset;
        r.delay = fault.latency;
        return r;
      }
      break;  // mutating calls run first, then lose their answer: the ambiguous case
    default: break;
  }

  ApiContext ctx{world_, req, now, now - faults_.stale_reads(), rates_,
                 capacity_full_until_ && now < *capacity_full_until_};
  HttpResponse res;
  try {
    res = fireworks ? HandleFireworks(ctx) : HandleBaseten(ctx);
  } catch (const std::exception& e) {
    Log().Error("simulator handler failed", {{"path", path}, {"error", e.what()}});
    res = net::JsonResponse(500, "{\"error\":\"simulator bug\"}");
  }
  if (ctx.mutated) {
    world_.journal.push_back({now, req.method, path + (req.url.find('?') != std::string::npos
                                                          ? req.url.substr(req.url.find('?')) : ""),
                              req.body, fault.kind == FaultKind::kReset ? 0 : res.status,
                              res.body.substr(0, 512), std::string(req.Header("X-Loopwarden-Lease"))});
  }
  res.delay = fault.latency;
  if (fault.kind == FaultKind::kReset) {
    res.fault = HttpResponse::Fault::kReset;
  } else if (fault.kind == FaultKind::kTruncate) {
    res.fault = HttpResponse::Fault::kTruncate;
    res.truncate_at = 80 + res.body.size() / 2;  // headers plus half the body
  } else if (fault.kind == FaultKind::kMalformed && !res.body.empty()) {
    res.body = res.body.substr(0, res.body.size() / 2) + "\x01}{";
  }
  return res;
}

HttpResponse Simulator::StateJson() {
  const Time now = clock_.Now();
  const Switches& sw = world_.switches;
  bj::array out;
  for (const BtOrg& org : world_.orgs) {
    for (const BtRun& r : org.runs) {
      if (!RunExists(r, now)) continue;
      const std::string st = r.dedicated ? LoopsDeploymentStatus(r, sw, now) : RunStatus(r, sw, now);
      const InstanceType* it = world_.FindInstanceType(r.instance_type);
      out.push_back(bj::object{{"provider", "baseten"}, {"account", org.name}, {"kind", "run"}, {"id", r.id},
                               {"mode", r.dedicated ? "dedicated" : "serverless"}, {"run_status", RunStatus(r, sw, now)},
                               {"state", st}, {"billing", r.dedicated && LoopsDeploymentBills(st)},
                               {"gpus", r.dedicated && it ? it->gpu_count * r.nodes : 0}});
    }
    for (const BtSampler& s : org.samplers) {
      if (s.created > now) continue;
      const std::string st = SamplerStatus(s, org, sw, now);
      out.push_back(bj::object{{"provider", "baseten"}, {"account", org.name}, {"kind", "sampler"}, {"id", s.id},
                               {"paired_run", s.paired_run}, {"state", st}, {"billing", SamplerBills(st)}});
    }
    for (const BtDeployment& d : org.deployments) {
      if (!DeploymentExists(d, now)) continue;
      const int n = DeploymentReplicas(d, sw, now);
      out.push_back(bj::object{{"provider", "baseten"}, {"account", org.name}, {"kind", "deployment"}, {"id", d.id},
                               {"model_id", d.model_id}, {"state", DeploymentStatus(d, sw, now)},
                               {"replicas", n}, {"billing", n > 0}});
    }
  }
  for (const FwAccount& a : world_.accounts) {
    for (const FwSession& s : a.sessions) {
      if (!SessionVisible(s, sw, now)) continue;
      int unpromoted = 0;
      for (const FwCheckpoint& c : s.checkpoints) {
        bool promoted = false;
        for (const FwModel& m : a.models) promoted = promoted || m.source == c.name;
        if (c.at <= now && c.promotable && !promoted) ++unpromoted;
      }
      out.push_back(bj::object{{"provider", "fireworks"}, {"account", a.id}, {"kind", "training_session"},
                               {"id", s.id}, {"state", SessionState(s, sw, now)},
                               {"holds_slot", SessionHoldsSlot(s, sw, now)}, {"unpromoted_checkpoints", unpromoted}});
    }
    for (const FwRlorJob& j : a.jobs) {
      if (j.created > now) continue;
      const std::string st = JobState(j, sw, now);
      out.push_back(bj::object{{"provider", "fireworks"}, {"account", a.id}, {"kind", "rlor_job"}, {"id", j.id},
                               {"state", st}, {"billing", JobBills(st)}});
    }
    for (const FwDeployment& d : a.deployments) {
      if (!FwDeploymentVisible(d, now, true)) continue;
      const int n = FwReplicas(d, now);
      out.push_back(bj::object{{"provider", "fireworks"}, {"account", a.id}, {"kind", "deployment"}, {"id", d.id},
                               {"state", FwDeploymentState(d, now)}, {"replicas", n}, {"billing", n > 0}});
    }
    bj::array models;
    for (const FwModel& m : a.models) models.push_back(bj::object{{"id", m.id}, {"source", m.source}});
    out.push_back(bj::object{{"provider", "fireworks"}, {"account", a.id}, {"kind", "models"}, {"models", models}});
  }
  return net::JsonResponse(200, Json(bj::object{{"now", FormatTime(now)}, {"resources", out}}));
}

HttpResponse Simulator::HandleControl(const net::HttpRequest& req) {
  const std::string path = req.Path();
  const Time now = clock_.Now();
  auto bad = [](const std::string& m) { return net::JsonResponse(400, Json(bj::object{{"error", m}})); };
  auto body_object = [&]() -> Result<bj::object> {
    LW_ASSIGN_OR_RETURN(bj::value v, json::Parse(req.body.empty() ? "{}" : req.body, "control request"));
    if (!v.is_object()) return InvalidArgument("expected a JSON object");
    return v.get_object();
  };
  if (path == "/_sim/healthz") return net::JsonResponse(200, "{\"ok\":true}");
  if (path == "/_sim/time") return net::JsonResponse(200, Json(bj::object{{"now", FormatTime(now)}}));
  if (path == "/_sim/advance" && req.method == "POST") {
    if (!jump_) return net::JsonResponse(501, Json(bj::object{{"error", "this simulator's clock cannot jump"}}));
    auto o = body_object();
    if (!o.ok()) return bad(o.status().message());
    const double secs = json::Num(*o, "seconds").value_or(0);
    if (secs < 0) return bad("seconds must be >= 0");
    jump_(Duration(static_cast<int64_t>(secs * 1e6)));
    return net::JsonResponse(200, Json(bj::object{{"now", FormatTime(clock_.Now())}}));
  }
  if (path == "/_sim/journal") {
    const size_t since = static_cast<size_t>(std::atoll(req.Query("since").value_or("0").c_str()));
    bj::array entries;
    for (size_t i = since; i < world_.journal.size(); ++i) {
      const JournalEntry& e = world_.journal[i];
      entries.push_back(bj::object{{"seq", static_cast<int64_t>(i)}, {"at", FormatTime(e.at)}, {"method", e.method},
                                   {"path", e.path}, {"body", e.body}, {"status", e.status}, {"response", e.response},
                                   {"lease", e.lease}});
    }
    return net::JsonResponse(200, Json(bj::object{{"entries", entries},
                                                  {"next", static_cast<int64_t>(world_.journal.size())}}));
  }
  if (path == "/_sim/state") return StateJson();
  if (path == "/_sim/faults" && req.method == "GET") {
    bj::object counts;
    for (const auto& [k, v] : faults_.counts()) counts[k] = static_cast<int64_t>(v);
    return net::JsonResponse(200, Json(bj::object{{"counts", counts}, {"total", static_cast<int64_t>(faults_.total())},
                                                  {"requests", static_cast<int64_t>(requests_)}}));
  }
  if (path == "/_sim/faults" && req.method == "POST") {
    auto cfg = ParseFaultConfigJson(req.body);
    if (!cfg.ok()) return bad(cfg.status().message());
    faults_ = Faults(*cfg);
    return net::JsonResponse(200, "{\"ok\":true}");
  }
  if (path == "/_sim/reset" && req.method == "POST") {
    world_ = initial_.world;
    faults_ = Faults(initial_.faults);
    rates_.Clear();
    capacity_full_until_.reset();
    return net::JsonResponse(200, "{\"ok\":true}");
  }
  if (path == "/_sim/scenario" && req.method == "POST") {
    auto sc = LoadScenarioText(req.body, "scenario", now);
    if (!sc.ok()) return bad(sc.status().message());
    initial_ = std::move(*sc);
    world_ = initial_.world;
    faults_ = Faults(initial_.faults);
    rates_.Clear();
    return net::JsonResponse(200, Json(bj::object{{"resources", static_cast<int64_t>(world_.ResourceCount())}}));
  }
  if ((path == "/_sim/activity" || path == "/_sim/event") && req.method == "POST") {
    auto o = body_object();
    if (!o.ok()) return bad(o.status().message());
    const std::string id = json::Str(*o, "id").value_or("");
    auto at = [&](const char* key, Time fallback) {
      if (auto v = json::Str(*o, key); v && *v == "forever") return Forever();
      if (auto s = json::Num(*o, key)) return now + Duration(static_cast<int64_t>(*s * 1e6));
      return fallback;
    };
    if (path == "/_sim/event") {
      const std::string type = json::Str(*o, "type").value_or("");
      if (type == "capacity_full") {
        capacity_full_until_ = at("until_seconds", Forever());
        return net::JsonResponse(200, "{\"ok\":true}");
      }
      for (BtOrg& org : world_.orgs) {
        auto it = org.run_index.find(id);
        if (it != org.run_index.end() && type == "preempt") {
          org.runs[it->second].preempted_at = now;
          return net::JsonResponse(200, "{\"ok\":true}");
        }
      }
      for (FwAccount& a : world_.accounts) {
        if (auto it = a.session_index.find(id); it != a.session_index.end()) {
          if (type == "drain_trainer") a.sessions[it->second].drained_at = now;
          else if (type == "fail_session") a.sessions[it->second].failed_at = now;
          else return bad("unknown event for a session: " + type);
          return net::JsonResponse(200, "{\"ok\":true}");
        }
        if (auto it = a.job_index.find(id); it != a.job_index.end() && type == "crash_trainer") {
          a.jobs[it->second].crashed_at = now;
          return net::JsonResponse(200, "{\"ok\":true}");
        }
      }
      return bad("no resource '" + id + "' for event '" + type + "'");
    }
    Interval iv{at("from_seconds", now), at("to_seconds", Forever()), json::Num(*o, "gpu_util").value_or(0.9),
                json::Num(*o, "requests_per_min").value_or(0), {}};
    if (const auto* t = json::Obj(*o, "tokens_per_min")) {
      for (const auto& [k, v] : *t) {
        if (auto n = json::AsNum(v)) iv.tokens_per_min[std::string(k)] = *n;
      }
    }
    if (iv.to <= iv.from) return bad("the interval must end after it starts");
    const std::string field = json::Str(*o, "field").value_or("activity");
    for (BtOrg& org : world_.orgs) {
      if (auto it = org.run_index.find(id); it != org.run_index.end()) {
        (field == "keepalive" ? org.runs[it->second].keepalive : org.runs[it->second].activity).push_back(iv);
        return net::JsonResponse(200, "{\"ok\":true}");
      }
      if (auto it = org.sampler_index.find(id); it != org.sampler_index.end()) {
        org.samplers[it->second].traffic.push_back(iv);
        return net::JsonResponse(200, "{\"ok\":true}");
      }
      if (auto it = org.deployment_index.find(id); it != org.deployment_index.end()) {
        org.deployments[it->second].traffic.push_back(iv);
        return net::JsonResponse(200, "{\"ok\":true}");
      }
    }
    for (FwAccount& a : world_.accounts) {
      if (auto it = a.session_index.find(id); it != a.session_index.end()) {
        a.sessions[it->second].activity.push_back(iv);
        return net::JsonResponse(200, "{\"ok\":true}");
      }
      if (auto it = a.job_index.find(id); it != a.job_index.end()) {
        a.jobs[it->second].activity.push_back(iv);
        return net::JsonResponse(200, "{\"ok\":true}");
      }
      if (auto it = a.deployment_index.find(id); it != a.deployment_index.end()) {
        a.deployments[it->second].traffic.push_back(iv);
        return net::JsonResponse(200, "{\"ok\":true}");
      }
    }
    return bad("no resource '" + id + "'");
  }
  return net::JsonResponse(404, Json(bj::object{{"error", "no control route " + path}}));
}

}  // namespace loopwarden::sim
