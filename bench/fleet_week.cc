// A simulated week of a ~200-resource fleet with realistic activity: training bursts,
// notebooks whose keepalive holds a run after training, endpoints deployed from
// checkpoints and forgotten, RLOR trainers with their reaper switched off and their
// rollout deployments, standalone samplers, sessions left open.
//
// Three runs of the same week: (a) the providers' own timeouts only, (b) a cron job
// running `loopwarden run --once` every 5 minutes with the same policies, (c) the
// loopwarden daemon. In each, a separate dry-run loopwarden polling every 5 minutes
// observes the fleet, and its ledger gives the idle GPU-hours and USD, so all three are
// measured by the same observer.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cmath>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "bench/common.h"
#include "bench/db_read.h"
#include "config/config.h"
#include "providers/baseten/parse.h"
#include "reconcile/setup.h"
#include "store/store.h"
#include "tests/testing/fetch.h"

namespace loopwarden::bench {

namespace bj = boost::json;

namespace {

constexpr int kWeekH = 168;

std::string Rel(double hours) {
  char b[32];
  std::snprintf(b, sizeof b, "%+ds", static_cast<int>(hours * 3600));
  return b;
}

// The fleet's shape: `copies` times the ~185 resources; each starts at a uniform instant
// of [from_h, to_h) hours from the week's start (sessions up to `sessions_to_h`).
struct FleetShape {
  std::string name = "week";  // the run's files are named after it
  int copies = 1;
  double from_h = 0, to_h = 150, sessions_to_h = 160;
};

std::string Scenario(uint64_t seed, const FleetShape& shape = {}) {
  std::mt19937_64 rng(seed);
  auto uni = [&](double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng); };
  auto chance = [&](double p) { return uni(0, 1) < p; };
  std::string y = "switches: {loops_default_scale_down_delay: 900s}\n"
                  "baseten:\n  - org: week\n    keys: [{key: bt-week, owner: ops@example.com, org_visible: true}]\n    runs:\n";
  char b[1024];
  const int k = shape.copies;
  auto start = [&] { return uni(shape.from_h, shape.to_h); };
  for (int i = 0; i < 60 * k; ++i) {  // dedicated trainers
    const double t0 = start(), len = uni(1, 8);
    const bool held = chance(0.35);  // an interrupted script's keepalive holds it
    std::snprintf(b, sizeof b,
                  "      - {id: wr%03d, name: train-%03d, owner: u%d@example.com, mode: dedicated, created: \"%s\","
                  " instance_type: H100x8, nodes: 1, activity: [{from: \"%s\", to: \"%s\", gpu_util: 0.9}]%s,"
                  " checkpoints: [{name: final, at: \"%s\"}]}\n",
                  i, i, i % 7, Rel(t0).c_str(), Rel(t0).c_str(), Rel(t0 + len).c_str(),
                  held ? (", keepalive: [{from: \"" + Rel(t0) + "\", to: forever}]").c_str() : "", Rel(t0 + len).c_str());
    y += b;
  }
  y += "    samplers:\n";
  for (int i = 0; i < 10 * k; ++i) {
    const double t0 = start(), len = uni(1, 6);
    std::snprintf(b, sizeof b,
                  "      - {id: ws%03d, owner: u%d@example.com, created: \"%s\", instance_type: H100x26x234,"
                  " traffic: [{from: \"%s\", to: \"%s\", requests_per_min: 20}]}\n",
                  i, i % 7, Rel(t0).c_str(), Rel(t0).c_str(), Rel(t0 + len).c_str());
    y += b;
  }
  y += "    models:\n";
  for (int i = 0; i < 25 * k; ++i) {  // endpoints deployed from checkpoints
    const double t0 = start(), len = uni(2, 24);
    std::snprintf(b, sizeof b,
                  "      - {id: wm%03d, name: endpoint-%03d, created: \"%s\", deployments: [{id: wd%03d, created: \"%s\","
                  " instance_type: H100x26x234, min_replica: 1, max_replica: 1,"
                  " traffic: [{from: \"%s\", to: \"%s\", requests_per_min: 10}]}]}\n",
                  i, i, Rel(t0).c_str(), i, Rel(t0).c_str(), Rel(t0).c_str(), Rel(t0 + len).c_str());
    y += b;
  }
  y += "fireworks:\n  - account: week-ml\n    keys: [{key: fw-week, owner: ops@example.com, training: true}]\n"
       "    slot_cap: 1000\n    sessions:\n";
  for (int i = 0; i < 50 * k; ++i) {
    const double t0 = uni(shape.from_h, shape.sessions_to_h), len = uni(0.5, 4);
    std::snprintf(b, sizeof b,
                  "      - {id: ts-week%027d, name: session-%03d, owner: u%d@example.com, created: \"%s\","
                  " activity: [{from: \"%s\", to: \"%s\", tokens_per_min: {prefill: 20000, sample: 5000, train: 15000}}]}\n",
                  i, i, i % 7, Rel(t0).c_str(), Rel(t0).c_str(), Rel(t0 + len).c_str());
    y += b;
  }
  std::string jobs, deps;
  for (int i = 0; i < 20 * k; ++i) {
    const double t0 = start(), len = uni(1, 6);
    const bool no_reaper = chance(0.5);
    std::snprintf(b, sizeof b,
                  "      - {id: training-api-service-wk%06d, name: rl-%03d, owner: u%d@example.com, created: \"%s\","
                  " accelerator: NVIDIA_H200_141GB, accelerator_count: 8, disable_inactivity_cleanup: %s,"
                  " activity: [{from: \"%s\", to: \"%s\"}]}\n",
                  i, i, i % 7, Rel(t0).c_str(), no_reaper ? "true" : "false", Rel(t0).c_str(), Rel(t0 + len).c_str());
    jobs += b;
    std::snprintf(b, sizeof b,
                  "      - {id: rollout-wk%03d, base_model: accounts/fireworks/models/qwen3-8b, owner: u%d@example.com,"
                  " created: \"%s\", accelerator: NVIDIA_H100_80GB, accelerator_count: 1, managed_rollout: true,"
                  " hot_load_trainer_job: training-api-service-wk%06d,"
                  " traffic: [{from: \"%s\", to: \"%s\", requests_per_min: 60}]}\n",
                  i, i % 7, Rel(t0).c_str(), i, Rel(t0).c_str(), Rel(t0 + len).c_str());
    deps += b;
  }
  y += "    rlor_jobs:\n" + jobs + "    deployments:\n" + deps;
  return y;
}

std::string Providers(int port) {
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  return "providers:\n"
         "  - {name: bt, type: baseten, base_url: \"" + url + "\", api_key_env: BT_KEY, requests_per_minute: 1000000,"
         " activity_window: 2h}\n"
         "  - {name: fw, type: fireworks, account: week-ml, base_url: \"" + url + "\", api_key_env: FW_KEY,"
         " requests_per_minute: 1000000}\n"
         "pricing: {gpu_hour_usd: {H100: 6.50, H200: 7.00}}\n";
}

const char* kPolicies =
    "policies:\n"
    "  - {name: idle-trainers, resource: baseten.run, where: {mode: dedicated, lifecycle: running, idle_for: \">= 20m\"},"
    " action: deactivate, grace: 10m}\n"
    "  - {name: forgotten-endpoints, resource: baseten.deployment, where: {lifecycle: running, no_traffic_for: \">= 2h\"},"
    " action: deactivate, grace: 30m}\n"
    "  - {name: idle-samplers, resource: baseten.sampler, where: {lifecycle: running, flags: [standalone],"
    " no_traffic_for: \">= 1h\"}, action: deactivate, grace: 10m}\n"
    "  - {name: idle-rlor, resource: fireworks.rlor_job, where: {lifecycle: running, idle_for: \">= 30m\"},"
    " action: cancel, grace: 10m}\n"
    "  - {name: orphaned-rollouts, resource: fireworks.deployment, where: {lifecycle: running, flags: [orphaned]},"
    " action: scale_to_zero, grace: 10m}\n";

struct Idle {
  double gpu_hours = 0;
  double usd = 0;
  double total_usd = 0;
};

// Idle GPU-hours and USD in the observer's ledger up to `until`.
Idle ReadIdle(const std::string& db, Time until) {
  Idle out;
  DbReader r(db);
  r.Query("SELECT start_at, COALESCE(end_at, ?1), quantity_rate, unit_price, idle FROM ledger WHERE meter = 'gpu_seconds'",
          ToUnixMicros(until), [&](sqlite3_stmt* st) {
            const double secs = static_cast<double>(sqlite3_column_int64(st, 1) - sqlite3_column_int64(st, 0)) / 1e6;
            const double gpus = static_cast<double>(sqlite3_column_int64(st, 2));
            const double usd = gpus * secs / 3600.0 * static_cast<double>(sqlite3_column_int64(st, 3)) / 1e6;
            out.total_usd += usd;
            if (sqlite3_column_int64(st, 4) != 0) {
              out.gpu_hours += gpus * secs / 3600.0;
              out.usd += usd;
            }
          });
  return out;
}

boost::asio::awaitable<void> ReadBill(providers::Provider* p, Time start, Time end,
                                      Result<providers::UsageReport>* out) {
  *out = co_await p->Usage(start, end);
}

// The observer's ledger against the simulator's bill. Before reconciliation: each
// resource-day loopwarden watched from its start, as first compared (usage_days). After:
// each reconciled day's Baseten ledger against the bill the simulator serves now.
bj::object ReadTruth(const std::string& db, int port) {
  std::vector<double> errors;
  int64_t backfill_days = 0;
  double backfilled = 0;
  std::set<int64_t> days;
  DbReader r(db);
  r.Query("SELECT u.billed, u.ledger, u.watched, u.day, res.provider FROM usage_days u "
          "JOIN resources res ON res.id = u.rid WHERE u.billed > ?1",
          0, [&](sqlite3_stmt* st) {
            const double billed = static_cast<double>(sqlite3_column_int64(st, 0));
            const double ledger = static_cast<double>(sqlite3_column_int64(st, 1));
            if (sqlite3_column_int64(st, 2) != 0) {
              errors.push_back(std::abs(ledger / billed - 1));
            } else {
              ++backfill_days;
              backfilled += (billed - ledger) / 1e6;
            }
            if (std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 4))) == "bt") {
              days.insert(sqlite3_column_int64(st, 3));
            }
          });
  std::sort(errors.begin(), errors.end());
  auto pct = [&](double q) { return errors.empty() ? 0.0 : errors[static_cast<size_t>(q * (errors.size() - 1))]; };
  const auto within = std::count_if(errors.begin(), errors.end(), [](double e) { return e <= 0.005; });
  // After: a private copy answers the same spend question `report` would.
  double worst = 0;
  auto copy = store::Store::OpenCopy(db, db + ".truth-copy");
  if (!copy.ok()) throw std::runtime_error(copy.status().message());
  for (int64_t us : days) {
    const Time day = FromUnixMicros(us);
    auto bill = testing::Fetch("GET", "http://127.0.0.1:" + std::to_string(port) +
                                          "/v1/billing/usage_summary?start_date=" + FormatTimeSeconds(day) +
                                          "&end_date=" + FormatTimeSeconds(day + std::chrono::hours(24)),
                               "", {{"Authorization", "Api-Key bt-week"}});
    if (!bill.ok() || bill->status != 200) throw std::runtime_error("the simulator's bill did not read");
    auto rows = providers::baseten::ParseUsageSummary(bill->body);
    if (!rows.ok()) throw std::runtime_error("the simulator's bill: " + rows.status().message());
    double billed = 0;
    for (const auto& u : *rows) billed += static_cast<double>(u.cost.micros()) / 1e6;
    auto ledger = (*copy)->Spend({.provider = "bt"}, day, day + std::chrono::hours(24));
    if (!ledger.ok() || billed <= 0) continue;
    worst = std::max(worst, std::abs(static_cast<double>(ledger->micros()) / 1e6 / billed - 1));
  }
  // Every resource-day of both bills, read through loopwarden's own adapters, against
  // the copy's ledger as it stands.
  std::vector<double> after;
  double unbilled_after = 0;
  {
    config::LoadOptions lo;
    lo.env = [](std::string_view k) -> std::optional<std::string> {
      if (k == "BT_KEY") return std::string("bt-week");
      if (k == "FW_KEY") return std::string("fw-week");
      return std::nullopt;
    };
    auto cfg = config::LoadConfigText("state_path: " + db + ".unused\n" + Providers(port), "truth.yaml", lo);
    if (!cfg.ok()) throw std::runtime_error(cfg.status().message());
    boost::asio::io_context ioc(1);
    auto clock = MakeRealClock();
    auto setup = reconcile::MakeSetup(ioc, *clock, std::move(*cfg));
    if (!setup.ok()) throw std::runtime_error(setup.status().message());
    for (const auto& p : (*setup)->providers) {
      std::set<int64_t> reconciled;
      r.Query("SELECT DISTINCT u.day FROM usage_days u JOIN resources res ON res.id = u.rid WHERE res.provider = '" +
                  p->name() + "' AND u.day > ?1",
              0, [&](sqlite3_stmt* st) { reconciled.insert(sqlite3_column_int64(st, 0)); });
      if (reconciled.empty()) continue;
      Result<providers::UsageReport> bill = Unavailable("not read");
      const Time from = FromUnixMicros(*reconciled.begin());
      const Time to = FromUnixMicros(*reconciled.rbegin()) + std::chrono::hours(24);
      boost::asio::co_spawn(ioc, ReadBill(p.get(), from, to, &bill), boost::asio::detached);
      ioc.restart();
      ioc.run();
      if (!bill.ok()) throw std::runtime_error(p->name() + " bill: " + bill.status().message());
      auto cmp = (*copy)->CompareUsage(p->name(), p->account(), bill->rows, from, to, (*setup)->prices);
      if (!cmp.ok()) throw std::runtime_error(cmp.status().message());
      for (const store::UsageComparison& c : *cmp) {
        if (c.billed.micros() > 0) {
          after.push_back(std::abs(static_cast<double>(c.ledger.micros()) / static_cast<double>(c.billed.micros()) - 1));
        } else {
          unbilled_after += std::abs(static_cast<double>(c.ledger.micros())) / 1e6;  // billed nothing
        }
      }
    }
  }
  std::sort(after.begin(), after.end());
  const auto after_within = std::count_if(after.begin(), after.end(), [](double e) { return e <= 0.005; });
  return bj::object{{"resource_days_after", static_cast<int64_t>(after.size())},
                    {"within_half_percent_after", static_cast<int64_t>(after_within)},
                    {"max_after", after.empty() ? 0.0 : after.back()},
                    {"unbilled_usd_after", unbilled_after},
                    {"watched_resource_days", static_cast<int64_t>(errors.size())},
                    {"within_half_percent", static_cast<int64_t>(within)},
                    {"p50", pct(0.5)}, {"p95", pct(0.95)}, {"max", pct(1.0)},
                    {"backfilled_resource_days", backfill_days}, {"backfilled_usd", backfilled},
                    {"reconciled_baseten_days", static_cast<int64_t>(days.size())},
                    {"reconciled_worst_day", worst}};
}

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

