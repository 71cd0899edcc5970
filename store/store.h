#pragma once
// loopwarden's memory: one SQLite file holding what exists, since when it is idle,
// what it cost, what was marked, what was done and why.
//
// The store keeps an in-memory view of every resource (fingerprint, activity, open
// ledger interval, spend so far) loaded at Open, so a poll cycle compares snapshots
// in memory and writes only what changed: an unchanged fleet writes no resource rows.
//
// Ledger model:
//   - GPU time is an interval per (resource, state): opened when the resource starts
//     billing, closed when its billing state changes (stops, replicas or GPUs change,
//     price changes, or it turns idle or active again). An open interval's cost is
//     replicas x GPUs x seconds x price, computed when asked. Idle time is billed and
//     flagged idle, so idle spend is reported on its own.
//   - Tokens are rows per observed delta of the provider's cumulative count, per meter
//     (prefill, cached_prefill, sample, train), each at its own rate.
//
// Durability: WAL with synchronous=NORMAL for observations (a power cut loses at most
// the last cycles, which the next poll re-learns; a crashed process loses nothing) and
// FULL for intent rows, which are the exactly-once record of provider calls.
//
// Used from one thread (the daemon's io thread, or a CLI command).

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/boxed.h"
#include "core/details.h"
#include "core/money.h"
#include "core/node_slab.h"
#include "core/resource.h"
#include "core/status.h"
#include "core/text_map.h"
#include "core/time.h"
#include "core/usage.h"
#include "store/action_journal.h"
#include "store/instance_lock.h"

