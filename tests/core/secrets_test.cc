#include <doctest/doctest.h>

#include <string>

#include "core/secrets.h"

namespace lw = loopwarden;

// Redact looks for secrets only where one of their first four bytes' prefixes occurs,
// and not at all in text shorter than the shortest secret: these cases pin down that
// neither shortcut lets a secret through.
TEST_CASE("Redact finds every secret among many that share a prefix, wherever it is") {
  lw::ClearSecretsForTesting();
  for (int i = 0; i < 20; ++i) lw::RegisterSecret("key-gen-" + std::to_string(i));
  lw::RegisterSecret("other-secret-value");
  // A false start ("key-gen-x") before the real one, overlapping prefixes, and the
  // secret at the very end.
  CHECK(lw::Redact("a key-gen-x then key-key-gen-19") == "a key-gen-x then key-[REDACTED]");
  CHECK(lw::Redact("key-gen-7") == "[REDACTED]");
  CHECK(lw::Redact("{\"name\":\"other-secret-value\"}") == "{\"name\":\"[REDACTED]\"}");
  // "key-gen-1" is inside "key-gen-12": the longer one is redacted whole.
  CHECK(lw::Redact("x key-gen-12 y key-gen-1") == "x [REDACTED] y [REDACTED]");
  CHECK(lw::ContainsSecret("..key-gen-3.."));
  CHECK_FALSE(lw::ContainsSecret("key-gen-"));
  CHECK_FALSE(lw::ContainsSecret("key-ge"));  // shorter than any secret
  CHECK(lw::Redact("plain text, no secret here at all") == "plain text, no secret here at all");
  CHECK(lw::Redact("") == "");
  lw::ClearSecretsForTesting();
  CHECK(lw::Redact("key-gen-7") == "key-gen-7");
}

TEST_CASE("a secret registered later, with a new prefix, is found too") {
  lw::ClearSecretsForTesting();
  lw::RegisterSecret("aaaa-first");
  CHECK(lw::Redact("zzzz-second") == "zzzz-second");
  lw::RegisterSecret("zzzz-second");
  CHECK(lw::Redact("x zzzz-second aaaa-first") == "x [REDACTED] [REDACTED]");
  lw::ClearSecretsForTesting();
}
