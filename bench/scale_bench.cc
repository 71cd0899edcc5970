// Full reconcile cycles (poll every account, ingest, evaluate) over generated fleets.
// Each size runs in its own child process so peak RSS is that size's alone; the
// simulator is a separate process too, so its CPU and memory are not counted.
#include <sys/resource.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string_view>

#include "bench/bench.h"
#include "bench/common.h"
#include "config/config.h"
#include "reconcile/reconciler.h"
#include "reconcile/setup.h"
#include "tests/testing/process.h"

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define LW_BENCH_HAS_CALLGRIND 1
#endif

namespace loopwarden::bench {

namespace bj = boost::json;
using testing::Process;

namespace {

struct Usage {
  double cpu = 0;
  double sys = 0;  // the kernel's part of cpu: page faults, socket reads
  long minor_faults = 0;
  long max_rss_kb = 0;
};
Usage Now() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  const double user = static_cast<double>(u.ru_utime.tv_sec) + u.ru_utime.tv_usec / 1e6;
  const double sys = static_cast<double>(u.ru_stime.tv_sec) + u.ru_stime.tv_usec / 1e6;
  return {user + sys, sys, u.ru_minflt, u.ru_maxrss};
}

// A field of /proc/self/status in kB (0 when unreadable).
long StatusKb(std::string_view field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with(field) && line.size() > field.size() && line[field.size()] == ':') {
      return std::strtol(line.c_str() + field.size() + 1, nullptr, 10);
    }
  }
  return 0;
}
long ResidentKb() { return StatusKb("VmRSS"); }
// The resident peak since the last ResetPeakKb (VmHWM).
long PeakKb() { return StatusKb("VmHWM"); }
// Starts VmHWM again from the current RSS (Linux 4.0+; where it cannot be written, the
// peak stays the process's, and a cycle's figure is the peak so far).
void ResetPeakKb() { std::ofstream("/proc/self/clear_refs") << "5"; }

boost::asio::awaitable<void> RunCycle(reconcile::Reconciler* r, reconcile::CycleReport* out) { *out = co_await r->Cycle(true); }

}  // namespace