namespace loopwarden::store {

class Db;
class PeriodSpend;
class Stmt;

struct StoreOptions {
  // A SQLite file, or a PostgreSQL DSN ("postgresql://user@host:5432/db").
  std::string path;
  Duration busy_timeout = std::chrono::seconds(5);
  bool read_only = false;  // status/report: never migrate, never write
  bool create = true;
  // PostgreSQL: the leader lease token every write is fenced with (store/postgres.h),
  // and what to do the first time a write is refused because the lease was lost. A
  // writer on PostgreSQL needs one: the lease, not a file lock, makes it the only one.
  std::optional<int64_t> fence;
  std::function<void(const Status&)> fence_lost;
  // PostgreSQL: a transaction left idle this long (its process paused) is ended by the
  // server, so a paused leader cannot hold up a takeover.
  Duration idle_transaction_timeout = std::chrono::seconds(5);
};

// One provider account's listing.
struct Snapshot {
  std::string provider;  // configured provider name
  std::string account;
  // Every page of every listing arrived. Resources missing from a complete snapshot
  // are deleted; missing from a partial one, unknown.
  bool complete = true;
  // Only these resources changed (a fresh read before acting): nothing is inferred
  // about the ones it does not contain.
  bool partial_update = false;
  std::vector<ListedResource> resources;
};

// Prices that fill in what provider price lists do not give.
struct PriceBook {
  std::map<std::string, Money> gpu_hour;  // per GPU-hour, by GPU type (configured)
  std::map<std::string, std::map<std::string, Money>> tokens_per_million;  // model -> meter -> price (configured)
  // The providers' published list prices (providers/price_cards.h), by provider type:
  // used where neither the provider nor the configuration gives a price.
  std::map<ProviderType, std::map<std::string, Money>> list_gpu_hour;
  std::map<ProviderType, std::map<std::string, std::map<std::string, Money>>> list_tokens_per_million;
  // The resource's own price when the provider gave one, else the configured one, else
  // its provider's list price; nothing when none is known (unpriced).
  std::optional<Money> GpuHour(const Resource& r) const;
  std::optional<Money> TokenPrice(const Resource& r, const std::string& meter) const;
};

struct IngestOptions {
  // GPU time counts as idle spend once a resource has shown no activity this long.
  Duration idle_after = std::chrono::minutes(15);
};

struct IngestStats {
  int64_t resources_inserted = 0;
  int64_t resources_updated = 0;
  int64_t transitions = 0;
  int64_t activity_rows = 0;
  int64_t ledger_rows = 0;
  int64_t counter_rows = 0;
  int64_t deleted = 0;  // missing from a complete listing
  int64_t unknown = 0;  // missing from a partial listing
  int64_t rows_written() const {
    return resources_inserted + resources_updated + transitions + activity_rows + ledger_rows + counter_rows;
  }
  IngestStats& operator+=(const IngestStats& o) {
    resources_inserted += o.resources_inserted;
    resources_updated += o.resources_updated;
    transitions += o.transitions;
    activity_rows += o.activity_rows;
    ledger_rows += o.ledger_rows;
    counter_rows += o.counter_rows;
    deleted += o.deleted;
    unknown += o.unknown;
    return *this;
  }
};

// What the store knows of one resource.
struct ResourceState {
  // As last seen (lifecycle `unknown` after a partial miss, `deleted` after a complete
  // one). The poll's signals (ListedResource's activity and tokens) are in the fields
  // below: activity_known, last_active_at, counters, ...
  Resource resource;
  int64_t row_id = 0;  // resources.id: how the ledger, transitions, counters and activity refer to it
  Time first_seen;
  Time updated_at;
  OptionalTime deleted_at;
  uint64_t fingerprint = 0;
  // It bills at a price nobody gave (no provider, configured or list price): its spend
  // is recorded as USD 0. Set at every ingest; after a restart, from an open GPU
  // interval at price 0.
  bool unpriced = false;
  // Activity: the latest evidence of work. Idle since then; unknown when a signal was
  // missing at the last poll.
  bool activity_known = false;
  bool traffic_known = false;
  // The Ingest call that last listed it (the store's bookkeeping, not persisted). Four
  // bytes beside the flags, where eight were padding: at one Ingest per account a
  // minute, 20 accounts take 400 years to wrap it.
  uint32_t listed_in = 0;
  // Activity::counters_fingerprint of the last listing that had counters (0: none seen
  // yet).
  uint64_t activity_fingerprint = 0;
  OptionalTime last_active_at;
  OptionalTime last_traffic_at;
  // Ledger.
  Money closed_spend;
  Money idle_spend_closed;
  struct OpenInterval {
    int64_t id = 0;
    Time start;
    Money unit_price;  // per GPU-hour
    int32_t gpus = 0;
    bool idle = false;
  };
  // std::optional's reading (has_value, bool, *, ->, reset, assignment of a value),
  // held out of line: only resources billing GPU time now have one (2,541 of 115,000 in
  // the generated fleet), and inline it was 32 bytes of every other one too.
  class OptionalInterval {
   public:
    OptionalInterval& operator=(const OpenInterval& o) {
      v_ = o;
      return *this;
    }
    bool has_value() const noexcept { return v_.boxed(); }
    explicit operator bool() const noexcept { return has_value(); }
    const OpenInterval& operator*() const noexcept { return *v_; }
    const OpenInterval* operator->() const noexcept { return v_.operator->(); }
    void reset() noexcept { v_.reset(); }

   private:
    Boxed<OpenInterval> v_;
  };
  OptionalInterval open_gpu;
  FlatMap<Interned, int64_t> counters;  // by meter ("prefill"), pooled as labels' keys are

  // Activity evidence begins here, after the creation (no history before first sight):
  // idle or quiet since this instant means "at least this long".
  OptionalTime observed_since;

