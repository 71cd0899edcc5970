#pragma once
// The Provider interface: one implementation per provider API (Baseten, Fireworks),
// one instance per configured account.
//
// - List() gives the account's full inventory as core Resources, with activity,
//   checkpoints and token counters, and says whether it is complete. A listing that
//   failed anywhere is partial: a resource it misses is unknown, never gone.
// - Refresh() re-reads one resource and its signals from the provider, bypassing every
//   cache: confirm-before-act uses it.
// - Act() performs an action. Each is idempotent in effect (a 404 on a repeat counts as
//   done); a call the provider documents as not idempotent is never blindly retried,
//   and an outcome that cannot be known (a timeout after sending) says so, so the
//   executor re-reads before doing anything else.
//
// Used from the io_context thread only.

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/details.h"
#include "core/money.h"
#include "core/resource.h"
#include "core/usage.h"
#include "providers/errors.h"

namespace boost::asio {
class io_context;
}

namespace loopwarden::providers {

// Asked before every call that changes something at a provider, when loopwarden runs
// as one of several replicas: until when the call may still be written, and the lease
// it is made under (sent as X-Loopwarden-Lease, for the providers' logs and ours). An
// error stops the call unsent.
struct SendPermit {
  std::chrono::steady_clock::time_point send_by;
  std::string lease;
};
using SendGate = std::function<Result<SendPermit>()>;

struct ProviderOptions {
  std::string name;
  ProviderType type = ProviderType::kBaseten;
  std::string base_url;
  std::string account;  // Fireworks; discovered when empty
  std::string api_key;
  std::string auth = "bearer";
  std::string ca_file;
  std::string ca_pem;  // tests
  bool use_system_cas = true;
  int max_concurrency = 8;
  double requests_per_minute = 0;  // 0: the provider's default
  Duration request_timeout = std::chrono::seconds(30);
  // A response larger than this fails its call (a listing, then, is partial): memory
  // stays bounded whatever a provider, or something posing as one, sends.
  size_t max_response_bytes = 64u << 20;
  Duration activity_window = std::chrono::hours(1);
  // Per kind, the longest `idle_for` / `no_traffic_for` the policies ask about. Where a
  // provider serves history (Baseten R8, R18), the first read of a resource's activity
  // reaches back this far, so a deployment idle for 6 h is known idle in the first cycle.
  std::map<Kind, Duration> quiet_thresholds;
  double gpu_idle_threshold = 0.05;
  Duration scale_down_delay = std::chrono::seconds(900);
  int64_t slot_cap = 0;
  Duration usage_interval = std::chrono::hours(1);
  // Per-resource detail calls (metrics, checkpoints, …) one List() may spend; the rest
  // reuse their last details while those are younger than `detail_max_age`, and are
  // unknown after that.
  int max_detail_calls = 400;
  Duration detail_max_age = std::chrono::minutes(10);
  // Prices by GPU type for providers without a price list (Fireworks).
  std::map<std::string, Money> gpu_hour_usd;
  SendGate send_gate;
  // Retry budget per call.
  int max_attempts = 5;
  Duration retry_budget = std::chrono::seconds(300);
};

struct ListingFailure {
  std::string what;  // "GET /v1/loops/runs"
  ProviderError error;
};

// Where List() hands each resource it builds. The poll's sink records each one in the
// store at once (store::Store::Listing), so no account's listing is held whole beside the
// stored state. An adapter calls it only once the listing's last request has been
// answered, and makes no request between its first call and List()'s return: the
// store's transaction spans them.
using ResourceSink = std::function<void(ListedResource&&)>;

struct Inventory {
  std::vector<ListedResource> resources;  // empty when a sink took them
  size_t listed = 0;  // resources built, here or given to the sink
  bool complete = true;
  std::vector<ListingFailure> failures;
  int requests = 0;
  ResourceSink sink;
  // Room for `n` resources, when they are kept here.
  void Reserve(size_t n) {
    if (!sink) resources.reserve(n);
  }
  // Bounds `r`'s provider text (BoundProviderText) and gives it to the sink, or keeps it.
  void Add(ListedResource&& r);
};

struct RefreshResult {
  std::optional<ListedResource> resource;  // nothing when the provider confirmed it is gone (404)
  bool gone = false;
};

enum class Outcome {
  kDone,         // the provider did it
  kAlreadyDone,  // it was already in the end state (a 404 or terminal state on a repeat)
  kRefused,      // the provider refused for a reason that will not clear by retrying
  kFailed,       // a retryable failure; nothing happened as far as we know
  kUnknown,      // it may or may not have happened (sent, then no answer): re-read first
};
std::string_view OutcomeName(Outcome o);

struct ActionOutcome {
  Outcome outcome = Outcome::kFailed;
  ProviderError error;
  std::string request;   // "POST /v1/loops/runs/k4q95w5/deactivate" (no secrets)
  std::string response;  // the body, truncated
  std::string detail;    // a human note: "paired to run r1; deactivate the run instead"
  std::map<std::string, std::string> restore;  // what undoes it (prior min/max replicas, …)
};

struct UsageReport {
  std::vector<UsageRow> rows;
};

// Counters for metrics: requests by outcome class and errors by class.
struct TransportStats {
  std::map<std::string, uint64_t> requests_by_class;  // 2xx, 3xx, 4xx, 5xx, transport
  std::map<std::string, uint64_t> errors_by_class;    // ErrorClassName
  uint64_t retries = 0;
  uint64_t requests = 0;
};

class Provider {
 public:
  virtual ~Provider() = default;
  virtual const std::string& name() const = 0;
  virtual ProviderType type() const = 0;
  virtual std::string account() const = 0;
  virtual int64_t slot_cap() const = 0;

