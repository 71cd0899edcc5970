// Reaction latency: `marks` idle dedicated runs whose training ends at staggered times,
// so their marks' deadlines spread over a simulated hour; latency is the simulator's
// time of the deactivate call minus the deadline (marked_at + grace).
//
// On a clock running `scale` times faster, every real millisecond of work is `scale`
// simulated milliseconds, so latencies are reported both in simulated seconds and
// divided by the scale: what a real-time deployment would see.
#include <algorithm>
#include <boost/json/parse.hpp>
#include <iostream>

#include "bench/common.h"
#include "bench/db_read.h"
#include "tests/testing/fetch.h"

namespace loopwarden::bench {

namespace bj = boost::json;

namespace {

std::string Fleet(int n) {
  std::string y = "baseten:\n  - org: bench\n    keys: [{key: bt-bench, owner: ops@example.com, org_visible: true}]\n    runs:\n";
  char buf[512];
  for (int i = 0; i < n; ++i) {
    // Training ends between 20 minutes ago and 40 minutes from now: each run reaches
    // idle_for >= 20m at a different moment of the first simulated hour.
    const int end = -1200 + static_cast<int>(static_cast<int64_t>(i) * 3600 / n);
    std::snprintf(buf, sizeof buf,
                  "      - {id: rl%04d, name: lat-%04d, owner: ops@example.com, mode: dedicated, created: -3h,"
                  " instance_type: H100x8, nodes: 1, activity: [{from: -3h, to: %ds, gpu_util: 0.9}],"
                  " keepalive: [{from: -3h, to: forever}]}\n", i, i, end);
    y += buf;
  }
  return y;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5));
  return v[i];
}

}  // namespace

bj::object RunLatency(const Options& o) {
  const Timeline t = Timeline::Start(o.latency_scale);
  std::unique_ptr<testing::Process> sim;
  const int port = StartSimulator(o, "latency", Fleet(o.marks), t, sim);
  const std::string db = o.work_dir + "/latency.db";
  const std::string grace = "10m";
  const std::string config =
      "state_path: " + db + "\npoll_interval: 1m\ndry_run: false\nlisten: 127.0.0.1:0\n"
      "limits: {max_actions_per_cycle: 100000, max_actions_percent: 100}\nproviders:\n"
      "  - {name: bt, type: baseten, base_url: \"http://127.0.0.1:" + std::to_string(port) +
      "\", api_key_env: BT_KEY, requests_per_minute: 1000000, max_concurrency: 16, detail_calls_per_poll: 5000}\n"
      "pricing: {gpu_hour_usd: {H100: 6.50}}\n"
      "policies:\n  - {name: idle-trainers, resource: baseten.run, where: {mode: dedicated, lifecycle: running,"
      " idle_for: \">= 20m\"}, action: deactivate, grace: " + grace + "}\n";
  auto lw = StartLoopwarden(o, "latency", config, t, false, {{"BT_KEY", "bt-bench"}});
  // 1 simulated hour of deadlines after 30 minutes (20m idle + 10m grace), plus slack.
  const auto real = std::chrono::milliseconds(static_cast<int64_t>(85.0 * 60 * 1000 / t.scale));
  std::cerr << "latency: " << o.marks << " marks over a simulated hour at " << t.scale << "x ("
            << std::chrono::duration_cast<std::chrono::seconds>(real).count() << " s)\n";
  std::this_thread::sleep_for(real);
  lw->Signal(SIGTERM);
  lw->Wait(std::chrono::seconds(30));

  // Call times from the simulator's journal; deadlines from the intents' keys.
  std::map<std::string, Time> called;
  for (const auto& e : ReadJournal(port)) {
    const std::string path(e.as_object().at("path").as_string());
    const size_t a = path.find("/runs/"), b = path.find("/deactivate");
    if (a == std::string::npos || b == std::string::npos) continue;
    called.emplace(path.substr(a + 6, b - a - 6), *ParseTime(std::string(e.as_object().at("at").as_string())));
  }
  std::vector<double> lat;
  DbReader r(db);
  r.Query("SELECT resource, idempotency_key FROM intents WHERE state = 'done'", 0, [&](sqlite3_stmt* st) {
    const std::string res = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    const std::string key = reinterpret_cast<const char*>(sqlite3_column_text(st, 1));
    const std::string id = res.substr(res.rfind('/') + 1);
    const int64_t marked_us = std::stoll(key.substr(key.rfind('|') + 1));
    auto it = called.find(id);
    if (it == called.end()) return;
    const Time deadline = FromUnixMicros(marked_us) + std::chrono::minutes(10);
    lat.push_back(std::chrono::duration<double>(it->second - deadline).count());
  });
  sim->Signal(SIGTERM);
  sim->Wait(std::chrono::seconds(10));
  bj::object out{{"marks", o.marks}, {"acted", static_cast<int64_t>(lat.size())}, {"scale", t.scale}};
  out["p50_sim_s"] = Percentile(lat, 0.5);
  out["p99_sim_s"] = Percentile(lat, 0.99);
  out["max_sim_s"] = lat.empty() ? 0 : *std::max_element(lat.begin(), lat.end());
  out["min_sim_s"] = lat.empty() ? 0 : *std::min_element(lat.begin(), lat.end());
  out["p50_real_s"] = Percentile(lat, 0.5) / t.scale;
  out["p99_real_s"] = Percentile(lat, 0.99) / t.scale;
  return out;
}

}  // namespace loopwarden::bench
