// Reading the rows of a body one element at a time (json::ForEachElement), against
// what the whole DOM holds.
#include <doctest/doctest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/json.h"
#include "core/json_elements.h"

namespace bj = boost::json;
using namespace loopwarden;

namespace {

using Rows = std::vector<std::pair<std::string, std::string>>;  // (key, serialized element)

Result<Rows> Stream(std::string_view body, std::initializer_list<std::string_view> keys) {
  Rows rows;
  auto found = json::ForEachElement(body, "GET /bill", keys, [&](std::string_view key, const bj::value& v) {
    rows.emplace_back(std::string(key), bj::serialize(v));
  });
  if (!found.ok()) return found.status();
  return rows;
}

// The same rows from the DOM: the listed keys' arrays, in document order.
Rows FromDom(std::string_view body, std::initializer_list<std::string_view> keys) {
  Rows rows;
  const bj::value doc = bj::parse(body);
  for (const auto& kv : doc.get_object()) {
    bool listed = false;
    for (std::string_view k : keys) listed = listed || k == std::string_view(kv.key());
    if (!listed || !kv.value().is_array()) continue;
    for (const bj::value& v : kv.value().get_array()) rows.emplace_back(std::string(kv.key()), bj::serialize(v));
  }
  return rows;
}

}  // namespace

TEST_CASE("the elements of the listed arrays arrive one by one, as the DOM holds them") {
  const std::string long_text(9000, 'x');
  const std::vector<std::string> bodies = {
      R"({"serverlessCosts":[{"a":1}],"dedicatedCosts":[{"deploymentId":"d1","acceleratorSeconds":"7200"}],)"
      R"("trainingCosts":[{"tokens":"5","nested":{"deep":[1,2,{"x":null}]}},{"tokens":6}]})",
      // Scalars, empty containers and every number kind inside elements; a listed key whose
      // value is no array is skipped; unlisted arrays of objects are skipped whole.
      R"({"other":[{"trainingCosts":[{"no":1}]}],"dedicatedCosts":null,"trainingCosts":[1,"s",true,null,-2,)"
      R"(18446744073709551615,1.5e3,[],{},[[{"k":[]}]]],"tail":{"dedicatedCosts":[{"no":2}]}})",
      // A key written with escapes is the same key; long strings and keys with escapes
      // reach the handler in parts.
      R"({"training\u0043osts":[{"k\n)" + long_text + R"(":"v\t)" + long_text + R"("}],"x":")" + long_text + R"("})",
      R"({})",
      R"({"trainingCosts":[]})",
      "  {\"trainingCosts\" : [ {\"a\" : [ ] } ] }  \n",
  };
  for (const std::string& body : bodies) {
    CAPTURE(body.substr(0, 120));
    auto rows = Stream(body, {"trainingCosts", "dedicatedCosts"});
    REQUIRE(rows.ok());
    CHECK(*rows == FromDom(body, {"trainingCosts", "dedicatedCosts"}));
  }
  auto first = Stream(bodies[0], {"trainingCosts", "dedicatedCosts"});
  REQUIRE(first.ok());
  REQUIRE(first->size() == 3);
  CHECK((*first)[0] == std::pair<std::string, std::string>{"dedicatedCosts", R"({"deploymentId":"d1","acceleratorSeconds":"7200"})"});
  CHECK((*first)[2].second == R"({"tokens":6})");
  auto scalars = Stream(bodies[1], {"trainingCosts", "dedicatedCosts"});
  REQUIRE(scalars.ok());
  CHECK(scalars->size() == 10);
}

TEST_CASE("a body that is not one JSON object, or names a listed key twice, is refused with what was read") {
  struct Case {
    std::string body;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {R"([{"trainingCosts":[]}])", "GET /bill: expected a JSON object"},
           {R"("trainingCosts")", "GET /bill: expected a JSON object"},
           {R"(12)", "GET /bill: expected a JSON object"},
           {R"({"trainingCosts":[{"a":1}],"trainingCosts":[{"a":2}]})", "GET /bill: key 'trainingCosts' appears twice"},
           {R"({"trainingCosts":[{"a":1}])", "GET /bill: malformed JSON"},
           {R"({"trainingCosts":[{"a":1}]} {})", "GET /bill: malformed JSON"},
           {R"({"trainingCosts":[{"a":"\xff"}]})", "GET /bill: malformed JSON"},
           {"", "GET /bill: malformed JSON"},
           {"{\"trainingCosts\":" + std::string(70, '[') + std::string(70, ']') + "}", "GET /bill: malformed JSON"},
       }) {
    CAPTURE(c.body);
    auto rows = Stream(c.body, {"trainingCosts", "dedicatedCosts"});
    REQUIRE_FALSE(rows.ok());
    CHECK(rows.status().code() == StatusCode::kInvalidArgument);
    CHECK(rows.status().message().rfind(c.error, 0) == 0);
  }
  // An unlisted key may repeat: only the listed ones are read.
  CHECK(Stream(R"({"x":[1],"x":[2],"trainingCosts":[3]})", {"trainingCosts"}).ok());
  // Too large is refused before reading.
  auto big = json::ForEachElement(R"({"trainingCosts":[1]})", "GET /bill", {"trainingCosts"},
                                  [](std::string_view, const bj::value&) {}, {}, 8);
  CHECK(big.status().message() == "GET /bill: body of 21 bytes is too large");
}

