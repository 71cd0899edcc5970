#pragma once
// The loopwarden configuration file: its shape, its loader and its JSON Schema.
//
// LoadConfig reads one YAML file strictly: unknown keys and wrong types are errors
// naming file:line:col with the nearest valid key; ${ENV} expands in every scalar;
// secrets come only through `<key>_env` / `<key>_file` and are registered with the
// redactor as they are read. All errors are reported, not just the first.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/money.h"
#include "core/resource.h"
#include "core/schema.h"
#include "core/time.h"
#include "policies/model.h"

namespace loopwarden::config {

struct ProviderConfig {
  std::string name;
  ProviderType type = ProviderType::kBaseten;
  std::string base_url;
  std::string account;  // Fireworks account id
  schema::Secret api_key;
  std::string ca_file;  // extra CA bundle; TLS is always verified
  // Baseten: "bearer" (Authorization: Bearer) or "api_key" (Authorization: Api-Key);
  // Fireworks: "bearer" or "x_api_key".
  std::string auth = "bearer";
  int64_t max_concurrency = 8;
  int64_t requests_per_minute = 0;  // 0: the provider's default budget
  Duration request_timeout = std::chrono::seconds(30);
  int64_t max_response_mib = 64;
  // Activity detection.
  Duration activity_window = std::chrono::hours(1);
  double gpu_idle_threshold = 0.05;
  // The provider's own inactivity timeout assumed for Baseten dedicated runs.
  Duration scale_down_delay = std::chrono::seconds(900);
  // Slot cap: Fireworks concurrent sessions (8), Baseten live runs + samplers (4).
  int64_t slot_cap = 0;  // 0: the provider's default
  // How often provider usage (billing) endpoints are read for reconciliation.
  Duration usage_interval = std::chrono::hours(1);
  // How many finished UTC days back the ledger is reconciled with the bill (0: never).
  // A resource's days before first sight inside this window are backfilled.
  int64_t reconcile_days = 7;
  // Per-resource detail reads per poll, and how long reused details stay valid.
  int64_t detail_calls_per_poll = 400;
  Duration detail_max_age = std::chrono::minutes(10);
};

struct TokenRates {
  std::optional<Money> prefill;
  std::optional<Money> cached_prefill;
  std::optional<Money> sample;
  std::optional<Money> train;
};

struct Pricing {
  std::map<std::string, Money> gpu_hour_usd;  // per GPU-hour by normalized GPU type
  std::map<std::string, TokenRates> tokens_per_million_usd;  // by base model id
};

enum class NotifierType { kSlack, kWebhook };

struct NotifierConfig {
  std::string name;
  NotifierType type = NotifierType::kSlack;
  schema::Secret webhook_url;  // slack
  std::string url;             // webhook (not secret; the signing secret is)
  schema::Secret secret;       // webhook: Standard Webhooks signing secret (whsec_…)
  std::string ca_file;
  Duration timeout = std::chrono::seconds(10);
};

struct Config {
  std::string path;  // where it was loaded from
  std::string state_path = "/var/lib/loopwarden/loopwarden.db";
  Duration poll_interval = std::chrono::seconds(60);
  // Provider accounts listed at once, and whose bills are read at once. Each account's
  // listing (its response bodies and the objects parsed from them; each Resource built
  // from them is recorded at once) or bill is held until it is recorded, so this bounds
  // the memory a cycle takes above the stored state; a few suffice to overlap many
  // accounts' network waits.
  int64_t poll_concurrency = 4;
  bool dry_run = true;
  // Not 9464 (OpenTelemetry's Prometheus exporter, often in the same pod) and outside
  // 9100-9999, the range Prometheus's default-port registry hands to exporters.
  std::string listen = "127.0.0.1:8464";
  schema::Secret admin_token;
  std::vector<ProviderConfig> providers;
  Pricing pricing;
  std::vector<NotifierConfig> notifiers;
  policies::PolicySet policy_set;
  // Ledger intervals and transitions older than this roll up into hourly/daily totals.
  Duration retention = std::chrono::hours(24 * 30);
  // Bound on finishing in-flight calls at SIGTERM.
  Duration drain_timeout = std::chrono::seconds(10);
  // With the state in PostgreSQL: how long a leader's lease runs without renewal, so
  // how soon a replica takes over from one that died or hangs.
  Duration leader_lease = std::chrono::seconds(15);
};

struct LoadOptions {
  // False: check the shape of secret references without reading them.
  bool resolve_secrets = true;
  // Environment lookup; default getenv.
  schema::Context::EnvLookup env;
};

// Loads and validates `path`. On failure the Status message holds every error, one
// "file:line:col: message" per line.
Result<Config> LoadConfig(const std::string& path, const LoadOptions& options = {});
// The same from text (tests, fuzzers); `origin` names it in errors.
Result<Config> LoadConfigText(std::string_view text, std::string_view origin, const LoadOptions& options = {});

// The JSON Schema (draft 2020-12) of the whole file, generated from the loader's own
// definitions.
std::string ConfigJsonSchema();

// Host and port of `listen` ("127.0.0.1:8464", "[::1]:8464", ":8464").
Result<std::pair<std::string, uint16_t>> ParseListen(std::string_view listen);

}  // namespace loopwarden::config
