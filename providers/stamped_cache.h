#pragma once
// Forgetting the cached details of resources gone from a provider's listings, without
// walking the caches on a poll where nothing went.
//
// An adapter keeps per-resource details (metrics, checkpoints, spend windows) between
// polls. Each poll looks every listed resource's entry up anyway, to build its
// Resource; the lookup stamps the entry with the poll's number. Entries left with an
// older stamp belong to resources no longer listed. When the poll stamped as many
// entries as the cache holds (the usual case), none is stale and the cache is not
// walked: at 300k resources those walks, each node of a hash table visited at random,
// and the set of live ids built to test them against, were a few percent of a steady
// cycle.
//
// An entry type has a `uint64_t listed_in` member, 0 until stamped.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace loopwarden::providers {

struct StampCount {
  uint64_t poll = 0;
  size_t stamped = 0;  // entries stamped by this poll, each counted once
};

// The entry for `key`, stamped, or null. (The map finds by string_view: a TextMap.)
template <class Map>
typename Map::mapped_type* FindStamped(Map& cache, std::string_view key, StampCount& count) {
  auto it = cache.find(key);
  if (it == cache.end()) return nullptr;
  if (it->second.listed_in != count.poll) {
    it->second.listed_in = count.poll;
    ++count.stamped;
  }
  return &it->second;
}

// Erases the entries this poll did not stamp, calling `gone(key)` for each. Only after
// a poll whose listing was complete: a partial one leaves listed resources unstamped.
template <class Map, class Gone>
void ForgetUnstamped(Map& cache, const StampCount& count, Gone gone) {
  if (count.stamped >= cache.size()) return;
  for (auto it = cache.begin(); it != cache.end();) {
    if (it->second.listed_in == count.poll) {
      ++it;
    } else {
      gone(it->first);
      it = cache.erase(it);
    }
  }
}

// The same, for a cache whose entries' going is recorded nowhere.
template <class Map>
void ForgetUnstamped(Map& cache, const StampCount& count) {
  ForgetUnstamped(cache, count, [](const auto&) {});
}

}  // namespace loopwarden::providers
