#include <doctest/doctest.h>

#include <string>

#include "core/config_tree.h"

namespace lw = loopwarden;

TEST_CASE("the YAML tree keeps marks, order, quoting and duplicate keys") {
  auto r = lw::ParseConfigText("a: 1\nb:\n  - x\n  - \"true\"\na: 2\nc:\n", "t.yaml");
  REQUIRE(r.ok());
  const lw::ConfigNode& root = *r;
  REQUIRE(root.IsMap());
  REQUIRE(root.entries.size() == 4);
  CHECK(root.entries[0].key == "a");
  CHECK(root.entries[0].key_mark.line == 1);
  CHECK(root.entries[0].key_mark.column == 1);
  CHECK(root.entries[2].key == "a");
  CHECK(root.entries[2].value.text == "2");
  CHECK(root.entries[2].key_mark.line == 5);
  const lw::ConfigNode* b = root.Find("b");
  REQUIRE(b != nullptr);
  REQUIRE(b->items.size() == 2);
  CHECK(b->items[1].quoted);
  CHECK_FALSE(b->items[0].quoted);
  CHECK(b->items[1].mark.line == 4);
  CHECK(b->items[1].mark.column == 5);
  CHECK(root.Find("c")->IsNull());
}

TEST_CASE("YAML syntax errors name file, line and column") {
  auto r = lw::ParseConfigText("a: [1, 2\nb: 3\n", "bad.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().rfind("bad.yaml:", 0) == 0);
  CHECK(r.status().message().find("YAML syntax error") != std::string::npos);
}

TEST_CASE("hostile nesting is refused before yaml-cpp recurses") {
  std::string deep(100000, '[');
  auto r = lw::ParseConfigText(deep, "deep.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "deep.yaml:1:65: nested more than 64 levels deep");
  std::string dashes;
  for (int i = 0; i < 5000; ++i) dashes += "- ";
  dashes += "x\n";
  auto d = lw::ParseConfigText(dashes, "dash.yaml");
  REQUIRE_FALSE(d.ok());
  CHECK(d.status().message() == "dash.yaml:1:1: nested more than 64 levels deep");
}

TEST_CASE("alias expansion is bounded") {
  // Each level doubles: 2^25 nodes if expanded naively.
  std::string doc = "a0: &a0 [x, x]\n";
  for (int i = 1; i < 25; ++i) {
    doc += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [*a" + std::to_string(i - 1) + ", *a" +
           std::to_string(i - 1) + "]\n";
  }
  auto r = lw::ParseConfigText(doc, "bomb.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("document too large") != std::string::npos);
}

TEST_CASE("a missing file is a clear error") {
  auto r = lw::ParseConfigFile("/nonexistent/loopwarden.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "cannot read /nonexistent/loopwarden.yaml: no such file or not readable");
}
