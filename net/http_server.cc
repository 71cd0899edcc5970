#include "net/http_server.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <sstream>
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "core/log.h"

namespace loopwarden::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using await_tuple = asio::as_tuple_t<asio::use_awaitable_t<>>;

struct HttpServer::Impl {
  Impl(asio::io_context& io, ServerOptions o, Handler h)
      : ioc(io), options(std::move(o)), handler(std::move(h)), acceptor(io) {}
  asio::io_context& ioc;
  ServerOptions options;
  Handler handler;
  tcp::acceptor acceptor;
  std::optional<ssl::context> ssl_ctx;
  std::unordered_set<beast::tcp_stream*> streams;
  // Connections waiting for a request's headers, with since when (eviction candidates).
  std::unordered_map<beast::tcp_stream*, std::chrono::steady_clock::time_point> waiting;
  bool stopped = false;
  uint64_t served = 0;
  uint64_t rejected = 0;
};

namespace {

// Keeps a connection's stream registered for Stop() while its coroutine runs.
struct StreamRegistration {
  StreamRegistration(HttpServer::Impl& impl, beast::tcp_stream* s) : impl_(impl), s_(s) { impl_.streams.insert(s_); }
  ~StreamRegistration() {
    impl_.streams.erase(s_);
    impl_.waiting.erase(s_);
  }
  HttpServer::Impl& impl_;
  beast::tcp_stream* s_;
};

int StatusForReadError(const beast::error_code& ec) {
  if (ec == http::error::header_limit) return 431;
  if (ec == http::error::body_limit) return 413;
  if (ec.category() == http::make_error_code(http::error::bad_target).category()) return 400;  // other parse errors
  return 0;  // transport problem: just drop the connection
}

HttpRequest ToRequest(const http::request<http::string_body>& req, const std::string& remote) {
  HttpRequest r;
  r.method = std::string(req.method_string());
  r.url = std::string(req.target());
  for (const auto& f : req) r.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
  r.body = req.body();
  r.remote = remote;
  return r;
}

}  // namespace

ParsedRequest ParseHttpRequest(std::string_view raw, size_t max_header_bytes, size_t max_body_bytes) {
  ParsedRequest out;
  http::request_parser<http::string_body> parser;
  parser.header_limit(static_cast<std::uint32_t>(max_header_bytes));
  parser.body_limit(max_body_bytes);
  parser.eager(true);
  beast::error_code ec;
  size_t offset = 0;
  // All the bytes there will ever be are in `raw`: after need_more, only put_eof may
  // follow (Beast asserts when put() is called again without new bytes).
  while (!parser.is_done() && offset < raw.size()) {
    const size_t n = parser.put(asio::buffer(raw.data() + offset, raw.size() - offset), ec);
    offset += n;
    if (ec == http::error::need_more) {
      ec = {};
      break;
    }
    if (ec || n == 0) break;
  }
  // put_eof on a parser that has seen nothing is an assertion in Beast (found by
  // fuzz_admin: tests/fuzz/regressions/admin/empty-input).
  if (!ec && !parser.is_done() && parser.got_some()) parser.put_eof(ec);
  if (ec || !parser.is_done()) {
    out.status = ec ? StatusForReadError(ec) : 400;
    if (out.status == 0) out.status = 400;
    return out;
  }
  out.request = ToRequest(parser.get(), "fuzz");
  return out;
}