  std::optional<Time> IdleSince() const {
    return activity_known ? last_active_at : std::nullopt;
  }
  std::optional<Time> NoTrafficSince() const {
    return traffic_known ? last_traffic_at : std::nullopt;
  }
  Money SpendAt(Time now) const;
  Money IdleSpendAt(Time now) const;
  Money BurnPerHour() const;
};
static_assert(sizeof(ResourceState::OptionalInterval) == 8, "one pointer: the interval is out of line");

// The stored resources, a set found by Resource::Key() ("provider/kind/id") as text or
// by a ResourceState, without holding the key: as a map's key it was 32 bytes and,
// for nearly every key, a heap block of 40 more, beside the state that has the same
// parts (8 MB at 100k resources). Elements do not move (a node each); their provider,
// kind and id never change, so the store may change the rest in place (MutableState).
struct StateKeyHash {
  using is_transparent = void;
  // Not noexcept: libstdc++ then keeps each element's hash in its node, where it would
  // otherwise rebuild the key text to hash every element it passes in a bucket.
  size_t operator()(std::string_view key) const;
  size_t operator()(const ResourceState& st) const;
};
struct StateKeyEq {
  using is_transparent = void;
  bool operator()(const ResourceState& a, const ResourceState& b) const noexcept;
  bool operator()(std::string_view key, const ResourceState& st) const noexcept;
  bool operator()(const ResourceState& st, std::string_view key) const noexcept { return (*this)(key, st); }
};
// Nodes from slabs (core/node_slab.h): malloc's header and rounding were 16 bytes of
// each 384-byte node.
using StateSet = std::unordered_set<ResourceState, StateKeyHash, StateKeyEq, NodeSlabAllocator<ResourceState>>;

// The stored resources as a range of `const ResourceState&`, in the order they were
// first stored (their row id), which is also about the order of their addresses: the
// slabs hand out nodes in turn. The set's own order follows its hash buckets, so a
// walk over it (evaluation, export, spend, a listing's misses) reached each node at
// random, a cache miss or two apiece once the fleet outgrows the cache (300k resources:
// about 110 MB of nodes). In this order the walks read memory mostly forward, and the
// order is the same from one run, and one restart, to the next.
class StateList {
 public:
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = ResourceState;
    using difference_type = std::ptrdiff_t;
    using pointer = const ResourceState*;
    using reference = const ResourceState&;
    Iterator() = default;
    explicit Iterator(ResourceState* const* at) : at_(at) {}
    reference operator*() const { return **at_; }
    pointer operator->() const { return *at_; }
    Iterator& operator++() {
      ++at_;
      return *this;
    }
    Iterator operator++(int) {
      Iterator was = *this;
      ++at_;
      return was;
    }
    bool operator==(const Iterator&) const = default;

   private:
    ResourceState* const* at_ = nullptr;
  };
  explicit StateList(std::span<ResourceState* const> items) : items_(items) {}
  Iterator begin() const { return Iterator(items_.data()); }
  Iterator end() const { return Iterator(items_.data() + items_.size()); }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }

 private:
  std::span<ResourceState* const> items_;
};

struct Mark {
  std::string policy;
  std::string resource;
  Time marked_at;
  Time act_after;
  std::optional<Time> notified_at;
  std::string reason;
  std::string action;
};

struct Snooze {
  int64_t id = 0;
  std::string resource;
  std::string policy;  // empty: every policy
  std::optional<Time> until;
  std::string reason;
  std::string by;
  Time created_at;
};

struct SpendFilter {
  std::string provider;  // empty: any
  std::string account;
  std::optional<Kind> kind;
};

// Spend of one (provider, account, kind) since each of several period starts.
struct SpendCell {
  std::string provider;  // "(pruned)" for roll-ups of resources no longer kept
  std::string account;
  std::string kind;
  std::vector<Money> since;  // one per start, in the order asked
};

struct RetentionStats {
  int64_t intervals_rolled = 0;
  int64_t hourly_rolled = 0;
  int64_t transitions_rolled = 0;
  int64_t resources_pruned = 0;
};

// kTeam: Baseten's team_name (deployments of a team's models); kLabel: one label's
// value (Baseten deployment labels, Fireworks annotations), the key given apart.
enum class GroupBy { kProvider, kAccount, kKind, kModel, kOwner, kTeam, kLabel };
struct Grouping {
  Grouping(GroupBy b = GroupBy::kProvider, std::string l = "") : by(b), label(std::move(l)) {}  // NOLINT: implicit
  bool operator==(const Grouping&) const = default;
  GroupBy by;
  std::string label;  // with kLabel
};
// "provider", "account", "kind", "model", "owner", "team" or "label:KEY".
std::optional<Grouping> ParseGroupBy(std::string_view s);

