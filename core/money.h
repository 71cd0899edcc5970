#pragma once
// Money as integer micro-USD, so the ledger adds up exactly: no floating drift across
// millions of accrual intervals.

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace loopwarden {

class Money {
 public:
  constexpr Money() = default;
  static constexpr Money FromMicros(int64_t micros) { return Money(micros); }
  static constexpr Money FromDollars(int64_t dollars) { return Money(dollars * 1'000'000); }
  // The smallest amount: CompactOptional<Money>'s empty value, which no price reaches.
  static constexpr Money min() { return Money(INT64_MIN); }
  // Rounds half away from zero; for provider values that arrive as JSON doubles.
  static Money FromDouble(double usd);

  constexpr int64_t micros() const { return micros_; }
  double ToDouble() const { return static_cast<double>(micros_) / 1e6; }

  constexpr Money operator+(Money o) const { return Money(micros_ + o.micros_); }
  constexpr Money operator-(Money o) const { return Money(micros_ - o.micros_); }
  Money& operator+=(Money o) {
    micros_ += o.micros_;
    return *this;
  }
  Money& operator-=(Money o) {
    micros_ -= o.micros_;
    return *this;
  }
  constexpr auto operator<=>(const Money&) const = default;

 private:
  constexpr explicit Money(int64_t micros) : micros_(micros) {}
  int64_t micros_ = 0;
};

// Parses "6.50", "6", "0.248", "1e-3" is rejected; at most 6 decimal places; an optional
// leading '$' and '-' are allowed. Errors quote the text.
Result<Money> ParseMoney(std::string_view text);

// "6.50", "0.248", "1234.00", "-3.10": at least two decimals, trailing zeros beyond
// them trimmed, never rounded.
std::string FormatMoney(Money m);
// Rounded to cents for people: "$6.50".
std::string FormatUsd(Money m);

// price × quantity / per, rounded half up, computed in 128 bits so a year of a large
// fleet cannot overflow. Used for GPU-seconds at a per-hour price (per = 3600) and
// tokens at a per-million price (per = 1'000'000).
Money ScalePrice(Money price, int64_t quantity, int64_t per);

}  // namespace loopwarden
