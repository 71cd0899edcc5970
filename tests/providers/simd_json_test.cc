// providers/simd_json.h: the provider bodies' reader keeps core/json.h's meanings.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "core/json.h"
#include "providers/simd_json.h"

using namespace loopwarden;
namespace sj = loopwarden::providers::sj;

namespace {

sj::object Object(const std::string& text) {
  auto v = sj::Parse(text, "test");
  REQUIRE(v.ok());
  sj::object o;
  REQUIRE_FALSE(v->get_object().get(o));
  return o;
}

}  // namespace

TEST_CASE("simdjson accepts and refuses the bodies Boost.JSON does, with json::Parse's words") {
  const std::string deep_ok = std::string(63, '[') + std::string(63, ']');
  const std::string too_deep = std::string(65, '[') + std::string(65, ']');
  const char* cases[] = {
      R"({"a":1})", R"([1,2.5,-3e2,"x",true,false,null])", R"({"a":"\u00e9\ud83d\ude00"})", "  {}  ",
      // Refused by both:
      "", "{", R"({"a":1,})", R"([1,])", R"({"a":01})", R"({"a":NaN})", "{} {}", R"({"a":"\x"})",
      "{\"a\":\"\x01\"}", "{\"a\":\"\xff\"}", "/* c */ {}", R"({'a':1})", "[1 2]",
  };
  for (const char* text : cases) {
    CAPTURE(text);
    auto mine = sj::Parse(text, "GET /x");
    auto boosts = json::Parse(text, "GET /x");
    CHECK(mine.ok() == boosts.ok());
    if (!mine.ok() && !boosts.ok()) CHECK(mine.status().message() == boosts.status().message());
  }
  CHECK(sj::Parse(deep_ok, "deep").ok());
  CHECK(json::Parse(deep_ok, "deep").ok());
  CHECK_FALSE(sj::Parse(too_deep, "deep").ok());
  CHECK_FALSE(json::Parse(too_deep, "deep").ok());
  // An integer past 64 bits: Boost.JSON reads it as a double, simdjson refuses it, and
  // so does the reader, naming why (the providers send none).
  auto big = sj::Parse(R"({"n":123456789012345678901234567890})", "GET /big");
  REQUIRE_FALSE(big.ok());
  CHECK(big.status().message().find("GET /big: unreadable JSON") == 0);
  auto huge = sj::Parse(std::string(100, ' ') + "{}", "GET /huge", 50);
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.status().message().find("too large") != std::string::npos);
}

TEST_CASE("simdjson accessors: a repeated key counts with its last copy, int64 strings, wrong types are nothing") {
  const sj::object o = Object(
      R"({"state":"READY","state":"DELETING","n":"86400","d":2.9,"u":18446744073709551615,"neg":-4,)"
      R"("s":"12.40","bad":"12x","t":"2026-08-01T09:41:02.5Z","b":true,"st":{"name":"ACTIVE"},"arr":[1],"o":{"k":1}})");
  CHECK(sj::View(o, "state") == "DELETING");  // as a Boost.JSON object keeps it
  CHECK(sj::Int(o, "n") == 86400);
  CHECK(sj::Int(o, "d") == 2);
  CHECK_FALSE(sj::Int(o, "u").has_value());  // past int64
  CHECK(sj::Int(o, "neg") == -4);
  CHECK_FALSE(sj::Int(o, "bad").has_value());
  CHECK(sj::Num(o, "s") == doctest::Approx(12.4));
  CHECK_FALSE(sj::Num(o, "bad").has_value());
  CHECK(sj::AsTime(sj::Get(o, "t")) == ParseTime("2026-08-01T09:41:02.5Z").value());
  CHECK_FALSE(sj::AsTime(sj::Get(o, "state")).has_value());
  CHECK(sj::AsBool(sj::Get(o, "b")) == true);
  CHECK_FALSE(sj::AsBool(sj::Get(o, "n")).has_value());
  CHECK(sj::AsStatusName(sj::Get(o, "st")) == "ACTIVE");
  CHECK(sj::AsStatusName(sj::Get(o, "state")) == "DELETING");
  CHECK(sj::Arr(o, "arr").has_value());
  CHECK_FALSE(sj::Arr(o, "o").has_value());
  CHECK(sj::Obj(o, "o").has_value());
  CHECK_FALSE(sj::Obj(o, "arr").has_value());
  CHECK_FALSE(sj::View(o, "n2").has_value());
  std::string text;
  sj::AppendJson(text, *sj::Get(o, "o"));
  CHECK(text == R"({"k":1})");
}

