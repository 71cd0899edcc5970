#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <filesystem>
#include <future>
#include <map>
#include <string>

#include "config/config.h"
#include "core/secrets.h"
#include "daemon/config_reload.h"
#include "reconcile/views.h"
#include "reconcile/wiring.h"
#include "tests/store/fixtures.h"
#include "tests/testing/run_async.h"
#include "tests/testing/temp_dir.h"

namespace lw = loopwarden;
namespace config = loopwarden::config;
using namespace std::chrono_literals;

namespace {

config::LoadOptions FakeEnv() {
  static const std::map<std::string, std::string> env = {
      {"BT_KEY", "bt-test-key-0001"},
      {"FW_KEY", "fw-test-key-0002"},
      {"SLACK_URL", "https://hooks.slack.com/services/T0/B0/testsecret"},
      {"BASETEN_API_KEY", "bt-example-key"},
      {"FIREWORKS_API_KEY", "fw-example-key"},
      {"SLACK_WEBHOOK_URL", "https://hooks.slack.com/services/T1/B1/examplesecret"},
      {"HOOK_SECRET", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
      {"LOOPWARDEN_ADMIN_TOKEN", "admin-example-token"},
  };
  config::LoadOptions o;
  o.env = [](const std::string& k) -> std::optional<std::string> {
    auto it = env.find(k);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  return o;
}

std::string Bad(const std::string& name) { return "tests/daemon/testdata/bad/" + name; }

}  // namespace

TEST_CASE("bad configuration files fail with exact messages naming file:line:col") {
  struct Case {
    const char* file;
    const char* message;
  };
  const Case cases[] = {
      {"01-unknown-top-key.yaml", "2:1: unknown key 'pol_interval' (did you mean 'poll_interval'?)"},
      {"02-wrong-type.yaml", "2:10: dry_run: expected true or false, got 'maybe'"},
      {"03-bad-duration.yaml",
       "2:16: poll_interval: invalid duration 'soon': expected a number (examples: 90s, 20m, 1h30m, 2d)"},
      {"04-inline-secret.yaml",
       "5:14: providers[0].api_key: inline secrets are not allowed; use api_key_env or api_key_file"},
      {"05-missing-env.yaml", "5:18: providers[0].api_key_env: environment variable NOT_SET_ANYWHERE is not set"},
      {"06-provider-type-typo.yaml", "4:11: providers[0].type: unknown value 'basetne' (did you mean 'baseten'?)"},
      {"07-plain-http.yaml",
       "5:15: providers[0].base_url: plain http is only allowed to loopback addresses; use https"},
      {"08-duplicate-provider.yaml", "4:12: providers[1].name: duplicate provider name 'bt'"},
      {"20-duplicate-notifier.yaml", "6:12: notifiers[1].name: duplicate notifier name 'ml-slack'"},
      {"09-kind-typo.yaml", "6:15: policies[0].resource: unknown value 'baseten.rn' (did you mean 'baseten.run'?)"},
      {"10-irreversible-without-allow.yaml",
       "8:13: policies[0].action: action 'delete' is irreversible; set allow_irreversible: true to allow it"},
      {"11-unknown-notifier.yaml",
       "10:13: policies[0].notify: no notifier named 'ml-slak' (did you mean 'ml-slack'?)"},
      {"12-action-not-supported.yaml",
       "7:13: policies[0].action: action 'scale_to_zero' is not available for baseten.run (supported: notify, "
       "deactivate, delete)"},
      {"13-field-not-measured.yaml",
       "7:13: policies[0]: 'no_traffic_for' is not measured for baseten.run (it applies to baseten.sampler, "
       "baseten.deployment, fireworks.deployment)"},
      {"15-yaml-syntax.yaml", "4:1: YAML syntax error: end of map flow not found"},
      {"16-empty.yaml", "1:1: the file is empty (it needs at least 'providers')"},
      {"18-baseten-delete-checkpoints.yaml",
       "7:13: policies[0].action: deleting a Baseten run destroys every checkpoint nothing else uses; set "
       "checkpoints: ignore to accept that, or use deactivate (keeps them)"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.file);
    auto r = config::LoadConfig(Bad(c.file), FakeEnv());
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == lw::StatusCode::kInvalidArgument);
    CHECK(r.status().message() == Bad(c.file) + ":" + c.message);
  }
}

TEST_CASE("every error in a file is reported, not just the first") {
  auto r = config::LoadConfig(Bad("14-several-errors.yaml"), FakeEnv());
  REQUIRE_FALSE(r.ok());
  const std::string f = Bad("14-several-errors.yaml");
  CHECK(r.status().message() ==
        f + ":2:16: poll_interval: must be at least 1s, got 0s\n" +
        f + ":3:9: listen: expected host:port, got 'localhost'\n" +
        f + ":6:33: limits.max_actions_per_cycle: must be between 0 and 100000, got -1\n" +
        f + ":6:37: limits: unknown key 'max_actions_prcent' (did you mean 'max_actions_percent'?)");
  auto n = config::LoadConfig(Bad("17-notifiers-incomplete.yaml"), FakeEnv());
  const std::string g = Bad("17-notifiers-incomplete.yaml");
  CHECK(n.status().message() ==
        g + ":5:5: notifiers[0]: a slack notifier needs webhook_url_env or webhook_url_file\n" +
        g + ":6:5: notifiers[1]: a webhook notifier needs secret_env or secret_file (it signs every call)");
  auto e = config::LoadConfig(Bad("19-bad-exemptions.yaml"), FakeEnv());
  const std::string h = Bad("19-bad-exemptions.yaml");
  CHECK(e.status().message() ==
        h + ":5:5: exemptions[0]: an exemption needs 'id' or a non-empty 'match'\n" + h +
        ":6:22: exemptions[1].until: invalid timestamp 'tomorrow': expected an RFC 3339 time like 2026-12-31T00:00:00Z");
}

TEST_CASE("an inline secret never reaches the error text") {
  auto r = config::LoadConfig(Bad("04-inline-secret.yaml"), FakeEnv());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("sk-live-abcdef123456") == std::string::npos);
}