struct ReportRow {
  std::string group;
  Money spend;
  Money idle_spend;
  int64_t actions = 0;
  Money savings;
};

struct Report {
  Time since;
  Time until;
  // Set when some open GPU interval was counted only up to its account's last listing,
  // earlier than `until` (the daemon was stopped): the earliest such listing.
  std::optional<Time> open_counted_until;
  Grouping by;
  std::vector<ReportRow> rows;
  ReportRow total;
};

// What one reconciliation with a provider's bill booked (Store::ReconcileUsage).
struct ReconcileStats {
  int64_t compared = 0;   // resource-days compared for the first time
  int64_t revised = 0;    // resource-days whose bill changed since they were compared
  int64_t unmatched = 0;  // billed rows of ids no resource of the account carries
  int64_t unpriced = 0;   // billed rows without money whose quantity has no known price
  Money backfilled;       // booked on days a resource was not watched in full (history)
  Money corrected;        // booked on watched days: the ledger's drift from the bill
};

// One resource's bill for one UTC day against what the ledger holds for it now
// (Store::CompareUsage): the check that reconciliation left them equal.
struct UsageComparison {
  std::string resource;  // the key of the resource the bill names
  Time day;
  Money billed;
  Money ledger;  // of every resource billing through it
};

// The ledger against the bill over watched resource-days (usage_days).
struct UsageDrift {
  Money ledger;  // what the ledger held when each day was first compared
  Money billed;
  int64_t days = 0;
  // ledger / billed - 1: negative when the ledger under-counted.
  std::optional<double> Ratio() const {
    if (billed.micros() == 0) return std::nullopt;
    return static_cast<double>(ledger.micros()) / static_cast<double>(billed.micros()) - 1.0;
  }
};

struct StatusCount {
  std::string provider;
  std::string kind;
  std::string lifecycle;
  int64_t count = 0;
};

struct IdleResource {
  std::string resource;
  std::string name;
  std::string kind;
  Duration idle_for{0};
  Money burn_per_hour;
};

struct StatusView {
  Time now;
  std::vector<StatusCount> counts;
  std::vector<IdleResource> idle;
  std::vector<Mark> marks;
  std::vector<std::string> unpriced;  // keys of live resources billing at no known price
};

class Store : public ActionJournal {
 public:
  // Opens (creating and migrating as needed) with WAL, busy_timeout and foreign keys.
  // Refuses, without writing, a database from a newer loopwarden (kFailedPrecondition)
  // or a damaged one (kDataLoss).
  static Result<std::unique_ptr<Store>> Open(const StoreOptions& options);
  // A private copy of the database at `source` (the SQLite backup API, consistent even
  // while a daemon writes it) in `scratch_path`, opened read-write: `plan` works on it
  // and changes nothing of the original. No source file gives an empty store.
  static Result<std::unique_ptr<Store>> OpenCopy(const std::string& source, const std::string& scratch_path);
  ~Store();

  // Applies the cycle's snapshots in one transaction.
  Result<IngestStats> Ingest(std::span<const Snapshot> snapshots, Time now, const PriceBook& prices,
                             const IngestOptions& options = {});
  // The same for one snapshot the caller is done with: its resources are moved into
  // the store instead of copied.
  Result<IngestStats> Ingest(Snapshot&& snapshot, Time now, const PriceBook& prices, const IngestOptions& options = {});
  // The same again, with the resources given one at a time as they are built (the
  // poll's path: Listing, below). `prices` must outlive the Listing.
  class Listing;
  std::unique_ptr<Listing> BeginListing(std::string provider, std::string account, Time now, const PriceBook& prices,
                                        const IngestOptions& options = {});

  // Valid until the next ingest, retention pass or reload.
  StateList resources() const;
  const ResourceState* Find(const std::string& key) const;