TEST_CASE("simdjson values compare as Boost.JSON's do: members in any order, one per key, numbers by kind") {
  // Both values in one document, so both live at once (one parser per thread).
  auto same = [](std::string_view a, std::string_view b) {
    auto x = json::Parse(a, "a");
    auto y = json::Parse(b, "b");
    REQUIRE(x.ok());
    REQUIRE(y.ok());
    auto both = sj::Parse("[" + std::string(a) + "," + std::string(b) + "]", "both");
    REQUIRE(both.ok());
    sj::array arr;
    REQUIRE_FALSE(both->get_array().get(arr));
    auto it = arr.begin();
    const sj::element first = *it;
    ++it;
    const bool mine = sj::Same(first, *it);
    CHECK(mine == (*x == *y));
    return mine;
  };
  CHECK(same(R"({"a":1,"b":[1,"x"]})", R"({"b":[1,"x"],"a":1})"));
  CHECK_FALSE(same(R"({"a":1})", R"({"a":1,"b":2})"));
  CHECK(same(R"({"a":1,"a":2})", R"({"a":2})"));
  CHECK_FALSE(same(R"({"a":1,"a":2})", R"({"a":1})"));
  CHECK_FALSE(same("[1,2]", "[2,1]"));
  CHECK(same("1", "1"));
  CHECK_FALSE(same("1", "1.0"));
  CHECK(same("9223372036854775807", "9223372036854775807"));
  CHECK(same(R"({"x":null,"y":true})", R"({"y":true,"x":null})"));
  CHECK_FALSE(same(R"("a")", R"("b")"));
}

TEST_CASE("simdjson Members: an object past its inline room is read whole, and a key's last copy wins across it") {
  std::string text = "{";
  for (int i = 0; i < 40; ++i) text += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
  text += R"("k3":"late","k39":"later"})";
  const sj::Members m(Object(text));
  CHECK(sj::Int(m, "k0") == 0);
  CHECK(sj::Int(m, "k31") == 31);  // the last inline member
  CHECK(sj::Int(m, "k32") == 32);  // the first past it
  CHECK(sj::View(m, "k3") == "late");    // repeated past the inline room
  CHECK(sj::View(m, "k39") == "later");  // repeated within the overflow
  CHECK_FALSE(sj::Get(m, "k40").has_value());
}

TEST_CASE("simdjson Members: keys that share a hash slot are told apart, and a repeated one's last copy wins") {
  // Same length, first, middle and last byte: one probe chain for all four. Past
  // kScanned members, so the table is built (the fillers make up the count).
  const sj::Members m(Object(R"({"abcde":1,"aXcYe":2,"abcde":3,"aQcRe":4,"id":"x","f1":0,"f2":0,"f3":0,"f4":0})"));
  CHECK(sj::Int(m, "abcde") == 3);
  CHECK(sj::Int(m, "aXcYe") == 2);
  CHECK(sj::Int(m, "aQcRe") == 4);
  CHECK(sj::View(m, "id") == "x");
  CHECK_FALSE(sj::Get(m, "aZcZe").has_value());
  CHECK_FALSE(sj::Get(m, "abcdf").has_value());
}

TEST_CASE("simdjson Members: objects scanned and objects hashed read alike, the last copy of a key winning") {
  // Up to kScanned (8) members an object is scanned; past it, hashed. Every size from
  // 0 to 12, each with its first key repeated at the end.
  for (int n = 0; n <= 12; ++n) {
    CAPTURE(n);
    std::string text = "{";
    for (int i = 0; i < n; ++i) text += "\"key" + std::to_string(i) + "\":" + std::to_string(i) + ",";
    text += R"("key0":"last"})";
    const sj::Members m(Object(text));
    CHECK(sj::View(m, "key0") == "last");
    for (int i = 1; i < n; ++i) CHECK(sj::Int(m, "key" + std::to_string(i)) == i);
    CHECK_FALSE(sj::Get(m, "key" + std::to_string(std::max(n, 1))).has_value());  // key0 is there even at 0
    CHECK_FALSE(sj::Get(m, "").has_value());
    CHECK_FALSE(sj::Get(m, "key").has_value());
  }
  const sj::Members empty(Object("{}"));
  CHECK_FALSE(sj::Get(empty, "id").has_value());
}

