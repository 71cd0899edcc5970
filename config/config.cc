#include "config/config.h"

#include <boost/json/serialize.hpp>
#include <boost/url/parse.hpp>

#include <algorithm>

#include "core/secrets.h"
#include "core/strings.h"
#include "policies/loader.h"

namespace loopwarden::config {
namespace {

using schema::Context;
using schema::Type;
namespace bj = boost::json;

SourceMark MarkOf(const ConfigNode& n, std::string_view key) {
  const ConfigNode* v = n.Find(key);
  return v ? v->mark : n.mark;
}

// A literal loopback address only: 127.0.0.0/8 in dotted decimal, or ::1. Not a name:
// "localhost" can be made to resolve anywhere, and "127.attacker.example" is a name.
bool IsLoopbackHost(std::string_view host) {
  if (host == "::1" || host == "[::1]") return true;
  int octets = 0;
  size_t i = 0;
  while (i <= host.size() && octets < 4) {
    size_t j = i;
    int value = 0;
    while (j < host.size() && j - i < 3 && host[j] >= '0' && host[j] <= '9') value = value * 10 + (host[j++] - '0');
    if (j == i || value > 255) return false;
    if (octets == 0 && value != 127) return false;
    ++octets;
    if (j == host.size()) return octets == 4;
    if (host[j] != '.') return false;
    i = j + 1;
  }
  return false;
}

// URLs must be https, or http to a loopback address (the simulator): an API key or a
// webhook never crosses a network in the clear. Returns an error message or "".
std::string UrlProblem(const std::string& url) {
  auto parsed = boost::urls::parse_absolute_uri(url);
  if (!parsed) return "not an absolute URL: '" + url + "'";
  const std::string scheme(parsed->scheme());
  const std::string host(parsed->host());
  // Boost.URL 1.81 reads "http://127.0.0.1.attacker.example/v1" as host 127.0.0.1 with
  // the path ".attacker.example/v1": a path must start with '/'.
  const std::string path(parsed->encoded_path());
  if (!path.empty() && path.front() != '/') return "malformed host in '" + url + "'";
  if (scheme == "https") return "";
  if (scheme == "http" && IsLoopbackHost(host)) return "";
  if (scheme == "http") return "plain http is only allowed to loopback addresses; use https";
  return "unsupported scheme '" + scheme + "' (use https)";
}

Type<std::string> UrlType() {
  return schema::Validated<std::string>(schema::String(), [](const std::string& u) { return UrlProblem(u); });
}

Type<ProviderConfig> ProviderType() {
  schema::Object<ProviderConfig> o("A provider account loopwarden governs");
  o.Field("name", &ProviderConfig::name, schema::String(), {.required = true, .description = "unique name used in policies, metrics and reports"});
  o.Field("type", &ProviderConfig::type,
          schema::Enum<loopwarden::ProviderType>({{"baseten", loopwarden::ProviderType::kBaseten},
                                                  {"fireworks", loopwarden::ProviderType::kFireworks}}),
          {.required = true});
  o.Field("base_url", &ProviderConfig::base_url, UrlType(),
          {.description = "API root (default https://api.baseten.co or https://api.fireworks.ai)"});
  o.Field("account", &ProviderConfig::account, schema::String(),
          {.description = "Fireworks account id; discovered from the key when absent"});
  o.SecretField("api_key", &ProviderConfig::api_key, {.required = true, .description = "the API key"});
  o.Field("ca_file", &ProviderConfig::ca_file, schema::String(),
          {.description = "PEM bundle trusted in addition to the system CAs"});
  o.Field("auth", &ProviderConfig::auth, schema::String(),
          {.description = "header form: bearer (default), api_key (Baseten) or x_api_key (Fireworks)"});
  o.Field("max_concurrency", &ProviderConfig::max_concurrency, schema::Integer(1, 256),
          {.description = "requests in flight at once (default 8)"});
  o.Field("requests_per_minute", &ProviderConfig::requests_per_minute, schema::Integer(0, 1'000'000),
          {.description = "request budget (default: Baseten 3000, Fireworks 600)"});
  o.Field("request_timeout", &ProviderConfig::request_timeout, schema::DurationAtLeast(std::chrono::seconds(1)),
          {.description = "per-phase network timeout (default 30s)"});
  o.Field("activity_window", &ProviderConfig::activity_window, schema::DurationAtLeast(std::chrono::minutes(5)),
          {.description = "the least history metrics are read for on first sight; policies extend it (default 1h)"});
  o.Field("max_response_mib", &ProviderConfig::max_response_mib, schema::Integer(1, 1024),
          {.description = "largest provider response read, in MiB; a larger one fails that call (default 64)"});
  o.Field("gpu_idle_threshold", &ProviderConfig::gpu_idle_threshold, schema::Number(0.0, 1.0),
          {.description = "GPU utilization at or below which a rank counts as idle (default 0.05)"});
  o.Field("scale_down_delay", &ProviderConfig::scale_down_delay, schema::DurationType(),
          {.description = "Baseten's dedicated-run inactivity timeout to assume (default 900s)"});
  o.Field("slot_cap", &ProviderConfig::slot_cap, schema::Integer(0, 100000),
          {.description = "account cap on concurrent slots (default: Fireworks 8 sessions, Baseten 4 runs+samplers)"});
  o.Field("usage_interval", &ProviderConfig::usage_interval, schema::DurationType(),
          {.description = "how often billing usage is read (default 1h)"});
  o.Field("reconcile_days", &ProviderConfig::reconcile_days, schema::Integer(0, 31),
          {.description = "finished UTC days of billed usage the ledger is reconciled with and backfilled from, "
                          "0 to never (default 7)"});
  o.Field("detail_calls_per_poll", &ProviderConfig::detail_calls_per_poll, schema::Integer(1, 1'000'000),
          {.description = "per-resource detail reads (metrics, checkpoints, per-model deployments) one poll may make; "
                          "the rest reuse details younger than detail_max_age (default 400)"});
  o.Field("detail_max_age", &ProviderConfig::detail_max_age, schema::DurationAtLeast(std::chrono::seconds(1)),
          {.description = "how old reused details may be before the resource's activity is unknown (default 10m)"});
  o.Check([](Context& c, const ConfigNode& n, ProviderConfig& p) {
    const bool fw = p.type == loopwarden::ProviderType::kFireworks;
    if (p.base_url.empty()) p.base_url = fw ? "https://api.fireworks.ai" : "https://api.baseten.co";
    while (!p.base_url.empty() && p.base_url.back() == '/') p.base_url.pop_back();
    if (!fw && !p.account.empty()) c.KeyError(n, "account", "only Fireworks providers have an account id");
    const std::vector<std::string> auths = fw ? std::vector<std::string>{"bearer", "x_api_key"}
                                              : std::vector<std::string>{"bearer", "api_key"};
    if (std::find(auths.begin(), auths.end(), p.auth) == auths.end()) {
      c.KeyError(n, "auth", "must be one of " + Join(auths, ", ") + " for " + std::string(ProviderTypeName(p.type)));
    }
    if (p.requests_per_minute == 0) p.requests_per_minute = fw ? 600 : 3000;
    if (p.slot_cap == 0) p.slot_cap = fw ? 8 : 4;
  });
  return o.Build();
}

Type<TokenRates> TokenRatesType() {
  schema::Object<TokenRates> o("USD per million tokens, per meter");
  o.Optional("prefill", &TokenRates::prefill, schema::MoneyType());
  o.Optional("cached_prefill", &TokenRates::cached_prefill, schema::MoneyType());
  o.Optional("sample", &TokenRates::sample, schema::MoneyType());
  o.Optional("train", &TokenRates::train, schema::MoneyType());
  return o.Build();
}

Type<Pricing> PricingType() {
  schema::Object<Pricing> o("Prices that fill in or override what provider price lists give");
  o.Field("gpu_hour_usd", &Pricing::gpu_hour_usd, schema::MapOf(schema::MoneyType()),
          {.description = "USD per GPU-hour by GPU type (H100, H200, A100, B200, …)"});
  o.Field("tokens_per_million_usd", &Pricing::tokens_per_million_usd, schema::MapOf(TokenRatesType()),
          {.description = "serverless token rates by base model id"});
  return o.Build();
}

Type<NotifierConfig> NotifierType() {
  schema::Object<NotifierConfig> o("Where alerts go");
  o.Field("name", &NotifierConfig::name, schema::String(), {.required = true});
  o.Field("type", &NotifierConfig::type,
          schema::Enum<config::NotifierType>({{"slack", config::NotifierType::kSlack},
                                              {"webhook", config::NotifierType::kWebhook}}),
          {.required = true});
  o.SecretField("webhook_url", &NotifierConfig::webhook_url, {.description = "the Slack incoming-webhook URL"});
  o.Field("url", &NotifierConfig::url, UrlType(), {.description = "webhook receiver URL"});
  o.SecretField("secret", &NotifierConfig::secret, {.description = "the Standard Webhooks signing secret (whsec_…)"});
  o.Field("ca_file", &NotifierConfig::ca_file, schema::String());
  o.Field("timeout", &NotifierConfig::timeout, schema::DurationType(), {.description = "default 10s"});
  o.Check([](Context& c, const ConfigNode& n, NotifierConfig& nc) {
    if (nc.type == config::NotifierType::kSlack) {
      if (!nc.webhook_url.set()) c.Error(n.mark, "a slack notifier needs webhook_url_env or webhook_url_file");
      if (!nc.url.empty()) c.KeyError(n, "url", "slack notifiers take webhook_url_env or webhook_url_file");
      if (nc.secret.set()) c.Error(n.mark, "only webhook notifiers take a signing secret");
      if (nc.webhook_url.set() && !nc.webhook_url.value.empty()) {
        // The URL itself is secret: the message names the problem, never the value.
        if (std::string p = UrlProblem(nc.webhook_url.value); !p.empty()) {
          c.KeyError(n, n.Find("webhook_url_env") ? "webhook_url_env" : "webhook_url_file", "the URL it holds: " + p);
        }
      }
    } else {
      if (nc.url.empty()) c.Error(n.mark, "a webhook notifier needs url");
      if (!nc.secret.set()) c.Error(n.mark, "a webhook notifier needs secret_env or secret_file (it signs every call)");
      if (nc.webhook_url.set()) c.Error(n.mark, "webhook_url is for slack notifiers; a webhook takes url");
    }
  });
  return o.Build();
}

// The three policy keys live at the top level of the file but in one PolicySet.
template <class F, F policies::PolicySet::*Member>
Type<policies::PolicySet> Into(Type<F> inner) {
  Type<policies::PolicySet> t;
  auto read = inner.read;
  t.read = [read](Context& c, const ConfigNode& n, policies::PolicySet& s) { return read(c, n, s.*Member); };
  t.json = inner.json;
  return t;
}

schema::Object<Config> ConfigObject() {
  schema::Object<Config> o("loopwarden configuration");
  o.Field("state_path", &Config::state_path, schema::String(),
          {.description = "the SQLite database (default /var/lib/loopwarden/loopwarden.db), or a PostgreSQL DSN "
                          "(postgresql://user@host/db) shared by replicas"});
  o.Field("poll_interval", &Config::poll_interval, schema::DurationAtLeast(std::chrono::seconds(1)),
          {.description = "time between polls (default 60s)"});
  o.Field("poll_concurrency", &Config::poll_concurrency, schema::Integer(1, 256),
          {.description = "provider accounts listed, or their bills read, at once (default 4); each holds its "
                          "listing or bill in memory until it is recorded"});
  o.Field("dry_run", &Config::dry_run, schema::Bool(),
          {.description = "true (default): decide, log, notify and export, but change nothing"});
  o.Field("listen", &Config::listen, schema::Validated<std::string>(schema::String(), [](const std::string& l) {
            auto r = ParseListen(l);
            return r.ok() ? std::string() : r.status().message();
          }),
          {.description = "admin HTTP address for /metrics, /healthz, /readyz, /v1/* (default 127.0.0.1:8464)"});
  o.SecretField("admin_token", &Config::admin_token, {.description = "the bearer token of mutating admin endpoints"});
  o.Field("providers", &Config::providers, schema::ListOf(ProviderType()), {.required = true});
  o.Field("pricing", &Config::pricing, PricingType());
  o.Field("notifiers", &Config::notifiers, schema::ListOf(NotifierType()));
  o.Field("policies", &Config::policy_set,
          Into<std::vector<policies::Policy>, &policies::PolicySet::policies>(policies::PoliciesType()),
          {.description = "what loopwarden decides and does"});
  o.Field("exemptions", &Config::policy_set,
          Into<std::vector<policies::Exemption>, &policies::PolicySet::exemptions>(policies::ExemptionsType()),
          {.description = "resources no policy acts on"});
  o.Field("limits", &Config::policy_set,
          Into<policies::Limits, &policies::PolicySet::limits>(policies::LimitsType()),
          {.description = "blast-radius caps per cycle"});
  o.Field("retention", &Config::retention, schema::DurationType(),
          {.description = "detail kept before hourly/daily roll-up (default 30d)"});
  o.Field("drain_timeout", &Config::drain_timeout, schema::DurationType(),
          {.description = "bound on finishing in-flight calls at shutdown (default 10s)"});
  o.Field("leader_lease", &Config::leader_lease, schema::DurationAtLeast(std::chrono::seconds(1)),
          {.description = "PostgreSQL state: how long a leader holds its lease unrenewed; a replica takes over "
                          "within it (default 15s)"});
  o.Check([](Context& c, const ConfigNode& n, Config& cfg) {
    if (cfg.state_path.empty()) c.KeyError(n, "state_path", "must not be empty");
    if (cfg.providers.empty()) c.KeyError(n, "providers", "at least one provider is required");
    // Policies and exemptions refer to providers and notifiers by name: each is unique.
    auto unique_names = [&](const char* key, const char* what, const auto& items) {
      std::vector<std::string> seen;
      const ConfigNode* list = n.Find(key);
      for (size_t i = 0; i < items.size(); ++i) {
        const std::string& name = items[i].name;
        if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
          c.Error(list && i < list->items.size() ? MarkOf(list->items[i], "name") : n.mark,
                  std::string(key) + "[" + std::to_string(i) + "].name: duplicate " + what + " name '" + name + "'");
        }
        seen.push_back(name);
      }
      return seen;
    };
    const std::vector<std::string> provider_names = unique_names("providers", "provider", cfg.providers);
    const std::vector<std::string> notifier_names = unique_names("notifiers", "notifier", cfg.notifiers);
    static const ConfigNode kEmpty;
    const ConfigNode* policies_node = n.Find("policies");
    policies::CheckReferences(c, policies_node ? *policies_node : kEmpty, cfg.policy_set, notifier_names,
                              provider_names);
    const ConfigNode* ex = n.Find("exemptions");
    for (size_t i = 0; i < cfg.policy_set.exemptions.size(); ++i) {
      const auto& e = cfg.policy_set.exemptions[i];
      const SourceMark at = ex && i < ex->items.size() ? ex->items[i].mark : n.mark;
      if (!e.policy.empty() && std::none_of(cfg.policy_set.policies.begin(), cfg.policy_set.policies.end(),
                                            [&](const policies::Policy& p) { return p.name == e.policy; })) {
        c.Error(at, "exemptions[" + std::to_string(i) + "].policy: no policy named '" + e.policy + "'");
      }
      if (!e.match.provider.empty() &&
          std::find(provider_names.begin(), provider_names.end(), e.match.provider) == provider_names.end()) {
        c.Error(at, "exemptions[" + std::to_string(i) + "].match.provider: no provider named '" + e.match.provider + "'");
      }
    }
  });
  return o;
}

}  // namespace