TEST_CASE("the example configuration loads with its defaults filled in") {
  auto r = config::LoadConfig("examples/loopwarden.yaml", FakeEnv());
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  const config::Config& c = *r;
  CHECK(c.dry_run);
  CHECK(c.poll_interval == 60s);
  CHECK(c.poll_concurrency == 4);
  REQUIRE(c.providers.size() == 2);
  CHECK(c.providers[0].type == lw::ProviderType::kBaseten);
  CHECK(c.providers[0].requests_per_minute == 3000);
  CHECK(c.providers[0].slot_cap == 4);
  CHECK(c.providers[0].reconcile_days == 7);  // a week of bills read back and backfilled
  CHECK(c.providers[1].account == "my-account");
  CHECK(c.providers[1].requests_per_minute == 600);
  CHECK(c.providers[1].slot_cap == 8);
  CHECK(c.providers[1].api_key.value == "fw-example-key");
  CHECK(c.providers[1].api_key.source == "env FIREWORKS_API_KEY");
  CHECK(c.pricing.gpu_hour_usd.at("H100").micros() == 6'500'000);
  CHECK(c.pricing.tokens_per_million_usd.at("accounts/fireworks/models/qwen3p8-27b").cached_prefill->micros() ==
        372'000);
  REQUIRE(c.policy_set.policies.size() == 5);
  CHECK(c.policy_set.policies[0].grace == 10min);
  CHECK(c.policy_set.policies[3].checkpoints == lw::policies::CheckpointMode::kPromoteLatest);
  CHECK(c.policy_set.policies[4].budget->limit.micros() == 500'000'000);
  CHECK(c.policy_set.exemptions.size() == 2);
  CHECK(c.policy_set.limits.max_actions_per_cycle == 10);
  // Secrets read from the environment are registered for redaction at once.
  CHECK(lw::ContainsSecret("x https://hooks.slack.com/services/T1/B1/examplesecret x"));
  CHECK(lw::ContainsSecret("admin-example-token"));
}

TEST_CASE("the JSON Schema is valid JSON generated from the loader's definitions") {
  const std::string s = config::ConfigJsonSchema();
  boost::system::error_code ec;
  auto v = boost::json::parse(s, ec);
  REQUIRE_FALSE(ec);
  const auto& o = v.as_object();
  CHECK(o.at("$schema").as_string() == "https://json-schema.org/draft/2020-12/schema");
  const auto& props = o.at("properties").as_object();
  for (const char* k : {"state_path", "poll_interval", "dry_run", "listen", "admin_token_env", "admin_token_file",
                        "providers", "pricing", "notifiers", "exemptions", "limits", "policies"}) {
    CAPTURE(k);
    CHECK(props.contains(k));
  }
  CHECK_FALSE(props.contains("admin_token"));
  CHECK(o.at("$defs").as_object().at("where").as_object().at("properties").as_object().contains("idle_for"));
  const auto& policy = props.at("policies").as_object().at("items").as_object();
  CHECK(policy.at("properties").as_object().at("resource").as_object().at("enum").as_array().size() == 7);
}

TEST_CASE("listen addresses") {
  CHECK(config::ParseListen("127.0.0.1:8464").value() == std::make_pair(std::string("127.0.0.1"), uint16_t{8464}));
  CHECK(config::ParseListen("[::1]:80").value().first == "::1");
  CHECK(config::ParseListen(":8464").value().first == "0.0.0.0");
  CHECK_FALSE(config::ParseListen("localhost").ok());
  CHECK_FALSE(config::ParseListen("x:99999").ok());
}

namespace {
std::string Providers(const std::string& provider_line, const std::string& top = "") {
  return top + "providers:\n" + provider_line + "policies: []\n";
}
}  // namespace

TEST_CASE("hardening: plain http only to a literal loopback address") {
  for (const char* ok : {"http://127.0.0.1:8080", "http://127.8.9.10", "http://[::1]:8080", "https://api.baseten.co"}) {
    CAPTURE(std::string(ok));
    auto r = config::LoadConfigText(Providers(std::string("  - {name: bt, type: baseten, base_url: \"") + ok +
                                              "\", api_key_env: BT_KEY}\n"),
                                    "t.yaml", FakeEnv());
    CHECK_MESSAGE(r.ok(), r.status().message());
  }
  for (const char* bad : {"http://127.attacker.example", "http://127.0.0.1.attacker.example", "http://localhost:8080",
                          "http://127.0.0.256", "http://128.0.0.1", "http://127.1", "http://10.0.0.1"}) {
    CAPTURE(std::string(bad));
    auto r = config::LoadConfigText(Providers(std::string("  - {name: bt, type: baseten, base_url: \"") + bad +
                                              "\", api_key_env: BT_KEY}\n"),
                                    "t.yaml", FakeEnv());
    REQUIRE_FALSE(r.ok());
    const std::string m = r.status().message();
    CHECK((m.find("plain http is only allowed to loopback addresses") != std::string::npos ||
           m.find("malformed host") != std::string::npos));
  }
}

TEST_CASE("hardening: a key pasted where a variable or file name goes is not echoed, whatever the parse order") {
  const std::string key = "sk-live-Zq81aPasted0000";
  auto env = config::LoadConfigText(Providers("  - {name: bt, type: baseten, api_key_env: " + key + "}\n"), "t.yaml",
                                    FakeEnv());
  REQUIRE_FALSE(env.ok());
  CHECK(env.status().message().find("not an environment variable name") != std::string::npos);
  CHECK(env.status().message().find(key) == std::string::npos);
  auto file = config::LoadConfigText(Providers("  - {name: bt, type: baseten, api_key_file: " + key + "}\n"), "t.yaml",
                                     FakeEnv());
  REQUIRE_FALSE(file.ok());
  CHECK(file.status().message().find("cannot read secret file") != std::string::npos);
  CHECK(file.status().message().find(key) == std::string::npos);
  // A secret expanded into a field read before the provider that holds it.
  auto early = config::LoadConfigText(
      Providers("  - {name: bt, type: baseten, api_key_env: BT_KEY}\n", "poll_interval: ${BT_KEY}\n"), "t.yaml",
      FakeEnv());
  REQUIRE_FALSE(early.ok());
  CHECK(early.status().message().find("poll_interval") != std::string::npos);
  CHECK(early.status().message().find("bt-test-key-0001") == std::string::npos);
}

TEST_CASE("hardening: out-of-range durations and a FIFO as the configuration are refused, never wrapped or waited on") {
  auto huge = config::LoadConfigText(
      "providers: []\npolicies:\n  - {name: p, resource: baseten.run, where: {idle_for: \">= 5124095577h\"}, action: notify}\n",
      "t.yaml", FakeEnv());
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.status().message().find("too large") != std::string::npos);
  const std::string fifo = (std::filesystem::temp_directory_path() / ("lw-fifo-" + std::to_string(getpid()))).string();
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  auto r = config::LoadConfig(fifo, FakeEnv());  // no writer: this would block forever
  std::filesystem::remove(fifo);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("not a regular file") != std::string::npos);
}

