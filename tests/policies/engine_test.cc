// Table-driven tests of the pure engine: every filter and condition, three-valued logic,
// exemptions with until, budgets, blast-radius caps, checkpoint modes.
#include <doctest/doctest.h>

#include <functional>

#include "policies/thresholds.h"
#include "tests/policies/harness.h"

using namespace loopwarden;
using namespace loopwarden::policies;
using namespace loopwarden::testing;
using namespace std::chrono_literals;

namespace {

const Time kNow = ParseTime("2026-08-01T10:00:00Z").value();

Resource Base(Kind kind = Kind::kBasetenRun) {
  Resource r;
  r.provider_type = KindProvider(kind);
  r.provider = KindProvider(kind) == ProviderType::kBaseten ? "bt" : "fw";
  r.account = r.provider == "bt" ? "bt" : "acme";
  r.kind = kind;
  r.id = "x1";
  r.name = "grpo-tickets";
  r.owner = "ana@example.com";
  r.base_model = "Qwen/Qwen3-8B";
  r.native_status = "ACTIVE";
  r.lifecycle = Lifecycle::kRunning;
  r.mode = kind == Kind::kBasetenRun ? Mode::kDedicated : Mode::kNone;
  r.availability = "dedicated";
  r.billing.meter = Meter::kGpuTime;
  r.billing.gpus_per_replica = 8;
  r.billing.replicas = 2;
  r.billing.billable = true;
  r.labels = {{"team", "ml"}};
  r.checkpoints.Mutable().known = true;
  return r;
}

Facts BaseFacts() {
  Facts f;
  f.idle_for = 47min;
  f.no_traffic_for = 3h;
  f.age = 6h;
  f.spend = Money::FromDollars(120);
  f.burn_per_hour = Money::FromDollars(104);
  return f;
}

Policy One(const std::string& yaml) {
  Loaded l = LoadPolicies("policies:\n" + yaml);
  REQUIRE_MESSAGE(l.set.has_value(), l.errors);
  return l.set->policies.at(0);
}

Tri Where(const std::string& kind, const std::string& where, const Resource& r, const Facts& f) {
  Policy p = One("  - {name: t, resource: " + kind + ", action: notify, where: " + where + "}\n");
  const ResourceView v = ResourceView::With(&r, &f);
  std::vector<std::string> why;
  return EvalFilter(p.where, v, why);
}

}  // namespace

