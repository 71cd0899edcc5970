#include "daemon/daemon.h"

#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <csignal>
#include <filesystem>
#include <ostream>

#include "config/config.h"
#include "core/log.h"
#include "core/strings.h"
#include "core/version.h"
#include "daemon/admin.h"
#include "daemon/cli.h"
#include "daemon/config_reload.h"
#include "daemon/leadership.h"
#include "daemon/plan_output.h"
#include "daemon/sd_notify.h"
#include "net/async_event.h"
#include "net/http_server.h"
#include "net/proxy.h"
#include "reconcile/notify_runner.h"
#include "reconcile/reconciler.h"
#include "reconcile/setup.h"
#include "store/postgres.h"

namespace loopwarden::daemon {

namespace {

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;

double Unix(Time t) { return static_cast<double>(ToUnixMicros(t)) / 1e6; }

// The (policy, action) pairs whose loopwarden_actions_total series exist from the start.
std::vector<std::pair<std::string, std::string>> PolicyActions(const policies::PolicySet& set) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const policies::Policy& p : set.policies) {
    if (!IsMutating(p.action)) continue;
    out.emplace_back(p.name, std::string(ActionName(p.action)));
    if (p.action == ActionType::kPromoteThenDelete) out.emplace_back(p.name, "promote_checkpoint");
  }
  return out;
}

std::unique_ptr<Clock> MakeClock(const std::optional<ScaledClockOptions>& t) {
  if (t) return std::make_unique<ScaledClock>(*t);
  return MakeRealClock();
}

// The daemon's state: one per process, on one io_context thread.
class Service {
 public:
  Service(asio::io_context& ioc, Clock& clock, const RunOptions& options, std::unique_ptr<store::Store> store,
          std::unique_ptr<reconcile::Setup> setup, LeaseKeeper* lease, providers::SendGate gate)
      : ioc_(ioc),
        clock_(clock),
        options_(options),
        store_(std::move(store)),
        setup_(std::move(setup)),
        lease_(lease),
        gate_(std::move(gate)),
        notifier_(ioc, clock, *store_, metrics_),
        reconciler_(clock, *store_, metrics_, &notifier_),
        wake_(ioc.get_executor()),
        signals_(ioc, SIGTERM, SIGINT, SIGHUP),
        drain_timer_(ioc),
        watchdog_timer_(ioc) {}

  int Run();

 private:
  asio::awaitable<void> Loop();
  void WaitSignal();
  asio::awaitable<void> Reload();
  void BeginShutdown(std::string_view why);
  void StartDrainTimer();
  void MaybeFinish();
  void ArmWatchdog();
  std::pair<bool, std::string> Healthy() const;

  asio::io_context& ioc_;
  Clock& clock_;
  RunOptions options_;
  exporters::Metrics metrics_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<reconcile::Setup> setup_;
  LeaseKeeper* lease_;  // PostgreSQL: the leader lease; null on SQLite
  providers::SendGate gate_;
  reconcile::NotifyRunner notifier_;
  reconcile::Reconciler reconciler_;
  net::AsyncEvent wake_;
  asio::signal_set signals_;
  asio::steady_timer drain_timer_;
  asio::steady_timer watchdog_timer_;
  asio::thread_pool reload_pool_{1};  // parses a reloaded configuration off the io thread
  asio::cancellation_signal loop_cancel_;
  asio::cancellation_signal notify_cancel_;
  std::unique_ptr<net::HttpServer> server_;
  SdNotifier sd_;
  std::string plan_json_;
  bool stopping_ = false;
  bool reload_pending_ = false;
  bool drain_started_ = false;
  bool loop_done_ = false;
  bool notify_done_ = false;
  bool failed_ = false;
  bool once_ok_ = true;
  bool in_cycle_ = false;
  Time cycle_started_;
};

std::pair<bool, std::string> Service::Healthy() const {
  if (loop_done_ && !options_.once) return {false, "the reconcile loop has stopped"};
  if (in_cycle_) {
    const Duration limit = std::max<Duration>(10 * setup_->config.poll_interval, std::chrono::minutes(10));
    if (clock_.Now() - cycle_started_ > limit) {
      return {false, "the current cycle has run for more than " + FormatDuration(limit)};
    }
  }
  return {true, ""};
}