// The observer's forecast for a day budget, read at each simulated noon of the week's
// whole UTC days: "at this rate the day ends at $X".
class NoonForecasts {
 public:
  NoonForecasts(const Timeline& t, int admin_port) : t_(t), port_(admin_port) {
    thread_ = std::thread([this] { Run(); });
  }
  ~NoonForecasts() { Join(); }
  void Join() {
    if (thread_.joinable()) thread_.join();
  }
  // Day (UTC midnight) -> the day's forecast USD at its noon, and the week's.
  std::map<Time, double> taken;
  std::map<Time, double> week_at_noon;

 private:
  void Run() {
    const Time end = t_.epoch_time + std::chrono::hours(kWeekH);
    Time first = FloorToDay(t_.epoch_time);
    if (first < t_.epoch_time) first += std::chrono::hours(24);
    for (Time day = first; day + std::chrono::hours(24) <= end; day += std::chrono::hours(24)) {
      const Time noon = day + std::chrono::hours(12);
      const auto real = std::chrono::system_clock::time_point(std::chrono::seconds(t_.anchor)) +
                        std::chrono::duration_cast<std::chrono::system_clock::duration>((noon - t_.epoch_time) / t_.scale);
      std::this_thread::sleep_until(real);
      auto m = testing::Fetch("GET", "http://127.0.0.1:" + std::to_string(port_) + "/metrics");
      if (!m.ok()) continue;
      if (auto v = Sample(m->body, "day")) taken[day] = *v;
      if (auto v = Sample(m->body, "week")) week_at_noon[day] = *v;
    }
  }
  static std::optional<double> Sample(const std::string& metrics, const std::string& budget) {
    const std::string key = "loopwarden_budget_forecast_usd{budget=\"" + budget + "\"} ";
    const size_t at = metrics.find(key);
    if (at == std::string::npos) return std::nullopt;
    return std::stod(metrics.substr(at + key.size()));
  }
  Timeline t_;
  int port_;
  std::thread thread_;
};

