#include "exporters/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <sstream>

#include "core/secrets.h"
#include "core/strings.h"

namespace loopwarden::exporters {

namespace p = prometheus;

namespace {

std::string ActionsHelp() {
  std::string help = "Actions by policy, action and result (";
  for (ActionResult r : kAllActionResults) {
    if (r != kAllActionResults[0]) help += ", ";
    help += ActionResultName(r);
  }
  return help + ").";
}

}  // namespace

struct Metrics::Families {
  explicit Families(p::Registry& r)
      : build_info(p::BuildGauge().Name("loopwarden_build_info").Help("Always 1; labels say which build runs.").Register(r)),
        dry_run(p::BuildGauge().Name("loopwarden_dry_run").Help("1 when nothing is changed (dry_run: true).").Register(r)),
        leader(p::BuildGauge()
                   .Name("loopwarden_leader")
                   .Help("1 when this replica holds the leader lease and acts (always 1 on SQLite); followers export 0.")
                   .Register(r)),
        up(p::BuildGauge()
               .Name("loopwarden_up")
               .Help("1 when the last reconcile cycle succeeded (every provider listed), else 0.")
               .Register(r)),
        cycle_duration(p::BuildGauge()
                           .Name("loopwarden_cycle_duration_seconds")
                           .Help("Duration of the last reconcile cycle (poll, ingest, evaluate, execute).")
                           .Register(r)),
        cycles(p::BuildCounter().Name("loopwarden_cycles_total").Help("Reconcile cycles run.").Register(r)),
        cycle_failures(p::BuildCounter()
                           .Name("loopwarden_cycle_failures_total")
                           .Help("Reconcile cycles that failed or saw a partial listing.")
                           .Register(r)),
        last_success(p::BuildGauge()
                         .Name("loopwarden_last_successful_cycle_timestamp_seconds")
                         .Help("Unix time of the last successful reconcile cycle.")
                         .Register(r)),
        poll_duration(p::BuildGauge()
                          .Name("loopwarden_poll_duration_seconds")
                          .Help("Duration of the last listing of each provider.")
                          .Register(r)),
        listing_complete(p::BuildGauge()
                             .Name("loopwarden_listing_complete")
                             .Help("1 when the provider's last listing was complete, 0 when partial.")
                             .Register(r)),
        provider_requests(p::BuildCounter()
                              .Name("loopwarden_provider_requests_total")
                              .Help("Requests to provider APIs by status class (2xx, 4xx, 5xx, transport).")
                              .Register(r)),
        provider_errors(p::BuildCounter()
                            .Name("loopwarden_provider_errors_total")
                            .Help("Failed provider requests by error class.")
                            .Register(r)),
        resources(p::BuildGauge()
                      .Name("loopwarden_resources")
                      .Help("Governed resources by provider, kind and lifecycle.")
                      .Register(r)),
        idle_resources(p::BuildGauge()
                           .Name("loopwarden_idle_resources")
                           .Help("Running resources idle for at least 15 minutes, by provider and kind.")
                           .Register(r)),
        idle_gpus(p::BuildGauge().Name("loopwarden_idle_gpus").Help("GPUs billing while idle, by provider.").Register(r)),
        unpriced(p::BuildGauge()
                     .Name("loopwarden_unpriced_resources")
                     .Help("Live resources billing at a price loopwarden does not know (spend recorded as 0), "
                           "by provider.")
                     .Register(r)),
        spend_drift(p::BuildGauge()
                        .Name("loopwarden_spend_drift_ratio")
                        .Help("Ledger against the provider's bill over fully watched resource-days of the "
                              "reconciliation window, as ledger / billed - 1 (0 before any such day), by provider.")
                        .Register(r)),
        usage_reconciled(p::BuildGauge()
                             .Name("loopwarden_usage_reconciled_timestamp_seconds")
                             .Help("Unix time the ledger was last reconciled with the provider's bill, by provider.")
                             .Register(r)),
        idle_gpu_seconds(p::BuildCounter()
                             .Name("loopwarden_idle_gpu_seconds_total")
                             .Help("GPU-seconds billed while idle, by provider.")
                             .Register(r)),
        spend(p::BuildCounter()
                  .Name("loopwarden_spend_usd_total")
                  .Help("Spend recorded in the ledger by provider and meter (gpu_time, tokens), in USD. Token "
                        "usage lands with the provider's billing lag.")
                  .Register(r)),
        idle_spend(p::BuildCounter()
                       .Name("loopwarden_idle_spend_usd_total")
                       .Help("GPU spend while idle, by provider, in USD.")
                       .Register(r)),
        budget_limit(p::BuildGauge().Name("loopwarden_budget_limit_usd").Help("Budget limits in USD.").Register(r)),
        budget_forecast(p::BuildGauge()
                            .Name("loopwarden_budget_forecast_usd")
                            .Help("Spend forecast for the end of each budget's period at the current rate, in USD.")
                            .Register(r)),
        budget_ratio(p::BuildGauge()
                         .Name("loopwarden_budget_utilization_ratio")
                         .Help("Spend in the budget's current period over its limit.")
                         .Register(r)),
        decisions(p::BuildCounter()
                      .Name("loopwarden_decisions_total")
                      .Help("Policy decisions by policy and decision (mark, notify, act, unmark, skip).")
                      .Register(r)),
        actions(p::BuildCounter()
                    .Name("loopwarden_actions_total")
                    .Help(ActionsHelp())
                    .Register(r)),
        action_latency(p::BuildHistogram()
                           .Name("loopwarden_action_latency_seconds")
                           .Help("Time from a mark's deadline to the provider call.")
                           .Register(r)),
        blast_aborts(p::BuildCounter()
                         .Name("loopwarden_blast_radius_aborts_total")
                         .Help("Cycles whose actions were cancelled by a blast-radius cap.")
                         .Register(r)),
        marks(p::BuildGauge().Name("loopwarden_marks").Help("Pending marks by policy.").Register(r)),
        next_action(p::BuildGauge()
                        .Name("loopwarden_next_action_timestamp_seconds")
                        .Help("Unix time (loopwarden's clock) of the earliest pending mark deadline; 0 when none.")
                        .Register(r)),
        notifications(p::BuildCounter()
                          .Name("loopwarden_notifications_total")
                          .Help("Notification deliveries by notifier and result (sent, failed).")
                          .Register(r)),
        reload_ok(p::BuildGauge()
                      .Name("loopwarden_config_last_reload_successful")
                      .Help("1 when the last configuration (re)load succeeded.")
                      .Register(r)),
        reload_time(p::BuildGauge()
                        .Name("loopwarden_config_last_reload_success_timestamp_seconds")
                        .Help("Unix time of the last successful configuration (re)load.")
                        .Register(r)) {}

