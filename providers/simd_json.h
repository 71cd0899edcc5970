#pragma once
// Reading provider bodies with simdjson: the listings' JSON, parsed to a tape and read
// in place, without a DOM of allocated values.
//
// At 100k resources a steady cycle parses about 57 MB of listings. Boost.JSON's DOM and
// the readers' lookups in it were 40 % of the cycle's instructions; simdjson reads the
// same bodies at several times the speed (bench/README.md). Only the providers' parse
// files include this header: simdjson.h is large, and most of the build never needs it.
//
// The accessors mirror core/json.h, and keep its meanings: a key given twice counts
// with its last copy (as in a Boost.JSON object), int64 values may arrive as strings,
// and anything of an unexpected type is "nothing".

#include <simdjson.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/status.h"
#include "core/time.h"
#include "providers/list_items.h"

namespace loopwarden::providers::sj {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

// Parses `body` into the calling thread's parser (valid until its next Parse). Bodies
// are checked as json::Parse checks them (syntax, UTF-8, depth 64, nothing after the
// value, at most `max_bytes`), and a refused one gets json::Parse's error, naming
// `what`, so a message does not depend on which parser read the body.
// A body with SIMDJSON_PADDING bytes of room past its end (the transport's are) is read
// where it is; any other is copied into padded room first.
Result<element> Parse(const std::string& body, std::string_view what, size_t max_bytes = 256 << 20);

// Equal keys of the same length, without a call to memcmp for the short keys the
// providers use (a call per candidate was 4 % of a steady cycle): the first and last
// eight bytes, which are all of a key of 8 to 16 bytes. Forced inline: out of line, GCC
// made 8.7 M calls of it in three steady cycles at 100k.
[[gnu::always_inline]] inline bool SameKeyOfLength(std::string_view a, std::string_view b) {
  const size_t n = a.size();
  const char *x = a.data(), *y = b.data();
  const auto load8 = [](const char* p) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
  };
  const auto load4 = [](const char* p) {
    uint32_t w;
    std::memcpy(&w, p, 4);
    return w;
  };
  if (n >= 8) {
    if (load8(x) != load8(y) || load8(x + n - 8) != load8(y + n - 8)) return false;
    return n <= 16 || std::memcmp(x + 8, y + 8, n - 16) == 0;
  }
  if (n >= 4) return load4(x) == load4(y) && load4(x + n - 4) == load4(y + n - 4);
  for (size_t i = 0; i < n; ++i) {
    if (x[i] != y[i]) return false;
  }
  return true;
}

// An object's members, walked once for the many lookups a reader makes: a lookup in a
// simdjson object walks its tape member by member, and with a reader's dozen lookups
// into twenty members that was 14 % of a steady cycle's instructions. Looked up by a
// hash of the key; of a key's copies, the last counts. Objects convert implicitly: a
// reader takes Members, and its object is walked once on the way in.
class Members {
 public:
  Members(const object& o);  // NOLINT: implicit on purpose (above)
  std::optional<element> Get(std::string_view key) const;

 private:
  struct Member {
    std::string_view key;
    element value;
  };
  // Left unconstructed until filled: a reader's object is read ~1M times a steady
  // cycle at 100k, and constructing 32 members for each was a tenth of the walk.
  union Slot {
    Slot() noexcept {}  // NOLINT: leaves `m` unconstructed on purpose
    Member m;
  };
  static_assert(std::is_trivially_copyable_v<Member> && std::is_trivially_destructible_v<Member>);
  static constexpr size_t kInline = 32;  // documented objects have at most about 20
  // The inline members by a hash of their key (1 + index; 0 is empty), at most half
  // full: a lookup probes one or two slots where a scan compared half the members.
  // Built only for objects of more than kScanned members; smaller ones are scanned.
  static constexpr size_t kSlots = 64;
  static constexpr size_t kScanned = 8;
  static size_t SlotOf(std::string_view key);
  static_assert(kSlots >= 2 * kInline && kSlots == 64);  // SlotOf keeps 6 bits
  Slot inline_[kInline];
  uint8_t slots_[kSlots];  // unset for kScanned members or fewer
  size_t size_ = 0;
  std::vector<Member> more_;  // past kInline, in order
};

