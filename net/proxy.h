#pragma once
// Outbound HTTP proxies, read the way curl reads them, so a host that already works
// for `curl` works for loopwarden without new configuration.
//
// - https:// targets go through `https_proxy` / `HTTPS_PROXY` with CONNECT (the TLS
//   session is still end to end: the target's certificate is verified, not the
//   proxy's); http:// targets through `http_proxy` / `HTTP_PROXY` in absolute form.
//   The lower-case name wins when both are set.
// - `no_proxy` / `NO_PROXY`: a comma list of host names (each also matches its
//   subdomains; a leading dot is allowed), IP addresses, CIDR blocks, and `*` for
//   everything; an entry may end in `:port`. Nothing is excluded implicitly: like
//   curl, and unlike Go, loopback goes through the proxy unless NO_PROXY names it.
// - A proxy is an `http://[user:password@]host[:port]` URL (no scheme means http://;
//   port 1080 when absent, as curl). Credentials become Proxy-Authorization: Basic and
//   appear nowhere else: `display` is the URL without them. TLS to the proxy itself
//   (https://) and SOCKS are refused at start with a message naming the variable.

#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace loopwarden::net {

struct ProxySettings {
  std::string http_proxy;
  std::string https_proxy;
  std::string no_proxy;
};

// The three variables from the environment (lower case first).
ProxySettings ProxySettingsFromEnv(const std::function<const char*(const char*)>& getenv = ::getenv);

struct ProxyEndpoint {
  std::string host;           // bare, IPv6 without brackets
  std::string port;
  std::string authorization;  // "Basic …", or empty
  std::string display;        // "http://host:port", never credentials
};

class ProxyRules {
 public:
  // A bad proxy URL is an error naming its variable; credentials are never quoted.
  static Result<ProxyRules> Parse(const ProxySettings& s);

  // The proxy for a target, or null for a direct connection.
  const ProxyEndpoint* For(bool tls, std::string_view host, std::string_view port) const;
  bool empty() const { return !http_ && !https_; }
  // For the start-up log: the proxies as configured (display form, no credentials).
  std::string https_display() const { return https_ ? https_->display : ""; }
  std::string http_display() const { return http_ ? http_->display : ""; }

 private:
  struct Exclusion {
    std::string host;      // lower case, no leading dot; empty with a CIDR
    std::string port;      // empty: any port
    std::vector<unsigned char> net;  // CIDR network bytes (4 or 16), empty otherwise
    int prefix = -1;
  };
  bool Excluded(std::string_view host, std::string_view port) const;

  std::optional<ProxyEndpoint> http_;
  std::optional<ProxyEndpoint> https_;
  std::vector<Exclusion> no_proxy_;
  bool no_proxy_all_ = false;
};

}  // namespace loopwarden::net
