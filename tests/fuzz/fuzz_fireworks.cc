// libFuzzer: every Fireworks response parser on arbitrary JSON, and the account metrics
// parser (Prometheus text) and the bill's row-by-row reader on the raw bytes.
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
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(std::string_view(reinterpret_cast<const char*>(data), size), ec);
  if (ec) return 0;
  (void)ParseSessions(v);
  (void)ParseSession(v);
  (void)ParseTrainingRuns(v);
  (void)ParseCheckpoints(v);
  (void)ParseJobs(v);
  (void)ParseJob(v);
  (void)ParseDeployments(v);
  (void)ParseDeployment(v);
  (void)ParseModels(v);
  (void)ParseUsageCosts(v);
  return 0;
}
