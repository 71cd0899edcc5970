#include "net/http_client.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/url/parse.hpp>
#include <map>
#include <mutex>
#include <vector>

#include <sys/stat.h>

#include "net/async_semaphore.h"

namespace loopwarden::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using await_tuple = asio::as_tuple_t<asio::use_awaitable_t<>>;

namespace {

struct Target {
  bool tls = false;
  std::string host;
  std::string port;
  std::string path;  // origin-form target
  const ProxyEndpoint* proxy = nullptr;  // null: direct
  std::string origin() const {
    const bool v6 = host.find(':') != std::string::npos;
    return (tls ? "https://" : "http://") + (v6 ? "[" + host + "]" : host) + ":" + port;
  }
  // host:port as CONNECT names it (RFC 9110 authority-form).
  std::string authority() const { return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + port; }
  std::string key() const { return proxy ? origin() + " via " + proxy->display : origin(); }
};

Result<Target> ParseTarget(const std::string& url) {
  auto u = boost::urls::parse_uri(url);
  if (!u) return InvalidArgument("bad URL '" + url + "'");
  Target t;
  const std::string scheme(u->scheme());
  if (scheme == "https") {
    t.tls = true;
  } else if (scheme != "http") {
    return InvalidArgument("unsupported URL scheme '" + scheme + "'");
  }
  t.host = std::string(u->host());
  // IPv6 literals come back bracketed; the resolver wants them bare.
  if (!t.host.empty() && t.host.front() == '[') t.host = t.host.substr(1, t.host.size() - 2);
  t.port = u->has_port() ? std::string(u->port()) : (t.tls ? "443" : "80");
  t.path = std::string(u->encoded_path());
  if (t.path.empty()) t.path = "/";
  if (u->has_query()) t.path += "?" + std::string(u->encoded_query());
  if (t.host.empty()) return InvalidArgument("URL without host '" + url + "'");
  return t;
}

bool IsIpLiteral(const std::string& host) {
  beast::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

// A response body read into a std::string by appending. Beast's string_body grows the
// string with resize(), which zero-fills each piece before copying it in: about 1.5 %
// of a 100k-resource steady cycle's instructions went to that memset. With a
// Content-Length the string is reserved once, as string_body does, with 64 bytes more:
// the providers' parser (simdjson) reads in 64-byte blocks, and with that room past the
// end it reads the body where it is instead of copying it first.
struct AppendedStringBody {
  static constexpr size_t kParsePadding = 64;
  using value_type = std::string;

  static std::uint64_t size(const value_type& body) { return body.size(); }

  class reader {
   public:
    template <bool isRequest, class Fields>
    reader(http::header<isRequest, Fields>&, value_type& body) : body_(body) {}

    void init(const boost::optional<std::uint64_t>& length, beast::error_code& ec) {
      if (length) {
        if (*length > body_.max_size()) {
          ec = http::error::buffer_overflow;
          return;
        }
        body_.reserve(static_cast<size_t>(*length) + kParsePadding);
      }
      ec = {};
    }

    template <class ConstBufferSequence>
    size_t put(const ConstBufferSequence& buffers, beast::error_code& ec) {
      const size_t extra = beast::buffer_bytes(buffers);
      if (extra > body_.max_size() - body_.size()) {
        ec = http::error::buffer_overflow;
        return 0;
      }
      for (auto b : beast::buffers_range_ref(buffers)) body_.append(static_cast<const char*>(b.data()), b.size());
      ec = {};
      return extra;
    }

    void finish(beast::error_code& ec) { ec = {}; }

   private:
    value_type& body_;
  };
};

// One pooled connection, plain or TLS.
class Conn {
 public:
  virtual ~Conn() = default;
  virtual asio::awaitable<beast::error_code> Write(http::request<http::string_body>& req, Duration timeout) = 0;
  virtual asio::awaitable<beast::error_code> Read(http::response_parser<AppendedStringBody>& p, Duration timeout) = 0;
  virtual void Close() = 0;
  std::chrono::steady_clock::time_point last_used;
  // Beast reads at most the buffer's free capacity per read (and 512 bytes when it has
  // none), and an unreserved buffer stays small (it grows only to fit what is not yet
  // parsed): a poll of 100k resources made 22 recvmsg calls per request, and 0.45 s of
  // a 1.25 s steady cycle went on them and the reads around them.
  // Reserved for each exchange it makes 1.7. (64 KB saved no more CPU and cost 14 MB
  // across a daemon's connections.) An idle connection gives it back: a daemon of 20
  // accounts keeps up to 320 connections pooled between polls, 5 MB of empty buffers.
  static constexpr size_t kReadBufferBytes = 16 * 1024;
  beast::flat_buffer buffer;

  void ReserveBuffer() {
    if (buffer.capacity() < kReadBufferBytes) buffer.reserve(kReadBufferBytes);
  }
  // Bytes past the last response (none from a server that answers one request at a
  // time) stay with the connection.
  void ReleaseBuffer() {
    if (buffer.size() == 0) buffer = beast::flat_buffer();
  }
};

template <class Stream>
class ConnImpl : public Conn {
 public:
  template <class... Args>
  explicit ConnImpl(Args&&... args) : stream(std::forward<Args>(args)...) {}
  beast::tcp_stream& tcp() { return beast::get_lowest_layer(stream); }
  asio::awaitable<beast::error_code> Write(http::request<http::string_body>& req, Duration timeout) override {
    tcp().expires_after(timeout);
    auto [ec, n] = co_await http::async_write(stream, req, await_tuple{});
    co_return ec;
  }
  asio::awaitable<beast::error_code> Read(http::response_parser<AppendedStringBody>& p, Duration timeout) override {
    tcp().expires_after(timeout);
    ReserveBuffer();
    auto [ec, n] = co_await http::async_read(stream, buffer, p, await_tuple{});
    co_return ec;
  }
  void Close() override {
    beast::error_code ignored;
    tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
    tcp().socket().close(ignored);
  }
  Stream stream;
};

using PlainConn = ConnImpl<beast::tcp_stream>;
using TlsConn = ConnImpl<ssl::stream<beast::tcp_stream>>;

Status TransportError(const beast::error_code& ec, const std::string& phase, const std::string& where) {
  if (ec == asio::error::operation_aborted) return Cancelled(phase + " " + where + " cancelled");
  if (ec == beast::error::timeout) return DeadlineExceeded(phase + " " + where + " timed out");
  if (ec == http::error::body_limit) return InvalidArgument("response from " + where + " too large");
  return Unavailable(phase + " " + where + " failed: " + ec.message());
}

// Whether an error on a reused connection means the server had already closed it, so
// the request never reached it (safe to resend when idempotent).
bool StaleConnection(const beast::error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset ||
         ec == asio::error::broken_pipe || ec == asio::ssl::error::stream_truncated;
}

// One TLS client context per distinct trust setting, shared by every client of the
// process. Each context holds its own copy of the system CA bundle (about 0.9 MB) and a
// daemon has a client per provider account: 20 accounts held 17 MB of identical copies.
// A CA file is keyed with its size and modification time, so a rotated file is read
// again by the clients a reload creates.
Result<std::shared_ptr<ssl::context>> SharedTlsContext(const ClientOptions& o) {
  std::string key = std::string(o.use_system_cas ? "system" : "") + "|" + o.ca_file;
  if (struct stat st {}; !o.ca_file.empty() && ::stat(o.ca_file.c_str(), &st) == 0) {
    key += "|" + std::to_string(st.st_size) + "|" + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec);
  }
  key += "|" + o.ca_pem;
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<ssl::context>> contexts;
  std::lock_guard<std::mutex> lock(mu);
  for (auto it = contexts.begin(); it != contexts.end();) {
    it = it->second.expired() ? contexts.erase(it) : std::next(it);
  }
  if (auto it = contexts.find(key); it != contexts.end()) return it->second.lock();
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  beast::error_code ec;
  ctx->set_options(ssl::context::no_sslv2 | ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                   ssl::context::no_tlsv1_1);
  if (o.use_system_cas) ctx->set_default_verify_paths(ec);
  if (!o.ca_file.empty()) {
    ctx->load_verify_file(o.ca_file, ec);
    if (ec) return InvalidArgument("cannot load CA file " + o.ca_file + ": " + ec.message());
  }
  if (!o.ca_pem.empty()) {
    ctx->add_certificate_authority(asio::buffer(o.ca_pem), ec);
    if (ec) return InvalidArgument("cannot use the given CA certificate: " + ec.message());
  }
  ctx->set_verify_mode(ssl::verify_peer);
  contexts[key] = ctx;
  return ctx;
}

}  // namespace