int Service::Run() {
  metrics_.SetBuildInfo(kVersion, kRevision, kCompiler);
  metrics_.SetDryRun(setup_->config.dry_run);
  metrics_.DeclareActions(PolicyActions(setup_->config.policy_set));
  metrics_.RecordConfigReload(true, Unix(clock_.Now()));
  reconciler_.SetSetup(setup_.get());
  if (Status s = notifier_.Configure(setup_->config.notifiers); !s.ok()) {
    Log().Error("notifiers", {{"err", s}});
    return cli::kExitConfig;
  }
  auto listen = config::ParseListen(setup_->config.listen);
  if (!listen.ok()) {
    Log().Error("listen", {{"err", listen.status()}});
    return cli::kExitConfig;
  }
  AdminContext admin;
  admin.metrics = &metrics_;
  admin.store = store_.get();
  admin.clock = &clock_;
  admin.plan_json = [this] { return plan_json_; };
  admin.admin_token = [this] { return setup_->config.admin_token.value; };
  admin.healthy = [this] { return Healthy(); };
  admin.ready = [this]() -> std::pair<bool, std::string> {
    if (stopping_) return {false, "shutting down"};
    return {true, ""};
  };
  admin.on_snooze = [this] { wake_.Notify(); };
  net::ServerOptions so;
  so.host = listen->first;
  so.port = listen->second;
  so.max_body_bytes = 64 * 1024;
  so.header_timeout = std::chrono::seconds(5);
  so.read_timeout = std::chrono::seconds(10);
  so.max_connections = 256;
  auto server = net::HttpServer::Start(ioc_, so, [admin](const net::HttpRequest& r) { return HandleAdmin(admin, r); });
  if (!server.ok()) {
    Log().Error("admin server could not start", {{"err", server.status()}});
    return cli::kExitFailure;
  }
  server_ = std::move(*server);
  Log().Info("loopwarden started",
             {{"version", kVersion}, {"config", setup_->config.path}, {"state", store_->path()},
              {"listen", so.host + ":" + std::to_string(server_->port())},
              {"providers", static_cast<long>(setup_->providers.size())}, {"dry_run", setup_->config.dry_run}});
  if (!setup_->config.dry_run) Log().Warn("dry_run is false: loopwarden will change resources at the providers");

  WaitSignal();
  asio::co_spawn(ioc_, notifier_.Run(), asio::bind_cancellation_slot(notify_cancel_.slot(), [this](std::exception_ptr) {
                   notify_done_ = true;
                   MaybeFinish();
                 }));
  asio::co_spawn(ioc_, Loop(), asio::bind_cancellation_slot(loop_cancel_.slot(), [this](std::exception_ptr e) {
                   if (e) {
                     try {
                       std::rethrow_exception(e);
                     } catch (const std::exception& ex) {
                       Log().Error("the reconcile loop failed", {{"err", ex.what()}});
                     }
                     failed_ = true;
                   }
                   loop_done_ = true;
                   notifier_.Stop();
                   StartDrainTimer();
                   MaybeFinish();
                 }));
  (void)sd_.Ready("watching " + std::to_string(setup_->providers.size()) + " provider accounts");
  ArmWatchdog();
  if (lease_) lease_->Start();
  ioc_.run();
  Log().Info("loopwarden stopped");
  if (failed_) return cli::kExitFailure;
  if (options_.once && !once_ok_) return cli::kExitFailure;
  return cli::kExitOk;
}

asio::awaitable<void> Service::Loop() {
  try {
    if (Status s = co_await reconciler_.Recover(); !s.ok()) {
      Log().Error("settling open intents failed; their resources are not acted on", {{"err", s}});
    }
    Time next_poll = clock_.Now();
    while (!stopping_) {
      if (reload_pending_) {
        reload_pending_ = false;
        co_await Reload();
      }
      const Time now = clock_.Now();
      const bool poll = now >= next_poll;
      if (poll) {
        next_poll = now + setup_->config.poll_interval;
        if (reconciler_.executor().unresolved() > 0) {
          if (Status s = co_await reconciler_.Recover(); !s.ok()) {
            Log().Warn("settling open intents failed; trying again at the next poll", {{"err", s}});
          }
        }
      }
      in_cycle_ = true;
      cycle_started_ = now;
      reconcile::CycleReport rep = co_await reconciler_.Cycle(poll);
      in_cycle_ = false;
      plan_json_ = PlanJson(rep.decisions, *store_, rep.at, setup_->config.dry_run);
      if (options_.once) {
        once_ok_ = rep.ok;
        break;
      }
      wake_.Reset();
      if (stopping_ || reload_pending_) continue;
      Time wake = next_poll;
      if (auto d = reconciler_.NextDeadline(clock_.Now()); d && *d < wake) wake = *d;
      co_await (clock_.SleepUntil(wake) || wake_.Wait());
    }
  } catch (const boost::system::system_error& e) {
    if (e.code() != asio::error::operation_aborted) throw;
    Log().Warn("drain timeout: in-flight provider calls were cancelled; open intents are settled at the next start");
  }
}

