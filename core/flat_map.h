#pragma once
// A sorted vector with the part of std::map's interface the Resource model uses.
//
// A resource carries a few small maps (labels, refs, token counters): two to six
// entries each, kept for every one of 100k+ resources and copied on every poll. As
// std::map each entry was its own node (about 80 bytes and one allocation, four
// allocations for a training session's tokens) and an empty map was 48 bytes; here
// the entries share one allocation and an empty map is 24 bytes. Lookups are a binary
// search over a handful of entries. Iteration is in key order, as with std::map.
//
// Unlike std::map, inserting moves the entries after it: no iterator or reference
// into the map survives an insertion.

#include <algorithm>
#include <initializer_list>
#include <stdexcept>
#include <utility>
#include <vector>

namespace loopwarden {

template <class K, class V>
class FlatMap {
 public:
  using key_type = K;
  using mapped_type = V;
  using value_type = std::pair<K, V>;
  using iterator = typename std::vector<value_type>::iterator;
  using const_iterator = typename std::vector<value_type>::const_iterator;

  FlatMap() = default;
  FlatMap(std::initializer_list<value_type> items) {
    for (const value_type& item : items) insert_or_assign(item.first, item.second);
  }

  // Replaces the entries with those of `range` (a std::map, say); of equal keys the
  // first stays.
  template <class Range>
  void assign(const Range& range) {
    items_.assign(range.begin(), range.end());
    if (!std::is_sorted(items_.begin(), items_.end(), Less)) std::stable_sort(items_.begin(), items_.end(), Less);
    items_.erase(std::unique(items_.begin(), items_.end(), [](const value_type& a, const value_type& b) { return a.first == b.first; }),
                 items_.end());
  }

  iterator begin() { return items_.begin(); }
  iterator end() { return items_.end(); }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  size_t size() const { return items_.size(); }
  // For a map whose size is known before it is filled: grown one insert at a time, three
  // entries take room for four (a vector doubles), and that room is kept as long as the
  // map is.
  void reserve(size_t n) { items_.reserve(n); }
  bool empty() const { return items_.empty(); }

  template <class Key>
  iterator find(const Key& k) {
    auto it = lower_bound(k);
    return it != items_.end() && it->first == k ? it : items_.end();
  }
  template <class Key>
  const_iterator find(const Key& k) const {
    auto it = lower_bound(k);
    return it != items_.end() && it->first == k ? it : items_.end();
  }
  template <class Key>
  bool contains(const Key& k) const { return find(k) != end(); }

  template <class Key>
  V& at(const Key& k) {
    auto it = find(k);
    if (it == end()) throw std::out_of_range("FlatMap::at");
    return it->second;
  }
  template <class Key>
  const V& at(const Key& k) const {
    auto it = find(k);
    if (it == end()) throw std::out_of_range("FlatMap::at");
    return it->second;
  }

  template <class Key>
  V& operator[](const Key& k) { return try_emplace(k).first->second; }

  template <class Key, class... Args>
  std::pair<iterator, bool> try_emplace(const Key& k, Args&&... args) {
    auto it = lower_bound(k);
    if (it != items_.end() && it->first == k) return {it, false};
    return {items_.emplace(it, std::piecewise_construct, std::forward_as_tuple(K(k)),
                           std::forward_as_tuple(std::forward<Args>(args)...)),
            true};
  }
  template <class Key, class Value>
  std::pair<iterator, bool> insert_or_assign(const Key& k, Value&& v) {
    auto [it, inserted] = try_emplace(k, std::forward<Value>(v));
    if (!inserted) it->second = std::forward<Value>(v);
    return {it, inserted};
  }

  bool operator==(const FlatMap&) const = default;

 private:
  static bool Less(const value_type& a, const value_type& b) { return a.first < b.first; }
  template <class Key>
  iterator lower_bound(const Key& k) {
    return std::lower_bound(items_.begin(), items_.end(), k, [](const value_type& e, const Key& key) { return e.first < key; });
  }
  template <class Key>
  const_iterator lower_bound(const Key& k) const {
    return std::lower_bound(items_.begin(), items_.end(), k, [](const value_type& e, const Key& key) { return e.first < key; });
  }

  std::vector<value_type> items_;
};

}  // namespace loopwarden