  p::Family<p::Gauge>& build_info;
  p::Family<p::Gauge>& dry_run;
  p::Family<p::Gauge>& leader;
  p::Family<p::Gauge>& up;
  p::Family<p::Gauge>& cycle_duration;
  p::Family<p::Counter>& cycles;
  p::Family<p::Counter>& cycle_failures;
  p::Family<p::Gauge>& last_success;
  p::Family<p::Gauge>& poll_duration;
  p::Family<p::Gauge>& listing_complete;
  p::Family<p::Counter>& provider_requests;
  p::Family<p::Counter>& provider_errors;
  p::Family<p::Gauge>& resources;
  p::Family<p::Gauge>& idle_resources;
  p::Family<p::Gauge>& idle_gpus;
  p::Family<p::Gauge>& unpriced;
  p::Family<p::Gauge>& spend_drift;
  p::Family<p::Gauge>& usage_reconciled;
  p::Family<p::Counter>& idle_gpu_seconds;
  p::Family<p::Counter>& spend;
  p::Family<p::Counter>& idle_spend;
  p::Family<p::Gauge>& budget_limit;
  p::Family<p::Gauge>& budget_forecast;
  p::Family<p::Gauge>& budget_ratio;
  p::Family<p::Counter>& decisions;
  p::Family<p::Counter>& actions;
  p::Family<p::Histogram>& action_latency;
  p::Family<p::Counter>& blast_aborts;
  p::Family<p::Gauge>& marks;
  p::Family<p::Gauge>& next_action;
  p::Family<p::Counter>& notifications;
  p::Family<p::Gauge>& reload_ok;
  p::Family<p::Gauge>& reload_time;
};

Metrics::Metrics() : registry_(std::make_shared<p::Registry>()), f_(std::make_unique<Families>(*registry_)) {
  // Series known to exist are exported from the start, at 0.
  f_->up.Add({}).Set(0);
  f_->cycles.Add({});
  f_->cycle_failures.Add({});
  f_->cycle_duration.Add({}).Set(0);
  f_->last_success.Add({}).Set(0);
  f_->blast_aborts.Add({});
  f_->next_action.Add({}).Set(0);
  f_->action_latency.Add({}, p::Histogram::BucketBoundaries{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300});
  f_->reload_ok.Add({}).Set(0);
  f_->reload_time.Add({}).Set(0);
  f_->dry_run.Add({}).Set(1);
  f_->leader.Add({}).Set(1);
}

Metrics::~Metrics() = default;

void Metrics::SetBuildInfo(std::string_view version, std::string_view revision, std::string_view compiler) {
  f_->build_info.Add({{"version", std::string(version)}, {"revision", std::string(revision)}, {"compiler", std::string(compiler)}})
      .Set(1);
}

void Metrics::SetDryRun(bool on) { f_->dry_run.Add({}).Set(on ? 1 : 0); }
void Metrics::SetLeader(bool on) { f_->leader.Add({}).Set(on ? 1 : 0); }

void Metrics::RecordCycle(double seconds, bool ok, double wall) {
  f_->cycles.Add({}).Increment();
  f_->cycle_duration.Add({}).Set(seconds);
  f_->up.Add({}).Set(ok ? 1 : 0);
  if (ok) {
    f_->last_success.Add({}).Set(wall);
  } else {
    f_->cycle_failures.Add({}).Increment();
  }
}

void Metrics::RecordPoll(const std::string& provider, double seconds, bool complete) {
  f_->poll_duration.Add({{"provider", provider}}).Set(seconds);
  f_->listing_complete.Add({{"provider", provider}}).Set(complete ? 1 : 0);
}

void Metrics::SetProviderRequests(const std::string& provider, const std::map<std::string, uint64_t>& by_class,
                                  const std::map<std::string, uint64_t>& errors) {
  for (const auto& [cls, n] : by_class) {
    uint64_t& seen = seen_requests_[provider][cls];
    auto& c = f_->provider_requests.Add({{"provider", provider}, {"class", cls}});  // exists from 0
    if (n > seen) c.Increment(static_cast<double>(n - seen));
    seen = n;
  }
  for (const auto& [cls, n] : errors) {
    uint64_t& seen = seen_errors_[provider][cls];
    auto& c = f_->provider_errors.Add({{"provider", provider}, {"error", cls}});
    if (n > seen) c.Increment(static_cast<double>(n - seen));
    seen = n;
  }
}

void Metrics::SetResources(const std::map<std::tuple<std::string, std::string, std::string>, int64_t>& counts) {
  // Zero the series that were there before, so a lifecycle nobody is in any more reads 0.
  for (const auto& k : resource_series_) {
    if (!counts.count(k)) {
      f_->resources.Add({{"provider", std::get<0>(k)}, {"kind", std::get<1>(k)}, {"lifecycle", std::get<2>(k)}}).Set(0);
    }
  }
  for (auto& [k, v] : counts) {
    f_->resources.Add({{"provider", std::get<0>(k)}, {"kind", std::get<1>(k)}, {"lifecycle", std::get<2>(k)}})
        .Set(static_cast<double>(v));
    resource_series_.insert(k);
  }
}

void Metrics::SetIdle(const std::map<std::pair<std::string, std::string>, int64_t>& idle,
                      const std::map<std::string, int64_t>& gpus) {
  for (const auto& k : idle_series_) {
    if (!idle.count(k)) f_->idle_resources.Add({{"provider", k.first}, {"kind", k.second}}).Set(0);
  }
  for (const auto& [k, v] : idle) {
    f_->idle_resources.Add({{"provider", k.first}, {"kind", k.second}}).Set(static_cast<double>(v));
    idle_series_.insert(k);
  }
  for (const auto& provider : idle_gpu_series_) {
    if (!gpus.count(provider)) f_->idle_gpus.Add({{"provider", provider}}).Set(0);
  }
  for (const auto& [provider, v] : gpus) {
    f_->idle_gpus.Add({{"provider", provider}}).Set(static_cast<double>(v));
    idle_gpu_series_.insert(provider);
  }
}

void Metrics::SetUnpriced(const std::map<std::string, int64_t>& by_provider) {
  for (const auto& provider : unpriced_series_) {
    if (!by_provider.count(provider)) f_->unpriced.Add({{"provider", provider}}).Set(0);
  }
  for (const auto& [provider, n] : by_provider) {
    f_->unpriced.Add({{"provider", provider}}).Set(static_cast<double>(n));
    unpriced_series_.insert(provider);
  }
}

void Metrics::SetUsageReconciled(const std::string& provider, std::optional<double> drift_ratio,
                                 double wall_unix_seconds) {
  // 0 until a day watched in full was compared: no drift measured is no drift to alert on.
  f_->spend_drift.Add({{"provider", provider}}).Set(drift_ratio.value_or(0));
  f_->usage_reconciled.Add({{"provider", provider}}).Set(wall_unix_seconds);
}

void Metrics::AddIdleGpuSeconds(const std::string& provider, double s) {
  auto& c = f_->idle_gpu_seconds.Add({{"provider", provider}});
  if (s > 0) c.Increment(s);
}

void Metrics::SetSpendTotals(const std::map<std::pair<std::string, std::string>, Money>& spend,
                             const std::map<std::string, Money>& idle) {
  for (const auto& [k, m] : spend) {
    auto& c = f_->spend.Add({{"provider", k.first}, {"meter", k.second}});
    Money& seen = seen_spend_[k];
    if (m > seen) c.Increment((m - seen).ToDouble());
    seen = std::max(seen, m);
  }
  for (const auto& [provider, m] : idle) {
    auto& c = f_->idle_spend.Add({{"provider", provider}});
    Money& seen = seen_idle_spend_[provider];
    if (m > seen) c.Increment((m - seen).ToDouble());
    seen = std::max(seen, m);
  }
}

void Metrics::SetBudgetForecast(const std::string& budget, Money period_end) {
  f_->budget_forecast.Add({{"budget", budget}}).Set(period_end.ToDouble());
}

void Metrics::SetBudget(const std::string& budget, Money limit, Money spent) {
  f_->budget_limit.Add({{"budget", budget}}).Set(limit.ToDouble());
  f_->budget_ratio.Add({{"budget", budget}}).Set(limit.micros() > 0 ? spent.ToDouble() / limit.ToDouble() : 0);
}

void Metrics::RecordDecision(const std::string& policy, std::string_view decision) {
  f_->decisions.Add({{"policy", policy}, {"decision", std::string(decision)}}).Increment();
}

std::string_view ActionResultName(ActionResult r) {
  switch (r) {
    case ActionResult::kOk: return "ok";
    case ActionResult::kAlreadyDone: return "already_done";
    case ActionResult::kDryRun: return "dry_run";
    case ActionResult::kNotNeeded: return "not_needed";
    case ActionResult::kConfirmFailed: return "confirm_failed";
    case ActionResult::kRefused: return "refused";
    case ActionResult::kUnknown: return "unknown";
    case ActionResult::kFailed: return "failed";
    case ActionResult::kUnverified: return "unverified";
    case ActionResult::kRecoveredDone: return "recovered_done";
    case ActionResult::kRecoveredNotDone: return "recovered_not_done";
  }
  return "unknown";
}

void Metrics::RecordAction(const std::string& policy, std::string_view action, ActionResult result) {
  f_->actions.Add({{"policy", policy}, {"action", std::string(action)}, {"result", std::string(ActionResultName(result))}})
      .Increment();
}

void Metrics::DeclareActions(const std::vector<std::pair<std::string, std::string>>& policy_actions) {
  for (const auto& [policy, action] : policy_actions) {
    for (ActionResult r : kAllActionResults) {
      f_->actions.Add({{"policy", policy}, {"action", action}, {"result", std::string(ActionResultName(r))}});
    }
  }
}

void Metrics::ObserveActionLatency(double s) {
  f_->action_latency.Add({}, p::Histogram::BucketBoundaries{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300})
      .Observe(std::max(0.0, s));
}

void Metrics::RecordBlastRadiusAbort() { f_->blast_aborts.Add({}).Increment(); }

void Metrics::SetMarks(const std::map<std::string, int64_t>& by_policy, std::optional<double> next) {
  for (const auto& policy : mark_series_) {
    if (!by_policy.count(policy)) f_->marks.Add({{"policy", policy}}).Set(0);
  }
  for (const auto& [policy, n] : by_policy) {
    f_->marks.Add({{"policy", policy}}).Set(static_cast<double>(n));
    mark_series_.insert(policy);
  }
  f_->next_action.Add({}).Set(next.value_or(0));
}

void Metrics::RecordNotification(const std::string& notifier, bool ok) {
  f_->notifications.Add({{"notifier", notifier}, {"result", ok ? "sent" : "failed"}}).Increment();
}

void Metrics::RecordConfigReload(bool ok, double wall) {
  f_->reload_ok.Add({}).Set(ok ? 1 : 0);
  if (ok) f_->reload_time.Add({}).Set(wall);
}

std::string Metrics::RenderText() const {
  p::TextSerializer s;
  std::ostringstream os;
  s.Serialize(os, registry_->Collect());
  // Label values come from configuration and providers: no secret (a policy named with an
  // expanded \${VAR}), and nothing a scraper rejects (invalid UTF-8, NUL).
  return SafeText(Redact(os.str()));
}

}  // namespace loopwarden::exporters
