#pragma once
// A sorted vector with the part of std::map's interface the Resource model uses.
//
// A resource carries a few small maps (labels, refs, token counters): two to six
// entries each, kept for every one of 100k+ resources and copied on every poll. As
// std::map each entry was its own node (about 80 bytes and one allocation, four
// allocations for a training session's tokens) and an empty map was 48 bytes; here
// the entries share one allocation, and the map itself is one pointer: a std::vector
// was 24 bytes, three of them in every stored resource (5.5 MB at 100k resources, most
// of it for maps that are empty). Lookups are a binary search over a handful of
// entries. Iteration is in key order, as with std::map.
//
// Room grows one entry at a time up to eight (a vector doubles, so three entries took
// room for four, kept as long as the map was), then by half.
//
// Unlike std::map, inserting moves the entries after it: no iterator or reference
// into the map survives an insertion.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace loopwarden {

namespace flat_map_detail {

// Elements in one heap block behind a single pointer: the block starts with the size
// and the room, then the elements. Null while empty and never reserved.
template <class T>
class PackedVector {
 public:
  PackedVector() noexcept = default;
  PackedVector(const PackedVector& o) {
    if (o.size() == 0) return;
    Block* b = Allocate(o.size());
    try {
      std::uninitialized_copy(o.begin(), o.end(), Items(b));
    } catch (...) {
      ::operator delete(b);
      throw;
    }
    b->size = o.size();
    p_ = b;
  }
  PackedVector(PackedVector&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  PackedVector& operator=(const PackedVector& o) {
    if (this != &o) {
      PackedVector copy(o);
      swap(copy);
    }
    return *this;
  }
  PackedVector& operator=(PackedVector&& o) noexcept {
    if (this != &o) {
      PackedVector gone(std::move(*this));
      swap(o);
    }
    return *this;
  }
  ~PackedVector() { Free(p_); }

  void swap(PackedVector& o) noexcept { std::swap(p_, o.p_); }
  T* begin() noexcept { return p_ ? Items(p_) : nullptr; }
  T* end() noexcept { return p_ ? Items(p_) + p_->size : nullptr; }
  const T* begin() const noexcept { return p_ ? Items(p_) : nullptr; }
  const T* end() const noexcept { return p_ ? Items(p_) + p_->size : nullptr; }
  size_t size() const noexcept { return p_ ? p_->size : 0; }
  size_t capacity() const noexcept { return p_ ? p_->cap : 0; }

  void reserve(size_t n) {
    if (n > capacity()) Regrow(n);
  }

  // Constructs an element before `pos` and returns where it is. The element is made
  // before any room is taken, so arguments that refer into this vector stay valid.
  template <class... Args>
  T* emplace(T* pos, Args&&... args) {
    const size_t at = static_cast<size_t>(pos - begin());
    T made(std::forward<Args>(args)...);
    const size_t n = size();
    if (n == capacity()) Regrow(n < 8 ? n + 1 : n + n / 2);
    T* items = Items(p_);
    if (at == n) {
      std::construct_at(items + n, std::move(made));
    } else {
      std::construct_at(items + n, std::move(items[n - 1]));
      std::move_backward(items + at, items + n - 1, items + n);
      items[at] = std::move(made);
    }
    ++p_->size;
    return items + at;
  }

  // Takes the elements of `v`, leaving it empty.
  void assign(std::vector<T>&& v) {
    PackedVector made;
    if (!v.empty()) {
      made.Regrow(v.size());
      for (T& item : v) {
        std::construct_at(Items(made.p_) + made.p_->size, std::move(item));
        ++made.p_->size;
      }
    }
    v.clear();
    swap(made);
  }

  friend bool operator==(const PackedVector& a, const PackedVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  struct Block {
    uint32_t size;
    uint32_t cap;
  };
  static_assert(alignof(T) <= alignof(std::max_align_t));
  // Elements move between blocks without a way back, as std::vector's do only when
  // their move cannot throw.
  static_assert(std::is_nothrow_move_constructible_v<T> && std::is_nothrow_move_assignable_v<T>);
  static constexpr size_t kItemsAt = (sizeof(Block) + alignof(T) - 1) / alignof(T) * alignof(T);

  // Not laundered: the room past the last element holds no object yet, and operator new
  // gives storage in which an array of T begins implicitly (C++20), as in std::vector.
  static T* Items(Block* b) noexcept { return reinterpret_cast<T*>(reinterpret_cast<std::byte*>(b) + kItemsAt); }
  static const T* Items(const Block* b) noexcept {
    return reinterpret_cast<const T*>(reinterpret_cast<const std::byte*>(b) + kItemsAt);
  }
  static Block* Allocate(size_t cap) {
    if (cap > UINT32_MAX) throw std::length_error("FlatMap");
    auto* b = static_cast<Block*>(::operator new(kItemsAt + cap * sizeof(T)));
    b->size = 0;
    b->cap = static_cast<uint32_t>(cap);
    return b;
  }
  static void Free(Block* b) noexcept {
    if (!b) return;
    std::destroy_n(Items(b), b->size);
    ::operator delete(b);
  }
  // Moves the elements into a block with room for `cap` (at least the size).
  void Regrow(size_t cap) {
    Block* b = Allocate(cap);
    if (p_) {
      T* from = Items(p_);
      T* to = Items(b);
      for (uint32_t i = 0; i < p_->size; ++i) std::construct_at(to + i, std::move(from[i]));
      b->size = p_->size;
    }
    Free(std::exchange(p_, b));
  }

  Block* p_ = nullptr;
};

}  // namespace flat_map_detail

template <class K, class V>
class FlatMap {
 public:
  using key_type = K;
  using mapped_type = V;
  using value_type = std::pair<K, V>;
  using iterator = value_type*;
  using const_iterator = const value_type*;

  FlatMap() = default;
  FlatMap(std::initializer_list<value_type> items) {
    for (const value_type& item : items) insert_or_assign(item.first, item.second);
  }

  // Replaces the entries with those of `range` (a std::map, say); of equal keys the
  // first stays.
  template <class Range>
  void assign(const Range& range) {
    std::vector<value_type> items(range.begin(), range.end());
    if (!std::is_sorted(items.begin(), items.end(), Less)) std::stable_sort(items.begin(), items.end(), Less);
    items.erase(std::unique(items.begin(), items.end(), [](const value_type& a, const value_type& b) { return a.first == b.first; }),
                items.end());
    items_.assign(std::move(items));
  }

  iterator begin() { return items_.begin(); }
  iterator end() { return items_.end(); }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  size_t size() const { return items_.size(); }
  // For a map whose size is known before it is filled: room for exactly `n`, not grown
  // one entry at a time.
  void reserve(size_t n) { items_.reserve(n); }
  bool empty() const { return items_.size() == 0; }
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

  flat_map_detail::PackedVector<value_type> items_;
};

}  // namespace loopwarden
