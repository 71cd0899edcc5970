#pragma once
// Open-addressing hash tables for lookups made once per listed resource.
//
// std::unordered_map allocates a node per entry and walks a linked node (a cache miss)
// per lookup; at 100k resources a poll built about 250,000 such nodes only to index
// the objects of its own pages, and freed them again. Boost 1.81's flat tables (header
// only, already in the stack) keep entries in one array. Unlike std::unordered_map,
// inserting may move entries: hold no pointer or reference to one across an insert,
// and key them by text that lives elsewhere (a string_view into a listing) or by value.
//
// Also TextMap, a node table of std::string keys found by a string_view, for caches
// whose entries must stay put while pointers to them are held.

#include <boost/container_hash/hash.hpp>
#include <boost/unordered/unordered_flat_map.hpp>
#include <boost/unordered/unordered_flat_set.hpp>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>

#include "core/hash.h"

namespace loopwarden {

// Text keys hashed eight bytes at a time (FieldHasher). Boost 1.81's hash of a string
// mixes it in far more steps: about 3 % of a steady cycle's instructions at 100k went on it,
// mostly for the policy engine's lookup of every listed resource's key. Not marked
// avalanching, so the tables mix the value once more before using its bits.
struct TextHash {
  using is_transparent = void;  // a std::string key is found by a string_view
  size_t operator()(std::string_view s) const noexcept {
    FieldHasher h;
    h.Add(s);
    return static_cast<size_t>(h.value());
  }
};

template <class K>
using FlatHashOf = std::conditional_t<std::is_same_v<K, std::string> || std::is_same_v<K, std::string_view>, TextHash,
                                      boost::hash<K>>;

template <class K, class V>
using HashMap = boost::unordered_flat_map<K, V, FlatHashOf<K>>;
template <class K>
using HashSet = boost::unordered_flat_set<K, FlatHashOf<K>>;

// A node table of text keys (entries stay where they are across inserts), found by a
// string_view: a lookup by a std::string key built a temporary std::string from an
// id held in a ShortString, and allocated for ids past 15 bytes (a Fireworks
// session's 35), several times per listed resource each poll.
template <class V>
using TextMap = std::unordered_map<std::string, V, TextHash, std::equal_to<>>;

}  // namespace loopwarden
