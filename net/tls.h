#pragma once
// TLS material for the simulator and tests.

#include <string>
#include <vector>

#include "core/status.h"

namespace loopwarden::net {

struct TlsIdentity {
  std::string cert_pem;  // also the CA a client trusts: the certificate is self-signed
  std::string key_pem;
};

// A fresh self-signed certificate (P-256, SHA-256, valid one hour back to 30 days on)
// whose subjectAltName lists `hosts`: DNS names or IP addresses.
Result<TlsIdentity> MakeSelfSignedIdentity(const std::vector<std::string>& hosts);

}  // namespace loopwarden::net
