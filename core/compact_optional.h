#pragma once
// An optional Time, Duration or Money in 8 bytes instead of std::optional's 16.
//
// A stored resource carries eleven optional instants and durations (created, last
// active, last traffic, window start, newest checkpoint, deleted, ...); at 100k+
// resources the 8 bytes of std::optional's flag and padding per field are 10 MB. The
// empty value is the type's min(), an instant 292,000 years ago that no provider or
// configuration gives: a value of min() itself is stored one tick later, so it still
// reads as present.
//
// It reads like std::optional (has_value, *, ->, value_or, reset, comparisons with
// std::nullopt, values and other optionals) and converts both ways, so code taking a
// std::optional<T> takes it too. The order is std::optional's: empty before any value.

#include <compare>
#include <concepts>
#include <optional>
#include <stdexcept>

namespace loopwarden {

template <class T>
class CompactOptional {
 public:
  using value_type = T;

  constexpr CompactOptional() noexcept = default;
  constexpr CompactOptional(std::nullopt_t) noexcept {}  // NOLINT: implicit, like std::optional
  template <class U = T>
    requires std::convertible_to<U, T>
  constexpr CompactOptional(const U& u) noexcept : v_(Kept(T(u))) {}  // NOLINT: implicit, like std::optional
  constexpr CompactOptional(const std::optional<T>& o) noexcept  // NOLINT: implicit, both ways
      : CompactOptional(o ? CompactOptional(*o) : CompactOptional()) {}
  constexpr operator std::optional<T>() const noexcept {  // NOLINT: implicit, both ways
    return has_value() ? std::optional<T>(v_) : std::nullopt;
  }

  constexpr bool has_value() const noexcept { return v_ != kEmpty; }
  constexpr explicit operator bool() const noexcept { return has_value(); }
  constexpr const T& operator*() const noexcept { return v_; }
  constexpr const T* operator->() const noexcept { return &v_; }
  constexpr const T& value() const {
    if (!has_value()) throw std::bad_optional_access();
    return v_;
  }
  constexpr T value_or(T fallback) const noexcept { return has_value() ? v_ : fallback; }
  constexpr void reset() noexcept { v_ = kEmpty; }

  // The sentinel is the smallest value, so comparing the stored values orders empty
  // first, as std::optional does.
  friend constexpr bool operator==(const CompactOptional&, const CompactOptional&) = default;
  friend constexpr auto operator<=>(const CompactOptional& a, const CompactOptional& b) { return a.v_ <=> b.v_; }
  friend constexpr bool operator==(const CompactOptional& a, std::nullopt_t) { return !a.has_value(); }
  // Against a std::optional as two optionals, not as an optional and a value: without
  // these, std::optional's `optional<T> == U` template would take the comparison and
  // call an empty std::optional unequal to an empty one of these.
  friend constexpr bool operator==(const CompactOptional& a, const std::optional<T>& b) {
    return a == CompactOptional(b);
  }
  friend constexpr auto operator<=>(const CompactOptional& a, const std::optional<T>& b) {
    return a <=> CompactOptional(b);
  }
  friend constexpr bool operator==(const CompactOptional& a, const T& b) { return a.has_value() && a.v_ == b; }
  friend constexpr auto operator<=>(const CompactOptional& a, const T& b) {
    return a.has_value() ? a.v_ <=> b : std::strong_ordering::less;
  }

 private:
  static constexpr T kEmpty = T::min();
  static constexpr T Kept(T v) {
    if (v != kEmpty) return v;
    if constexpr (requires { typename T::clock; }) {
      return v + typename T::duration(1);  // a time_point
    } else if constexpr (requires { T::FromMicros(1); }) {
      return v + T::FromMicros(1);  // Money
    } else {
      return v + T(1);  // a duration
    }
  }
  T v_ = kEmpty;
};

}  // namespace loopwarden
