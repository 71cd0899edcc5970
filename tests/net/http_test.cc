#include <doctest/doctest.h>

#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "net/http_client.h"
#include "net/http_server.h"
#include "net/tls.h"
#include "tests/testing/run_async.h"
#include "tests/testing/temp_dir.h"

namespace lw = loopwarden;
namespace net = loopwarden::net;
namespace asio = boost::asio;
using namespace std::chrono_literals;
using lw::testing::RunAsync;
using lw::testing::TempDir;

namespace {

net::HttpResponse Echo(const net::HttpRequest& r) {
  if (r.Path() == "/reset") {
    net::HttpResponse x;
    x.fault = net::HttpResponse::Fault::kReset;
    return x;
  }
  if (r.Path() == "/truncate") {
    net::HttpResponse x = net::JsonResponse(200, std::string(1000, 'x'));
    x.fault = net::HttpResponse::Fault::kTruncate;
    x.truncate_at = 120;
    return x;
  }
  if (r.Path() == "/slow") {
    net::HttpResponse x = net::JsonResponse(200, "{}");
    x.delay = 1500ms;
    return x;
  }
  return net::JsonResponse(200, "{\"method\":\"" + r.method + "\",\"path\":\"" + r.Path() + "\",\"q\":\"" +
                                    r.Query("q").value_or("-") + "\",\"auth\":\"" + std::string(r.Header("authorization")) +
                                    "\",\"body\":\"" + r.body + "\"}");
}

std::string Url(const net::HttpServer& s, const std::string& path, const char* scheme = "http") {
  return std::string(scheme) + "://127.0.0.1:" + std::to_string(s.port()) + path;
}

// Sends raw bytes and returns what the server answered before closing.
asio::awaitable<std::string> Raw(uint16_t port, std::string bytes) {
  auto ex = co_await asio::this_coro::executor;
  asio::ip::tcp::socket sock(ex);
  co_await sock.async_connect({asio::ip::make_address("127.0.0.1"), port}, asio::use_awaitable);
  co_await asio::async_write(sock, asio::buffer(bytes), asio::use_awaitable);
  std::string out;
  char buf[4096];
  for (;;) {
    boost::system::error_code ec;
    size_t n = co_await sock.async_read_some(asio::buffer(buf), asio::redirect_error(asio::use_awaitable, ec));
    out.append(buf, n);
    if (ec) break;
  }
  co_return out;
}

// The echo server and a plain client on one io_context, over loopback.
struct EchoLoopback {
  EchoLoopback() {
    auto s = net::HttpServer::Start(ioc, {}, Echo);
    REQUIRE(s.ok());
    server = std::move(*s);
    auto c = net::HttpClient::Create(ioc, {});
    REQUIRE(c.ok());
    client = std::move(*c);
  }
  asio::io_context ioc;
  std::unique_ptr<net::HttpServer> server;
  std::unique_ptr<net::HttpClient> client;
};

}  // namespace

TEST_CASE("client and server talk HTTP over loopback and reuse the connection") {
  EchoLoopback l;
  RunAsync(l.ioc, [&]() -> asio::awaitable<void> {
    for (int i = 0; i < 3; ++i) {
      net::HttpRequest req;
      req.method = "POST";
      req.url = Url(*l.server, "/v1/loops/runs/k4q95w5/deactivate?q=a%20b");
      req.headers.emplace_back("Authorization", "Bearer test-key");
      req.body = "x" + std::to_string(i);
      auto res = co_await l.client->Send(req);
      REQUIRE(res.ok());
      CHECK(res->status == 200);
      CHECK(res->body == "{\"method\":\"POST\",\"path\":\"/v1/loops/runs/k4q95w5/deactivate\",\"q\":\"a b\",\"auth\":"
                         "\"Bearer test-key\",\"body\":\"x" + std::to_string(i) + "\"}");
      CHECK(res->Header("content-type") == "application/json");
    }
  }());
  CHECK(l.client->stats().connections_opened == 1);
  CHECK(l.client->stats().connections_reused == 2);
  CHECK(l.server->requests_served() == 3);
}

