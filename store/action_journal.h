#pragma once
// The exactly-once record of provider calls (DESIGN.md "exactly once across crashes"):
// an intent is written durably before a call that changes state, and finished with what
// came of it. Each intent is named by an idempotency key that one mark's act keeps
// across restarts, so a call that took effect is never made again and a call whose
// outcome is unknown is settled by reading the provider, not by repeating it.
//
// The executor works against this interface; the Store is the implementation, and
// tests put a fault-injecting one in front of it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/money.h"
#include "core/resource.h"
#include "core/status.h"
#include "core/time.h"

namespace loopwarden::store {

enum class IntentState {
  kOpen,       // written, the call maybe made: settled by reading the provider
  kDone,       // took effect (or was already so)
  kFailed,     // did not take effect (the outcome says whether refused)
  kSkipped,    // a dry run's "would act"
  kAbandoned,  // recovery found it not done, or its resource gone
};
std::string_view IntentStateName(IntentState s);  // "open", "done", …: the column's values
std::optional<IntentState> ParseIntentState(std::string_view s);

// An intent's idempotency key: `policy|resource|action|marked_at_us`, then `#n` from an
// act's second attempt on, then `|promote` (and `#n` from its second attempt) for the
// checkpoint promotion before a delete.
class IntentKey {
 public:
  // The first attempt of the act of the mark placed at `marked_at`.
  static IntentKey ForMark(std::string_view policy, std::string_view resource, ActionType action, Time marked_at);
  // Nothing when `key` is not of this form (a hand edit, damage).
  static std::optional<IntentKey> Parse(std::string_view key);

  IntentKey Attempt(int n) const;    // the act's nth attempt
  IntentKey Promotion(int n) const;  // the nth attempt at the promotion before this act
  // What every attempt and promotion of one mark's act shares: policy|resource|action|marked_at_us.
  const std::string& mark() const { return mark_; }
  int attempt() const { return attempt_; }
  bool promotion() const { return promotion_ > 0; }
  std::string ToString() const;
  bool operator==(const IntentKey&) const = default;

 private:
  IntentKey(std::string mark, int attempt, int promotion) : mark_(std::move(mark)), attempt_(attempt), promotion_(promotion) {}
  std::string mark_;
  int attempt_ = 1;
  int promotion_ = 0;  // 0: the act itself
};

struct Intent {
  int64_t id = 0;
  std::string idempotency_key;  // IntentKey::ToString()
  std::string resource;
  std::string policy;
  std::string action;
  std::string request;  // what will be sent (no secrets)
  Time created_at;
  IntentState state = IntentState::kOpen;
  std::string outcome;
  std::string response;
  std::string error;
  std::optional<Time> finished_at;
  bool dry_run = false;
  Money burn_per_hour;               // when decided: for estimated savings
  std::optional<Duration> savings_cap;  // the provider's own reaper would have stopped it by then
  // The leader lease token it was written under (PostgreSQL replicas); set by the store.
  std::optional<int64_t> fence;
};

class ActionJournal {
 public:
  virtual ~ActionJournal() = default;
  // Writes an open intent durably before a provider call; a repeated idempotency key
  // is kAlreadyExists.
  virtual Result<int64_t> BeginIntent(const Intent& intent) = 0;
  virtual Status FinishIntent(int64_t id, IntentState state, std::string_view outcome, std::string_view response,
                              std::string_view error, Time at) = 0;
  // Intents still open (a crash or an unknown outcome), by id.
  virtual Result<std::vector<Intent>> OpenIntents() = 0;
  // Every attempt and promotion of the act of `key`'s mark, by id; each returned key
  // parses (IntentKey::Parse). A stored key of that mark that does not parse is an
  // error: an attempt that cannot be read might be one that took effect.
  virtual Result<std::vector<Intent>> IntentsOfMark(const IntentKey& key) = 0;
  // Calls that took effect (done, not dry runs) finishing at or after `since`, by id:
  // the cooldown's input.
  virtual Result<std::vector<Intent>> DoneSince(Time since) = 0;
};

}  // namespace loopwarden::store