  // Spend in [since, now) over ledger detail and roll-ups.
  Result<Money> Spend(const SpendFilter& filter, Time since, Time now);
  // Spend in [start, now) for every start, per provider, account and kind, in one pass
  // over the ledger: a cycle needs day, week and month totals for every account, and
  // one scan per total made the 100k-resource cycle quadratic.
  Result<std::vector<SpendCell>> SpendSince(std::span<const Time> starts, Time now);

  // Makes the ledger agree with `provider`/`account`'s bill, per resource and UTC day.
  // A day compared for the first time gets the bill less what the ledger holds, as a
  // ledger row of meter 'billed' spread over the day: on a day the resource was not
  // watched in full (before first sight) that is backfill; on a watched day it is drift,
  // and both figures are kept in usage_days. A day compared before gets only what its
  // bill changed since. Rows without money are priced from `prices`. A resource first
  // seen within `first_sight_slack` of the day's start (or of its creation) counts as
  // watched all day: the poll that found it could not have been earlier.
  // `from` and `to` are the midnights the bill covers: GPU time the ledger holds on one
  // of those days for a resource the bill does not name that day was billed nothing
  // (most often the minutes between a stop before midnight and the poll that saw it),
  // and is booked away at the day's first bill (rows outside [from, to) are ignored).
  Result<ReconcileStats> ReconcileUsage(const std::string& provider, const std::string& account,
                                        std::span<const UsageRow> rows, Time from, Time to, Time now,
                                        const PriceBook& prices, Duration first_sight_slack);
  // Each resource-day of `rows` against the ledger as it stands, booking nothing.
  Result<std::vector<UsageComparison>> CompareUsage(const std::string& provider, const std::string& account,
                                                    std::span<const UsageRow> rows, Time from, Time to,
                                                    const PriceBook& prices);
  // Drift over `provider`'s watched resource-days since `since`.
  Result<UsageDrift> QueryUsageDrift(const std::string& provider, Time since);

  const std::map<std::pair<std::string, std::string>, Mark>& marks() const { return marks_; }
  Status PutMark(const Mark& m);
  Status RemoveMark(const std::string& policy, const std::string& resource);
  Status MarkNotified(const std::string& policy, const std::string& resource, Time at);

  Result<int64_t> AddSnooze(const Snooze& s);
  Result<std::vector<Snooze>> ActiveSnoozes(Time now);

  // Whether the file opened is still the one at `path` (not deleted, not replaced).
  Status CheckFile() const;
  // How long this process may still act as the leader, by the lease's expiry
  // (PostgreSQL); kFailedPrecondition once it may not. SQLite has no lease: unbounded.
  Result<Duration> LeaseLeft();
  bool postgres() const;

  // The adapters' detail caches (store/details.cc), per configured provider name: a
  // process that starts fresh reads them back instead of re-reading every detail.
  Result<std::vector<DetailRecord>> LoadDetails(std::string_view provider);
  Status SaveDetails(std::string_view provider, const std::vector<DetailRecord>& changes);

  // The action journal (store/action_journal.h).
  Result<int64_t> BeginIntent(const Intent& intent) override;
  Status FinishIntent(int64_t id, IntentState state, std::string_view outcome, std::string_view response,
                      std::string_view error, Time at) override;
  Result<std::vector<Intent>> OpenIntents() override;
  Result<std::vector<Intent>> IntentsOfMark(const IntentKey& key) override;
  Result<std::vector<Intent>> DoneSince(Time since) override;
  Result<std::vector<Intent>> IntentsSince(Time since);
  // Intents whose idempotency key starts with `prefix`, by id.
  Result<std::vector<Intent>> IntentsWithKeyPrefix(const std::string& prefix);

  // True when `dedupe_key` was not recorded before (and records it now).
  Result<bool> RecordNotification(const std::string& dedupe_key, const std::string& notifier, Time at,
                                  const std::string& status);
  // Whether `dedupe_key` was recorded (sent, or given up on) before.
  Result<bool> NotificationRecorded(const std::string& dedupe_key);

  // Rolls ledger intervals and transitions older than `detail_age` into hourly totals,
  // hourly totals older than 3 x `detail_age` into daily ones, and prunes resources
  // deleted longer ago than `detail_age`. Totals are preserved exactly.
  Result<RetentionStats> ApplyRetention(Time now, Duration detail_age);