namespace {

template <class Stream>
asio::awaitable<void> WriteError(Stream& stream, beast::tcp_stream& tcp, int status, Duration timeout) {
  http::response<http::string_body> res{static_cast<http::status>(status), 11};
  res.set(http::field::content_type, "application/json");
  res.set(http::field::connection, "close");
  res.body() = "{\"error\":\"" + std::string(http::obsolete_reason(static_cast<http::status>(status))) + "\"}";
  res.prepare_payload();
  tcp.expires_after(timeout);
  co_await http::async_write(stream, res, await_tuple{});
}

template <class Stream>
asio::awaitable<void> Serve(HttpServer::Impl& self, Stream& stream, beast::tcp_stream& tcp, std::string remote) {
  beast::flat_buffer buffer;
  auto ex = co_await asio::this_coro::executor;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(self.options.max_header_bytes));
    parser.body_limit(self.options.max_body_bytes);
    // Headers first, on their own short deadline: a client that trickles them (or sits
    // idle on a keep-alive connection) neither holds a slot long nor blocks /healthz.
    self.waiting[&tcp] = std::chrono::steady_clock::now();
    tcp.expires_after(self.options.header_timeout);
    auto [ec, n] = co_await http::async_read_header(stream, buffer, parser, await_tuple{});
    self.waiting.erase(&tcp);
    if (!ec && !parser.is_done()) {
      tcp.expires_after(self.options.read_timeout);
      auto [bec, bn] = co_await http::async_read(stream, buffer, parser, await_tuple{});
      ec = bec;
    }
    if (ec) {
      if (int status = StatusForReadError(ec); status != 0 && ec != http::error::end_of_stream && !self.stopped) {
        ++self.rejected;
        co_await WriteError(stream, tcp, status, self.options.read_timeout);
      }
      co_return;
    }
    const auto& req = parser.get();
    HttpResponse res;
    try {
      res = self.handler(ToRequest(req, remote));
    } catch (const std::exception& e) {
      // A handler bug must not take the server down; it answers 500 and says so once.
      Log().Error("http handler threw", {{"error", e.what()}, {"target", std::string(req.target())}});
      res = JsonResponse(500, "{\"error\":\"internal error\"}");
    }
    ++self.served;
    if (res.delay > Duration::zero()) {
      asio::steady_timer t(ex, res.delay);
      co_await t.async_wait(await_tuple{});
      if (self.stopped) co_return;
    }
    if (res.fault == HttpResponse::Fault::kReset) {
      beast::error_code ignored;
      tcp.socket().set_option(asio::socket_base::linger(true, 0), ignored);
      tcp.socket().close(ignored);
      co_return;
    }
    http::response<http::string_body> out{static_cast<http::status>(res.status), req.version()};
    out.set(http::field::server, "loopwarden");
    for (const auto& [k, v] : res.headers) out.set(k, v);
    out.body() = std::move(res.body);
    out.keep_alive(req.keep_alive());
    out.prepare_payload();
    tcp.expires_after(self.options.read_timeout);
    if (res.fault == HttpResponse::Fault::kTruncate) {
      std::ostringstream os;
      os << out;
      std::string raw = os.str();
      raw.resize(std::min(raw.size(), res.truncate_at));
      co_await asio::async_write(stream, asio::buffer(raw), await_tuple{});
      beast::error_code ignored;
      tcp.socket().shutdown(tcp::socket::shutdown_both, ignored);
      tcp.socket().close(ignored);
      co_return;
    }
    if (req.method() == http::verb::head) {
      // HEAD: the GET answer's headers, Content-Length included, and no body (RFC 9110).
      http::response_serializer<http::string_body> sr{out};
      auto [hec, hn] = co_await http::async_write_header(stream, sr, await_tuple{});
      if (hec || !out.keep_alive()) break;
      continue;
    }
    auto [wec, wn] = co_await http::async_write(stream, out, await_tuple{});
    if (wec || !out.keep_alive()) break;
  }
}

asio::awaitable<void> PlainSession(std::shared_ptr<HttpServer::Impl> self, tcp::socket socket) {
  beast::error_code ec;
  const auto ep = socket.remote_endpoint(ec);
  std::string remote = ec ? "" : ep.address().to_string() + ":" + std::to_string(ep.port());
  beast::tcp_stream stream(std::move(socket));
  StreamRegistration reg(*self, &stream);
  try {
    co_await Serve(*self, stream, stream, remote);
  } catch (const std::exception&) {
    // Connection-level failures end this connection only.
  }
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

asio::awaitable<void> TlsSession(std::shared_ptr<HttpServer::Impl> self, tcp::socket socket) {
  beast::error_code ec;
  const auto ep = socket.remote_endpoint(ec);
  std::string remote = ec ? "" : ep.address().to_string() + ":" + std::to_string(ep.port());
  ssl::stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), *self->ssl_ctx);
  StreamRegistration reg(*self, &stream.next_layer());
  try {
    stream.next_layer().expires_after(self->options.read_timeout);
    auto [hec] = co_await stream.async_handshake(ssl::stream_base::server, await_tuple{});
    if (hec) {
      ++self->rejected;  // a client that does not trust us, or speaks plain HTTP
      co_return;
    }
    co_await Serve(*self, stream, stream.next_layer(), remote);
    stream.next_layer().expires_after(std::chrono::seconds(2));
    co_await stream.async_shutdown(await_tuple{});
  } catch (const std::exception&) {
  }
}