struct HttpClient::Impl {
  Impl(asio::io_context& io, ClientOptions o, std::shared_ptr<ssl::context> tls)
      : ioc(io), options(std::move(o)), ssl_ctx(std::move(tls)), slots(options.max_connections) {}
  asio::io_context& ioc;
  ClientOptions options;
  ProxyRules proxies;
  std::shared_ptr<ssl::context> ssl_ctx;
  AsyncSemaphore slots;
  std::map<std::string, std::vector<std::unique_ptr<Conn>>> idle;
  ClientStats stats;

  std::unique_ptr<Conn> TakeIdle(const std::string& key) {
    auto it = idle.find(key);
    if (it == idle.end()) return nullptr;
    auto& v = it->second;
    const auto now = std::chrono::steady_clock::now();
    while (!v.empty()) {
      std::unique_ptr<Conn> c = std::move(v.back());
      v.pop_back();
      if (now - c->last_used < options.idle_timeout) return c;
      c->Close();
    }
    return nullptr;
  }

  void PutIdle(const std::string& key, std::unique_ptr<Conn> c) {
    c->last_used = std::chrono::steady_clock::now();
    c->ReleaseBuffer();
    auto& v = idle[key];
    if (v.size() >= options.max_connections) {
      c->Close();
      return;
    }
    v.push_back(std::move(c));
  }