TEST_CASE("every where field, true and false, and unknown where a fact is missing") {
  struct Case {
    const char* kind;
    const char* where;
    std::function<void(Resource&, Facts&)> tweak;
    Tri want;
  };
  auto none = [](Resource&, Facts&) {};
  const Case cases[] = {
      {"baseten.run", "{lifecycle: running}", none, Tri::kTrue},
      {"baseten.run", "{lifecycle: [stopped, failed]}", none, Tri::kFalse},
      {"baseten.run", "{lifecycle: running}", [](Resource& r, Facts&) { r.lifecycle = Lifecycle::kUnknown; }, Tri::kUnknown},
      {"baseten.run", "{lifecycle: unknown}", [](Resource& r, Facts&) { r.lifecycle = Lifecycle::kUnknown; }, Tri::kTrue},
      {"baseten.run", "{mode: dedicated}", none, Tri::kTrue},
      {"baseten.run", "{mode: serverless}", none, Tri::kFalse},
      {"baseten.run", "{availability: spot}", none, Tri::kFalse},
      {"baseten.run", "{availability: spot}", [](Resource& r, Facts&) { r.availability = "spot"; }, Tri::kTrue},
      {"baseten.run", "{idle_for: \">= 20m\"}", none, Tri::kTrue},
      {"baseten.run", "{idle_for: \">= 1h\"}", none, Tri::kFalse},
      {"baseten.run", "{idle_for: \"< 1h\"}", none, Tri::kTrue},
      {"baseten.run", "{idle_for: \">= 20m\"}", [](Resource&, Facts& f) { f.idle_for.reset(); }, Tri::kUnknown},
      {"baseten.deployment", "{no_traffic_for: \">= 2h\"}", none, Tri::kTrue},
      {"baseten.deployment", "{no_traffic_for: \">= 4h\"}", none, Tri::kFalse},
      {"baseten.deployment", "{no_traffic_for: \">= 2h\"}", [](Resource&, Facts& f) { f.no_traffic_for.reset(); },
       Tri::kUnknown},
      {"baseten.run", "{age: \">= 1h\"}", none, Tri::kTrue},
      {"baseten.run", "{age: \"> 1d\"}", none, Tri::kFalse},
      {"baseten.run", "{spend_usd: \">= 100\"}", none, Tri::kTrue},
      {"baseten.run", "{spend_usd: \"< 100\"}", none, Tri::kFalse},
      {"baseten.run", "{burn_usd_per_hour: \">= 50.00\"}", none, Tri::kTrue},
      {"baseten.run", "{burn_usd_per_hour: \"> 104\"}", none, Tri::kFalse},
      {"baseten.run", "{gpus: \">= 16\"}", none, Tri::kTrue},
      {"baseten.run", "{gpus: \"== 8\"}", none, Tri::kFalse},
      {"baseten.run", "{replicas: \"!= 1\"}", none, Tri::kTrue},
      {"baseten.run", "{replicas: \"<= 1\"}", none, Tri::kFalse},
      {"baseten.run", "{base_model: [Qwen/Qwen3-8B, x]}", none, Tri::kTrue},
      {"baseten.run", "{base_model: Qwen/Qwen3-32B}", none, Tri::kFalse},
      {"baseten.run", "{name: \"^grpo-\"}", none, Tri::kTrue},
      {"baseten.run", "{name: \"^sft-\"}", none, Tri::kFalse},
      {"baseten.run", "{owner: \"@example\\\\.com$\"}", none, Tri::kTrue},
      {"baseten.run", "{owner: \"^bo@\"}", none, Tri::kFalse},
      {"baseten.run", "{labels: {team: ml}}", none, Tri::kTrue},
      {"baseten.run", "{labels: {team: \"*\"}}", none, Tri::kTrue},
      {"baseten.run", "{labels: {team: infra}}", none, Tri::kFalse},
      {"baseten.run", "{flags: [kept_alive_idle]}", [](Resource& r, Facts&) { r.flags = {Flag::kKeptAliveIdle}; }, Tri::kTrue},
      {"baseten.run", "{flags: [kept_alive_idle, orphaned]}", [](Resource& r, Facts&) { r.flags = {Flag::kKeptAliveIdle}; },
       Tri::kFalse},
      {"baseten.run", "{provider: bt}", none, Tri::kTrue},
      {"baseten.run", "{provider: [fw]}", none, Tri::kFalse},
      {"fireworks.training_session", "{unpromoted_checkpoints: \">= 1\"}",
       [](Resource& r, Facts&) { r.checkpoints.Mutable().unpromoted = 1; }, Tri::kTrue},
      {"fireworks.training_session", "{unpromoted_checkpoints: \">= 1\"}", none, Tri::kFalse},
      {"fireworks.training_session", "{unpromoted_checkpoints: \">= 1\"}",
       [](Resource& r, Facts&) { r.checkpoints.Mutable().known = false; }, Tri::kUnknown},
      // Combinators and three-valued logic: unknown never turns into a match.
      {"baseten.run", "{and: [{lifecycle: running}, {idle_for: \">= 20m\"}]}", none, Tri::kTrue},
      {"baseten.run", "{or: [{mode: serverless}, {idle_for: \">= 20m\"}]}", none, Tri::kTrue},
      {"baseten.run", "{or: [{mode: serverless}, {idle_for: \">= 20m\"}]}", [](Resource&, Facts& f) { f.idle_for.reset(); },
       Tri::kUnknown},
      {"baseten.run", "{or: [{mode: dedicated}, {idle_for: \">= 20m\"}]}", [](Resource&, Facts& f) { f.idle_for.reset(); },
       Tri::kTrue},
      {"baseten.run", "{not: {idle_for: \"< 20m\"}}", [](Resource&, Facts& f) { f.idle_for.reset(); }, Tri::kUnknown},
      {"baseten.run", "{not: {name: \"^keep-\"}}", none, Tri::kTrue},
      {"baseten.run", "{mode: serverless, idle_for: \">= 20m\"}", [](Resource&, Facts& f) { f.idle_for.reset(); },
       Tri::kFalse},
  };
  for (const Case& c : cases) {
    CAPTURE(c.kind);
    CAPTURE(c.where);
    Resource r = Base(*ParseKind(c.kind));
    Facts f = BaseFacts();
    c.tweak(r, f);
    CHECK(Where(c.kind, c.where, r, f) == c.want);
    // The cycle's fast path decides alike, and skips the reason only of a non-match.
    const Policy p = One(std::string("  - {name: t, resource: ") + c.kind + ", action: notify, where: " + c.where + "}\n");
    const Engine engine{PolicySet{}};
    const ResourceView v = ResourceView::With(&r, &f);
    const Verdict full = engine.Check(p, v, nullptr, kNow);
    const Verdict fast = engine.CheckMatchOnly(p, v, nullptr);
    CHECK(fast.match == c.want);
    CHECK(full.match == c.want);
    CHECK(fast.reason == (c.want == Tri::kFalse ? "" : full.reason));
  }
}

// Counts the times the engine works a view's facts out.
class CountingFacts final : public FactsSource {
 public:
  explicit CountingFacts(Facts f) : facts_(f) {}
  Facts Of(const void*) const override {
    ++calls;
    return facts_;
  }
  mutable int calls = 0;

 private:
  Facts facts_;
};