void Service::WaitSignal() {
  signals_.async_wait([this](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    if (sig == SIGHUP) {
      Log().Info("SIGHUP: reloading the configuration");
      reload_pending_ = true;
      wake_.Notify();
    } else {
      BeginShutdown(sig == SIGTERM ? "SIGTERM" : "SIGINT");
    }
    WaitSignal();
  });
}

void Service::BeginShutdown(std::string_view why) {
  if (stopping_) {
    // A second signal: stop waiting for in-flight calls.
    loop_cancel_.emit(asio::cancellation_type::terminal);
    notify_cancel_.emit(asio::cancellation_type::terminal);
    return;
  }
  stopping_ = true;
  Log().Info("shutting down: finishing in-flight calls", {{"signal", why},
                                                          {"drain_timeout", setup_->config.drain_timeout}});
  (void)sd_.Stopping();
  reconciler_.Stop();
  notifier_.Stop();
  wake_.Notify();
  StartDrainTimer();
}

void Service::StartDrainTimer() {
  if (drain_started_) return;
  drain_started_ = true;
  drain_timer_.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(setup_->config.drain_timeout));
  drain_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    Log().Warn("drain timeout reached: cancelling what is still running");
    loop_cancel_.emit(asio::cancellation_type::terminal);
    notify_cancel_.emit(asio::cancellation_type::terminal);
  });
}

void Service::MaybeFinish() {
  if (!loop_done_ || !notify_done_) return;
  drain_timer_.cancel();
  watchdog_timer_.cancel();
  signals_.cancel();
  if (server_) server_->Stop();
  if (lease_) lease_->Release();
  ioc_.stop();
}

void Service::ArmWatchdog() {
  auto interval = sd_.watchdog_interval();
  if (!interval) return;
  watchdog_timer_.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(*interval));
  watchdog_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    // A stuck loop stops the pings, so systemd restarts us.
    if (Healthy().first) (void)sd_.Watchdog();
    ArmWatchdog();
  });
}

asio::awaitable<void> Service::Reload() {
  (void)sd_.Reloading();
  const Time now = clock_.Now();
  auto fail = [&](const Status& s) {
    Log().Error("reload failed; keeping the running configuration", {{"err", s}});
    metrics_.RecordConfigReload(false, Unix(now));
    (void)sd_.Ready("reload failed; running the previous configuration");
  };
  // Named, not a temporary in the co_await: GCC 12 destroys such temporaries twice.
  std::function<Result<config::Config>()> load = [path = options_.config_path] { return config::LoadConfig(path); };
  auto cfg = co_await LoadOffThread(reload_pool_, std::move(load));
  if (!cfg.ok()) co_return fail(cfg.status());
  if (cfg->state_path != setup_->config.state_path) {
    Log().Warn("state_path changed; the new path is used after a restart",
               {{"state_path", store::pg::RedactDsn(cfg->state_path)}});
    cfg->state_path = setup_->config.state_path;
  }
  if (cfg->listen != setup_->config.listen) {
    Log().Warn("listen changed; the new address is used after a restart", {{"listen", cfg->listen}});
    cfg->listen = setup_->config.listen;
  }
  if (cfg->leader_lease != setup_->config.leader_lease) {
    Log().Warn("leader_lease changed; the new lease is used after a restart", {{"leader_lease", cfg->leader_lease}});
    cfg->leader_lease = setup_->config.leader_lease;
  }
  auto next = reconcile::MakeSetup(ioc_, clock_, std::move(*cfg), gate_);
  if (!next.ok()) co_return fail(next.status());
  if (Status s = notifier_.Configure((*next)->config.notifiers); !s.ok()) co_return fail(s);
  setup_ = std::move(*next);
  reconciler_.SetSetup(setup_.get());
  metrics_.SetDryRun(setup_->config.dry_run);
  metrics_.DeclareActions(PolicyActions(setup_->config.policy_set));
  metrics_.RecordConfigReload(true, Unix(now));
  Log().Info("configuration reloaded", {{"policies", static_cast<long>(setup_->config.policy_set.policies.size())},
                                        {"dry_run", setup_->config.dry_run}});
  (void)sd_.Ready();
}