bj::object MeasureScale(const Options& o, int size) {
  const int accounts = size <= 1000 ? 4 : size <= 10000 ? 10 : 20;
  std::unique_ptr<Process> sim;
  const int port = StartSimulatorWith(o, "scale-" + std::to_string(size),
                            {"--generate", std::to_string(size), "--accounts", std::to_string(accounts), "--seed", "1"}, sim);
  const std::string db = o.work_dir + "/scale-" + std::to_string(size) + ".db";
  const std::string yaml = "state_path: " + db + "\npoll_interval: 60s\ndry_run: true\nlisten: 127.0.0.1:0\n"
                           "limits: {max_actions_per_cycle: 100000, max_actions_percent: 100}\nproviders:\n" +
                           GeneratedProviders(accounts, port) +
                           "pricing: {gpu_hour_usd: {H100: 6.50, H200: 7.00, A100: 4.00, B200: 10.00}}\n" + kTypicalPolicies;
  config::LoadOptions lo;
  lo.env = [](const std::string& k) { return GeneratedKey(k); };
  auto cfg = config::LoadConfigText(yaml, "bench.yaml", lo);
  if (!cfg.ok()) throw std::runtime_error(cfg.status().message());
  boost::asio::io_context ioc(1);
  auto clock = MakeRealClock();
  auto store = store::Store::Open({.path = db});
  if (!store.ok()) throw std::runtime_error(store.status().message());
  auto setup = reconcile::MakeSetup(ioc, *clock, std::move(*cfg));
  if (!setup.ok()) throw std::runtime_error(setup.status().message());
  exporters::Metrics metrics;
  reconcile::Reconciler rec(*clock, **store, metrics, nullptr);
  rec.SetSetup(setup->get());

  // Each cycle's own peak (VmHWM reset before it), and the process's: their maximum
  // with what setup reached.
  long peak_kb = 0;
  auto cycle = [&] {
    peak_kb = std::max(peak_kb, PeakKb());
    ResetPeakKb();
    const Usage before = Now();
    const auto t0 = std::chrono::steady_clock::now();
    reconcile::CycleReport rep;
    boost::asio::co_spawn(ioc, RunCycle(&rec, &rep), [](std::exception_ptr e) { if (e) std::rethrow_exception(e); });
    ioc.restart();
    ioc.run();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const Usage after = Now();
    const long cycle_peak_kb = PeakKb();
    peak_kb = std::max(peak_kb, cycle_peak_kb);
    return bj::object{{"wall_s", wall},
                      {"cpu_s", after.cpu - before.cpu},
                      {"sys_s", after.sys - before.sys},
                      {"minor_faults", after.minor_faults - before.minor_faults},
                      {"provider_requests", rep.provider_requests},
                      {"rows_written", rep.ingest.rows_written()},
                      {"resource_rows", rep.ingest.resources_inserted + rep.ingest.resources_updated},
                      // A resource row written with a lifecycle or status change: the
                      // fleet changed, not loopwarden's bookkeeping.
                      {"transitions", rep.ingest.transitions},
                      {"resources", static_cast<int64_t>((*store)->resources().size())},
                      {"listing_complete", rep.complete},
                      {"decisions", static_cast<int64_t>(rep.decisions.size())},
                      // Resident now, after the cycle: what the process holds between
                      // cycles, against the cycle's peak below.
                      {"rss_after_mb", static_cast<double>(ResidentKb()) / 1024.0},
                      // The cycle's own resident peak: which cycle sets the process's.
                      {"peak_rss_mb", static_cast<double>(cycle_peak_kb) / 1024.0},
                      {"phases_s", bj::object{{"poll", rep.phases.poll},
                                              {"ingest", rep.phases.ingest},
                                              {"evaluate", rep.phases.evaluate},
                                              {"act", rep.phases.act},
                                              {"export", rep.phases.export_metrics}}}};
  };
  bj::object out{{"size", size}, {"accounts", accounts}};
  // `perf record -D -1 --control fifo:F` with LW_BENCH_PERF_CTL=F profiles the steady
  // cycles only (the cold one is a different program: inserts, first-sight history);
  // with LW_BENCH_PERF_COLD=1 as well, the cold cycle only.
  const char* ctl = std::getenv("LW_BENCH_PERF_CTL");
  const bool profile_cold = std::getenv("LW_BENCH_PERF_COLD") != nullptr;
  if (ctl && profile_cold) std::ofstream(ctl) << "enable\n" << std::flush;
  // LW_BENCH_CALLGRIND=cold counts the cold cycle instead (see below): about 4 minutes
  // at 100k under callgrind, and like the steady count, repeatable where CPU time is not.
  const char* callgrind = std::getenv("LW_BENCH_CALLGRIND");
  const bool count_cold = callgrind != nullptr && std::string_view(callgrind) == "cold";
#ifdef LW_BENCH_HAS_CALLGRIND
  if (count_cold) CALLGRIND_START_INSTRUMENTATION;
#endif
  out["cold"] = cycle();
#ifdef LW_BENCH_HAS_CALLGRIND
  if (count_cold) CALLGRIND_STOP_INSTRUMENTATION;
#endif
  // LW_BENCH_HOLD=1: stop after the cold cycle and one steady cycle without tearing
  // anything down, so under heaptrack the "leaked" figure and its stacks are what the
  // process holds between cycles (the peak alone mixes that with a cycle's transients).
  if (std::getenv("LW_BENCH_HOLD")) {
    cycle();
    sim->Signal(SIGTERM);
    sim->Wait(std::chrono::seconds(10));
    std::_Exit(0);
  }
  if (ctl) std::ofstream(ctl) << (profile_cold ? "disable\n" : "enable\n") << std::flush;
  // `valgrind --tool=callgrind --instr-atstart=no` with LW_BENCH_CALLGRIND=1 counts the
  // instructions of the three steady cycles only: repeatable where CPU time on a shared
  // VM is not (the cold cycle runs uninstrumented, so it costs little time).
  const bool count_steady = callgrind != nullptr && !count_cold;
#ifdef LW_BENCH_HAS_CALLGRIND
  if (count_steady) CALLGRIND_START_INSTRUMENTATION;
#else
  if (callgrind) std::cerr << "lw-bench: built without valgrind/callgrind.h; LW_BENCH_CALLGRIND ignored\n";
#endif
  // Steady: the same fleet polled again (the median of three cycles).
  std::vector<bj::object> steady;
  for (int i = 0; i < 3; ++i) steady.push_back(cycle());
#ifdef LW_BENCH_HAS_CALLGRIND
  if (count_steady) CALLGRIND_STOP_INSTRUMENTATION;
#endif
  std::sort(steady.begin(), steady.end(),
            [](const bj::object& a, const bj::object& b) { return a.at("wall_s").as_double() < b.at("wall_s").as_double(); });
  out["steady"] = steady[1];
  out["peak_rss_mb"] = static_cast<double>(std::max({peak_kb, PeakKb(), Now().max_rss_kb})) / 1024.0;
  std::error_code ec;
  auto fsize = [&](const std::string& p) { return std::filesystem::exists(p, ec) ? std::filesystem::file_size(p, ec) : 0; };
  out["db_mb"] = static_cast<double>(fsize(db) + fsize(db + "-wal")) / 1e6;
  sim->Signal(SIGTERM);
  sim->Wait(std::chrono::seconds(10));
  return out;
}

