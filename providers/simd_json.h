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

#include <cstdint>
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
std::optional<bool> Bool(const Members& o, std::string_view key);
std::optional<Time> TimeField(const Members& o, std::string_view key);
// `{"name": "ACTIVE"}` or a bare "ACTIVE" string.
std::optional<std::string_view> StatusNameView(const Members& o, std::string_view key);
// The value as compact JSON text.
std::string Serialize(const element& v);
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
