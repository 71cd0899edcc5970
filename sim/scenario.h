#pragma once
// Scenario files: the accounts, resources and activity a simulation starts from.
//
// A scenario is YAML (documented in the README, "Simulator scenarios"). Times are
// relative to the scenario epoch ("-2h", "+30m", "0s"), absolute RFC 3339, or
// "forever". A `generate:` section adds a random fleet built from a seed, so the same
// seed always gives the same fleet.

#include <string>
#include <string_view>

#include "core/status.h"
#include "sim/faults.h"
#include "sim/world.h"

namespace loopwarden::sim {

struct Scenario {
  Time epoch;
  World world;
  FaultConfig faults;
};

// Parses a scenario; `default_epoch` applies when the file names none (the simulator
// passes --epoch, or the start time). Errors name file:line:col.
Result<Scenario> LoadScenarioText(std::string_view text, std::string_view origin, Time default_epoch);
Result<Scenario> LoadScenarioFile(const std::string& path, Time default_epoch);

struct GenerateOptions {
  int resources = 1000;
  int accounts = 4;        // split between Baseten orgs and Fireworks accounts
  uint64_t seed = 1;
  double live_fraction = 0.05;  // resources still running at the epoch; the rest are history
};

// Adds a random fleet of `resources` across `accounts` to `world`, each with a key
// "bt-gen-<n>" / "fw-gen-<n>". Deterministic in the seed.
void GenerateFleet(World& world, Time epoch, const GenerateOptions& options);

}  // namespace loopwarden::sim
