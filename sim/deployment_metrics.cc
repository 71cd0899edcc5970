#include "sim/deployment_metrics.h"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <cmath>
#include <cstdlib>
#include <set>

namespace loopwarden::sim {
namespace {

namespace bj = boost::json;
using net::HttpResponse;

HttpResponse Error(int status, const std::string& msg) {
  return net::JsonResponse(status, bj::serialize(bj::object{{"error", msg}}));
}

constexpr const char* kRequests = "baseten_inference_requests_total";
constexpr const char* kReplicas = "baseten_replicas_active";
constexpr const char* kLatency = "baseten_end_to_end_response_time_seconds";
constexpr int64_t kMaxWindowMs = 7LL * 86400 * 1000;
// The simulator's sampling grain: traffic and replicas are integrated minute by minute.
constexpr auto kGrain = std::chrono::seconds(60);

// What one bucket [a, b) holds.
struct Bucket {
  bool data = false;  // a replica was up at some instant of it
  double requests = 0;
  int max_replicas = 0;
};

Bucket Measure(const MetricsSource& src, Time a, Time b) {
  Bucket out;
  for (Time t = a; t < b; t += kGrain) {
    const Time next = std::min(b, t + kGrain);
    if (t < src.created) continue;
    const int up = src.replicas(t);
    out.max_replicas = std::max(out.max_replicas, up);
    if (up <= 0) continue;
    out.data = true;
    const Interval* i = At(*src.traffic, t);
    if (i) out.requests += i->rate * std::chrono::duration<double>(next - t).count() / 60.0;
  }
  out.requests = std::round(out.requests);
  return out;
}

bj::value Value(bool present, double v) { return present ? bj::value(v) : bj::value(nullptr); }

// One value set: per descriptor, one value per label set. Requests come in two label
// sets (2xx and 5xx) so a client has to sum them; the simulator never fails a request.
bj::array Values(const std::vector<std::string>& names, const Bucket& b) {
  bj::array out;
  for (const std::string& n : names) {
    if (n == kRequests) {
      out.push_back(bj::array{Value(b.data, b.requests), Value(b.data, 0)});
    } else if (n == kReplicas) {
      out.push_back(bj::array{static_cast<double>(b.max_replicas)});
    } else {
      const bool any = b.data && b.requests > 0;
      out.push_back(bj::array{Value(any, 0.21), Value(any, 0.64)});
    }
  }
  return out;
}

bj::object Descriptor(const std::string& n) {
  if (n == kRequests) {
    return {{"name", n}, {"unit_hint", "COUNT"}, {"kind", "COUNTER"},
            {"label_sets", bj::array{bj::object{{"status_code", "2xx"}}, bj::object{{"status_code", "5xx"}}}}};
  }
  if (n == kReplicas) return {{"name", n}, {"unit_hint", "COUNT"}, {"kind", "GAUGE"}, {"label_sets", bj::array{bj::object{}}}};
  return {{"name", n}, {"unit_hint", "SECONDS"}, {"kind", "HISTOGRAM"},
          {"label_sets", bj::array{bj::object{{"quantile", "0.5"}}, bj::object{{"quantile", "0.99"}}}}};
}

std::optional<int64_t> Millis(const net::HttpRequest& req, const char* key, std::string& error) {
  auto q = req.Query(key);
  if (!q) return std::nullopt;
  char* end = nullptr;
  const long long v = std::strtoll(q->c_str(), &end, 10);
  if (q->empty() || *end != '\0') {
    error = std::string(key) + " must be an integer (epoch milliseconds)";
    return std::nullopt;
  }
  return v;
}

}  // namespace

HttpResponse DeploymentMetricsV1(const net::HttpRequest& req, Time now, const MetricsSource& src) {
  const std::string mode = req.Query("mode").value_or("CURRENT");
  if (mode != "CURRENT" && mode != "SUMMARY" && mode != "SERIES") {
    return Error(400, "mode must be one of CURRENT, SUMMARY, SERIES");
  }
  std::string error;
  const std::optional<int64_t> start = Millis(req, "start_epoch_millis", error);
  const std::optional<int64_t> end = Millis(req, "end_epoch_millis", error);
  if (!error.empty()) return Error(400, error);
  std::vector<std::string> names;
  if (auto m = req.Query("metrics"); m && !m->empty()) {
    std::set<std::string> seen;
    size_t pos = 0;
    while (pos <= m->size()) {
      const size_t comma = std::min(m->find(',', pos), m->size());
      const std::string n = m->substr(pos, comma - pos);
      if (n != kRequests && n != kReplicas && n != kLatency) return Error(400, "unknown metric name: " + n);
      if (seen.insert(n).second) names.push_back(n);
      pos = comma + 1;
    }
  } else {
    names = {kReplicas, kRequests, kLatency};
  }

  const int64_t now_ms = ToUnixMillis(now);
  int64_t s_ms = 0, e_ms = 0;
  std::optional<int64_t> step_s;
  if (mode == "CURRENT") {
    if (start || end) return Error(400, "start_epoch_millis and end_epoch_millis must be omitted in CURRENT mode");
    // A snapshot: the last minute, as an instantaneous reading of a counter would.
    s_ms = now_ms - 60'000;
    e_ms = now_ms;
  } else {
    e_ms = end.value_or(now_ms);
    s_ms = start.value_or(e_ms - 3600'000);
    if (e_ms <= s_ms) return Error(400, "end_epoch_millis must be after start_epoch_millis");
    if (e_ms - s_ms > kMaxWindowMs) return Error(400, "the window between start and end must not exceed 7 days");
    e_ms = std::min(e_ms, now_ms);  // nothing is known of the future
    if (e_ms <= s_ms) e_ms = s_ms + 1;
  }

  bj::array sets;
  if (mode == "SERIES") {
    // The step follows the window: at most 360 value sets, whole minutes.
    const int64_t span_s = (e_ms - s_ms + 999) / 1000;
    step_s = std::max<int64_t>(60, (span_s / 360 + 59) / 60 * 60);
    for (int64_t t = s_ms; t < e_ms; t += *step_s * 1000) {
      const Bucket b = Measure(src, FromUnixMillis(t), FromUnixMillis(std::min(e_ms, t + *step_s * 1000)));
      sets.push_back(bj::object{{"start_epoch_millis", t}, {"values", Values(names, b)}});
    }
  } else {
    const Bucket b = Measure(src, FromUnixMillis(s_ms), FromUnixMillis(e_ms));
    sets.push_back(bj::object{{"start_epoch_millis", s_ms}, {"values", Values(names, b)}});
  }
  bj::array descriptors;
  for (const std::string& n : names) descriptors.push_back(Descriptor(n));
  bj::object body{{"start_epoch_millis", s_ms},
                  {"end_epoch_millis", e_ms},
                  {"mode", mode},
                  {"step_seconds", step_s ? bj::value(*step_s) : bj::value(nullptr)},
                  {"metric_descriptors", std::move(descriptors)},
                  {"metric_values", std::move(sets)}};
  return net::JsonResponse(200, bj::serialize(body));
}

}  // namespace loopwarden::sim