TEST_CASE("a path names keys through nested objects, and what is found there is reported") {
  // Paths do not reach into arrays: "list"'s objects hold a "top" and a "breakdown" that
  // are not the listed ones.
  const std::string body =
      R"({"dedicated_usage":{"subtotal":"1","breakdown":[{"id":"a","daily":[{"d":1}]},{"id":"b"}]},)"
      R"("training_usage":null,"other":{"breakdown":[{"id":"no"}]},"list":[{"breakdown":[{"id":"no"}],"top":[9]}],)"
      R"("model_apis_usage":{"breakdown":{"id":"not an array"}},"top":[7]})";
  Rows rows;
  auto found = json::ForEachElement(
      body, "GET /usage",
      {"dedicated_usage", "dedicated_usage/breakdown", "training_usage", "training_usage/breakdown",
       "model_apis_usage/breakdown", "top", "list/breakdown", "dedicated_usage/subtotal"},
      [&](std::string_view path, const bj::value& v) { rows.emplace_back(std::string(path), bj::serialize(v)); });
  REQUIRE(found.ok());
  using F = json::Found;
  CHECK(*found == std::vector<F>{F::kOther, F::kArray, F::kNull, F::kAbsent, F::kOther, F::kArray, F::kAbsent, F::kOther});
  CHECK(rows == Rows{{"dedicated_usage/breakdown", R"({"id":"a","daily":[{"d":1}]})"},
                     {"dedicated_usage/breakdown", R"({"id":"b"})"},
                     {"top", "7"}});
  // The same nested key twice is refused; in another object it is another path.
  auto twice = json::ForEachElement(R"({"u":{"breakdown":[1],"breakdown":[2]}})", "GET /usage", {"u/breakdown"},
                                    [](std::string_view, const bj::value&) {});
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.status().message() == "GET /usage: key 'u/breakdown' appears twice");
  auto apart = json::ForEachElement(R"({"u":{"breakdown":[1]},"v":{"breakdown":[2]}})", "GET /usage", {"u/breakdown"},
                                    [](std::string_view, const bj::value&) {});
  CHECK(apart.ok());
}

TEST_CASE("with keep, an element object is built with only the kept members, and the rest is still checked") {
  // Written with an escape, and long: such a key reaches the handler in parts.
  const std::string long_key = "k\n" + std::string(9000, 'k');
  const std::string long_key_json = R"(k\n)" + std::string(9000, 'k');
  // Dropped members of every kind, nested containers among them; kept keys written with
  // escapes, or long enough to arrive in parts; a kept key given twice; elements that
  // are not objects, whose insides are not filtered.
  const std::string body =
      R"({"rows":[{"drop":{"a":[1,{"id":"c"}],"d":null},"id":"r1","n":5,"skip":[[],{}],"tail":"x"},)"
      R"({"\u0069d":"r2","skip":"s\u00e9","n":1.5,"id":"r3","extra":{"n":9}},)"
      R"({")" + long_key_json + R"(":1,"other":2},)"
      R"(7,["id",{"id":1,"x":2}],{}],"after":{"rows":[{"id":"no"}]}})";
  std::vector<bj::value> rows;
  auto found = json::ForEachElement(
      body, "GET /bill", {"rows"}, [&](std::string_view, const bj::value& v) { rows.emplace_back(v, bj::storage_ptr()); },
      {"id", "n", long_key});
  REQUIRE(found.ok());
  // The DOM's elements with the other members taken out.
  std::vector<bj::value> expected;
  const bj::value doc = bj::parse(body);
  for (const bj::value& e : doc.at("rows").as_array()) {
    if (!e.is_object()) {
      expected.push_back(e);
      continue;
    }
    bj::object kept;
    for (const auto& kv : e.as_object()) {
      if (kv.key() == "id" || kv.key() == "n" || kv.key() == long_key) kept[kv.key()] = kv.value();
    }
    expected.emplace_back(std::move(kept));
  }
  REQUIRE(rows.size() == 6);
  CHECK(rows == expected);
  CHECK(bj::serialize(rows[0]) == R"({"id":"r1","n":5})");
  CHECK(rows[1].at("id") == "r3");  // the last copy, as the DOM has it
  CHECK(rows[2].as_object().size() == 1);
  CHECK(bj::serialize(rows[4]) == R"(["id",{"id":1,"x":2}])");

  // What is dropped is read all the same: a bad value there refuses the body.
  const std::vector<std::string> bad_bodies = {
      R"({"rows":[{"drop":[1,],"id":"a"}]})", "{\"rows\":[{\"drop\":\"\xff\",\"id\":\"a\"}]}",
      R"({"rows":[{"drop":)" + std::string(70, '[') + std::string(70, ']') + "}]}"};
  for (const std::string& bad : bad_bodies) {
    CAPTURE(bad);
    auto refused = json::ForEachElement(bad, "GET /bill", {"rows"}, [](std::string_view, const bj::value&) {}, {"id"});
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().message().rfind("GET /bill: malformed JSON", 0) == 0);
  }
}