TEST_CASE("a check works a resource's facts out once, however many leaves read them") {
  // Five leaves that read facts, one under not, and an unknown result (the quiet time is
  // only a lower bound), which has the check look at the facts once more.
  const Policy p = One(
      "  - {name: t, resource: baseten.run, action: notify, where: {idle_for: \">= 20m\", age: \">= 1h\","
      " spend_usd: \">= 10\", or: [{burn_usd_per_hour: \">= 1\"}], not: {age: \">= 9h\"}}}\n");
  const Resource r = Base();
  Facts f = BaseFacts();
  f.idle_for = 10min;
  f.idle_at_least = true;
  const Engine engine{PolicySet{}};
  for (bool match_only : {false, true}) {
    CAPTURE(match_only);
    CountingFacts source(f);
    const ResourceView v{&r, nullptr, &source};
    const Verdict verdict = match_only ? engine.CheckMatchOnly(p, v, nullptr) : engine.Check(p, v, nullptr, kNow);
    CHECK(verdict.match == Tri::kUnknown);
    CHECK(verdict.awaiting_history);
    CHECK(source.calls == 1);
  }
}

TEST_CASE("when: account conditions, unknown without aggregates") {
  Policy p = One("  - name: s\n    resource: fireworks.training_session\n    action: notify\n    when: "
                 "{account_active_sessions: \">= 7\", account_slot_headroom: \"<= 1\", account_spend_day_usd: \">= "
                 "10\", account_spend_week_usd: \">= 10\", account_spend_month_usd: \">= 10\"}\n");
  AccountAggregates a{7, 8, Money::FromDollars(20), Money::FromDollars(20), Money::FromDollars(20)};
  std::vector<std::string> why;
  CHECK(EvalWhen(p.when, &a, why) == Tri::kTrue);
  a.active_sessions = 6;
  CHECK(EvalWhen(p.when, &a, why) == Tri::kFalse);
  a.active_sessions = 7;
  a.spend_week = Money::FromDollars(5);
  CHECK(EvalWhen(p.when, &a, why) == Tri::kFalse);
  CHECK(EvalWhen(p.when, nullptr, why) == Tri::kUnknown);
  When empty;
  CHECK(EvalWhen(empty, nullptr, why) == Tri::kTrue);
}

namespace {

struct Cycle {
  Engine engine;
  std::vector<Resource> resources;
  std::vector<Facts> facts;
  EvalInput in;
  EvalOutput Run() {
    std::vector<ResourceView> views;
    for (size_t i = 0; i < resources.size(); ++i) views.push_back(ResourceView::With(&resources[i], &facts[i]));
    in.resources = views;
    return engine.Evaluate(in);
  }
};

PolicySet Set(const std::string& yaml) {
  Loaded l = LoadPolicies(yaml);
  REQUIRE_MESSAGE(l.set.has_value(), l.errors);
  return *l.set;
}

int Count(const EvalOutput& o, DecisionType t) {
  return static_cast<int>(std::count_if(o.decisions.begin(), o.decisions.end(), [&](const Decision& d) { return d.type == t; }));
}

}  // namespace

TEST_CASE("exemptions: global by name, per policy, by id with until, snoozes, expired ones stop covering") {
  Cycle c{Engine(Set("policies:\n  - {name: idle, resource: baseten.run, action: deactivate, grace: 0s, where: "
                     "{idle_for: \">= 20m\"}, exemptions: [{match: {owner: \"^bo@\"}, reason: bo's}]}\n"
                     "exemptions:\n  - {match: {name: \"^prod-\"}, reason: serving}\n"
                     "  - {id: r3, until: 2026-08-01T11:00:00Z, reason: long eval}\n"
                     "limits: {max_actions_per_cycle: 100, max_actions_percent: 100}\n")),
          {}, {}, {}};
  for (const char* n : {"prod-chat", "grpo", "eval", "free", "snoozed"}) {
    Resource r = Base();
    r.id = std::string("r") + std::to_string(c.resources.size() + 1);
    r.name = n;
    c.resources.push_back(r);
    c.facts.push_back(BaseFacts());
  }
  c.resources[1].owner = "bo@example.com";
  c.in.now = kNow;
  c.in.snoozes = {{"bt/baseten.run/r5", "", kNow + 2h, "demo tomorrow", "ana"}};
  auto out = c.Run();
  std::map<std::string, std::string> by;
  for (const auto& d : out.decisions) by[d.resource] = std::string(DecisionName(d.type)) + ": " + d.reason;
  CHECK(by["bt/baseten.run/r1"] == "skip: exempt: serving");
  CHECK(by["bt/baseten.run/r2"] == "skip: exempt: bo's");
  CHECK(by["bt/baseten.run/r3"] == "skip: exempt: long eval until 2026-08-01T11:00:00Z");
  CHECK(by["bt/baseten.run/r4"].rfind("act: idle 47m >= 20m", 0) == 0);
  CHECK(by["bt/baseten.run/r5"] == "skip: snoozed by ana: demo tomorrow until 2026-08-01T12:00:00Z");
  // An hour and a half later the id exemption has expired; three hours later the snooze too.
  c.in.now = kNow + 90min;
  out = c.Run();
  CHECK(Count(out, DecisionType::kAct) == 2);
  c.in.now = kNow + 3h;
  CHECK(Count(c.Run(), DecisionType::kAct) == 3);
}

