#pragma once
// The objects of one listing array, read the same way for both providers.

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/flat_hash.h"
#include "core/resource.h"

namespace loopwarden::providers {

// Each object of `arr` read by `read` (a T with an `id`). Unusable entries are dropped
// and counted in `dropped`: a non-object, no id, or an id far past any the providers
// issue (Baseten 6-8 characters, Fireworks at most 63), which would end up in every
// URL built from it. The same id twice: an identical copy is dropped quietly; copies
// that disagree make the object unknown (every copy dropped and counted, so the
// listing is partial), never one or the other.
//
// For either JSON reader: `object_of(v)` is an element as an object (or nothing),
// `keep(v)` what is held of an element to compare a later copy with, `same` compares.
template <class T, class Array, class Keep, class ObjectOf, class Read, class Same>
std::vector<T> ReadListItemsWith(const Array& arr, size_t size, Keep keep, ObjectOf object_of, Read read, Same same,
                                 int& dropped) {
  // Sized once (a Baseten org's runs come in one array: no doubling copies), so the ids
  // `seen` views stay where they are while items are added.
  std::vector<T> items;
  items.reserve(size);
  HashMap<std::string_view, decltype(keep(*arr.begin()))> seen;  // no node per object
  seen.reserve(size);
  std::unordered_set<std::string> conflicting;
  for (auto&& v : arr) {
    auto o = object_of(v);
    if (!o) {
      ++dropped;
      continue;
    }
    T item = read(*o);
    if (item.id.empty() || item.id.size() > kMaxIdBytes) {
      ++dropped;
      continue;
    }
    if (auto it = seen.find(item.id); it != seen.end()) {
      if (!same(it->second, v)) conflicting.insert(item.id);
      continue;
    }
    items.push_back(std::move(item));
    seen.emplace(items.back().id, keep(v));
  }
  if (!conflicting.empty()) {
    dropped += static_cast<int>(std::erase_if(items, [&](const T& i) { return conflicting.count(i.id) > 0; }));
  }
  return items;
}

template <class T, class Fn>
std::vector<T> ReadListItems(const boost::json::array& arr, Fn read, int& dropped) {
  return ReadListItemsWith<T>(
      arr, arr.size(), [](const boost::json::value& v) { return &v; },
      [](const boost::json::value& v) { return v.is_object() ? &v.get_object() : nullptr; }, read,
      [](const boost::json::value* kept, const boost::json::value& v) { return *kept == v; }, dropped);
}

}  // namespace loopwarden::providers