  Result<StatusView> QueryStatus(Time now, Duration idle_threshold);
  Result<Report> QueryReport(Time since, Time now, const Grouping& by);

  // PRAGMA integrity_check; kDataLoss with the first problem when it is not "ok".
  Status IntegrityCheck();
  const std::string& path() const { return path_; }

  // Writes a value to the meta table (tests and the daemon's bookkeeping).
  Status PutMeta(const std::string& k, const std::string& v);
  Result<std::optional<std::string>> GetMeta(const std::string& k);

 private:
  Store(std::unique_ptr<Db> db, std::string path, bool read_only);
  static Result<std::unique_ptr<Store>> OpenPostgres(const StoreOptions& options);
  Status Load();
  static std::string ObservedKey(const std::string& provider, const std::string& account);
  // How far an open GPU interval of `st` is known to run: `now`, or the last listing of
  // its account when that is earlier. A report read a day after the daemon stopped must
  // not bill a day nobody observed.
  Time SpendHorizon(const ResourceState& st, Time now) const;
  // Where the next resource of one listing is looked for first: the account's states in
  // the order they were first stored (IngestResource).
  struct IngestCursor {
    bool started = false;
    const std::vector<ResourceState*>* hint = nullptr;
    size_t next = 0;
    uint64_t generation = 0;
    std::string key;  // one buffer for the listing, not an allocation per resource
  };
  // One listed resource: a const one is copied from, a mutable one moved from.
  template <class R>
  Status IngestResource(IngestCursor& cursor, R& r, Time now, const PriceBook& prices, const IngestOptions& options,
                        IngestStats& stats);
  // Ingest's transaction, with `record` doing the snapshots' part.
  Result<IngestStats> IngestWith(std::span<const Snapshot> snapshots, Time now,
                                 const std::function<Status(IngestStats&)>& record);
  Status CanIngest() const;  // not read-only, and no Listing's transaction open
  // The two ends of Ingest's transaction. EndIngest records what `snapshots` (their
  // accounts and flags, never their resources) did not list and commits when `s` is
  // ok; otherwise, or when that fails, it rolls back and reloads, so memory never runs
  // ahead of the file.
  Status BeginIngest();
  Result<IngestStats> EndIngest(Status s, std::span<const Snapshot> snapshots, Time now, const IngestStats& stats);
  bool listing_open_ = false;  // a Listing's transaction is open
  // What the snapshots did not list: gone after a complete listing, unknown otherwise.
  Status IngestMissing(std::span<const Snapshot> snapshots, Time now, IngestStats& stats);
  // Rows of one table written kRowsPerInsert to a statement: a first poll records a
  // transition for each of 100k resources, and one statement a row cost a third more
  // than the row itself (opening three cursors, binding, halting and resetting).
  // `head` is "INSERT INTO t (a, b) VALUES "; `bind` binds row `row`'s values from
  // parameter `first` + 1 on.
  static constexpr size_t kRowsPerInsert = 64;
  struct RowsInsert {
    RowsInsert(std::string_view head, int columns);
    std::string batch, one;  // the statement for kRowsPerInsert rows, and for one
    int columns;
  };
  Status InsertRows(const RowsInsert& sql, size_t rows, const std::function<void(Stmt&, size_t row, int first)>& bind);
  // `before` is null on first sight. Queued, and written kRowsPerInsert rows to a
  // statement by FlushTransitions, which Ingest's transaction calls before it commits.
  Status RecordTransition(const ResourceState& st, const Resource* before, const Resource& after,
                          Time now, IngestStats& stats);
  Status FlushTransitions();
  Status WriteResource(ResourceState& st, bool insert, Time now);
  Status UpdateActivity(ResourceState& st, const Resource& r, const Activity& a, Time now, IngestStats& stats);
  static Time FirstSightBase(const Activity& a, const Resource& r, Time now, std::optional<Time>& observed);
  void WarnUnpriced(const Resource& r, const std::string& what, const std::string& setting);
  Status UpdateLedger(ResourceState& st, const Resource& r, const FlatMap<std::string, int64_t>& tokens, Time now,
                      const PriceBook& prices, const IngestOptions& options, IngestStats& stats);
  Status CloseGpu(ResourceState& st, Time at, IngestStats& stats);
  // A bill matched to this account's resources and priced, per (billing id, day)
  // (store/usage_reconcile.cc).
  struct BilledDay {
    std::string id;
    Time day;
    Money billed;
    std::vector<ResourceState*> resources;  // the one the bill names first
  };
  TextMap<std::vector<ResourceState*>> BillingIndex(const std::string& provider, const std::string& account);
  // The bill's rows for the days in [from, to), matched and priced; on the days in
  // `first_bill_days` the bill has rows for, also each (billing id, day) where the
  // ledger holds GPU time and the bill nothing, at 0.
  Result<std::vector<BilledDay>> MatchBill(const std::string& provider, const std::string& account,
                                           std::span<const UsageRow> rows, const PriceBook& prices, Time from,
                                           Time to, const std::set<Time>& first_bill_days, ReconcileStats& stats);
  // What the ledger holds for each of `bills` on its day (only where `wanted`, when
  // given: one per bill).
  Result<std::vector<Money>> LedgerOn(const std::vector<BilledDay>& bills, const std::vector<bool>& wanted = {});
  // Spend since each start from one scan of the ledger (the cycle keeps the result
  // running in period_spend_; `Spend` builds one for its single question).
  Result<std::unique_ptr<PeriodSpend>> BuildPeriodSpend(std::span<const Time> starts, Time now);
  // A prepared statement kept for reuse (the poll path runs the same few many times).
  Result<Stmt*> Cached(std::string_view sql);
  // The same for a literal's text, found first by the literal's address: hashing the
  // hundred-odd bytes of a statement for each of the ~620,000 a first poll runs at 100k
  // was 1 % of its instructions. The text is compared on a hit, so an address that
  // later holds other text only misses.
  template <size_t N>
  Result<Stmt*> Cached(const char (&sql)[N]) {
    return CachedLiteral(std::string_view(sql, N - 1));
  }
  Result<Stmt*> CachedLiteral(std::string_view sql);