TEST_CASE("hardening: a map with 215,000 keys is checked for duplicates in one pass, and each duplicate named") {
  std::string yaml = "providers: []\npricing:\n  gpu_hour_usd:\n";
  for (int i = 0; i < 215'000; ++i) yaml += "    G" + std::to_string(i) + ": 1.0\n";
  yaml += "    G7: 2.0\n";  // the one duplicate, on the last line
  const auto start = std::chrono::steady_clock::now();
  auto r = config::LoadConfigText(yaml, "big.yaml", FakeEnv());
  const auto took = std::chrono::steady_clock::now() - start;
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("duplicate key 'G7' (first at line 11)") != std::string::npos);
  // Pairwise, this took 164 s; in one pass it is a second or two even under sanitizers.
  CHECK(took < std::chrono::seconds(60));
}

TEST_CASE("hardening: a reload is parsed off the io thread, which keeps serving meanwhile") {
  // Issue 17: SIGHUP with a configuration near the 4 MiB limit held the io thread (and
  // with it /healthz and /metrics) for the 2.5 s of parsing. Here the parse cannot finish
  // until a handler has run on the io thread: on that thread it would wait out its 20 s
  // and fail.
  boost::asio::io_context ioc;
  boost::asio::thread_pool pool(1);
  auto served = std::make_shared<std::promise<void>>();
  const std::string text = Providers("  - {name: bt, type: baseten, api_key_env: BT_KEY}\n");
  std::function<lw::Result<config::Config>()> load = [&ioc, served, text]() -> lw::Result<config::Config> {
    std::future<void> f = served->get_future();
    boost::asio::post(ioc, [served] { served->set_value(); });
    if (f.wait_for(10s) != std::future_status::ready) return lw::DeadlineExceeded("the io thread was held");
    return config::LoadConfigText(text, "t.yaml", FakeEnv());
  };
  std::optional<lw::Result<config::Config>> got;
  lw::testing::RunAsync(ioc, [&]() -> boost::asio::awaitable<void> {
    got = co_await lw::daemon::LoadOffThread(pool, std::move(load));
  }(), 30s);
  REQUIRE(got.has_value());
  REQUIRE_MESSAGE(got->ok(), got->status().message());
  CHECK((*got)->providers.size() == 1);
}

