// Every exit of Executor::Act and Recover, against a scripted provider and a real
// SQLite store, in milliseconds: what the provider is asked to do, and what the
// exactly-once record says afterwards.
#include <doctest/doctest.h>

#include <deque>
#include <memory>

#include "reconcile/executor.h"
#include "tests/policies/harness.h"
#include "tests/reconcile/faulty_journal.h"
#include "tests/store/fixtures.h"
#include "tests/testing/run_async.h"
#include "tests/testing/temp_dir.h"

namespace loopwarden::testing {
namespace {

namespace asio = boost::asio;
using reconcile::ActResult;
using providers::Outcome;
using namespace std::chrono_literals;

// A provider that answers from a script: the object it shows, reads that fail, and the
// outcome of each call. A call that takes effect changes the object it shows.
class FakeProvider final : public providers::Provider {
 public:
  ListedResource object;
  bool gone = false;
  std::deque<bool> read_fails;          // popped by each Refresh: true fails it
  std::deque<Outcome> outcomes;         // popped by each Act; kDone when empty
  bool unknown_took_effect = false;     // a kUnknown call happened after all
  std::deque<Outcome> promotions;       // popped by each PromoteCheckpoint
  bool promotion_shows = true;          // a done promotion is visible on the next read
  int acts = 0, promotes = 0, reads = 0;

  const std::string& name() const override { return object.provider; }
  ProviderType type() const override { return object.provider_type; }
  std::string account() const override { return object.account; }
  int64_t slot_cap() const override { return 8; }
  asio::awaitable<providers::Inventory> List(providers::ResourceSink) override { co_return providers::Inventory{}; }
  asio::awaitable<Result<providers::RefreshResult>> Refresh(const Resource&) override {
    ++reads;
    const bool fail = !read_fails.empty() && read_fails.front();
    if (!read_fails.empty()) read_fails.pop_front();
    if (fail) co_return Unavailable("scripted read failure");
    if (gone) co_return providers::RefreshResult{.resource = std::nullopt, .gone = true};
    co_return providers::RefreshResult{.resource = object, .gone = false};
  }
  asio::awaitable<Result<providers::UsageReport>> Usage(Time, Time) override { co_return providers::UsageReport{}; }
  asio::awaitable<providers::ActionOutcome> Act(const Resource&, ActionType action) override {
    ++acts;
    const Outcome o = Pop(outcomes);
    if (o == Outcome::kDone || (o == Outcome::kUnknown && unknown_took_effect)) {
      object.lifecycle = action == ActionType::kDelete ? Lifecycle::kDeleted : Lifecycle::kStopped;
      object.billing.billable = false;
    }
    providers::ActionOutcome out;
    out.outcome = o;
    out.request = "POST /fake/" + std::string(ActionName(action));
    if (o == Outcome::kRefused || o == Outcome::kFailed) out.error.message = "scripted " + std::string(providers::OutcomeName(o));
    co_return out;
  }
  asio::awaitable<providers::ActionOutcome> PromoteCheckpoint(const Resource&, const std::string&,
                                                              const std::string&) override {
    ++promotes;
    const Outcome o = Pop(promotions);
    if (o == Outcome::kDone && promotion_shows) {
      object.checkpoints.Mutable().newest_promotable_promoted = true;
      object.checkpoints.Mutable().unpromoted = 0;
    }
    providers::ActionOutcome out;
    out.outcome = o;
    if (o != Outcome::kDone) out.error.message = "scripted promotion " + std::string(providers::OutcomeName(o));
    co_return out;
  }
  const providers::TransportStats& stats() const override { return stats_; }

