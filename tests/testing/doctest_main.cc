#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>

int main(int argc, char** argv) {
  // Every test talks to 127.0.0.1, and loopwarden honours proxy variables as curl does
  // (loopback included): a proxy set on the machine running the tests must not carry
  // their traffic. Tests of proxies set what they need explicitly.
  for (const char* v : {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY"}) unsetenv(v);
  doctest::Context context(argc, argv);
  return context.run();
}
