#include "providers/baseten/adapter.h"

#include <boost/json/serialize.hpp>
#include <optional>
#include <string_view>
#include <utility>

#include "core/flat_hash.h"
#include "core/hash.h"
#include "core/json.h"
#include "net/parallel.h"
#include "providers/detail_budget.h"
#include "providers/read_reply.h"
#include "providers/stamped_cache.h"

namespace loopwarden::providers::baseten {

namespace bj = boost::json;
namespace asio = boost::asio;

namespace {

std::string Failure(const Reply& r) { return r.error.ToString(); }

}  // namespace

BasetenProvider::BasetenProvider(Clock& clock, ProviderOptions options, std::unique_ptr<Transport> transport)
    : clock_(clock), options_(std::move(options)), name_text_(options_.name), transport_(std::move(transport)) {}

std::optional<Money> BasetenProvider::GpuHourPrice(const std::string& id, int gpu_count) const {
  auto it = prices_.find(id);
  if (it == prices_.end()) return std::nullopt;
  const int gpus = gpu_count > 0 ? gpu_count : std::max(1, it->second.first.gpu_count);
  // USD per minute for the whole instance -> per GPU-hour.
  return Money::FromDouble(it->second.second * 60.0 / gpus);
}

asio::awaitable<void> BasetenProvider::RefreshPrices(bool force) {
  const Time now = clock_.Now();
  if (!force && prices_fetched_ && now - *prices_fetched_ < options_.usage_interval && !prices_.empty()) co_return;
  using Prices = std::map<std::string, std::pair<InstanceType, double>>;
  auto [r, p] = co_await GetRead<Prices>(*transport_, "/v1/instance_type_prices", ParsePrices);
  if (!r.ok()) co_return;  // keep the last list; config prices fill in
  prices_ = std::move(*p);
  prices_fetched_ = now;
}

Time BasetenProvider::WindowStart(const std::string& key, Duration first_sight, Time now) const {
  const Time earliest = now - first_sight;
  auto it = metrics_cache_.find(key);
  // The overlap covers points that land a little late.
  if (it != metrics_cache_.end() && it->second.ok && it->second.fetched > earliest) {
    return it->second.fetched - std::chrono::minutes(2);
  }
  return earliest;
}

asio::awaitable<BasetenProvider::Metrics> BasetenProvider::FetchTrainerMetrics(const std::string& dep) {
  const Time now = clock_.Now();
  const Duration first_sight = std::max(FirstSightWindow(options_, Kind::kBasetenRun),
                                        FirstSightWindow(options_, Kind::kBasetenLoopsDeployment));
  const Time start = WindowStart(dep, first_sight, now);
  const int64_t end_ms = ToUnixMillis(now);
  const int64_t start_ms = ToUnixMillis(start);
  // Whole minutes, at most ~1,400 points however far back a first read reaches.
  const int64_t step = std::max<int64_t>(60, ((end_ms - start_ms) / 1000 / 1400 + 59) / 60 * 60);
  Call c{"POST", "/v1/loops/deployments/" + dep + "/metrics",
         bj::serialize(bj::object{{"start_epoch_millis", start_ms}, {"end_epoch_millis", end_ms}, {"step_seconds", step}})};
  Reply r = co_await transport_->Send(std::move(c));
  Metrics m{now, r.ok(), {}, now - start};
  // Points must reach within a few steps of now: a trailing gap is missing data.
  const Duration fresh = std::max<Duration>(std::chrono::minutes(3), std::chrono::seconds(2 * step));
  if (r.ok()) m.summary = SummarizeTrainerMetrics(r.json, options_.gpu_idle_threshold, now, fresh);
  metrics_cache_[dep] = m;
  if (m.ok) changes_.push_back({"m:" + dep, m.fetched, EncodeMetrics(m)});
  co_return m;
}

asio::awaitable<BasetenProvider::Metrics> BasetenProvider::FetchTrafficMetrics(const std::string& key, Kind kind,
                                                                               const std::string& model,
                                                                               const std::string& dep) {
  const Time now = clock_.Now();
  const Time start = WindowStart(key, FirstSightWindow(options_, kind), now);
  // R18 as documented: SUMMARY over an explicit window (the default mode, CURRENT,
  // refuses a window), only the request counter.
  const std::string query = "/v1/models/" + model + "/deployments/" + dep +
                            "/metrics?metrics=baseten_inference_requests_total&start_epoch_millis=" +
                            std::to_string(ToUnixMillis(start)) + "&end_epoch_millis=" + std::to_string(ToUnixMillis(now));
  Reply r = co_await transport_->Send({"GET", query + "&mode=SUMMARY"});
  Metrics m{now, false, {}, now - start};
  if (r.ok()) {
    if (auto counts = ParseRequestCounts(r.json); counts.ok()) {
      m.ok = true;
      m.summary = SummarizeRequestCounts(*counts);
      // Requests somewhere in a long window: SERIES says when they stopped. Without it
      // they count as now, which only ever delays an action.
      if (m.summary.present && m.summary.total_volume > 0 && now - start > std::chrono::minutes(15)) {
        Reply series = co_await transport_->Send({"GET", query + "&mode=SERIES"});
        if (series.ok()) {
          if (auto sc = ParseRequestCounts(series.json); sc.ok()) {
            ActivitySummary s = SummarizeRequestCounts(*sc);
            if (s.present && s.last_busy) {
              s.total_volume = m.summary.total_volume;
              m.summary = s;
            }
          }
        }
      }
    }
  }
  metrics_cache_[key] = m;
  if (m.ok) changes_.push_back({"m:" + key, m.fetched, EncodeMetrics(m)});
  co_return m;
}

asio::awaitable<BasetenProvider::Checkpoints> BasetenProvider::FetchCheckpoints(const std::string& run) {
  const Time now = clock_.Now();
  auto [r, p] =
      co_await GetRead<Parsed<Checkpoint>>(*transport_, "/v1/loops/checkpoints?run_id=" + run, ParseCheckpoints);
  Checkpoints c{now, false, {}};
  if (r.ok()) {
    c.ok = true;
    c.items = std::move(p->items);
    // Copies of one id that disagree only in keys the trim drops would merge into
    // one: such a listing is kept whole.
    changes_.push_back({"c:" + run, now, p->dropped > 0 ? std::move(r.body) : TrimCheckpointsBody(r.body)});
  }
  checkpoint_cache_[run] = c;
  co_return c;
}

ListedResource BasetenProvider::Base(Kind kind, std::string_view id) const {
  ListedResource r;
  r.provider_type = ProviderType::kBaseten;
  r.provider = name_text_;
  r.account = name_text_;
  r.kind = kind;
  r.id = id;
  return r;
}

void BasetenProvider::ApplyGpuBilling(Resource& r, const std::optional<InstanceType>& it, int nodes, bool bills) const {
  r.billing.meter = Meter::kGpuTime;
  if (it) {
    r.billing.gpu_type = it->gpu_type;
    r.billing.gpus_per_replica = it->gpu_count;
    r.billing.price_per_gpu_hour = GpuHourPrice(it->id, it->gpu_count);
  }
  // node_count is the total node count (replicas included), as Baseten's CLI reads it.
  r.billing.replicas = nodes;
  r.billing.billable = bills && r.billing.gpus_per_replica > 0;
}

void BasetenProvider::ApplyMetrics(ListedResource& r, const Metrics* m, bool traffic, Time now) const {
  if (!m || !m->ok || !m->summary.present) return;  // missing: unknown, never idle
  if (now - m->fetched > options_.detail_max_age) return;
  const ActivitySummary& s = m->summary;
  r.activity.known = true;
  r.activity.window_start = s.first_point;
  if (s.last_busy) r.activity.last_active_at = s.last_busy;
  r.activity.busy_now = s.busy_latest && now - m->fetched < std::chrono::minutes(2);
  if (traffic) {
    r.activity.traffic_known = true;
    r.activity.last_traffic_at = s.last_busy;
  }
  const std::string window = FormatDuration(std::chrono::floor<std::chrono::seconds>(m->window));
  // Written once, in place: built with operator+ it was three heap blocks a resource.
  char buf[96];
  if (traffic) {
    std::snprintf(buf, sizeof buf, "requests %lld over %s", static_cast<long long>(s.total_volume), window.c_str());
  } else {
    std::snprintf(buf, sizeof buf, "gpu max %.0f%%, volume %.0f over %s", s.max_gpu * 100, s.total_volume,
                  window.c_str());
  }
  r.activity.detail = buf;
}

ListedResource BasetenProvider::MakeRun(const Run& run, const LoopsDeployment* dep, bool deployments_known,
                                  const Metrics* metrics, const Checkpoints* cks, Time now) const {
  ListedResource r = Base(Kind::kBasetenRun, run.id);
  r.name = run.name.empty() ? run.id : run.name;
  r.owner = run.owner;
  r.base_model = run.base_model;
  r.native_status = run.status;
  r.created_at = run.created_at;
  StatusMapping m = RunLifecycle(run.status);
  r.lifecycle = m.lifecycle;
  r.transitional = m.transitional;
  if (run.sampler) r.refs["sampler_id"] = run.sampler->id;
  if (dep) {
    r.mode = Mode::kDedicated;
    r.parent_id = dep->id;
    r.refs["deployment_id"] = dep->id;
    r.availability = dep->availability;
    r.native_timeout = options_.scale_down_delay;
    const StatusMapping dm = LoopsDeploymentLifecycle(dep->status);
    if (r.lifecycle == Lifecycle::kRunning && dm.lifecycle == Lifecycle::kStarting) {
      r.lifecycle = Lifecycle::kStarting;
      r.transitional = true;
    }
    r.native_status = run.status + "/" + dep->status;
    ApplyGpuBilling(r, dep->instance_type, dep->node_count, m.bills && dm.bills);
    if (dep->availability == "spot") r.flags.insert(Flag::kSpot);
    ApplyMetrics(r, metrics, false, now);
  } else if (!run.deployment_id.empty() && !deployments_known) {
    // Its deployment could not be resolved (that listing failed): billing mode unknown.
    r.lifecycle = Lifecycle::kUnknown;
  } else {
    // No deployment, or one that does not resolve in a complete listing: serverless.
    r.mode = Mode::kServerless;
    r.billing.meter = Meter::kTokens;
  }
  if (cks && cks->ok && now - cks->fetched <= options_.detail_max_age) {
    loopwarden::Checkpoints& k = r.checkpoints.Mutable();  // not the detail cache's Checkpoints
    k.known = true;
    k.count = static_cast<int>(cks->items.size());
    for (const Checkpoint& c : cks->items) {
      if (c.syncing) k.syncing = true;
      if (c.created_at && (!k.newest_at || *c.created_at > *k.newest_at)) k.newest_at = c.created_at;
    }
    // A save in flight is transitional: never act on it.
    if (k.syncing) r.transitional = true;
    if (r.mode == Mode::kServerless) {
      // Serverless runs have no metrics: checkpoint saves are their activity.
      r.activity.known = true;
      r.activity.window_start = run.created_at;
      r.activity.last_active_at = k.newest_at ? k.newest_at : OptionalTime(run.created_at);
      r.activity.counters_fingerprint = CountersFingerprint("checkpoints=" + std::to_string(k.count));
    } else if (r.activity.known && k.newest_at &&
               (!r.activity.last_active_at || *k.newest_at > *r.activity.last_active_at)) {
      r.activity.last_active_at = k.newest_at;
    }
  }
  // A forgotten client's keepalive holds a dedicated run past the provider's timeout.
  if (r.mode == Mode::kDedicated && r.lifecycle == Lifecycle::kRunning && r.activity.known) {
    const Time last = r.activity.last_active_at.value_or(r.activity.window_start.value_or(now));
    if (now - last > options_.scale_down_delay && !r.activity.busy_now) r.flags.insert(Flag::kKeptAliveIdle);
  }
  return r;
}

ListedResource BasetenProvider::MakeSampler(const Sampler& s, std::string_view paired_run, const Metrics* metrics,
                                      Time now) const {
  ListedResource r = Base(Kind::kBasetenSampler, s.id);
  r.name = ShortString::Concat("sampler ", s.id);
  r.owner = s.owner;
  r.base_model = s.base_model;
  r.native_status = s.status;
  r.created_at = s.created_at;
  const StatusMapping m = DeploymentStatusLifecycle(s.status);
  r.lifecycle = m.lifecycle;
  r.transitional = m.transitional;
  r.refs["model_id"] = s.model_id;
  r.refs["deployment_id"] = s.deployment_id;
  if (!paired_run.empty()) {
    r.flags.insert(Flag::kPaired);
    r.parent_id = paired_run;
  } else {
    r.flags.insert(Flag::kStandalone);
  }
  if (s.status == "UNHEALTHY") r.flags.insert(Flag::kUnhealthy);
  ApplyGpuBilling(r, s.instance_type, s.node_count, m.bills);
  ApplyMetrics(r, metrics, true, now);
  return r;
}

ListedResource BasetenProvider::MakeLoopsDeployment(const LoopsDeployment& d, bool owned, const Metrics* metrics,
                                              Time now) const {
  ListedResource r = Base(Kind::kBasetenLoopsDeployment, d.id);
  r.name = ShortString::Concat("loops deployment ", d.id);
  r.owner = d.owner;
  r.base_model = d.base_model;
  r.native_status = d.status;
  r.created_at = d.created_at;
  r.availability = d.availability;
  const StatusMapping m = LoopsDeploymentLifecycle(d.status);
  r.lifecycle = m.lifecycle;
  r.transitional = m.transitional;
  r.parent_id = d.active_run_id.empty() ? d.latest_run_id : d.active_run_id;
  // The run it serves bills these GPUs; without an active run it is a leftover.
  ApplyGpuBilling(r, d.instance_type, d.node_count, m.bills && !owned);
  if (!owned && m.bills) r.flags.insert(Flag::kOrphaned);
  ApplyMetrics(r, metrics, false, now);
  r.native_timeout = options_.scale_down_delay;
  return r;
}

ListedResource BasetenProvider::MakeDeployment(const Deployment& d, const Model* model, const Metrics* metrics,
                                         Time now) const {
  ListedResource r = Base(Kind::kBasetenDeployment, d.id);
  if (model && !model->name.empty()) {
    r.name = ShortString::Concat(model->name, "/", d.name);
  } else {
    r.name = d.name;
  }
  r.team = model ? model->team : "";
  r.base_model = model ? model->name : "";
  r.native_status = d.status;
  r.created_at = d.created_at;
  r.labels.assign(d.labels);
  if (d.is_production) r.labels["environment"] = "production";
  const StatusMapping m = DeploymentStatusLifecycle(d.status);
  r.lifecycle = m.lifecycle;
  r.transitional = m.transitional;
  r.refs.reserve(3);  // model_id and, nearly always, min_replica and max_replica
  r.refs["model_id"] = d.model_id;
  if (d.min_replica) r.refs["min_replica"] = std::to_string(*d.min_replica);
  if (d.max_replica) r.refs["max_replica"] = std::to_string(*d.max_replica);
  r.billing.meter = Meter::kGpuTime;
  auto it = prices_.find(d.instance_type_name);
  if (it != prices_.end()) {
    r.billing.gpu_type = it->second.first.gpu_type;
    r.billing.gpus_per_replica = it->second.first.gpu_count;
    r.billing.price_per_gpu_hour = GpuHourPrice(d.instance_type_name, it->second.first.gpu_count);
  }
  r.billing.replicas = d.active_replica_count;
  r.billing.billable = d.active_replica_count > 0 && r.billing.gpus_per_replica > 0;
  if (d.active_replica_count > 0) ApplyMetrics(r, metrics, true, now);
  r.native_timeout.reset();
  return r;
}

asio::awaitable<Inventory> BasetenProvider::List(ResourceSink sink) {
  Inventory inv;
  inv.sink = std::move(sink);
  co_await RefreshPrices(false);
  const Time now = clock_.Now();
  const uint64_t poll = ++poll_;
  // Each listing is parsed as soon as it arrives and its reply dropped: an org's whole
  // list comes in one response (R2-R5, unpaged), so holding four replies' bodies and
  // documents until the last arrives was most of a poll's transient memory.
  auto fail = [&](const char* what, const ProviderError& e) {
    inv.complete = false;
    inv.failures.push_back({what, e});
  };
  auto parsed = [&](const char* what, auto& got) {
    if (!got.reply.ok()) {
      fail(what, got.reply.error);
      return decltype(got.read)(InvalidArgument(Failure(got.reply)));
    }
    if (got.read->dropped > 0) {
      ProviderError e;
      e.cls = ErrorClass::kUnknown;
      e.detail = "malformed";
      e.message = std::to_string(got.read->dropped) +
                  " objects unusable (no id, an id too long, or copies of one id that disagree)";
      fail(what, e);
    }
    return std::move(got.read);
  };
  using Runs = Result<Parsed<Run>>;
  using Samplers = Result<Parsed<Sampler>>;
  using Deps = Result<Parsed<LoopsDeployment>>;
  using Models = Result<Parsed<Model>>;
  std::optional<Runs> runs_p;
  std::optional<Samplers> samplers_p;
  std::optional<Deps> deps_p;
  std::optional<Models> models_p;
  // (Tasks are pushed one by one: GCC 12 miscompiles initializer lists in coroutines.)
  std::vector<net::Task> listings;
  listings.push_back([&]() -> asio::awaitable<void> {
    auto got = co_await GetRead<Parsed<Run>>(*transport_, "/v1/loops/runs?scope=org", ParseRuns);
    runs_p.emplace(parsed("GET /v1/loops/runs", got));
  });
  listings.push_back([&]() -> asio::awaitable<void> {
    auto got = co_await GetRead<Parsed<Sampler>>(*transport_, "/v1/loops/samplers?scope=org", ParseSamplers);
    samplers_p.emplace(parsed("GET /v1/loops/samplers", got));
  });
  listings.push_back([&]() -> asio::awaitable<void> {
    auto got = co_await GetRead<Parsed<LoopsDeployment>>(*transport_, "/v1/loops/deployments?scope=org",
                                                         ParseLoopsDeployments);
    deps_p.emplace(parsed("GET /v1/loops/deployments", got));
  });
  listings.push_back([&]() -> asio::awaitable<void> {
    auto got = co_await GetRead<Parsed<Model>>(*transport_, "/v1/models", ParseModels);
    models_p.emplace(parsed("GET /v1/models", got));
  });
  co_await net::RunAll(std::move(listings), 4);
  // A listing whose task never finished (it threw, against RunAll's contract) is a
  // failed listing: the poll is incomplete, and nothing reads an empty result.
  auto finished = [&](auto& p, const char* what) {
    using R = typename std::remove_reference_t<decltype(p)>::value_type;
    if (p) return R(std::move(*p));
    ProviderError e;
    e.cls = ErrorClass::kUnknown;
    e.message = "the listing did not finish";
    fail(what, e);
    return R(Internal(e.message));
  };
  Runs runs = finished(runs_p, "GET /v1/loops/runs");
  Samplers samplers = finished(samplers_p, "GET /v1/loops/samplers");
  Deps deps = finished(deps_p, "GET /v1/loops/deployments");
  Models models = finished(models_p, "GET /v1/models");

  // Views into the listings above, which outlive them; hashed, as every listed resource
  // is looked up in them (the ordered trees of 100k strings these were cost a string
  // compare per level).
  HashMap<std::string_view, const LoopsDeployment*> dep_by_id;
  if (deps.ok()) {
    dep_by_id.reserve(deps->items.size());
    for (const LoopsDeployment& d : deps->items) dep_by_id[d.id] = &d;
  }
  HashMap<std::string_view, std::string_view> paired;  // sampler id -> run id
  HashMap<std::string_view, const Run*> run_by_id;
  if (runs.ok()) {
    run_by_id.reserve(runs->items.size());
    for (const Run& r : runs->items) {
      run_by_id[r.id] = &r;
      if (r.sampler) paired[r.sampler->id] = r.id;
    }
  }
  if (deps.ok()) {
    for (const LoopsDeployment& d : deps->items) {
      if (d.sampler) paired.try_emplace(d.sampler->id, d.latest_run_id);
    }
  }

  // Per-resource details: GPU holders first, within the call budget; the rest reuse
  // fresh-enough cached details or stay unknown. When the budget binds, the details
  // read longest ago (or never) go first (TakeOldestFirst).
  DetailBudget budget{options_.max_detail_calls};
  std::vector<WantedDetail> wanted;
  // A cached detail read within 30 s is fresh; any other is due, and read again in the
  // order of its last good read (one lookup for both).
  auto due = [&](const auto& cache, std::string_view key) -> std::optional<Time> {
    auto it = cache.find(key);
    if (it == cache.end() || !it->second.ok) return Time{};
    if (now - it->second.fetched < std::chrono::seconds(30)) return std::nullopt;
    return it->second.fetched;
  };
  if (runs.ok()) {
    for (const Run& r : runs->items) {
      auto d = dep_by_id.find(r.deployment_id);
      const bool live = r.status == "ACTIVE";
      if (d != dep_by_id.end() && live && d->second->status == "RUNNING") {
        if (auto last = due(metrics_cache_, d->second->id)) {
          wanted.emplace_back(*last, [this, id = d->second->id]() -> asio::awaitable<void> {
            co_await FetchTrainerMetrics(id);
          });
        }
      }
      if (!live) continue;
      if (auto last = due(checkpoint_cache_, r.id)) {
        wanted.emplace_back(*last, [this, id = r.id]() -> asio::awaitable<void> { co_await FetchCheckpoints(id); });
      }
    }
  }
  if (samplers.ok()) {
    for (const Sampler& s : samplers->items) {
      if (!DeploymentStatusLifecycle(s.status).bills || s.model_id.empty()) continue;
      if (auto last = due(metrics_cache_, s.id)) {
        wanted.emplace_back(*last, [this, s]() -> asio::awaitable<void> {
          co_await FetchTrafficMetrics(s.id, Kind::kBasetenSampler, s.model_id, s.deployment_id);
        });
      }
    }
  }
  if (deps.ok()) {
    for (const LoopsDeployment& d : deps->items) {
      // Leftovers (no active run) need their own metrics; owned ones share the run's.
      if (!d.active_run_id.empty() || d.status != "RUNNING") continue;
      if (auto last = due(metrics_cache_, d.id)) {
        wanted.emplace_back(*last, [this, id = d.id]() -> asio::awaitable<void> { co_await FetchTrainerMetrics(id); });
      }
    }
  }
  // Model deployments: models whose deployments could bill are re-read every cycle;
  // the others when their listing is older than detail_max_age.
  if (models.ok()) {
    StampCount models_stamped{poll};
    for (const Model& m : models->items) {
      const ModelDeployments* md = FindStamped(model_cache_, m.id, models_stamped);
      const bool read_ok = md != nullptr && md->ok;
      bool need = !read_ok || now - md->fetched >= options_.detail_max_age;
      if (!need) {
        for (const Deployment& d : md->items) need = need || DeploymentStatusLifecycle(d.status).bills;
      }
      if (need && !(read_ok && now - md->fetched < std::chrono::seconds(30))) {
        wanted.emplace_back(read_ok ? md->fetched : Time{}, [this, id = m.id]() -> asio::awaitable<void> {
          auto [r, p] =
              co_await GetRead<Parsed<Deployment>>(*transport_, "/v1/models/" + id + "/deployments", ParseDeployments);
          ModelDeployments md{clock_.Now(), false, {}, poll_};
          if (r.ok()) {
            md.ok = true;
            md.items = std::move(p->items);
            changes_.push_back(
                {"d:" + id, md.fetched, p->dropped > 0 ? std::move(r.body) : TrimDeploymentsBody(r.body)});
          }
          model_cache_[id] = md;
        });
      }
    }
    ForgetUnstamped(model_cache_, models_stamped, [&](const std::string& id) {
      changes_.push_back({"d:" + id, now, ""});
    });
  }
  co_await net::RunAll(TakeOldestFirst(wanted, budget), static_cast<size_t>(options_.max_concurrency));
  // Each listed model's deployments, read (null: not read), looked up once for the
  // passes below. The cache is a node table, whose entries stay put, and nothing erases
  // from it before this poll ends, so the pointers hold across the reads below.
  std::vector<const ModelDeployments*> model_deps;
  if (models.ok()) {
    model_deps.reserve(models->items.size());
    for (const Model& m : models->items) {
      auto c = model_cache_.find(m.id.view());
      model_deps.push_back(c == model_cache_.end() || !c->second.ok ? nullptr : &c->second);
    }
  }
  // Inference deployments' metrics need the model listing first.
  std::vector<WantedDetail> traffic;
  for (size_t i = 0; i < model_deps.size(); ++i) {
    if (model_deps[i] == nullptr) continue;
    for (const Deployment& d : model_deps[i]->items) {
      if (d.active_replica_count <= 0) continue;
      if (auto last = due(metrics_cache_, d.id)) {
        traffic.emplace_back(*last, [this, mid = models->items[i].id, did = d.id]() -> asio::awaitable<void> {
          co_await FetchTrafficMetrics(did, Kind::kBasetenDeployment, mid, did);
        });
      }
    }
  }
  co_await net::RunAll(TakeOldestFirst(traffic, budget), static_cast<size_t>(options_.max_concurrency));

  const Time after = clock_.Now();
  StampCount metrics_stamped{poll};
  auto metrics_of = [&](std::string_view key) -> const Metrics* {
    return FindStamped(metrics_cache_, key, metrics_stamped);
  };
  // Sized once when kept: grown by doubling, the vector of 528-byte Resources held an old
  // and a new copy side by side at each step (6.5 MB at the 100k bench's peak,
  // heaptrack). From here to the return no request is made (ResourceSink).
  size_t listed = (runs.ok() ? runs->items.size() : 0) + (samplers.ok() ? samplers->items.size() : 0) +
                  (deps.ok() ? deps->items.size() : 0);
  for (const ModelDeployments* md : model_deps) listed += md == nullptr ? 0 : md->items.size();
  inv.Reserve(listed);
  StampCount checkpoints_stamped{poll};
  if (runs.ok()) {
    for (const Run& r : runs->items) {
      auto d = dep_by_id.find(r.deployment_id);
      const LoopsDeployment* dep = d == dep_by_id.end() ? nullptr : d->second;
      inv.Add(MakeRun(r, dep, deps.ok(), dep ? metrics_of(dep->id) : nullptr,
                      FindStamped(checkpoint_cache_, r.id, checkpoints_stamped), after));
    }
  }
  if (samplers.ok()) {
    for (const Sampler& s : samplers->items) {
      auto p = paired.find(s.id);
      inv.Add(MakeSampler(s, p == paired.end() ? std::string_view() : p->second, metrics_of(s.id), after));
    }
  }
  if (deps.ok()) {
    for (const LoopsDeployment& d : deps->items) {
      bool owned = false;
      if (!d.active_run_id.empty()) {
        auto r = run_by_id.find(d.active_run_id);
        owned = r == run_by_id.end() || r->second->status == "ACTIVE";
      }
      inv.Add(MakeLoopsDeployment(d, owned, metrics_of(d.id), after));
    }
  }
  for (size_t i = 0; i < model_deps.size(); ++i) {
    const Model& m = models->items[i];
    if (model_deps[i] == nullptr) {
      // A model whose deployments we could not read: the listing is partial.
      if (m.deployments_count > 0) {
        ProviderError e;
        e.cls = ErrorClass::kTransient;
        e.message = "deployments of model " + m.id + " not read";
        fail("GET /v1/models/{id}/deployments", e);
      }
      continue;
    }
    for (const Deployment& d : model_deps[i]->items) {
      inv.Add(MakeDeployment(d, &m, metrics_of(d.id), after));
    }
  }
  // Forget details of resources that are gone (only when every listing said so): every
  // listed Loops deployment, sampler and model deployment had its metrics looked up
  // above, and every listed run its checkpoints (providers/stamped_cache.h).
  if (runs.ok() && samplers.ok() && deps.ok() && models.ok()) {
    ForgetUnstamped(metrics_cache_, metrics_stamped, [&](const std::string& key) {
      changes_.push_back({"m:" + key, after, ""});
    });
  }
  if (runs.ok()) {
    ForgetUnstamped(checkpoint_cache_, checkpoints_stamped, [&](const std::string& id) {
      changes_.push_back({"c:" + id, after, ""});
    });
  }
  inv.requests = static_cast<int>(transport_->stats().requests);
  co_return inv;
}

asio::awaitable<Result<RefreshResult>> BasetenProvider::Refresh(const Resource& old) {
  RefreshResult out;
  const auto gone = [&](const Reply& r) { return r.error.cls == ErrorClass::kNotFound; };
  const auto failed = [](const Reply& r, const std::string& what) {
    return Unavailable(what + ": " + r.error.ToString());
  };
  switch (old.kind) {
    case Kind::kBasetenRun: {
      auto [r, run] = co_await GetRead<Run>(*transport_, "/v1/loops/runs/" + old.id, ParseRunBody);
      if (gone(r)) {
        out.gone = true;
        co_return out;
      }
      if (!r.ok()) co_return failed(r, "refreshing run " + old.id);
      std::optional<LoopsDeployment> dep;
      Metrics m;
      if (!run->deployment_id.empty()) {
        auto [d, pd] = co_await GetRead<LoopsDeployment>(*transport_, "/v1/loops/deployments/" + run->deployment_id,
                                                         ParseLoopsDeploymentBody);
        if (d.ok()) {
          dep = *pd;
        } else if (!gone(d)) {
          co_return failed(d, "refreshing deployment " + run->deployment_id);
        }
        if (dep && dep->status == "RUNNING") m = co_await FetchTrainerMetrics(dep->id);
      }
      Checkpoints c = co_await FetchCheckpoints(run->id);
      // A deployment that answered 404 is gone: the run is serverless now.
      out.resource = MakeRun(*run, dep ? &*dep : nullptr, true, &m, &c, clock_.Now());
      co_return out;
    }
    case Kind::kBasetenSampler: {
      auto [r, s] = co_await GetRead<Sampler>(*transport_, "/v1/loops/samplers/" + old.id, ParseSamplerBody);
      if (gone(r)) {
        out.gone = true;
        co_return out;
      }
      if (!r.ok()) co_return failed(r, "refreshing sampler " + old.id);
      Metrics m;
      if (DeploymentStatusLifecycle(s->status).bills) {
        m = co_await FetchTrafficMetrics(s->id, Kind::kBasetenSampler, s->model_id, s->deployment_id);
      }
      out.resource = MakeSampler(*s, old.HasFlag(Flag::kPaired) ? old.parent_id : "", &m, clock_.Now());
      co_return out;
    }
    case Kind::kBasetenLoopsDeployment: {
      auto [r, d] = co_await GetRead<LoopsDeployment>(*transport_, "/v1/loops/deployments/" + old.id,
                                                      ParseLoopsDeploymentBody);
      if (gone(r)) {
        out.gone = true;
        co_return out;
      }
      if (!r.ok()) co_return failed(r, "refreshing deployment " + old.id);
      bool owned = false;
      if (!d->active_run_id.empty()) {
        auto [run, pr] = co_await GetRead<Run>(*transport_, "/v1/loops/runs/" + d->active_run_id, ParseRunBody);
        if (!run.ok() && !gone(run)) co_return failed(run, "refreshing run " + d->active_run_id);
        if (run.ok()) owned = pr->status == "ACTIVE";
      }
      Metrics m;
      if (d->status == "RUNNING") m = co_await FetchTrainerMetrics(d->id);
      out.resource = MakeLoopsDeployment(*d, owned, &m, clock_.Now());
      co_return out;
    }
    case Kind::kBasetenDeployment: {
      auto mid = old.refs.find("model_id");
      if (mid == old.refs.end()) co_return InvalidArgument("deployment " + old.id + " has no model_id");
      auto [r, d] = co_await GetRead<Deployment>(
          *transport_, "/v1/models/" + mid->second + "/deployments/" + old.id, ParseDeploymentBody);
      if (gone(r)) {
        out.gone = true;
        co_return out;
      }
      if (!r.ok()) co_return failed(r, "refreshing deployment " + old.id);
      co_await RefreshPrices(false);
      Metrics m;
      if (d->active_replica_count > 0) m = co_await FetchTrafficMetrics(d->id, Kind::kBasetenDeployment, mid->second, d->id);
      Model model;
      model.id = mid->second;
      model.name = old.base_model;
      model.team = old.team;
      out.resource = MakeDeployment(*d, &model, &m, clock_.Now());
      out.resource->name = old.name;
      co_return out;
    }
    default: co_return InvalidArgument("not a Baseten resource: " + old.Key());
  }
}

asio::awaitable<ActionOutcome> BasetenProvider::Act(const Resource& r, ActionType action) {
  const std::string& id = r.id;
  switch (r.kind) {
    case Kind::kBasetenRun:
      // A1 is idempotent in effect only: never resent blindly (the executor re-reads).
      if (action == ActionType::kDeactivate) co_return co_await transport_->Mutate("POST", "/v1/loops/runs/" + id + "/deactivate", "", "");
      if (action == ActionType::kDelete) co_return co_await transport_->Mutate("DELETE", "/v1/loops/runs/" + id, "", "");
      break;
    case Kind::kBasetenSampler:
      if (action == ActionType::kDeactivate) {
        ActionOutcome o = co_await transport_->Mutate("POST", "/v1/loops/samplers/" + id + "/deactivate", "", "");
        if (o.error.cls == ErrorClass::kConflict && o.error.detail == "paired") {
          o.outcome = Outcome::kRefused;
          o.detail = "paired to run " + (o.error.run_id.empty() ? r.parent_id.view() : std::string_view(o.error.run_id)) +
                     "; a paired sampler stops with its run";
        }
        co_return o;
      }
      break;
    case Kind::kBasetenLoopsDeployment:
      if (action == ActionType::kDeactivate) {
        co_return co_await transport_->Mutate("POST", "/v1/loops/deployments/" + id + "/deactivate", "", "");
      }
      break;
    case Kind::kBasetenDeployment: {
      auto mid = r.refs.find("model_id");
      if (mid == r.refs.end()) break;
      const std::string base = "/v1/models/" + mid->second + "/deployments/" + id;
      if (action == ActionType::kDeactivate) co_return co_await transport_->Mutate("POST", base + "/deactivate", "", "activation");
      if (action == ActionType::kScaleToZero) {
        ActionOutcome o = co_await transport_->Mutate("PATCH", base + "/autoscaling_settings", "{\"min_replica\":0}", "");
        if (auto it = r.refs.find("min_replica"); it != r.refs.end()) o.restore["min_replica"] = it->second;
        co_return o;
      }
      if (action == ActionType::kDelete) co_return co_await transport_->Mutate("DELETE", base, "", "");
      break;
    }
    default: break;
  }
  ActionOutcome o;
  o.outcome = Outcome::kRefused;
  o.detail = std::string(ActionName(action)) + " is not available for " + std::string(KindName(r.kind));
  co_return o;
}

asio::awaitable<ActionOutcome> BasetenProvider::PromoteCheckpoint(const Resource&, const std::string&,
                                                                  const std::string&) {
  ActionOutcome o;
  o.outcome = Outcome::kRefused;
  o.detail = "Baseten has no checkpoint promotion (deploying a checkpoint bills a new deployment)";
  co_return o;
}

asio::awaitable<Result<UsageReport>> BasetenProvider::Usage(Time start, Time end) {
  UsageReport out;
  const Interned minutes("minutes");  // pooled once a call: a row copies a handle
  // At most 31 days a request (R21).
  for (Time from = start; from < end; from += std::chrono::hours(24 * 31)) {
    const Time to = std::min(end, from + std::chrono::hours(24 * 31));
    Call c{"GET", "/v1/billing/usage_summary?start_date=" + FormatTimeSeconds(from) + "&end_date=" + FormatTimeSeconds(to)};
    c.text = true;  // read row by row (ParseUsageSummary)
    Reply r = co_await transport_->Send(std::move(c));
    if (!r.ok()) co_return Unavailable("usage summary: " + r.error.ToString());
    auto days = ParseUsageSummary(r.body);
    if (!days.ok()) co_return Unavailable("usage summary: " + days.status().message());
    for (UsageDay& d : *days) {
      // A range's end date may come back as a bucket of its own: keep the days asked.
      if (d.day < from || d.day >= to) continue;
      out.rows.push_back({d.resource_id, d.day, minutes, d.minutes, d.cost});
    }
  }
  co_return out;
}

}  // namespace loopwarden::providers::baseten