 private:
  static Outcome Pop(std::deque<Outcome>& q) {
    if (q.empty()) return Outcome::kDone;
    const Outcome o = q.front();
    q.pop_front();
    return o;
  }
  providers::TransportStats stats_;
};

const char* kDeactivate = "  - {name: p, resource: baseten.run, where: {lifecycle: running}, action: deactivate, grace: 0s}\n";
const char* kDeleteRefuse =
    "  - {name: p, resource: fireworks.training_session, where: {lifecycle: running}, action: delete,"
    " allow_irreversible: true, grace: 0s}\n";
const char* kDeletePromote =
    "  - {name: p, resource: fireworks.training_session, where: {lifecycle: running}, action: delete,"
    " allow_irreversible: true, checkpoints: promote_latest, grace: 0s}\n";

// A session with one promotable checkpoint nobody promoted.
ListedResource SessionWithCheckpoint() {
  ListedResource s = Session("s1");
  s.checkpoints.Mutable().known = true;
  s.checkpoints.Mutable().count = 1;
  s.checkpoints.Mutable().promotable = 1;
  s.checkpoints.Mutable().unpromoted = 1;
  s.checkpoints.Mutable().newest_promotable = "accounts/acme/trainingSessions/s1/checkpoints/step-40";
  return s;
}

class Harness {
 public:
  Harness(const std::string& policies, ListedResource r) : clock_(kT0) {
    auto store = store::Store::Open({.path = dir_.File("state.db")});
    REQUIRE_MESSAGE(store.ok(), store.status().message());
    store_ = std::move(*store);
    journal = std::make_unique<FaultyJournal>(*store_);
    provider.object = r;
    configured_provider = r.provider;
    key = r.Key();
    Record(r);
    Loaded l = LoadPolicies("policies:\n" + policies);
    REQUIRE_MESSAGE(l.set.has_value(), l.errors);
    engine_ = std::make_unique<policies::Engine>(std::move(*l.set));
    Restart();
    Mark();
  }

  // A new executor on the same store, as after a restart (before any Recover()).
  void Restart() {
    exec_ = std::make_unique<reconcile::Executor>(reconcile::ExecutorDeps{
        .clock = clock_,
        .store = *store_,
        .journal = *journal,
        .metrics = metrics_,
        .provider_of = [this](const std::string& n) -> providers::Provider* {
          return n == configured_provider ? &provider : nullptr;
        },
        .prices = [this]() -> const store::PriceBook& { return prices_; }});
  }

  // The mark an act belongs to (marked now, due now).
  void Mark() {
    REQUIRE(store_->PutMark({.policy = "p", .resource = key, .marked_at = marked_at, .act_after = marked_at,
                             .notified_at = std::nullopt, .reason = "test", .action = ""}).ok());
  }
  reconcile::ActReport Act(bool dry_run = false, std::vector<policies::Snooze> snoozes = {}, std::string policy = "p",
                           std::string resource = "") {
    policies::Decision d;
    d.type = policies::DecisionType::kAct;
    d.policy = policy;
    d.resource = resource.empty() ? key : resource;
    d.action = engine_->FindPolicy("p")->action;
    d.reason = "test";
    d.act_after = marked_at;
    d.dry_run = dry_run;
    reconcile::ActReport out;
    RunAsync(ioc_, ActInto(exec_.get(), engine_.get(), d, std::move(snoozes), &out));
    settled_ = out.settled.has_value();
    return out;
  }
  Status Recover() {
    Status out;
    std::vector<reconcile::SettledMark> settled;
    RunAsync(ioc_, RecoverInto(exec_.get(), &out, &settled));
    settled_ = false;
    for (const reconcile::SettledMark& m : settled) settled_ = settled_ || (m.policy == "p" && m.resource == key);
    return out;
  }
  std::vector<store::Intent> Intents() {
    auto all = store_->IntentsSince(kT0 - 24h);
    REQUIRE(all.ok());
    return *all;
  }
  // Whether the last Act() or Recover() settled the mark (the reconciler then removes it).
  bool Settled() const { return settled_; }
  reconcile::Executor& executor() { return *exec_; }

  FakeProvider provider;
  std::unique_ptr<FaultyJournal> journal;  // faults in front of the real store
  std::string configured_provider;  // the provider name the executor finds configured
  std::string key;
  Time marked_at = kT0;

 private:
  void Record(const ListedResource& r) {
    store::Snapshot snap{.provider = r.provider, .account = r.account, .complete = true, .resources = {r}};
    REQUIRE(store_->Ingest({&snap, 1}, clock_.Now(), prices_).ok());
  }
  static asio::awaitable<void> ActInto(reconcile::Executor* e, const policies::Engine* engine, policies::Decision d,
                                       std::vector<policies::Snooze> snoozes, reconcile::ActReport* out) {
    *out = co_await e->Act(*engine, d, snoozes, nullptr);
  }
  static asio::awaitable<void> RecoverInto(reconcile::Executor* e, Status* out, std::vector<reconcile::SettledMark>* settled) {
    *out = co_await e->Recover(*settled);
  }