TEST_CASE("built-in price cards are the providers' published list prices, and pricing: overrides them") {
  lw::Resource fw;
  fw.provider_type = lw::ProviderType::kFireworks;
  fw.billing.gpu_type = "H100";
  fw.base_model = "accounts/fireworks/models/qwen3p8-27b";
  lw::Resource bt = fw;
  bt.provider_type = lw::ProviderType::kBaseten;
  const lw::store::PriceBook defaults = lw::reconcile::ToPriceBook(config::Pricing{});
  CHECK(defaults.GpuHour(fw) == lw::ParseMoney("7.00").value());
  CHECK(defaults.GpuHour(bt) == lw::ParseMoney("6.50").value());  // Baseten's fallback when its price list fails
  CHECK(defaults.TokenPrice(fw, "train") == lw::ParseMoney("4.103").value());
  CHECK(defaults.TokenPrice(fw, "cached_prefill") == lw::ParseMoney("0.372").value());
  CHECK_FALSE(defaults.TokenPrice(bt, "train").has_value());  // Baseten publishes no token rates
  fw.billing.gpu_type = "MI300X";
  CHECK_FALSE(defaults.GpuHour(fw).has_value());
  config::Pricing configured;
  configured.gpu_hour_usd["MI300X"] = lw::ParseMoney("4.20").value();
  configured.gpu_hour_usd["H100"] = lw::ParseMoney("5.00").value();
  configured.tokens_per_million_usd["accounts/fireworks/models/qwen3p8-27b"].train = lw::ParseMoney("3.00").value();
  const lw::store::PriceBook b = lw::reconcile::ToPriceBook(configured);
  CHECK(b.GpuHour(fw) == lw::ParseMoney("4.20").value());
  fw.billing.gpu_type = "H100";
  CHECK(b.GpuHour(fw) == lw::ParseMoney("5.00").value());
  CHECK(b.TokenPrice(fw, "train") == lw::ParseMoney("3.00").value());
  CHECK(b.TokenPrice(fw, "sample") == lw::ParseMoney("5.595").value());  // the rest of the card still applies
}

