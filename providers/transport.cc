#include "providers/transport.h"

#include <boost/json/monotonic_resource.hpp>
#include <memory>

#include "core/json.h"

namespace loopwarden::providers {
namespace {

// A reply's DOM lives exactly as long as the reply and is read, never edited, so it
// comes from one arena freed at once: allocating and freeing each node was about a
// tenth of a 100k-resource steady cycle. Adapters copy what they keep into their own
// types, so no page's arena outlives the page.
std::shared_ptr<boost::json::monotonic_resource> ArenaFor(const std::string& body) {
  // A DOM takes roughly twice its text; one block for most pages.
  return std::make_shared<boost::json::monotonic_resource>(body.size() * 2 + 1024);
}

}  // namespace

Result<std::unique_ptr<Transport>> Transport::Create(boost::asio::io_context& ioc, Clock& clock, TransportOptions options) {
  LW_ASSIGN_OR_RETURN(std::unique_ptr<net::HttpClient> client, net::HttpClient::Create(ioc, options.client));
  return std::unique_ptr<Transport>(new Transport(clock, std::move(options), std::move(client)));
}

Transport::Transport(Clock& clock, TransportOptions options, std::unique_ptr<net::HttpClient> client)
    : clock_(clock),
      options_(std::move(options)),
      client_(std::move(client)),
      limiter_(clock, options_.requests_per_minute, options_.burst),
      rng_(options_.seed) {
  for (const auto& [cls, rpm] : options_.class_per_minute) {
    class_limiters_[cls] = std::make_unique<net::RateLimiter>(clock, rpm, 1);
  }
}

boost::asio::awaitable<Reply> Transport::Send(Call call) {
  Reply reply;
  Duration waited{0};
  for (int attempt = 1;; ++attempt) {
    co_await limiter_.Acquire();
    if (!call.endpoint_class.empty()) {
      if (auto it = class_limiters_.find(call.endpoint_class); it != class_limiters_.end()) co_await it->second->Acquire();
    }
    net::HttpRequest req;
    req.method = call.method;
    req.url = options_.base_url + call.path;
    req.headers = options_.auth_headers;
    req.headers.emplace_back("Accept", call.text ? "text/plain" : "application/json");
    if (!call.body.empty() || call.method == "POST" || call.method == "PATCH") {
      req.headers.emplace_back("Content-Type", "application/json");
      req.body = call.body;
    }
    req.idempotent = call.retry && !call.changes_state;
    req.fresh_connection = call.changes_state;
    if (call.changes_state && options_.send_gate) {
      Result<SendPermit> permit = options_.send_gate();
      if (!permit.ok()) {
        // Nothing happened, and a later leader may do it: a retryable failure.
        reply.error.cls = ErrorClass::kTransient;
        reply.error.detail = "not_leader";
        reply.error.message = "not sent: " + permit.status().message();
        reply.maybe_sent = false;
        reply.attempts = attempt;
        co_return reply;
      }
      req.send_by = permit->send_by;
      req.headers.emplace_back("X-Loopwarden-Lease", permit->lease);
    }
    ++stats_.requests;
    reply.attempts = attempt;
    net::HttpClient::Delivery delivery = net::HttpClient::Delivery::kMaybeSent;
    Result<net::HttpResponse> res = co_await client_->Send(std::move(req), &delivery);
    if (!res.ok()) {
      ++stats_.requests_by_class["transport"];
      reply.error = TransportFailure(res.status());
      // Only a failure before anything was written is known not to have reached it.
      reply.maybe_sent = delivery == net::HttpClient::Delivery::kMaybeSent;
      reply.status = 0;
      if (res.status().code() == StatusCode::kCancelled) co_return reply;
    } else {
      reply.status = res->status;
      reply.maybe_sent = reply.status != 429;
      ++stats_.requests_by_class[std::to_string(reply.status / 100) + "xx"];
      // Classified as received, then moved into the reply: building a response for the
      // classifier from the reply's fields copied every page's body (57 MB a steady
      // cycle at 100k resources).
      reply.error = options_.classify(*res, clock_.Now());
      reply.headers = std::move(res->headers);
      reply.body = std::move(res->body);
      if (reply.error.ok()) {
        if (call.read) {
          if (Status read = call.read(reply.body, call.method + " " + call.path); !read.ok()) {
            reply.error.cls = ErrorClass::kTransient;
            reply.error.detail = "malformed";
            reply.error.message = read.message();
          }
        } else if (call.text) {
          // The caller parses it.
        } else if (reply.body.empty()) {
          reply.json = boost::json::object();
        } else {
          auto arena = ArenaFor(reply.body);
          // A non-owning storage pointer: the Reply owns the arena (Reply::arena).
          auto v = json::Parse(reply.body, call.method + " " + call.path, 256 << 20, boost::json::storage_ptr(arena.get()));
          if (v.ok()) {
            // Move-construct, not move-assign (see Reply::operator=).
            std::destroy_at(&reply.json);
            reply.arena = std::move(arena);
            std::construct_at(&reply.json, std::move(*v));
          } else {
            // A 2xx we cannot read: as good as no answer.
            reply.error.cls = ErrorClass::kTransient;
            reply.error.detail = "malformed";
            reply.error.message = v.status().message();
          }
        }
      }
    }
    if (reply.error.ok()) co_return reply;
    ++stats_.errors_by_class[std::string(ErrorClassName(reply.error.cls))];
    const bool may_repeat = call.changes_state ? !reply.maybe_sent : call.retry;
    if (!may_repeat || !reply.error.retryable() || attempt >= options_.retry.max_attempts) co_return reply;
    const Duration delay = net::BackoffDelay(options_.retry, attempt, reply.error.retry_after, rng_);
    if (waited + delay > options_.retry.budget) co_return reply;
    waited += delay;
    ++stats_.retries;
    co_await clock_.SleepFor(delay);
  }
}

boost::asio::awaitable<ActionOutcome> Transport::Mutate(std::string method, std::string path, std::string body,
                                                        std::string endpoint_class) {
  ActionOutcome out;
  out.request = method + " " + path;
  Call call(std::move(method), std::move(path), std::move(body), false, std::move(endpoint_class));
  call.changes_state = true;
  Reply r = co_await Send(std::move(call));
  out.error = r.error;
  out.response = r.body.substr(0, 2048);
  if (r.ok()) {
    out.outcome = Outcome::kDone;
  } else if (r.error.cls == ErrorClass::kNotFound) {
    out.outcome = Outcome::kAlreadyDone;  // a repeat on something already gone or ended
  } else if (r.error.retryable() || r.error.cls == ErrorClass::kUnknown) {
    // Possibly done (the answer was lost, or a 5xx after it arrived): the caller re-reads.
    out.outcome = r.maybe_sent ? Outcome::kUnknown : Outcome::kFailed;
  } else {
    out.outcome = Outcome::kRefused;
  }
  co_return out;
}

}  // namespace loopwarden::providers
