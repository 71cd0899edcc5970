#include "exporters/webhook.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <cstdlib>

#include "core/strings.h"

namespace loopwarden::exporters {
namespace {

namespace bj = boost::json;

std::string Hmac(std::string_view key, std::string_view msg) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(msg.data()),
       msg.size(), out, &len);
  return std::string(reinterpret_cast<char*>(out), len);
}

// The signing key: the base64 after "whsec_"; a secret in another form is used as it is.
std::string Key(std::string_view secret) {
  if (secret.rfind("whsec_", 0) == 0) {
    if (auto k = Base64Decode(secret.substr(6)); k.ok()) return *k;
  }
  return std::string(secret);
}

uint64_t Fnv(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

}  // namespace

std::string Base64Encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

Result<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) return InvalidArgument("base64 length is not a multiple of 4");
  std::string out(3 * text.size() / 4, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return InvalidArgument("not base64");
  size_t pad = 0;
  if (!text.empty() && text.back() == '=') ++pad;
  if (text.size() > 1 && text[text.size() - 2] == '=') ++pad;
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

std::string HmacSha256Hex(std::string_view key, std::string_view message) { return HexEncode(Hmac(key, message)); }

std::string StandardWebhookSignature(std::string_view secret, std::string_view id, std::string_view ts,
                                     std::string_view body) {
  const std::string msg = std::string(id) + "." + std::string(ts) + "." + std::string(body);
  return "v1," + Base64Encode(Hmac(Key(secret), msg));
}

Status VerifyStandardWebhook(std::string_view secret, std::string_view id, std::string_view ts,
                             std::string_view signatures, std::string_view body, Time now, Duration tolerance) {
  char* end = nullptr;
  const std::string t(ts);
  const long long sent = std::strtoll(t.c_str(), &end, 10);
  if (t.empty() || *end != '\0') return InvalidArgument("webhook-timestamp is not a number");
  const Time at = FromUnixSeconds(sent);
  if (at > now + tolerance || at < now - tolerance) return InvalidArgument("webhook-timestamp outside the tolerance");
  const std::string want = StandardWebhookSignature(secret, id, ts, body);
  for (const std::string& sig : Split(signatures, ' ')) {
    if (sig.size() == want.size() && CRYPTO_memcmp(sig.data(), want.data(), sig.size()) == 0) return Status::Ok();
  }
  return PermissionDenied("no webhook signature matches");
}

OutboundMessage BuildWebhookMessage(const std::vector<Event>& batch, std::string_view url, std::string_view secret,
                                    Time now) {
  bj::array events;
  std::string keys;
  for (const Event& e : batch) {
    keys += e.dedupe_key + "\n";
    bj::object o{{"type", e.type}, {"id", e.dedupe_key}, {"policy", e.policy}, {"resource", e.resource},
                 {"name", e.resource_name}, {"owner", e.owner}, {"kind", e.kind}, {"provider", e.provider},
                 {"action", e.action}, {"reason", e.reason}, {"dry_run", e.dry_run}, {"at", FormatTime(e.at)}};
    if (e.act_at) o["act_at"] = FormatTime(*e.act_at);
    events.push_back(std::move(o));
  }
  OutboundMessage m;
  m.url = std::string(url);
  m.body = bj::serialize(bj::object{{"type", "loopwarden.events"}, {"events", events}});
  char id[32];
  std::snprintf(id, sizeof id, "msg_%016llx", static_cast<unsigned long long>(Fnv(keys)));
  const std::string ts = std::to_string(ToUnixSeconds(now));
  m.headers = {{"Content-Type", "application/json"},
               {"webhook-id", id},
               {"webhook-timestamp", ts},
               {"webhook-signature", StandardWebhookSignature(secret, id, ts, m.body)}};
  return m;
}

DeliveryVerdict ClassifyWebhookResponse(int status, std::string_view retry_after) {
  DeliveryVerdict v;
  if (status >= 200 && status < 300) {
    v.delivery = Delivery::kOk;
  } else if (status == 410) {
    v.delivery = Delivery::kDisable;
    v.why = "410 Gone: the receiver asked to stop";
  } else if (status == 429 || status >= 500) {
    v.delivery = Delivery::kRetry;
    if (!retry_after.empty()) {
      v.retry_after = std::chrono::seconds(std::clamp<long>(std::strtol(std::string(retry_after).c_str(), nullptr, 10), 1, 300));
    }
    v.why = "HTTP " + std::to_string(status);
  } else {
    v.delivery = Delivery::kFail;
    v.why = "HTTP " + std::to_string(status);
  }
  return v;
}

}  // namespace loopwarden::exporters
