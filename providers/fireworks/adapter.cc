#include "providers/fireworks/adapter.h"

#include <boost/json/serialize.hpp>
#include <charconv>
#include <string_view>

#include "core/flat_hash.h"
#include "core/hash.h"
#include "core/json.h"
#include "core/strings.h"
#include "net/http.h"
#include "net/parallel.h"
#include "providers/detail_budget.h"
#include "providers/fireworks/account_metrics.h"
#include "providers/gpu.h"
#include "providers/read_reply.h"
#include "providers/stamped_cache.h"

namespace loopwarden::providers::fireworks {

namespace bj = boost::json;
namespace asio = boost::asio;

namespace {

bool TerminalJob(std::string_view st) {
  return st == "JOB_STATE_COMPLETED" || st == "JOB_STATE_CANCELLED" || st == "JOB_STATE_FAILED" ||
         st == "JOB_STATE_EXPIRED" || st == "JOB_STATE_EARLY_STOPPED" || st == "JOB_STATE_DELETED" ||
         st == "JOB_STATE_ARCHIVED" || st == "JOB_STATE_PAUSED";
}

}  // namespace

FireworksProvider::FireworksProvider(Clock& clock, ProviderOptions options, std::unique_ptr<Transport> transport)
    : clock_(clock),
      options_(std::move(options)),
      name_text_(options_.name),
      account_text_(options_.account),
      transport_(std::move(transport)) {}

namespace {

// refs["name"] only for an object whose full name is not the one its kind, account and
// id make: requests are built from those, and the usual name, held for every object,
// was about 5 MB at 100k resources.
void KeepNameUnlessCanonical(ListedResource& r, const ObjectName& name) {
  if (std::string kept = name.KeptFor(r.account, r.kind, r.id.view()); !kept.empty()) r.refs["name"] = kept;
}

}  // namespace

ListedResource FireworksProvider::Base(Kind kind, ShortString&& id) const {
  ListedResource r;
  r.provider_type = ProviderType::kFireworks;
  r.provider = name_text_;
  r.account = account_text_;
  r.kind = kind;
  r.id = std::move(id);
  return r;
}

asio::awaitable<Status> FireworksProvider::DiscoverAccount() {
  if (!options_.account.empty()) co_return Status::Ok();
  Reply r = co_await transport_->Send({"GET", "/v1/accounts?pageSize=2"});
  if (!r.ok()) co_return Unavailable("discovering the account: " + r.error.ToString());
  const bj::array* a = r.json.is_object() ? json::Arr(r.json.get_object(), "accounts") : nullptr;
  if (!a || a->size() != 1 || !a->at(0).is_object()) {
    co_return FailedPrecondition("the key reaches " + std::to_string(a ? a->size() : 0) +
                                 " accounts; set `account` in the configuration");
  }
  options_.account = IdFromName(json::Str(a->at(0).get_object(), "name").value_or(""));
  account_text_ = options_.account;
  co_return Status::Ok();
}

template <class T, class Parse>
asio::awaitable<bool> FireworksProvider::ListAll(const std::string& path, Parse parse, std::vector<T>& out, Inventory& inv) {
  std::string token;
  const std::string sep = path.find('?') == std::string::npos ? "?" : "&";
  for (int page = 0; page < 100000; ++page) {
    const std::string url = path + sep + "pageSize=200" + (token.empty() ? "" : "&pageToken=" + net::PercentEncode(token));
    auto p = co_await GetRead<Page<T>>(*transport_, url, parse);
    if (!p.reply.ok()) {
      inv.complete = false;
      inv.failures.push_back({"GET " + path + " (page " + std::to_string(page + 1) + ")", p.reply.error});
      co_return false;
    }
    if (p.read->dropped > 0) {
      ProviderError e;
      e.cls = ErrorClass::kUnknown;
      e.detail = "malformed";
      e.message = std::to_string(p.read->dropped) + " objects unusable (no name, an id too long, or copies of one id that disagree)";
      inv.complete = false;
      inv.failures.push_back({"GET " + path, e});
    }
    // The whole list is held until the account's poll ends: room for what the first
    // page says it totals, not doubled page by page (up to half the room unused). A
    // total past kMaxReserve is believed only as far as it.
    constexpr int64_t kMaxReserve = 100'000;
    if (page == 0 && p.read->total_size > 0) {
      out.reserve(out.size() + static_cast<size_t>(std::min(p.read->total_size, kMaxReserve)));
    }
    for (T& item : p.read->items) out.push_back(std::move(item));
    token = p.read->next_page_token;
    if (token.empty()) co_return true;
  }
  co_return false;
}

asio::awaitable<FireworksProvider::SessionCheckpoints> FireworksProvider::FetchSessionCheckpoints(
    const std::string& id, std::optional<Time> update) {
  SessionCheckpoints c;
  c.fetched = clock_.Now();
  c.for_update = update;
  Inventory scratch;
  std::vector<Checkpoint> items;
  const bool ok = co_await ListAll(Path("trainingSessions/" + id + "/checkpoints"), ParseCheckpoints, items, scratch);
  if (ok) {
    c.ok = true;
    c.items = std::move(items);
  } else if (!scratch.failures.empty() && scratch.failures[0].error.cls == ErrorClass::kNotFound) {
    // NOT_FOUND: the session or its trainer is gone; nothing is left to save.
    c.ok = true;
    c.reachable = false;
  }
  session_checkpoints_[id] = c;
  co_return c;
}

asio::awaitable<std::vector<Checkpoint>> FireworksProvider::FetchJobCheckpoints(const std::string& id, bool& ok) {
  Inventory scratch;
  std::vector<Checkpoint> items;
  ok = co_await ListAll(Path("rlorTrainerJobs/" + id + "/checkpoints"), ParseCheckpoints, items, scratch);
  if (ok) job_checkpoints_[id] = {clock_.Now(), items, 0};
  co_return items;
}

asio::awaitable<FireworksProvider::DeploymentMetrics> FireworksProvider::FetchDeploymentMetrics(const std::string& id) {
  Reply r = co_await transport_->Send({"GET", Path("deployments/" + id + ":metrics")});
  DeploymentMetrics m{clock_.Now(), false, 0};
  if (r.ok() && r.json.is_object()) {
    if (const bj::object* o = json::Obj(r.json.get_object(), "metrics")) {
      // Key names are unconfirmed: any request or token rate above zero is traffic.
      m.ok = true;
      for (const auto& kv : *o) {
        if (auto v = json::AsNum(kv.value()); v && *v > 0 && kv.key() != "concurrent_requests") m.rps += *v;
      }
    }
  }
  deployment_metrics_[id] = m;
  co_return m;
}

asio::awaitable<void> FireworksProvider::ScrapeAccountMetrics() {
  const Time now = clock_.Now();
  if (scrape_.ok && now - scrape_.fetched < std::chrono::seconds(12)) co_return;
  Call c{"GET", Path("metrics")};
  c.text = true;
  Reply r = co_await transport_->Send(std::move(c));
  AccountScrape s{now, false, {}};
  if (r.ok()) {
    if (auto parsed = ParseAccountMetrics(r.body); parsed.ok()) {
      s.ok = true;
      s.rps = std::move(*parsed);
    }
  }
  // A failed scrape keeps the last good one; it ages out by detail_max_age.
  if (s.ok || !scrape_.ok) scrape_ = std::move(s);
}

asio::awaitable<FireworksProvider::SessionUsage> FireworksProvider::FetchSessionUsage(const Session& s) {
  const Time now = clock_.Now();
  auto prev = session_usage_.find(s.id.view());
  // At least a day: slot-headroom policies free the longest idle first, which needs
  // idleness beyond the threshold, and a session's hourly rows are one cheap call.
  const Duration first_sight = std::max<Duration>(FirstSightWindow(options_, Kind::kFireworksTrainingSession),
                                                  std::chrono::hours(24));
  // First read: hourly buckets as far back as the policies need. Then only what is new
  // since the last read (with an overlap for late rows): any spend there is activity.
  const bool first = prev == session_usage_.end() || !prev->second.ok || prev->second.evaluated < now - first_sight;
  Time start = first ? now - first_sight : prev->second.evaluated - std::chrono::minutes(2);
  if (first && s.created && *s.created > start) start = *s.created;
  if (start >= now) start = now - std::chrono::minutes(1);
  SessionUsage u;
  u.window_start = first ? start : prev->second.window_start;
  if (!first) u.last_spend = prev->second.last_spend;
  bool ok = true;
  std::optional<Time> evaluated;
  std::string token;
  for (int page = 0; page < 20; ++page) {
    bj::object body{{"startTime", FormatTimeSeconds(start)},
                    {"endTime", FormatTimeSeconds(now)},
                    {"filter", bj::object{{"sessionId", s.id}}},
                    {"scope", "ACCOUNT"},
                    {"pageSize", 200}};
    if (first) body["groupBy"] = bj::array{"HOUR"};
    if (!token.empty()) body["pageToken"] = token;
    Reply r = co_await transport_->Send({"POST", Path("usageCosts:query"), bj::serialize(body)});
    if (!r.ok()) {
      ok = false;
      break;
    }
    auto costs = ParseUsageCosts(r.json);
    if (!costs.ok()) {
      ok = false;
      break;
    }
    const Time eval = costs->evaluated.value_or(now);
    evaluated = evaluated ? std::max(*evaluated, eval) : eval;
    auto spent_at = [&](Time t) {
      if (!u.last_spend || t > *u.last_spend) u.last_spend = t;
    };
    if (first) {
      // A bucket with spend was active somewhere inside it: its end (or what the
      // numbers cover, if earlier) never reads activity as older than it was.
      for (const UsageCosts::Row& row : costs->rows) {
        if (row.usd > 0 && row.start) spent_at(std::min(*row.start + std::chrono::hours(1), eval));
      }
    } else if (costs->subtotal_usd > 0) {
      spent_at(eval);
    }
    token = costs->next_page_token;
    if (token.empty()) break;
  }
  u.ok = ok && evaluated.has_value();
  u.evaluated = evaluated.value_or(now);
  // Hourly buckets put the newest spend up to an hour late. That only matters when it
  // lands inside the longest quiet time the policies ask of sessions: then one more read
  // says whether anything was spent in that time at all. Nothing: quiet for exactly that
  // long, so the policy can match now. Something: the coarse (busy-side) bound stands.
  const auto quiet = options_.quiet_thresholds.find(Kind::kFireworksTrainingSession);
  const Duration window = quiet == options_.quiet_thresholds.end() ? Duration::zero() : quiet->second;
  if (first && u.ok && u.last_spend && window > Duration::zero() && *u.last_spend > u.evaluated - window) {
    const Time from = u.evaluated - window;
    bj::object body{{"startTime", FormatTimeSeconds(from)},
                    {"endTime", FormatTimeSeconds(u.evaluated)},
                    {"filter", bj::object{{"sessionId", s.id}}},
                    {"scope", "ACCOUNT"}};
    Reply r = co_await transport_->Send({"POST", Path("usageCosts:query"), bj::serialize(body)});
    if (r.ok()) {
      if (auto costs = ParseUsageCosts(r.json); costs.ok() && costs->subtotal_usd <= 0) u.last_spend = from;
    }
  }
  session_usage_[s.id] = u;
  if (u.ok) changes_.push_back({"u:" + s.id, u.evaluated, EncodeUsage(u)});
  co_return u;
}

asio::awaitable<void> FireworksProvider::RefreshUsage(bool force) {
  const Time now = clock_.Now();
  if (!force && usage_fetched_ && now - *usage_fetched_ < options_.usage_interval) co_return;
  // Cumulative over a trailing window: older usage leaves it, and the store re-bases
  // when a total goes down, so the ledger never double counts.
  const Time start = FloorToDay(now - std::chrono::hours(24 * 35));
  Call c{"GET", Path("billingUsage?startTime=" + FormatTimeSeconds(start) + "&endTime=" + FormatTimeSeconds(now))};
  c.text = true;  // read row by row (ParseBillingUsage)
  Reply r = co_await transport_->Send(std::move(c));
  if (!r.ok()) co_return;
  auto u = ParseBillingUsage(r.body);
  if (!u.ok()) co_return;
  tokens_.clear();
  tokens_.reserve(u->session_tokens.size());
  for (const auto& [session, meters] : u->session_tokens) {
    auto& counts = tokens_[session];
    counts.fill(0);
    for (const auto& [meter, n] : meters) {
      // The parser names only these meters.
      for (size_t i = 0; i < kSessionMeters.size(); ++i) {
        if (kSessionMeters[i] == meter) counts[i] = n;
      }
    }
  }
  usage_fetched_ = now;
}

ListedResource FireworksProvider::MakeSession(Session&& s, std::optional<Time> run_update,
                                              const SessionCheckpoints* cks, const SessionUsage* usage,
                                              Time now) const {
  // The listing's text moves into the resource: a session's id (35 bytes) is past
  // ShortString's 15 inline bytes, and copying it, and the name made of it when there is
  // no display name, was two allocations a session a poll.
  ListedResource r = Base(Kind::kFireworksTrainingSession, std::move(s.id));
  r.name = s.display_name.empty() ? r.id : std::move(s.display_name);
  r.owner = s.owner;
  r.base_model = s.base_model;
  r.native_status = s.state;
  r.created_at = s.created;
  const StatusMapping m = SessionLifecycle(s.state);
  r.lifecycle = m.lifecycle;
  r.transitional = m.transitional;
  if (s.state == "TRAINING_SESSION_STATE_UNSPECIFIED" && s.base_model.empty()) r.flags.insert(Flag::kLeaked);
  r.billing.meter = Meter::kTokens;
  KeepNameUnlessCanonical(r, s.name);
  if (auto t = tokens_.find(r.id.view()); t != tokens_.end()) {
    r.tokens.reserve(kSessionMeters.size());  // one block, not three as it doubles
    for (size_t i = 0; i < kSessionMeters.size(); ++i) {
      if (t->second[i] != 0) r.tokens[kSessionMeters[i]] = t->second[i];  // in order: appended
    }
  }
  // Activity: token spend (R17) is the primary signal, and it has to be fresh: whether
  // updateTime tracks work is unconfirmed, so without spend data a session is unknown,
  // never idle. updateTime, its runs' updates and checkpoint saves only add evidence.
  const bool spend_fresh = usage && usage->ok && now - usage->evaluated <= std::chrono::minutes(10);
  r.activity.known = spend_fresh;
  r.activity.window_start = spend_fresh ? OptionalTime(usage->window_start) : s.created;
  r.activity.last_active_at = s.updated;
  if (spend_fresh && usage->last_spend && (!r.activity.last_active_at || *usage->last_spend > *r.activity.last_active_at)) {
    r.activity.last_active_at = usage->last_spend;
  }
  if (!spend_fresh) r.activity.detail = "token spend unknown (usageCosts not read)";
  if (run_update && (!r.activity.last_active_at || *run_update > *r.activity.last_active_at)) {
    r.activity.last_active_at = run_update;
  }
  // "prefill=20000,sample=8000": the text earlier versions stored, hashed as they hashed
  // it. Written on the stack: grown as a std::string it took three allocations per
  // session per poll. The meters are kSessionMeters, so it always fits.
  char counters[4 * (sizeof "cached_prefill=" + 20)];
  static_assert(kSessionMeters.size() <= 4);
  size_t len = 0;
  for (const auto& [meter, n] : r.tokens) {
    const std::string_view name(meter);
    if (len + 1 + name.size() + 1 + 20 > sizeof counters) break;  // never: see above
    if (len > 0) counters[len++] = ',';
    name.copy(counters + len, name.size());
    len += name.size();
    counters[len++] = '=';
    len = static_cast<size_t>(std::to_chars(counters + len, counters + sizeof counters, n).ptr - counters);
  }
  r.activity.counters_fingerprint = CountersFingerprint(std::string_view(counters, len));
  if (cks && cks->ok && now - cks->fetched <= options_.detail_max_age) {
    Checkpoints& c = r.checkpoints.Mutable();
    c.known = true;
    c.reachable = cks->reachable;
    c.count = static_cast<int>(cks->items.size());
    for (const Checkpoint& ck : cks->items) {
      if (ck.created && (!c.newest_at || *ck.created > *c.newest_at)) c.newest_at = ck.created;
      if (!ck.promotable) continue;
      ++c.promotable;
      const std::string logical = LogicalCheckpointName(ck.server_name, true);
      const bool promoted = models_.count(PromotedModelId(r.id, logical)) > 0;
      if (!promoted) ++c.unpromoted;
      // The newest by parsed createTime, never by string order.
      if (!c.newest_promotable_at || (ck.created && *ck.created > *c.newest_promotable_at)) {
        c.newest_promotable = ck.server_name;
        c.newest_promotable_name = logical;
        c.newest_promotable_at = ck.created;
        c.newest_promotable_promoted = promoted;
      }
    }
    if (c.newest_at && (!r.activity.last_active_at || *c.newest_at > *r.activity.last_active_at)) {
      r.activity.last_active_at = c.newest_at;
    }
  }
  return r;
}

ListedResource FireworksProvider::MakeJob(Job&& j, const std::vector<Checkpoint>* cks, Time) const {
  ListedResource r = Base(Kind::kFireworksRlorJob, std::move(j.id));  // moved, as a session's
  r.name = j.display_name.empty() ? r.id : std::move(j.display_name);
  r.owner = j.owner;
  r.base_model = j.base_model;
  r.native_status = j.state;
  r.created_at = j.created;
  const StatusMapping m = JobLifecycle(j.state);
  r.lifecycle = m.lifecycle;
  r.transitional = m.transitional;
  KeepNameUnlessCanonical(r, j.name);
  r.billing.meter = Meter::kGpuTime;
  r.billing.gpu_type = NormalizeGpuType(j.accelerator_type);
  r.billing.gpus_per_replica = j.accelerator_count;
  r.billing.replicas = j.node_count;
  r.billing.billable = m.bills && j.accelerator_count > 0;
  if (auto p = options_.gpu_hour_usd.find(r.billing.gpu_type); p != options_.gpu_hour_usd.end()) {
    r.billing.price_per_gpu_hour = p->second;
  }
  if (j.disable_inactivity_cleanup) {
    r.flags.insert(Flag::kNoNativeReaper);
  } else {
    r.native_timeout = j.inactivity_timeout.value_or(std::chrono::hours(1));
  }
  if (j.state == "JOB_STATE_IDLE") r.flags.insert(Flag::kServiceIdle);
  // Activity: progress and checkpoint saves; accelerator-seconds rise while idle too.
  r.activity.known = true;
  r.activity.window_start = j.created;
  char count[24];
  const std::to_chars_result end = std::to_chars(count, count + sizeof count, cks ? cks->size() : 0);
  r.activity.counters_fingerprint =
      CountersFingerprintJoined({j.progress, "|", std::string_view(count, static_cast<size_t>(end.ptr - count))});
  if (cks) {
    Checkpoints& k = r.checkpoints.Mutable();
    for (const Checkpoint& c : *cks) {
      if (c.created && (!r.activity.last_active_at || *c.created > *r.activity.last_active_at)) {
        r.activity.last_active_at = c.created;
      }
      ++k.count;
      if (c.promotable) ++k.promotable;
    }
    k.known = true;
  }
  return r;
}

ListedResource FireworksProvider::MakeDeployment(Deployment&& d, const DeploymentMetrics* m, bool trainer_gone,
                                                 Time now) const {
  ListedResource r = Base(Kind::kFireworksDeployment, std::move(d.id));  // moved, as a session's
  r.name = d.display_name.empty() ? r.id : std::move(d.display_name);
  r.base_model = d.base_model;
  r.native_status = d.state;
  r.created_at = d.created;
  const StatusMapping sm = DeploymentLifecycle(d.state, d.billed_replicas);
  r.lifecycle = sm.lifecycle;
  r.transitional = sm.transitional;
  r.refs.reserve(2);  // the two below, kept with the stored resource
  KeepNameUnlessCanonical(r, d.name);
  r.refs["min_replica_count"] = std::to_string(d.min_replicas);
  r.refs["max_replica_count"] = std::to_string(d.max_replicas);
  r.billing.meter = Meter::kGpuTime;
  r.billing.gpu_type = NormalizeGpuType(d.accelerator_type);
  r.billing.gpus_per_replica = d.accelerator_count;
  r.billing.replicas = d.billed_replicas;
  r.billing.billable = sm.bills && d.accelerator_count > 0;
  if (auto p = options_.gpu_hour_usd.find(r.billing.gpu_type); p != options_.gpu_hour_usd.end()) {
    r.billing.price_per_gpu_hour = p->second;
  }
  if (d.managed_rollout) r.flags.insert(Flag::kRollout);
  r.labels.assign(d.annotations);
  if (!d.hot_load_trainer_job.empty()) {
    r.parent_id = std::move(d.hot_load_trainer_job);
    if (trainer_gone) r.flags.insert(Flag::kOrphaned);
  }
  if (d.min_replicas > 0) r.flags.insert(Flag::kNeverScalesToZero);
  // Traffic from the account scrape (R12b) and the per-deployment route (R12): the
  // highest fresh rate wins. Neither serves history, so quiet time counts from when
  // loopwarden first looked (the store treats it as a lower bound).
  std::optional<double> rps;
  std::optional<Time> seen;
  auto consider = [&](double v, Time at) {
    if (now - at > options_.detail_max_age) return;
    rps = std::max(rps.value_or(0.0), v);
    seen = seen ? std::max(*seen, at) : at;
  };
  if (m && m->ok) consider(m->rps, m->fetched);
  if (scrape_.ok) {
    if (auto it = scrape_.rps.find(r.id.view()); it != scrape_.rps.end()) consider(it->second, scrape_.fetched);
  }
  if (rps && d.billed_replicas > 0) {
    r.activity.known = true;
    r.activity.traffic_known = true;
    r.activity.busy_now = *rps > 0;
    // The rates cover the last minute.
    r.activity.window_start = *seen - std::chrono::minutes(1);
    if (*rps > 0) {
      r.activity.last_active_at = seen;
      r.activity.last_traffic_at = seen;
    }
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.2f requests/s", *rps);
    r.activity.detail = buf;
  }
  return r;
}

asio::awaitable<Inventory> FireworksProvider::List(ResourceSink sink) {
  Inventory inv;
  inv.sink = std::move(sink);
  if (Status s = co_await DiscoverAccount(); !s.ok()) {
    ProviderError e;
    e.cls = ErrorClass::kUnknown;
    e.message = s.message();
    inv.complete = false;
    inv.failures.push_back({"GET /v1/accounts", e});
    co_return inv;
  }
  std::vector<Session> sessions;
  std::vector<TrainingRun> runs;
  std::vector<Job> jobs;
  std::vector<Deployment> deployments;
  std::vector<Model> models;
  bool sessions_ok = false, runs_ok = false, jobs_ok = false, deps_ok = false, models_ok = false;
  // (Tasks are pushed one by one: GCC 12 miscompiles initializer lists in coroutines.)
  std::vector<net::Task> listings;
  listings.push_back([&]() -> asio::awaitable<void> {
    sessions_ok = co_await ListAll(Path("trainingSessions"), ParseSessions, sessions, inv);
  });
  listings.push_back([&]() -> asio::awaitable<void> { runs_ok = co_await ListAll(Path("trainingRuns"), ParseTrainingRuns, runs, inv); });
  listings.push_back([&]() -> asio::awaitable<void> { jobs_ok = co_await ListAll(Path("rlorTrainerJobs"), ParseJobs, jobs, inv); });
  listings.push_back([&]() -> asio::awaitable<void> {
    deps_ok = co_await ListAll(Path("deployments"), ParseDeployments, deployments, inv);
  });
  listings.push_back([&]() -> asio::awaitable<void> { models_ok = co_await ListAll(Path("models"), ParseModels, models, inv); });
  listings.push_back([&]() -> asio::awaitable<void> { co_await RefreshUsage(false); });
  listings.push_back([&]() -> asio::awaitable<void> { co_await ScrapeAccountMetrics(); });
  co_await net::RunAll(std::move(listings), 7);
  if (models_ok) {
    models_.clear();
    for (const Model& m : models) models_.insert(m.id);
  }
  // Views into the listings, which outlive them; hashed, as every listed resource is
  // looked up in them.
  HashMap<std::string_view, Time> run_updates;  // session -> newest run updateTime
  for (const TrainingRun& r : runs) {
    if (r.updated) {
      auto& u = run_updates[r.session_id];
      u = std::max(u, *r.updated);
    }
  }
  const Time now = clock_.Now();
  DetailBudget budget{options_.max_detail_calls};
  std::vector<net::Task> tasks;
  for (const Session& s : sessions) {
    if (s.state != "READY" && s.state != "TRAINING_SESSION_STATE_UNSPECIFIED") continue;
    // Token spend every poll: it is what tells a busy session from an idle one.
    if (budget.Take()) tasks.push_back([this, s]() -> asio::awaitable<void> { co_await FetchSessionUsage(s); });
    auto c = session_checkpoints_.find(s.id.view());
    // Re-read when the session changed, or the last read is old.
    const bool stale = c == session_checkpoints_.end() || !c->second.ok || c->second.for_update != s.updated ||
                       now - c->second.fetched >= options_.detail_max_age / 2;
    if (stale && budget.Take()) {
      tasks.push_back([this, id = s.id, u = s.updated]() -> asio::awaitable<void> {
        co_await FetchSessionCheckpoints(id, u);
      });
    }
  }
  for (const Job& j : jobs) {
    if (JobLifecycle(j.state).lifecycle != Lifecycle::kRunning) continue;
    auto c = job_checkpoints_.find(j.id.view());
    if ((c == job_checkpoints_.end() || now - c->second.fetched >= std::chrono::seconds(30)) && budget.Take()) {
      tasks.push_back([this, id = j.id]() -> asio::awaitable<void> {
        bool ok = false;
        co_await FetchJobCheckpoints(id, ok);
      });
    }
  }
  for (const Deployment& d : deployments) {
    if (d.billed_replicas <= 0) continue;
    // The account scrape (R12b) already covers it: no per-deployment call (R12).
    if (scrape_.ok && scrape_.rps.count(d.id.view())) continue;
    auto c = deployment_metrics_.find(d.id.view());
    if ((c == deployment_metrics_.end() || now - c->second.fetched >= std::chrono::seconds(30)) && budget.Take()) {
      tasks.push_back([this, id = d.id]() -> asio::awaitable<void> { co_await FetchDeploymentMetrics(id); });
    }
  }
  co_await net::RunAll(std::move(tasks), static_cast<size_t>(options_.max_concurrency));
  const Time after = clock_.Now();
  // Whether each deployment's trainer is gone, worked out while the jobs' ids are still
  // theirs: building the resources below moves each listed object's text into its
  // resource, and an id of 15 bytes or fewer is inline, so a view of it would not follow.
  std::vector<char> trainer_gone(deployments.size(), 0);
  {
    HashMap<std::string_view, std::string_view> job_state;
    job_state.reserve(jobs.size());
    for (const Job& j : jobs) job_state[j.id] = j.state;
    for (size_t i = 0; i < deployments.size(); ++i) {
      const Deployment& d = deployments[i];
      if (d.hot_load_trainer_job.empty() || !jobs_ok) continue;
      auto js = job_state.find(d.hot_load_trainer_job);
      trainer_gone[i] = js == job_state.end() || TerminalJob(js->second);
    }
  }
  // Sized once when kept (see the Baseten adapter). From here to the return no request
  // is made (ResourceSink).
  inv.Reserve(sessions.size() + jobs.size() + deployments.size());
  const uint64_t poll = ++poll_;
  StampCount session_checkpoints_stamped{poll}, usage_stamped{poll}, job_checkpoints_stamped{poll},
      metrics_stamped{poll};
  for (Session& s : sessions) {
    auto ru = run_updates.find(s.id);
    const std::optional<Time> run_update = ru == run_updates.end() ? std::nullopt : std::optional<Time>(ru->second);
    const SessionCheckpoints* c = FindStamped(session_checkpoints_, s.id, session_checkpoints_stamped);
    const SessionUsage* u = FindStamped(session_usage_, s.id, usage_stamped);
    inv.Add(MakeSession(std::move(s), run_update, c, u, after));
  }
  for (Job& j : jobs) {
    const JobCheckpoints* c = FindStamped(job_checkpoints_, j.id, job_checkpoints_stamped);
    inv.Add(MakeJob(std::move(j), c == nullptr ? nullptr : &c->items, after));
  }
  for (size_t i = 0; i < deployments.size(); ++i) {
    Deployment& d = deployments[i];
    const DeploymentMetrics* m = FindStamped(deployment_metrics_, d.id, metrics_stamped);
    inv.Add(MakeDeployment(std::move(d), m, trainer_gone[i] != 0, after));
  }
  // Forget the details of resources gone, when their listing was whole. (Only the spend
  // windows are kept in the database, so only their going is recorded.)
  if (sessions_ok) {
    ForgetUnstamped(session_usage_, usage_stamped, [&](const std::string& id) {
      changes_.push_back({"u:" + id, after, ""});
    });
    ForgetUnstamped(session_checkpoints_, session_checkpoints_stamped);
  }
  if (jobs_ok) ForgetUnstamped(job_checkpoints_, job_checkpoints_stamped);
  if (deps_ok) ForgetUnstamped(deployment_metrics_, metrics_stamped);
  (void)runs_ok;
  inv.requests = static_cast<int>(transport_->stats().requests);
  co_return inv;
}

asio::awaitable<Result<RefreshResult>> FireworksProvider::Refresh(const Resource& old) {
  RefreshResult out;
  auto gone = [](const Reply& r) { return r.error.cls == ErrorClass::kNotFound; };
  const Time now = clock_.Now();
  switch (old.kind) {
    case Kind::kFireworksTrainingSession: {
      auto [r, s] = co_await GetRead<Session>(*transport_, Path("trainingSessions/" + old.id), ParseSession);
      if (gone(r)) {
        out.gone = true;
        co_return out;
      }
      if (!r.ok()) co_return Unavailable("refreshing session " + old.id + ": " + r.error.ToString());
      // Promotion status needs the account's models, fresh.
      Inventory scratch;
      std::vector<Model> models;
      if (co_await ListAll(Path("models"), ParseModels, models, scratch)) {
        models_.clear();
        for (const Model& m : models) models_.insert(m.id);
      }
      SessionCheckpoints c = co_await FetchSessionCheckpoints(s->id, s->updated);
      SessionUsage u = co_await FetchSessionUsage(*s);
      out.resource = MakeSession(std::move(*s), std::nullopt, &c, &u, clock_.Now());
      co_return out;
    }
    case Kind::kFireworksRlorJob: {
      auto [r, j] = co_await GetRead<Job>(*transport_, Path("rlorTrainerJobs/" + old.id), ParseJob);
      if (gone(r)) {
        out.gone = true;
        co_return out;
      }
      if (!r.ok()) co_return Unavailable("refreshing job " + old.id + ": " + r.error.ToString());
      bool ok = false;
      std::vector<Checkpoint> cks = co_await FetchJobCheckpoints(j->id, ok);
      out.resource = MakeJob(std::move(*j), ok ? &cks : nullptr, now);
      co_return out;
    }
    case Kind::kFireworksDeployment: {
      auto [r, d] = co_await GetRead<Deployment>(*transport_, Path("deployments/" + old.id), ParseDeployment);
      if (gone(r)) {
        out.gone = true;
        co_return out;
      }
      if (!r.ok()) co_return Unavailable("refreshing deployment " + old.id + ": " + r.error.ToString());
      bool trainer_gone = false;
      if (!d->hot_load_trainer_job.empty()) {
        auto [jr, j] = co_await GetRead<Job>(*transport_, Path("rlorTrainerJobs/" + d->hot_load_trainer_job), ParseJob);
        if (gone(jr)) {
          trainer_gone = true;
        } else if (jr.ok()) {
          trainer_gone = TerminalJob(j->state);
        }
      }
      DeploymentMetrics m;
      if (d->billed_replicas > 0) {
        co_await ScrapeAccountMetrics();
        const bool scraped = scrape_.ok && scrape_.rps.count(d->id.view()) > 0;
        if (!scraped || clock_.Now() - scrape_.fetched > std::chrono::minutes(1)) {
          m = co_await FetchDeploymentMetrics(d->id);
        }
      }
      out.resource = MakeDeployment(std::move(*d), &m, trainer_gone, clock_.Now());
      co_return out;
    }
    default: co_return InvalidArgument("not a Fireworks resource: " + old.Key());
  }
}

asio::awaitable<ActionOutcome> FireworksProvider::Act(const Resource& r, ActionType action) {
  switch (r.kind) {
    case Kind::kFireworksTrainingSession:
      if (action == ActionType::kDelete || action == ActionType::kPromoteThenDelete) {
        co_return co_await transport_->Mutate("DELETE", Path("trainingSessions/" + r.id), "");
      }
      break;
    case Kind::kFireworksRlorJob:
      if (action == ActionType::kCancel) {
        ActionOutcome o = co_await transport_->Mutate("POST", Path("rlorTrainerJobs/" + r.id + ":cancel"), "{}");
        if (o.error.cls == ErrorClass::kConflict && o.error.detail == "precondition") {
          // Already terminal? Then the end state holds.
          auto [jr, j] = co_await GetRead<Job>(*transport_, Path("rlorTrainerJobs/" + r.id), ParseJob);
          if (jr.ok()) {
            if (TerminalJob(j->state)) {
              o.outcome = Outcome::kAlreadyDone;
              o.detail = "already " + j->state;
            }
          }
        }
        co_return o;
      }
      if (action == ActionType::kDelete) co_return co_await transport_->Mutate("DELETE", Path("rlorTrainerJobs/" + r.id), "");
      break;
    case Kind::kFireworksDeployment: {
      const std::string base = Path("deployments/" + r.id);
      ActionOutcome o;
      if (action == ActionType::kDeactivate || action == ActionType::kScaleToZero) {
        // A7: max as well as min to 0 stops billing now; min=0 alone (A8) bills on
        // until the scale-to-zero window (1 h by default) passes. updateMask always:
        // without it the server may reset every mutable field. The prior min and max
        // are recorded below, for undo.
        o = co_await transport_->Mutate("PATCH", base + "?updateMask=min_replica_count,max_replica_count",
                            "{\"minReplicaCount\":0,\"maxReplicaCount\":0}");
      } else if (action == ActionType::kDelete) {
        o = co_await transport_->Mutate("DELETE", base, "");
      } else {
        break;
      }
      for (const char* k : {"min_replica_count", "max_replica_count"}) {
        if (auto it = r.refs.find(k); it != r.refs.end()) o.restore[k] = it->second;
      }
      co_return o;
    }
    default: break;
  }
  ActionOutcome o;
  o.outcome = Outcome::kRefused;
  o.detail = std::string(ActionName(action)) + " is not available for " + std::string(KindName(r.kind));
  co_return o;
}

asio::awaitable<ActionOutcome> FireworksProvider::PromoteCheckpoint(const Resource& session, const std::string& checkpoint,
                                                                    const std::string& output_model_id) {
  const std::string model = "accounts/" + options_.account + "/models/" + output_model_id;
  const std::string body = bj::serialize(bj::object{{"outputModel", model}, {"baseModel", session.base_model}});
  // Not idempotent: sent once; a timeout is settled by reading the models, never by resending.
  ActionOutcome o = co_await transport_->Mutate("POST", Path("trainingSessions/" + session.id + "/checkpoints/" + checkpoint + ":promote"),
                                    body);
  if (o.outcome == Outcome::kDone) co_return o;
  if ((o.error.cls == ErrorClass::kConflict && o.error.detail == "exists") || o.outcome == Outcome::kUnknown) {
    Reply m = co_await transport_->Send({"GET", Path("models/" + output_model_id)});
    if (m.ok()) {
      o.outcome = o.outcome == Outcome::kUnknown ? Outcome::kDone : Outcome::kAlreadyDone;
      o.detail = "model " + output_model_id + " exists";
    } else if (o.outcome == Outcome::kUnknown && m.error.cls == ErrorClass::kNotFound) {
      o.outcome = Outcome::kFailed;  // the promote did not happen: safe to try again later
    }
  } else if (o.outcome == Outcome::kAlreadyDone) {
    // A 404 here means the session (or its trainer) is gone: nothing was promoted.
    o.outcome = Outcome::kRefused;
    o.detail = "checkpoints are no longer reachable (session deleted or trainer drained)";
  }
  co_return o;
}

asio::awaitable<Result<UsageReport>> FireworksProvider::Usage(Time start, Time end) {
  UsageReport out;
  // The rows' meter names, pooled once a call: a row copies a handle.
  const Interned gpu_seconds("gpu_seconds");
  std::array<Interned, kSessionMeters.size()> token_meters;
  for (size_t i = 0; i < kSessionMeters.size(); ++i) token_meters[i] = "tokens." + std::string(kSessionMeters[i]);
  auto token_meter = [&](std::string_view m) {
    for (size_t i = 0; i < kSessionMeters.size(); ++i) {
      if (kSessionMeters[i] == m) return token_meters[i];
    }
    return Interned("tokens." + std::string(m));  // the parser names only those four
  };
  // R15 totals whatever window it is given: one request per day keeps the days apart.
  for (Time day = start; day < end; day += std::chrono::hours(24)) {
    Call c{"GET", Path("billingUsage?startTime=" + FormatTimeSeconds(day) + "&endTime=" +
                       FormatTimeSeconds(day + std::chrono::hours(24)))};
    c.text = true;
    Reply r = co_await transport_->Send(std::move(c));
    if (!r.ok()) co_return Unavailable("billingUsage: " + r.error.ToString());
    auto u = ParseBillingUsage(r.body);
    if (!u.ok()) co_return Unavailable("billingUsage: " + u.status().message());
    for (const auto& [s, meters] : u->session_tokens) {
      for (const auto& [m, n] : meters) out.rows.push_back({s, day, token_meter(m), n, std::nullopt});
    }
    for (const auto& [j, n] : u->job_accelerator_seconds) out.rows.push_back({j, day, gpu_seconds, n, std::nullopt});
    for (const auto& [d, n] : u->deployment_accelerator_seconds) {
      out.rows.push_back({d, day, gpu_seconds, n, std::nullopt});
    }
  }
  co_return out;
}

}  // namespace loopwarden::providers::fireworks
