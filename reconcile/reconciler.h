#pragma once
// One reconcile cycle (DESIGN.md "Data flow of one cycle"): poll every provider account
// concurrently, ingest the snapshots, evaluate the policies, apply marks and unmarks,
// execute the acts whose grace has passed, hand notices to the notifier and refresh
// the metrics.
//
// A deadline cycle skips the poll: it runs when a mark's grace ends between polls, so
// an action happens at its deadline, not a poll interval later; the executor's
// confirm-before-act read supplies the fresh object.
//
// Used from the io_context thread only.

#include <boost/asio/awaitable.hpp>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/clock.h"
#include "exporters/metrics.h"
#include "policies/engine.h"
#include "reconcile/executor.h"
#include "reconcile/notify_runner.h"
#include "reconcile/setup.h"
#include "store/store.h"

namespace loopwarden::reconcile {

struct CycleReport {
  Time at;
  bool polled = false;
  bool ok = false;        // every listing complete and everything recorded
  bool complete = true;   // every listing complete
  // Providers whose listing failed outright (incomplete, and nothing listed).
  std::vector<std::string> unreachable;
  std::vector<policies::Decision> decisions;
  bool blast_radius_abort = false;
  std::string abort_reason;
  int64_t marks = 0, unmarks = 0, acts = 0, acted = 0, would_act = 0, notices = 0;
  std::vector<std::string> errors;
  double seconds = 0;
  // Where the cycle's wall time went (seconds).
  struct Phases {
    double poll = 0;      // every listing, concurrently
    double ingest = 0;    // recording the listings, from each one's first resource built
    double evaluate = 0;  // facts, aggregates and the policies
    double act = 0;       // marks, confirmations, provider calls
    double export_metrics = 0;
  } phases;
  store::IngestStats ingest;  // what the poll wrote
  int64_t provider_requests = 0;  // HTTP requests the poll made
};

struct ReconcilerOptions {
  bool execute = true;  // false for `plan`: evaluate only
  bool notify = true;
  // GPU time counts as idle once a resource has shown no activity this long (also the
  // threshold of the idle metrics and `status`).
  Duration idle_after = std::chrono::minutes(15);
  // Called as each provider account's listing is recorded: `plan` reports progress.
  std::function<void(const std::string& provider, size_t listed, size_t total, size_t resources, bool complete)>
      on_listed;
};

class Reconciler {
 public:
  Reconciler(Clock& clock, store::Store& store, exporters::Metrics& metrics, NotifyRunner* notifier,
             ReconcilerOptions options = {});

  // The configuration to use from the next cycle on.
  // A new setup (start, reload) has new provider adapters: each reads back its stored
  // detail cache before its first poll.
  void SetSetup(const Setup* setup) {
    setup_ = setup;
    restored_.clear();
  }
  const Setup* setup() const { return setup_; }

  // Settles open intents (before the first cycle, and while any is unresolved).
  boost::asio::awaitable<Status> Recover();
  boost::asio::awaitable<CycleReport> Cycle(bool poll);

  // No new provider calls start after this (SIGTERM): the running cycle finishes what
  // it is doing and returns.
  void Stop() { stopping_ = true; }
  // The earliest act_after of a mark still in the future.
  std::optional<Time> NextDeadline(Time now) const;
  const CycleReport& last() const { return last_; }
  Executor& executor() { return executor_; }

 private:
  // False when the snapshots could not be recorded.
  boost::asio::awaitable<bool> Poll(CycleReport& rep);
  // Records one account's listing in the store by finishing `listing`, which took the
  // resources `inv` listed (Provider::List's sink). False when it could not.
  bool RecordListing(providers::Provider& p, providers::Inventory inv, store::Store::Listing& listing,
                     CycleReport& rep);
  void Export(Time now, const policies::EvalInput& in);
  // Reconciles each provider account's ledger with its bill, once per usage_interval
  // (reconcile/usage_pass.cc).
  boost::asio::awaitable<void> ReconcileUsage(Time now);
  boost::asio::awaitable<void> ReconcileAccountUsage(providers::Provider& p, const config::ProviderConfig& pc, Time now);
  // A time kept in the store's meta table; nothing when unset or unreadable.
  std::optional<Time> MetaTime(const std::string& key);
  std::vector<Outgoing> MarkNotices() const;
  // Every mark the daemon places or removes goes through these two: the engine's
  // decisions, and the marks the executor's acts and recoveries settled.
  void PlaceMark(const policies::Decision& d, Time now, CycleReport& rep);
  void RemoveMark(const std::string& policy, const std::string& resource, const std::string& why,
                  std::vector<std::string>* errors);

  Clock& clock_;
  store::Store& store_;
  exporters::Metrics& metrics_;
  NotifyRunner* notifier_;
  ReconcilerOptions options_;
  const Setup* setup_ = nullptr;
  std::set<const providers::Provider*> restored_;
  Executor executor_;
  bool stopping_ = false;
  CycleReport last_;
  std::optional<Time> last_export_;
  // When each provider's bill was last read (ReconcileUsage), as in the meta table.
  std::map<std::string, std::optional<Time>> usage_read_at_;
};

}  // namespace loopwarden::reconcile
