#include "reconcile/reconciler.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <set>
#include <unordered_map>

#include "core/flat_hash.h"
#include "core/log.h"
#include "net/parallel.h"
#include "reconcile/events.h"
#include "reconcile/views.h"

namespace loopwarden::reconcile {

namespace {

using policies::Decision;
using policies::DecisionType;
using policies::Notice;

double Seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }
double Unix(Time t) { return static_cast<double>(ToUnixMicros(t)) / 1e6; }
std::string Us(Time t) { return std::to_string(ToUnixMicros(t)); }

}  // namespace

Reconciler::Reconciler(Clock& clock, store::Store& store, exporters::Metrics& metrics, NotifyRunner* notifier,
                       ReconcilerOptions options)
    : clock_(clock),
      store_(store),
      metrics_(metrics),
      notifier_(notifier),
      options_(options),
      executor_(ExecutorDeps{
          .clock = clock,
          .store = store,
          .journal = store,
          .metrics = metrics,
          .provider_of = [this](const std::string& name) { return setup_ ? setup_->Find(name) : nullptr; },
          .prices = [this]() -> const store::PriceBook& { return setup_->prices; },
      }) {}

std::optional<Time> Reconciler::NextDeadline(Time now) const {
  std::optional<Time> next;
  for (const auto& [k, m] : store_.marks()) {
    if (m.act_after <= now) continue;
    const policies::Policy* p = setup_ ? setup_->engine.FindPolicy(m.policy) : nullptr;
    if (p == nullptr || p->action == ActionType::kNotify) continue;
    if (!next || m.act_after < *next) next = m.act_after;
  }
  return next;
}

boost::asio::awaitable<bool> Reconciler::Poll(CycleReport& rep) {
  const Setup& s = *setup_;
  std::vector<net::Task> tasks;
  uint64_t requests_before = 0;
  for (const auto& p : s.providers) requests_before += p->stats().requests;
  for (const auto& p : s.providers) {
    if (!restored_.insert(p.get()).second) continue;
    // A cache that cannot be read only costs provider calls: the poll goes on.
    if (auto details = store_.LoadDetails(p->name()); details.ok()) {
      p->RestoreDetails(*details);
    } else {
      Log().Warn("stored detail cache not read; details are read from the provider", {{"provider", p->name()}, {"err", details.status()}});
    }
  }
  bool recorded = true;
  double ingest_seconds = 0;
  size_t listed = 0;
  std::vector<char> unreachable(s.providers.size(), 0);  // by configuration order
  for (size_t i = 0; i < s.providers.size(); ++i) {
    tasks.push_back([&, i]() -> boost::asio::awaitable<void> {
      providers::Provider& p = *s.providers[i];
      const auto start = std::chrono::steady_clock::now();
      // Each resource goes into the store as the adapter builds it, so no account's
      // listing is held whole beside the stored state; the accounts still being listed
      // hold only what they read. The listing's transaction opens with the first one.
      // The ingest phase is timed from there: building the resources is counted in it.
      std::unique_ptr<store::Store::Listing> listing;
      std::chrono::steady_clock::time_point ingest_started;
      auto begin = [&] {
        ingest_started = std::chrono::steady_clock::now();
        listing = store_.BeginListing(p.name(), p.account(), clock_.Now(), setup_->prices,
                                      store::IngestOptions{.idle_after = options_.idle_after});
      };
      auto sink = [&](ListedResource&& r) {
        if (!listing) begin();
        listing->Add(std::move(r));
      };
      providers::Inventory inv;
      try {
        inv = co_await p.List(sink);
      } catch (const boost::system::system_error& e) {
        if (e.code() == boost::asio::error::operation_aborted) throw;
        inv = providers::Inventory{};
        inv.complete = false;
        rep.errors.push_back(p.name() + ": " + e.what());
      }
      if (!listing) begin();
      metrics_.RecordPoll(p.name(), Seconds(ingest_started - start), inv.complete);
      unreachable[i] = !inv.complete && inv.listed == 0;
      const size_t resources = inv.listed;
      const bool complete = inv.complete;
      recorded = RecordListing(p, std::move(inv), *listing, rep) && recorded;
      listing.reset();
      ingest_seconds += Seconds(std::chrono::steady_clock::now() - ingest_started);
      if (options_.on_listed) options_.on_listed(p.name(), ++listed, s.providers.size(), resources, complete);
    });
  }
  const auto poll_started = std::chrono::steady_clock::now();
  // A bounded number of accounts at a time: the accounts still being listed are what
  // the poll holds beside the stored state (config.h, poll_concurrency).
  co_await net::RunAll(std::move(tasks), static_cast<size_t>(std::max<int64_t>(1, s.config.poll_concurrency)));
  for (size_t i = 0; i < s.providers.size(); ++i) {
    if (unreachable[i]) rep.unreachable.push_back(s.providers[i]->name());
  }
  rep.phases.ingest = ingest_seconds;
  rep.phases.poll = Seconds(std::chrono::steady_clock::now() - poll_started) - ingest_seconds;
  uint64_t requests_after = 0;
  for (const auto& p : s.providers) requests_after += p->stats().requests;
  rep.provider_requests = static_cast<int64_t>(requests_after - requests_before);
  co_return recorded;
}