  // Each resource goes to `sink` when one is given (ResourceSink), else into the
  // Inventory's resources.
  virtual boost::asio::awaitable<Inventory> List(ResourceSink sink) = 0;
  boost::asio::awaitable<Inventory> List() { return List(ResourceSink()); }
  virtual boost::asio::awaitable<Result<RefreshResult>> Refresh(const Resource& r) = 0;
  // The billed usage of every UTC day in [start, end) (both midnights), per resource
  // and day. Days the provider has not finished booking may be missing or low: the
  // caller asks only about days that ended a while ago.
  virtual boost::asio::awaitable<Result<UsageReport>> Usage(Time start, Time end) = 0;
  // deactivate, scale_to_zero, cancel or delete, as the kind supports.
  virtual boost::asio::awaitable<ActionOutcome> Act(const Resource& r, ActionType action) = 0;
  // Promotes a session checkpoint to a model named `output_model_id`.
  virtual boost::asio::awaitable<ActionOutcome> PromoteCheckpoint(const Resource& session, const std::string& checkpoint,
                                                                  const std::string& output_model_id) = 0;
  virtual const TransportStats& stats() const = 0;

  // Detail caches across processes: what changed since the last call (new reads, and
  // keys to forget as empty bodies), and the records a new process starts from. A
  // record this adapter cannot read is skipped: it is a cache, never a source of truth.
  virtual std::vector<DetailRecord> TakeDetailChanges() { return {}; }
  virtual void RestoreDetails(const std::vector<DetailRecord>& records) { (void)records; }
};

// How far back the first read of a kind's activity reaches: its longest quiet threshold
// plus a margin (so `>= 2h` holds on first sight of something idle for longer), at
// least `activity_window`, at most `kMaxHistory`.
inline constexpr Duration kMaxHistory = std::chrono::hours(24 * 7);  // R8 and R18 serve 7 days
Duration FirstSightWindow(const ProviderOptions& o, Kind k);

// Builds the adapter for `options.type`. A bad CA file is an error naming it.
Result<std::unique_ptr<Provider>> MakeProvider(boost::asio::io_context& ioc, Clock& clock,
                                               const ProviderOptions& options);

// Cuts a resource's provider-controlled text at kMaxTextBytes (core/resource.h), on a
// UTF-8 boundary, marked with "…", before anything stores, matches or exports it.
void BoundProviderText(Resource& r);

// The model id loopwarden promotes a checkpoint to: lw-<short-session>-<short-ckpt>,
// lowercase [a-z0-9-], at most 63 characters, no edge hyphens (fireworks.md §5.5).
std::string PromotedModelId(const std::string& session_id, const std::string& checkpoint_logical);
// The logical name inside a server-side checkpoint name: "run-<32hex>-final-1a2b3c4d" -> "final".
std::string LogicalCheckpointName(const std::string& server_name, bool promotable);

}  // namespace loopwarden::providers
