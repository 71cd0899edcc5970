#pragma once
// loopwarden's Prometheus metrics: the registry and the verbs the daemon calls. Metric
// names and labels live here only (CONVENTIONS.md §1). Rendered in text format 0.0.4
// through prometheus-cpp core's serializer; the daemon serves the text itself.
//
// Every label's value set is bounded by the configuration (policy, provider, notifier
// names) or by enums (kind, lifecycle, meter, result).
//
// Thread-safe (prometheus-cpp metrics are); used from the io thread in practice.

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "core/money.h"
#include "core/time.h"

namespace prometheus {
class Registry;
class Gauge;
class Counter;
class Histogram;
template <class T>
class Family;
}  // namespace prometheus

namespace loopwarden::exporters {

// Every value loopwarden_actions_total's `result` label takes; its HELP text is built
// from this list, so the two cannot drift apart.
enum class ActionResult {
  kOk,             // the provider did it
  kAlreadyDone,    // it was already in the wanted state
  kDryRun,         // would have acted
  kNotNeeded,      // the confirming read showed it no longer qualifies
  kConfirmFailed,  // the confirming read failed: not acted on
  kRefused,        // the provider refused (or a safety check did)
  kUnknown,        // the call may or may not have taken effect: re-read next cycle
  kFailed,         // the call failed; retried next cycle
  kUnverified,     // a promotion could not be verified, so nothing was deleted
  kRecoveredDone,     // at start, an intent left open by a crash: the provider shows it done
  kRecoveredNotDone,  // ... and shows it not done (decided again from scratch)
};
std::string_view ActionResultName(ActionResult r);
inline constexpr ActionResult kAllActionResults[] = {
    ActionResult::kOk,      ActionResult::kAlreadyDone, ActionResult::kDryRun, ActionResult::kNotNeeded,
    ActionResult::kConfirmFailed, ActionResult::kRefused, ActionResult::kUnknown, ActionResult::kFailed,
    ActionResult::kUnverified, ActionResult::kRecoveredDone, ActionResult::kRecoveredNotDone};

class Metrics {
 public:
  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  void SetBuildInfo(std::string_view version, std::string_view revision, std::string_view compiler);
  void SetDryRun(bool on);
  void SetLeader(bool on);

  // One reconcile cycle.
  void RecordCycle(double seconds, bool ok, double wall_unix_seconds);
  void RecordPoll(const std::string& provider, double seconds, bool complete);
  // Provider request counters, as totals since start (deltas are applied here).
  void SetProviderRequests(const std::string& provider, const std::map<std::string, uint64_t>& by_class,
                           const std::map<std::string, uint64_t>& errors_by_class);

  // Inventory and spend, from the store after each cycle.
  void SetResources(const std::map<std::tuple<std::string, std::string, std::string>, int64_t>& counts);
  void SetIdle(const std::map<std::pair<std::string, std::string>, int64_t>& idle_resources,
               const std::map<std::string, int64_t>& idle_gpus);
  void AddIdleGpuSeconds(const std::string& provider, double gpu_seconds);
  // Live resources billing at no known price, by provider (every configured provider,
  // 0 included).
  void SetUnpriced(const std::map<std::string, int64_t>& by_provider);
  // After reconciling `provider`'s ledger with its bill: the drift over watched
  // resource-days (0 while no day was watched in full) and when.
  void SetUsageReconciled(const std::string& provider, std::optional<double> drift_ratio, double wall_unix_seconds);
  // Cumulative spend totals by provider and meter (gpu_time, tokens), and idle spend.
  void SetSpendTotals(const std::map<std::pair<std::string, std::string>, Money>& spend,
                      const std::map<std::string, Money>& idle_spend);
  void SetBudget(const std::string& budget, Money limit, Money spent);
  // Spend forecast for the end of the budget's period, at the current rate.
  void SetBudgetForecast(const std::string& budget, Money period_end);

  void RecordDecision(const std::string& policy, std::string_view decision);
  void RecordAction(const std::string& policy, std::string_view action, ActionResult result);
  // Creates every (policy, action, result) series of loopwarden_actions_total at 0, so
  // rate() and increase() see the first action instead of a series appearing from
  // nothing (Prometheus' "avoid missing metrics").
  void DeclareActions(const std::vector<std::pair<std::string, std::string>>& policy_actions);
  void ObserveActionLatency(double seconds_past_deadline);
  void RecordBlastRadiusAbort();
  void SetMarks(const std::map<std::string, int64_t>& by_policy, std::optional<double> next_deadline_unix);

  void RecordNotification(const std::string& notifier, bool ok);
  void RecordConfigReload(bool ok, double wall_unix_seconds);

  // The body of GET /metrics, text format 0.0.4.
  std::string RenderText() const;
  static constexpr std::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";

 private:
  struct Families;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<Families> f_;
  std::map<std::string, std::map<std::string, uint64_t>> seen_requests_;
  std::map<std::string, std::map<std::string, uint64_t>> seen_errors_;
  std::map<std::pair<std::string, std::string>, Money> seen_spend_;
  std::map<std::string, Money> seen_idle_spend_;
  // Series set before: a label set that disappears is set to 0, not left stale.
  std::set<std::tuple<std::string, std::string, std::string>> resource_series_;
  std::set<std::pair<std::string, std::string>> idle_series_;
  std::set<std::string> idle_gpu_series_;
  std::set<std::string> unpriced_series_;
  std::set<std::string> mark_series_;
};

}  // namespace loopwarden::exporters
