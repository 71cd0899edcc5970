// FieldHasher's values are persisted (resources.fingerprint): they must not move.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "core/flat_hash.h"
#include "core/hash.h"

using namespace loopwarden;

namespace {

// The hash as first written: each string's length, then its bytes eight at a time,
// the last few copied into a zeroed word.
uint64_t Reference(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  auto word = [&](uint64_t w) {
    h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
    h ^= h >> 29;
  };
  word(s.size());
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    word(w);
  }
  if (i < s.size()) {
    uint64_t w = 0;
    std::memcpy(&w, s.data() + i, s.size() - i);
    word(w);
  }
  return h;
}

}  // namespace

TEST_CASE("field hasher: every length hashes as the persisted values were made, at any alignment") {
  std::string text;
  for (int i = 0; i < 48; ++i) text += static_cast<char>(i % 2 == 0 ? 'a' + i % 26 : 0x80 + i);  // high bytes too
  for (size_t offset = 0; offset < 8; ++offset) {
    for (size_t n = 0; offset + n <= text.size(); ++n) {
      const std::string_view s(text.data() + offset, n);
      CAPTURE(offset);
      CAPTURE(n);
      FieldHasher h;
      h.Add(s);
      CHECK(h.value() == Reference(s));
    }
  }
  // A value a stored row holds (resources.fingerprint written by earlier versions).
  CHECK(CountersFingerprint("steps=100") == Reference("steps=100"));
}

TEST_CASE("text hash: a key and its view hash alike, and a change in any byte moves it") {
  const std::string key = "baseten/acme/baseten.run/r1234567";
  CHECK(TextHash{}(key) == TextHash{}(std::string_view(key)));
  for (size_t i = 0; i < key.size(); ++i) {
    std::string other = key;
    other[i] = static_cast<char>(other[i] ^ 1);
    CAPTURE(i);
    CHECK(TextHash{}(other) != TextHash{}(key));
  }
  HashMap<std::string_view, int> m;
  m[key] = 1;
  m["baseten/acme/baseten.run/r1234568"] = 2;
  CHECK(m.at(key) == 1);
  CHECK(m.size() == 2);
}

TEST_CASE("a counters fingerprint of parts is the fingerprint of their concatenation") {
  // Every split of texts of 0 to 40 bytes (high bytes among them) into three parts, and
  // a job's progress joined to its checkpoint count, as the Fireworks adapter joins them.
  std::string text;
  for (int i = 0; i < 40; ++i) text += static_cast<char>(i % 3 == 0 ? 0xC3 + i : 'a' + i);
  for (size_t n = 0; n <= text.size(); ++n) {
    const std::string_view whole = std::string_view(text).substr(0, n);
    for (size_t i = 0; i <= n; ++i) {
      for (size_t j = i; j <= n; ++j) {
        CAPTURE(n);
        CAPTURE(i);
        CAPTURE(j);
        REQUIRE(loopwarden::CountersFingerprintJoined({whole.substr(0, i), whole.substr(i, j - i), whole.substr(j)}) ==
                loopwarden::CountersFingerprint(whole));
      }
    }
  }
  const std::string progress = R"({"percent":42,"step":1200})";
  CHECK(loopwarden::CountersFingerprintJoined({progress, "|", "3"}) ==
        loopwarden::CountersFingerprint(progress + "|3"));
  CHECK(loopwarden::CountersFingerprintJoined({"", "", ""}) == 0);
}