Result<std::pair<std::string, uint16_t>> ParseListen(std::string_view listen) {
  std::string host;
  std::string_view port_text;
  if (!listen.empty() && listen.front() == '[') {
    size_t close = listen.find(']');
    if (close == std::string_view::npos || close + 1 >= listen.size() || listen[close + 1] != ':') {
      return InvalidArgument("expected [host]:port, got '" + std::string(listen) + "'");
    }
    host = std::string(listen.substr(1, close - 1));
    port_text = listen.substr(close + 2);
  } else {
    size_t colon = listen.rfind(':');
    if (colon == std::string_view::npos) return InvalidArgument("expected host:port, got '" + std::string(listen) + "'");
    host = std::string(listen.substr(0, colon));
    port_text = listen.substr(colon + 1);
  }
  if (host.empty()) host = "0.0.0.0";
  if (port_text.empty() || port_text.size() > 5 || port_text.find_first_not_of("0123456789") != std::string_view::npos) {
    return InvalidArgument("bad port in '" + std::string(listen) + "'");
  }
  int port = std::stoi(std::string(port_text));
  if (port > 65535) return InvalidArgument("port out of range in '" + std::string(listen) + "'");
  return std::make_pair(host, static_cast<uint16_t>(port));
}

Result<Config> LoadConfigText(std::string_view text, std::string_view origin, const LoadOptions& options) {
  LW_ASSIGN_OR_RETURN(ConfigNode root, ParseConfigText(text, origin));
  Context ctx{std::string(origin)};
  ctx.set_resolve_secrets(options.resolve_secrets);
  if (options.env) ctx.set_env(options.env);
  if (root.IsNull()) {
    return InvalidArgument(std::string(origin) + ":1:1: the file is empty (it needs at least 'providers')");
  }
  static const Type<Config> kType = ConfigObject().Build();
  Result<Config> cfg = schema::ReadDocument(ctx, root, kType);
  // Redacted once every secret is known: a field read before the secret that went into
  // it (`poll_interval: ${BASETEN_API_KEY}` above `providers:`) must not print it either.
  if (!cfg.ok()) return Status(cfg.status().code(), Redact(cfg.status().message()));
  cfg->path = std::string(origin);
  return cfg;
}

Result<Config> LoadConfig(const std::string& path, const LoadOptions& options) {
  LW_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path, (4 << 20) + 1));
  return LoadConfigText(text, path, options);
}

std::string ConfigJsonSchema() {
  bj::object root = ConfigObject().Build().json();
  bj::object out{{"$schema", "https://json-schema.org/draft/2020-12/schema"},
                 {"$id", "https://loopwarden.dev/schemas/config.json"},
                 {"title", "loopwarden configuration"}};
  for (auto& kv : root) out[kv.key()] = kv.value();
  out["$defs"] = bj::object{{"where", policies::WhereJsonSchema()}};
  return bj::serialize(out);
}

}  // namespace loopwarden::config
