#pragma once
// A 64-bit hash of a sequence of fields, for telling "changed" from "unchanged" (never
// for anything an adversary could exploit).

#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

#include "core/time.h"

namespace loopwarden {

// Eight bytes at a time: each word is xored in, then the state is multiplied by an odd
// constant and xor-shifted, all bijections of the state, so two inputs that differ in
// one field never hash alike. Each string's length goes first, so ("ab","c") and
// ("a","bc") differ. (Byte at a time, FNV-1a, this was 5 % of a steady 100k cycle.)
// The values are persisted (resources.fingerprint): changing this function makes the
// next cycle rewrite every resource row once.
class FieldHasher {
 public:
  void Add(std::string_view s) {
    Word(s.size());
    size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      Word(w);
    }
    if (i < s.size()) {
      uint64_t w = 0;
      std::memcpy(&w, s.data() + i, s.size() - i);
      Word(w);
    }
  }
  void Add(int64_t v) { Word(static_cast<uint64_t>(v)); }
  void Add(bool b) { Word(b ? 1 : 2); }
  void Add(const std::optional<Time>& t) { Add(t ? ToUnixMicros(*t) : INT64_MIN); }
  uint64_t value() const { return h_; }

 private:
  void Word(uint64_t w) {
    h_ = (h_ ^ w) * 0x9E3779B97F4A7C15ULL;
    h_ ^= h_ >> 29;
  }
  uint64_t h_ = 1469598103934665603ULL;
};

// The fingerprint of an activity counters text ("prefill=20000,sample=8000"): 0 for
// none, never 0 for a text. Equal texts give equal values across versions: the store
// compares it with the hash of a text an older loopwarden wrote.
inline uint64_t CountersFingerprint(std::string_view text) {
  if (text.empty()) return 0;
  FieldHasher h;
  h.Add(text);
  return h.value() == 0 ? 1 : h.value();
}

}  // namespace loopwarden
