#pragma once
// A 64-bit hash of a sequence of fields, for telling "changed" from "unchanged" (never
// for anything an adversary could exploit).

#include <cstdint>
#include <cstring>
#include <initializer_list>
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
    const char* p = s.data();
    const size_t n = s.size();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) Word(Load8(p + i));
    if (i < n) Word(Tail(p, i, n));
  }
  // Add() of the parts' concatenation, `total` bytes long, without making it: whole
  // words straight from a part while the word boundaries fall on its start, bytes
  // gathered across the joins.
  void AddJoined(std::initializer_list<std::string_view> parts, size_t total) {
    Word(total);
    uint64_t w = 0;
    size_t k = 0;  // bytes gathered in w
    for (std::string_view part : parts) {
      const char* p = part.data();
      size_t i = 0;
      if (k == 0) {
        for (; i + 8 <= part.size(); i += 8) Word(Load8(p + i));
      }
      for (; i < part.size(); ++i) {
        w |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * k);
        if (++k == 8) {
          Word(w);
          w = 0;
          k = 0;
        }
      }
    }
    if (k != 0) Word(w);
  }
  void Add(int64_t v) { Word(static_cast<uint64_t>(v)); }
  void Add(bool b) { Word(b ? 1 : 2); }
  void Add(const std::optional<Time>& t) { Add(t ? ToUnixMicros(*t) : INT64_MIN); }
  uint64_t value() const { return h_; }

 private:
  static uint64_t Load8(const char* p) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
  }
  static uint64_t Load4(const char* p) {
    uint32_t w;
    std::memcpy(&w, p, 4);
    return w;
  }
  // The last n - i (1 to 7) bytes as a little-endian word, zero above them: the value a
  // copy into a zeroed word gives, without a call to memcpy of a variable length (one
  // per string, 0.4 % of a steady cycle's instructions). From a string of 8 bytes or
  // more, the word ending at its end, shifted; from a shorter one, overlapping loads
  // whose common bytes agree.
  static uint64_t Tail(const char* p, size_t i, size_t n) {
    const size_t rem = n - i;
    if (n >= 8) return Load8(p + n - 8) >> (8 * (8 - rem));
    if (rem >= 4) return Load4(p) | Load4(p + rem - 4) << (8 * (rem - 4));
    const auto byte = [&](size_t k) { return static_cast<uint64_t>(static_cast<uint8_t>(p[k])) << (8 * k); };
    return byte(0) | byte(rem / 2) | byte(rem - 1);
  }
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

// CountersFingerprint() of the parts' concatenation, without making it (an allocation
// per Fireworks job per poll, for its progress text and checkpoint count).
inline uint64_t CountersFingerprintJoined(std::initializer_list<std::string_view> parts) {
  size_t total = 0;
  for (std::string_view part : parts) total += part.size();
  if (total == 0) return 0;
  FieldHasher h;
  h.AddJoined(parts, total);
  return h.value() == 0 ? 1 : h.value();
}

}  // namespace loopwarden
