#include "net/proxy.h"

#include <openssl/evp.h>

#include <algorithm>

#include <boost/asio/ip/address.hpp>
#include <boost/url/parse.hpp>

#include "core/strings.h"

namespace loopwarden::net {

namespace {

std::string FirstSet(const std::function<const char*(const char*)>& getenv, const char* lower, const char* upper) {
  for (const char* name : {lower, upper}) {
    if (const char* v = getenv(name); v != nullptr && *v != '\0') return v;
  }
  return "";
}

std::string Base64(std::string_view in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::optional<std::vector<unsigned char>> IpBytes(std::string_view text) {
  boost::system::error_code ec;
  const auto a = boost::asio::ip::make_address(std::string(text), ec);
  if (ec) return std::nullopt;
  if (a.is_v4()) {
    const auto b = a.to_v4().to_bytes();
    return std::vector<unsigned char>(b.begin(), b.end());
  }
  const auto b = a.to_v6().to_bytes();
  return std::vector<unsigned char>(b.begin(), b.end());
}

bool PrefixMatches(const std::vector<unsigned char>& net, int prefix, const std::vector<unsigned char>& ip) {
  if (net.size() != ip.size()) return false;
  for (int bit = 0; bit < prefix; ++bit) {
    const unsigned char mask = static_cast<unsigned char>(0x80 >> (bit % 8));
    if ((net[bit / 8] & mask) != (ip[bit / 8] & mask)) return false;
  }
  return true;
}

Result<ProxyEndpoint> ParseProxy(const std::string& variable, std::string text) {
  if (text.find("://") == std::string::npos) text = "http://" + text;
  auto u = boost::urls::parse_uri(text);
  // The value may hold a password: the message names the variable, never the value.
  if (!u) return InvalidArgument(variable + " is not a URL (expected http://host:port)");
  const std::string scheme = ToLower(u->scheme());
  if (scheme != "http") {
    return InvalidArgument(variable + " uses the scheme '" + scheme +
                           "': only http:// proxies are supported (CONNECT carries TLS end to end)");
  }
  ProxyEndpoint p;
  p.host = std::string(u->host());
  if (!p.host.empty() && p.host.front() == '[') p.host = p.host.substr(1, p.host.size() - 2);
  if (p.host.empty()) return InvalidArgument(variable + " names no proxy host");
  p.port = u->has_port() ? std::string(u->port()) : "1080";
  const bool v6 = p.host.find(':') != std::string::npos;
  p.display = "http://" + (v6 ? "[" + p.host + "]" : p.host) + ":" + p.port;
  if (u->has_userinfo()) p.authorization = "Basic " + Base64(u->user() + ":" + u->password());
  return p;
}

}  // namespace

ProxySettings ProxySettingsFromEnv(const std::function<const char*(const char*)>& getenv) {
  return {.http_proxy = FirstSet(getenv, "http_proxy", "HTTP_PROXY"),
          .https_proxy = FirstSet(getenv, "https_proxy", "HTTPS_PROXY"),
          .no_proxy = FirstSet(getenv, "no_proxy", "NO_PROXY")};
}

Result<ProxyRules> ProxyRules::Parse(const ProxySettings& s) {
  ProxyRules r;
  if (!s.http_proxy.empty()) {
    auto p = ParseProxy("HTTP_PROXY", s.http_proxy);
    if (!p.ok()) return p.status();
    r.http_ = std::move(*p);
  }
  if (!s.https_proxy.empty()) {
    auto p = ParseProxy("HTTPS_PROXY", s.https_proxy);
    if (!p.ok()) return p.status();
    r.https_ = std::move(*p);
  }
  for (const std::string& raw : Split(s.no_proxy, ',')) {
    std::string e = ToLower(Trim(raw));
    if (e.empty()) continue;
    if (e == "*") {
      r.no_proxy_all_ = true;
      continue;
    }
    Exclusion x;
    if (const size_t slash = e.find('/'); slash != std::string::npos) {
      auto net = IpBytes(e.substr(0, slash));
      int prefix = -1;
      try {
        prefix = std::stoi(e.substr(slash + 1));
      } catch (const std::exception&) {
      }
      if (!net || prefix < 0 || prefix > static_cast<int>(net->size() * 8)) {
        return InvalidArgument("NO_PROXY entry '" + e + "' is not a CIDR block such as 10.0.0.0/8");
      }
      x.net = std::move(*net);
      x.prefix = prefix;
      r.no_proxy_.push_back(std::move(x));
      continue;
    }
    // host, .domain, host:port, [v6], [v6]:port, bare v6
    if (e.front() == '[') {
      const size_t close = e.find(']');
      if (close == std::string::npos) return InvalidArgument("NO_PROXY entry '" + e + "' has an unclosed '['");
      x.host = e.substr(1, close - 1);
      if (close + 1 < e.size() && e[close + 1] == ':') x.port = e.substr(close + 2);
    } else if (std::count(e.begin(), e.end(), ':') == 1) {
      x.port = e.substr(e.find(':') + 1);
      x.host = e.substr(0, e.find(':'));
    } else {
      x.host = e;
    }
    while (!x.host.empty() && x.host.front() == '.') x.host.erase(0, 1);
    if (x.host.empty()) continue;
    r.no_proxy_.push_back(std::move(x));
  }
  return r;
}

bool ProxyRules::Excluded(std::string_view host_in, std::string_view port) const {
  if (no_proxy_all_) return true;
  const std::string host = ToLower(host_in);
  const auto ip = IpBytes(host);
  for (const Exclusion& x : no_proxy_) {
    if (!x.port.empty() && x.port != port) continue;
    if (x.prefix >= 0) {
      if (ip && PrefixMatches(x.net, x.prefix, *ip)) return true;
      continue;
    }
    if (host == x.host) return true;
    // A name also covers its subdomains; an address only itself.
    if (!ip && host.size() > x.host.size() && host.ends_with(x.host) && host[host.size() - x.host.size() - 1] == '.') {
      return true;
    }
  }
  return false;
}

const ProxyEndpoint* ProxyRules::For(bool tls, std::string_view host, std::string_view port) const {
  const std::optional<ProxyEndpoint>& p = tls ? https_ : http_;
  if (!p || Excluded(host, port)) return nullptr;
  return &*p;
}

}  // namespace loopwarden::net
