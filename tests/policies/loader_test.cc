// Invalid policy files and their exact messages; the action x kind table; --explain.
#include <doctest/doctest.h>

#include <filesystem>

#include "tests/policies/harness.h"

using namespace loopwarden;
using namespace loopwarden::testing;

TEST_CASE("invalid policy files fail with exact messages") {
  struct Case {
    const char* name;
    const char* yaml;
    const char* errors;
  };
  const Case cases[] = {
      {"kind typo", "policies:\n  - {name: a, resource: baseten.rn, action: deactivate}\n",
       "p.yaml:2:25: policies[0].resource: unknown value 'baseten.rn' (did you mean 'baseten.run'?)"},
      {"action typo", "policies:\n  - {name: a, resource: baseten.run, action: deactivte}\n",
       "p.yaml:2:46: policies[0].action: unknown value 'deactivte' (did you mean 'deactivate'?)"},
      {"unknown key", "policies:\n  - {name: a, resource: baseten.run, action: deactivate, grase: 5m}\n",
       "p.yaml:2:58: policies[0]: unknown key 'grase' (did you mean 'grace'?)"},
      {"missing action", "policies:\n  - {name: a, resource: baseten.run}\n",
       "p.yaml:2:5: policies[0]: missing required key 'action'"},
      {"missing resource", "policies:\n  - {name: a, action: deactivate}\n",
       "p.yaml:2:5: policies[0]: missing required key 'resource' (or 'budget' for a budget policy)"},
      {"unsupported action",
       "policies:\n  - {name: a, resource: fireworks.rlor_job, action: scale_to_zero}\n",
       "p.yaml:2:53: policies[0].action: action 'scale_to_zero' is not available for fireworks.rlor_job (supported: "
       "notify, cancel, delete)"},
      {"irreversible gate", "policies:\n  - {name: a, resource: fireworks.training_session, action: delete}\n",
       "p.yaml:2:61: policies[0].action: action 'delete' is irreversible; set allow_irreversible: true to allow it"},
      {"bad where field",
       "policies:\n  - name: a\n    resource: baseten.run\n    where: {idle: \">= 20m\"}\n    action: deactivate\n",
       "p.yaml:4:13: policies[0].where: unknown key 'idle' (did you mean 'idle_for'?)"},
      {"bad comparison",
       "policies:\n  - name: a\n    resource: baseten.run\n    where: {idle_for: \">= twenty\"}\n    action: deactivate\n",
       "p.yaml:4:23: policies[0].where.idle_for: invalid duration 'twenty': expected a number (examples: 90s, 20m, "
       "1h30m, 2d)"},
      {"lifecycle typo",
       "policies:\n  - name: a\n    resource: baseten.run\n    where: {lifecycle: runing}\n    action: deactivate\n",
       "p.yaml:4:24: policies[0].where.lifecycle: unknown value 'runing' (did you mean 'running'?)"},
      {"field not measured for the kind",
       "policies:\n  - name: a\n    resource: fireworks.rlor_job\n    where: {no_traffic_for: \">= 1h\"}\n    action: cancel\n",
       "p.yaml:4:13: policies[0]: 'no_traffic_for' is not measured for fireworks.rlor_job (it applies to "
       "baseten.sampler, baseten.deployment, fireworks.deployment)"},
      {"mode on a deployment",
       "policies:\n  - name: a\n    resource: baseten.deployment\n    where: {mode: dedicated}\n    action: deactivate\n",
       "p.yaml:4:13: policies[0]: 'mode' is not measured for baseten.deployment (it applies to baseten.run)"},
      {"baseten promote",
       "policies:\n  - {name: a, resource: baseten.run, action: delete, allow_irreversible: true, checkpoints: "
       "promote_latest}\n",
       "p.yaml:2:93: policies[0].checkpoints: Baseten has no checkpoint promotion (deploying one bills a new "
       "deployment); use checkpoints: refuse or ignore\n"
       "p.yaml:2:46: policies[0].action: deleting a Baseten run destroys every checkpoint nothing else uses; set "
       "checkpoints: ignore to accept that, or use deactivate (keeps them)"},
      {"checkpoints on a reversible action",
       "policies:\n  - {name: a, resource: baseten.run, action: deactivate, checkpoints: ignore}\n",
       "p.yaml:2:71: policies[0].checkpoints: 'checkpoints' only applies to delete and promote_then_delete"},
      {"promote_then_delete with refuse",
       "policies:\n  - {name: a, resource: fireworks.training_session, action: promote_then_delete, "
       "allow_irreversible: true, checkpoints: refuse}\n",
       "p.yaml:2:121: policies[0].checkpoints: promote_then_delete always promotes the newest checkpoint; remove "
       "'checkpoints' or set it to promote_latest"},
      {"duplicate names",
       "policies:\n  - {name: a, resource: baseten.run, action: notify}\n  - {name: a, resource: baseten.sampler, "
       "action: notify}\n",
       "p.yaml:3:12: policies[1].name: duplicate policy name 'a' (first at line 2)"},
      {"unknown notifier", "policies:\n  - {name: a, resource: baseten.run, action: notify, notify: [ml-slak]}\n",
       "p.yaml:2:62: policies[0].notify: no notifier named 'ml-slak' (did you mean 'ml-slack'?)"},
      {"budget action",
       "policies:\n  - {name: b, budget: {period: day, limit_usd: 500}, action: delete, allow_irreversible: true}\n",
       "p.yaml:2:62: policies[0].action: a budget policy's action must be notify or deactivate"},
      {"budget without limit", "policies:\n  - {name: b, budget: {period: day}, action: notify}\n",
       "p.yaml:2:23: policies[0].budget: missing required key 'limit_usd'"},
      {"budget unknown provider",
       "policies:\n  - {name: b, budget: {provider: btt, period: week, limit_usd: 5}, action: notify}\n",
       "p.yaml:2:34: policies[0].budget.provider: no provider named 'btt' (did you mean 'bt'?)"},
      {"budget unknown time zone",
       "policies:\n  - {name: b, budget: {period: month, limit_usd: 5, timezone: Europe/Berln}, action: notify}\n",
       "p.yaml:2:63: policies[0].budget.timezone: unknown time zone 'Europe/Berln' (no "
       "/usr/share/zoneinfo/Europe/Berln; names look like America/New_York)"},
      {"bad regex",
       "policies:\n  - name: a\n    resource: baseten.run\n    where: {name: \"^(tmp\"}\n    action: notify\n",
       "p.yaml:4:19: policies[0].where.name: invalid regular expression '^(tmp': missing ): ^(tmp"},
      {"not without a map",
       "policies:\n  - name: a\n    resource: baseten.run\n    where: {not: idle}\n    action: notify\n",
       "p.yaml:4:18: policies[0].where.not: expected a map of conditions, got 'idle'"},
      {"policy dry_run false",
       "policies:\n  - {name: a, resource: baseten.run, action: notify, dry_run: false}\n",
       "p.yaml:2:63: policies[0].dry_run: a policy's dry_run can only make it safer: set true or remove it (the "
       "global dry_run decides otherwise)"},
      {"limits out of range", "limits: {max_actions_percent: 150}\n",
       "p.yaml:1:31: limits.max_actions_percent: must be between 0 and 100, got 150"},
      {"exemption without reason", "exemptions:\n  - {id: k4q95w5}\n",
       "p.yaml:2:5: exemptions[0]: missing required key 'reason'"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    Loaded l = LoadPolicies(c.yaml);
    CHECK_FALSE(l.set.has_value());
    CHECK(l.errors == c.errors);
  }
}

TEST_CASE("every action x kind pair: the loader accepts exactly what the kind supports") {
  for (Kind k : AllKinds()) {
    for (ActionType a : {ActionType::kNotify, ActionType::kDeactivate, ActionType::kScaleToZero, ActionType::kCancel,
                         ActionType::kDelete, ActionType::kPromoteThenDelete}) {
      CAPTURE(KindName(k));
      CAPTURE(ActionName(a));
      std::string yaml = "policies:\n  - {name: p, resource: " + std::string(KindName(k)) + ", action: " +
                         std::string(ActionName(a)) + ", allow_irreversible: true" +
                         (k == Kind::kBasetenRun && a == ActionType::kDelete ? ", checkpoints: ignore" : "") + "}\n";
      Loaded l = LoadPolicies(yaml);
      CHECK(l.set.has_value() == KindSupports(k, a));
    }
  }
}

TEST_CASE("defaults are filled in and --explain prints the resolved set") {
  Loaded l = LoadPolicies(
      "policies:\n"
      "  - name: idle-dedicated\n"
      "    resource: baseten.run\n"
      "    where: {mode: dedicated, lifecycle: running, idle_for: \">= 20m\", not: {name: \"^keep-\"}}\n"
      "    action: deactivate\n"
      "  - name: slots\n"
      "    resource: fireworks.training_session\n"
      "    where: {or: [{idle_for: \"> 15m\"}, {flags: leaked}]}\n"
      "    when: {account_slot_headroom: \"<= 1\"}\n"
      "    action: promote_then_delete\n"
      "    allow_irreversible: true\n"
      "exemptions:\n"
      "  - {match: {owner: \"@serving\\\\.example\\\\.com$\"}, reason: serving team}\n");
  REQUIRE_MESSAGE(l.set.has_value(), l.errors);
  const auto& p = l.set->policies;
  CHECK(p[0].grace == std::chrono::minutes(15));
  CHECK(p[0].checkpoints == policies::CheckpointMode::kRefuse);
  CHECK(p[1].checkpoints == policies::CheckpointMode::kPromoteLatest);
  const std::string e = policies::Explain(*l.set, true);
  CHECK(e.find("policy idle-dedicated\n  resource: baseten.run\n  where: mode = dedicated and lifecycle = running and "
               "idle_for >= 20m and not (name ~ /^keep-/)\n  when: (always)\n  action: deactivate (reversible first)\n"
               "  grace: 15m\n  notify: (none)\n  dry_run: yes (global)\n") == 0);
  CHECK(e.find("  where: idle_for > 15m or flags include [leaked]\n  when: account_slot_headroom <= 1\n  action: "
               "promote_then_delete (irreversible, allowed)\n  grace: 15m\n  checkpoints: promote_latest\n") !=
        std::string::npos);
  CHECK(e.find("limits: at most 10 actions and 20% of live resources per cycle\nexemptions: 1 global\n") != std::string::npos);
}

TEST_CASE("the where schema lists every field") {
  auto s = policies::WhereJsonSchema();
  const auto& props = s.at("properties").as_object();
  for (const char* f : {"and", "or", "not", "lifecycle", "mode", "availability", "idle_for", "no_traffic_for", "age",
                        "spend_usd", "burn_usd_per_hour", "gpus", "replicas", "base_model", "name", "owner", "labels",
                        "flags", "provider", "unpromoted_checkpoints"}) {
    CAPTURE(f);
    CHECK(props.contains(f));
  }
}

TEST_CASE("budget periods start at local midnight in the budget's time zone, daylight saving included") {
  if (!std::filesystem::exists("/usr/share/zoneinfo/Europe/Berlin")) {
    MESSAGE("SKIP: no /usr/share/zoneinfo (Debian's tzdata)");
    return;
  }
  Loaded l = LoadPolicies(
      "policies:\n  - {name: b, budget: {period: day, limit_usd: 500, timezone: Europe/Berlin}, action: notify}\n");
  REQUIRE_MESSAGE(l.set.has_value(), l.errors);
  const policies::Budget& b = *l.set->policies[0].budget;
  REQUIRE(b.tz);
  auto T = [](const char* s) { return ParseTime(s).value(); };
  using policies::Period;
  CHECK(policies::PeriodStart(Period::kDay, T("2026-07-15T10:00:00Z"), b.tz.get()) == T("2026-07-14T22:00:00Z"));
  CHECK(policies::PeriodStart(Period::kDay, T("2026-07-14T21:59:00Z"), b.tz.get()) == T("2026-07-13T22:00:00Z"));
  // The spring-forward day is 23 hours long.
  CHECK(policies::PeriodStart(Period::kDay, T("2026-03-29T12:00:00Z"), b.tz.get()) == T("2026-03-28T23:00:00Z"));
  CHECK(policies::PeriodEnd(Period::kDay, T("2026-03-29T12:00:00Z"), b.tz.get()) == T("2026-03-29T22:00:00Z"));
  // The budget's own Start/End (spend, forecast and notice dedupe use these) carry its zone.
  CHECK(b.Start(T("2026-07-15T10:00:00Z")) == T("2026-07-14T22:00:00Z"));
  CHECK(b.End(T("2026-07-15T10:00:00Z")) == T("2026-07-15T22:00:00Z"));
  CHECK(policies::PeriodStart(Period::kMonth, T("2026-08-01T10:00:00Z"), b.tz.get()) == T("2026-07-31T22:00:00Z"));
  CHECK(policies::PeriodEnd(Period::kMonth, T("2026-08-01T10:00:00Z"), b.tz.get()) == T("2026-08-31T22:00:00Z"));
  CHECK(policies::PeriodStart(Period::kWeek, T("2026-12-03T10:00:00Z"), b.tz.get()) == T("2026-11-29T23:00:00Z"));
  // Without a zone: UTC, as before.
  CHECK(policies::PeriodStart(Period::kDay, T("2026-07-15T10:00:00Z")) == T("2026-07-15T00:00:00Z"));
  CHECK(policies::PeriodEnd(Period::kMonth, T("2026-12-03T10:00:00Z")) == T("2027-01-01T00:00:00Z"));
  CHECK(policies::Explain(*l.set, true).find("periods from midnight Europe/Berlin") != std::string::npos);
}