bj::object RunMode(const Options& o, const std::string& mode, double scale, const FleetShape& shape = {},
                   uint64_t seed = 42) {
  // The simulated week is a calendar week (Monday 00:00 UTC on), so a weekly budget's
  // mid-period forecast can be held against the period's end.
  Timeline t = Timeline::Start(scale);
  t.epoch_time = ParseTime("2026-11-30T00:00:00Z").value();
  t.epoch = FormatTimeSeconds(t.epoch_time);
  std::unique_ptr<testing::Process> sim;
  // Its own files: `lw-bench all` runs fleet-week's loopwarden week and forecast-week in
  // one work directory, and a shared observer database would carry one week into the other.
  const std::string name = shape.name + "-" + mode;
  const int port = StartSimulator(o, name, Scenario(seed, shape), t, sim);
  const std::map<std::string, std::string> env = {{"BT_KEY", "bt-week"}, {"FW_KEY", "fw-week"}};
  const std::string observer_db = o.work_dir + "/" + name + "-observer.db";
  const int observer_port = FreePort();
  auto observer = StartLoopwarden(o, name + "-observer",
                                  "state_path: " + observer_db + "\npoll_interval: 5m\ndry_run: true\nlisten: 127.0.0.1:" +
                                      std::to_string(observer_port) + "\n" + Providers(port) +
                                      "policies:\n  - {name: day, budget: {period: day, limit_usd: 1000000}, action: notify}\n"
                                      "  - {name: week, budget: {period: week, limit_usd: 10000000}, action: notify}\n",
                                  t, false, env);
  NoonForecasts forecasts(t, observer_port);
  const std::string actor_config = "state_path: " + o.work_dir + "/" + name + "-actor.db\npoll_interval: 1m\n"
                                   "dry_run: false\nlisten: 127.0.0.1:0\n"
                                   // The blast-radius cap grows with the fleet: a cap hit acts on nothing.
                                   "limits: {max_actions_per_cycle: " + std::to_string(50 * shape.copies) +
                                   ", max_actions_percent: 100}\n" +
                                   Providers(port) + kPolicies;
  const auto week = std::chrono::milliseconds(static_cast<int64_t>(kWeekH * 3600.0 * 1000 / t.scale));
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<testing::Process> actor;
  int cron_runs = 0;
  if (mode == "loopwarden") actor = StartLoopwarden(o, name + "-actor", actor_config, t, false, env);
  if (mode == "cron") {
    // Every 5 simulated minutes, on the simulated schedule (a late run does not shift the next).
    const auto every = std::chrono::milliseconds(static_cast<int64_t>(300.0 * 1000 / t.scale));
    for (auto next = start; std::chrono::steady_clock::now() - start < week; next += every) {
      std::this_thread::sleep_until(next);
      auto once = StartLoopwarden(o, name + "-actor", actor_config, t, true, env);
      once->Wait(std::chrono::seconds(60));
      ++cron_runs;
    }
  } else {
    std::this_thread::sleep_until(start + week);
  }
  const Time until = t.epoch_time + std::chrono::hours(kWeekH);
  if (actor) {
    actor->Signal(SIGTERM);
    actor->Wait(std::chrono::seconds(30));
  }
  observer->Signal(SIGTERM);
  observer->Wait(std::chrono::seconds(30));
  int actions = 0;
  for (const auto& e : ReadJournal(port)) {
    const int64_t st = e.as_object().at("status").as_int64();
    actions += st >= 200 && st < 300;
  }
  forecasts.Join();
  bj::object truth = ReadTruth(observer_db, port);
  {
    // Each noon's forecast against the day as it ended (reconciled with the bill).
    auto copy = store::Store::OpenCopy(observer_db, observer_db + ".forecast-copy");
    if (!copy.ok()) throw std::runtime_error(copy.status().message());
    bj::array days;
    double worst = 0;
    for (const auto& [day, forecast] : forecasts.taken) {
      auto spent = (*copy)->Spend({}, day, day + std::chrono::hours(24));
      if (!spent.ok() || spent->micros() <= 0) continue;
      const double actual = static_cast<double>(spent->micros()) / 1e6;
      worst = std::max(worst, std::abs(forecast / actual - 1));
      days.push_back(bj::object{{"day", FormatTime(day).substr(0, 10)}, {"noon_forecast_usd", forecast},
                                {"day_usd", actual}});
    }
    truth["noon_forecasts"] = days;
    truth["noon_forecast_worst"] = worst;
    auto week = (*copy)->Spend({}, t.epoch_time, t.epoch_time + std::chrono::hours(kWeekH));
    // Thursday noon is the middle of the week.
    auto mid_week = forecasts.week_at_noon.find(t.epoch_time + std::chrono::hours(72));
    if (mid_week != forecasts.week_at_noon.end() && week.ok()) {
      truth["mid_week_forecast_usd"] = mid_week->second;
      truth["week_usd"] = static_cast<double>(week->micros()) / 1e6;
    }
    bj::array week_forecasts;
    for (const auto& [day, forecast] : forecasts.week_at_noon) {
      week_forecasts.push_back(bj::object{{"noon", FormatTime(day).substr(0, 10)}, {"week_forecast_usd", forecast}});
    }
    truth["week_forecasts_at_noon"] = week_forecasts;
  }
  std::cerr << "fleet-week " << mode << " spend truth: " << bj::serialize(truth) << "\n";
  sim->Signal(SIGTERM);
  sim->Wait(std::chrono::seconds(10));
  const Idle idle = ReadIdle(observer_db, until);
  std::cerr << "fleet-week " << mode << ": idle " << idle.gpu_hours << " GPU-h, $" << idle.usd << " of $" << idle.total_usd
            << ", " << actions << " provider calls\n";
  return bj::object{{"mode", mode},          {"idle_gpu_hours", idle.gpu_hours}, {"idle_usd", idle.usd},
                    {"total_gpu_usd", idle.total_usd}, {"actions", actions}, {"cron_runs", cron_runs},
                    {"spend_truth", truth}};
}

}  // namespace

