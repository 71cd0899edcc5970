#pragma once
// What the benchmarks share: starting the simulator and loopwarden as processes on one
// scaled timeline, and reading loopwarden's database afterwards.

#include <boost/json/array.hpp>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench.h"
#include "core/time.h"
#include "tests/testing/process.h"

namespace loopwarden::bench {

struct Timeline {
  double scale = 1;
  int64_t anchor = 0;  // Unix seconds
  std::string epoch;   // RFC 3339
  Time epoch_time;
  std::vector<std::string> Flags() const;
  static Timeline Start(double scale);
};

// Starts loopwarden-sim with `flags` (a scenario, --generate, a timeline); returns its port.
int StartSimulatorWith(const Options& o, const std::string& name, const std::vector<std::string>& flags,
                       std::unique_ptr<testing::Process>& sim);
// Starts loopwarden-sim with `scenario` on `t`; returns its port.
int StartSimulator(const Options& o, const std::string& name, const std::string& scenario, const Timeline& t,
                   std::unique_ptr<testing::Process>& sim);
// Starts `loopwarden run` (or with --once) with `config`; the environment supplies keys.
std::unique_ptr<testing::Process> StartLoopwarden(const Options& o, const std::string& name, const std::string& config,
                                                  const Timeline& t, bool once,
                                                  const std::map<std::string, std::string>& env);
// The simulator's journal of mutating calls; throws with the answer when it cannot be read.
boost::json::array ReadJournal(int port);
std::string GeneratedProviders(int accounts, int port);
std::optional<std::string> GeneratedKey(const std::string& env);
extern const char* kTypicalPolicies;

}  // namespace loopwarden::bench