TEST_CASE("a request past its send-by time is not written, and says so") {
  EchoLoopback l;
  RunAsync(l.ioc, [&]() -> asio::awaitable<void> {
    net::HttpRequest late;
    late.method = "POST";
    late.url = Url(*l.server, "/v1/loops/runs/r1/deactivate");
    late.idempotent = false;
    late.send_by = std::chrono::steady_clock::now() - 1ms;
    auto res = co_await l.client->Send(late);
    REQUIRE_FALSE(res.ok());
    CHECK(res.status().code() == lw::StatusCode::kFailedPrecondition);
    CHECK(res.status().message().find("not sent") != std::string::npos);
    net::HttpRequest in_time = late;
    in_time.send_by = std::chrono::steady_clock::now() + 10s;
    auto ok = co_await l.client->Send(in_time);
    REQUIRE(ok.ok());
    CHECK(ok->status == 200);
  }());
  CHECK(l.server->requests_served() == 1);  // only the one in time
}

TEST_CASE("a failed request says whether it may have reached the server: never when it could not be written") {
  EchoLoopback l;
  using Delivery = net::HttpClient::Delivery;
  // A port nobody listens on: the one a just-closed listener had.
  uint16_t closed_port = 0;
  {
    asio::ip::tcp::acceptor a(l.ioc, {asio::ip::make_address("127.0.0.1"), 0});
    closed_port = a.local_endpoint().port();
  }
  RunAsync(l.ioc, [&]() -> asio::awaitable<void> {
    net::HttpRequest req;
    req.method = "POST";
    req.idempotent = false;
    Delivery d = Delivery::kMaybeSent;
    req.url = "http://127.0.0.1:" + std::to_string(closed_port) + "/v1/loops/runs/r1/deactivate";
    auto refused = co_await l.client->Send(req, &d);
    CHECK_FALSE(refused.ok());
    CHECK(d == Delivery::kNotSent);
    req.url = Url(*l.server, "/v1/loops/runs/r1/deactivate");
    req.send_by = std::chrono::steady_clock::now() - 1ms;
    d = Delivery::kMaybeSent;
    auto late = co_await l.client->Send(req, &d);
    CHECK_FALSE(late.ok());
    CHECK(d == Delivery::kNotSent);
    // Written, then the connection reset before an answer: it may have been done.
    req.send_by.reset();
    req.url = Url(*l.server, "/reset");
    d = Delivery::kNotSent;
    auto reset = co_await l.client->Send(req, &d);
    CHECK_FALSE(reset.ok());
    CHECK(d == Delivery::kMaybeSent);
  }());
}

TEST_CASE("HTTPS with a trusted self-signed CA works, an untrusted certificate is refused clearly") {
  asio::io_context ioc;
  auto id = net::MakeSelfSignedIdentity({"127.0.0.1", "localhost"});
  REQUIRE(id.ok());
  net::ServerOptions so;
  so.tls = std::make_pair(id->cert_pem, id->key_pem);
  auto server = net::HttpServer::Start(ioc, so, Echo);
  REQUIRE(server.ok());
  auto trusting = net::HttpClient::Create(ioc, {.ca_pem = id->cert_pem});
  REQUIRE(trusting.ok());
  auto other = net::MakeSelfSignedIdentity({"127.0.0.1"});
  REQUIRE(other.ok());
  auto wrong_ca = net::HttpClient::Create(ioc, {.ca_pem = other->cert_pem});
  auto system_only = net::HttpClient::Create(ioc, {});
  RunAsync(ioc, [&]() -> asio::awaitable<void> {
    net::HttpRequest req;
    req.url = Url(**server, "/hello", "https");
    auto ok = co_await (*trusting)->Send(req);
    REQUIRE(ok.ok());
    CHECK(ok->status == 200);
    for (auto* c : {wrong_ca->get(), system_only->get()}) {
      auto refused = co_await c->Send(req);
      REQUIRE_FALSE(refused.ok());
      CHECK(refused.status().code() == lw::StatusCode::kUnauthenticated);
      CHECK(refused.status().message().find("TLS certificate of 127.0.0.1:" + std::to_string((*server)->port()) +
                                            " not trusted: ") == 0);
    }
    // A name the certificate does not carry is refused even with the right CA.
    auto id2 = net::MakeSelfSignedIdentity({"example.invalid"});
    net::ServerOptions so2;
    so2.tls = std::make_pair(id2->cert_pem, id2->key_pem);
    auto server2 = net::HttpServer::Start(ioc, so2, Echo);
    auto c2 = net::HttpClient::Create(ioc, {.ca_pem = id2->cert_pem});
    net::HttpRequest r2;
    r2.url = Url(**server2, "/", "https");
    auto mismatch = co_await (*c2)->Send(r2);
    REQUIRE_FALSE(mismatch.ok());
    CHECK(mismatch.status().message().find("IP address mismatch") != std::string::npos);
  }());
}