  // Declared before db_, so the database is closed before the lock is released.
  std::optional<InstanceLock> lock_;
  std::unique_ptr<Db> db_;
  std::string path_;
  bool read_only_;
  // The opened file's identity, for CheckFile.
  uint64_t device_ = 0, inode_ = 0;
  StateSet states_;
  // states_ by (provider, account), so a listing's misses are found among its own
  // account's resources (a walk of every resource per account was 13 % of a 100k
  // steady cycle). Elements of the set never move, so the pointers hold until
  // an erase or clear, which marks the index stale; it is rebuilt when next needed.
  // Both indexes are caches of states_, rebuilt together (so mutable): `in_order_` is
  // every state by row id (resources()), and each account's list in by_account_ keeps
  // that order too.
  using AccountIndex = std::map<std::pair<std::string, std::string>, std::vector<ResourceState*>>;
  mutable AccountIndex by_account_;
  mutable std::vector<ResourceState*> in_order_;
  mutable bool by_account_stale_ = true;
  mutable uint64_t index_generation_ = 0;  // counts rebuilds: IngestOne's hint checks it
  std::set<std::string> unpriced_warned_;  // provider type | what, warned once a process
  // Adds a state just inserted (so its row id, once written, is the highest) to both
  // indexes, unless they are to be rebuilt anyway.
  void Index(ResourceState& st);
  void RebuildIndexesIfStale() const;
  // A stored state to change in place. The set hands out const elements because their
  // key must not change; the store never changes a state's provider, kind or id (a
  // listing replaces a resource only with one of the same key).
  static ResourceState& MutableState(const ResourceState& st) { return const_cast<ResourceState&>(st); }
  // The resources of one provider account (the index rebuilt first when stale).
  std::span<ResourceState* const> AccountResources(const std::string& provider, const std::string& account);
  // Every account's, of one configured provider.
  std::vector<const ResourceState*> ProviderResources(const std::string& provider);
  std::map<std::pair<std::string, std::string>, Mark> marks_;
  // (provider, account) -> its last recorded listing; persisted in meta.
  std::map<std::pair<std::string, std::string>, Time> observed_until_;
  // By SQL text, looked up without copying it (a cold cycle asks ~600k times).
  TextMap<std::unique_ptr<Stmt>> stmts_;
  struct CachedByAddress {
    std::string_view text;  // its key in stmts_
    Stmt* stmt = nullptr;
  };
  std::unordered_map<const char*, CachedByAddress> stmts_by_address_;
  uint32_t ingest_serial_ = 0;  // ResourceState::listed_in
  // The running Ingest's transitions not yet written (RecordTransition, InsertRows).
  struct PendingTransition {
    int64_t rid;
    int64_t at;
    std::string_view from_lifecycle;  // LifecycleName's static text; empty on first sight
    std::string_view to_lifecycle;
    Interned from_status, to_status;  // held: `before` is gone when the batch is written
  };
  std::vector<PendingTransition> pending_transitions_;
  // The cycle's spend per period, kept as rows are written; dropped when the ledger
  // changes under it (retention, a rolled-back ingest, a reload).
  std::unique_ptr<PeriodSpend> period_spend_;
};