namespace {

// Keys of every length class SameKeyOfLength reads differently (under 4, 4-7, 8-16,
// past 16), several of one length, the empty key and one of the longest allowed (32).
constexpr sj::Keys kPickKeys("", "id", "ab", "name", "nAme", "state", "createdBy", "nodeCount", "createTime",
                             "updateTime", "inactivityTimeout", "disableInactivityCleanup",
                             "abcdefghijklmnopqrstuvwxyz012345");
constexpr std::string_view kPickKeyText[] = {"", "id", "ab", "name", "nAme", "state", "createdBy", "nodeCount",
                                             "createTime", "updateTime", "inactivityTimeout",
                                             "disableInactivityCleanup", "abcdefghijklmnopqrstuvwxyz012345"};

}  // namespace

TEST_CASE("simdjson Pick: one walk finds what Members finds for a reader's keys, the last copy of each") {
  static_assert(kPickKeys("") == 0 && kPickKeys("nAme") == 4 && kPickKeys("abcdefghijklmnopqrstuvwxyz012345") == 12);
  // Near misses: each listed key with one byte changed at its start, middle or end (every
  // position SameKeyOfLength reads from), a byte longer and a byte shorter; and a key
  // past the longest allowed.
  std::vector<std::string> pool(std::begin(kPickKeyText), std::end(kPickKeyText));
  for (std::string_view k : kPickKeyText) {
    for (size_t at : {size_t{0}, k.size() / 2, k.size() - 1}) {
      if (k.empty()) break;
      std::string miss(k);
      miss[at] = miss[at] == '#' ? '$' : '#';
      pool.push_back(miss);
    }
    pool.push_back(std::string(k) + "x");
    if (!k.empty()) pool.push_back(std::string(k.substr(1)));
  }
  pool.push_back("abcdefghijklmnopqrstuvwxyz0123456");
  // 3,000 objects of 0 to 40 members drawn from the pool, repeats included, each value
  // its member's index (so a wrong copy reads as a wrong number).
  uint64_t seed = 12345;
  const auto next = [&seed] {
    seed = seed * 6364136223846793005u + 1442695040888963407u;
    return static_cast<size_t>(seed >> 33);
  };
  int found = 0, repeated = 0;
  for (int round = 0; round < 3000; ++round) {
    CAPTURE(round);
    const size_t n = next() % 41;
    std::string text = "{";
    std::vector<std::string> keys;
    for (size_t i = 0; i < n; ++i) {
      keys.push_back(pool[next() % pool.size()]);
      text += (i ? "," : "") + ("\"" + keys.back() + "\":") + std::to_string(i);
    }
    text += "}";
    const sj::object o = Object(text);
    const auto picked = sj::Pick(o, kPickKeys);
    const sj::Members members(o);
    for (size_t k = 0; k < std::size(kPickKeyText); ++k) {
      CAPTURE(kPickKeyText[k]);
      const auto mine = picked[k];
      const auto theirs = sj::Get(members, kPickKeyText[k]);
      REQUIRE(mine.has_value() == theirs.has_value());
      if (!mine) continue;
      ++found;
      CHECK(sj::AsInt(mine) == sj::AsInt(theirs));
      if (std::count(keys.begin(), keys.end(), kPickKeyText[k]) > 1) ++repeated;
    }
  }
  // The draw reached what it is for: keys found, and found repeated.
  INFO("found " << found << ", repeated " << repeated);  // 8,838 and 1,370 with this seed
  CHECK(found > 5000);
  CHECK(repeated > 500);
}

TEST_CASE("simdjson AppendJson writes text that reads back as the same value, for every kind of value") {
  const std::string values[] = {
      R"("plain")", R"("q\"uo\\te\n\t\r\b\f")", R"("\u0000\u001f ctl")", R"("caf\u00e9 \ud83d\ude00 é")", "0", "-7",
      "9223372036854775807", "-9223372036854775808", "18446744073709551615", "1.5", "-0.25", "1e300", "true",
      "false", "null", R"({"a":[1,"x",{"b":null}],"c":{}})", "[]"};
  for (const std::string& text : values) {
    CAPTURE(text);
    auto v = sj::Parse(text, "value");
    REQUIRE(v.ok());
    std::string out = "[" + text + ",";
    sj::AppendJson(out, *v);
    out += "]";
    // Both in one document, so both live at once (one parser per thread).
    auto both = sj::Parse(out, "both");
    REQUIRE(both.ok());
    sj::array arr;
    REQUIRE_FALSE(both->get_array().get(arr));
    REQUIRE(arr.size() == 2);
    CHECK(sj::Same(arr.at(0).value(), arr.at(1).value()));
  }
}
