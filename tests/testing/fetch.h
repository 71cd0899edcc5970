#pragma once
// One blocking HTTP request over loopback, for tests that talk to another process.

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <string>

#include "net/http_client.h"
#include "tests/testing/run_async.h"

namespace loopwarden::testing {

namespace detail {
inline boost::asio::awaitable<void> SendInto(net::HttpClient* c, net::HttpRequest req, Result<net::HttpResponse>* out) {
  *out = co_await c->Send(std::move(req));
}
}  // namespace detail

inline Result<net::HttpResponse> Fetch(const std::string& method, const std::string& url, const std::string& body = "",
                                       net::Headers headers = {}) {
  boost::asio::io_context ioc(1);
  auto client = net::HttpClient::Create(
      ioc, {.connect_timeout = std::chrono::seconds(5), .io_timeout = std::chrono::seconds(10)});
  if (!client.ok()) return client.status();
  net::HttpRequest req;
  req.method = method;
  req.url = url;
  req.body = body;
  req.headers = std::move(headers);
  if (!body.empty()) req.headers.emplace_back("Content-Type", "application/json");
  Result<net::HttpResponse> out = Unavailable("no answer");
  RunAsync(ioc, detail::SendInto(client->get(), std::move(req), &out), std::chrono::seconds(20));
  return out;
}

}  // namespace loopwarden::testing
