#include <doctest/doctest.h>

#include <map>
#include <string>
#include <string_view>

#include "core/flat_map.h"

namespace lw = loopwarden;

TEST_CASE("FlatMap keeps its entries in key order, one per key") {
  lw::FlatMap<std::string, int> m;
  m["train"] = 4;
  m["prefill"] = 1;
  m["sample"] = 3;
  m["prefill"] += 10;  // an existing key is updated, not added again
  CHECK(m.size() == 3);
  std::string order;
  for (const auto& [k, v] : m) order += k + "=" + std::to_string(v) + " ";
  CHECK(order == "prefill=11 sample=3 train=4 ");
}

TEST_CASE("FlatMap finds by any comparable key and tells a miss from a hit") {
  const lw::FlatMap<std::string, std::string> refs{{"name", "accounts/a/deployments/d"}, {"deployment_id", "x1"}};
  CHECK(refs.contains(std::string_view("name")));
  CHECK(refs.find("model_id") == refs.end());
  CHECK(refs.find("deployment_id")->second == "x1");
  CHECK(refs.at("deployment_id") == "x1");
  CHECK_THROWS_AS((void)refs.at("model_id"), std::out_of_range);
  CHECK(refs.size() == 2);
}

TEST_CASE("FlatMap inserts without replacing, unless asked to") {
  lw::FlatMap<std::string, int> m;
  CHECK(m.try_emplace("a", 1).second);
  CHECK_FALSE(m.try_emplace("a", 2).second);
  CHECK(m.at("a") == 1);
  CHECK_FALSE(m.insert_or_assign("a", 3).second);
  CHECK(m.at("a") == 3);
  CHECK(m.insert_or_assign("b", 5).second);
  CHECK(m == lw::FlatMap<std::string, int>{{"b", 5}, {"a", 3}});
}

TEST_CASE("FlatMap takes a std::map's entries, and an unsorted range's in order with the first of equal keys") {
  const std::map<std::string, int> tokens{{"sample", 2}, {"prefill", 1}};
  lw::FlatMap<std::string, int> m{{"stale", 9}};
  m.assign(tokens);
  CHECK(m == lw::FlatMap<std::string, int>{{"prefill", 1}, {"sample", 2}});
  const std::vector<std::pair<std::string, int>> unsorted{{"z", 1}, {"a", 2}, {"z", 3}};
  m.assign(unsorted);
  REQUIRE(m.size() == 2);
  CHECK(m.begin()->first == "a");
  CHECK(m.at("z") == 1);
}
