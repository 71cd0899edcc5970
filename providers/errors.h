#pragma once
// Provider errors, classified into the small set the daemon reacts to, from the status
// code and each error body shape both providers use (shared/providers §4).

#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "core/time.h"
#include "net/http.h"

namespace loopwarden::providers {

enum class ErrorClass {
  kNone,         // success
  kAuth,         // 401/403, UNAUTHENTICATED, PERMISSION_DENIED: never retried
  kNotFound,     // 404, NOT_FOUND
  kRateLimited,  // 429 with a retry hint, or request throttling: retry after the hint
  kCapacity,     // the shared pool is full: retry later, with a long backoff
  kQuota,        // org cap, slot cap, quota, tier, billing: retrying does not help
  kConflict,     // 409 (paired sampler, in use, ALREADY_EXISTS), FAILED_PRECONDITION: re-read
  kInvalid,      // 400 INVALID_ARGUMENT: a bug or bad input; no retry
  kTransient,    // 408, 5xx, resets, timeouts, malformed bodies: retry with backoff
  kUnknown,
};
std::string_view ErrorClassName(ErrorClass c);

struct ProviderError {
  ErrorClass cls = ErrorClass::kNone;
  int http_status = 0;  // 0 for transport failures
  // Finer grain: org_cap, slot_cap, quota, billing, capacity, paired, in_use, exists,
  // precondition, malformed, transport.
  std::string detail;
  std::string code;     // gRPC code name or ErrorInfo reason, when the body had one
  std::string message;  // the provider's text (redacted before it is shown anywhere)
  std::optional<Duration> retry_after;
  // Slot caps name the model and the numbers when they can.
  std::string model;
  std::optional<int64_t> in_use;
  std::optional<int64_t> limit;
  // The run a paired sampler belongs to (Baseten 409).
  std::string run_id;

  bool ok() const { return cls == ErrorClass::kNone; }
  bool retryable() const {
    return cls == ErrorClass::kRateLimited || cls == ErrorClass::kCapacity || cls == ErrorClass::kTransient;
  }
  std::string ToString() const;
};

// Classifies a Baseten response (2xx is kNone). `now` turns an HTTP-date Retry-After
// into a delay.
ProviderError ClassifyBaseten(const net::HttpResponse& res, Time now);
ProviderError ClassifyFireworks(const net::HttpResponse& res, Time now);
// A transport failure (no response at all).
ProviderError TransportFailure(const Status& s);

}  // namespace loopwarden::providers