asio::awaitable<void> AcceptLoop(std::shared_ptr<HttpServer::Impl> self) {
  auto ex = co_await asio::this_coro::executor;
  while (!self->stopped) {
    auto [ec, socket] = co_await self->acceptor.async_accept(await_tuple{});
    if (ec) {
      if (self->stopped || ec == asio::error::operation_aborted) co_return;
      // Out of descriptors and the like: pause instead of spinning.
      asio::steady_timer t(ex, std::chrono::milliseconds(50));
      co_await t.async_wait(await_tuple{});
      continue;
    }
    if (self->streams.size() >= self->options.max_connections) {
      beast::error_code ignored;
      if (self->waiting.empty()) {
        ++self->rejected;
        socket.close(ignored);
        continue;
      }
      // Make room: the connection that has waited longest for its headers goes.
      auto oldest = std::min_element(self->waiting.begin(), self->waiting.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
      ++self->rejected;
      oldest->first->socket().shutdown(tcp::socket::shutdown_both, ignored);
      oldest->first->socket().close(ignored);
      self->waiting.erase(oldest);
    }
    // Sessions are short-lived and catch everything themselves.
    if (self->ssl_ctx) {
      asio::co_spawn(ex, TlsSession(self, std::move(socket)), asio::detached);
    } else {
      asio::co_spawn(ex, PlainSession(self, std::move(socket)), asio::detached);
    }
  }
}

}  // namespace

HttpServer::HttpServer(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { Stop(); }

Result<std::unique_ptr<HttpServer>> HttpServer::Start(asio::io_context& ioc, ServerOptions options, Handler handler) {
  auto impl = std::make_shared<Impl>(ioc, options, std::move(handler));
  const std::string where = options.host + ":" + std::to_string(options.port);
  if (options.tls) {
    impl->ssl_ctx.emplace(ssl::context::tls_server);
    beast::error_code ec;
    impl->ssl_ctx->set_options(ssl::context::no_sslv2 | ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                               ssl::context::no_tlsv1_1);
    impl->ssl_ctx->use_certificate_chain(asio::buffer(options.tls->first), ec);
    if (!ec) impl->ssl_ctx->use_private_key(asio::buffer(options.tls->second), ssl::context::pem, ec);
    if (ec) return InvalidArgument("TLS certificate or key for " + where + " unusable: " + ec.message());
  }
  beast::error_code ec;
  auto address = asio::ip::make_address(options.host, ec);
  if (ec) return InvalidArgument("cannot listen on " + where + ": bad address");
  tcp::endpoint ep(address, options.port);
  impl->acceptor.open(ep.protocol(), ec);
  if (!ec) impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(ep, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Unavailable("cannot listen on " + where + ": " + ec.message());
  asio::co_spawn(ioc, AcceptLoop(impl), asio::detached);
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

uint16_t HttpServer::port() const {
  beast::error_code ec;
  auto ep = impl_->acceptor.local_endpoint(ec);
  return ec ? 0 : ep.port();
}

void HttpServer::Stop() {
  if (!impl_ || impl_->stopped) return;
  impl_->stopped = true;
  beast::error_code ignored;
  impl_->acceptor.close(ignored);
  for (beast::tcp_stream* s : impl_->streams) {
    s->socket().shutdown(tcp::socket::shutdown_both, ignored);
    s->socket().close(ignored);
  }
}

uint64_t HttpServer::requests_served() const { return impl_->served; }
uint64_t HttpServer::requests_rejected() const { return impl_->rejected; }

}  // namespace loopwarden::net