bool Reconciler::RecordListing(providers::Provider& p, providers::Inventory inv, store::Store::Listing& listing,
                               CycleReport& rep) {
  // Every error class from the start, at 0, so alerts and panels see a series before
  // the first error (a counter that appears only on its first increment hides it).
  std::map<std::string, uint64_t> errors = p.stats().errors_by_class;
  for (providers::ErrorClass c : {providers::ErrorClass::kAuth, providers::ErrorClass::kNotFound,
                                  providers::ErrorClass::kRateLimited, providers::ErrorClass::kCapacity,
                                  providers::ErrorClass::kQuota, providers::ErrorClass::kConflict,
                                  providers::ErrorClass::kInvalid, providers::ErrorClass::kTransient,
                                  providers::ErrorClass::kUnknown}) {
    errors.try_emplace(std::string(providers::ErrorClassName(c)), 0);
  }
  metrics_.SetProviderRequests(p.name(), p.stats().requests_by_class, errors);
  for (const providers::ListingFailure& f : inv.failures) {
    Log().Warn("listing incomplete: its missing resources are unknown, not gone",
               {{"provider", p.name()}, {"what", f.what}, {"err", f.error.message}});
  }
  if (!inv.complete) rep.complete = false;
  auto stats = listing.Finish(inv.complete);
  if (!stats.ok()) {
    rep.errors.push_back("recording the poll of " + p.name() + ": " + stats.status().message());
    Log().Error("recording the poll failed; nothing is decided this cycle", {{"provider", p.name()}, {"err", stats.status()}});
    return false;
  }
  rep.ingest += *stats;
  if (Status st = store_.SaveDetails(p.name(), p.TakeDetailChanges()); !st.ok()) {
    Log().Warn("detail cache not saved; a restart reads those details again", {{"provider", p.name()}, {"err", st}});
  }
  Log().Debug("poll recorded", {{"provider", p.name()}, {"inserted", stats->resources_inserted},
                                {"updated", stats->resources_updated}, {"rows", stats->rows_written()},
                                {"unknown", stats->unknown}, {"deleted", stats->deleted}});
  return true;
}

boost::asio::awaitable<Status> Reconciler::Recover() {
  std::vector<SettledMark> settled;
  Status st = co_await executor_.Recover(settled);
  for (const SettledMark& m : settled) RemoveMark(m.policy, m.resource, m.why, nullptr);
  co_return st;
}