TEST_CASE("budget forecast: at a steady burn, mid-period it predicts the period's end, and when the limit falls") {
  // Issue 15's bar: a mid-period forecast within 5 % of the period's end. A run at
  // $52/h all day: at noon $624 is spent and $1,248 is where the day ends.
  lw::testing::TempDir dir;
  auto s = lw::store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  const lw::Time midnight = lw::ParseTime("2026-08-01T00:00:00Z").value();
  lw::ListedResource r = lw::testing::Run("g8");  // 8 H100 x $6.50
  r.activity.busy_now = true;
  auto snap = lw::testing::Snap({r});
  for (int h = 0; h <= 12; ++h) {
    REQUIRE((*s)->Ingest({&snap, 1}, midnight + std::chrono::hours(h), lw::testing::Prices()).ok());
  }
  lw::policies::PolicySet set;
  lw::policies::Policy p;
  p.name = "day";
  p.action = lw::ActionType::kNotify;
  p.budget = lw::policies::Budget{};
  p.budget->period = lw::policies::Period::kDay;
  p.budget->limit = lw::Money::FromDollars(1000);
  set.policies.push_back(p);
  const lw::Time noon = midnight + 12h;
  auto ctx = lw::reconcile::BuildEvalContext(**s, set, {}, noon, true);
  REQUIRE(ctx.ok());
  CHECK((*ctx)->input.budget_spend.at("day") == lw::Money::FromDollars(624));
  const auto& f = (*ctx)->input.budget_forecast.at("day");
  CHECK(f.ends_at == midnight + 24h);
  CHECK(f.period_end == lw::Money::FromDollars(1248));  // the day's real end at this burn
  REQUIRE(f.crosses_at.has_value());
  // $376 left at $52/h: 7 h 13 m 50.77 s after noon.
  CHECK(std::chrono::duration_cast<std::chrono::seconds>(*f.crosses_at - noon).count() == 26030);
  // A fleet started an hour ago shows at once: the current burn, not the day's average.
  lw::ListedResource big = lw::testing::Run("g64", 64);
  big.activity.busy_now = true;
  auto both = lw::testing::Snap({r, big});
  REQUIRE((*s)->Ingest({&both, 1}, noon, lw::testing::Prices()).ok());
  auto later = lw::reconcile::BuildEvalContext(**s, set, {}, noon, true);
  REQUIRE(later.ok());
  CHECK((*later)->input.budget_forecast.at("day").period_end == lw::Money::FromDollars(624 + 12 * (52 + 416)));
}