// A named coroutine, not a lambda: its frame must not point into a temporary closure.
asio::awaitable<void> PlanCycle(reconcile::Reconciler* rec, std::optional<reconcile::CycleReport>* out) { *out = co_await rec->Cycle(true); }

struct PlanProgress {
  size_t listed = 0;
  size_t accounts = 0;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

// A long plan (many accounts, or one slow one) says every 10 s that it is still at it.
asio::awaitable<void> PlanTicker(asio::steady_timer* ticker, const PlanProgress* progress) {
  for (;;) {
    ticker->expires_after(std::chrono::seconds(10));
    auto [ec] = co_await ticker->async_wait(asio::as_tuple(asio::use_awaitable));
    if (ec) co_return;  // cancelled: the cycle is done
    Log().Info("plan: still polling",
               {{"listed", progress->listed},
                {"of", progress->accounts},
                {"elapsed", std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() - progress->started)}});
  }
}

}  // namespace

namespace {

// "Is it using my proxy?" is the first question when calls fail behind one: say which,
// without credentials. A variable that does not parse has already stopped the start.
void LogProxies() {
  const net::ProxySettings px = net::ProxySettingsFromEnv();
  auto rules = net::ProxyRules::Parse(px);
  if (!rules.ok() || rules->empty()) return;
  Log().Info("outbound proxy", {{"https", rules->https_display()}, {"http", rules->http_display()},
                                {"no_proxy", px.no_proxy}});
}

// The daemon's start-up errors go to the log like everything else it says: a pipeline
// that parses every line as JSON would drop plain text, or choke on it. One record per
// configuration error, each naming file, line and column in `error`.
int StartFailed(const std::string& what, const std::string& config_path, const Status& s, int code) {
  long n = 0;
  for (const std::string& line : Split(s.message(), '\n')) {
    if (Trim(line).empty()) continue;
    Log().Error(what, {{"config", config_path}, {"error", line}});
    ++n;
  }
  Log().Error("not starting", {{"config", config_path}, {"errors", n}, {"exit_code", code}});
  return code;
}

}  // namespace

int RunDaemon(const RunOptions& options, std::ostream&) {
  auto cfg = config::LoadConfig(options.config_path);
  if (!cfg.ok()) return StartFailed("configuration error", options.config_path, cfg.status(), cli::kExitConfig);
  std::unique_ptr<Clock> clock = MakeClock(options.time);
  store::StoreOptions so{.path = cfg->state_path};
  std::unique_ptr<store::LeaderLease> lease;
  if (store::pg::IsDsn(cfg->state_path)) {
    auto l = store::LeaderLease::Open(cfg->state_path, HolderName(), cfg->leader_lease);
    if (!l.ok()) return StartFailed("state database", options.config_path, l.status(), cli::kExitFailure);
    lease = std::move(*l);
    Result<std::optional<int64_t>> token = std::optional<int64_t>();
    if (options.once) {
      // A one-off run beside a daemon must not wait for it to die.
      token = lease->TryAcquire();
      if (token.ok() && !*token) {
        auto holder = lease->Current();
        const std::string who = holder.ok() && *holder ? (*holder)->holder : "another replica";
        token = FailedPrecondition("the leader lease is held by " + who + "; run --once acts only when no loopwarden leads");
      }
    } else {
      token = AwaitLeadership(*lease, cfg->listen);
    }
    if (!token.ok()) return StartFailed("state database", options.config_path, token.status(), cli::kExitFailure);
    if (!*token) return cli::kExitOk;  // stopped while standing by
    Log().Info("leading: this replica holds the leader lease", {{"holder", lease->holder()}, {"token", **token}});
    so.fence = **token;
    so.fence_lost = ExitOnFenceLost;
    // A paused leader's open transaction must not hold a takeover up for long.
    so.idle_transaction_timeout = cfg->leader_lease / 3;
  }
  auto store = store::Store::Open(so);
  if (!store.ok()) return StartFailed("state database", options.config_path, store.status(), cli::kExitFailure);
  asio::io_context ioc(1);
  std::unique_ptr<LeaseKeeper> keeper;
  providers::SendGate gate;
  if (lease) {
    keeper = std::make_unique<LeaseKeeper>(ioc, *lease);
    gate = keeper->Gate(**store);
  }
  auto setup = reconcile::MakeSetup(ioc, *clock, std::move(*cfg), gate);
  if (!setup.ok()) return StartFailed("configuration error", options.config_path, setup.status(), cli::kExitConfig);
  // Loading a large state takes a while; the keeper renews from when the loop runs.
  if (lease) {
    auto held = lease->Renew();
    if (!held.ok() || !*held) {
      ExitOnFenceLost(held.ok() ? FailedPrecondition("the lease expired while the state was loading") : held.status());
    }
  }
  LogProxies();
  Service service(ioc, *clock, options, std::move(*store), std::move(*setup), keeper.get(), gate);
  return service.Run();
}

