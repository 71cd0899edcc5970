#include "store/action_journal.h"

#include <charconv>

namespace loopwarden::store {

namespace {

// `s` is a decimal number of at least one digit (and fits an int64).
bool AllDigits(std::string_view s, int64_t* value = nullptr) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || s[0] == '-' || s[0] == '+') return false;
  if (value) *value = v;
  return true;
}

// Splits a trailing "#n" (n >= 2) off `s`; 1 when there is none, 0 when it is malformed.
int TrailingAttempt(std::string_view& s) {
  const size_t hash = s.rfind('#');
  if (hash == std::string_view::npos) return 1;
  int64_t n = 0;
  if (!AllDigits(s.substr(hash + 1), &n)) return 1;  // a '#' inside the resource's id
  if (n < 2 || n > 1'000'000) return 0;
  s = s.substr(0, hash);
  return static_cast<int>(n);
}

}  // namespace

std::string_view IntentStateName(IntentState s) {
  switch (s) {
    case IntentState::kOpen: return "open";
    case IntentState::kDone: return "done";
    case IntentState::kFailed: return "failed";
    case IntentState::kSkipped: return "skipped";
    case IntentState::kAbandoned: return "abandoned";
  }
  return "open";
}

std::optional<IntentState> ParseIntentState(std::string_view s) {
  for (IntentState v : {IntentState::kOpen, IntentState::kDone, IntentState::kFailed, IntentState::kSkipped,
                        IntentState::kAbandoned}) {
    if (IntentStateName(v) == s) return v;
  }
  return std::nullopt;
}

IntentKey IntentKey::ForMark(std::string_view policy, std::string_view resource, ActionType action, Time marked_at) {
  std::string mark;
  mark.append(policy).append("|").append(resource).append("|").append(ActionName(action)).append("|");
  mark.append(std::to_string(ToUnixMicros(marked_at)));
  return IntentKey(std::move(mark), 1, 0);
}

IntentKey IntentKey::Attempt(int n) const { return IntentKey(mark_, n, 0); }
IntentKey IntentKey::Promotion(int n) const { return IntentKey(mark_, attempt_, n); }

std::string IntentKey::ToString() const {
  std::string s = mark_;
  if (attempt_ > 1) s += "#" + std::to_string(attempt_);
  if (promotion_ > 0) {
    s += "|promote";
    if (promotion_ > 1) s += "#" + std::to_string(promotion_);
  }
  return s;
}

std::optional<IntentKey> IntentKey::Parse(std::string_view key) {
  std::string_view s = key;
  int promotion = 0;
  // The promotion suffix: "|promote" or "|promote#n", last.
  if (const size_t p = s.rfind("|promote"); p != std::string_view::npos) {
    std::string_view rest = s.substr(p + 8);
    if (rest.empty()) {
      promotion = 1;
    } else if (rest[0] == '#') {
      int64_t n = 0;
      if (AllDigits(rest.substr(1), &n) && n >= 2 && n <= 1'000'000) promotion = static_cast<int>(n);
    }
    if (promotion > 0) s = s.substr(0, p);
  }
  const int attempt = TrailingAttempt(s);
  if (attempt == 0) return std::nullopt;
  // What is left ends in |action|marked_at_us, after a policy and a resource.
  const size_t last = s.rfind('|');
  if (last == std::string_view::npos || !AllDigits(s.substr(last + 1))) return std::nullopt;
  const size_t action = s.rfind('|', last - 1);
  if (action == std::string_view::npos || action == 0 || !ParseAction(s.substr(action + 1, last - action - 1))) {
    return std::nullopt;
  }
  if (s.substr(0, action).find('|') == std::string_view::npos) return std::nullopt;  // no policy|resource
  return IntentKey(std::string(s), attempt, promotion);
}

}  // namespace loopwarden::store
