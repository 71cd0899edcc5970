#pragma once
// lw-bench: loopwarden's benchmark harness. Each benchmark runs loopwarden-sim (and,
// for latency and fleet-week, loopwarden itself) as separate processes on loopback, and
// returns rows for the JSON and Markdown report.

#include <boost/json/value.hpp>
#include <string>
#include <vector>

namespace loopwarden::bench {

struct Options {
  std::string build_dir = "build/release";  // where loopwarden and loopwarden-sim are
  std::string work_dir;                     // scratch files
  std::vector<int> sizes = {1000, 10000, 100000};
  int marks = 1000;
  double latency_scale = 20;   // simulated seconds per real second
  double week_scale = 2400;
  // forecast-week: how many times the week's fleet, and its own clock. At 2400x a cycle
  // over thousands of resources takes simulated minutes and the actor falls behind.
  int forecast_copies = 20;
  double forecast_scale = 600;
  int forecast_seed = 42;  // forecast-week: the fleet's random seed
};

// Full cycles over generated fleets, cold and steady, measured in a child process each.
boost::json::array RunScale(const Options& o);
// One fleet size, in this process (the child of RunScale).
boost::json::object MeasureScale(const Options& o, int size);
// Mark deadline to provider call for `marks` marks expiring over a simulated hour.
boost::json::object RunLatency(const Options& o);
// Idle GPU-hours and USD over a simulated week: provider defaults, cron, loopwarden.
boost::json::object RunFleetWeek(const Options& o);
// Budget forecasts against the periods' ends on a fleet at a steady pace.
boost::json::object RunForecastWeek(const Options& o);
// The cycle's period spend over a day of busy sessions' token rows: running totals
// against a fresh scan of the ledger.
boost::json::object RunLedger(const Options& o);

// Markdown tables of everything measured.
std::string Markdown(const boost::json::object& results);

std::string Sh(const std::string& cmd);  // a command's stdout
std::string MachineDescription();

}  // namespace loopwarden::bench
