// libFuzzer: every Baseten response parser on arbitrary JSON (and non-JSON).
#include <boost/json/parse.hpp>
#include <cstddef>
#include <cstdint>

#include "providers/baseten/parse.h"

using namespace loopwarden;
using namespace loopwarden::providers::baseten;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ParseUsageSummary(text);  // its own reader, raw bytes
  const std::string body(text);
  // The Loops listings, their objects, models and prices read the text themselves.
  (void)ParseRuns(body);
  (void)ParseRunBody(body);
  (void)ParseSamplers(body);
  (void)ParseSamplerBody(body);
  (void)ParseLoopsDeployments(body);
  (void)ParseLoopsDeploymentBody(body);
  (void)ParseModels(body);
  (void)ParsePrices(body);
  (void)ParseDeployments(body);
  (void)ParseDeploymentBody(body);
  (void)ParseCheckpoints(body);
  // A trimmed listing parses to the same items (checked in tests/providers; here, it
  // must not crash on anything).
  (void)ParseDeployments(TrimDeploymentsBody(body));
  (void)ParseCheckpoints(TrimCheckpointsBody(body));
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(text, ec);
  if (ec) return 0;
  const Time now = FromUnixMicros(1'780'000'000'000'000);
  (void)SummarizeTrainerMetrics(v, 0.05, now, std::chrono::minutes(10));
  if (auto counts = ParseRequestCounts(v); counts.ok()) (void)SummarizeRequestCounts(*counts);
  return 0;
}
