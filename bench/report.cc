#include <sys/utsname.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "bench/bench.h"

namespace loopwarden::bench {

namespace bj = boost::json;

std::string Sh(const std::string& cmd) {
  std::array<char, 256> buf{};
  std::string out;
  std::unique_ptr<FILE, decltype(&pclose)> p(popen(cmd.c_str(), "r"), pclose);
  if (!p) return out;
  while (fgets(buf.data(), buf.size(), p.get())) out += buf.data();
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::string MachineDescription() {
  utsname u{};
  uname(&u);
  const std::string cpu = Sh("sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1");
  const std::string mem = Sh("awk '/MemTotal/ {printf \"%.0f GiB\", $2/1048576}' /proc/meminfo");
  return cpu + ", " + Sh("nproc") + " cores, " + mem + ", " + u.sysname + " " + u.release;
}

namespace {
std::string F(double v, int prec = 2) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}
double D(const bj::value& v) { return v.is_double() ? v.as_double() : static_cast<double>(v.to_number<int64_t>()); }
}  // namespace

std::string Markdown(const bj::object& r) {
  std::ostringstream md;
  md << "Measured " << (r.contains("date") ? std::string(r.at("date").as_string()) : "") << " on "
     << (r.contains("machine") ? std::string(r.at("machine").as_string()) : "") << ".\n\n";
  if (r.contains("scale")) {
    md << "### Full cycle (poll, ingest, evaluate) over generated fleets\n\n"
          "| resources | accounts | cycle | wall s | CPU s | provider requests | rows written | resource rows | of them transitions | listing complete | peak RSS MB | DB MB |\n"
          "|---:|---:|---|---:|---:|---:|---:|---:|---:|---|---:|---:|\n";
    for (const auto& row : r.at("scale").as_array()) {
      const auto& o = row.as_object();
      for (const char* which : {"cold", "steady"}) {
        const auto& c = o.at(which).as_object();
        md << "| " << o.at("size").to_number<int64_t>() << " | " << o.at("accounts").to_number<int64_t>() << " | " << which
           << " | " << F(D(c.at("wall_s"))) << " | " << F(D(c.at("cpu_s"))) << " | "
           << c.at("provider_requests").to_number<int64_t>() << " | " << c.at("rows_written").to_number<int64_t>() << " | "
           << c.at("resource_rows").to_number<int64_t>() << " | "
           << (c.contains("transitions") ? std::to_string(c.at("transitions").to_number<int64_t>()) : "") << " | "
           << (c.at("listing_complete").as_bool() ? "yes" : "no")
           << " | " << F(D(o.at("peak_rss_mb")), 0) << " | " << F(D(o.at("db_mb")), 1) << " |\n";
      }
    }
    md << "\n";
    bool naive = false;
    for (const auto& row : r.at("scale").as_array()) naive = naive || row.as_object().contains("naive_python");
    if (naive) {
      md << "Against a naive single-threaded Python poller of the same fleet (`bench/naive_poller.py`: "
            "stdlib HTTP and json, listings only, no metrics, spend or database):\n\n"
            "| resources | poll | Python CPU s | loopwarden CPU s | CPU ratio | Python peak RSS MB | loopwarden peak RSS MB | RSS ratio |\n"
            "|---:|---|---:|---:|---:|---:|---:|---:|\n";
      for (const auto& row : r.at("scale").as_array()) {
        const auto& o = row.as_object();
        if (!o.contains("naive_python")) continue;
        const auto& n = o.at("naive_python").as_object();
        for (const char* which : {"cold", "steady"}) {
          const double py = D(n.at(std::string(which) + "_cpu_s")), lw = D(o.at(which).as_object().at("cpu_s"));
          const double py_rss = D(n.at("peak_rss_mb")), lw_rss = D(o.at("peak_rss_mb"));
          md << "| " << o.at("size").to_number<int64_t>() << " | " << which << " | " << F(py) << " | " << F(lw) << " | "
             << F(lw > 0 ? py / lw : 0, 1) << "x | " << F(py_rss, 0) << " | " << F(lw_rss, 0) << " | "
             << F(lw_rss > 0 ? py_rss / lw_rss : 0, 2) << "x |\n";
        }
      }
      md << "\n";
    }
  }
  if (r.contains("latency")) {
    const auto& l = r.at("latency").as_object();
    md << "### Reaction latency, mark deadline to provider call\n\n"
          "| marks | acted | clock | p50 | p99 | max |\n|---:|---:|---|---:|---:|---:|\n"
       << "| " << l.at("marks").to_number<int64_t>() << " | " << l.at("acted").to_number<int64_t>() << " | simulated ("
       << F(D(l.at("scale")), 0) << "x) | " << F(D(l.at("p50_sim_s"))) << " s | " << F(D(l.at("p99_sim_s"))) << " s | "
       << F(D(l.at("max_sim_s"))) << " s |\n"
       << "| | | real time (÷ scale) | " << F(D(l.at("p50_real_s")), 3) << " s | " << F(D(l.at("p99_real_s")), 3)
       << " s | |\n\n";
  }
  if (r.contains("fleet_week")) {
    const auto& w = r.at("fleet_week").as_object();
    md << "### A simulated week of " << w.at("resources").to_number<int64_t>() << " resources\n\n"
          "| governance | idle GPU-hours | idle USD | GPU USD in all | provider calls |\n|---|---:|---:|---:|---:|\n";
    for (const auto& m : w.at("modes").as_array()) {
      const auto& o = m.as_object();
      std::string name(o.at("mode").as_string());
      if (name == "provider_defaults") name = "(a) providers' own timeouts";
      else if (name == "cron") name = "(b) cron, `run --once` every 5 min";
      else name = "(c) loopwarden";
      md << "| " << name << " | " << F(D(o.at("idle_gpu_hours")), 1) << " | " << F(D(o.at("idle_usd")), 0) << " | "
         << F(D(o.at("total_gpu_usd")), 0) << " | " << o.at("actions").to_number<int64_t>() << " |\n";
    }
    md << "\nIdle spend under loopwarden: **" << F(100 * D(w.at("loopwarden_vs_defaults")), 1)
       << " %** of the provider-default case (cron: " << F(100 * D(w.at("cron_vs_defaults")), 1) << " %).\n";
  }
  if (r.contains("forecast_week")) {
    const auto& w = r.at("forecast_week").as_object();
    const auto& t = w.at("run").as_object().at("spend_truth").as_object();
    md << "\n### Budget forecasts on a fleet at a steady pace (" << w.at("resources").to_number<int64_t>()
       << " resources, " << w.at("copies").to_number<int64_t>() << " copies of the week's fleet, seed "
       << w.at("seed").to_number<int64_t>() << ", " << F(D(w.at("scale")), 0) << "x)\n\n"
          "| day | day budget: forecast at noon | the day ended at | off | week budget: forecast at noon | off |\n"
          "|---|---:|---:|---:|---:|---:|\n";
    const double week = t.contains("week_usd") ? D(t.at("week_usd")) : 0;
    std::map<std::string, double> week_at;
    if (t.contains("week_forecasts_at_noon")) {
      for (const auto& x : t.at("week_forecasts_at_noon").as_array()) {
        week_at[std::string(x.as_object().at("noon").as_string())] = D(x.as_object().at("week_forecast_usd"));
      }
    }
    auto off = [](double forecast, double actual) {
      return actual > 0 ? (forecast >= actual ? "+" : "") + F(100 * (forecast / actual - 1), 1) + " %" : std::string("–");
    };
    for (const auto& d : t.at("noon_forecasts").as_array()) {
      const auto& o = d.as_object();
      const std::string day(o.at("day").as_string());
      md << "| " << day << " | " << F(D(o.at("noon_forecast_usd")), 0) << " | " << F(D(o.at("day_usd")), 0) << " | "
         << off(D(o.at("noon_forecast_usd")), D(o.at("day_usd"))) << " | ";
      if (auto it = week_at.find(day); it != week_at.end()) md << F(it->second, 0) << " | " << off(it->second, week) << " |\n";
      else md << "– | – |\n";
    }
    if (t.contains("mid_week_forecast_usd")) {
      md << "\nThe week ended at USD " << F(week, 0) << "; its forecast at Thursday noon, the middle of the week, was USD "
         << F(D(t.at("mid_week_forecast_usd")), 0) << " (" << off(D(t.at("mid_week_forecast_usd")), week) << ").\n";
    }
  }
  if (r.contains("ledger")) {
    const auto& l = r.at("ledger").as_object();
    md << "\n### The cycle's period spend over a long ledger\n\n"
          "| sessions | polls | ledger rows | running totals, per cycle | full scan, as each cycle did before |\n|---:|---:|---:|---:|---:|\n"
       << "| " << l.at("sessions").to_number<int64_t>() << " | " << l.at("polls").to_number<int64_t>() << " | "
       << l.at("ledger_rows").to_number<int64_t>() << " | " << F(D(l.at("running_totals_ms")), 1) << " ms | "
       << F(D(l.at("full_scan_ms")), 0) << " ms |\n";
  }
  return md.str();
}

}  // namespace loopwarden::bench