TEST_CASE("checkpoint modes and the irreversible gate at act time") {
  auto run = [](const std::string& checkpoints, int unpromoted, bool known) {
    Cycle c{Engine(Set("policies:\n  - {name: slots, resource: fireworks.training_session, action: delete, "
                       "allow_irreversible: true, grace: 0s" + checkpoints + ", where: {idle_for: \">= 15m\"}}\n")),
            {Base(Kind::kFireworksTrainingSession)}, {BaseFacts()}, {}};
    c.resources[0].checkpoints.Mutable().known = known;
    c.resources[0].checkpoints.Mutable().unpromoted = unpromoted;
    c.resources[0].checkpoints.Mutable().promotable = unpromoted;
    c.resources[0].checkpoints.Mutable().newest_promotable_name = "final";
    c.in.now = kNow;
    return c.Run();
  };
  auto refuse = run("", 1, true);
  REQUIRE(Count(refuse, DecisionType::kAct) == 0);
  CHECK(refuse.decisions.back().reason == "newest promotable checkpoint final is unpromoted (checkpoints: refuse)");
  CHECK(Count(run("", 0, true), DecisionType::kAct) == 1);
  auto unknown = run("", 0, false);
  CHECK(Count(unknown, DecisionType::kAct) == 0);
  CHECK(unknown.decisions.back().reason == "checkpoints could not be listed; refusing to delete");
  auto promote = run(", checkpoints: promote_latest", 1, true);
  REQUIRE(Count(promote, DecisionType::kAct) == 1);
  CHECK(promote.decisions.back().checkpoints == CheckpointMode::kPromoteLatest);
  CHECK(Count(run(", checkpoints: ignore", 1, true), DecisionType::kAct) == 1);
  CHECK(Count(run(", checkpoints: ignore", 1, false), DecisionType::kAct) == 1);
}

TEST_CASE("never act on unknown or transitional lifecycles") {
  Cycle c{Engine(Set("policies:\n  - {name: idle, resource: baseten.run, action: deactivate, grace: 0s, where: "
                     "{idle_for: \">= 20m\"}}\n")),
          {Base(), Base(), Base()}, {BaseFacts(), BaseFacts(), BaseFacts()}, {}};
  c.resources[1].id = "t";
  c.resources[1].transitional = true;
  c.resources[1].native_status = "UPDATING";
  c.resources[2].id = "u";
  c.resources[2].lifecycle = Lifecycle::kStarting;
  c.in.now = kNow;
  auto out = c.Run();
  CHECK(Count(out, DecisionType::kAct) == 1);
  CHECK(Count(out, DecisionType::kMark) == 1);
  // Already marked and now transitional: keep the mark, skip.
  c.in.marks[{"idle", "bt/baseten.run/t"}] = {kNow - 1h, kNow - 30min, {}};
  out = c.Run();
  bool skipped = false;
  for (const auto& d : out.decisions) {
    if (d.resource == "bt/baseten.run/t") skipped = d.type == DecisionType::kSkip && d.reason == "transitional state UPDATING; not acting";
  }
  CHECK(skipped);
}

TEST_CASE("acts run by deadline, then the longest idle first, whatever order they were decided in") {
  Cycle c{Engine(Set("policies:\n  - {name: idle, resource: baseten.run, action: deactivate, grace: 0s, where: "
                     "{idle_for: \">= 20m\"}}\nlimits: {max_actions_per_cycle: 10, max_actions_percent: 100}\n")),
          {}, {}, {}};
  // Listed (and so decided) a, b, c, d; b and c are due earlier than a and d.
  const struct {
    const char* id;
    Duration idle;
    Duration due_ago;
  } fleet[] = {{"a", 1h, 10min}, {"b", 2h, 30min}, {"c", 5h, 30min}, {"d", 9h, 10min}};
  for (const auto& f : fleet) {
    Resource r = Base();
    r.id = f.id;
    c.resources.push_back(r);
    Facts facts = BaseFacts();
    facts.idle_for = f.idle;
    c.facts.push_back(facts);
    c.in.marks[{"idle", "bt/baseten.run/" + std::string(f.id)}] = {kNow - 1h, kNow - f.due_ago, kNow - 1h};
  }
  c.in.now = kNow;
  auto out = c.Run();
  std::vector<std::string> order;
  for (size_t i : out.act_order) order.push_back(out.decisions[i].resource);
  std::string seen;
  for (const std::string& k : order) seen += k + " ";
  INFO(seen);
  CHECK(order == std::vector<std::string>{"bt/baseten.run/c", "bt/baseten.run/b", "bt/baseten.run/d", "bt/baseten.run/a"});
}