void Reconciler::PlaceMark(const Decision& d, Time now, CycleReport& rep) {
  store::Mark m{.policy = d.policy, .resource = d.resource, .marked_at = now, .act_after = d.act_after.value_or(now),
                .notified_at = std::nullopt, .reason = d.reason, .action = std::string(ActionName(d.action))};
  if (Status st = store_.PutMark(m); !st.ok()) {
    rep.errors.push_back("mark: " + st.message());
    Log().Error("mark not recorded; the next cycle decides on it again", {{"policy", d.policy}, {"resource", d.resource},
                                                                          {"err", st}});
    return;
  }
  Log().Info("marked", {{"policy", d.policy}, {"resource", d.resource}, {"act_after", m.act_after}, {"reason", d.reason}});
}

void Reconciler::RemoveMark(const std::string& policy, const std::string& resource, const std::string& why,
                            std::vector<std::string>* errors) {
  if (Status st = store_.RemoveMark(policy, resource); !st.ok()) {
    if (errors) errors->push_back("unmark: " + st.message());
    Log().Warn("mark not removed; the next cycle decides on it again", {{"policy", policy}, {"resource", resource},
                                                                        {"err", st}});
    return;
  }
  Log().Info("unmarked", {{"policy", policy}, {"resource", resource}, {"reason", why}});
}

std::vector<Outgoing> Reconciler::MarkNotices() const {
  // Marks not yet announced, whatever the reason (new this cycle, or a delivery lost to
  // a crash): the store's dedupe keeps each announced once.
  std::vector<Outgoing> out;
  for (const auto& [k, m] : store_.marks()) {
    if (m.notified_at) continue;
    const policies::Policy* p = setup_->engine.FindPolicy(m.policy);
    if (p == nullptr || p->notify.empty()) continue;
    const store::ResourceState* st = store_.Find(m.resource);
    const bool dry_run = setup_->config.dry_run || p->dry_run.value_or(false);
    Outgoing o{.event = MarkedEvent(m, *p, st ? &st->resource : nullptr, dry_run), .notifiers = p->notify};
    out.push_back(std::move(o));
  }
  return out;
}

