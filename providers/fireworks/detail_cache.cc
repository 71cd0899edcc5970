// The Fireworks adapter's detail cache as records the store keeps between processes:
// per session, how far its token spend has been read and the newest spend seen.
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "core/json.h"
#include "providers/fireworks/adapter.h"

namespace loopwarden::providers::fireworks {

namespace bj = boost::json;

std::string FireworksProvider::EncodeUsage(const SessionUsage& u) {
  return bj::serialize(bj::object{{"evaluated", ToUnixMicros(u.evaluated)},
                                  {"window_start", ToUnixMicros(u.window_start)},
                                  {"last_spend", u.last_spend ? bj::value(ToUnixMicros(*u.last_spend)) : bj::value(nullptr)}});
}

void FireworksProvider::RestoreDetails(const std::vector<DetailRecord>& records) {
  for (const DetailRecord& r : records) {
    if (r.key.rfind("u:", 0) != 0) continue;
    boost::system::error_code ec;
    bj::value v = bj::parse(r.body, ec);
    if (ec || !v.is_object()) continue;
    const bj::object& o = v.get_object();
    auto evaluated = json::Int(o, "evaluated");
    auto start = json::Int(o, "window_start");
    if (!evaluated || !start) continue;
    SessionUsage u;
    u.ok = true;
    u.evaluated = FromUnixMicros(*evaluated);
    u.window_start = FromUnixMicros(*start);
    if (auto last = json::Int(o, "last_spend")) u.last_spend = FromUnixMicros(*last);
    session_usage_[r.key.substr(2)] = u;
  }
}

}  // namespace loopwarden::providers::fireworks
