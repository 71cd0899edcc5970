#include "reconcile/executor.h"

#include <csignal>
#include <cstdlib>

#include "core/log.h"
#include "reconcile/events.h"
#include "reconcile/views.h"

namespace loopwarden::reconcile {

namespace {

using policies::Decision;
using policies::Engine;
using policies::Policy;

bool Live(const Resource& r) {
  return !r.transitional && r.lifecycle != Lifecycle::kUnknown && r.lifecycle != Lifecycle::kStarting;
}

// Seconds the provider's own reaper would still have let it run, for savings estimates.
std::optional<Duration> SavingsCap(const store::ResourceState& st, Time now) {
  if (!st.resource.native_timeout) return std::nullopt;
  const auto idle = st.IdleSince();
  if (!idle) return *st.resource.native_timeout;
  return std::max(Duration::zero(), *st.resource.native_timeout - (now - *idle));
}

}  // namespace

std::string_view ActResultName(ActResult r) {
  switch (r) {
    case ActResult::kDone: return "done";
    case ActResult::kDryRun: return "dry_run";
    case ActResult::kNotNeeded: return "not_needed";
    case ActResult::kDeferred: return "deferred";
    case ActResult::kRefused: return "refused";
    case ActResult::kGaveUp: return "gave_up";
  }
  return "unknown";
}

bool EffectVisible(ActionType action, const Resource& r) {
  const Lifecycle l = r.lifecycle;
  switch (action) {
    case ActionType::kDeactivate:
      return l == Lifecycle::kStopped || l == Lifecycle::kScaledToZero || l == Lifecycle::kDeleted ||
             l == Lifecycle::kFailed;
    case ActionType::kScaleToZero:
      return l == Lifecycle::kScaledToZero || l == Lifecycle::kStopped || l == Lifecycle::kDeleted ||
             (l != Lifecycle::kUnknown && r.billing.replicas == 0 && !r.billing.billable);
    case ActionType::kCancel:
      return l == Lifecycle::kStopped || l == Lifecycle::kFailed || l == Lifecycle::kDeleted;
    case ActionType::kDelete:
    case ActionType::kPromoteThenDelete: return l == Lifecycle::kDeleted;
    case ActionType::kNotify: return true;
  }
  return false;
}

Executor::Executor(ExecutorDeps deps) : d_(std::move(deps)) {
  if (const char* c = std::getenv("LOOPWARDEN_TEST_CRASH_AT"); c != nullptr) crash_at_ = c;
  if (const char* c = std::getenv("LOOPWARDEN_TEST_PAUSE_AT"); c != nullptr) pause_at_ = c;
}

void Executor::MaybeCrash(std::string_view point) const {
  if (crash_at_ == point) {
    Log().Warn("LOOPWARDEN_TEST_CRASH_AT: killing the process", {{"point", point}});
    std::raise(SIGKILL);
  }
  // The HA tests' pause at an exact point (once a process): a leader stopped here and
  // resumed after a takeover must not reach the provider.
  if (pause_at_ == point) {
    pause_at_.clear();
    Log().Warn("LOOPWARDEN_TEST_PAUSE_AT: stopping the process", {{"point", point}});
    std::raise(SIGSTOP);
  }
}

Status Executor::IngestFresh(const ListedResource& fresh) {
  store::Snapshot snap{.provider = fresh.provider, .account = fresh.account, .complete = true,
                       .partial_update = true, .resources = {fresh}};
  providers::BoundProviderText(snap.resources.front());
  return d_.store.Ingest(std::span<const store::Snapshot>(&snap, 1), d_.clock.Now(), d_.prices()).status();
}

// A deactivate or scale-to-zero stops the GPU bill when the provider takes it, not at
// the next poll: left to the poll, the interval ran on for up to a poll interval (+19 %
// GPU spend on stopped runs in the fleet week). The object as the provider shows it now
// closes the interval here; one still billing (draining) keeps it open, as it should.
// A failed read changes nothing: the next poll records the stop as before.
boost::asio::awaitable<void> Executor::RecordAfterAct(providers::Provider& provider, const Resource& r) {
  Result<providers::RefreshResult> after = co_await provider.Refresh(r);
  if (!after.ok() || !after->resource) co_return;
  if (Status s = IngestFresh(*after->resource); !s.ok()) {
    Log().Warn("recording the object after acting", {{"resource", r.Key()}, {"err", s}});
  }
}

bool Executor::Finish(int64_t id, const std::string& resource, store::IntentState state, std::string_view outcome,
                      std::string_view response, std::string_view error, Time at) {
  Status s = d_.journal.FinishIntent(id, state, outcome, response, error, at);
  if (!s.ok()) {
    unresolved_.insert(resource);
    Log().Error("an action's outcome was not recorded; its intent stays open and holds the resource until recovery "
                "settles it on the provider's word",
                {{"intent", static_cast<long>(id)}, {"resource", resource}, {"state", store::IntentStateName(state)}, {"err", s}});
  }
  return s.ok();
}

boost::asio::awaitable<ActReport> Executor::Act(const Engine& engine, const Decision& decision,
                                                std::span<const policies::Snooze> snoozes,
                                                const policies::AccountAggregates* account) {
  ActReport rep;
  const Policy* policy = engine.FindPolicy(decision.policy);
  const store::ResourceState* st = d_.store.Find(decision.resource);
  if (policy == nullptr || st == nullptr) {
    rep.result = ActResult::kNotNeeded;
    rep.detail = "policy or resource no longer known";
    co_return rep;
  }
  const Policy& p = *policy;
  if (unresolved_.count(decision.resource)) {
    rep.detail = "an earlier call's outcome is still unresolved";
    co_return rep;
  }
  providers::Provider* provider = d_.provider_of(st->resource.provider);
  if (provider == nullptr) {
    rep.detail = "provider " + st->resource.provider + " is not configured";
    co_return rep;
  }
  Time marked_at = d_.clock.Now();
  if (auto m = d_.store.marks().find({p.name, decision.resource}); m != d_.store.marks().end()) {
    marked_at = m->second.marked_at;
  }
  const store::IntentKey mark = store::IntentKey::ForMark(p.name, decision.resource, p.action, marked_at);

  int failed = 0;
  if (auto ended = EarlierAttempts(decision, mark, failed)) co_return *ended;
  if (decision.dry_run) co_return RecordDryRun(p, decision, *st, mark);
  if (failed >= kMaxAttempts) {
    rep.result = ActResult::kGaveUp;
    rep.detail = "gave up after " + std::to_string(failed) + " failed attempts";
    co_return rep;
  }
  std::optional<Resource> confirmed;
  if (auto ended = co_await Confirm(engine, p, decision, *provider, snoozes, account, mark, confirmed)) co_return *ended;
  const store::IntentKey key = mark.Attempt(failed + 1);
  // promote_latest: promote, verify on a fresh read, and only then delete.
  const Resource& r = *confirmed;
  if (IsIrreversible(p.action) && p.checkpoints == policies::CheckpointMode::kPromoteLatest &&
      r.checkpoints->promotable > 0 && !r.checkpoints->newest_promotable_promoted && r.checkpoints->reachable) {
    ActReport pr = co_await Promote(p, r, key, *provider);
    if (pr.result != ActResult::kDone) co_return pr;
  }
  co_return co_await Call(p, decision, r, mark, failed, *provider);
}

std::optional<ActReport> Executor::EarlierAttempts(const Decision& decision, const store::IntentKey& mark, int& failed) {
  ActReport rep;
  auto prior = d_.journal.IntentsOfMark(mark);
  if (!prior.ok()) {
    rep.detail = "reading earlier attempts: " + prior.status().message();
    return rep;
  }
  failed = 0;
  for (const store::Intent& i : *prior) {
    // IntentsOfMark returns only keys that parse.
    if (store::IntentKey::Parse(i.idempotency_key)->promotion()) continue;
    if (i.state == store::IntentState::kDone) {
      rep.settled = "done before";
      rep.result = ActResult::kDone;
      rep.detail = "already done (intent " + std::to_string(i.id) + ")";
      return rep;
    }
    if (i.state == store::IntentState::kSkipped && i.dry_run && decision.dry_run) {
      rep.result = ActResult::kDryRun;
      rep.detail = "would act (reported before)";
      return rep;
    }
    if (i.state == store::IntentState::kOpen) {
      unresolved_.insert(decision.resource);
      rep.detail = "intent " + std::to_string(i.id) + " is still open";
      return rep;
    }
    if (i.state == store::IntentState::kFailed && i.outcome == providers::OutcomeName(providers::Outcome::kRefused)) {
      rep.result = ActResult::kRefused;
      rep.detail = "refused before: " + i.error;
      return rep;
    }
    if (i.state == store::IntentState::kFailed || i.state == store::IntentState::kAbandoned) ++failed;
  }
  return std::nullopt;
}

ActReport Executor::RecordDryRun(const Policy& p, const Decision& decision, const store::ResourceState& st,
                                 const store::IntentKey& mark) {
  ActReport rep;
  const Time now = d_.clock.Now();
  const std::string action_name(ActionName(p.action));
  store::Intent in{.idempotency_key = mark.ToString(), .resource = decision.resource, .policy = p.name,
                   .action = action_name, .request = "dry run: " + action_name + " " + decision.resource,
                   .created_at = now, .dry_run = true, .burn_per_hour = st.BurnPerHour(),
                   .savings_cap = SavingsCap(st, now)};
  // Not recorded, the next cycle reports it again: noisy, never unsafe.
  if (auto id = d_.journal.BeginIntent(in); !id.ok()) {
    Log().Warn("dry run not recorded; it is reported again next cycle", {{"resource", decision.resource}, {"err", id.status()}});
  } else {
    Finish(*id, decision.resource, store::IntentState::kSkipped, "dry_run", "", "", now);
  }
  d_.metrics.RecordAction(p.name, action_name, exporters::ActionResult::kDryRun);
  Log().Info("dry run: would act", {{"policy", p.name}, {"resource", decision.resource}, {"action", action_name},
                                    {"reason", decision.reason}});
  rep.result = ActResult::kDryRun;
  rep.detail = "would " + action_name;
  rep.events.push_back(Event("would_act", p, st.resource, mark.ToString(), decision.reason));
  return rep;
}

boost::asio::awaitable<std::optional<ActReport>> Executor::Confirm(const Engine& engine, const Policy& p,
                                                                   const Decision& decision, providers::Provider& provider,
                                                                   std::span<const policies::Snooze> snoozes,
                                                                   const policies::AccountAggregates* account,
                                                                   const store::IntentKey& mark,
                                                                   std::optional<Resource>& confirmed) {
  ActReport rep;
  const std::string action_name(ActionName(p.action));
  const std::string& resource_key = decision.resource;
  const Resource cached = d_.store.Find(resource_key)->resource;
  // The provider's current object decides, not the cached one.
  Result<providers::RefreshResult> fresh = co_await provider.Refresh(cached);
  if (!fresh.ok()) {
    d_.metrics.RecordAction(p.name, action_name, exporters::ActionResult::kConfirmFailed);
    rep.detail = "confirm read failed: " + fresh.status().message();
    Log().Warn("confirm-before-act read failed; not acting", {{"resource", resource_key}, {"err", fresh.status()}});
    co_return rep;
  }
  if (fresh->gone || !fresh->resource) {
    rep.settled = "gone before acting";
    rep.result = ActResult::kNotNeeded;
    rep.detail = "gone before acting";
    co_return rep;
  }
  if (Status s = IngestFresh(*fresh->resource); !s.ok()) {
    rep.detail = "recording the fresh object: " + s.message();
    co_return rep;
  }
  const store::ResourceState* st = d_.store.Find(resource_key);
  if (st == nullptr) {
    rep.result = ActResult::kNotNeeded;
    co_return rep;
  }
  const Resource& r = st->resource;
  const Time at = d_.clock.Now();
  if (!Live(r)) {
    rep.detail = "fresh object is transitional (" + r.native_status + "); not acting";
    co_return rep;
  }
  if (auto why = engine.Exempt(p, r, snoozes, at)) {
    rep.result = ActResult::kNotNeeded;
    rep.detail = *why;
    co_return rep;
  }
  if (!p.budget) {
    const StateFacts facts(at);
    policies::Verdict verdict = engine.Check(p, facts.View(*st), account, at);
    if (verdict.match != policies::Tri::kTrue) {
      if (verdict.match == policies::Tri::kFalse) rep.settled = "no longer matches: " + verdict.reason;
      d_.metrics.RecordAction(p.name, action_name, exporters::ActionResult::kNotNeeded);
      rep.result = ActResult::kNotNeeded;
      rep.detail = "the fresh object no longer matches: " + verdict.reason;
      Log().Info("not acting: the fresh object no longer matches",
                 {{"policy", p.name}, {"resource", resource_key}, {"reason", verdict.reason}});
      co_return rep;
    }
  }
  if (std::string refusal = Engine::CheckpointRefusal(p, r); !refusal.empty()) {
    d_.metrics.RecordAction(p.name, action_name, exporters::ActionResult::kRefused);
    rep.result = ActResult::kRefused;
    rep.detail = refusal;
    rep.events.push_back(Event("refused", p, r, mark.ToString(), refusal));
    co_return rep;
  }
  confirmed = r;
  co_return std::nullopt;
}

boost::asio::awaitable<ActReport> Executor::Call(const Policy& p, const Decision& decision, const Resource& r,
                                                 const store::IntentKey& mark, int failed, providers::Provider& provider) {
  ActReport rep;
  const ActionType action = p.action;
  const std::string action_name(ActionName(action));
  const std::string& resource_key = decision.resource;
  const store::IntentKey key = mark.Attempt(failed + 1);
  const std::string base_key = mark.ToString();  // what the act's notices are deduplicated by
  const store::ResourceState* st = d_.store.Find(resource_key);
  const Time at = d_.clock.Now();
  store::Intent in{.idempotency_key = key.ToString(), .resource = resource_key, .policy = p.name, .action = action_name,
                   .request = action_name + " " + r.provider + "/" + std::string(KindName(r.kind)) + "/" + r.id,
                   .created_at = at, .burn_per_hour = st ? st->BurnPerHour() : Money(),
                   .savings_cap = st ? SavingsCap(*st, at) : std::nullopt};
  auto intent_id = d_.journal.BeginIntent(in);
  if (!intent_id.ok()) {
    rep.detail = "writing the intent: " + intent_id.status().message();
    Log().Error("could not write the intent; not calling the provider", {{"resource", resource_key},
                                                                          {"err", intent_id.status()}});
    co_return rep;
  }
  MaybeCrash("after_intent");
  if (decision.act_after) {
    d_.metrics.ObserveActionLatency(std::chrono::duration<double>(d_.clock.Now() - *decision.act_after).count());
  }
  providers::ActionOutcome out = co_await provider.Act(r, action);
  MaybeCrash("after_call");
  providers::Outcome outcome = out.outcome;
  if (outcome == providers::Outcome::kUnknown) {
    // Sent, no answer: the provider's object says whether it happened.
    Result<providers::RefreshResult> again = co_await provider.Refresh(r);
    if (again.ok() && (again->gone || (again->resource && EffectVisible(action, *again->resource)))) {
      outcome = providers::Outcome::kDone;
      out.detail = "outcome unknown; a re-read shows it done";
    } else if (again.ok()) {
      outcome = providers::Outcome::kFailed;
      out.detail = "outcome unknown; a re-read shows it not done";
    } else {
      // Still unknown: leave the intent open for Recover() to settle.
      unresolved_.insert(resource_key);
      rep.detail = "outcome unknown and the re-read failed: " + again.status().message();
      d_.metrics.RecordAction(p.name, action_name, exporters::ActionResult::kUnknown);
      Log().Error("action outcome unknown", {{"resource", resource_key}, {"err", again.status()}});
      co_return rep;
    }
  }
  const Time done_at = d_.clock.Now();
  const std::string error = out.error.message.empty() ? out.detail : out.error.message;
  switch (outcome) {
    case providers::Outcome::kDone:
    case providers::Outcome::kAlreadyDone: {
      if (Finish(*intent_id, resource_key, store::IntentState::kDone, providers::OutcomeName(outcome), out.response, "",
                 done_at)) {
        rep.settled = "done";
      }
      d_.metrics.RecordAction(p.name, action_name,
                              outcome == providers::Outcome::kDone ? exporters::ActionResult::kOk
                                                                   : exporters::ActionResult::kAlreadyDone);
      Log().Info("acted", {{"policy", p.name}, {"resource", resource_key}, {"action", action_name},
                           {"request", out.request}, {"outcome", providers::OutcomeName(outcome)}});
      rep.result = ActResult::kDone;
      rep.detail = std::string(providers::OutcomeName(outcome));
      rep.events.push_back(Event("acted", p, r, base_key, decision.reason));
      if (outcome == providers::Outcome::kDone) co_await RecordAfterAct(provider, r);
      co_return rep;
    }
    case providers::Outcome::kRefused:
      Finish(*intent_id, resource_key, store::IntentState::kFailed, providers::OutcomeName(outcome), out.response, error,
             done_at);
      d_.metrics.RecordAction(p.name, action_name, exporters::ActionResult::kRefused);
      Log().Warn("provider refused the action", {{"policy", p.name}, {"resource", resource_key}, {"why", error}});
      rep.result = ActResult::kRefused;
      rep.detail = error;
      rep.events.push_back(Event("refused", p, r, base_key, "the provider refused: " + error));
      co_return rep;
    default:
      Finish(*intent_id, resource_key, store::IntentState::kFailed, providers::OutcomeName(outcome), out.response, error,
             done_at);
      d_.metrics.RecordAction(p.name, action_name, exporters::ActionResult::kFailed);
      Log().Warn("action failed; will retry next cycle",
                 {{"policy", p.name}, {"resource", resource_key}, {"why", error}, {"attempt", failed + 1}});
      rep.result = failed + 1 >= kMaxAttempts ? ActResult::kGaveUp : ActResult::kDeferred;
      rep.detail = error;
      if (rep.result == ActResult::kGaveUp) {
        rep.events.push_back(Event("failed", p, r, base_key,
                                   "gave up after " + std::to_string(kMaxAttempts) + " attempts: " + error));
      }
      co_return rep;
  }
}

boost::asio::awaitable<ActReport> Executor::Promote(const Policy& p, const Resource& r, const store::IntentKey& key,
                                                    providers::Provider& provider) {
  ActReport rep;
  const Checkpoints& c = *r.checkpoints;
  const std::string logical =
      c.newest_promotable_name.empty() ? providers::LogicalCheckpointName(c.newest_promotable, true)
                                       : std::string(c.newest_promotable_name);
  const std::string model = providers::PromotedModelId(r.id, logical);
  const Time at = d_.clock.Now();
  // A promotion the provider refused or failed outright (nothing happened) is tried
  // again under a new key, up to the attempt limit; one that may have happened (done,
  // open, or of unknown outcome) is only verified, never repeated blindly.
  auto prior = d_.journal.IntentsOfMark(key);
  if (!prior.ok()) {
    rep.detail = "reading earlier promotions: " + prior.status().message();
    co_return rep;
  }
  int failed = 0;
  bool may_have_happened = false;
  for (const store::Intent& i : *prior) {
    // This attempt's promotions only (IntentsOfMark returns only keys that parse).
    const store::IntentKey k = *store::IntentKey::Parse(i.idempotency_key);
    if (!k.promotion() || k.attempt() != key.attempt()) continue;
    if (i.state == store::IntentState::kFailed) {
      ++failed;
    } else {
      may_have_happened = true;
    }
  }
  if (!may_have_happened && failed >= kMaxAttempts) {
    rep.detail = "promotion failed " + std::to_string(failed) + " times; not deleting";
    co_return rep;
  }
  const std::string promote_key = key.Promotion(failed + 1).ToString();
  store::Intent in{.idempotency_key = promote_key, .resource = r.Key(), .policy = p.name,
                   .action = "promote_checkpoint", .request = "promote " + c.newest_promotable + " as " + model,
                   .created_at = at};
  Result<int64_t> id = AlreadyExists("promotion already attempted");
  if (!may_have_happened) id = d_.journal.BeginIntent(in);
  if (!id.ok() && id.status().code() != StatusCode::kAlreadyExists) {
    rep.detail = "writing the promote intent: " + id.status().message();
    co_return rep;
  }
  if (id.ok()) {
    MaybeCrash("after_intent");
    providers::ActionOutcome out = co_await provider.PromoteCheckpoint(r, c.newest_promotable, model);
    MaybeCrash("after_call");
    const bool ok = out.outcome == providers::Outcome::kDone || out.outcome == providers::Outcome::kAlreadyDone;
    const bool unknown = out.outcome == providers::Outcome::kUnknown;
    const store::IntentState state =
        ok ? store::IntentState::kDone : (unknown ? store::IntentState::kAbandoned : store::IntentState::kFailed);
    if (!Finish(*id, r.Key(), state, providers::OutcomeName(out.outcome),
                out.response, out.error.message, d_.clock.Now())) {
      rep.detail = "the promotion's outcome was not recorded; not deleting";
      co_return rep;
    }
    if (!ok && !unknown) {
      d_.metrics.RecordAction(p.name, "promote_checkpoint", exporters::ActionResult::kFailed);
      rep.result = out.outcome == providers::Outcome::kRefused ? ActResult::kRefused : ActResult::kDeferred;
      rep.detail = "promotion failed, not deleting: " + out.error.message;
      rep.events.push_back(Event("failed", p, r, promote_key, rep.detail));
      co_return rep;
    }
  }
  // Verify on the provider's own view before anything irreversible.
  Result<providers::RefreshResult> fresh = co_await provider.Refresh(r);
  if (!fresh.ok() || !fresh->resource || !fresh->resource->checkpoints->newest_promotable_promoted) {
    d_.metrics.RecordAction(p.name, "promote_checkpoint", exporters::ActionResult::kUnverified);
    rep.detail = "promotion of " + c.newest_promotable + " not verified; not deleting";
    Log().Warn("promotion not verified; not deleting", {{"resource", r.Key()}, {"model", model}});
    co_return rep;
  }
  if (Status st = IngestFresh(*fresh->resource); !st.ok()) {
    // The delete's own confirm read records the object again.
    Log().Warn("recording the object after its promotion", {{"resource", r.Key()}, {"err", st}});
  }
  d_.metrics.RecordAction(p.name, "promote_checkpoint", exporters::ActionResult::kOk);
  Log().Info("checkpoint promoted and verified", {{"resource", r.Key()}, {"checkpoint", c.newest_promotable.view()},
                                                   {"model", model}});
  rep.result = ActResult::kDone;
  co_return rep;
}

boost::asio::awaitable<Status> Executor::Recover(std::vector<SettledMark>& settled) {
  auto open = d_.journal.OpenIntents();
  if (!open.ok()) co_return open.status();
  unresolved_.clear();
  for (const store::Intent& i : *open) {
    const Time now = d_.clock.Now();
    if (i.dry_run) {
      Finish(i.id, i.resource, store::IntentState::kSkipped, "dry_run", "", "", now);
      continue;
    }
    const store::ResourceState* st = d_.store.Find(i.resource);
    providers::Provider* provider = st ? d_.provider_of(st->resource.provider) : nullptr;
    if (st == nullptr || provider == nullptr) {
      Finish(i.id, i.resource, store::IntentState::kAbandoned, "", "", "resource or provider no longer known at recovery", now);
      continue;
    }
    Result<providers::RefreshResult> fresh = co_await provider->Refresh(st->resource);
    if (!fresh.ok()) {
      unresolved_.insert(i.resource);
      Log().Warn("open intent not settled: the provider did not answer", {{"intent", static_cast<long>(i.id)},
                                                                          {"resource", i.resource},
                                                                          {"err", fresh.status()}});
      continue;
    }
    bool done;
    if (i.action == "promote_checkpoint") {
      done = fresh->resource && fresh->resource->checkpoints->newest_promotable_promoted;
    } else {
      auto action = ParseAction(i.action);
      done = fresh->gone || !fresh->resource || (action && EffectVisible(*action, *fresh->resource));
    }
    const std::string note = done ? "recovered: the provider shows it done" : "recovered: the provider shows it not done";
    const bool finished = Finish(i.id, i.resource, done ? store::IntentState::kDone : store::IntentState::kAbandoned,
                                 "recovered", "", done ? "" : note, now);
    if (fresh->resource) {
      if (Status st = IngestFresh(*fresh->resource); !st.ok()) {
        Log().Warn("recording the object read at recovery; the next poll records it", {{"resource", i.resource}, {"err", st}});
      }
    }
    if (finished && done && i.action != "promote_checkpoint") {
      settled.push_back({.policy = i.policy, .resource = i.resource, .why = "done (recovered)"});
    }
    d_.metrics.RecordAction(i.policy, i.action,
                            done ? exporters::ActionResult::kRecoveredDone : exporters::ActionResult::kRecoveredNotDone);
    Log().Info("settled an open intent", {{"intent", static_cast<long>(i.id)}, {"resource", i.resource},
                                          {"action", i.action}, {"result", note}});
  }
  co_return Status::Ok();
}

}  // namespace loopwarden::reconcile