boost::asio::awaitable<CycleReport> Reconciler::Cycle(bool poll) {
  const auto started = std::chrono::steady_clock::now();
  CycleReport rep;
  rep.at = clock_.Now();
  rep.polled = poll;
  if (setup_ == nullptr) {
    rep.errors.push_back("no configuration");
    co_return rep;
  }
  const Setup& s = *setup_;
  // The database deleted or replaced under us: everything written from here on (intents
  // included) would be lost with the unlinked file. Decide and do nothing until restarted.
  if (Status file = store_.CheckFile(); !file.ok()) {
    rep.errors.push_back(file.message());
    Log().Error("database file gone; not deciding or acting until loopwarden is restarted", {{"err", file}});
    rep.seconds = Seconds(std::chrono::steady_clock::now() - started);
    metrics_.RecordCycle(rep.seconds, false, Unix(clock_.Now()));
    last_ = rep;
    co_return rep;
  }
  if (poll && !co_await Poll(rep)) {
    // The poll could not be recorded: the store's view is stale, so decide nothing.
    rep.seconds = Seconds(std::chrono::steady_clock::now() - started);
    metrics_.RecordCycle(rep.seconds, false, Unix(clock_.Now()));
    last_ = rep;
    co_return rep;
  }
  const Time now = clock_.Now();
  const auto evaluate_started = std::chrono::steady_clock::now();
  auto ctx = BuildEvalContext(store_, s.engine.set(), s.SlotCaps(), now, s.config.dry_run);
  if (!ctx.ok()) {
    rep.errors.push_back("building the policy input: " + ctx.status().message());
    Log().Error("building the policy input failed", {{"err", ctx.status()}});
    metrics_.RecordCycle(Seconds(std::chrono::steady_clock::now() - started), false, Unix(now));
    last_ = rep;
    co_return rep;
  }
  const policies::EvalInput& in = (*ctx)->input;
  size_t evaluated = in.resources.size();
  policies::EvalOutput out = s.engine.Evaluate(in);
  rep.phases.evaluate = Seconds(std::chrono::steady_clock::now() - evaluate_started);
  const auto act_started = std::chrono::steady_clock::now();
  rep.blast_radius_abort = out.blast_radius_abort;
  rep.abort_reason = out.abort_reason;
  if (out.blast_radius_abort) {
    metrics_.RecordBlastRadiusAbort();
    Log().Error("blast-radius cap hit: no action this cycle", {{"why", out.abort_reason}});
  }

  std::vector<Outgoing> notices;
  for (const Decision& d : out.decisions) {
    metrics_.RecordDecision(d.policy, policies::DecisionName(d.type));
    switch (d.type) {
      case DecisionType::kMark:
        ++rep.marks;
        if (options_.execute) PlaceMark(d, now, rep);
        break;
      case DecisionType::kUnmark:
        ++rep.unmarks;
        if (options_.execute) RemoveMark(d.policy, d.resource, d.reason, &rep.errors);
        break;
      case DecisionType::kNotify:
        if (d.notice == Notice::kMarked) break;  // announced from the mark itself, below
        ++rep.notices;
        notices.push_back(Outgoing{.event = NoticeEvent(d, s.engine.FindPolicy(d.policy), now), .notifiers = d.notify});
        break;
      case DecisionType::kAct: break;  // carried out below, in the engine's order
      case DecisionType::kSkip:
        Log().Debug("skip", {{"policy", d.policy}, {"resource", d.resource}, {"reason", d.reason}});
        break;
    }
  }
  rep.acts = static_cast<int64_t>(out.act_order.size());

  if (options_.execute) {
    // The executor re-checks each act on the provider's fresh object against the
    // account counts as the acts before it left them: the engine planned on the same.
    std::map<std::string, policies::AccountAggregates> accounts = in.accounts;
    for (size_t index : out.act_order) {
      if (stopping_) break;
      const Decision* d = &out.decisions[index];
      const store::ResourceState* st = store_.Find(d->resource);
      policies::AccountAggregates* account = nullptr;
      bool holds_slot = false;
      if (st) {
        auto it = accounts.find(policies::AccountKey(st->resource));
        if (it != accounts.end()) account = &it->second;
        holds_slot = HoldsSlot(st->resource);
      }
      ActReport ar = co_await executor_.Act(s.engine, *d, in.snoozes, account);
      if (ar.settled) RemoveMark(d->policy, d->resource, *ar.settled, &rep.errors);
      if (ar.result == ActResult::kDone) {
        ++rep.acted;
        if (account && holds_slot && !d->dry_run && account->active_sessions > 0) --account->active_sessions;
      }
      if (ar.result == ActResult::kDryRun) ++rep.would_act;
      if (ar.result != ActResult::kDryRun) {
        Log().Info("act", {{"policy", d->policy}, {"resource", d->resource}, {"result", ActResultName(ar.result)},
                           {"detail", ar.detail}});
      }
      const policies::Policy* p = s.engine.FindPolicy(d->policy);
      for (exporters::Event& e : ar.events) {
        e.dry_run = d->dry_run;
        notices.push_back(Outgoing{.event = std::move(e), .notifiers = p ? p->notify : d->notify});
      }
    }
    std::vector<Outgoing> marks = MarkNotices();
    notices.insert(notices.begin(), std::make_move_iterator(marks.begin()), std::make_move_iterator(marks.end()));
    if (options_.notify && notifier_ != nullptr) notifier_->Enqueue(notices);

    // Retention once a day.
    if (poll) {
      const std::optional<Time> last_at = MetaTime("last_retention_us");
      const bool due = !last_at || now - *last_at >= std::chrono::hours(24) || *last_at > now + std::chrono::hours(24);
      if (due) {
        auto r = store_.ApplyRetention(now, s.config.retention);
        if (r.ok()) {
          if (Status st = store_.PutMeta("last_retention_us", Us(now)); !st.ok()) {
            Log().Warn("retention time not recorded; retention runs again next poll", {{"err", st}});
          }
          Log().Info("retention applied", {{"intervals", r->intervals_rolled}, {"hourly", r->hourly_rolled},
                                           {"pruned", r->resources_pruned}});
        } else {
          Log().Error("retention failed", {{"err", r.status()}});
        }
      }
    }
    if (poll && options_.execute) {
      // The views are done with once the decisions are carried out, and the usage pass
      // reads whole bills: on a first cycle over 100k resources, those bills and the
      // views (then 11 MB) together were the process's peak memory.
      (*ctx)->input.resources = {};
      std::vector<policies::ResourceView>().swap((*ctx)->views);
      co_await ReconcileUsage(now);
    }
  }

  rep.decisions = std::move(out.decisions);
  rep.ok = rep.errors.empty() && rep.complete;
  const auto export_started = std::chrono::steady_clock::now();
  rep.phases.act = Seconds(export_started - act_started);
  Export(clock_.Now(), in);
  rep.phases.export_metrics = Seconds(std::chrono::steady_clock::now() - export_started);
  rep.seconds = Seconds(std::chrono::steady_clock::now() - started);
  metrics_.RecordCycle(rep.seconds, rep.ok, Unix(clock_.Now()));
  Log().Info("cycle", {{"polled", poll}, {"ok", rep.ok}, {"resources", static_cast<long>(evaluated)},
                       {"marks", rep.marks}, {"unmarks", rep.unmarks}, {"acts", rep.acts}, {"acted", rep.acted},
                       {"would_act", rep.would_act}, {"seconds", rep.seconds}});
  last_ = rep;
  co_return rep;
}

