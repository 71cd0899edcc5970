// The Baseten adapter's detail caches as records the store keeps between processes:
// metrics summaries (so the next read is incremental, not a first sight), checkpoint
// listings and model deployment listings (raw bodies, parsed again on restore).
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "core/json.h"
#include "providers/baseten/adapter.h"

namespace loopwarden::providers::baseten {

namespace bj = boost::json;

namespace {

bj::value Us(const std::optional<Time>& t) { return t ? bj::value(ToUnixMicros(*t)) : bj::value(nullptr); }
std::optional<Time> FromUs(const bj::object& o, std::string_view key) {
  auto v = json::Int(o, key);
  return v ? std::optional<Time>(FromUnixMicros(*v)) : std::nullopt;
}

}  // namespace

std::string BasetenProvider::EncodeMetrics(const Metrics& m) {
  const ActivitySummary& s = m.summary;
  return bj::serialize(bj::object{{"window_us", std::chrono::duration_cast<std::chrono::microseconds>(m.window).count()},
                                  {"present", s.present},
                                  {"first", Us(s.first_point)},
                                  {"last_busy", Us(s.last_busy)},
                                  {"busy_latest", s.busy_latest},
                                  {"max_gpu", s.max_gpu},
                                  {"volume", s.total_volume}});
}

std::optional<BasetenProvider::Metrics> BasetenProvider::DecodeMetrics(const std::string& body, Time fetched) {
  boost::system::error_code ec;
  bj::value v = bj::parse(body, ec);
  if (ec || !v.is_object()) return std::nullopt;
  const bj::object& o = v.get_object();
  auto window = json::Int(o, "window_us");
  auto present = json::Bool(o, "present");
  if (!window || !present) return std::nullopt;
  Metrics m;
  m.fetched = fetched;
  m.ok = true;
  m.window = std::chrono::microseconds(*window);
  m.summary.present = *present;
  m.summary.first_point = FromUs(o, "first");
  m.summary.last_busy = FromUs(o, "last_busy");
  m.summary.busy_latest = json::Bool(o, "busy_latest").value_or(false);
  m.summary.max_gpu = json::Num(o, "max_gpu").value_or(0);
  m.summary.total_volume = json::Num(o, "volume").value_or(0);
  return m;
}

void BasetenProvider::RestoreDetails(const std::vector<DetailRecord>& records) {
  for (const DetailRecord& r : records) {
    if (r.key.size() < 3 || r.key[1] != ':') continue;
    const std::string id = r.key.substr(2);
    switch (r.key[0]) {
      case 'm':
        if (auto m = DecodeMetrics(r.body, r.fetched)) metrics_cache_[id] = *m;
        break;
      case 'c':
        if (auto p = ParseCheckpoints(r.body, "cached checkpoints"); p.ok()) {
          checkpoint_cache_[id] = Checkpoints{r.fetched, true, std::move(p->items)};
        }
        break;
      case 'd':
        if (auto p = ParseDeployments(r.body, "cached deployments"); p.ok()) {
          model_cache_[id] = ModelDeployments{r.fetched, true, std::move(p->items)};
        }
        break;
      default: break;
    }
  }
}

}  // namespace loopwarden::providers::baseten
