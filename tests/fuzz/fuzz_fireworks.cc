// libFuzzer: every Fireworks response parser on arbitrary bytes (the resource bodies'
// readers and the bill's row-by-row one parse the text themselves; usageCosts takes
// arbitrary JSON), and the account metrics parser (Prometheus text).
#include <boost/json/parse.hpp>
#include <cstddef>
#include <cstdint>

#include "providers/fireworks/account_metrics.h"
#include "providers/fireworks/parse.h"

using namespace loopwarden::providers::fireworks;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ParseAccountMetrics(text);
  (void)ParseBillingUsage(text);  // its own streaming reader, on the raw bytes
  const std::string body(text);
  // The resource parsers read the text themselves (simdjson), malformed or not.
  (void)ParseSessions(body);
  (void)ParseSession(body);
  (void)ParseTrainingRuns(body);
  (void)ParseCheckpoints(body);
  (void)ParseJobs(body);
  (void)ParseJob(body);
  (void)ParseDeployments(body);
  (void)ParseDeployment(body);
  (void)ParseModels(body);
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(text, ec);
  if (ec) return 0;
  (void)ParseUsageCosts(v);
  return 0;
}
