#pragma once
// Plain HTTP message types shared by the client and the server.
//
// These carry no Beast types, so the simulator's route handlers, the provider
// adapters' parsers and the daemon's admin handlers compile without Beast; only
// net/*.cc translate to and from Beast messages.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/time.h"

namespace loopwarden::net {

using Headers = std::vector<std::pair<std::string, std::string>>;

// Case-insensitive header lookup; empty when absent.
std::string_view FindHeader(const Headers& headers, std::string_view name);

struct HttpRequest {
  std::string method = "GET";
  // Client: an absolute URL ("https://api.baseten.co/v1/loops/runs?scope=org").
  // Server: the request target ("/v1/loops/runs?scope=org").
  std::string url;
  Headers headers;
  std::string body;
  // Client only: whether repeating the request is harmless. A request that is not
  // idempotent is never resent, not even on a stale pooled connection.
  bool idempotent = true;
  // Client only: send on a new connection, never a pooled one. For calls that change
  // something: on a pooled connection a failure cannot tell "the server had closed it"
  // from "the server did it and the answer was lost".
  bool fresh_connection = false;
  // Client only: when set, the request is not written after this moment; it fails as
  // never sent (kFailedPrecondition). Checked after connecting, right before the bytes
  // go out, so a slow connect cannot carry a deposed leader's call past its lease.
  std::optional<std::chrono::steady_clock::time_point> send_by;
  // Server only: the peer address.
  std::string remote;

  std::string_view Header(std::string_view name) const { return FindHeader(headers, name); }
  // Server: the target's path, percent-decoded; query removed.
  std::string Path() const;
  // Server: a query parameter, percent-decoded; nothing when absent.
  std::optional<std::string> Query(std::string_view key) const;
};

struct HttpResponse {
  int status = 200;
  Headers headers;
  std::string body;

  std::string_view Header(std::string_view name) const { return FindHeader(headers, name); }

  // Server-side misbehaviour, for the simulator's fault injection.
  enum class Fault { kNone, kReset, kTruncate };
  Fault fault = Fault::kNone;
  size_t truncate_at = 0;     // kTruncate: bytes of the serialized response sent before closing
  Duration delay{0};          // real time to wait before answering
};

HttpResponse JsonResponse(int status, std::string body);
HttpResponse TextResponse(int status, std::string body, std::string content_type = "text/plain; charset=utf-8");

// "%20" and friends; '+' stays '+'.
std::string PercentDecode(std::string_view s);
// Encodes everything outside unreserved characters.
std::string PercentEncode(std::string_view s);

}  // namespace loopwarden::net