// One account's listing recorded resource by resource, as its adapter builds them
// (providers::ResourceSink): the poll never holds an account's listing whole beside the
// stored state. It is Ingest(Snapshot&&) with the resources given one at a time: one
// transaction, begun by the first Add and committed by Finish, which judges what the
// listing missed. Nothing else may write the store in between. The poll makes no
// request between a listing's first Add and its Finish, and a second listing or an
// Ingest begun meanwhile fails rather than joining the transaction. Dropped unfinished,
// it rolls back as a failed Ingest does.
class Store::Listing {
 public:
  Listing(const Listing&) = delete;
  Listing& operator=(const Listing&) = delete;
  ~Listing();
  // After an error the rest are dropped, and Finish returns it.
  void Add(ListedResource&& r);
  // `complete`: every page of every listing arrived (Snapshot::complete).
  Result<IngestStats> Finish(bool complete);

 private:
  friend class Store;
  Listing(Store& store, std::string provider, std::string account, Time now, const PriceBook& prices,
          const IngestOptions& options);
  Status Open();  // the transaction, at the first Add (or Finish, for an empty listing)
  Store& store_;
  Snapshot account_;  // provider, account and complete; never any resources
  Time now_;
  const PriceBook& prices_;
  IngestOptions options_;
  IngestCursor cursor_;
  IngestStats stats_;
  Status status_;
  bool begun_ = false;
  bool finished_ = false;
};

// A stable 64-bit fingerprint of a resource's mutable fields (not its activity).
uint64_t Fingerprint(const Resource& r);
// The activity row's `fingerprint` column: "#" and the 16 hex digits of
// Activity::counters_fingerprint. Rows an older loopwarden wrote hold the counters' text
// instead, read as CountersFingerprint(text), which is what a listing of the same
// counters gives now.
std::string StoredCountersText(uint64_t fingerprint);  // "" for 0
uint64_t StoredCountersFingerprint(std::string_view column);

// Resource <-> JSON: the whole resource, read on its own (journals, tests).
std::string ResourceToJson(const Resource& r);
Result<Resource> ResourceFromJson(std::string_view json);

// The resources table keeps identity, names and lifecycle in columns and the rest in
// `data`, so nothing is stored twice (at 100k resources the duplicates were a fifth of
// the file).
struct ResourceColumns {
  std::string_view provider, account, kind, id, name, owner, base_model, lifecycle, native_status;
  std::optional<Time> created_at;
};
std::string ResourceDataJson(const Resource& r);
Result<Resource> ResourceFromRow(const ResourceColumns& columns, std::string_view data);

}  // namespace loopwarden::store
