#include "net/tls.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

namespace loopwarden::net {
namespace {

template <class T, void (*F)(T*)>
struct Deleter {
  void operator()(T* p) const { F(p); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;

std::string OpenSslError(const char* what) {
  unsigned long e = ERR_get_error();
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return std::string(what) + ": " + buf;
}

bool IsIpAddress(const std::string& h) {
  return h.find_first_not_of("0123456789.") == std::string::npos || h.find(':') != std::string::npos;
}

bool AddExtension(X509* cert, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return false;
  bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

Result<std::string> ToPem(bool key, EVP_PKEY* pkey, X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  int ok = key ? PEM_write_bio_PrivateKey(bio.get(), pkey, nullptr, nullptr, 0, nullptr, nullptr)
               : PEM_write_bio_X509(bio.get(), cert);
  if (ok != 1) return Internal(OpenSslError("PEM encoding"));
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

}  // namespace

Result<TlsIdentity> MakeSelfSignedIdentity(const std::vector<std::string>& hosts) {
  PkeyPtr pkey(EVP_EC_gen("P-256"));
  if (!pkey) return Internal(OpenSslError("generating a P-256 key"));
  X509Ptr cert(X509_new());
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof serial);
  serial[0] &= 0x7F;
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 30L * 24 * 3600);
  X509_set_pubkey(cert.get(), pkey.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("loopwarden-sim"), -1, -1,
                             0);
  X509_set_issuer_name(cert.get(), name);
  std::string san;
  for (const std::string& h : hosts) {
    if (!san.empty()) san += ",";
    san += (IsIpAddress(h) ? "IP:" : "DNS:") + h;
  }
  if (!AddExtension(cert.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      !AddExtension(cert.get(), NID_key_usage, "critical,digitalSignature,keyCertSign") ||
      !AddExtension(cert.get(), NID_ext_key_usage, "serverAuth") ||
      !AddExtension(cert.get(), NID_subject_key_identifier, "hash") ||
      (!san.empty() && !AddExtension(cert.get(), NID_subject_alt_name, san))) {
    return Internal(OpenSslError("adding certificate extensions"));
  }
  if (X509_sign(cert.get(), pkey.get(), EVP_sha256()) == 0) return Internal(OpenSslError("signing"));
  LW_ASSIGN_OR_RETURN(std::string cert_pem, ToPem(false, nullptr, cert.get()));
  LW_ASSIGN_OR_RETURN(std::string key_pem, ToPem(true, pkey.get(), nullptr));
  return TlsIdentity{std::move(cert_pem), std::move(key_pem)};
}

}  // namespace loopwarden::net
