#include <doctest/doctest.h>

#include <array>
#include <set>
#include <string>
#include <unordered_set>

#include "core/node_slab.h"

namespace lw = loopwarden;

namespace {

// About the size of a stored resource's node.
struct Big {
  std::array<char, 300> pad{};
  std::string key;
  bool operator==(const Big& o) const { return key == o.key; }
};
struct BigHash {
  size_t operator()(const Big& b) const { return std::hash<std::string>()(b.key); }
};
using BigSet = std::unordered_set<Big, BigHash, std::equal_to<Big>, lw::NodeSlabAllocator<Big>>;

}  // namespace

TEST_CASE("NodeSlab hands out distinct slots from few blocks and reuses freed ones first") {
  lw::NodeSlab slab;
  std::set<void*> seen;
  std::vector<void*> taken;
  for (int i = 0; i < 1000; ++i) {
    void* p = slab.Take(384);
    CHECK(reinterpret_cast<uintptr_t>(p) % lw::NodeSlab::kAlign == 0);
    CHECK(seen.insert(p).second);
    taken.push_back(p);
  }
  CHECK(slab.slot() == 384);
  // 170 slots of 384 bytes a 64 KB block: 1,000 slots in 6 blocks, not 1,000 allocations.
  CHECK(slab.blocks() == 6);
  slab.Give(taken[10]);
  slab.Give(taken[20]);
  CHECK(slab.Take(384) == taken[20]);  // last freed, first reused
  CHECK(slab.Take(384) == taken[10]);
  CHECK(slab.blocks() == 6);
}

TEST_CASE("NodeSlabAllocator carries an unordered_set through inserts, erases, rehashes and copies") {
  BigSet set;
  for (int i = 0; i < 2000; ++i) set.insert(Big{{}, "key-" + std::to_string(i)});
  CHECK(set.size() == 2000);
  // The nodes come from the slab: 2,000 nodes in about a dozen blocks.
  const size_t blocks = set.get_allocator().slab().blocks();
  CHECK(blocks > 0);
  CHECK(blocks < 20);
  for (int i = 0; i < 2000; i += 2) CHECK(set.erase(Big{{}, "key-" + std::to_string(i)}) == 1);
  for (int i = 0; i < 1000; ++i) set.insert(Big{{}, "again-" + std::to_string(i)});
  CHECK(set.get_allocator().slab().blocks() == blocks);  // the freed nodes were reused
  CHECK(set.count(Big{{}, "key-1"}) == 1);
  CHECK(set.count(Big{{}, "key-2"}) == 0);
  CHECK(set.count(Big{{}, "again-999"}) == 1);
  BigSet copy = set;  // its own slab
  CHECK(copy.size() == 2000);
  CHECK_FALSE(copy.get_allocator() == set.get_allocator());
  set.clear();
  CHECK(copy.count(Big{{}, "key-1999"}) == 1);
  BigSet moved = std::move(copy);
  CHECK(moved.size() == 2000);
}
