#pragma once
// Text that many resources share, kept once per distinct value.
//
// Provider and account names, owners, teams, base models, native statuses and GPU types
// repeat across a fleet: the benchmark's 23,000-resource fleet has 20 accounts, 13
// statuses, 9 owners and about 4,000 base models. As std::string each copy was 32 bytes
// inline plus a heap block when longer than 15 characters; an Interned is one pointer
// to a shared, reference-counted entry in a process-wide pool. Reading it is a
// std::string&.
//
// The pool is safe to use from any thread. An entry nobody holds is freed by a later
// intern once the pool has doubled since the last sweep, so a value that stops
// appearing (an owner who left, a model retired) does not stay resident for ever.

#include <atomic>
#include <compare>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace loopwarden {

class Interned {
 public:
  Interned() noexcept = default;
  // Implicit: fields of this type are assigned from strings across the code.
  Interned(std::string_view text);
  Interned(const std::string& text) : Interned(std::string_view(text)) {}
  Interned(const char* text) : Interned(std::string_view(text)) {}
  Interned(const Interned& other) noexcept : entry_(other.entry_) { Hold(entry_); }
  Interned(Interned&& other) noexcept : entry_(std::exchange(other.entry_, nullptr)) {}
  Interned& operator=(const Interned& other) noexcept {
    Hold(other.entry_);
    Release(std::exchange(entry_, other.entry_));
    return *this;
  }
  Interned& operator=(Interned&& other) noexcept {
    if (this != &other) Release(std::exchange(entry_, std::exchange(other.entry_, nullptr)));
    return *this;
  }
  ~Interned() { Release(entry_); }

  const std::string& str() const noexcept { return entry_ ? entry_->text : Empty(); }
  operator const std::string&() const noexcept { return str(); }
  operator std::string_view() const noexcept { return str(); }
  std::string_view view() const noexcept { return str(); }
  bool empty() const noexcept { return entry_ == nullptr; }  // "" is never pooled
  size_t size() const noexcept { return str().size(); }
  const char* c_str() const noexcept { return str().c_str(); }
  const char* data() const noexcept { return str().data(); }

  // Equal text shares one entry, so two Interned compare by address.
  friend bool operator==(const Interned& a, const Interned& b) noexcept { return a.entry_ == b.entry_; }
  // Against plain text without pooling it (exact match for std::string, const char*,
  // string_view, so no conversion is ambiguous).
  template <class T>
    requires(!std::same_as<T, Interned> && std::convertible_to<const T&, std::string_view>)
  friend bool operator==(const Interned& a, const T& b) noexcept {
    return a.view() == std::string_view(b);
  }
  friend std::strong_ordering operator<=>(const Interned& a, const Interned& b) noexcept { return a.view() <=> b.view(); }
  template <class T>
    requires(!std::same_as<T, Interned> && std::convertible_to<const T&, std::string_view>)
  friend std::strong_ordering operator<=>(const Interned& a, const T& b) noexcept {
    return a.view() <=> std::string_view(b);
  }

  // Distinct values pooled now, held or awaiting a sweep (for tests and the benchmark).
  static size_t PoolSize();

 private:
  struct Entry {
    explicit Entry(std::string_view t) : text(t) {}
    const std::string text;
    std::atomic<uint32_t> refs{1};
  };
  static const std::string& Empty() noexcept;
  static void Hold(Entry* e) noexcept {
    if (e) e->refs.fetch_add(1, std::memory_order_relaxed);
  }
  // Only counts down: the sweep frees entries at 0 under the pool's lock, and only an
  // intern (under that lock) or a copy of a live handle can raise a count again.
  static void Release(Entry* e) noexcept {
    if (e) e->refs.fetch_sub(1, std::memory_order_release);
  }
  friend class InternPool;

  Entry* entry_ = nullptr;
};

// Concatenation with any text (a string literal, std::string or string_view).
std::string operator+(const Interned& a, std::string_view b);
std::string operator+(std::string_view a, const Interned& b);

}  // namespace loopwarden

template <>
struct std::hash<loopwarden::Interned> {
  size_t operator()(const loopwarden::Interned& s) const noexcept { return std::hash<std::string_view>()(s.view()); }
};
