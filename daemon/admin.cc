#include "daemon/admin.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "core/json.h"
#include "core/log.h"

namespace loopwarden::daemon {

namespace {

namespace bj = boost::json;

net::HttpResponse Error(int status, const std::string& message) {
  return net::JsonResponse(status, bj::serialize(bj::object{{"error", message}}));
}

net::HttpResponse MethodNotAllowed(std::string_view allow) {
  net::HttpResponse r = Error(405, "method not allowed");
  r.headers.emplace_back("Allow", std::string(allow));
  return r;
}

std::string Usd(Money m) { return FormatMoney(m); }

net::HttpResponse Resources(const AdminContext& ctx, const net::HttpRequest& req) {
  const Time now = ctx.clock->Now();
  const auto provider = req.Query("provider");
  const auto kind = req.Query("kind");
  const auto lifecycle = req.Query("lifecycle");
  size_t limit = 10000;
  if (auto l = req.Query("limit")) {
    try {
      limit = static_cast<size_t>(std::stoul(*l));
    } catch (const std::exception&) {
      return Error(400, "limit must be a non-negative integer, not '" + *l + "'");
    }
  }
  if (kind && !ParseKind(*kind)) return Error(400, "unknown kind '" + *kind + "'");
  if (lifecycle && !ParseLifecycle(*lifecycle)) return Error(400, "unknown lifecycle '" + *lifecycle + "'");
  std::map<std::string, bj::array> marks;
  for (const auto& [k, m] : ctx.store->marks()) {
    bj::object o{{"policy", m.policy}, {"marked_at", FormatTimeMillis(m.marked_at)},
                 {"act_after", FormatTimeMillis(m.act_after)}, {"action", m.action}, {"reason", m.reason}};
    if (m.notified_at) o["notified_at"] = FormatTimeMillis(*m.notified_at);
    marks[m.resource].push_back(std::move(o));
  }
  std::vector<const store::ResourceState*> rows;
  for (const store::ResourceState& st : ctx.store->resources()) {
    const Resource& r = st.resource;
    if (provider && r.provider != *provider) continue;
    if (kind && KindName(r.kind) != *kind) continue;
    if (lifecycle && LifecycleName(r.lifecycle) != *lifecycle) continue;
    rows.push_back(&st);
  }
  std::sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->resource.Key() < b->resource.Key(); });
  bj::array list;
  for (size_t i = 0; i < rows.size() && i < limit; ++i) {
    const store::ResourceState& st = *rows[i];
    const Resource& r = st.resource;
    bj::object o;
    o["key"] = r.Key();
    o["provider"] = r.provider.view();
    o["account"] = r.account.view();
    o["kind"] = std::string(KindName(r.kind));
    o["id"] = r.id.view();
    o["name"] = r.name.view();
    o["owner"] = r.owner.view();
    o["lifecycle"] = std::string(LifecycleName(r.lifecycle));
    o["native_status"] = r.native_status.view();
    if (r.mode != Mode::kNone) o["mode"] = std::string(ModeName(r.mode));
    o["gpus"] = r.billing.gpus();
    o["billable"] = r.billing.billable;
    if (auto idle = st.IdleSince()) {
      o["idle_since"] = FormatTimeMillis(*idle);
      o["idle_seconds"] = std::chrono::duration_cast<std::chrono::seconds>(now - *idle).count();
    } else {
      o["idle_since"] = nullptr;  // unknown, never "idle"
    }
    if (auto quiet = st.NoTrafficSince()) o["last_traffic_at"] = FormatTimeMillis(*quiet);
    o["spend_usd"] = Usd(st.SpendAt(now));
    o["idle_spend_usd"] = Usd(st.IdleSpendAt(now));
    o["burn_usd_per_hour"] = Usd(st.BurnPerHour());
    o["checkpoints_unpromoted"] = r.checkpoints->unpromoted;
    if (!r.flags.empty()) {
      bj::array f;
      for (Flag x : r.flags.items()) f.push_back(bj::string(FlagName(x)));
      o["flags"] = std::move(f);
    }
    if (auto m = marks.find(r.Key()); m != marks.end()) o["marks"] = m->second;
    list.push_back(std::move(o));
  }
  bj::object root{{"at", FormatTimeMillis(now)}, {"count", rows.size()}, {"truncated", rows.size() > limit}};
  root["resources"] = std::move(list);
  return net::JsonResponse(200, bj::serialize(root));
}

