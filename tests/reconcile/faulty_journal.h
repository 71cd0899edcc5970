#pragma once
// An action journal in front of a real one that fails the calls a test names: the
// executor's every exit that depends on the exactly-once record, in milliseconds.

#include <optional>

#include "store/action_journal.h"

namespace loopwarden::testing {

class FaultyJournal : public store::ActionJournal {
 public:
  explicit FaultyJournal(store::ActionJournal& real) : real_(real) {}

  bool fail_begin = false;  // BeginIntent: disk full
  // FinishIntent of this state fails (every state when `fail_every_finish`).
  std::optional<store::IntentState> fail_finish;
  bool fail_every_finish = false;
  bool fail_reads = false;  // OpenIntents, IntentsOfMark, DoneSince
  int begins = 0;  // BeginIntent calls that reached the real journal

  Result<int64_t> BeginIntent(const store::Intent& intent) override {
    if (fail_begin) return Unavailable("injected: disk full");
    ++begins;
    return real_.BeginIntent(intent);
  }
  Status FinishIntent(int64_t id, store::IntentState state, std::string_view outcome, std::string_view response,
                      std::string_view error, Time at) override {
    if (fail_every_finish || fail_finish == state) return Unavailable("injected: disk I/O error");
    return real_.FinishIntent(id, state, outcome, response, error, at);
  }
  Result<std::vector<store::Intent>> OpenIntents() override {
    if (fail_reads) return Unavailable("injected: read failed");
    return real_.OpenIntents();
  }
  Result<std::vector<store::Intent>> IntentsOfMark(const store::IntentKey& key) override {
    if (fail_reads) return Unavailable("injected: read failed");
    return real_.IntentsOfMark(key);
  }
  Result<std::vector<store::Intent>> DoneSince(Time since) override {
    if (fail_reads) return Unavailable("injected: read failed");
    return real_.DoneSince(since);
  }

 private:
  store::ActionJournal& real_;
};

}  // namespace loopwarden::testing
