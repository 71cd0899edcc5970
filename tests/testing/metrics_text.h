#pragma once
// Reading samples back out of a Prometheus text exposition, for tests.
#include <sstream>
#include <string>

namespace loopwarden::testing {

// A sample's value in /metrics text, or -1 when absent. `series` is the name with its
// labels as rendered (`loopwarden_resources{kind="baseten.run",...}`).
inline double MetricSample(const std::string& metrics, const std::string& series) {
  std::istringstream in(metrics);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return -1;
}

}  // namespace loopwarden::testing
