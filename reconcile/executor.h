#pragma once
// The executor: turns an `act` decision into at most one effective provider call, and
// resolves what a crash left half done.
//
// For each act: earlier attempts of the same mark are looked up by idempotency key
// (store::IntentKey, in the action journal) so a done action is never repeated; the provider's
// current object is read (confirm-before-act) and the policy re-checked on it, with the
// checkpoint rule; an intent row is written durably; only then is the provider called,
// and the outcome recorded. A checkpoint nobody promoted is promoted, and the promotion
// verified on a fresh read, before a `promote_latest` delete. An outcome that cannot be
// known (sent, no answer) is settled by reading the provider again. Dry-run records a
// "would act" once per mark and calls nothing that mutates.
//
// Recover() runs at start, before anything else: each open intent is settled by reading
// the provider: done if the provider shows the action's effect, else abandoned (the mark
// stays and the next cycle decides again).
//
// Testing hook: LOOPWARDEN_TEST_CRASH_AT=after_intent|after_call makes the process
// SIGKILL itself at that point of the next mutating call (the kill -9 tests).
//
// Used from the io_context thread only.

#include <boost/asio/awaitable.hpp>
#include <functional>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/clock.h"
#include "exporters/metrics.h"
#include "exporters/notice.h"
#include "policies/engine.h"
#include "providers/provider.h"
#include "reconcile/events.h"
#include "store/store.h"

namespace loopwarden::reconcile {

struct ExecutorDeps {
  Clock& clock;
  store::Store& store;  // the resources and marks the executor reads and records
  store::ActionJournal& journal;  // the exactly-once record (the store, or a test's stand-in)
  exporters::Metrics& metrics;
  // The configured provider of a resource (by Resource::provider); null when none.
  std::function<providers::Provider*(const std::string&)> provider_of;
  std::function<const store::PriceBook&()> prices;
};

// A mark an act or a recovery settled.
struct SettledMark {
  std::string policy;
  std::string resource;
  std::string why;
};

// What one act came to, for logs, notices and tests.
enum class ActResult {
  kDone,        // the provider did it (or it was already done)
  kDryRun,      // recorded as "would act"
  kNotNeeded,   // gone, exempt or no longer matching on the fresh object
  kDeferred,    // not now: transitional, confirm read failed, retryable failure
  kRefused,     // the provider or the checkpoint rule said no
  kGaveUp,      // retryable failures exhausted the attempts for this mark
};
std::string_view ActResultName(ActResult r);

struct ActReport {
  ActResult result = ActResult::kDeferred;
  std::string detail;
  // Set when the act settled its mark (done, gone, or the fresh object no longer
  // matches), with why: the reconciler removes it, as it applies every mark change.
  std::optional<std::string> settled;
  std::vector<exporters::Event> events;  // acted / would_act / failed / refused
};

class Executor {
 public:
  explicit Executor(ExecutorDeps deps);

  // `decision` is an act whose grace has passed; `snoozes` and `account` are the
  // cycle's, for the re-check.
  boost::asio::awaitable<ActReport> Act(const policies::Engine& engine, const policies::Decision& decision,
                                        std::span<const policies::Snooze> snoozes,
                                        const policies::AccountAggregates* account);

  // Settles every open intent by reading the provider. Intents it cannot settle (the
  // provider did not answer) stay open and their resources are not acted on until a
  // later Recover() settles them. The marks of the acts it finds done are added to
  // `settled`, for the caller to remove.
  boost::asio::awaitable<Status> Recover(std::vector<SettledMark>& settled);
  size_t unresolved() const { return unresolved_.size(); }

  static constexpr int kMaxAttempts = 3;

 private:
  // The steps of Act, in order. Each returns the report when the act ends there.
  //
  // The attempts of this mark already made: done (settled), reported as a dry run,
  // still open (held), refused; else nothing, with the failed ones counted.
  std::optional<ActReport> EarlierAttempts(const policies::Decision& decision, const store::IntentKey& mark, int& failed);
  // A dry run: "would act", recorded once per mark, nothing called.
  ActReport RecordDryRun(const policies::Policy& p, const policies::Decision& decision, const store::ResourceState& st,
                         const store::IntentKey& mark);
  // Confirm before act: the provider's object now, recorded, live, not exempt, still
  // matching the policy with the account counts as they stand, and no checkpoint lost.
  // On nothing, `confirmed` holds that object.
  boost::asio::awaitable<std::optional<ActReport>> Confirm(const policies::Engine& engine, const policies::Policy& p,
                                                           const policies::Decision& decision,
                                                           providers::Provider& provider,
                                                           std::span<const policies::Snooze> snoozes,
                                                           const policies::AccountAggregates* account,
                                                           const store::IntentKey& mark,
                                                           std::optional<Resource>& confirmed);
  // The call: its intent written first, an unknown outcome settled by a re-read, the
  // outcome recorded.
  boost::asio::awaitable<ActReport> Call(const policies::Policy& p, const policies::Decision& decision,
                                         const Resource& r, const store::IntentKey& mark, int failed,
                                         providers::Provider& provider);
  // `key`: the act's attempt the promotion comes before.
  boost::asio::awaitable<ActReport> Promote(const policies::Policy& p, const Resource& r, const store::IntentKey& key,
                                            providers::Provider& provider);
  Status IngestFresh(const ListedResource& fresh);
  // Writes an intent's outcome; false when it could not. Then the intent stays open and
  // the resource is held (unresolved) until Recover() settles it from the provider: the
  // exactly-once record is never left saying less than what happened.
  bool Finish(int64_t id, const std::string& resource, store::IntentState state, std::string_view outcome,
              std::string_view response, std::string_view error, Time at);
  // Records the provider's object as it is right after a call that took effect.
  boost::asio::awaitable<void> RecordAfterAct(providers::Provider& provider, const Resource& r);
  void MaybeCrash(std::string_view point) const;
  exporters::Event Event(std::string type, const policies::Policy& p, const Resource& r, const std::string& dedupe,
                         std::string reason) const {
    return ActEvent(std::move(type), p, r, dedupe, std::move(reason), d_.clock.Now());
  }

  ExecutorDeps d_;
  std::string crash_at_;
  mutable std::string pause_at_;
  std::set<std::string> unresolved_;  // resource keys with open intents
};

// Whether `fresh` shows the effect of `action` (deactivated, scaled to zero, cancelled,
// deleted). A resource the provider no longer has shows every effect.
bool EffectVisible(ActionType action, const Resource& fresh);

}  // namespace loopwarden::reconcile