TEST_CASE("blast radius: past either cap the whole cycle's acts become skips and one alert") {
  auto cycle = [](int n, int64_t per_cycle, int64_t percent, int live_extra) {
    Cycle c{Engine(Set("policies:\n  - {name: idle, resource: baseten.run, action: deactivate, grace: 0s, notify: "
                       "[ml-slack], where: {idle_for: \">= 20m\"}}\nlimits: {max_actions_per_cycle: " +
                       std::to_string(per_cycle) + ", max_actions_percent: " + std::to_string(percent) + "}\n")),
            {}, {}, {}};
    for (int i = 0; i < n + live_extra; ++i) {
      Resource r = Base();
      r.id = "r" + std::to_string(i);
      c.resources.push_back(r);
      Facts f = BaseFacts();
      if (i >= n) f.idle_for = 1min;  // live but busy
      c.facts.push_back(f);
    }
    c.in.now = kNow;
    return c.Run();
  };
  auto ok = cycle(3, 10, 50, 7);  // 3 of 10 live: under both caps
  CHECK(Count(ok, DecisionType::kAct) == 3);
  CHECK_FALSE(ok.blast_radius_abort);
  auto too_many = cycle(11, 10, 100, 0);
  CHECK(Count(too_many, DecisionType::kAct) == 0);
  CHECK(too_many.blast_radius_abort);
  CHECK(too_many.abort_reason == "11 actions exceed max_actions_per_cycle 10");
  int alerts = 0;
  for (const auto& d : too_many.decisions) {
    if (d.notice == Notice::kBlastRadius) {
      ++alerts;
      CHECK(d.notify == std::vector<std::string>{"ml-slack"});
    }
  }
  CHECK(alerts == 1);
  auto pct = cycle(4, 10, 20, 6);  // 4 acts > 20% of 10 live (2)
  CHECK(pct.blast_radius_abort);
  CHECK(pct.abort_reason == "4 actions exceed max_actions_percent 20% of 10 live resources (2)");
  CHECK(Count(cycle(1, 10, 1, 0), DecisionType::kAct) == 1);  // the percent cap always allows one
}

TEST_CASE("budgets: warn at the threshold, exceeded past the limit, deactivate in the stated order") {
  Cycle c{Engine(Set("policies:\n  - {name: day, budget: {provider: bt, period: day, limit_usd: 500, warn_at: 0.8}, "
                     "action: notify, notify: [ml-slack]}\n"
                     "  - {name: stop, budget: {provider: bt, period: day, limit_usd: 1000, warn_at: 1.0, order: burn_highest}, "
                     "resource: baseten.run, action: deactivate, grace: 0s}\n"
                     "limits: {max_actions_per_cycle: 100, max_actions_percent: 100}\n")),
          {Base(), Base(), Base()}, {BaseFacts(), BaseFacts(), BaseFacts()}, {}};
  c.resources[0].id = "cheap";
  c.facts[0].burn_per_hour = Money::FromDollars(10);
  c.resources[1].id = "pricey";
  c.facts[1].burn_per_hour = Money::FromDollars(200);
  c.resources[2].id = "stopped";
  c.resources[2].billing.billable = false;
  c.in.now = kNow;
  c.in.budget_spend = {{"day", Money::FromDollars(300)}, {"stop", Money::FromDollars(300)}};
  auto quiet = c.Run();
  CHECK(quiet.decisions.empty());
  c.in.budget_spend = {{"day", Money::FromDollars(412)}, {"stop", Money::FromDollars(900)}};
  auto warn = c.Run();
  REQUIRE(warn.decisions.size() == 1);
  CHECK(warn.decisions[0].notice == Notice::kBudgetWarning);
  CHECK(warn.decisions[0].reason == "spend $412.00 of $500.00 (82%) this day on bt");
  c.in.budget_spend = {{"day", Money::FromDollars(501)}, {"stop", Money::FromDollars(1200)}};
  auto over = c.Run();
  std::vector<std::string> acted;
  for (const auto& d : over.decisions) {
    if (d.type == DecisionType::kAct) acted.push_back(d.resource);
    if (d.policy == "day") CHECK(d.notice == Notice::kBudgetExceeded);
  }
  CHECK(acted == std::vector<std::string>{"bt/baseten.run/pricey", "bt/baseten.run/cheap"});
}

