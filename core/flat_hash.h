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
// Text keys are hashed by TextHash (core/text_map.h, which also has TextMap).

#include <boost/container_hash/hash.hpp>
#include <boost/unordered/unordered_flat_map.hpp>
#include <boost/unordered/unordered_flat_set.hpp>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/text_map.h"

namespace loopwarden {

template <class K>
using FlatHashOf = std::conditional_t<std::is_same_v<K, std::string> || std::is_same_v<K, std::string_view>, TextHash,
                                      boost::hash<K>>;

template <class K, class V>
using HashMap = boost::unordered_flat_map<K, V, FlatHashOf<K>>;
template <class K>
using HashSet = boost::unordered_flat_set<K, FlatHashOf<K>>;

}  // namespace loopwarden