// The forecast on a fleet at a steady pace: `forecast_copies` times the week's fleet,
// started evenly from a day before the week to its end, governed by loopwarden. The
// week's fleet starts its last runs at hour 150, so its last hours are quiet, and with
// ~185 resources the second half of a week differs from the first by chance alone
// (about 15 % of the spend); a forecast from the burn so far can be held to a period's
// end only where the pace holds.
bj::object RunForecastWeek(const Options& o) {
  const FleetShape shape{.name = "forecast", .copies = o.forecast_copies, .from_h = -24, .to_h = kWeekH, .sessions_to_h = kWeekH};
  bj::object out{{"scale", o.forecast_scale}, {"copies", shape.copies}, {"resources", 185 * shape.copies},
                 {"seed", o.forecast_seed}};
  out["run"] = RunMode(o, "loopwarden", o.forecast_scale, shape, static_cast<uint64_t>(o.forecast_seed));
  return out;
}

bj::object RunFleetWeek(const Options& o) {
  bj::object out{{"scale", o.week_scale}, {"resources", 185}};
  bj::array modes;
  for (const char* m : {"provider_defaults", "cron", "loopwarden"}) modes.push_back(RunMode(o, m, o.week_scale));
  out["modes"] = modes;
  const double a = modes[0].as_object().at("idle_usd").as_double();
  const double c = modes[2].as_object().at("idle_usd").as_double();
  out["loopwarden_vs_defaults"] = a > 0 ? c / a : 0;
  out["cron_vs_defaults"] = a > 0 ? modes[1].as_object().at("idle_usd").as_double() / a : 0;
  return out;
}

}  // namespace loopwarden::bench
