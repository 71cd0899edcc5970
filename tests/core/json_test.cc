// The JSON field readers the provider parsers are built on.
#include <doctest/doctest.h>

#include <boost/json/parse.hpp>

#include "core/json.h"

namespace bj = boost::json;
using namespace loopwarden;

TEST_CASE("a string field reads as the DOM's own text or as a copy, and anything else as nothing") {
  const bj::value doc = bj::parse(
      R"({"state": "JOB_STATE_RUNNING", "empty": "", "n": 3, "nil": null, "obj": {"name": "ACTIVE"}, "arr": ["x"]})");
  const bj::object& o = doc.get_object();
  const auto view = json::View(o, "state");
  REQUIRE(view.has_value());
  CHECK(*view == "JOB_STATE_RUNNING");
  // No copy: the view is the DOM's storage, which is what lets pooling skip a std::string.
  CHECK(view->data() == o.at("state").get_string().data());
  CHECK(json::Str(o, "state") == std::optional<std::string>("JOB_STATE_RUNNING"));
  CHECK(json::View(o, "empty") == std::optional<std::string_view>(""));
  for (const char* key : {"n", "nil", "obj", "arr", "absent"}) {
    CAPTURE(key);
    CHECK_FALSE(json::View(o, key).has_value());
    CHECK_FALSE(json::Str(o, key).has_value());
  }
}

TEST_CASE("a status reads from a bare string or from an object's name, as a view or a copy") {
  const bj::value doc = bj::parse(R"({"bare": "RUNNING", "nested": {"name": "ACTIVE"}, "nameless": {"id": 1}, "n": 2})");
  const bj::object& o = doc.get_object();
  CHECK(json::StatusNameView(o, "bare") == std::optional<std::string_view>("RUNNING"));
  CHECK(json::StatusNameView(o, "nested") == std::optional<std::string_view>("ACTIVE"));
  CHECK(json::StatusName(o, "nested") == std::optional<std::string>("ACTIVE"));
  CHECK(json::StatusName(o, "bare") == std::optional<std::string>("RUNNING"));
  for (const char* key : {"nameless", "n", "absent"}) {
    CAPTURE(key);
    CHECK_FALSE(json::StatusNameView(o, key).has_value());
    CHECK_FALSE(json::StatusName(o, key).has_value());
  }
}