  ManualClock clock_;
  TempDir dir_;
  std::unique_ptr<store::Store> store_;
  exporters::Metrics metrics_;
  store::PriceBook prices_ = Prices();
  std::unique_ptr<policies::Engine> engine_;
  std::unique_ptr<reconcile::Executor> exec_;
  asio::io_context ioc_;
  bool settled_ = false;
};

}  // namespace

TEST_CASE("executor: a due act is confirmed, written, called once and recorded done, and a repeat of its mark calls nothing") {
  Harness h(kDeactivate, Run("r1"));
  auto rep = h.Act();
  CHECK(rep.result == ActResult::kDone);
  CHECK(h.provider.acts == 1);
  auto intents = h.Intents();
  REQUIRE(intents.size() == 1);
  CHECK(intents[0].state == store::IntentState::kDone);
  CHECK(h.Settled());
  REQUIRE(rep.events.size() == 1);
  CHECK(rep.events[0].type == "acted");
  // The unmark lost (a crash before it): the same mark again finds its done intent.
  h.Mark();
  rep = h.Act();
  CHECK(rep.result == ActResult::kDone);
  CHECK(rep.detail.find("already done") != std::string::npos);
  CHECK(h.provider.acts == 1);
}

TEST_CASE("executor: confirm before act — no call when the fresh read fails, shows it gone, transitional or compliant") {
  SUBCASE("read fails") {
    Harness h(kDeactivate, Run("r1"));
    h.provider.read_fails = {true};
    CHECK(h.Act().result == ActResult::kDeferred);
    CHECK(h.provider.acts == 0);
    CHECK(h.Intents().empty());
    CHECK_FALSE(h.Settled());
  }
  SUBCASE("gone") {
    Harness h(kDeactivate, Run("r1"));
    h.provider.gone = true;
    CHECK(h.Act().result == ActResult::kNotNeeded);
    CHECK(h.provider.acts == 0);
    CHECK(h.Settled());
  }
  SUBCASE("transitional") {
    Harness h(kDeactivate, Run("r1"));
    h.provider.object.transitional = true;
    h.provider.object.native_status = "DEACTIVATING";
    CHECK(h.Act().result == ActResult::kDeferred);
    CHECK(h.provider.acts == 0);
    CHECK_FALSE(h.Settled());
  }
  SUBCASE("compliant on the fresh object") {
    Harness h(kDeactivate, Run("r1"));
    h.provider.object.lifecycle = Lifecycle::kStopped;
    h.provider.object.billing.billable = false;
    CHECK(h.Act().result == ActResult::kNotNeeded);
    CHECK(h.provider.acts == 0);
    CHECK(h.Settled());
  }
  SUBCASE("snoozed since it was marked") {
    Harness h(kDeactivate, Run("r1"));
    auto rep = h.Act(false, {policies::Snooze{.resource = h.key, .policy = "", .until = std::nullopt, .reason = "demo",
                                              .by = "ana"}});
    CHECK(rep.result == ActResult::kNotNeeded);
    CHECK(rep.detail.find("snoozed") != std::string::npos);
    CHECK(h.provider.acts == 0);
  }
}

TEST_CASE("executor: no call for a policy, resource or provider no longer known, or while an earlier attempt is open") {
  SUBCASE("the policy was removed by a reload") {
    Harness h(kDeactivate, Run("r1"));
    CHECK(h.Act(false, {}, "gone-policy").result == ActResult::kNotNeeded);
    CHECK(h.provider.reads + h.provider.acts == 0);
  }
  SUBCASE("the resource is not in the store") {
    Harness h(kDeactivate, Run("r1"));
    CHECK(h.Act(false, {}, "p", "bt/baseten.run/nope").result == ActResult::kNotNeeded);
    CHECK(h.provider.reads + h.provider.acts == 0);
  }
  SUBCASE("its provider is no longer configured") {
    Harness h(kDeactivate, Run("r1"));
    h.configured_provider = "other";
    auto rep = h.Act();
    CHECK(rep.result == ActResult::kDeferred);
    CHECK(rep.detail.find("not configured") != std::string::npos);
    CHECK(h.provider.reads + h.provider.acts == 0);
  }
  SUBCASE("a crash left the last attempt's intent open: nothing until recovery settles it") {
    Harness h(kDeactivate, Run("r1"));
    h.journal->fail_every_finish = true;  // the outcome never lands, as if killed after the call
    h.Act();
    REQUIRE(h.provider.acts == 1);
    h.journal->fail_every_finish = false;
    h.Restart();  // a new process: nothing held in memory
    auto rep = h.Act();
    CHECK(rep.result == ActResult::kDeferred);
    CHECK(rep.detail.find("still open") != std::string::npos);
    CHECK(h.provider.acts == 1);
    CHECK(h.executor().unresolved() == 1);
  }
}

TEST_CASE("executor: inert by default — a dry run records 'would act' once and calls nothing") {
  Harness h(kDeactivate, Run("r1"));
  auto rep = h.Act(true);
  CHECK(rep.result == ActResult::kDryRun);
  REQUIRE(rep.events.size() == 1);
  CHECK(rep.events[0].type == "would_act");
  rep = h.Act(true);
  CHECK(rep.result == ActResult::kDryRun);
  CHECK(rep.events.empty());  // reported before
  CHECK(h.provider.acts == 0);
  CHECK(h.provider.reads == 0);
  auto intents = h.Intents();
  REQUIRE(intents.size() == 1);
  CHECK(intents[0].state == store::IntentState::kSkipped);
  CHECK(intents[0].dry_run);
}

TEST_CASE("executor: checkpoint protection — a delete that would lose unpromoted checkpoints is refused uncalled") {
  Harness h(kDeleteRefuse, SessionWithCheckpoint());
  auto rep = h.Act();
  CHECK(rep.result == ActResult::kRefused);
  CHECK(h.provider.acts == 0);
  CHECK(h.Intents().empty());
}

TEST_CASE("executor: promote_latest deletes only after a promotion verified on a fresh read") {
  SUBCASE("promotion fails: no delete, tried again under a new key") {
    Harness h(kDeletePromote, SessionWithCheckpoint());
    h.provider.promotions = {Outcome::kFailed};
    CHECK(h.Act().result == ActResult::kDeferred);
    CHECK(h.provider.promotes == 1);
    CHECK(h.provider.acts == 0);
    CHECK(h.Act().result == ActResult::kDone);
    CHECK(h.provider.promotes == 2);
    CHECK(h.provider.acts == 1);
  }
  SUBCASE("promotion reported done but not visible: no delete, and it is never repeated blindly") {
    Harness h(kDeletePromote, SessionWithCheckpoint());
    h.provider.promotion_shows = false;
    CHECK(h.Act().result == ActResult::kDeferred);
    CHECK(h.Act().result == ActResult::kDeferred);
    CHECK(h.provider.promotes == 1);
    CHECK(h.provider.acts == 0);
  }
  SUBCASE("verified: promoted, then deleted") {
    Harness h(kDeletePromote, SessionWithCheckpoint());
    CHECK(h.Act().result == ActResult::kDone);
    CHECK(h.provider.promotes == 1);
    CHECK(h.provider.acts == 1);
    int done = 0;
    for (const store::Intent& i : h.Intents()) done += i.state == store::IntentState::kDone;
    CHECK(done == 2);
  }
}

TEST_CASE("executor: an outcome not known is settled by a re-read, or held open until one answers") {
  SUBCASE("the re-read shows it done") {
    Harness h(kDeactivate, Run("r1"));
    h.provider.outcomes = {Outcome::kUnknown};
    h.provider.unknown_took_effect = true;
    CHECK(h.Act().result == ActResult::kDone);
    CHECK(h.Intents().at(0).state == store::IntentState::kDone);
  }
  SUBCASE("the re-read shows it not done: a failed attempt, retried") {
    Harness h(kDeactivate, Run("r1"));
    h.provider.outcomes = {Outcome::kUnknown};
    CHECK(h.Act().result == ActResult::kDeferred);
    CHECK(h.Intents().at(0).state == store::IntentState::kFailed);
    CHECK(h.Act().result == ActResult::kDone);
    CHECK(h.provider.acts == 2);
  }
  SUBCASE("the re-read fails: open, held, then settled by Recover") {
    Harness h(kDeactivate, Run("r1"));
    h.provider.outcomes = {Outcome::kUnknown};
    h.provider.unknown_took_effect = true;
    h.provider.read_fails = {false, true};  // the confirm read answers, the re-read does not
    CHECK(h.Act().result == ActResult::kDeferred);
    CHECK(h.Intents().at(0).state == store::IntentState::kOpen);
    CHECK(h.executor().unresolved() == 1);
    CHECK(h.Act().result == ActResult::kDeferred);
    CHECK(h.provider.acts == 1);
    REQUIRE(h.Recover().ok());
    CHECK(h.executor().unresolved() == 0);
    CHECK(h.Intents().at(0).state == store::IntentState::kDone);
    CHECK(h.Settled());
  }
}

TEST_CASE("executor: a refusal is recorded once, and retryable failures give up after the attempt limit") {
  SUBCASE("refused") {
    Harness h(kDeactivate, Run("r1"));
    h.provider.outcomes = {Outcome::kRefused};
    auto rep = h.Act();
    CHECK(rep.result == ActResult::kRefused);
    REQUIRE(rep.events.size() == 1);
    CHECK(rep.events[0].type == "refused");
    CHECK(h.Act().result == ActResult::kRefused);
    CHECK(h.provider.acts == 1);
  }
  SUBCASE("failed") {
    Harness h(kDeactivate, Run("r1"));
    h.provider.outcomes = {Outcome::kFailed, Outcome::kFailed, Outcome::kFailed};
    CHECK(h.Act().result == ActResult::kDeferred);
    CHECK(h.Act().result == ActResult::kDeferred);
    auto third = h.Act();
    CHECK(third.result == ActResult::kGaveUp);
    REQUIRE(third.events.size() == 1);
    CHECK(third.events[0].type == "failed");
    CHECK(h.Act().result == ActResult::kGaveUp);
    CHECK(h.provider.acts == reconcile::Executor::kMaxAttempts);
  }
}

TEST_CASE("executor: exactly once — no call without a written intent, and an unwritten outcome holds the resource") {
  SUBCASE("the intent cannot be written") {
    Harness h(kDeactivate, Run("r1"));
    h.journal->fail_begin = true;
    auto rep = h.Act();
    CHECK(rep.result == ActResult::kDeferred);
    CHECK(rep.detail.find("writing the intent") != std::string::npos);
    CHECK(h.provider.acts == 0);
  }
  SUBCASE("earlier attempts cannot be read: whether it was done is unknown, so no call") {
    Harness h(kDeactivate, Run("r1"));
    h.journal->fail_reads = true;
    auto rep = h.Act();
    CHECK(rep.result == ActResult::kDeferred);
    CHECK(rep.detail.find("reading earlier attempts") != std::string::npos);
    CHECK(h.provider.acts == 0);
    CHECK(h.journal->begins == 0);
  }
  SUBCASE("the outcome cannot be written") {
    Harness h(kDeactivate, Run("r1"));
    h.journal->fail_every_finish = true;
    h.Act();
    CHECK(h.provider.acts == 1);
    CHECK(h.executor().unresolved() == 1);
    CHECK_FALSE(h.Settled());
    h.Act();
    CHECK(h.provider.acts == 1);
    h.journal->fail_every_finish = false;
    REQUIRE(h.Recover().ok());
    CHECK(h.executor().unresolved() == 0);
    CHECK(h.Intents().at(0).state == store::IntentState::kDone);
  }
}

TEST_CASE("executor: recovery at start settles each open intent on the provider's word") {
  SUBCASE("not done: abandoned, and the mark decides again") {
    Harness h(kDeactivate, Run("r1"));
    h.journal->fail_finish = store::IntentState::kFailed;
    h.provider.outcomes = {Outcome::kFailed};
    h.Act();
    h.journal->fail_finish.reset();
    REQUIRE(h.Intents().at(0).state == store::IntentState::kOpen);
    REQUIRE(h.Recover().ok());
    CHECK(h.Intents().at(0).state == store::IntentState::kAbandoned);
    CHECK_FALSE(h.Settled());
  }
  SUBCASE("no answer: stays open and held") {
    Harness h(kDeactivate, Run("r1"));
    h.provider.outcomes = {Outcome::kUnknown};
    h.provider.read_fails = {false, true, true};
    h.Act();
    REQUIRE(h.Recover().ok());
    CHECK(h.Intents().at(0).state == store::IntentState::kOpen);
    CHECK(h.executor().unresolved() == 1);
  }
}

}  // namespace loopwarden::testing
