#include "providers/errors.h"

#include <algorithm>
#include <re2/re2.h>

#include "core/json.h"
#include "net/retry.h"

namespace loopwarden::providers {
namespace {

namespace bj = boost::json;

std::optional<Duration> HeaderRetryAfter(const net::HttpResponse& res, Time now) {
  const std::string_view h = res.Header("retry-after");
  if (h.empty()) return std::nullopt;
  return net::ParseRetryAfter(h, now);
}

const char* GrpcName(int64_t code) {
  static const char* kNames[] = {"OK",
                                 "CANCELLED",
                                 "UNKNOWN",
                                 "INVALID_ARGUMENT",
                                 "DEADLINE_EXCEEDED",
                                 "NOT_FOUND",
                                 "ALREADY_EXISTS",
                                 "PERMISSION_DENIED",
                                 "RESOURCE_EXHAUSTED",
                                 "FAILED_PRECONDITION",
                                 "ABORTED",
                                 "OUT_OF_RANGE",
                                 "UNIMPLEMENTED",
                                 "INTERNAL",
                                 "UNAVAILABLE",
                                 "DATA_LOSS",
                                 "UNAUTHENTICATED"};
  return code >= 0 && code <= 16 ? kNames[code] : "";
}

std::string Trunc(std::string s) {
  if (s.size() > 300) s = s.substr(0, 300) + "…";
  return s;
}

}  // namespace

std::string_view ErrorClassName(ErrorClass c) {
  switch (c) {
    case ErrorClass::kNone: return "none";
    case ErrorClass::kAuth: return "auth";
    case ErrorClass::kNotFound: return "not_found";
    case ErrorClass::kRateLimited: return "rate_limited";
    case ErrorClass::kCapacity: return "capacity";
    case ErrorClass::kQuota: return "quota";
    case ErrorClass::kConflict: return "conflict";
    case ErrorClass::kInvalid: return "invalid";
    case ErrorClass::kTransient: return "transient";
    case ErrorClass::kUnknown: return "unknown";
  }
  return "unknown";
}

std::string ProviderError::ToString() const {
  std::string s(ErrorClassName(cls));
  if (!detail.empty()) s += "/" + detail;
  if (http_status) s += " (HTTP " + std::to_string(http_status) + ")";
  if (!message.empty()) s += ": " + message;
  return s;
}

ProviderError TransportFailure(const Status& s) {
  ProviderError e;
  e.cls = s.code() == StatusCode::kUnauthenticated ? ErrorClass::kAuth
          : s.code() == StatusCode::kCancelled     ? ErrorClass::kUnknown
                                                   : ErrorClass::kTransient;
  e.detail = s.code() == StatusCode::kUnauthenticated ? "tls" : "transport";
  e.message = s.message();
  return e;
}

ProviderError ClassifyBaseten(const net::HttpResponse& res, Time now) {
  ProviderError e;
  e.http_status = res.status;
  if (res.status >= 200 && res.status < 300) return e;
  // {"error": "…"} is the documented shape; anything else is kept as raw text.
  const bj::object* body = nullptr;
  auto parsed = json::Parse(res.body, "error body");
  if (parsed.ok() && parsed->is_object()) body = &parsed->get_object();
  if (body) {
    e.message = json::Str(*body, "error").value_or("");
    if (e.message.empty()) {
      if (const bj::object* eo = json::Obj(*body, "error")) e.message = json::Str(*eo, "message").value_or("");
    }
  } else {
    e.message = Trunc(res.body);
  }
  const int s = res.status;
  if (s == 401 || s == 403) {
    e.cls = ErrorClass::kAuth;
  } else if (s == 404) {
    e.cls = ErrorClass::kNotFound;
  } else if (s == 409) {
    e.cls = ErrorClass::kConflict;
    if (body) e.run_id = json::Str(*body, "run_id").value_or("");
    if (e.run_id.empty()) {
      // RE2: provider text is matched in linear time, however long it is.
      static const RE2 kRun("paired to run ([a-z0-9]+)");
      std::string run;
      if (RE2::PartialMatch(e.message, kRun, &run)) e.run_id = run;
    }
    e.detail = (!e.run_id.empty() || e.message.find("paired") != std::string::npos) ? "paired" : "in_use";
  } else if (s == 400) {
    e.cls = ErrorClass::kInvalid;
  } else if (s == 402) {
    e.cls = ErrorClass::kQuota;
    e.detail = "billing";
  } else if (s == 429) {
    // Order matters (baseten.md §4): org_cap, then a retry hint, then capacity.
    std::string limit;
    if (body) {
      if (const bj::object* d = json::Obj(*body, "details")) limit = json::Str(*d, "limit").value_or("");
    }
    std::optional<Duration> field;
    if (body) {
      if (auto ra = json::Num(*body, "retry_after")) field = Duration(static_cast<int64_t>(*ra * 1e6));
    }
    const std::optional<Duration> header = HeaderRetryAfter(res, now);
    if (limit == "org_cap") {
      e.cls = ErrorClass::kQuota;
      e.detail = "org_cap";
    } else if (field || header) {
      e.cls = ErrorClass::kRateLimited;
      e.retry_after = std::max(field.value_or(Duration::zero()), header.value_or(Duration::zero()));
    } else {
      e.cls = ErrorClass::kCapacity;
      e.detail = "capacity";
    }
  } else if (s == 408 || s >= 500) {
    e.cls = ErrorClass::kTransient;
  } else {
    e.cls = ErrorClass::kUnknown;
  }
  return e;
}

ProviderError ClassifyFireworks(const net::HttpResponse& res, Time now) {
  ProviderError e;
  e.http_status = res.status;
  if (res.status >= 200 && res.status < 300) return e;
  std::string code, reason;
  auto parsed = json::Parse(res.body, "error body");
  if (parsed.ok() && parsed->is_object()) {
    const bj::object& o = parsed->get_object();
    if (auto c = json::Int(o, "code")) {  // shape 1: google.rpc.Status
      code = GrpcName(*c);
      e.message = json::Str(o, "message").value_or("");
      if (const bj::array* details = json::Arr(o, "details")) {
        for (const bj::value& d : *details) {
          if (d.is_object()) {
            if (auto r = json::Str(d.get_object(), "reason")) reason = *r;
          }
        }
      }
    } else if (const bj::object* err = json::Obj(o, "error")) {  // shapes 2 and 3, lenient 4
      e.message = json::Str(*err, "message").value_or("");
      code = json::Str(*err, "code").value_or("");
    } else if (auto msg = json::Str(o, "error")) {  // lenient {"error": "…"}
      e.message = *msg;
    }
  } else {
    e.message = Trunc(res.body);
  }
  e.code = reason.empty() ? code : reason;
  const int s = res.status;
  const std::string& m = e.message;
  static const RE2 kSlot(
      "maximum concurrent serverless training runs(?: for base model (\\S+))? exceeded(?:: in use (\\d{1,9}), limit (\\d{1,9}))?");
  std::string slot_model, slot_in_use, slot_limit;
  if (s == 401 || code == "UNAUTHENTICATED" || s == 403 || code == "PERMISSION_DENIED") {
    e.cls = ErrorClass::kAuth;
  } else if (s == 404 || code == "NOT_FOUND") {
    e.cls = ErrorClass::kNotFound;
  } else if (s == 409 || code == "ALREADY_EXISTS" || code == "ABORTED") {
    e.cls = ErrorClass::kConflict;
    e.detail = "exists";
  } else if (code == "FAILED_PRECONDITION") {
    e.cls = ErrorClass::kConflict;
    e.detail = "precondition";
  } else if (s == 402 || s == 412) {
    e.cls = ErrorClass::kQuota;
    e.detail = "billing";
  } else if (s == 429 && RE2::PartialMatch(m, kSlot, &slot_model, &slot_in_use, &slot_limit)) {
    // Shares RATE_LIMIT_EXCEEDED with throttling; only the text tells them apart.
    e.cls = ErrorClass::kQuota;
    e.detail = "slot_cap";
    e.model = slot_model;
    // At most nine digits each (the pattern): no overflow, no exception.
    if (!slot_in_use.empty()) e.in_use = std::stoll(slot_in_use);
    if (!slot_limit.empty()) e.limit = std::stoll(slot_limit);
  } else if (reason == "QUOTA_EXCEEDED" || reason == "TIER_REQUIRED") {
    e.cls = ErrorClass::kQuota;
    e.detail = "quota";
  } else if (reason == "INSUFFICIENT_CAPACITY" || (code == "RESOURCE_EXHAUSTED" && s != 429) ||
             m.find("out of capacity") != std::string::npos) {
    e.cls = ErrorClass::kCapacity;
    e.detail = "capacity";
  } else if (s == 429) {
    e.cls = ErrorClass::kRateLimited;
    e.retry_after = HeaderRetryAfter(res, now);
  } else if (s == 400 || code == "INVALID_ARGUMENT" || code == "OUT_OF_RANGE") {
    e.cls = ErrorClass::kInvalid;
  } else if (s == 408 || s >= 500 || code == "INTERNAL" || code == "UNAVAILABLE") {
    e.cls = ErrorClass::kTransient;
  } else {
    e.cls = ErrorClass::kUnknown;
  }
  return e;
}

}  // namespace loopwarden::providers
