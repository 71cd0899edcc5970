#pragma once
// R12b, GET /v1/accounts/{a}/metrics: the account's Prometheus text exposition of every
// serving deployment's real-time rates. loopwarden reads the request rate per
// deployment from it, one scrape per account per poll.

#include <map>
#include <string>
#include <string_view>

#include "core/status.h"

namespace loopwarden::providers::fireworks {

// deployment id -> requests per second, summed over the request-rate samples
// (`request_counter_total…`) labelled with that deployment. A deployment the text does
// not mention is absent: unknown from this source, never zero. Bad lines are errors
// naming the line; comments, other families and a trailing timestamp are ignored.
Result<std::map<std::string, double, std::less<>>> ParseAccountMetrics(std::string_view text);

}  // namespace loopwarden::providers::fireworks