std::optional<Time> Reconciler::MetaTime(const std::string& key) {
  auto last = store_.GetMeta(key);
  if (!last.ok() || !last->has_value()) return std::nullopt;
  // A value that does not read as a time (a hand edit, damage) means "due": the caller
  // rewrites it, and never throws out of the loop after this cycle has acted.
  const std::string& text = **last;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (!text.empty() && *end == '\0' && errno == 0) return FromUnixMicros(v);
  Log().Warn("unreadable meta value; doing its work now and rewriting it", {{"key", key}, {"value", text.substr(0, 64)}});
  return std::nullopt;
}

namespace {

// One provider's share of the fleet gauges, tallied by enum index and named once at the
// end: string-keyed maps looked up four times per resource were most of this walk at
// 100k resources. A count is exported only where it is above 0 (the maps it replaces
// held only the keys that were touched).
struct ProviderTally {
  static constexpr size_t kKinds = 7, kLifecycles = 7, kMeters = 3;
  std::array<std::array<int64_t, kLifecycles>, kKinds> counts{};
  std::array<int64_t, kKinds> idle{};
  std::optional<int64_t> idle_gpus;
  std::array<std::optional<Money>, kMeters> spend{};
  bool listed_any = false;  // idle spend is exported for providers with resources
  Money idle_spend;
  int64_t unpriced = 0;
};
static_assert(ProviderTally::kKinds == static_cast<size_t>(Kind::kFireworksDeployment) + 1);
static_assert(ProviderTally::kLifecycles == static_cast<size_t>(Lifecycle::kUnknown) + 1);
static_assert(ProviderTally::kMeters == static_cast<size_t>(Meter::kTokens) + 1);

}  // namespace

