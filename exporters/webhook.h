#pragma once
// Generic webhooks signed with the Standard Webhooks scheme (CONVENTIONS.md §5.3):
// webhook-id, webhook-timestamp and webhook-signature "v1,<base64(HMAC-SHA256(key,
// "<id>.<timestamp>.<body>"))>", where the key is the base64 part of a whsec_ secret.

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "exporters/notice.h"

namespace loopwarden::exporters {

// One signed POST carrying the batch as {"type":"loopwarden.events","events":[…]}; its
// webhook-id is derived from the events' dedupe keys, so a resend keeps the same id.
OutboundMessage BuildWebhookMessage(const std::vector<Event>& batch, std::string_view url, std::string_view secret,
                                    Time now);

// "v1,<base64 signature>".
std::string StandardWebhookSignature(std::string_view secret, std::string_view id, std::string_view timestamp,
                                     std::string_view body);
// Verifies a request as a receiver would: any of the space-separated signatures, in
// constant time, with the timestamp within `tolerance` of `now`.
Status VerifyStandardWebhook(std::string_view secret, std::string_view id, std::string_view timestamp,
                             std::string_view signatures, std::string_view body, Time now, Duration tolerance);

// 2xx success; 410 disables the endpoint; 429 and 5xx retry; 3xx and other 4xx fail.
DeliveryVerdict ClassifyWebhookResponse(int status, std::string_view retry_after_header);

// Hex HMAC-SHA256, for GitHub-style "sha256=<hex>" and Slack "v0=" signatures.
std::string HmacSha256Hex(std::string_view key, std::string_view message);
std::string Base64Encode(std::string_view bytes);
Result<std::string> Base64Decode(std::string_view text);

}  // namespace loopwarden::exporters