// A reader's keys, fixed when it is compiled, for Pick (below). Keys(k) is the index of
// key k, checked at compile time: a key the reader does not list does not build.
template <size_t N>
class Keys {
 public:
  template <class... S>
  consteval explicit Keys(const S&... keys) : keys_{std::string_view(keys)...} {
    static_assert(sizeof...(S) == N && N <= 64);
    // Counting sort by length: Find compares only the keys of a member's length.
    std::array<uint8_t, kMaxLen + 2> count{};
    for (size_t i = 0; i < N; ++i) {
      if (keys_[i].size() > kMaxLen) throw "a key longer than Keys::kMaxLen";
      for (size_t j = 0; j < i; ++j) {
        if (keys_[j] == keys_[i]) throw "a key listed twice";
      }
      ++count[keys_[i].size()];
    }
    for (size_t len = 0; len <= kMaxLen; ++len) first_[len + 1] = static_cast<uint8_t>(first_[len] + count[len]);
    std::array<uint8_t, kMaxLen + 2> next = first_;
    for (size_t i = 0; i < N; ++i) order_[next[keys_[i].size()]++] = static_cast<uint8_t>(i);
  }
  consteval size_t operator()(std::string_view key) const {
    for (size_t i = 0; i < N; ++i) {
      if (keys_[i] == key) return i;
    }
    throw "not one of this reader's keys";
  }
  static constexpr size_t size() { return N; }
  constexpr std::string_view Name(size_t i) const { return keys_[i]; }
  // The index of `key`, or N.
  size_t Find(std::string_view key) const noexcept {
    if (key.size() > kMaxLen) return N;
    for (size_t i = first_[key.size()], end = first_[key.size() + 1]; i < end; ++i) {
      if (SameKeyOfLength(keys_[order_[i]], key)) return order_[i];
    }
    return N;
  }

 private:
  static constexpr size_t kMaxLen = 32;
  std::array<std::string_view, N> keys_;
  std::array<uint8_t, kMaxLen + 2> first_{};  // by length: where its keys start in order_
  std::array<uint8_t, N> order_{};            // the keys' indices, shortest first
};
template <class... S>
Keys(const S&...) -> Keys<sizeof...(S)>;

// The members of an object that a reader's Keys name, found in one walk of it. A
// reader of a listed object reads a dozen of its twenty-odd members: Members built a
// table of all of them for each object, then hashed each key looked up, which was 12 %
// of a steady cycle's instructions at 100k. Of a repeated key the last copy counts, as
// with Members.
template <size_t N>
class Picked {
 public:
  std::optional<element> operator[](size_t k) const {
    if ((found_ >> k & 1) == 0) return std::nullopt;
    return values_[k];
  }

 private:
  template <size_t M>
  friend Picked<M> Pick(const object& o, const Keys<M>& keys);
  std::array<element, N> values_;
  uint64_t found_ = 0;
};

template <size_t N>
Picked<N> Pick(const object& o, const Keys<N>& keys) {
  Picked<N> p;
  for (const auto& m : o) {
    const size_t k = keys.Find(m.key);
    if (k < N) {
      p.values_[k] = m.value;
      p.found_ |= uint64_t{1} << k;
    }
  }
  return p;
}

// The accessors below, for a member already found (nothing: absent).
std::optional<std::string_view> AsView(const std::optional<element>& v);
std::optional<int64_t> AsInt(const std::optional<element>& v);
std::optional<bool> AsBool(const std::optional<element>& v);
std::optional<object> AsObj(const std::optional<element>& v);
std::optional<Time> AsTime(const std::optional<element>& v);
// `{"name": "ACTIVE"}` or a bare "ACTIVE" string.
std::optional<std::string_view> AsStatusName(const std::optional<element>& v);

std::optional<element> Get(const Members& o, std::string_view key);
std::optional<object> Obj(const Members& o, std::string_view key);
std::optional<array> Arr(const Members& o, std::string_view key);
std::optional<std::string_view> AsView(const element& v);
std::optional<std::string> Str(const Members& o, std::string_view key);
std::optional<std::string_view> View(const Members& o, std::string_view key);
std::optional<int64_t> AsInt(const element& v);
std::optional<int64_t> Int(const Members& o, std::string_view key);
// A number, or a string holding a decimal ("12.40").
std::optional<double> AsNum(const element& v);
std::optional<double> Num(const Members& o, std::string_view key);
// The value as compact JSON text, appended to `out` (without a string of its own: a
// trimmed listing is written member by member).
void AppendJson(std::string& out, const element& v);
// Equal as JSON values are (Boost.JSON's ==): objects by their members in any order.
bool Same(const element& a, const element& b);

// list_items.h's reading of a listing array, for simdjson's.
template <class T, class Fn>
std::vector<T> ReadListItems(const array& arr, Fn read, int& dropped) {
  return ReadListItemsWith<T>(
      arr, arr.size(), [](const element& v) { return v; },
      [](const element& v) {
        object o;
        return v.get_object().get(o) ? std::optional<object>() : std::optional<object>(o);
      },
      read, [](const element& kept, const element& v) { return Same(kept, v); }, dropped);
}

}  // namespace loopwarden::providers::sj