TEST_CASE("clients with the same trust settings share one TLS context, and different settings do not") {
  // Issue 14: each context holds its own copy of the system CA bundle, one per account.
  asio::io_context ioc;
  auto id = net::MakeSelfSignedIdentity({"127.0.0.1"});
  REQUIRE(id.ok());
  auto a = net::HttpClient::Create(ioc, {});
  auto b = net::HttpClient::Create(ioc, {.io_timeout = std::chrono::seconds(3)});  // not a trust setting
  auto own_ca = net::HttpClient::Create(ioc, {.ca_pem = id->cert_pem});
  auto own_ca_too = net::HttpClient::Create(ioc, {.ca_pem = id->cert_pem});
  auto no_system = net::HttpClient::Create(ioc, {.ca_pem = id->cert_pem, .use_system_cas = false});
  REQUIRE((a.ok() && b.ok() && own_ca.ok() && own_ca_too.ok() && no_system.ok()));
  CHECK((*a)->SharesTlsWith(**b));
  CHECK((*own_ca)->SharesTlsWith(**own_ca_too));
  CHECK_FALSE((*a)->SharesTlsWith(**own_ca));
  CHECK_FALSE((*own_ca)->SharesTlsWith(**no_system));
  // A CA file rewritten in place is read again by the next client.
  TempDir dir;
  const std::string ca = dir.File("ca.pem");
  { std::ofstream(ca) << id->cert_pem; }
  auto from_file = net::HttpClient::Create(ioc, {.ca_file = ca});
  REQUIRE(from_file.ok());
  auto other = net::MakeSelfSignedIdentity({"127.0.0.1"});
  { std::ofstream(ca) << id->cert_pem << other->cert_pem; }
  auto after_rotation = net::HttpClient::Create(ioc, {.ca_file = ca});
  REQUIRE(after_rotation.ok());
  CHECK_FALSE((*from_file)->SharesTlsWith(**after_rotation));
}

TEST_CASE("server faults reach the client as transport errors") {
  asio::io_context ioc;
  auto server = net::HttpServer::Start(ioc, {}, Echo);
  auto client = net::HttpClient::Create(ioc, {.io_timeout = 500ms});
  RunAsync(ioc, [&]() -> asio::awaitable<void> {
    net::HttpRequest req;
    req.url = Url(**server, "/reset");
    auto reset = co_await (*client)->Send(req);
    REQUIRE_FALSE(reset.ok());
    CHECK(reset.status().code() == lw::StatusCode::kUnavailable);
    req.url = Url(**server, "/truncate");
    auto trunc = co_await (*client)->Send(req);
    REQUIRE_FALSE(trunc.ok());
    CHECK(trunc.status().code() == lw::StatusCode::kUnavailable);
    req.url = Url(**server, "/slow");
    auto slow = co_await (*client)->Send(req);
    REQUIRE_FALSE(slow.ok());
    CHECK(slow.status().code() == lw::StatusCode::kDeadlineExceeded);
    CHECK(slow.status().message() == "reading from 127.0.0.1:" + std::to_string((*server)->port()) + " timed out");
  }());
  // Connection refused: nothing listens on a closed port.
  auto probe = net::HttpServer::Start(ioc, {}, Echo);
  const uint16_t dead = (*probe)->port();
  probe->reset();
  RunAsync(ioc, [&]() -> asio::awaitable<void> {
    net::HttpRequest req;
    req.url = "http://127.0.0.1:" + std::to_string(dead) + "/";
    auto r = co_await (*client)->Send(req);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == lw::StatusCode::kUnavailable);
    CHECK(r.status().message().find("connecting to 127.0.0.1:") == 0);
  }());
}

