// libFuzzer: the configuration and policy loader on arbitrary text. It must return a
// Result (an error naming file:line:col) and never crash, hang or read a secret.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  loopwarden::config::LoadOptions o;
  o.resolve_secrets = false;
  o.env = [](const std::string& k) -> std::optional<std::string> {
    if (k == "HOME") return std::string("/home/fuzz");
    return std::nullopt;
  };
  auto r = loopwarden::config::LoadConfigText(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.yaml", o);
  if (!r.ok() && r.status().message().empty()) __builtin_trap();  // every error says what and where
  return 0;
}
