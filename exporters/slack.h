#pragma once
// Slack incoming webhooks (CONVENTIONS.md §5.1): one message per batch of events of one
// policy, with a plain-text fallback, a header, a section per event (what, why, when it
// will act, how to snooze) and user-controlled text escaped.

#include <string_view>
#include <vector>

#include "exporters/notice.h"

namespace loopwarden::exporters {

// At most 45 event sections per message; the rest are summarized in one line.
OutboundMessage BuildSlackMessage(const std::vector<Event>& batch, std::string_view webhook_url);

// 200 with body "ok" is success; 429 is retried after Retry-After (capped at 60 s);
// 5xx is retried; any other answer, including a 200 with another body, is a failure.
DeliveryVerdict ClassifySlackResponse(int status, std::string_view body, std::string_view retry_after_header);

// &, < and > escaped so a resource name cannot ping a channel or hide a link.
std::string SlackEscape(std::string_view s);

}  // namespace loopwarden::exporters
