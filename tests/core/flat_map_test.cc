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

TEST_CASE("FlatMap is one pointer, allocates nothing while empty, and keeps long entries whole as it grows") {
  static_assert(sizeof(lw::FlatMap<std::string, std::string>) == sizeof(void*));
  lw::FlatMap<std::string, std::string> m;
  CHECK(m.empty());
  CHECK(m.begin() == nullptr);  // no block behind it
  CHECK(m.begin() == m.end());
  CHECK(m.find("x") == m.end());
  // Inserted from the back, so every insert but the first moves the entries after it;
  // values past the small-string size are heap blocks that must move, not be copied
  // bytewise.
  for (int i = 39; i >= 0; --i) {
    const std::string key = (i < 10 ? "key-0" : "key-") + std::to_string(i);
    m[key] = std::string(20 + i, static_cast<char>('a' + i % 26));
  }
  REQUIRE(m.size() == 40);
  int i = 0;
  for (const auto& [k, v] : m) {
    CHECK(k == (i < 10 ? "key-0" : "key-") + std::to_string(i));
    CHECK(v == std::string(20 + i, static_cast<char>('a' + i % 26)));
    ++i;
  }
  CHECK(i == 40);
  lw::FlatMap<std::string, std::string> copy = m;
  CHECK(copy == m);
  copy["key-05"] = "changed";
  CHECK_FALSE(copy == m);
  CHECK(m.at("key-05") == std::string(25, 'f'));
  lw::FlatMap<std::string, std::string> moved = std::move(copy);
  CHECK(moved.size() == 40);
  CHECK(moved.at("key-05") == "changed");
  moved = m;
  CHECK(moved == m);
  m.reserve(100);
  CHECK(m.size() == 40);
  CHECK(m.at("key-39") == std::string(59, 'n'));
}
