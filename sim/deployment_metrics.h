#pragma once
// Baseten R18, GET /v1/models/{m}/deployments/{d}/metrics, as documented
// (shared/providers/baseten.md R18): mode CURRENT | SUMMARY | SERIES, index-mapped
// metric_descriptors / metric_values, and null where there is no data.
//
// Used for inference deployments and for samplers (through their model_id and
// deployment_id). Internal to sim/.

#include <functional>
#include <vector>

#include "net/http.h"
#include "sim/world.h"

namespace loopwarden::sim {

struct MetricsSource {
  const std::vector<Interval>* traffic = nullptr;  // requests_per_min over time
  Time created;
  // Replicas up at an instant; no replica up means no data (null), not zero.
  std::function<int(Time)> replicas;
};

// Validates the query the way the documented API does (400 for a window in CURRENT
// mode, an unknown mode or metric name, a window over 7 days or ending before it
// starts) and renders the answer.
net::HttpResponse DeploymentMetricsV1(const net::HttpRequest& req, Time now, const MetricsSource& src);

}  // namespace loopwarden::sim