  // Asks the proxy for a tunnel to the target; the TLS handshake then runs through it.
  asio::awaitable<Status> OpenTunnel(beast::tcp_stream& s, const Target& t) {
    const std::string where = "proxy " + t.proxy->display;
    http::request<http::empty_body> req{http::verb::connect, t.authority(), 11};
    req.set(http::field::host, t.authority());
    req.set(http::field::user_agent, options.user_agent);
    if (!t.proxy->authorization.empty()) req.set(http::field::proxy_authorization, t.proxy->authorization);
    s.expires_after(options.io_timeout);
    auto [wec, wn] = co_await http::async_write(s, req, await_tuple{});
    if (wec) co_return TransportError(wec, "sending CONNECT to", where);
    // A CONNECT answer has no body to wait for, whatever its headers say.
    http::response_parser<http::empty_body> p;
    p.skip(true);
    p.header_limit(16 * 1024);
    beast::flat_buffer buf;
    auto [rec, rn] = co_await http::async_read(s, buf, p, await_tuple{});
    if (rec) co_return TransportError(rec, "reading the CONNECT answer from", where);
    const unsigned code = p.get().result_int();
    if (code / 100 != 2) {
      const std::string why = where + " refused the tunnel to " + t.authority() + ": " + std::to_string(code) + " " +
                              std::string(p.get().reason());
      if (code == 407) co_return Unauthenticated(why + " (check the credentials in HTTPS_PROXY)");
      co_return Unavailable(why);
    }
    // The server speaks first in nothing TLS does, so a byte here is a broken proxy.
    if (buf.size() != 0) co_return Unavailable(where + " sent data before the TLS handshake");
    co_return Status::Ok();
  }

