// Proxies: the rules read from the environment, and real requests through a small
// CONNECT proxy on loopback (it tunnels CONNECT, and answers plain absolute-form
// requests itself with the request line it received).
#include <doctest/doctest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "net/http_client.h"
#include "net/http_server.h"
#include "net/proxy.h"
#include "net/tls.h"
#include "tests/testing/run_async.h"

namespace lw = loopwarden;
namespace net = loopwarden::net;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using lw::testing::RunAsync;

namespace {

struct TestProxy {
  explicit TestProxy(asio::io_context& ioc) : acceptor(ioc, {asio::ip::make_address("127.0.0.1"), 0}) {}
  uint16_t port() const { return acceptor.local_endpoint().port(); }
  std::string url(const std::string& userinfo = "") const {
    return "http://" + userinfo + "127.0.0.1:" + std::to_string(port());
  }
  tcp::acceptor acceptor;
  std::vector<std::string> heads;  // every request head the proxy received
  int connect_status = 200;
};

asio::awaitable<void> Pump(std::shared_ptr<tcp::socket> from, std::shared_ptr<tcp::socket> to) {
  char buf[8192];
  for (int i = 0; i < 100000; ++i) {
    boost::system::error_code ec;
    const size_t n = co_await from->async_read_some(asio::buffer(buf), asio::redirect_error(asio::use_awaitable, ec));
    if (n > 0) co_await asio::async_write(*to, asio::buffer(buf, n), asio::redirect_error(asio::use_awaitable, ec));
    if (ec) break;
  }
  boost::system::error_code ignored;
  to->shutdown(tcp::socket::shutdown_send, ignored);
}

asio::awaitable<void> ServeOne(TestProxy* px, std::shared_ptr<tcp::socket> client) {
  std::string in;
  boost::system::error_code ec;
  const size_t n = co_await asio::async_read_until(*client, asio::dynamic_buffer(in), "\r\n\r\n",
                                                   asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return;
  const std::string head = in.substr(0, n);
  px->heads.push_back(head);
  const std::string line = head.substr(0, head.find("\r\n"));
  if (line.rfind("CONNECT ", 0) != 0) {
    const std::string answer = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " +
                               std::to_string(line.size()) + "\r\nConnection: close\r\n\r\n" + line;
    co_await asio::async_write(*client, asio::buffer(answer), asio::redirect_error(asio::use_awaitable, ec));
    co_return;
  }
  if (px->connect_status != 200) {
    const std::string answer =
        "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\nContent-Length: 0\r\n\r\n";
    co_await asio::async_write(*client, asio::buffer(answer), asio::redirect_error(asio::use_awaitable, ec));
    co_return;
  }
  const std::string authority = line.substr(8, line.find(' ', 8) - 8);
  const std::string port = authority.substr(authority.rfind(':') + 1);
  auto upstream = std::make_shared<tcp::socket>(client->get_executor());
  co_await upstream->async_connect({asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(std::stoi(port))},
                                   asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return;
  const std::string ok = "HTTP/1.1 200 Connection established\r\n\r\n";
  co_await asio::async_write(*client, asio::buffer(ok), asio::redirect_error(asio::use_awaitable, ec));
  asio::co_spawn(client->get_executor(), Pump(client, upstream), asio::detached);
  co_await Pump(upstream, client);
}

asio::awaitable<void> AcceptLoop(TestProxy* px) {
  for (int i = 0; i < 100; ++i) {
    auto s = std::make_shared<tcp::socket>(px->acceptor.get_executor());
    boost::system::error_code ec;
    co_await px->acceptor.async_accept(*s, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return;  // closed at the end of the test
    asio::co_spawn(px->acceptor.get_executor(), ServeOne(px, s), asio::detached);
  }
}

std::string HeaderOf(const std::string& head, const std::string& name) {
  const size_t at = head.find("\r\n" + name + ": ");
  if (at == std::string::npos) return "";
  const size_t from = at + 4 + name.size();
  return head.substr(from, head.find("\r\n", from) - from);
}

net::ProxySettings Env(std::map<std::string, std::string> vars) {
  return net::ProxySettingsFromEnv([&](const char* k) -> const char* {
    auto it = vars.find(k);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

}  // namespace

TEST_CASE("proxy variables are read as curl reads them, lower case first") {
  auto s = Env({{"HTTPS_PROXY", "http://upper:3128"}, {"https_proxy", "http://lower:3128"}, {"HTTP_PROXY", "p:8080"},
                {"NO_PROXY", ".internal"}});
  CHECK(s.https_proxy == "http://lower:3128");
  CHECK(s.http_proxy == "p:8080");
  CHECK(s.no_proxy == ".internal");
  auto r = net::ProxyRules::Parse(s);
  REQUIRE(r.ok());
  REQUIRE(r->For(true, "api.baseten.co", "443") != nullptr);
  CHECK(r->For(true, "api.baseten.co", "443")->display == "http://lower:3128");
  CHECK(r->For(false, "example.com", "80")->display == "http://p:8080");
  CHECK(r->For(true, "git.internal", "443") == nullptr);
  CHECK(r->For(true, "internal", "443") == nullptr);
  CHECK(r->For(true, "notinternal", "443") != nullptr);
  CHECK(net::ProxyRules::Parse(Env({})).value().empty());
}

TEST_CASE("NO_PROXY takes names, subdomains, addresses, CIDR blocks, ports and *") {
  auto r = net::ProxyRules::Parse({.https_proxy = "http://proxy:3128",
                                   .no_proxy = " Example.COM , 10.0.0.0/8,::1, metrics.local:9090, [fd00::1]:443"});
  REQUIRE(r.ok());
  CHECK(r->For(true, "example.com", "443") == nullptr);
  CHECK(r->For(true, "API.example.com", "443") == nullptr);
  CHECK(r->For(true, "badexample.com", "443") != nullptr);
  CHECK(r->For(true, "10.1.2.3", "443") == nullptr);
  CHECK(r->For(true, "11.1.2.3", "443") != nullptr);
  CHECK(r->For(true, "::1", "443") == nullptr);
  CHECK(r->For(true, "metrics.local", "9090") == nullptr);
  CHECK(r->For(true, "metrics.local", "443") != nullptr);
  CHECK(r->For(true, "fd00::1", "443") == nullptr);
  // Loopback is proxied unless named, as curl does.
  CHECK(r->For(true, "127.0.0.1", "443") != nullptr);
  auto all = net::ProxyRules::Parse({.https_proxy = "http://proxy:3128", .no_proxy = "*"});
  CHECK(all->For(true, "anything", "443") == nullptr);
}

TEST_CASE("a bad proxy setting is refused naming the variable, never its password") {
  auto tls = net::ProxyRules::Parse({.https_proxy = "https://user:s3cret@proxy:3128"});
  REQUIRE_FALSE(tls.ok());
  CHECK(tls.status().message().find("HTTPS_PROXY uses the scheme 'https'") == 0);
  CHECK(tls.status().message().find("s3cret") == std::string::npos);
  auto socks = net::ProxyRules::Parse({.http_proxy = "socks5://u:s3cret@proxy:1080"});
  REQUIRE_FALSE(socks.ok());
  CHECK(socks.status().message().find("HTTP_PROXY") == 0);
  CHECK(socks.status().message().find("s3cret") == std::string::npos);
  auto cidr = net::ProxyRules::Parse({.https_proxy = "proxy:3128", .no_proxy = "10.0.0.0/40"});
  REQUIRE_FALSE(cidr.ok());
  CHECK(cidr.status().message().find("NO_PROXY entry '10.0.0.0/40'") == 0);
  asio::io_context ioc;
  auto client = net::HttpClient::Create(ioc, {.proxy = net::ProxySettings{.https_proxy = "ftp://u:s3cret@h"}});
  REQUIRE_FALSE(client.ok());
  CHECK(client.status().message().find("s3cret") == std::string::npos);
}

TEST_CASE("HTTPS goes through a CONNECT proxy with credentials, and TLS still verifies the target") {
  asio::io_context ioc;
  auto id = net::MakeSelfSignedIdentity({"127.0.0.1"});
  REQUIRE(id.ok());
  net::ServerOptions so;
  so.tls = std::make_pair(id->cert_pem, id->key_pem);
  auto server = net::HttpServer::Start(ioc, so, [](const net::HttpRequest& r) {
    return net::JsonResponse(200, "{\"path\":\"" + r.Path() + "\"}");
  });
  REQUIRE(server.ok());
  TestProxy px(ioc);
  asio::co_spawn(ioc, AcceptLoop(&px), asio::detached);
  const std::string target = "127.0.0.1:" + std::to_string((*server)->port());
  auto client = net::HttpClient::Create(
      ioc, {.ca_pem = id->cert_pem, .proxy = net::ProxySettings{.https_proxy = px.url("svc%40acme:pa%3Ass@")}});
  REQUIRE(client.ok());
  // A client that does not trust the server's CA is refused through the tunnel too.
  auto untrusting = net::HttpClient::Create(ioc, {.use_system_cas = true,
                                                  .proxy = net::ProxySettings{.https_proxy = px.url()}});
  REQUIRE(untrusting.ok());
  RunAsync(ioc, [&]() -> asio::awaitable<void> {
    for (int i = 0; i < 2; ++i) {
      net::HttpRequest req;
      req.url = "https://" + target + "/v1/loops/runs";
      auto res = co_await (*client)->Send(req);
      REQUIRE(res.ok());
      CHECK(res->status == 200);
      CHECK(res->body == "{\"path\":\"/v1/loops/runs\"}");
    }
    net::HttpRequest req;
    req.url = "https://" + target + "/";
    auto refused = co_await (*untrusting)->Send(req);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().code() == lw::StatusCode::kUnauthenticated);
    CHECK(refused.status().message().find("TLS certificate of " + target + " not trusted") == 0);
  }());
  // One tunnel, reused for the second request; then one for the untrusting client.
  REQUIRE(px.heads.size() == 2);
  CHECK(px.heads[0].rfind("CONNECT " + target + " HTTP/1.1\r\n", 0) == 0);
  CHECK(HeaderOf(px.heads[0], "Host") == target);
  // base64("svc@acme:pa:ss"): the URL's percent-encoding is decoded before encoding.
  CHECK(HeaderOf(px.heads[0], "Proxy-Authorization") == "Basic c3ZjQGFjbWU6cGE6c3M=");
  CHECK(HeaderOf(px.heads[1], "Proxy-Authorization").empty());
  CHECK((*client)->stats().connections_opened == 1);
  CHECK((*client)->stats().connections_reused == 1);
  CHECK((*server)->requests_served() == 2);
  px.acceptor.close();
}

TEST_CASE("NO_PROXY sends a target direct, a refused tunnel is an error naming the proxy only, plain HTTP uses absolute form") {
  asio::io_context ioc;
  auto server = net::HttpServer::Start(ioc, {}, [](const net::HttpRequest&) { return net::JsonResponse(200, "{}"); });
  REQUIRE(server.ok());
  TestProxy px(ioc);
  px.connect_status = 407;
  asio::co_spawn(ioc, AcceptLoop(&px), asio::detached);
  auto direct = net::HttpClient::Create(
      ioc, {.proxy = net::ProxySettings{.http_proxy = px.url(), .https_proxy = px.url(), .no_proxy = "127.0.0.1"}});
  auto tunnelled = net::HttpClient::Create(ioc, {.proxy = net::ProxySettings{.https_proxy = px.url("u:s3cret@")}});
  auto plain = net::HttpClient::Create(ioc, {.proxy = net::ProxySettings{.http_proxy = px.url("u:s3cret@")}});
  REQUIRE(direct.ok());
  REQUIRE(tunnelled.ok());
  REQUIRE(plain.ok());
  const std::string origin = "127.0.0.1:" + std::to_string((*server)->port());
  RunAsync(ioc, [&]() -> asio::awaitable<void> {
    net::HttpRequest req;
    req.url = "http://" + origin + "/direct";
    auto res = co_await (*direct)->Send(req);
    REQUIRE(res.ok());
    CHECK(res->status == 200);
    CHECK(px.heads.empty());

    req.url = "https://" + origin + "/x";
    auto refused = co_await (*tunnelled)->Send(req);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().code() == lw::StatusCode::kUnauthenticated);
    CHECK(refused.status().message().find("proxy " + px.url() + " refused the tunnel to " + origin + ": 407") == 0);
    CHECK(refused.status().message().find("s3cret") == std::string::npos);

    // A plain request through the proxy names the whole URL.
    req.url = "http://" + origin + "/plain?q=1";
    auto via = co_await (*plain)->Send(req);
    REQUIRE(via.ok());
    CHECK(via->body == "GET http://" + origin + "/plain?q=1 HTTP/1.1");
  }());
  REQUIRE(px.heads.size() == 2);
  CHECK(HeaderOf(px.heads[1], "Proxy-Authorization") == "Basic dTpzM2NyZXQ=");
  CHECK((*server)->requests_served() == 1);
  px.acceptor.close();
}
