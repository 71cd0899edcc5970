#pragma once
// Internal to sim/: what the route handlers of both provider APIs share.

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "net/http.h"
#include "sim/world.h"

namespace loopwarden::sim {

namespace bj = boost::json;

// Per-key, per-endpoint-class request windows on the simulated clock.
class RateWindows {
 public:
  // Records a request; returns the seconds to wait when it exceeds `limit` per
  // `window`, or 0 when it is allowed.
  int64_t Hit(const std::string& key, Time now, size_t limit, Duration window);
  void Clear() { windows_.clear(); }

 private:
  std::map<std::string, std::deque<Time>> windows_;
};

struct ApiContext {
  World& world;
  const net::HttpRequest& req;
  Time now;
  // Listings render state as of this instant for mutations (stale reads); equal to
  // `now` when no stale-read fault is active.
  Time list_cutoff;
  RateWindows& rates;
  bool capacity_full = false;  // Baseten create calls answer a capacity 429
  // Set by a handler that changed state; the simulator journals the call.
  bool mutated = false;
};

net::HttpResponse HandleBaseten(ApiContext& ctx);
net::HttpResponse HandleFireworks(ApiContext& ctx);

// Path split on '/', empty segments dropped.
std::vector<std::string> Segments(const std::string& path);
std::string Json(const bj::value& v);
// Hides API events after `cutoff`, so a listing can show the world as it was.
void MaskEvents(BtRun& r, Time cutoff);
void MaskEvents(BtSampler& s, Time cutoff);
void MaskEvents(BtDeployment& d, Time cutoff);
void MaskEvents(FwSession& s, Time cutoff);
void MaskEvents(FwRlorJob& j, Time cutoff);
void MaskEvents(FwDeployment& d, Time cutoff);

}  // namespace loopwarden::sim
