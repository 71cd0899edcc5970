// lw-receiver: a Slack incoming-webhook or Standard Webhooks receiver for the end-to-end
// tests, run as its own process. It records every request as one JSON line and, in
// webhook mode, verifies the signature with its own HMAC code (not loopwarden's), so the
// test checks the sender against an independent implementation.
//
//   lw-receiver --mode slack|webhook --record FILE --port-file FILE [--secret whsec_…]
//               [--fail-first N --fail-status 429|500 --retry-after S] [--print yes]
// --print writes each Slack message's text to stdout (the README demo).
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <string>

#include "net/http_server.h"

namespace {

namespace bj = boost::json;
using loopwarden::net::HttpRequest;
using loopwarden::net::HttpResponse;

std::string B64(const unsigned char* p, size_t n) {
  std::string out(4 * ((n + 2) / 3), '\0');
  const int len = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), p, static_cast<int>(n));
  out.resize(static_cast<size_t>(len));
  return out;
}

std::string UnB64(const std::string& s) {
  std::string out(3 * s.size() / 4 + 3, '\0');
  const int len = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                  reinterpret_cast<const unsigned char*>(s.data()), static_cast<int>(s.size()));
  if (len < 0) return "";
  size_t n = static_cast<size_t>(len);
  // EVP_DecodeBlock counts padding as zero bytes.
  if (!s.empty() && s.back() == '=') --n;
  if (s.size() > 1 && s[s.size() - 2] == '=') --n;
  out.resize(n);
  return out;
}

// Standard Webhooks: v1,base64(HMAC-SHA256(base64decode(secret without whsec_), id.ts.body)).
bool Verify(const std::string& secret, const HttpRequest& r) {
  std::string key = secret.rfind("whsec_", 0) == 0 ? secret.substr(6) : secret;
  key = UnB64(key);
  const std::string id(r.Header("webhook-id")), ts(r.Header("webhook-timestamp")), sigs(r.Header("webhook-signature"));
  if (id.empty() || ts.empty() || sigs.empty()) return false;
  const long long t = std::atoll(ts.c_str());
  if (std::llabs(static_cast<long long>(std::time(nullptr)) - t) > 300) return false;
  const std::string msg = id + "." + ts + "." + r.body;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(msg.data()),
       msg.size(), mac, &len);
  const std::string want = "v1," + B64(mac, len);
  size_t pos = 0;
  while (pos <= sigs.size()) {
    size_t sp = sigs.find(' ', pos);
    if (sp == std::string::npos) sp = sigs.size();
    if (sigs.substr(pos, sp - pos) == want) return true;
    pos = sp + 1;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> f;
  for (int i = 1; i + 1 < argc; i += 2) f[argv[i]] = argv[i + 1];
  const std::string mode = f.count("--mode") ? f["--mode"] : "slack";
  const std::string secret = f["--secret"];
  int fail_first = f.count("--fail-first") ? std::atoi(f["--fail-first"].c_str()) : 0;
  const int fail_status = f.count("--fail-status") ? std::atoi(f["--fail-status"].c_str()) : 500;
  const std::string retry_after = f["--retry-after"];
  const bool print = f["--print"] == "yes";
  std::ofstream record(f["--record"], std::ios::app);
  if (!record) {
    std::cerr << "lw-receiver: cannot write --record " << f["--record"] << "\n";
    return 2;
  }
  boost::asio::io_context ioc(1);
  loopwarden::net::ServerOptions so;
  auto server = loopwarden::net::HttpServer::Start(ioc, so, [&](const HttpRequest& r) {
    bj::object line{{"at", static_cast<int64_t>(std::time(nullptr))}, {"method", r.method}, {"path", r.Path()},
                    {"body", r.body}};
    HttpResponse resp;
    if (fail_first > 0) {
      --fail_first;
      line["answered"] = fail_status;
      resp.status = fail_status;
      if (!retry_after.empty()) resp.headers.emplace_back("Retry-After", retry_after);
      resp.body = "busy";
    } else if (mode == "webhook") {
      const bool ok = Verify(secret, r);
      line["verified"] = ok;
      line["webhook_id"] = std::string(r.Header("webhook-id"));
      line["answered"] = ok ? 204 : 401;
      resp.status = ok ? 204 : 401;
    } else {
      line["answered"] = 200;
      resp.body = "ok";
      if (print) {
        boost::system::error_code ec;
        bj::value v = bj::parse(r.body, ec);
        if (!ec && v.is_object() && v.as_object().contains("text") && v.as_object().at("text").is_string()) {
          std::string text(v.as_object().at("text").as_string());
          for (auto [from, to] : {std::pair{"&gt;", ">"}, std::pair{"&lt;", "<"}, std::pair{"&amp;", "&"}}) {
            for (size_t p = text.find(from); p != std::string::npos; p = text.find(from, p + 1)) text.replace(p, strlen(from), to);
          }
          std::cout << "  [slack] " << text << std::endl;
        }
      }
    }
    record << bj::serialize(line) << std::endl;
    return resp;
  });
  if (!server.ok()) {
    std::cerr << "lw-receiver: " << server.status().message() << "\n";
    return 1;
  }
  // Written atomically so a waiting test never reads half a number.
  { std::ofstream(f["--port-file"] + ".tmp") << (*server)->port() << "\n"; }
  std::rename((f["--port-file"] + ".tmp").c_str(), f["--port-file"].c_str());
  boost::asio::signal_set sigs(ioc, SIGTERM, SIGINT);
  sigs.async_wait([&](const boost::system::error_code&, int) {
    (*server)->Stop();
    ioc.stop();
  });
  ioc.run();
  return 0;
}