TEST_CASE("budgets: idle_longest (the default) and newest orders deactivate in their order") {
  auto acted = [](const std::string& order) {
    Cycle c{Engine(Set("policies:\n  - {name: stop, budget: {provider: bt, period: day, limit_usd: 100" + order +
                       "}, resource: baseten.run, action: deactivate, grace: 0s}\n"
                       "limits: {max_actions_per_cycle: 100, max_actions_percent: 100}\n")),
            {}, {}, {}};
    // Listed a, b, c: b idles longest and is oldest, c is newest and idles least.
    const struct {
      const char* id;
      Duration idle;
      Duration age;
    } fleet[] = {{"a", 2h, 5h}, {"b", 9h, 10h}, {"c", 1h, 1h}};
    for (const auto& f : fleet) {
      Resource r = Base();
      r.id = f.id;
      r.created_at = kNow - f.age;
      c.resources.push_back(r);
      Facts facts = BaseFacts();
      facts.idle_for = f.idle;
      c.facts.push_back(facts);
    }
    c.in.now = kNow;
    c.in.budget_spend = {{"stop", Money::FromDollars(150)}};
    std::vector<std::string> ids;
    for (const auto& d : c.Run().decisions) {
      if (d.type == DecisionType::kAct) ids.push_back(d.resource.substr(d.resource.rfind('/') + 1));
    }
    return ids;
  };
  CHECK(acted("") == std::vector<std::string>{"b", "a", "c"});
  CHECK(acted(", order: newest") == std::vector<std::string>{"c", "a", "b"});
}

TEST_CASE("budgets: a forecast crossing warns before the threshold, in the budget's time zone") {
  // Issue 15: "at this rate the month ends at $X; the budget is crossed on D".
  Cycle c{Engine(Set("policies:\n  - {name: day, budget: {provider: bt, period: day, limit_usd: 1000, warn_at: 0.8, "
                     "timezone: UTC}, action: notify, notify: [ml-slack]}\n")),
          {Base()}, {BaseFacts()}, {}};
  c.in.now = kNow;
  c.in.budget_spend = {{"day", Money::FromDollars(300)}};
  c.in.budget_forecast["day"] = {.period_end = Money::FromDollars(900), .ends_at = kNow + 12h, .crosses_at = std::nullopt};
  CHECK(c.Run().decisions.empty());  // under the threshold, and the forecast stays under the limit
  c.in.budget_forecast["day"] = {.period_end = Money::FromDollars(1248), .ends_at = kNow + 12h,
                                 .crosses_at = ParseTime("2026-08-01T19:14:00Z").value()};
  auto early = c.Run();
  REQUIRE(early.decisions.size() == 1);
  CHECK(early.decisions[0].notice == Notice::kBudgetWarning);
  CHECK(early.decisions[0].reason ==
        "spend $300.00 of $1000.00 (30%) this day on bt; at this rate the day ends at $1248.00 and the budget is "
        "crossed at 2026-08-01 19:14 UTC");
}

TEST_CASE("marks of removed policies or vanished resources are dropped") {
  Cycle c{Engine(Set("policies:\n  - {name: idle, resource: baseten.run, action: notify}\n")), {Base()}, {BaseFacts()}, {}};
  c.in.now = kNow;
  c.in.marks[{"old-policy", "bt/baseten.run/x1"}] = {kNow - 1h, kNow, {}};
  c.in.marks[{"idle", "bt/baseten.run/gone"}] = {kNow - 1h, kNow, {}};
  auto out = c.Run();
  std::map<std::string, std::string> unmarks;
  for (const auto& d : out.decisions) {
    if (d.type == DecisionType::kUnmark) unmarks[d.policy + "|" + d.resource] = d.reason;
  }
  CHECK(unmarks["old-policy|bt/baseten.run/x1"] == "policy removed from the configuration");
  CHECK(unmarks["idle|bt/baseten.run/gone"] == "resource no longer listed");
}

TEST_CASE("quiet time observed only since first sight is a lower bound: unknown until observed long enough") {
  Resource r = Base(Kind::kFireworksDeployment);
  Facts f = BaseFacts();
  f.no_traffic_for = 20min;
  f.no_traffic_at_least = true;
  // Under the threshold: it may well be longer, so neither true nor false.
  CHECK(Where("fireworks.deployment", "{no_traffic_for: \">= 2h\"}", r, f) == Tri::kUnknown);
  CHECK(Where("fireworks.deployment", "{not: {no_traffic_for: \">= 2h\"}}", r, f) == Tri::kUnknown);
  CHECK(Where("fireworks.deployment", "{no_traffic_for: \"< 2h\"}", r, f) == Tri::kUnknown);
  // Past it, or certainly past a smaller one: decided.
  CHECK(Where("fireworks.deployment", "{no_traffic_for: \">= 10m\"}", r, f) == Tri::kTrue);
  CHECK(Where("fireworks.deployment", "{no_traffic_for: \"< 10m\"}", r, f) == Tri::kFalse);
  // The same value from real evidence is simply false.
  f.no_traffic_at_least = false;
  CHECK(Where("fireworks.deployment", "{no_traffic_for: \">= 2h\"}", r, f) == Tri::kFalse);
  f.idle_for = 5min;
  f.idle_at_least = true;
  CHECK(Where("fireworks.deployment", "{idle_for: \">= 15m\"}", r, f) == Tri::kUnknown);

  // Evaluate shows it as a skip that says how long is left (plan prints it), and marks nothing.
  Cycle c{Engine(Set("policies:\n  - {name: quiet, resource: fireworks.deployment, action: notify, where: "
                     "{no_traffic_for: \">= 2h\"}}\n")),
          {Base(Kind::kFireworksDeployment)}, {f}, {}};
  c.facts[0].no_traffic_for = 20min;
  c.facts[0].no_traffic_at_least = true;
  c.in.now = kNow;
  auto out = c.Run();
  REQUIRE(out.decisions.size() == 1);
  CHECK(out.decisions[0].type == DecisionType::kSkip);
  CHECK(out.decisions[0].reason.find("unknown until observed for 1h40m more") != std::string::npos);
  CHECK(Count(out, DecisionType::kMark) == 0);
}

