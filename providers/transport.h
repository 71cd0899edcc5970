#pragma once
// One provider account's HTTP(S) transport: the connection pool and TLS of
// net::HttpClient, a request-rate budget for the provider and per endpoint class, and
// retries with full-jitter backoff for retryable failures of calls that are safe to
// repeat. 2xx bodies are parsed once here; a malformed one is a retryable failure.
//
// Used from the io_context thread only.

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>

#include "core/clock.h"
#include "net/http_client.h"
#include "net/rate_limiter.h"
#include "net/retry.h"
#include "providers/errors.h"
#include "providers/provider.h"

namespace loopwarden::providers {

struct TransportOptions {
  std::string base_url;
  net::Headers auth_headers;  // secret: never logged
  net::ClientOptions client;
  double requests_per_minute = 600;
  int burst = 20;
  // Endpoint classes with their own budget (Baseten model deployment (de)activation).
  std::map<std::string, double> class_per_minute;
  net::RetryPolicy retry;
  std::function<ProviderError(const net::HttpResponse&, Time)> classify;
  uint64_t seed = 1;
  SendGate send_gate;  // calls that change state ask it first
};

struct Call {
  // A constructor, not an aggregate: GCC 12 destroys brace-initialized aggregate
  // temporaries passed to coroutines twice.
  Call(std::string m, std::string p, std::string b = "", bool r = true, std::string cls = "")
      : method(std::move(m)), path(std::move(p)), body(std::move(b)), retry(r), endpoint_class(std::move(cls)) {}
  std::string method;
  std::string path;  // relative to base_url, with its query
  std::string body;
  // Whether repeating the call is harmless: retried on retryable failures and resent
  // on stale connections only then.
  bool retry;
  std::string endpoint_class;
  // Changes something at the provider. Sent on a fresh connection and never resent once
  // it may have reached the provider, even when repeating it would be harmless: whether
  // it happened is settled by reading the object (the executor's re-read), so one intent
  // is one call. Only answers that prove nothing happened (429, no connection) are retried.
  bool changes_state = false;
  // The 2xx body is text (Prometheus exposition), not JSON: left unparsed in `body`.
  bool text = false;
  // When set, a 2xx body is handed to it ("METHOD path" naming it in errors) instead of
  // being parsed into `json`: the caller reads it its own way (providers/simd_json.h),
  // and a refusal is a malformed reply, retried as one.
  // The body comes as the string it was read into: its room past the end spares the
  // parser a copy.
  std::function<Status(const std::string& body, std::string_view what)> read;
};

struct Reply {
  int status = 0;
  std::string body;
  // The arena `json` is parsed into (Transport::Send), owned here rather than through
  // `json`'s storage: Boost.JSON frees nothing node by node from an arena it does not
  // own, and walking each page's DOM only to free nothing was about 3 % of a steady
  // cycle's instructions. Declared before `json`, so it outlives it; a copy of the
  // Reply shares it.
  std::shared_ptr<boost::json::memory_resource> arena;
  boost::json::value json;  // parsed 2xx body (null otherwise)
  net::Headers headers;
  ProviderError error;      // kNone on success
  int attempts = 0;
  // The last attempt may have taken effect at the provider: it may have reached it, and
  // no answer proves it did nothing (a 429 does).
  bool maybe_sent = false;
  bool ok() const { return error.ok(); }

  Reply() = default;
  Reply(Reply&&) = default;
  Reply(const Reply&) = default;
  // `json` lives in its page's arena (Transport::Send). Boost.JSON's move assignment
  // between memory resources deep-copies onto the heap, so adopt the other's instead.
  // Lists every member: a new one must be added here too.
  Reply& operator=(Reply&& o) noexcept {
    if (this == &o) return *this;
    status = o.status;
    body = std::move(o.body);
    std::destroy_at(&json);  // before the arena it may live in
    arena = std::move(o.arena);
    std::construct_at(&json, std::move(o.json));
    headers = std::move(o.headers);
    error = std::move(o.error);
    attempts = o.attempts;
    maybe_sent = o.maybe_sent;
    return *this;
  }
  Reply& operator=(const Reply& o) { return *this = Reply(o); }
};

class Transport {
 public:
  static Result<std::unique_ptr<Transport>> Create(boost::asio::io_context& ioc, Clock& clock, TransportOptions options);
  boost::asio::awaitable<Reply> Send(Call call);
  // A call that changes state (`changes_state`, through the send gate), read as an
  // action's outcome: done; already done (404: gone or ended); unknown when the
  // request may have reached the provider and its answer was lost or retryable, so
  // the caller re-reads before believing either; failed when it never left; refused
  // otherwise. Both adapters carry out their actions through it.
  boost::asio::awaitable<ActionOutcome> Mutate(std::string method, std::string path, std::string body,
                                               std::string endpoint_class = "");
  const TransportStats& stats() const { return stats_; }
  Clock& clock() { return clock_; }

 private:
  Transport(Clock& clock, TransportOptions options, std::unique_ptr<net::HttpClient> client);
  Clock& clock_;
  TransportOptions options_;
  std::unique_ptr<net::HttpClient> client_;
  net::RateLimiter limiter_;
  std::map<std::string, std::unique_ptr<net::RateLimiter>> class_limiters_;
  std::mt19937_64 rng_;
  TransportStats stats_;
};

}  // namespace loopwarden::providers