int RunPlan(const PlanOptions& options, std::ostream& out, std::ostream& err) {
  auto cfg = config::LoadConfig(options.config_path);
  if (!cfg.ok()) {
    err << cfg.status().message() << "\n";
    return cli::kExitConfig;
  }
  // A private copy: plan changes nothing of the daemon's database.
  const std::string scratch =
      (std::filesystem::temp_directory_path() / ("loopwarden-plan-" + std::to_string(getpid()) + ".db")).string();
  struct Cleanup {
    std::string path;
    ~Cleanup() {
      std::error_code ec;
      for (const char* suffix : {"", "-wal", "-shm", "-journal", ".lock"}) std::filesystem::remove(path + suffix, ec);
    }
  } cleanup{scratch};
  auto store = store::Store::OpenCopy(cfg->state_path, scratch);
  if (!store.ok()) {
    err << "loopwarden: " << store.status().message() << "\n";
    return cli::kExitFailure;
  }
  std::unique_ptr<Clock> clock = MakeClock(options.time);
  asio::io_context ioc(1);
  const bool dry_run = cfg->dry_run;
  auto setup = reconcile::MakeSetup(ioc, *clock, std::move(*cfg));
  if (!setup.ok()) {
    err << "loopwarden: " << setup.status().message() << "\n";
    return cli::kExitConfig;
  }
  exporters::Metrics metrics;
  // Progress on stderr, as log lines: stdout carries only the plan.
  PlanProgress progress{.accounts = (*setup)->providers.size()};
  reconcile::ReconcilerOptions ro{.execute = false, .notify = false};
  ro.on_listed = [&progress](const std::string& provider, size_t listed, size_t total, size_t resources, bool complete) {
    progress.listed = listed;
    Log().Info("plan: listed", {{"provider", provider}, {"listed", listed}, {"of", total},
                                {"resources", resources}, {"complete", complete}});
  };
  reconcile::Reconciler rec(*clock, **store, metrics, nullptr, std::move(ro));
  rec.SetSetup(setup->get());
  LogProxies();
  Log().Info("plan: polling", {{"accounts", progress.accounts}});
  std::optional<reconcile::CycleReport> rep;
  std::exception_ptr failure;
  asio::steady_timer ticker(ioc);
  asio::co_spawn(ioc, PlanCycle(&rec, &rep), [&](std::exception_ptr e) {
    failure = e;
    ticker.cancel();  // done or failed: the ticker stops either way
  });
  asio::co_spawn(ioc, PlanTicker(&ticker, &progress), asio::detached);
  ioc.run();
  if (failure || !rep) {
    err << "loopwarden: plan failed\n";
    return cli::kExitFailure;
  }
  for (const std::string& e : rep->errors) err << "loopwarden: " << e << "\n";
  if (!rep->complete) err << "loopwarden: a listing was incomplete; resources it missed are unknown, not gone\n";
  if (options.json) {
    out << PlanJson(rep->decisions, **store, rep->at, dry_run) << "\n";
  } else {
    out << FormatPlanTable(rep->decisions, **store);
    out << (dry_run ? "\ndry_run is true: `loopwarden run` would only report these.\n"
                    : "\ndry_run is false: `loopwarden run` would carry these out.\n");
  }
  if (!rep->errors.empty() && rep->decisions.empty()) return cli::kExitFailure;
  // A plan that could see no provider at all says nothing: not "nothing to do".
  if (!rep->unreachable.empty() && rep->unreachable.size() == (*setup)->providers.size()) {
    err << "loopwarden: no provider could be listed (" << Join(rep->unreachable, ", ")
        << "); this plan knows nothing of their resources\n";
    return cli::kExitFailure;
  }
  return WouldChange(rep->decisions) ? cli::kExitChanges : cli::kExitOk;
}

}  // namespace loopwarden::daemon