TEST_CASE("quiet thresholds: the longest idle_for / no_traffic_for per kind, under and / or / not") {
  auto set = Set(
      "policies:\n"
      "  - {name: a, resource: baseten.deployment, action: notify, where: {no_traffic_for: \">= 2h\"}}\n"
      "  - {name: b, resource: baseten.deployment, action: notify, where: {or: [{age: \">= 1d\"}, "
      "{not: {no_traffic_for: \">= 6h\"}}]}}\n"
      "  - {name: c, resource: baseten.run, action: notify, where: {idle_for: \">= 20m\"}}\n"
      "  - {name: d, resource: fireworks.deployment, action: notify, where: {age: \">= 1h\"}}\n"
      "  - {name: e, budget: {period: day, limit_usd: 10}, action: notify}\n");
  const auto q = QuietThresholds(set);
  CHECK(q.size() == 2);
  CHECK(q.at(Kind::kBasetenDeployment) == 6h);
  CHECK(q.at(Kind::kBasetenRun) == 20min);
}

TEST_CASE("hardening: hostile provider names match in linear time, however long or however the pattern nests") {
  Resource r = Base();
  Facts f = BaseFacts();
  // 200,000 characters once exhausted std::regex's recursion; `^(a+)+$` on 31 'a's and a
  // 'b' took 40 s a cycle with backtracking. RE2 has neither.
  r.name = std::string(200'000, 'a');
  CHECK(Where("baseten.run", "{name: \"^a+$\"}", r, f) == Tri::kTrue);
  CHECK(Where("baseten.run", "{name: \"b\"}", r, f) == Tri::kFalse);
  r.name = std::string(31, 'a') + "b";
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 1000; ++i) CHECK(Where("baseten.run", "{name: \"^(a+)+$\"}", r, f) == Tri::kFalse);
  // Not a timing test: a thousand evaluations finish whatever the machine; with
  // backtracking one alone took tens of seconds.
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(60));
  // Patterns RE2 cannot run in linear time (backreferences) are refused at load.
  Loaded l = LoadPolicies("policies:\n  - {name: t, resource: baseten.run, action: notify, where: {name: \"(a)\\\\1\"}}\n");
  CHECK_FALSE(l.set.has_value());
  CHECK(l.errors.find("invalid regular expression") != std::string::npos);
}

namespace {

// An account of `live` Fireworks sessions, session i idle for i+1 hours (the last the
// longest idle), under a policy that frees slots while `>= 6` are held.
Cycle Sessions(int live, const std::string& extra_policies = "") {
  Cycle c{Engine(Set("policies:\n" + extra_policies +
                     "  - {name: headroom, resource: fireworks.training_session, action: delete, allow_irreversible: true,"
                     " checkpoints: ignore, grace: 5m, notify: [ml-slack], where: {idle_for: \">= 45m\"},"
                     " when: {account_active_sessions: \">= 6\"}}\n")),
          {}, {}, {}};
  for (int i = 0; i < live; ++i) {
    Resource r = Base(Kind::kFireworksTrainingSession);
    r.id = "s" + std::to_string(i);
    c.resources.push_back(r);
    Facts f = BaseFacts();
    f.idle_for = std::chrono::hours(i + 1);
    c.facts.push_back(f);
  }
  c.in.accounts["fw/acme"] = AccountAggregates{.active_sessions = live, .slot_cap = 8};
  c.in.now = kNow;
  c.in.global_dry_run = false;
  return c;
}

std::vector<std::string> Of(const EvalOutput& o, DecisionType t, const std::string& policy = "headroom") {
  std::vector<std::string> out;
  for (const Decision& d : o.decisions) {
    if (d.type == t && d.policy == policy) out.push_back(d.resource);
  }
  return out;
}

std::string Key(const std::string& id) { return "fw/fireworks.training_session/" + id; }

}  // namespace

