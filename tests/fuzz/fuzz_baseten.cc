// libFuzzer: every Baseten response parser on arbitrary JSON (and non-JSON).
#include <boost/json/parse.hpp>
#include <cstddef>
#include <cstdint>

#include "providers/baseten/parse.h"

using namespace loopwarden;
using namespace loopwarden::providers::baseten;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)ParseUsageSummary(std::string_view(reinterpret_cast<const char*>(data), size));  // its own reader, raw bytes
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(std::string_view(reinterpret_cast<const char*>(data), size), ec);
  if (ec) return 0;
  (void)ParseRuns(v);
  (void)ParseRunBody(v);
  (void)ParseSamplers(v);
  (void)ParseSamplerBody(v);
  (void)ParseLoopsDeployments(v);
  (void)ParseLoopsDeploymentBody(v);
  (void)ParseModels(v);
  (void)ParseDeployments(v);
  (void)ParseDeploymentBody(v);
  (void)ParseCheckpoints(v);
  (void)ParsePrices(v);
  const Time now = FromUnixMicros(1'780'000'000'000'000);
  (void)SummarizeTrainerMetrics(v, 0.05, now, std::chrono::minutes(10));
  if (auto counts = ParseRequestCounts(v); counts.ok()) (void)SummarizeRequestCounts(*counts);
  return 0;
}
