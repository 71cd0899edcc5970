#pragma once
// An async HTTP/1.1 client on Beast and OpenSSL, one per provider.
//
// - Keep-alive pool per scheme://host:port; idle connections expire after
//   `idle_timeout`.
// - TLS is always verified: the system CAs plus `ca_file`, SNI for host names, and
//   host-name or IP verification of the peer certificate. An untrusted certificate is
//   an error (kUnauthenticated) whose message says why OpenSSL refused it.
// - Proxies as curl reads them (HTTPS_PROXY with CONNECT, HTTP_PROXY, NO_PROXY): see
//   net/proxy.h. A bad proxy variable fails Create().
// - A timeout per phase (connect, TLS handshake, write, read), in real time.
// - At most `max_connections` requests in flight at once; the rest wait their turn.
// - Cancellation: a cancelled awaiting coroutine ends the request at once with
//   operation_aborted (the connection is discarded).
//
// Send() makes one attempt. A request that fails on a pooled connection the server had
// closed is resent once on a fresh one, but only when it is idempotent. Retries for
// provider errors live in net/retry.h, where the caller's classification decides.
//
// Transport failures come back as a non-OK Status (kUnavailable: refused, reset,
// truncated; kDeadlineExceeded: a phase timed out; kUnauthenticated: TLS verification;
// kInvalidArgument: a bad URL or an oversized response). Any HTTP status is a response.
//
// Used from the io_context thread only.

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <optional>
#include <string>

#include "core/status.h"
#include "net/http.h"
#include "net/proxy.h"

namespace loopwarden::net {

struct ClientOptions {
  std::string ca_file;  // PEM bundle trusted in addition to the system store
  std::string ca_pem;   // the same, in memory (tests)
  bool use_system_cas = true;
  Duration connect_timeout = std::chrono::seconds(10);
  Duration io_timeout = std::chrono::seconds(30);  // each of handshake, write and read
  Duration idle_timeout = std::chrono::seconds(50);
  size_t max_connections = 8;
  size_t max_response_bytes = 64u << 20;
  std::string user_agent = "loopwarden";
  // Unset: read from the environment once, at Create().
  std::optional<ProxySettings> proxy;
};

struct ClientStats {
  uint64_t requests = 0;
  uint64_t connections_opened = 0;
  uint64_t connections_reused = 0;
  uint64_t failures = 0;
};

class HttpClient {
 public:
  // A bad CA file is an error naming it.
  static Result<std::unique_ptr<HttpClient>> Create(boost::asio::io_context& ioc, ClientOptions options);
  ~HttpClient();
  // Clients with the same trust settings share one TLS context (and one copy of the
  // CA bundle); tests ask.
  bool SharesTlsWith(const HttpClient& other) const;
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // When it fails, `delivery` (if given) says whether any of the request may have
  // reached the server: not when resolving, connecting, a proxy's CONNECT or TLS
  // failed, or `send_by` had passed; maybe once its bytes started going out. A call
  // that changes state and was maybe sent must not be repeated blindly.
  enum class Delivery { kNotSent, kMaybeSent };
  boost::asio::awaitable<Result<HttpResponse>> Send(HttpRequest request, Delivery* delivery = nullptr);
  // Closes idle pooled connections.
  void CloseIdle();
  const ClientStats& stats() const;
  // Requests waiting for a connection slot right now.
  size_t queued() const;

  struct Impl;

 private:
  explicit HttpClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace loopwarden::net
