#pragma once
// An HTTP/1.1 server on Beast for the simulator and the daemon's admin endpoints.
//
// Handlers are synchronous functions of a plain HttpRequest: the simulator's state and
// the daemon's admin state live on the same io_context thread, so a handler never needs
// to wait. Slow answers, resets and truncated bodies (fault injection) are described in
// the HttpResponse and carried out by the server.
//
// Bad requests never reach a handler: a malformed request gets 400, headers over the
// limit 431, a body over the limit 413. A request's headers must arrive within
// `header_timeout` (also the idle limit between keep-alive requests) and the rest within
// `read_timeout`. At `max_connections`, a new connection evicts the one that has waited
// longest for its headers (an idle keep-alive, or a slowloris), so a probe always gets
// through; only when every connection is mid-request is the new one closed.
//
// Used from the io_context thread only.

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/status.h"
#include "net/http.h"

namespace loopwarden::net {

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0: any free port; read it back with port()
  // PEM certificate and key: serve HTTPS only.
  std::optional<std::pair<std::string, std::string>> tls;
  size_t max_header_bytes = 16 * 1024;
  size_t max_body_bytes = 1 << 20;
  Duration header_timeout = std::chrono::seconds(30);
  Duration read_timeout = std::chrono::seconds(30);
  size_t max_connections = 1024;
};

using Handler = std::function<HttpResponse(const HttpRequest&)>;

// One request parsed from raw bytes with the server's parser and limits: what a handler
// would be given, or the status the server answers instead (400, 431, 413). For fuzzing
// and tests; the server itself parses from the socket.
struct ParsedRequest {
  std::optional<HttpRequest> request;
  int status = 0;  // when there is no request: 400 malformed, 431 headers too large, 413 body too large
};
ParsedRequest ParseHttpRequest(std::string_view raw, size_t max_header_bytes = 16 * 1024, size_t max_body_bytes = 1 << 20);

class HttpServer {
 public:
  // Binds and starts accepting at once, so the port is known when this returns. An
  // address in use or an unusable certificate is an error naming the address.
  static Result<std::unique_ptr<HttpServer>> Start(boost::asio::io_context& ioc, ServerOptions options,
                                                   Handler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  uint16_t port() const;
  // Stops accepting and closes every connection; pending handlers finish first.
  void Stop();
  // Requests answered so far, and requests refused before reaching the handler.
  uint64_t requests_served() const;
  uint64_t requests_rejected() const;

  struct Impl;

 private:
  explicit HttpServer(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace loopwarden::net