// bench/naive_poller.py against a fresh simulator of the same fleet: the script's own
// CPU and peak RSS, as it reports them.
bj::object MeasureNaive(const Options& o, int size, int accounts) {
  std::unique_ptr<Process> sim;
  const int port = StartSimulatorWith(o, "naive-" + std::to_string(size),
                                      {"--generate", std::to_string(size), "--accounts", std::to_string(accounts), "--seed", "1"}, sim);
  const std::string log = o.work_dir + "/naive-" + std::to_string(size) + ".out";
  auto py = Process::Start({"/usr/bin/env", "python3", std::string(LW_BENCH_SOURCE_DIR) + "/naive_poller.py", "--url",
                            "http://127.0.0.1:" + std::to_string(port), "--accounts", std::to_string(accounts), "--polls", "4"},
                           {}, log);
  const auto rc = py->Wait(std::chrono::minutes(20));
  sim->Signal(SIGTERM);
  sim->Wait(std::chrono::seconds(10));
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '{') last = line;
  }
  if (rc != std::optional<int>(0) || last.empty()) {
    std::cerr << "naive poller " << size << " failed (is python3 installed?):\n" << testing::ReadFile(log) << "\n";
    return {};
  }
  std::cerr << "naive " << size << ": " << last << "\n";
  return bj::parse(last).as_object();
}

bj::array RunScale(const Options& o) {
  bj::array rows;
  for (int size : o.sizes) {
    std::vector<std::string> argv = {"/proc/self/exe", "scale-one", "--build", o.build_dir, "--sizes", std::to_string(size)};
    char self[4096] = {0};
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) argv[0] = std::string(self, static_cast<size_t>(n));
    const std::string log = o.work_dir + "/scale-one-" + std::to_string(size) + ".out";
    auto child = Process::Start(argv, {}, log);
    if (!child->Wait(std::chrono::minutes(20)) ) throw std::runtime_error("scale " + std::to_string(size) + " did not finish");
    // The JSON is the last line that parses.
    std::ifstream in(log);
    std::string line, last;
    while (std::getline(in, line)) {
      if (!line.empty() && line[0] == '{' && line.find("\"size\"") != std::string::npos) last = line;
    }
    if (last.empty()) throw std::runtime_error("scale " + std::to_string(size) + " failed:\n" + testing::ReadFile(log));
    bj::object row = bj::parse(last).as_object();
    std::cerr << "scale " << size << ": " << last << "\n";
    if (bj::object naive = MeasureNaive(o, size, static_cast<int>(row.at("accounts").to_number<int64_t>())); !naive.empty()) {
      row["naive_python"] = std::move(naive);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace loopwarden::bench