TEST_CASE("malformed and oversize requests are refused before the handler") {
  asio::io_context ioc;
  int handled = 0;
  net::ServerOptions so;
  so.max_header_bytes = 1024;
  so.max_body_bytes = 100;
  auto server = net::HttpServer::Start(ioc, so, [&](const net::HttpRequest& r) {
    ++handled;
    return Echo(r);
  });
  REQUIRE(server.ok());
  const uint16_t port = (*server)->port();
  std::string bad, big_header, big_body;
  RunAsync(ioc, [&]() -> asio::awaitable<void> {
    bad = co_await Raw(port, "NOT A REQUEST\r\n\r\n");
    big_header = co_await Raw(port, "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(4000, 'a') + "\r\n\r\n");
    big_body = co_await Raw(port, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n" + std::string(500, 'b'));
  }());
  CHECK(bad.rfind("HTTP/1.1 400", 0) == 0);
  CHECK(big_header.rfind("HTTP/1.1 431", 0) == 0);
  CHECK(big_body.rfind("HTTP/1.1 413", 0) == 0);
  CHECK(handled == 0);
  CHECK((*server)->requests_rejected() == 3);
}

TEST_CASE("concurrency is bounded per client") {
  asio::io_context ioc;
  int in_flight = 0, peak = 0;
  auto server = net::HttpServer::Start(ioc, {}, [&](const net::HttpRequest&) {
    net::HttpResponse r = net::JsonResponse(200, "{}");
    r.delay = 30ms;
    return r;
  });
  auto client = net::HttpClient::Create(ioc, {.max_connections = 2});
  int done = 0;
  RunAsync(ioc, [&]() -> asio::awaitable<void> {
    auto one = [&]() -> asio::awaitable<void> {
      ++in_flight;
      peak = std::max(peak, in_flight);
      net::HttpRequest req;
      req.url = Url(**server, "/");
      auto r = co_await (*client)->Send(req);
      CHECK(r.ok());
      --in_flight;
      ++done;
    };
    auto ex = co_await asio::this_coro::executor;
    for (int i = 0; i < 6; ++i) asio::co_spawn(ex, one(), asio::detached);
    asio::steady_timer t(ex);
    for (int i = 0; i < 200 && done < 6; ++i) {
      if (i == 1) CHECK((*client)->queued() == 4);
      t.expires_after(10ms);
      co_await t.async_wait(asio::use_awaitable);
    }
  }());
  CHECK(done == 6);
  CHECK((*client)->stats().connections_opened == 2);
}

TEST_CASE("hardening: connections stalled mid-header cannot lock out a probe: the longest waiting is evicted") {
  asio::io_context ioc;
  net::ServerOptions so;
  so.max_connections = 8;
  so.header_timeout = 60s;  // long: the probe must get through without waiting for it
  auto server = net::HttpServer::Start(ioc, so, [](const net::HttpRequest& r) { return Echo(r); });
  REQUIRE(server.ok());
  const uint16_t port = (*server)->port();
  std::vector<asio::ip::tcp::socket> stalled;
  std::string probe;
  RunAsync(ioc, [&]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    // Fill every slot with a slowloris: half a request line, never finished.
    for (int i = 0; i < 8; ++i) {
      asio::ip::tcp::socket s(ex);
      co_await s.async_connect({asio::ip::make_address("127.0.0.1"), port}, asio::use_awaitable);
      co_await asio::async_write(s, asio::buffer(std::string("GET /healthz HTTP/1.1\r\nHost: x\r\n")), asio::use_awaitable);
      stalled.push_back(std::move(s));
    }
    // Let the server register them.
    asio::steady_timer t(ex);
    for (int i = 0; i < 100; ++i) {
      t.expires_after(5ms);
      co_await t.async_wait(asio::use_awaitable);
    }
    probe = co_await Raw(port, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  }(), 30s);
  CHECK(probe.rfind("HTTP/1.1 200", 0) == 0);
  CHECK((*server)->requests_rejected() >= 1);  // one stalled connection made room
}

TEST_CASE("hardening: HEAD answers with the headers of GET and no body") {
  asio::io_context ioc;
  auto server = net::HttpServer::Start(ioc, {}, [](const net::HttpRequest&) { return net::JsonResponse(200, "{\"ok\":true}"); });
  REQUIRE(server.ok());
  std::string head;
  RunAsync(ioc, [&]() -> asio::awaitable<void> {
    head = co_await Raw((*server)->port(), "HEAD /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  }());
  CHECK(head.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(head.find("Content-Length: 11") != std::string::npos);
  CHECK(head.size() == head.find("\r\n\r\n") + 4);  // nothing after the headers
}

TEST_CASE("hardening: a response over the client's limit fails its call instead of growing the process") {
  asio::io_context ioc;
  auto server = net::HttpServer::Start(ioc, {}, [](const net::HttpRequest&) {
    return net::JsonResponse(200, "\"" + std::string(3u << 20, 'x') + "\"");  // 3 MiB
  });
  REQUIRE(server.ok());
  auto client = net::HttpClient::Create(ioc, {.max_response_bytes = 1u << 20});
  REQUIRE(client.ok());
  lw::Result<net::HttpResponse> r = lw::Unavailable("not sent");
  RunAsync(ioc, [&]() -> asio::awaitable<void> {
    net::HttpRequest req;
    req.url = Url(**server, "/big");
    r = co_await (*client)->Send(req);
  }());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("too large") != std::string::npos);
  CHECK(net::ClientOptions{}.max_response_bytes == 64u << 20);  // the default: 64 MiB, not 512
}

TEST_CASE("a response body arrives whole however the server frames it: length, chunks, or until close") {
  // A raw server, so the framing is exactly what is written here: each answer in small
  // writes, so the client's parser takes the body in many pieces.
  asio::io_context ioc;
  asio::ip::tcp::acceptor acceptor(ioc, {asio::ip::make_address("127.0.0.1"), 0});
  const uint16_t port = acceptor.local_endpoint().port();
  std::string body;
  for (int i = 0; body.size() < 200'000; ++i) body += std::to_string(i) + ",";
  auto chunked = [&] {
    std::string out = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (size_t at = 0; at < body.size(); at += 7'001) {
      const std::string piece = body.substr(at, 7'001);
      char size[32];
      std::snprintf(size, sizeof size, "%zx\r\n", piece.size());
      out += size + piece + "\r\n";
    }
    return out + "0\r\n\r\n";
  };
  const std::vector<std::string> answers = {
      "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body,
      chunked(),
      "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + body,  // no length: the body ends at close
  };
  auto serve = [&]() -> asio::awaitable<void> {
    for (const std::string& answer : answers) {
      asio::ip::tcp::socket sock = co_await acceptor.async_accept(asio::use_awaitable);
      std::string request;
      char buf[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        size_t n = co_await sock.async_read_some(asio::buffer(buf), asio::use_awaitable);
        request.append(buf, n);
      }
      for (size_t at = 0; at < answer.size(); at += 1'500) {
        co_await asio::async_write(sock, asio::buffer(answer.data() + at, std::min<size_t>(1'500, answer.size() - at)),
                                   asio::use_awaitable);
      }
      boost::system::error_code ignored;
      sock.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    }
  };
  asio::co_spawn(ioc, serve(), asio::detached);
  auto client = net::HttpClient::Create(ioc, {});
  REQUIRE(client.ok());
  std::vector<lw::Result<net::HttpResponse>> got;
  RunAsync(ioc, [&]() -> asio::awaitable<void> {
    for (size_t i = 0; i < answers.size(); ++i) {
      net::HttpRequest req;
      req.url = "http://127.0.0.1:" + std::to_string(port) + "/page";
      req.fresh_connection = true;  // one connection per answer, as the server serves them
      got.push_back(co_await (*client)->Send(req));
    }
  }());
  REQUIRE(got.size() == answers.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    REQUIRE(got[i].ok());
    CHECK(got[i]->status == 200);
    CHECK(got[i]->body.size() == body.size());
    CHECK(got[i]->body == body);
  }
}
