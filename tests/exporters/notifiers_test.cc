// Slack messages and responses, Standard Webhooks signing against the published
// vectors, and HMAC against the GitHub vector.
#include <doctest/doctest.h>

#include <boost/json/parse.hpp>

#include "exporters/slack.h"
#include "exporters/webhook.h"

using namespace loopwarden;
using namespace loopwarden::exporters;
using namespace std::chrono_literals;

namespace {

Event Marked(int i) {
  Event e;
  e.type = "marked";
  e.dedupe_key = "mark|idle|r" + std::to_string(i);
  e.policy = "idle-dedicated-trainers";
  e.resource = "bt/baseten.run/r" + std::to_string(i);
  e.resource_name = "sft <!channel> & co";
  e.owner = "bo@example.com";
  e.action = "deactivate";
  e.reason = "idle 47m >= 20m";
  e.act_at = ParseTime("2026-08-01T10:42:00Z").value();
  e.at = ParseTime("2026-08-01T10:32:00Z").value();
  return e;
}

}  // namespace

TEST_CASE("Slack: valid JSON, text fallback, header under 150 chars, at most 50 blocks, escaped names") {
  std::vector<Event> batch;
  for (int i = 0; i < 60; ++i) batch.push_back(Marked(i));
  OutboundMessage m = BuildSlackMessage(batch, "https://hooks.slack.com/services/T/B/x");
  CHECK(m.headers.at(0).second == "application/json");
  auto v = boost::json::parse(m.body);
  const auto& o = v.as_object();
  CHECK_FALSE(o.at("text").as_string().empty());
  const auto& blocks = o.at("blocks").as_array();
  CHECK(blocks.size() <= 50);
  CHECK(blocks[0].at("type") == "header");
  CHECK(blocks[0].at("text").at("text").as_string().size() <= 150);
  CHECK(std::string(blocks[0].at("text").at("text").as_string()) ==
        "loopwarden: idle-dedicated-trainers marked 60 resources to deactivate");
  const std::string first(blocks[1].at("text").at("text").as_string());
  CHECK(first.find("sft &lt;!channel&gt; &amp; co") != std::string::npos);
  CHECK(first.find("<!channel>") == std::string::npos);
  CHECK(first.find("Will deactivate at 2026-08-01T10:42:00Z") != std::string::npos);
  CHECK(first.find("loopwarden snooze bt/baseten.run/r0 --for 2h") != std::string::npos);
  CHECK(m.body.find("and 15 more") != std::string::npos);
}

TEST_CASE("Slack responses: ok, 429 with Retry-After, 4xx failures, a 200 that is not ok") {
  CHECK(ClassifySlackResponse(200, "ok", "").delivery == Delivery::kOk);
  auto limited = ClassifySlackResponse(429, "", "2");
  CHECK(limited.delivery == Delivery::kRetry);
  CHECK(limited.retry_after == Duration(2s));
  CHECK(ClassifySlackResponse(429, "", "600").retry_after == Duration(60s));  // capped
  CHECK(ClassifySlackResponse(400, "invalid_payload", "").delivery == Delivery::kFail);
  CHECK(ClassifySlackResponse(404, "channel_not_found", "").delivery == Delivery::kFail);
  CHECK(ClassifySlackResponse(200, "no_text", "").delivery == Delivery::kFail);
  CHECK(ClassifySlackResponse(500, "rollup_error", "").delivery == Delivery::kRetry);
}

TEST_CASE("Standard Webhooks: the published vector, verification, rotation, tolerance") {
  const std::string secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  const std::string sig = StandardWebhookSignature(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330",
                                                   R"({"test": 2432232314})");
  CHECK(sig == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  const Time at = FromUnixSeconds(1614265330);
  CHECK(VerifyStandardWebhook(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", "v1,old v1,xxx " + sig,
                              R"({"test": 2432232314})", at + 60s, 5min)
            .ok());
  CHECK(VerifyStandardWebhook(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", sig, R"({"test": 2432232315})", at,
                              5min)
            .code() == StatusCode::kPermissionDenied);
  CHECK(VerifyStandardWebhook(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", sig, R"({"test": 2432232314})",
                              at + 10min, 5min)
            .code() == StatusCode::kInvalidArgument);
}

TEST_CASE("GitHub-style HMAC vector, and base64 round trips") {
  CHECK("sha256=" + HmacSha256Hex("It's a Secret to Everybody", "Hello, World!") ==
        "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17");
  for (const std::string& s : std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\x00\xff\x10", 3)}) {
    CHECK(Base64Decode(Base64Encode(s)).value() == s);
  }
  CHECK_FALSE(Base64Decode("abc").ok());
}

TEST_CASE("webhook messages are signed, keep their id on resend, and 410 disables the endpoint") {
  std::vector<Event> batch{Marked(1), Marked(2)};
  const Time now = ParseTime("2026-08-01T10:32:00Z").value();
  auto m1 = BuildWebhookMessage(batch, "https://hooks.example.internal/x", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", now);
  auto m2 = BuildWebhookMessage(batch, "https://hooks.example.internal/x", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", now + 5min);
  auto header = [](const OutboundMessage& m, const std::string& k) {
    for (const auto& [n, v] : m.headers) {
      if (n == k) return v;
    }
    return std::string();
  };
  CHECK(header(m1, "webhook-id") == header(m2, "webhook-id"));
  CHECK(header(m1, "webhook-id").rfind("msg_", 0) == 0);
  CHECK(VerifyStandardWebhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", header(m1, "webhook-id"),
                              header(m1, "webhook-timestamp"), header(m1, "webhook-signature"), m1.body, now, 5min)
            .ok());
  auto body = boost::json::parse(m1.body);
  CHECK(body.at("events").as_array().size() == 2);
  CHECK(ClassifyWebhookResponse(204, "").delivery == Delivery::kOk);
  CHECK(ClassifyWebhookResponse(410, "").delivery == Delivery::kDisable);
  CHECK(ClassifyWebhookResponse(302, "").delivery == Delivery::kFail);
  CHECK(ClassifyWebhookResponse(503, "7").retry_after == Duration(7s));
}