void Reconciler::Export(Time now, const policies::EvalInput& in) {
  std::unordered_map<std::string_view, ProviderTally> tallies;
  for (const auto& p : setup_->providers) tallies[p->name()];
  // By the pooled provider name's identity (equal text is one pooled entry), so the
  // name is hashed once per provider, not once per resource.
  HashMap<const char*, ProviderTally*> tally_of;
  for (const store::ResourceState& st : store_.resources()) {
    const Resource& r = st.resource;
    auto [known, fresh] = tally_of.try_emplace(r.provider.data(), nullptr);
    if (fresh) known->second = &tallies[r.provider];  // node-based: the tally stays put
    ProviderTally& t = *known->second;
    const Meter meter = r.billing.meter == Meter::kNone ? Meter::kGpuTime : r.billing.meter;
    std::optional<Money>& spend = t.spend[static_cast<size_t>(meter)];
    spend = spend.value_or(Money()) + st.SpendAt(now);
    t.idle_spend += st.IdleSpendAt(now);
    t.listed_any = true;
    if (st.deleted_at || r.lifecycle == Lifecycle::kDeleted) continue;
    const size_t kind = static_cast<size_t>(r.kind);
    const size_t lifecycle = static_cast<size_t>(r.lifecycle);
    ++t.counts[kind][lifecycle];
    if (st.unpriced) ++t.unpriced;
    const auto since = st.IdleSince();
    if (r.lifecycle == Lifecycle::kRunning && since && now - *since >= options_.idle_after) {
      ++t.idle[kind];
      if (r.billing.billable) t.idle_gpus = t.idle_gpus.value_or(0) + r.billing.gpus();
    }
  }
  std::map<std::tuple<std::string, std::string, std::string>, int64_t> counts;
  std::map<std::pair<std::string, std::string>, int64_t> idle;
  std::map<std::string, int64_t> idle_gpus;
  std::map<std::pair<std::string, std::string>, Money> spend;
  std::map<std::string, Money> idle_spend;
  std::map<std::string, int64_t> unpriced;
  for (const auto& [name, t] : tallies) {
    const std::string provider(name);
    for (Kind k : AllKinds()) {
      const size_t kind = static_cast<size_t>(k);
      for (Lifecycle l : AllLifecycles()) {
        const size_t lifecycle = static_cast<size_t>(l);
        if (t.counts[kind][lifecycle] > 0) {
          counts[{provider, std::string(KindName(k)), std::string(LifecycleName(l))}] = t.counts[kind][lifecycle];
        }
      }
      if (t.idle[kind] > 0) idle[{provider, std::string(KindName(k))}] = t.idle[kind];
    }
    if (t.idle_gpus) idle_gpus[provider] = *t.idle_gpus;
    for (Meter m : {Meter::kGpuTime, Meter::kTokens}) {
      if (const auto& v = t.spend[static_cast<size_t>(m)]) spend[{provider, std::string(MeterName(m))}] = *v;
    }
    if (t.listed_any) idle_spend[provider] = t.idle_spend;
    unpriced[provider] = t.unpriced;
  }
  if (last_export_ && now > *last_export_) {
    const double dt = std::chrono::duration<double>(now - *last_export_).count();
    for (const auto& [provider, gpus] : idle_gpus) metrics_.AddIdleGpuSeconds(provider, dt * static_cast<double>(gpus));
  }
  last_export_ = now;
  metrics_.SetResources(counts);
  metrics_.SetIdle(idle, idle_gpus);
  metrics_.SetUnpriced(unpriced);
  metrics_.SetSpendTotals(spend, idle_spend);
  for (const policies::Policy& p : setup_->engine.set().policies) {
    if (!p.budget) continue;
    auto it = in.budget_spend.find(p.name);
    metrics_.SetBudget(p.name, p.budget->limit, it == in.budget_spend.end() ? Money() : it->second);
    if (auto f = in.budget_forecast.find(p.name); f != in.budget_forecast.end()) {
      metrics_.SetBudgetForecast(p.name, f->second.period_end);
    }
  }
  std::map<std::string, int64_t> marks;
  for (const policies::Policy& p : setup_->engine.set().policies) marks[p.name] = 0;
  for (const auto& [k, m] : store_.marks()) marks[m.policy]++;
  auto next = NextDeadline(now);
  metrics_.SetMarks(marks, next ? std::optional<double>(Unix(*next)) : std::nullopt);
}

}  // namespace loopwarden::reconcile