  asio::awaitable<Result<std::unique_ptr<Conn>>> Connect(const Target& t) {
    const std::string where = t.host + ":" + t.port;
    // With a proxy the TCP connection goes to it; the target is what TLS verifies.
    const std::string& dial_host = t.proxy ? t.proxy->host : t.host;
    const std::string& dial_port = t.proxy ? t.proxy->port : t.port;
    const std::string dial_where = t.proxy ? "proxy " + t.proxy->display + " for " + where : where;
    auto ex = co_await asio::this_coro::executor;
    tcp::resolver resolver(ex);
    auto [rec, results] = co_await resolver.async_resolve(dial_host, dial_port, await_tuple{});
    if (rec) co_return TransportError(rec, "resolving", dial_where);
    if (!t.tls) {
      auto c = std::make_unique<PlainConn>(ex);
      c->tcp().expires_after(options.connect_timeout);
      auto [cec, ep] = co_await c->tcp().async_connect(results, await_tuple{});
      if (cec) co_return TransportError(cec, "connecting to", dial_where);
      ++stats.connections_opened;
      co_return std::unique_ptr<Conn>(std::move(c));
    }
    auto c = std::make_unique<TlsConn>(ex, *ssl_ctx);
    SSL* native = c->stream.native_handle();
    // Verify the peer's name (or IP) with OpenSSL's own check, so a mismatch reports
    // itself in the verify result; send SNI only for names (RFC 6066 forbids IPs).
    X509_VERIFY_PARAM* param = SSL_get0_param(native);
    if (IsIpLiteral(t.host)) {
      X509_VERIFY_PARAM_set1_ip_asc(param, t.host.c_str());
    } else {
      X509_VERIFY_PARAM_set1_host(param, t.host.c_str(), t.host.size());
      SSL_set_tlsext_host_name(native, t.host.c_str());
    }
    c->stream.set_verify_mode(ssl::verify_peer);
    c->tcp().expires_after(options.connect_timeout);
    auto [cec, ep] = co_await c->tcp().async_connect(results, await_tuple{});
    if (cec) co_return TransportError(cec, "connecting to", dial_where);
    if (t.proxy) {
      Status tunnel = co_await OpenTunnel(c->tcp(), t);
      if (!tunnel.ok()) co_return tunnel;
    }
    c->tcp().expires_after(options.io_timeout);
    auto [hec] = co_await c->stream.async_handshake(ssl::stream_base::client, await_tuple{});
    if (hec) {
      const long vr = SSL_get_verify_result(native);
      if (vr != X509_V_OK) {
        co_return Unauthenticated("TLS certificate of " + where + " not trusted: " +
                                  X509_verify_cert_error_string(vr));
      }
      if (hec == beast::error::timeout) co_return DeadlineExceeded("TLS handshake with " + where + " timed out");
      co_return Unauthenticated("TLS handshake with " + where + " failed: " + hec.message());
    }
    ++stats.connections_opened;
    co_return std::unique_ptr<Conn>(std::move(c));
  }

  // One exchange on `c`. Returns the response, or the error with whether nothing of a
  // response had arrived (so a stale pooled connection can be retried).
  struct Exchange {
    beast::error_code ec;
    bool nothing_received = false;
    std::string phase;
    std::optional<http::response<AppendedStringBody>> response;
  };

  asio::awaitable<Exchange> Do(Conn& c, http::request<http::string_body>& req) {
    Exchange x;
    x.ec = co_await c.Write(req, options.io_timeout);
    if (x.ec) {
      x.nothing_received = true;
      x.phase = "sending to";
      co_return x;
    }
    http::response_parser<AppendedStringBody> parser;
    parser.body_limit(options.max_response_bytes);
    parser.header_limit(64 * 1024);
    x.ec = co_await c.Read(parser, options.io_timeout);
    if (x.ec) {
      x.nothing_received = !parser.got_some();
      x.phase = "reading from";
      co_return x;
    }
    x.response = parser.release();
    co_return x;
  }
};

HttpClient::HttpClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpClient::~HttpClient() { CloseIdle(); }

bool HttpClient::SharesTlsWith(const HttpClient& other) const { return impl_->ssl_ctx == other.impl_->ssl_ctx; }