TEST_CASE("one decider: a policy reading the account's sessions marks and acts on only as many as it needs") {
  Cycle c = Sessions(7);
  EvalOutput marks = c.Run();
  // 7 held, `>= 6`: two deletes bring it to 5. The longest idle are chosen, and only
  // they are announced (a marked notice names what will be acted on).
  CHECK(Of(marks, DecisionType::kMark) == std::vector<std::string>{Key("s6"), Key("s5")});
  int announced = 0;
  for (const Decision& d : marks.decisions) announced += d.notice == Notice::kMarked;
  CHECK(announced == 2);
  const std::vector<std::string> not_needed = Of(marks, DecisionType::kSkip);
  REQUIRE(not_needed.size() == 5);
  for (const Decision& d : marks.decisions) {
    if (d.type == DecisionType::kSkip) CHECK(d.reason.find("not needed") != std::string::npos);
  }

  // At the deadline both act, in deadline-then-idle order, and nothing else does.
  for (const std::string& k : Of(marks, DecisionType::kMark)) c.in.marks[{"headroom", k}] = {kNow, kNow + 5min, kNow};
  c.in.now = kNow + 5min;
  EvalOutput acts = c.Run();
  CHECK(Of(acts, DecisionType::kAct) == std::vector<std::string>{Key("s6"), Key("s5")});
  REQUIRE(acts.act_order.size() == 2);
  CHECK(acts.decisions[acts.act_order[0]].resource == Key("s6"));
  CHECK(acts.decisions[acts.act_order[1]].resource == Key("s5"));
  CHECK(Of(acts, DecisionType::kMark).empty());

  // A dry run decides the same (it only records instead of calling).
  c.in.global_dry_run = true;
  CHECK(Of(c.Run(), DecisionType::kAct).size() == 2);
}

TEST_CASE("one decider: a mark no longer needed is dropped, naming why") {
  Cycle c = Sessions(6);
  // Marked earlier when 7 were held: s5, s4 and s3. Now 6 are held: one delete is enough.
  for (const char* id : {"s5", "s4", "s3"}) c.in.marks[{"headroom", Key(id)}] = {kNow - 10min, kNow - 5min, kNow - 10min};
  EvalOutput o = c.Run();
  CHECK(Of(o, DecisionType::kAct) == std::vector<std::string>{Key("s5")});
  const std::vector<std::string> dropped = Of(o, DecisionType::kUnmark);
  CHECK(dropped == std::vector<std::string>{Key("s4"), Key("s3")});
  for (const Decision& d : o.decisions) {
    if (d.type == DecisionType::kUnmark) CHECK(d.reason.find("not needed") != std::string::npos);
  }
}

TEST_CASE("one decider: the cooldown, and the slots it is still freeing, are the engine's") {
  Cycle c = Sessions(7);
  // s6 and s5 were deleted 10 minutes ago; the provider still lists them as running.
  c.in.recent_acts[{"headroom", Key("s6")}] = kNow - 10min;
  c.in.recent_acts[{"headroom", Key("s5")}] = kNow - 10min;
  EvalOutput o = c.Run();
  // Counting the two converging deletes the account is at 5: nothing more to free.
  CHECK(Of(o, DecisionType::kMark).empty());
  CHECK(Of(o, DecisionType::kAct).empty());
  int waiting = 0, announced = 0;
  for (const Decision& d : o.decisions) {
    waiting += d.type == DecisionType::kSkip && d.reason.find("waiting for the provider") != std::string::npos;
    announced += d.notice == Notice::kMarked;
  }
  CHECK(waiting == 2);
  CHECK(announced == 0);

  // The converging ones count whatever their rank: here they are the least idle.
  Cycle late = Sessions(7);
  late.in.recent_acts[{"headroom", Key("s0")}] = kNow - 10min;
  late.in.recent_acts[{"headroom", Key("s1")}] = kNow - 10min;
  CHECK(Of(late.Run(), DecisionType::kMark).empty());

  // A cooling resource under a policy that does not read sessions is not marked again.
  Cycle plain{Engine(Set("policies:\n  - {name: idle, resource: baseten.run, action: deactivate, grace: 0s,"
                         " where: {idle_for: \">= 20m\"}}\n")),
              {Base()}, {BaseFacts()}, {}};
  plain.in.now = kNow;
  plain.in.global_dry_run = false;
  CHECK(Count(plain.Run(), DecisionType::kAct) == 1);
  plain.in.recent_acts[{"idle", "bt/baseten.run/x1"}] = kNow - 59min;
  CHECK(Count(plain.Run(), DecisionType::kAct) == 0);
}

TEST_CASE("one decider: slots another policy frees this cycle count before a policy reading sessions") {
  // `stale` (listed first, reads no sessions) deletes the two longest idle at once; the
  // headroom policy, evaluated after it, then has 5 held and needs nothing.
  Cycle c = Sessions(7, "  - {name: stale, resource: fireworks.training_session, action: delete, allow_irreversible: "
                        "true, checkpoints: ignore, grace: 0s, where: {idle_for: \">= 6h\"}}\n");
  EvalOutput o = c.Run();
  CHECK(Of(o, DecisionType::kAct, "stale") == std::vector<std::string>{Key("s5"), Key("s6")});
  CHECK(Of(o, DecisionType::kMark).empty());
  CHECK(Of(o, DecisionType::kAct).empty());
}