net::HttpResponse Snooze(const AdminContext& ctx, const net::HttpRequest& req) {
  const std::string token = ctx.admin_token ? ctx.admin_token() : "";
  if (token.empty()) return Error(403, "snoozing over HTTP is disabled: set admin_token_env or admin_token_file");
  std::string_view auth = req.Header("Authorization");
  constexpr std::string_view kBearer = "Bearer ";
  if (auth.size() < kBearer.size() || !std::equal(kBearer.begin(), kBearer.end(), auth.begin(), [](char a, char b) {
        return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
      }) ||
      !ConstantTimeEquals(auth.substr(kBearer.size()), token)) {
    // Throttled: a client hammering wrong tokens must not flood the journal.
    AdminContext::RefusalLog& log = *ctx.refusals;
    const Time now = ctx.clock ? ctx.clock->Now() : Time{};
    if (!log.last || now - *log.last >= std::chrono::minutes(1)) {
      Log().Warn("snooze refused: missing or wrong bearer token",
                 {{"remote", req.remote}, {"refused_since_last_line", static_cast<long>(log.unlogged)}});
      log.last = now;
      log.unlogged = 0;
    } else {
      ++log.unlogged;
    }
    net::HttpResponse r = Error(401, "missing or wrong bearer token");
    r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"loopwarden\"");
    return r;
  }
  boost::system::error_code ec;
  bj::value body = bj::parse(req.body, ec);
  if (ec || !body.is_object()) return Error(400, "body must be a JSON object: {resource, for|until, reason}");
  const bj::object& o = body.as_object();
  for (const auto& kv : o) {
    const std::string_view k = kv.key();
    if (k != "resource" && k != "for" && k != "until" && k != "reason" && k != "policy" && k != "by") {
      return Error(400, "unknown field '" + std::string(k) + "' (expected resource, for, until, reason, policy, by)");
    }
  }
  auto str = [&](const char* k) { return json::Str(o, k).value_or(""); };
  store::Snooze s;
  s.resource = str("resource");
  s.reason = str("reason");
  s.policy = str("policy");
  s.by = str("by");
  const Time now = ctx.clock->Now();
  s.created_at = now;
  if (s.resource.empty()) return Error(400, "resource is required (a key from /v1/resources or a provider id)");
  if (s.reason.empty()) return Error(400, "reason is required: a snooze is an audited exemption");
  if (o.contains("for") && o.contains("until")) return Error(400, "give for or until, not both");
  if (o.contains("for")) {
    auto d = ParseDuration(str("for"));
    if (!d.ok() || *d <= Duration::zero()) return Error(400, "for: " + (d.ok() ? std::string("must be positive") : d.status().message()));
    s.until = now + *d;
  } else if (o.contains("until")) {
    auto t = ParseTime(str("until"));
    if (!t.ok()) return Error(400, "until: " + t.status().message());
    if (*t <= now) return Error(400, "until is in the past");
    s.until = *t;
  } else {
    return Error(400, "for (\"2h\") or until (RFC 3339) is required");
  }
  // A snooze for something loopwarden has never seen is almost always a typo.
  bool known = ctx.store->Find(s.resource) != nullptr;
  if (!known) {
    for (const store::ResourceState& st : ctx.store->resources()) {
      if (st.resource.id == s.resource) {
        known = true;
        break;
      }
    }
  }
  if (!known) return Error(404, "no resource '" + s.resource + "' is known; see GET /v1/resources");
  auto id = ctx.store->AddSnooze(s);
  if (!id.ok()) return Error(500, "storing the snooze: " + id.status().message());
  Log().Info("snoozed", {{"resource", s.resource}, {"policy", s.policy}, {"until", *s.until}, {"by", s.by},
                         {"reason", s.reason}});
  if (ctx.on_snooze) ctx.on_snooze();
  return net::JsonResponse(201, bj::serialize(bj::object{{"id", *id}, {"resource", s.resource},
                                                          {"until", FormatTimeSeconds(*s.until)}}));
}

}  // namespace

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

net::HttpResponse HandleAdmin(const AdminContext& ctx, const net::HttpRequest& req) {
  const std::string path = req.Path();
  const bool get = req.method == "GET" || req.method == "HEAD";
  if (path == "/metrics") {
    if (!get) return MethodNotAllowed("GET");
    return net::TextResponse(200, ctx.metrics->RenderText(), std::string(exporters::Metrics::kContentType));
  }
  if (path == "/healthz" || path == "/livez" || path == "/readyz") {
    if (!get) return MethodNotAllowed("GET");
    auto [ok, why] = path == "/readyz" ? ctx.ready() : ctx.healthy();
    return net::TextResponse(ok ? 200 : 503, (ok ? "ok" : why) + std::string("\n"));
  }
  if (path == "/v1/resources") {
    if (!get) return MethodNotAllowed("GET");
    return Resources(ctx, req);
  }
  if (path == "/v1/plan") {
    if (!get) return MethodNotAllowed("GET");
    std::string body = ctx.plan_json ? ctx.plan_json() : "";
    if (body.empty()) return Error(503, "no cycle has run yet");
    return net::JsonResponse(200, std::move(body));
  }
  if (path == "/v1/snooze") {
    if (req.method != "POST") return MethodNotAllowed("POST");
    return Snooze(ctx, req);
  }
  if (path == "/") {
    if (!get) return MethodNotAllowed("GET");
    return net::TextResponse(200,
                             "loopwarden\n\n/metrics\n/healthz\n/readyz\n/v1/resources\n/v1/plan\nPOST /v1/snooze\n");
  }
  return Error(404, "no such endpoint: " + path);
}

}  // namespace loopwarden::daemon