Result<std::unique_ptr<HttpClient>> HttpClient::Create(asio::io_context& ioc, ClientOptions options) {
  LW_ASSIGN_OR_RETURN(std::shared_ptr<ssl::context> tls, SharedTlsContext(options));
  auto impl = std::make_unique<Impl>(ioc, options, std::move(tls));
  auto proxies = ProxyRules::Parse(options.proxy ? *options.proxy : ProxySettingsFromEnv());
  if (!proxies.ok()) return proxies.status();
  impl->proxies = std::move(*proxies);
  return std::unique_ptr<HttpClient>(new HttpClient(std::move(impl)));
}

asio::awaitable<Result<HttpResponse>> HttpClient::Send(HttpRequest request, Delivery* delivery) {
  Impl& d = *impl_;
  Delivery unused;
  if (delivery == nullptr) delivery = &unused;
  *delivery = Delivery::kNotSent;
  ++d.stats.requests;
  Result<Target> target = ParseTarget(request.url);
  if (!target.ok()) {
    ++d.stats.failures;
    co_return target.status();
  }
  target->proxy = d.proxies.For(target->tls, target->host, target->port);
  const std::string where = target->host + ":" + target->port;
  const http::verb verb = http::string_to_verb(request.method);
  if (verb == http::verb::unknown) co_return InvalidArgument("unsupported HTTP method " + request.method);

  http::request<http::string_body> req{verb, target->path, 11};
  const bool default_port = target->port == (target->tls ? "443" : "80");
  req.set(http::field::host, default_port ? target->host : target->host + ":" + target->port);
  req.set(http::field::user_agent, d.options.user_agent);
  for (const auto& [k, v] : request.headers) req.set(k, v);
  if (target->proxy && !target->tls) {
    // A plain request through a proxy names the whole URL (absolute form).
    req.target(target->origin() + target->path);
    if (!target->proxy->authorization.empty()) req.set(http::field::proxy_authorization, target->proxy->authorization);
  }
  req.body() = std::move(request.body);
  req.keep_alive(true);
  req.prepare_payload();

  co_await d.slots.Acquire();
  AsyncSemaphore::Permit permit(d.slots);

  for (int attempt = 0; attempt < 2; ++attempt) {
    std::unique_ptr<Conn> conn = request.fresh_connection ? nullptr : d.TakeIdle(target->key());
    const bool reused = conn != nullptr;
    if (reused) {
      ++d.stats.connections_reused;
    } else {
      Result<std::unique_ptr<Conn>> fresh = co_await d.Connect(*target);
      if (!fresh.ok()) {
        ++d.stats.failures;
        co_return fresh.status();
      }
      conn = std::move(fresh).value();
    }
    if (request.send_by && std::chrono::steady_clock::now() > *request.send_by) {
      conn->Close();
      co_return FailedPrecondition("not sent to " + where + ": past its send-by time (the leader lease)");
    }
    *delivery = Delivery::kMaybeSent;  // from the first byte written on
    Impl::Exchange x = co_await d.Do(*conn, req);
    if (x.ec) {
      conn->Close();
      if (reused && x.nothing_received && StaleConnection(x.ec) && request.idempotent) continue;
      ++d.stats.failures;
      co_return TransportError(x.ec, x.phase, where);
    }
    HttpResponse out;
    out.status = static_cast<int>(x.response->result_int());
    for (const auto& f : *x.response) out.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    out.body = std::move(x.response->body());
    if (x.response->keep_alive()) {
      d.PutIdle(target->key(), std::move(conn));
    } else {
      conn->Close();
    }
    co_return out;
  }
  ++d.stats.failures;
  co_return Unavailable("connection to " + where + " kept closing");
}

void HttpClient::CloseIdle() {
  for (auto& [k, v] : impl_->idle) {
    for (auto& c : v) c->Close();
  }
  impl_->idle.clear();
}

const ClientStats& HttpClient::stats() const { return impl_->stats; }
size_t HttpClient::queued() const { return impl_->slots.waiting(); }

}  // namespace loopwarden::net
