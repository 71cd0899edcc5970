// The mark, notify, grace, act, unmark lifecycle over time on a ManualClock, with the
// marks carried from cycle to cycle the way the daemon carries them in the store.
#include <doctest/doctest.h>

#include "core/clock.h"
#include "tests/policies/harness.h"

using namespace loopwarden;
using namespace loopwarden::policies;
using namespace loopwarden::testing;
using namespace std::chrono_literals;

namespace {

struct Loop {
  Engine engine;
  ManualClock clock{ParseTime("2026-08-01T10:00:00Z").value()};
  Resource run;
  Time last_active;
  std::map<std::pair<std::string, std::string>, MarkView> marks;
  bool dry_run = false;

  EvalOutput Cycle() {
    Facts f;
    f.idle_for = clock.Now() - last_active;
    f.age = 3h;
    ResourceView v = ResourceView::With(&run, &f);
    EvalInput in;
    in.resources = {&v, 1};
    in.marks = marks;
    in.now = clock.Now();
    in.global_dry_run = dry_run;
    EvalOutput out = engine.Evaluate(in);
    for (const Decision& d : out.decisions) {  // what the daemon does with marks
      if (d.type == DecisionType::kMark) marks[{d.policy, d.resource}] = {in.now, *d.act_after, {}};
      if (d.type == DecisionType::kUnmark) marks.erase({d.policy, d.resource});
      if (d.type == DecisionType::kAct) marks.erase({d.policy, d.resource});
    }
    return out;
  }
};

Engine IdleEngine() {
  Loaded l = LoadPolicies("policies:\n  - {name: idle-dedicated-trainers, resource: baseten.run, action: deactivate, "
                          "grace: 10m, notify: [ml-slack], where: {mode: dedicated, lifecycle: running, idle_for: \">= "
                          "20m\"}}\n");
  REQUIRE(l.set.has_value());
  return Engine(*l.set);
}

Resource DedicatedRun() {
  Resource r;
  r.provider = r.account = "bt";
  r.kind = Kind::kBasetenRun;
  r.id = "k4q95w5";
  r.lifecycle = Lifecycle::kRunning;
  r.mode = Mode::kDedicated;
  r.native_status = "ACTIVE";
  return r;
}

std::vector<std::string> Types(const EvalOutput& o) {
  std::vector<std::string> t;
  for (const auto& d : o.decisions) t.emplace_back(DecisionName(d.type));
  return t;
}

}  // namespace

TEST_CASE("an idle run is marked and warned, waits out its grace, then acts, an active one is untouched") {
  Loop loop{IdleEngine()};
  loop.run = DedicatedRun();
  loop.last_active = loop.clock.Now() - 5min;
  CHECK(loop.Cycle().decisions.empty());  // idle 5m < 20m

  loop.clock.Advance(15min);  // idle 20m
  auto marked = loop.Cycle();
  CHECK(Types(marked) == std::vector<std::string>{"mark", "notify"});
  CHECK(marked.decisions[0].reason == "idle 20m >= 20m; acts at 10:25Z");
  CHECK(marked.decisions[1].reason == "idle 20m >= 20m; deactivate at 10:25Z");
  CHECK(marked.decisions[1].notice == Notice::kMarked);
  CHECK(marked.decisions[0].act_after == loop.clock.Now() + 10min);

  loop.clock.Advance(9min);
  auto waiting = loop.Cycle();
  CHECK(Types(waiting) == std::vector<std::string>{"skip"});
  CHECK(waiting.decisions[0].reason == "marked; idle 29m >= 20m; acts at 10:25Z");

  loop.clock.Advance(1min);
  auto act = loop.Cycle();
  REQUIRE(Types(act) == std::vector<std::string>{"act"});
  CHECK(act.decisions[0].reason == "idle 30m >= 20m; grace ended 10:25Z");
  CHECK(act.decisions[0].action == ActionType::kDeactivate);
  CHECK_FALSE(act.decisions[0].dry_run);
}

TEST_CASE("a run that becomes active again during grace is unmarked") {
  Loop loop{IdleEngine()};
  loop.run = DedicatedRun();
  loop.last_active = loop.clock.Now() - 25min;
  CHECK(Types(loop.Cycle()) == std::vector<std::string>{"mark", "notify"});
  loop.clock.Advance(5min);
  loop.last_active = loop.clock.Now();  // training resumed
  auto out = loop.Cycle();
  REQUIRE(Types(out) == std::vector<std::string>{"unmark"});
  CHECK(out.decisions[0].reason == "compliant again: idle 0s not >= 20m");
  CHECK(loop.marks.empty());
  loop.clock.Advance(30min);  // idle again: a fresh mark, a fresh grace
  CHECK(Types(loop.Cycle()) == std::vector<std::string>{"mark", "notify"});
}

TEST_CASE("dry-run decisions are the same, flagged dry") {
  Loop loop{IdleEngine()};
  loop.dry_run = true;
  loop.run = DedicatedRun();
  loop.last_active = loop.clock.Now() - 1h;
  loop.Cycle();
  loop.clock.Advance(10min);
  auto act = loop.Cycle();
  REQUIRE(Types(act) == std::vector<std::string>{"act"});
  CHECK(act.decisions[0].dry_run);
}

TEST_CASE("grace 0 marks and acts in the same cycle, a notify policy only notifies") {
  Loaded l = LoadPolicies("policies:\n  - {name: now, resource: baseten.run, action: deactivate, grace: 0s, where: "
                          "{idle_for: \">= 20m\"}}\n  - {name: tell, resource: baseten.run, action: notify, grace: 0s, "
                          "notify: [audit], where: {idle_for: \">= 20m\"}}\n");
  REQUIRE(l.set.has_value());
  Loop loop{Engine(*l.set)};
  loop.run = DedicatedRun();
  loop.last_active = loop.clock.Now() - 1h;
  CHECK(Types(loop.Cycle()) == std::vector<std::string>{"mark", "act", "mark", "notify"});
  loop.clock.Advance(1min);
  CHECK(Types(loop.Cycle()) == std::vector<std::string>{"mark", "act", "skip"});
}
